"""Resolution of framework names through every import style.

``import torch as T``, ``from torch import no_grad``, ``import mxnet.autograd``,
``from mxnet import autograd as ag`` ... all resolve to canonical dotted names. A local
binding that merely shares a name (``record = ...``, a parameter called ``pause``,
``self.pause()``) shadows the import and resolves to nothing.
"""

from __future__ import annotations

import builtins
from typing import Dict, Iterable, List, Mapping, Optional, Set, Tuple, Union

import libcst as cst

from scopelint.core.frameworks import MAKE_LEAF_METHODS, canonical, framework_of
from scopelint.core.modules import relative_module
from scopelint.core.syntax import iter_children, walk

ScopeNode = Union[cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda]


def dotted(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` -> "a.b.c" for Name/Attribute chains; None otherwise."""
    t = type(expr)
    if t is cst.Name:
        return expr.value
    parts = []
    while t is cst.Attribute:
        parts.append(expr.attr.value)
        expr = expr.value
        t = type(expr)
    if t is cst.Name:
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def _import_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


def _target_names(target: cst.BaseExpression) -> Iterable[str]:
    if type(target) is cst.Name:
        yield target.value
    elif type(target) in (cst.Tuple, cst.List):
        for el in target.elements:
            yield from _target_names(el.value)
    elif type(target) is cst.StarredElement:
        yield from _target_names(target.value)


class Scope:
    """Names bound in one function, class or module body, with their imports."""

    def __init__(self, node: ScopeNode, parent: Optional["Scope"]):
        self.node = node
        self.parent = parent
        self.imports: Dict[str, str] = {}
        self.bound: Set[str] = set()  # bound by anything but an import
        self.globals: Set[str] = set()

    def binder(self, name: str) -> Optional["Scope"]:
        """The scope whose binding of ``name`` this scope reads (None: an import, a
        builtin, or nothing)."""
        scope: Optional[Scope] = self
        while scope is not None:
            if scope is self or type(scope.node) is not cst.ClassDef:
                if name in scope.globals:
                    root = _root(scope)
                    return root if name in root.bound else None
                if name in scope.bound:
                    return scope
                if name in scope.imports:
                    return None
            scope = scope.parent
        return None

    def resolve_name(self, name: str) -> Optional[str]:
        scope: Optional[Scope] = self
        while scope is not None:
            # Class bodies do not enclose the names seen by their methods.
            if scope is self or type(scope.node) is not cst.ClassDef:
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


_BINDERS = frozenset({
    cst.FunctionDef, cst.ClassDef, cst.Import, cst.ImportFrom, cst.Global, cst.AssignTarget,
    cst.AnnAssign, cst.AugAssign, cst.For, cst.WithItem, cst.ExceptHandler, cst.NamedExpr,
})


def _collect_bindings(scope: Scope, root: ScopeNode, walrus: bool = True, program: Optional["Imports"] = None) -> None:
    """A scope's bindings, without entering nested scopes (their names are bindings).
    ``walrus``: the code may hold an assignment expression (``:=``), the one binder
    that can sit inside any expression; without one only statements are walked.
    ``program``: what the rest of the program says (relative and star imports)."""
    if type(root) is cst.FunctionDef:
        params = root.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.bound.add(p.name.value)
        if root.name.value == "hybrid_forward" and len(params.params) > 1 and params.params[1].name.value == "F":
            # Gluon hands ``hybrid_forward`` its operator namespace: ``mx.nd`` run
            # imperatively (``mx.sym`` once hybridized, where the same operators record)
            scope.bound.discard("F")
            scope.imports["F"] = "mxnet.nd"
        for p in (params.star_arg, params.star_kwarg):
            if type(p) is cst.Param:
                scope.bound.add(p.name.value)
    # Decorators, defaults and bases belong to the enclosing scope: only the body is ours.
    body = root.body if type(root) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) else root
    if not walrus:
        for node in _statement_walk(body):
            if type(node) in _BINDERS:
                _bind(scope, node, program)
        return
    # ``walk(body, prune)`` with ``prune`` nested scopes and ``CompFor``, inlined (the
    # same nodes in the same order: later bindings win): a file with one ``:=`` walks
    # every expression of every scope here.
    binders, stops = _BINDERS, _NOT_ENTERED
    todo = [body]
    pop, extend = todo.pop, todo.extend
    while todo:
        node = pop()
        t = type(node)
        if t in binders:
            _bind(scope, node, program)
        if t in stops and node is not body:
            continue
        children = iter_children(node)
        if children:
            children.reverse()
            extend(children)


_NOT_ENTERED = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.CompFor})  # (``is_nested_scope``, and comprehensions)


# Where the binders other than ``:=`` can be: statement bodies, assignment targets,
# ``with`` items and ``except`` clauses.
_BLOCK_FIELDS = {
    cst.Module: ("body",), cst.IndentedBlock: ("body",), cst.SimpleStatementSuite: ("body",),
    cst.SimpleStatementLine: ("body",), cst.Assign: ("targets",), cst.With: ("items", "body"),
    cst.If: ("body", "orelse"), cst.While: ("body", "orelse"), cst.For: ("body", "orelse"),
    cst.Try: ("body", "handlers", "orelse", "finalbody"), cst.TryStar: ("body", "handlers", "orelse", "finalbody"),
    cst.ExceptHandler: ("body",), cst.ExceptStarHandler: ("body",), cst.Else: ("body",), cst.Finally: ("body",),
    cst.Match: ("cases",), cst.MatchCase: ("body",),
}


def _statement_walk(body) -> Iterable[cst.CSTNode]:
    """What ``walk`` would yield of ``_BINDERS`` other than ``NamedExpr``, in the same
    order (later bindings win); nested functions and classes yielded, not entered."""
    todo = [body]
    pop, extend = todo.pop, todo.extend
    fields_of = _BLOCK_FIELDS
    while todo:
        node = pop()
        yield node
        fields = fields_of.get(type(node))
        if fields is None:
            continue
        children: List[cst.CSTNode] = []
        for name in fields:
            value = getattr(node, name)
            if type(value) in (list, tuple):
                children.extend(value)
            elif value is not None:
                children.append(value)
        children.reverse()
        extend(children)


class Imports:
    """What the program says of a module's imports: the package it is in (``""``: a
    top-level module; None: unknown) and, per module of the program, the names a star
    import of it binds."""

    def __init__(self, package: Optional[str], stars: Mapping[str, Tuple[str, ...]],
                 aliases: Optional[Mapping[str, Tuple[Tuple[str, str], ...]]] = None):
        # ``aliases``: per module, the framework modules and names its star import binds
        # with its own imports (``nn``: ``torch.nn``).
        self.package, self.stars, self.aliases = package, stars, aliases or {}


def _relative(node: cst.ImportFrom, package: Optional[str]) -> Optional[str]:
    """``relative_module`` of a LibCST ``from .m import x``."""
    return relative_module(package, len(node.relative), _import_name(node.module) if node.module is not None else None)


def _bind(scope: Scope, node: cst.CSTNode, program: Optional["Imports"] = None) -> None:
    bound, imports = scope.bound, scope.imports
    if type(node) in (cst.FunctionDef, cst.ClassDef):
        bound.add(node.name.value)
    elif type(node) is cst.Import:
        for alias in node.names:
            full = _import_name(alias.name)
            if alias.asname is not None:
                imports[alias.asname.name.value] = full  # type: ignore[union-attr]
            else:
                root_name = full.split(".", 1)[0]
                imports[root_name] = root_name
    elif type(node) is cst.ImportFrom:
        source = _relative(node, program.package) if node.relative and program is not None else None
        if not node.relative and node.module is not None:
            source = _import_name(node.module)
        if type(node.names) is cst.ImportStar:
            # Of a module of the program (the project layer knows its names): those.
            for local, full in (program.aliases.get(source, ()) if program is not None and source else ()):
                imports[local] = full
            for name in (program.stars.get(source, ()) if program is not None and source else ()):
                imports[name] = f"{source}.{name}"
            return
        for alias in node.names:
            name = _import_name(alias.name)
            local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
            if source is None:
                bound.add(local)
            else:
                imports[local] = f"{source}.{name}"
    elif type(node) is cst.Global:
        scope.globals.update(n.name.value for n in node.names)
    elif type(node) is cst.AssignTarget:
        bound.update(_target_names(node.target))
    elif type(node) in (cst.AnnAssign, cst.AugAssign):
        if type(node) is not cst.AnnAssign or node.value is not None:
            bound.update(_target_names(node.target))
    elif type(node) is cst.For:
        bound.update(_target_names(node.target))
    elif type(node) is cst.WithItem:
        if node.asname is not None:
            bound.update(_target_names(node.asname.name))
    elif type(node) is cst.ExceptHandler:
        if node.name is not None:
            bound.update(_target_names(node.name.name))
    elif type(node) is cst.NamedExpr:
        bound.update(_target_names(node.target))


_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__builtins__", "__spec__", "get_ipython", "display"}


def _bound_anywhere(module: cst.Module):
    """Every name any statement, parameter, comprehension or import of ``module`` binds
    (over-inclusive: the names of ``a.b = ...``'s object count); True where a star
    import or a ``match`` statement (captures) could bind names not spelled here."""
    bound: Set[str] = set()
    for n in walk(module):
        t = type(n)
        if t in (cst.ImportStar, cst.Match):
            return True
        if t in (cst.AssignTarget, cst.For, cst.CompFor, cst.AugAssign, cst.AnnAssign, cst.NamedExpr):
            bound.update(x.value for x in walk(n.target) if type(x) is cst.Name)
        elif t is cst.AsName:
            bound.update(x.value for x in walk(n.name) if type(x) is cst.Name)
        elif t in (cst.Param, cst.FunctionDef, cst.ClassDef):
            bound.add(n.name.value)
        elif t is cst.ImportAlias and n.asname is None:
            bound.add(_import_name(n.name).split(".", 1)[0])
        elif t in (cst.Global, cst.Nonlocal):
            bound.update(a.name.value for a in n.names)
    return bound


class Names:
    """Resolves expressions to canonical framework names, scope by scope."""

    def __init__(self, module: cst.Module, walrus: bool = True, program: Optional["Imports"] = None):
        """``walrus``: False when the code holds no ``:=`` (cheaper to collect).
        ``program``: what the program says of this module's imports (relative imports
        resolve in its package, star imports of its modules bind their names)."""
        self.module = module
        self.walrus = walrus
        self.program = program
        self._assigned = None
        self._anywhere = None  # ``hole``: every name bound anywhere (True: a star import or ``match`` may bind any)
        self._scopes: Dict[int, Scope] = {}
        self.root = self.scope_of(module, None)
        # A name both imported and bound otherwise is ambiguous: ``bound`` wins in
        # ``resolve_name``, so it resolves to nothing.
        self.frameworks: Set[str] = set()
        for q in self.root.imports.values():
            fw = framework_of(q)
            if fw:
                self.frameworks.add(fw)

    def hole(self, name: str, scope: Scope) -> bool:
        """``name`` is a hole where ``scope`` reads it: bound by nothing the reading
        resolves to, by no other scope, comprehension or parameter of the module, no
        builtin, and no star import whose names are unknown could bind it. Running the
        text as it is would raise ``NameError``; a fragment (a forum post, a notebook
        cell, an issue) uses it for something defined off-screen (docs/model.md,
        "Fragments"). Python's builtins are never holes."""
        if scope.binder(name) is not None or scope.resolve_name(name) is not None or name in _BUILTINS:
            return False
        if self._anywhere is None:
            self._anywhere = _bound_anywhere(self.module)
        return self._anywhere is not True and name not in self._anywhere

    def assigned(self):
        """Once per module: what ``name = <expr>`` binds, by the expression's id, and the
        dotted names whose ``.grad`` is read (not ``x.grad = ...``, ``x.grad.zero_()``)."""
        if self._assigned is not None:
            return self._assigned
        bound: dict = {}
        skip, reads = set(), []
        for n in walk(self.module):
            t = type(n)
            if t is cst.Assign:
                for target in n.targets:
                    d = dotted(target.target)
                    if d is not None:
                        bound.setdefault(id(n.value), set()).add(d)
                    elif type(n.value) in (cst.Tuple, cst.List) and type(target.target) in (cst.Tuple, cst.List) and len(target.target.elements) == len(n.value.elements):
                        for el, val in zip(target.target.elements, n.value.elements):  # ``a, b = f(), g()``
                            if dotted(el.value) is not None:
                                bound.setdefault(id(val.value), set()).add(dotted(el.value))
            elif t is cst.AssignTarget:
                skip.add(id(n.target))
            elif t is cst.Call and type(n.func) is cst.Attribute:
                if n.func.attr.value in ("zero_", "detach_", "fill_"):
                    skip.add(id(n.func.value))
                d = dotted(n.func.value)
                if d is not None and n.func.attr.value in MAKE_LEAF_METHODS:  # ``w.requires_grad_()`` binds ``w``
                    bound.setdefault(id(n), set()).add(d)
            elif t is cst.Attribute and n.attr.value == "grad":
                reads.append(n)
        grads = {dotted(n.value) for n in reads if id(n) not in skip} - {None}
        self._assigned = (bound, grads)
        return self._assigned

    def scope_of(self, node: ScopeNode, parent: Optional[Scope]) -> Scope:
        key = id(node)
        scope = self._scopes.get(key)
        if scope is None:
            scope = Scope(node, parent)
            _collect_bindings(scope, node, self.walrus, self.program)
            self._scopes[key] = scope
            for q in scope.imports.values():
                fw = framework_of(q)
                if fw and parent is not None:
                    self.frameworks.add(fw)
        return scope

    def builtin(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        """The builtin a bare name refers to (``float``), unless something shadows it."""
        if type(expr) is not cst.Name or scope.resolve_name(expr.value) is not None:
            return None
        s: Optional[Scope] = scope
        while s is not None:
            if expr.value in s.bound:
                return None
            s = s.parent
        return expr.value

    def qualify(self, expr: cst.BaseExpression, scope: Scope) -> Optional[str]:
        """Canonical dotted name of ``expr`` if it is an imported API, else None."""
        parts = []
        while type(expr) is cst.Attribute:
            parts.append(expr.attr.value)
            expr = expr.value
        if type(expr) is not cst.Name:
            return None
        base = scope.resolve_name(expr.value)
        if base is None:
            return None
        return canonical(".".join([base, *reversed(parts)]))


# ``nn.Module`` methods that return the module itself.
RETURNS_MODULE = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "type", "train", "eval", "requires_grad_", "share_memory"})


def module_chain_base(expr: cst.BaseExpression) -> Optional[str]:
    """``model.to(device).cuda()`` -> ``model``: the module a chain of calls that
    return the module itself starts from."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in RETURNS_MODULE:
        expr = expr.func.value
    return dotted(expr) if type(expr) is not cst.Call else None
