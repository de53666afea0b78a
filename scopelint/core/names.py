"""Resolution of framework names through every import style.

``import torch as T``, ``from torch import no_grad``, ``import mxnet.autograd``,
``from mxnet import autograd as ag`` ... all resolve to canonical dotted names. A local
binding that merely shares a name (``record = ...``, a parameter called ``pause``,
``self.pause()``) shadows the import and resolves to nothing.
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Set, Union

import libcst as cst

from scopelint.core.frameworks import FRAMEWORKS, canonical, framework_of

ScopeNode = Union[cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda]


def dotted(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` -> "a.b.c" for Name/Attribute chains; None otherwise."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def _import_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


def _target_names(target: cst.BaseExpression) -> Iterable[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from _target_names(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


class Scope:
    """Names bound in one function, class or module body, with their imports."""

    def __init__(self, node: ScopeNode, parent: Optional["Scope"]):
        self.node = node
        self.parent = parent
        self.imports: Dict[str, str] = {}
        self.bound: Set[str] = set()  # bound by anything but an import
        self.globals: Set[str] = set()

    def resolve_name(self, name: str) -> Optional[str]:
        scope: Optional[Scope] = self
        while scope is not None:
            # Class bodies do not enclose the names seen by their methods.
            if scope is self or not isinstance(scope.node, cst.ClassDef):
                if name in scope.globals:
                    root = _root(scope)
                    return None if name in root.bound else root.imports.get(name)
                if name in scope.bound:
                    return None
                if name in scope.imports:
                    return scope.imports[name]
            scope = scope.parent
        return None


def _root(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


class _BindingCollector(cst.CSTVisitor):
    """Collects a scope's bindings without entering nested scopes."""

    def __init__(self, scope: Scope, root: ScopeNode):
        self.scope = scope
        self.root = root

    def _nested(self, node: cst.CSTNode) -> bool:
        return node is not self.root

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if self._nested(node):
            self.scope.bound.add(node.name.value)
            return False
        params = node.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.scope.bound.add(p.name.value)
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                self.scope.bound.add(p.name.value)
        # Decorators and defaults belong to the enclosing scope; only the body is ours.
        node.body.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        if self._nested(node):
            self.scope.bound.add(node.name.value)
            return False
        node.body.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _import_name(alias.name)
            if alias.asname is not None:
                self.scope.imports[alias.asname.name.value] = full  # type: ignore[union-attr]
            else:
                root = full.split(".", 1)[0]
                self.scope.imports[root] = root

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    self.scope.bound.add(
                        alias.asname.name.value if alias.asname else _import_name(alias.name)  # type: ignore[union-attr]
                    )
            return
        module = _import_name(node.module)
        for alias in node.names:
            name = _import_name(alias.name)
            local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
            self.scope.imports[local] = f"{module}.{name}"

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.globals.update(n.name.value for n in node.names)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.scope.bound.update(_target_names(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.scope.bound.update(_target_names(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.scope.bound.update(_target_names(node.target))

    def visit_For(self, node: cst.For) -> None:
        self.scope.bound.update(_target_names(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        pass  # comprehension targets live in their own scope

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.scope.bound.update(_target_names(node.asname.name))

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.scope.bound.update(_target_names(node.name.name))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.scope.bound.update(_target_names(node.target))


class Names:
    """Resolves expressions to canonical framework names, scope by scope."""

    def __init__(self, module: cst.Module):
        self.module = module
        self._scopes: Dict[int, Scope] = {}
        self.root = self.scope_of(module, None)
        # A name both imported and bound otherwise is ambiguous: ``bound`` wins in
        # ``resolve_name``, so it resolves to nothing.
        self.frameworks: Set[str] = set()
        for q in self.root.imports.values():
            fw = framework_of(q)
            if fw:
                self.frameworks.add(fw)

    def scope_of(self, node: ScopeNode, parent: Optional[Scope]) -> Scope:
        key = id(node)
        scope = self._scopes.get(key)
        if scope is None:
            scope = Scope(node, parent)
            node.visit(_BindingCollector(scope, node))
            self._scopes[key] = scope
            for q in scope.imports.values():
                fw = framework_of(q)
                if fw and parent is not None:
                    self.frameworks.add(fw)
        return scope

    def qualify(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        """Canonical dotted name of ``expr`` if it is an imported API, else None."""
        parts = []
        while isinstance(expr, cst.Attribute):
            parts.append(expr.attr.value)
            expr = expr.value
        if not isinstance(expr, cst.Name):
            return None
        base = scope.resolve_name(expr.value)
        if base is None:
            return None
        return canonical(".".join([base, *reversed(parts)]))


def is_framework(qname: Optional[str]) -> bool:
    return framework_of(qname) in FRAMEWORKS
