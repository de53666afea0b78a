"""What the rules' fixes share: LibCST helpers to find, replace and spell things.

Each rule builds its own fix (a ``NodeFix``) in its module, next to its ``check``, with
these; ``scopelint.fix`` applies the edits. The same fix serves ``--fix``/
``--unsafe-fixes`` and the runtime verifier, which runs the program as written and with
the fix applied. Pure LibCST: no framework is imported.

Expression-level changes (``torch.no_grad()`` -> ``torch.enable_grad()``) are
localised node replacements. Statement-level changes (wrapping statements in a
``with``, removing a ``with``, dropping a decorator) replace the whole module:
LibCST regenerates statements without their surrounding indentation, so only the
module node maps exactly onto its source span.

Every fix builder returns None instead of raising (``quiet``): a missing fix must never
break a rule.
"""

from __future__ import annotations

import functools
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst
from libcst._nodes.internal import CodegenState

from scopelint.core.frameworks import canonical
from scopelint.core.syntax import forget_parents, iter_children, parents  # (parents: the fix builders' too)
from scopelint.rule import ModuleSplice, NodeFix

UNSAFE = "unsafe"
Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]


def quiet(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:  # a fix is optional; never let it break the rule
            return None

    return wrapper


def statement_of(module: cst.Module, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The statement directly inside a block (module or indented block) that holds ``node``."""
    table = parents(module)
    current = node
    while current is not None:
        parent = table.get(id(current))
        if isinstance(parent, (cst.Module, cst.IndentedBlock)) and isinstance(current, cst.BaseStatement):
            return current
        current = parent
    return None


def block_of(module: cst.Module, stmt: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, int]]:
    parent = parents(module).get(id(stmt))
    if isinstance(parent, (cst.Module, cst.IndentedBlock)):
        for i, s in enumerate(parent.body):
            if s is stmt:
                return parent, i
    return None


def enclosing_with(module: cst.Module, item: cst.WithItem) -> Optional[cst.With]:
    parent = parents(module).get(id(item))
    return parent if isinstance(parent, cst.With) else None


class Replace(cst.CSTTransformer):
    """Put ``mapping[id(node)]`` in place of each mapped node. ``within``: the ids of the
    mapped nodes' ancestors; when given, nothing else is descended into (the rest of a
    large class stays as it is, and costs nothing). ``replaced``: the original nodes."""

    def __init__(self, mapping: Dict[int, Replacement], within: Optional[set] = None):
        self.mapping = mapping
        self.within = within
        self.replaced: List[cst.CSTNode] = []

    def on_visit(self, node) -> bool:
        return self.within is None or id(node) in self.within

    def on_leave(self, original_node, updated_node):
        out = self.mapping.get(id(original_node))
        if out is None:
            return updated_node
        self.replaced.append(original_node)
        return out


_BODY_INDEX: Dict[int, Tuple[cst.Module, Dict[int, int]]] = {}


def _body_index(module: cst.Module) -> Dict[int, int]:
    """id(module-level statement) -> its index in ``module.body``, once per module."""
    hit = _BODY_INDEX.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    table = {id(stmt): i for i, stmt in enumerate(module.body)}
    if len(_BODY_INDEX) > 8:
        _BODY_INDEX.clear()
    _BODY_INDEX[id(module)] = (module, table)
    return table


def module_fix(module: cst.Module, mapping: Dict[int, Replacement], message: str, imports: Sequence[str] = ()) -> Optional[NodeFix]:
    """The module with ``mapping`` applied. Only the module-level statements that hold a
    mapped node are transformed (and compared): the others stay the same objects in the
    new module, so that a fix costs its statements, not the file (``engine`` then makes
    the edit from the statements that changed)."""
    changed = _top_statements(module, mapping)
    if changed is None:  # (a mapped node outside the body: the whole module)
        new = module.visit(Replace(mapping))
        if not imports and new.code == module.code:
            return None
        return NodeFix(module, add_imports(new, imports) if imports else new, UNSAFE, message)
    first, end = min(changed), max(changed) + 1
    # Only the statements from the first to the last changed one are made anew.
    span: List[cst.BaseStatement] = list(module.body[first:end])
    same = True
    within = _ancestors(module, mapping)
    for i in sorted(changed, reverse=True):  # (from the end: the indices stay valid)
        one = _replace_one(module, module.body[i], mapping) if len(mapping) == 1 else None
        if one is not None:
            out, replaced = one
        else:
            replace = Replace(mapping, within)
            out = module.body[i].visit(replace)
            replaced = replace.replaced
        parts = [] if isinstance(out, cst.RemovalSentinel) else list(out.nodes) if isinstance(out, cst.FlattenSentinel) else [out]
        span[i - first:i - first + 1] = parts
        same = same and _same_code(module, replaced, mapping)
    if same and not imports:
        return None
    splice = ModuleSplice(module, first, end, tuple(span))
    if imports:  # (they go near the top, after a docstring and ``__future__`` imports)
        new = add_imports(splice.to_module(), imports)
        start = 0
        while start < first and new.body[start] is module.body[start]:
            start += 1
        splice = ModuleSplice(module, start, end, tuple(new.body[start:len(new.body) - (len(module.body) - end)]))
    return NodeFix(module, splice, UNSAFE, message)



def _replace_one(module: cst.Module, stmt: cst.CSTNode, mapping: Dict[int, Replacement]) -> Optional[Tuple[cst.CSTNode, List[cst.CSTNode]]]:
    """What ``stmt.visit(Replace(mapping, ...))`` makes of a statement holding the one
    node ``mapping`` replaces by a node (not a sentinel): each node from it up to
    ``stmt`` made anew with the new child in its place (``with_changes``: the same
    constructor and validation as the visitor's, without visiting every field of every
    ancestor), and the replaced node. None where this does not apply."""
    ((key, new),) = mapping.items()
    if not isinstance(new, cst.CSTNode):
        return None
    if key == id(stmt):
        return new, [stmt]
    table = parents(module)
    child_id, replaced = key, None
    while True:
        parent = table.get(child_id)
        if parent is None or parent is module:
            return None
        old, changes = _field_holding(parent, child_id, new)
        if old is None:
            return None
        if replaced is None:
            replaced = old
        new = parent.with_changes(**changes)
        if parent is stmt:
            return new, [replaced]
        child_id = id(parent)


def _field_holding(parent: cst.CSTNode, child_id: int, new: cst.CSTNode) -> Tuple[Optional[cst.CSTNode], Dict[str, object]]:
    """The child of ``parent`` whose id is ``child_id``, and the change of ``parent``'s
    field that puts ``new`` in its place (a sequence as a tuple, as the visitor makes it)."""
    for f in _fields(type(parent)):
        value = getattr(parent, f)
        if id(value) == child_id:
            return value, {f: new}
        if type(value) in (list, tuple):
            for j, item in enumerate(value):
                if id(item) == child_id:
                    return item, {f: (*value[:j], new, *value[j + 1:])}
    return None, {}


_FIELD_NAMES: Dict[type, Tuple[str, ...]] = {}


def _fields(t: type) -> Tuple[str, ...]:
    names = _FIELD_NAMES.get(t)
    if names is None:
        import dataclasses

        names = _FIELD_NAMES[t] = tuple(f.name for f in dataclasses.fields(t))
    return names


def _ancestors(module: cst.Module, mapping: Dict[int, Replacement]) -> set:
    """The ids of the nodes that hold a mapped node (the module excluded)."""
    table = parents(module)
    out = set()
    for key in mapping:
        parent = table.get(key)
        while parent is not None and parent is not module and id(parent) not in out:
            out.add(id(parent))
            parent = table.get(id(parent))
    return out


def _same_code(module: cst.Module, replaced: List[cst.CSTNode], mapping: Dict[int, Replacement]) -> bool:
    """Every replaced node's replacement spells the same code (only they changed)."""
    for node in replaced:
        new = mapping[id(node)]
        if isinstance(new, cst.RemovalSentinel):
            return False
        parts = list(new.nodes) if isinstance(new, cst.FlattenSentinel) else [new]
        if len(parts) == 1 and type(parts[0]) is not type(node):
            return False  # (another kind of node never spells the same code: no codegen of a whole function)
        if not _spells(module, parts, module.code_for_node(node)):
            return False
    return True


class _Differs(Exception):
    pass


class _CompareState(CodegenState):
    """A codegen state that compares the code with ``expected`` as it is generated and
    stops at the first token that differs (a replacement rarely spells its node's code:
    most of it need not be generated to tell)."""

    def __init__(self, module: cst.Module, expected: str):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.expected = expected
        self.at = 0

    def add_token(self, value: str) -> None:
        if not self.expected.startswith(value, self.at):
            raise _Differs
        self.at += len(value)

    def add_indent_tokens(self) -> None:
        for value in self.indent_tokens:
            self.add_token(value)


def _spells(module: cst.Module, parts: List[cst.CSTNode], expected: str) -> bool:
    """``"".join(module.code_for_node(p) for p in parts) == expected``."""
    if any(isinstance(p, cst.Module) for p in parts):  # (its codegen takes tokens back)
        return "".join(module.code_for_node(p) for p in parts) == expected
    state = _CompareState(module, expected)
    try:
        for p in parts:
            p._codegen(state)
    except _Differs:
        return False
    return state.at == len(expected)


def _top_statements(module: cst.Module, mapping: Dict[int, Replacement]) -> Optional[set]:
    """The indices in ``module.body`` of the statements holding the nodes ``mapping``
    names; None when one is not in the body."""
    table = parents(module)
    index = _body_index(module)
    out = set()
    for key in mapping:
        while key not in index:
            parent = table.get(key)
            if parent is None or parent is module:
                return None
            key = id(parent)
        out.add(index[key])
    return out


def add_imports(module: cst.Module, roots: Sequence[str]) -> cst.Module:
    """``import <root>`` after the module's docstring and __future__ imports."""
    body = list(module.body)
    at = 0
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and stmt.body:
            small = stmt.body[0]
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)) and i == 0:
                at = i + 1
                continue
            if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__":
                at = i + 1
                continue
        break
    new = [cst.SimpleStatementLine([cst.Import([cst.ImportAlias(cst.Name(r))])]) for r in roots]
    return module.with_changes(body=body[:at] + new + body[at:])


def indented(stmts: Sequence[cst.BaseStatement], header: Optional[cst.TrailingWhitespace] = None) -> cst.IndentedBlock:
    body = list(stmts) or [cst.SimpleStatementLine([cst.Pass()])]
    if header is None:
        return cst.IndentedBlock(body=body)
    return cst.IndentedBlock(body=body, header=header)


def wrap(stmts: Sequence[cst.BaseStatement], scope: cst.BaseExpression) -> cst.With:
    """``with <scope>:`` around ``stmts``, keeping the first statement's leading comments.
    Blank lines between them stay blank (no indentation added: no trailing spaces)."""
    first = stmts[0]
    lead = getattr(first, "leading_lines", ())
    inner = [first.with_changes(leading_lines=())] + [_blank_lines_bare(s) for s in stmts[1:]] if hasattr(first, "leading_lines") else list(stmts)
    return cst.With(items=[cst.WithItem(scope)], body=indented(inner), leading_lines=lead)


def _blank_lines_bare(stmt: cst.BaseStatement) -> cst.BaseStatement:
    """``stmt`` whose blank leading lines are not indented: a blank line at module level
    is parsed as indented (by the empty indentation) and would get the new block's."""
    lines = getattr(stmt, "leading_lines", None)
    if not lines:
        return stmt
    bare = [l.with_changes(indent=False) if l.comment is None and not l.whitespace.value else l for l in lines]
    return stmt.with_changes(leading_lines=bare)


def body_statements(with_node: cst.With) -> List[cst.BaseStatement]:
    body = with_node.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    return list(body.body)


def dedented(with_node: cst.With) -> List[cst.BaseStatement]:
    """The body of a ``with`` as statements of the enclosing block."""
    stmts = body_statements(with_node)
    first = stmts[0]
    lead = tuple(with_node.leading_lines) + tuple(getattr(first, "leading_lines", ()))
    return [first.with_changes(leading_lines=lead)] + stmts[1:]


def scope_of(ctx, func):
    return func.scope if func is not None else ctx.facts.names.root


def spell(ctx, scope, target: str) -> Optional[cst.BaseExpression]:
    """An expression that names the API ``target`` (canonical, e.g. ``torch.enable_grad``)
    in ``scope`` through the module's own imports, or None."""
    names = ctx.facts.names
    want = canonical(target)
    candidates: List[Tuple[int, cst.BaseExpression]] = []
    seen_scopes = []
    s = scope
    while s is not None:
        seen_scopes.append(s)
        s = s.parent
    for sc in seen_scopes:
        for local, q in sc.imports.items():
            for full in {q, canonical(q)}:
                rest = None
                if full == target or full == want:
                    rest = []
                elif target.startswith(full + "."):
                    rest = target[len(full) + 1:].split(".")
                if rest is None:
                    continue
                expr: cst.BaseExpression = cst.Name(local)
                for part in rest:
                    expr = cst.Attribute(value=expr, attr=cst.Name(part))
                candidates.append((len(rest), expr))
    for _, expr in sorted(candidates, key=lambda c: c[0]):
        if names.qualify(expr, scope) == want:
            return expr
    return None


def spell_or_import(ctx, scope, target: str) -> Tuple[Optional[cst.BaseExpression], Tuple[str, ...]]:
    """Like ``spell``; failing that ``<root>.<rest>`` plus the ``import <root>`` it needs."""
    expr = spell(ctx, scope, target)
    if expr is not None:
        return expr, ()
    root = target.split(".", 1)[0]
    names = ctx.facts.names
    if root in names.root.bound or root in names.root.imports:
        return None, ()
    s = scope
    while s is not None:
        if root in s.bound or root in s.imports:
            return None, ()
        s = s.parent
    expr = cst.Name(root)
    for part in target.split(".")[1:]:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr, (root,)


def sibling(ctx, scope, func: cst.BaseExpression, target: str) -> Optional[cst.BaseExpression]:
    """``autograd.pause`` -> ``autograd.record``: the same prefix, another API."""
    if isinstance(func, cst.Attribute):
        candidate = func.with_changes(attr=cst.Name(target.rsplit(".", 1)[1]))
        if ctx.facts.names.qualify(candidate, scope) == canonical(target):
            return candidate
    return spell(ctx, scope, target)


def keyword_call(func: cst.BaseExpression, **kwargs: cst.BaseExpression) -> cst.Call:
    args = [
        cst.Arg(value=v, keyword=cst.Name(k), equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
        for k, v in kwargs.items()
    ]
    return cst.Call(func=func, args=args)


def code_of(node: cst.CSTNode) -> str:
    plain = _plain_code(node)
    return plain if plain is not None else _EMPTY_MODULE.code_for_node(node)


def _plain_code(node: cst.CSTNode) -> Optional[str]:
    """The code of ``a``, ``a.b.c`` or ``a.b()`` spelled without spaces or parentheses
    (most fix messages name such an API), without running LibCST's codegen; else None."""
    t = type(node)
    if t is cst.Call:
        if node.args or node.lpar or node.rpar or not _no_space(node.whitespace_after_func) or not _no_space(node.whitespace_before_args):
            return None
        inner = _plain_code(node.func)
        return inner + "()" if inner is not None else None
    if t is cst.Name:
        return None if node.lpar or node.rpar else node.value
    if t is cst.Attribute:
        if node.lpar or node.rpar or type(node.attr) is not cst.Name or node.attr.lpar or node.attr.rpar:
            return None
        dot = node.dot
        if not _no_space(dot.whitespace_before) or not _no_space(dot.whitespace_after):
            return None
        inner = _plain_code(node.value)
        return inner + "." + node.attr.value if inner is not None else None
    return None


def _no_space(ws) -> bool:
    return type(ws) is cst.SimpleWhitespace and ws.value == ""


_EMPTY_MODULE = cst.Module([])  # (the defaults' indentation and newline; made once: ~15 us a module)


def localized(node: cst.CSTNode, replacement: cst.CSTNode, message: str) -> NodeFix:
    return NodeFix(node, replacement, UNSAFE, message)


def torch_scope_call(ctx, scope, api: str, module: cst.Module, node: cst.CSTNode, message: str) -> Optional[NodeFix]:
    """Replace the expression ``node`` by ``<torch>.<api>()``; adds ``import torch`` when needed."""
    func, imports = spell_or_import(ctx, scope, api)
    if func is None:
        return None
    new = cst.Call(func=func)
    message = message.replace("{new}", code_of(new))
    if imports:
        return module_fix(module, {id(node): new}, message, imports)
    return localized(node, new, message)


def function_of(ctx, node: cst.CSTNode):
    """The FunctionInfo whose body holds ``node`` (innermost), or None at module level."""
    table = parents(ctx.facts.module)
    by_node = _functions_by_node(ctx.facts)
    current = table.get(id(node))
    while current is not None:
        if id(current) in by_node:
            return by_node[id(current)]
        current = table.get(id(current))
    return None


_BY_NODE: Dict[int, Tuple[object, Dict[int, object]]] = {}


def _functions_by_node(facts) -> Dict[int, object]:
    """id(function node) -> its FunctionInfo, made once per analysis (not per finding)."""
    hit = _BY_NODE.get(id(facts))
    if hit is not None and hit[0] is facts:
        return hit[1]
    table = {id(f.node): f for f in facts.functions}
    if len(_BY_NODE) > 8:
        _BY_NODE.clear()
    _BY_NODE[id(facts)] = (facts, table)
    return table


def forget(module: cst.Module, facts=None) -> None:
    """Drop what the caches above keep of ``module`` (and of ``facts``, its analysis)
    once a file's findings are made: a tree left there stayed alive with its parent table
    after its file (up to nine of them in a run) and was walked again by every later
    garbage collection."""
    forget_parents(module)
    for cache, key in ((_BODY_INDEX, id(module)), (_BY_NODE, id(facts))):
        hit = cache.get(key)
        if hit is not None and hit[0] is (facts if cache is _BY_NODE else module):
            del cache[key]


def drop_decorator(ctx, decorator, message: str) -> Optional[NodeFix]:
    module = ctx.facts.module
    if not isinstance(decorator, cst.Decorator):
        return None
    fdef = parents(module).get(id(decorator))
    if not isinstance(fdef, cst.FunctionDef):
        return None
    new = fdef.with_changes(decorators=[d for d in fdef.decorators if d is not decorator])
    return module_fix(module, {id(fdef): new}, message)


def detached(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr.detach()`` (parenthesised when needed); a tuple of states detaches each."""
    if isinstance(expr, cst.Tuple):
        return expr.with_changes(elements=[el.with_changes(value=detached(el.value)) for el in expr.elements])
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or expr.lpar:
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=expr, attr=cst.Name("detach")))


def detach_expression(expr: Optional[cst.BaseExpression], message: str, each=False) -> Optional[NodeFix]:
    """``expr.detach()``; with ``each=True``, ``[s.detach() for s in expr]`` (MXNet's list
    of states); with ``each="either"``, whichever of the two the state turns out to be."""
    if expr is None:
        return None
    if each == "either" and isinstance(expr, (cst.Name, cst.Attribute)):
        return localized(expr, detached_state(expr), message)
    if each is True and not isinstance(expr, cst.Tuple):
        item = cst.Name("s")
        replacement = cst.ListComp(
            elt=detached(item),
            for_in=cst.CompFor(target=item, iter=expr),
        )
        return localized(expr, replacement, message)
    return localized(expr, detached(expr), message)


def detached_state(expr: cst.BaseExpression) -> cst.BaseExpression:
    """A state that may be a tensor or a tuple of tensors (LSTM), detached either way."""
    item = cst.Name("s")
    as_tuple = cst.Call(
        func=cst.Name("tuple"),
        args=[cst.Arg(cst.GeneratorExp(elt=detached(item), for_in=cst.CompFor(target=item, iter=expr)))],
    )
    test = cst.Call(func=cst.Name("hasattr"), args=[cst.Arg(expr), cst.Arg(cst.SimpleString('"detach"'))])
    return cst.IfExp(test=test, body=detached(expr), orelse=as_tuple, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def statement_call(dotted_name: str, method: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Expr(cst.parse_expression(f"{dotted_name}.{method}()"))])


@quiet
def insert_call(ctx, node: cst.CSTNode, dotted_name: str, method: str, after: bool, message: str) -> Optional[NodeFix]:
    """``<dotted_name>.<method>()`` as a statement before or after the one holding ``node``."""
    module = ctx.facts.module
    stmt = statement_of(module, node)
    if stmt is None or not dotted_name:
        return None
    extra = statement_call(dotted_name, method)
    stmts = [stmt, extra] if after else [extra.with_changes(leading_lines=stmt.leading_lines), stmt.with_changes(leading_lines=())]
    return module_fix(module, {id(stmt): cst.FlattenSentinel(stmts)}, message)


def walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def clip(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."
