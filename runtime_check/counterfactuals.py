"""Counterfactual fixes: the minimal change that removes a finding.

Each rule attaches one of these to its Report as a ``NodeFix``; the same transform
serves ``--fix``/``--unsafe-fixes`` and the runtime verifier (which runs the program
as written and with this fix applied). Pure LibCST: no framework is imported.

Expression-level changes (``torch.no_grad()`` -> ``torch.enable_grad()``) are
localised node replacements. Statement-level changes (wrapping statements in a
``with``, removing a ``with``, dropping a decorator) replace the whole module:
LibCST regenerates statements without their surrounding indentation, so only the
module node maps exactly onto its source span.

Every builder returns None instead of raising: a missing fix must never break a rule.
"""

from __future__ import annotations

import functools
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from scopelint.core import roles
from scopelint.core.flow import LEAVING_METHODS, call_arg, literal_bool
from scopelint.core.frameworks import MXNET, TORCH, canonical
from scopelint.core.names import dotted
from scopelint.rule import NodeFix

UNSAFE = "unsafe"

_Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]


def _quiet(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:  # a fix is optional; never let it break the rule
            return None

    return wrapper


# --- tree helpers -------------------------------------------------------------------
_PARENTS: Dict[int, Tuple[cst.Module, Dict[int, cst.CSTNode]]] = {}


def parents(module: cst.Module) -> Dict[int, cst.CSTNode]:
    """id(node) -> parent node, computed once per module (a few kept)."""
    hit = _PARENTS.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    table: Dict[int, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        for child in node.children:
            table[id(child)] = node
            stack.append(child)
    if len(_PARENTS) > 8:
        _PARENTS.clear()
    _PARENTS[id(module)] = (module, table)
    return table


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


def _statement_of(module: cst.Module, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The statement directly inside a block (module or indented block) that holds ``node``."""
    table = parents(module)
    current = node
    while current is not None:
        parent = table.get(id(current))
        if isinstance(parent, (cst.Module, cst.IndentedBlock)) and isinstance(current, cst.BaseStatement):
            return current
        current = parent
    return None


def _block_of(module: cst.Module, stmt: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, int]]:
    parent = parents(module).get(id(stmt))
    if isinstance(parent, (cst.Module, cst.IndentedBlock)):
        for i, s in enumerate(parent.body):
            if s is stmt:
                return parent, i
    return None


def _enclosing_with(module: cst.Module, item: cst.WithItem) -> Optional[cst.With]:
    parent = parents(module).get(id(item))
    return parent if isinstance(parent, cst.With) else None


class _Replace(cst.CSTTransformer):
    def __init__(self, mapping: Dict[int, _Replacement]):
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):
        return self.mapping.get(id(original_node), updated_node)


def _module_fix(module: cst.Module, mapping: Dict[int, _Replacement], message: str, imports: Sequence[str] = ()) -> Optional[NodeFix]:
    """The module with ``mapping`` applied. Only the module-level statements that hold a
    mapped node are transformed (and compared): the others stay the same objects in the
    new module, so that a fix costs its statements, not the file (``engine`` then makes
    the edit from the statements that changed)."""
    changed = _top_statements(module, mapping)
    if changed is None:  # (a mapped node outside the body: the whole module)
        new = module.visit(_Replace(mapping))
        same = not imports and new.code == module.code
    else:
        body: List[cst.BaseStatement] = list(module.body)
        same = True
        for i in sorted(changed, reverse=True):  # (from the end: the indices stay valid)
            stmt = module.body[i]
            out = stmt.visit(_Replace(mapping))
            parts = [] if isinstance(out, cst.RemovalSentinel) else list(out.nodes) if isinstance(out, cst.FlattenSentinel) else [out]
            body[i:i + 1] = parts
            same = same and "".join(module.code_for_node(p) for p in parts) == module.code_for_node(stmt)
        new = module.with_changes(body=body)
        same = same and not imports
    if imports:
        new = _add_imports(new, imports)
    if same:
        return None
    span = None
    if changed is not None:  # what differs: from the first statement not shared to the last changed one
        end = max(changed) + 1
        first = min(changed)
        if imports:  # (they go near the top, after a docstring and ``__future__`` imports)
            first = 0
            while first < min(changed) and new.body[first] is module.body[first]:
                first += 1
        span = (first, end, len(new.body) - (len(module.body) - end))
    return NodeFix(module, new, UNSAFE, message, statements=span)


def _top_statements(module: cst.Module, mapping: Dict[int, _Replacement]) -> Optional[set]:
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


def _add_imports(module: cst.Module, roots: Sequence[str]) -> cst.Module:
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


def _indented(stmts: Sequence[cst.BaseStatement], header: Optional[cst.TrailingWhitespace] = None) -> cst.IndentedBlock:
    body = list(stmts) or [cst.SimpleStatementLine([cst.Pass()])]
    if header is None:
        return cst.IndentedBlock(body=body)
    return cst.IndentedBlock(body=body, header=header)


def _wrap(stmts: Sequence[cst.BaseStatement], scope: cst.BaseExpression) -> cst.With:
    """``with <scope>:`` around ``stmts``, keeping the first statement's leading comments."""
    first = stmts[0]
    lead = getattr(first, "leading_lines", ())
    inner = [first.with_changes(leading_lines=())] + list(stmts[1:]) if hasattr(first, "leading_lines") else list(stmts)
    return cst.With(items=[cst.WithItem(scope)], body=_indented(inner), leading_lines=lead)


def _body_statements(with_node: cst.With) -> List[cst.BaseStatement]:
    body = with_node.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    return list(body.body)


def _dedented(with_node: cst.With) -> List[cst.BaseStatement]:
    """The body of a ``with`` as statements of the enclosing block."""
    stmts = _body_statements(with_node)
    first = stmts[0]
    lead = tuple(with_node.leading_lines) + tuple(getattr(first, "leading_lines", ()))
    return [first.with_changes(leading_lines=lead)] + stmts[1:]


# --- spelling framework names -----------------------------------------------------------
def _scope(ctx, func):
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


def _sibling(ctx, scope, func: cst.BaseExpression, target: str) -> Optional[cst.BaseExpression]:
    """``autograd.pause`` -> ``autograd.record``: the same prefix, another API."""
    if isinstance(func, cst.Attribute):
        candidate = func.with_changes(attr=cst.Name(target.rsplit(".", 1)[1]))
        if ctx.facts.names.qualify(candidate, scope) == canonical(target):
            return candidate
    return spell(ctx, scope, target)


def _call(func: cst.BaseExpression, **kwargs: cst.BaseExpression) -> cst.Call:
    args = [
        cst.Arg(value=v, keyword=cst.Name(k), equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
        for k, v in kwargs.items()
    ]
    return cst.Call(func=func, args=args)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _localized(node: cst.CSTNode, replacement: cst.CSTNode, message: str) -> NodeFix:
    return NodeFix(node, replacement, UNSAFE, message)


def _torch_scope_call(ctx, scope, api: str, module: cst.Module, node: cst.CSTNode, message: str) -> Optional[NodeFix]:
    """Replace the expression ``node`` by ``<torch>.<api>()``; adds ``import torch`` when needed."""
    func, imports = spell_or_import(ctx, scope, api)
    if func is None:
        return None
    new = cst.Call(func=func)
    message = message.replace("{new}", _code(new))
    if imports:
        return _module_fix(module, {id(node): new}, message, imports)
    return _localized(node, new, message)


# --- per-rule counterfactuals ----------------------------------------------------------
_OFF_APIS = {"torch.no_grad", "torch.inference_mode", "mxnet.autograd.pause"}


def _mx_train_arg(call: Optional[cst.Call], default: bool) -> cst.BaseExpression:
    arg = call_arg(call, 0, "train_mode") if isinstance(call, cst.Call) else None
    if arg is None:
        return cst.Name("True" if default else "False")
    return arg.value


@_quiet
def backward_on_untracked(ctx, backward, value, origin) -> Optional[NodeFix]:
    """SL101: compute the value with recording on."""
    module = ctx.facts.module
    fws = [fw for fw in (TORCH, MXNET) if fw in backward.frameworks]
    if len(fws) != 1:
        return None
    fw = fws[0]
    if origin.kind == "with" and isinstance(origin.node, cst.WithItem) and origin.api in _OFF_APIS:
        item = origin.node
        call = item.item
        if not isinstance(call, cst.Call):
            return None
        with_node = _enclosing_with(module, item)
        func = _function_of(ctx, with_node or item)
        scope = _scope(ctx, func)
        if origin.api.startswith("torch."):
            return _torch_scope_call(ctx, scope, "torch.enable_grad", module, call, f"Record the computation: `{_code(call)}` -> `{{new}}`")
        record = _sibling(ctx, scope, call.func, "mxnet.autograd.record")
        if record is None:
            return None
        new = _call(record, train_mode=_mx_train_arg(call, False))
        return _localized(call, new, f"Record the computation: `{_code(call)}` -> `{_code(new)}`")
    if origin.kind in ("default", "entry"):
        return _wrap_untracked(ctx, backward, value, fw)
    return None


def _function_of(ctx, node: cst.CSTNode):
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


def _wrap_untracked(ctx, backward, value, fw: str) -> Optional[NodeFix]:
    """Wrap the statements that compute ``value`` (and its untracked ancestors in the same
    block) in a recording scope."""
    module = ctx.facts.module
    if value.node is None:
        return None
    anchor = _statement_of(module, value.node)
    if anchor is None:
        return None
    located = _block_of(module, anchor)
    if located is None:
        return None
    block, last = located
    first = last
    for v in value.ancestors():
        if v.node is None or not v.rec[fw].off or v.rec[fw].origin is None:
            continue
        if v.rec[fw].origin.kind not in ("default", "entry"):
            continue
        stmt = _statement_of(module, v.node)
        here = _block_of(module, stmt) if stmt is not None else None
        if here is not None and here[0] is block and here[1] <= last:
            first = min(first, here[1])
    stmts = list(block.body[first:last + 1])
    func = _function_of(ctx, anchor)
    scope = _scope(ctx, func)
    if fw == TORCH:
        api, imports = spell_or_import(ctx, scope, "torch.enable_grad")
        if api is None:
            return None
        scope_expr = cst.Call(func=api)
    else:
        imports = ()
        api = spell(ctx, scope, "mxnet.autograd.record")
        if api is None:
            return None
        scope_expr = _call(api, train_mode=cst.Name("False"))
    mapping: Dict[int, _Replacement] = {id(stmts[0]): _wrap(stmts, scope_expr)}
    for s in stmts[1:]:
        mapping[id(s)] = cst.RemovalSentinel.REMOVE
    return _module_fix(module, mapping, f"Compute the value inside `with {_code(scope_expr)}:`", imports)


@_quiet
def backward_inside_off_scope(ctx, backward, off) -> Optional[NodeFix]:
    """SL102: take the backward call out of the scope (the scope removed for it)."""
    module = ctx.facts.module
    origin = off.origin
    if origin is None:
        return None
    if origin.kind == "decorator":
        return _drop_decorator(ctx, origin.node, "Remove the decorator: backward does not depend on it")
    if origin.kind != "with" or not isinstance(origin.node, cst.WithItem):
        return None
    item = origin.node
    with_node = _enclosing_with(module, item)
    if with_node is None:
        return None
    stmt = _statement_of(module, backward.node)
    body = _body_statements(with_node)
    if (
        stmt is not None
        and len(with_node.items) == 1
        and isinstance(with_node.body, cst.IndentedBlock)
        and any(s is stmt for s in with_node.body.body)
    ):
        index = next(i for i, s in enumerate(with_node.body.body) if s is stmt)
        before, after = body[:index], body[index + 1:]
        parts: List[cst.BaseStatement] = []
        if before:
            parts.append(with_node.with_changes(body=with_node.body.with_changes(body=before)))
            moved = stmt
        else:
            moved = stmt.with_changes(leading_lines=tuple(with_node.leading_lines) + tuple(stmt.leading_lines))
        parts.append(moved)
        if after:
            parts.append(with_node.with_changes(body=with_node.body.with_changes(body=after), leading_lines=()))
        return _module_fix(
            module, {id(with_node): cst.FlattenSentinel(parts)},
            f"Move the backward call out of `{_code(item.item)}`: gradients are the same",
        )
    # The backward sits deeper inside the scope: restore, for the whole block, the
    # recording state the scope replaced (PyTorch records by default).
    call = item.item
    if not isinstance(call, cst.Call) or not origin.api or not origin.api.startswith("torch."):
        return None
    sc = _scope(ctx, _function_of(ctx, with_node))
    return _torch_scope_call(ctx, sc, "torch.enable_grad", module, call, f"Remove the effect of `{_code(call)}`: `{{new}}`")


@_quiet
def recording_during_inference_torch(ctx, call) -> Optional[NodeFix]:
    """SL103 (PyTorch): ``with torch.no_grad():`` around the statement with the model call
    (or ``@torch.no_grad()`` on the function when the call is in a compound statement)."""
    module = ctx.facts.module
    scope = _scope(ctx, call.func)
    api, imports = spell_or_import(ctx, scope, "torch.no_grad")
    if api is None:
        return None
    scope_expr = cst.Call(func=api)
    stmt = _statement_of(module, call.node)
    if isinstance(stmt, cst.SimpleStatementLine):
        return _module_fix(module, {id(stmt): _wrap([stmt], scope_expr)}, f"Run the forward pass inside `with {_code(scope_expr)}:`", imports)
    if call.func is None:
        return None
    fdef = call.func.node
    new = fdef.with_changes(decorators=[cst.Decorator(scope_expr)] + list(fdef.decorators))
    return _module_fix(module, {id(fdef): new}, f"Decorate `{call.func.name}` with `@{_code(scope_expr)}`", imports)


@_quiet
def recording_during_inference_mxnet(ctx, scope_fact) -> Optional[NodeFix]:
    """SL103 (MXNet): drop the recording: ``autograd.record()`` -> ``autograd.pause()``."""
    call = scope_fact.item.item
    if not isinstance(call, cst.Call) or scope_fact.item.asname is not None:
        return None
    scope = _scope(ctx, scope_fact.func)
    pause = _sibling(ctx, scope, call.func, "mxnet.autograd.pause")
    if pause is None:
        return None
    new = cst.Call(func=pause)
    return _localized(call, new, f"Do not record the prediction: `{_code(call)}` -> `{_code(new)}`")


@_quiet
def redundant_scope(ctx, scope_fact) -> Optional[NodeFix]:
    """SL104: remove the no-op scope, keeping its body."""
    module = ctx.facts.module
    item = scope_fact.item
    with_node = scope_fact.with_node
    if item.asname is not None:
        return None
    if len(with_node.items) == 1:
        replacement: _Replacement = cst.FlattenSentinel(_dedented(with_node))
    else:
        items = [i for i in with_node.items if i is not item]
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        replacement = with_node.with_changes(items=items)
    return _module_fix(module, {id(with_node): replacement}, f"Remove the redundant `{_code(item.item)}` (keep its body)")


def _drop_decorator(ctx, decorator, message: str) -> Optional[NodeFix]:
    module = ctx.facts.module
    if not isinstance(decorator, cst.Decorator):
        return None
    fdef = parents(module).get(id(decorator))
    if not isinstance(fdef, cst.FunctionDef):
        return None
    new = fdef.with_changes(decorators=[d for d in fdef.decorators if d is not decorator])
    return _module_fix(module, {id(fdef): new}, message)


@_quiet
def no_grad_decorator(ctx, origin) -> Optional[NodeFix]:
    """SL105: drop the ``@torch.no_grad()`` / ``@torch.inference_mode()`` decorator."""
    return _drop_decorator(ctx, origin.node, f"Remove `@{_code(origin.node.decorator)}` from the training step")


@_quiet
def global_switch(ctx, call) -> Optional[NodeFix]:
    """SL106: turn the global switch into a scope over the rest of its block, so the
    previous state comes back when the block is left (also on return or exception)."""
    module = ctx.facts.module
    node = call.node
    stmt = _statement_of(module, node)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not (isinstance(small, cst.Expr) and small.value is node):
        return None
    located = _block_of(module, stmt)
    if located is None or not isinstance(located[0], cst.IndentedBlock):
        return None
    block, index = located
    scope = _scope(ctx, call.func)
    q = call.qname
    if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
        scope_expr: cst.BaseExpression = node
    elif q in ("mxnet.autograd.set_recording", "mxnet.autograd.set_training"):
        arg = call_arg(node, 0, "is_recording" if q.endswith("set_recording") else "train_mode")
        flag = literal_bool(arg.value) if arg is not None else None
        if flag is None:
            return None
        if q.endswith("set_recording"):
            api = _sibling(ctx, scope, node.func, "mxnet.autograd.record" if flag else "mxnet.autograd.pause")
            training = _sibling(ctx, scope, node.func, "mxnet.autograd.is_training")
            if api is None or training is None:
                return None
            scope_expr = _call(api, train_mode=cst.Call(func=training))
        else:
            api = _sibling(ctx, scope, node.func, "mxnet.autograd.train_mode" if flag else "mxnet.autograd.predict_mode")
            if api is None:
                return None
            scope_expr = cst.Call(func=api)
    else:
        return None
    rest = list(block.body[index + 1:])
    new = cst.With(
        items=[cst.WithItem(scope_expr)],
        body=_indented(rest, header=stmt.trailing_whitespace),
        leading_lines=stmt.leading_lines,
    )
    mapping: Dict[int, _Replacement] = {id(stmt): new}
    for s in rest:
        mapping[id(s)] = cst.RemovalSentinel.REMOVE
    return _module_fix(module, mapping, f"Scope the switch: `with {_code(scope_expr)}:` over the rest of the block")


def inference_origin(ctx, value) -> Optional[cst.CSTNode]:
    """The ``torch.inference_mode()`` with-item or decorator that made ``value`` an
    inference tensor, if the facts tell."""
    for v in value.ancestors():
        sw = v.rec.get(TORCH) if isinstance(v.rec, dict) else None
        origin = getattr(sw, "origin", None)
        if origin is not None and origin.api == "torch.inference_mode" and origin.kind in ("with", "decorator"):
            return origin.node
    # A call of a local function decorated with inference_mode.
    for v in value.ancestors():
        if isinstance(v.node, cst.Call):
            target = v.node.func
            name = target.value if isinstance(target, cst.Name) else (target.attr.value if isinstance(target, cst.Attribute) else None)
            for f in ctx.facts.functions:
                if f.name == name and f.decorator is not None and f.decorator[0] == "torch.inference_mode":
                    return f.decorator[1]
    return None


@_quiet
def inference_tensor(ctx, value) -> Optional[NodeFix]:
    """SL108: make the tensor under ``torch.no_grad()`` instead of ``inference_mode()``."""
    module = ctx.facts.module
    origin = inference_origin(ctx, value)
    if isinstance(origin, cst.WithItem):
        expr = origin.item
    elif isinstance(origin, cst.Decorator):
        expr = origin.decorator
    else:
        return None
    if isinstance(expr, cst.Call) and expr.args:
        arg = call_arg(expr, 0, "mode")
        if arg is None or literal_bool(arg.value) is not True:
            return None
    sc = _scope(ctx, _function_of(ctx, origin))
    return _torch_scope_call(ctx, sc, "torch.no_grad", module, expr, f"Use `{{new}}` instead of `{_code(expr)}`")


# --- training-loop rules: expression-level counterfactuals --------------------------------
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
        return _localized(expr, detached_state(expr), message)
    if each is True and not isinstance(expr, cst.Tuple):
        item = cst.Name("s")
        replacement = cst.ListComp(
            elt=detached(item),
            for_in=cst.CompFor(target=item, iter=expr),
        )
        return _localized(expr, replacement, message)
    return _localized(expr, detached(expr), message)


def drop_out_argument(node: cst.CSTNode) -> Optional[NodeFix]:
    """``f(x, out=y)`` -> ``f(x)``: no write into ``y``."""
    if not isinstance(node, cst.Call):
        return None
    args = [a for a in node.args if not (a.keyword is not None and a.keyword.value == "out")]
    if len(args) == len(node.args):
        return None
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return _localized(node, node.with_changes(args=args), "Do not write the result into an array of the graph")


def detached_state(expr: cst.BaseExpression) -> cst.BaseExpression:
    """A state that may be a tensor or a tuple of tensors (LSTM), detached either way."""
    item = cst.Name("s")
    as_tuple = cst.Call(
        func=cst.Name("tuple"),
        args=[cst.Arg(cst.GeneratorExp(elt=detached(item), for_in=cst.CompFor(target=item, iter=expr)))],
    )
    test = cst.Call(func=cst.Name("hasattr"), args=[cst.Arg(expr), cst.Arg(cst.SimpleString('"detach"'))])
    return cst.IfExp(test=test, body=detached(expr), orelse=as_tuple, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def write_to_rebind(node: cst.CSTNode) -> Optional[NodeFix]:
    """``y[:] = v`` -> ``y = v``: bind a new array instead of writing into the old one."""
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript)):
        return None
    target = node.targets[0].target.value
    return _localized(node, node.with_changes(targets=[cst.AssignTarget(target=target)]), "Bind a new array instead of writing into it")


def augassign_to_assign(node: cst.CSTNode) -> Optional[NodeFix]:
    """``y += v`` -> ``y = y + v``: a new array instead of an in-place write."""
    if not isinstance(node, cst.AugAssign):
        return None
    op = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
          cst.DivideAssign: cst.Divide}.get(type(node.operator))
    if op is None:
        return None
    value = node.value
    if isinstance(value, cst.BinaryOperation) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    replacement = cst.Assign(
        targets=[cst.AssignTarget(target=node.target)],
        value=cst.BinaryOperation(left=node.target, operator=op(), right=value),
    )
    return _localized(node, replacement, "Compute a new array instead of writing in place")


# --- training-loop rules: statement-level counterfactuals ---------------------------------
def _statement_call(dotted_name: str, method: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Expr(cst.parse_expression(f"{dotted_name}.{method}()"))])


_IN_PLACE = {cst.Add: cst.AddAssign, cst.Subtract: cst.SubtractAssign, cst.Multiply: cst.MultiplyAssign}


@_quiet
def wrap_in_no_grad(ctx, func, node: cst.CSTNode, message: str) -> Optional[NodeFix]:
    """``with torch.no_grad():`` around the statement holding ``node``; a rebinding
    ``w = w - e`` becomes the in-place ``w -= e`` that keeps ``w`` the same leaf."""
    module = ctx.facts.module
    stmt = _statement_of(module, node)
    scope_fn, imports = spell_or_import(ctx, _scope(ctx, func), "torch.no_grad")
    if stmt is None or scope_fn is None:
        return None
    if isinstance(node, cst.Assign) and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        value, target = node.value, node.targets[0].target
        op = _IN_PLACE.get(type(getattr(value, "operator", None)))
        if op is None or not isinstance(value, cst.BinaryOperation) or not value.left.deep_equals(target):
            return None
        stmt = stmt.with_changes(body=[cst.AugAssign(target=target, operator=op(), value=value.right)])
        original = _statement_of(module, node)
        return _module_fix(module, {id(original): _wrap([stmt], _call(scope_fn))}, message, imports)
    return _module_fix(module, {id(stmt): _wrap([stmt], _call(scope_fn))}, message, imports)


@_quiet
def drop_statement(ctx, node: cst.CSTNode, message: str) -> Optional[NodeFix]:
    """The statement holding ``node`` becomes ``pass``."""
    module = ctx.facts.module
    stmt = _statement_of(module, node)
    if stmt is None:
        return None
    return _module_fix(module, {id(stmt): cst.SimpleStatementLine([cst.Pass()], leading_lines=stmt.leading_lines)}, message)


@_quiet
def insert_call(ctx, node: cst.CSTNode, dotted_name: str, method: str, after: bool, message: str) -> Optional[NodeFix]:
    """``<dotted_name>.<method>()`` as a statement before or after the one holding ``node``."""
    module = ctx.facts.module
    stmt = _statement_of(module, node)
    if stmt is None or not dotted_name:
        return None
    extra = _statement_call(dotted_name, method)
    stmts = [stmt, extra] if after else [extra.with_changes(leading_lines=stmt.leading_lines), stmt.with_changes(leading_lines=())]
    return _module_fix(module, {id(stmt): cst.FlattenSentinel(stmts)}, message)


# --- SL202: zero the gradients before backward ------------------------------------------------
def _zero_grad_target(ctx, step, fw: str) -> Optional[str]:
    """What to call ``zero_grad()`` on for the optimizer ``step`` belongs to: the optimizer
    (``opt``, ``self.optimizer``; ``scaler.step(opt)`` -> ``opt``) or, for a Gluon
    ``Trainer`` (it has no ``zero_grad`` in MXNet 1.x), the parameters it was made with
    (``net.collect_params()``), when they are spelled the same where the step is."""
    callee = step.callee or ""
    if not callee.endswith(".step"):
        return None
    receiver = callee[: -len(".step")]
    ctor = roles.constructor(step.receiver)
    if roles.is_scaler_step(step):
        args = step.node.args
        return dotted(args[0].value) if args and args[0].keyword is None else None
    if fw == MXNET:
        made = getattr(step.receiver, "node", None)
        if ctor != "mxnet.gluon.Trainer" or not isinstance(made, cst.Call) or not made.args or made.args[0].keyword is not None:
            return None
        params = made.args[0].value
        if _function_of(ctx, made) is not step.func and not (dotted(params) or _code(params)).startswith("self."):
            return None
        # ``net.collect_params()`` / ``params``: an expression that is cheap and safe to re-evaluate.
        if isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute) and params.func.attr.value == "collect_params" \
                and dotted(params.func.value) is not None and not params.args:
            return _code(params)
        return dotted(params)
    return receiver or None


@_quiet
def zero_grad_before_backward(ctx, backward_node: cst.CSTNode, step, fw: str) -> Optional[NodeFix]:
    """SL202: ``<optimizer>.zero_grad()`` just before the backward call."""
    target = _zero_grad_target(ctx, step, fw)
    if not target:
        return None
    return insert_call(ctx, backward_node, target, "zero_grad", False, f"Zero the gradients before backward: `{target}.zero_grad()`")


# --- SL206: stay in the graph -----------------------------------------------------------------
class _NoFix(Exception):
    pass


# NumPy functions whose torch / mxnet.nd namesake means the same with the same positional
# arguments (``np.exp`` -> ``torch.exp`` / ``nd.exp``).
_NUMPY_TWINS = frozenset({
    "exp", "log", "log1p", "expm1", "abs", "sqrt", "square", "tanh", "sin", "cos", "sign",
    "maximum", "minimum", "where", "clip", "sum", "mean",
})
# Calls that make a framework array of their argument (a copy, out of the graph).
_WRAPPERS = {"torch.tensor", "torch.from_numpy", "torch.as_tensor", "torch.Tensor", "mxnet.nd.array", "mxnet.ndarray.array"}
_NUMPY_WRAPPERS = {"numpy.asarray", "numpy.array", "numpy.asanyarray", "numpy.ascontiguousarray", "numpy.float32", "numpy.float64"}
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple)
# Where an expression needs no parentheses of its own.
_OPEN_SLOTS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Arg, cst.Return, cst.Expr, cst.Element)


def _paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class _Reconnect:
    """Rewrites an expression so that it stays in the graph: conversions out of it are
    undone (``y.asnumpy()`` -> ``y``, ``x.data`` -> ``x``, ``torch.tensor(t)`` -> ``t``,
    ``torch.tensor([a, b])`` -> ``torch.stack([a, b])``) and NumPy functions on the way
    become the framework's own (``np.exp`` -> ``nd.exp``). Raises _NoFix where that
    cannot be done (NumPy used in a way the framework cannot follow)."""

    def __init__(self, ctx, fw: str, anchor: cst.CSTNode):
        self.ctx, self.fw = ctx, fw
        self.func = _function_of(ctx, anchor)
        self.scope = _scope(ctx, self.func)
        self.extra: List[Tuple[cst.CSTNode, cst.CSTNode]] = []  # helpers ported to the framework

    def qualify(self, func) -> Optional[str]:
        return self.ctx.facts.names.qualify(func, self.scope)

    def builtin(self, func) -> Optional[str]:
        return self.ctx.facts.names.builtin(func, self.scope)

    # classification
    def kind(self, node) -> Optional[str]:
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            call = parents(self.ctx.facts.module).get(id(node))
            return None if isinstance(call, cst.Call) and call.func is node else "leave"  # not Gluon's ``p.data()``
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in LEAVING_METHODS:
            return "leave"
        q = self.qualify(func)
        if q in _WRAPPERS or q in _NUMPY_WRAPPERS or self.builtin(func) == "float":
            return "wrap"
        if q is not None and q.startswith("numpy.") and q[len("numpy."):] in _NUMPY_TWINS:
            return "numpy"
        if q is not None and q.startswith("numpy.") or self.builtin(func) in ("int", "bool", "list"):
            return "other-conversion"
        return None

    def holds_conversion(self, node) -> bool:
        if self.kind(node) is not None:
            return True
        return any(self.holds_conversion(c) for c in node.children)

    # rewriting
    def undo(self, node: cst.BaseExpression) -> cst.BaseExpression:
        new = self._undo(node)
        if isinstance(node, _ATOMS) and new is not node:
            new = _paren(new)
        return new

    def _undo(self, node):
        kind = self.kind(node)
        if kind == "leave":
            return self._undo(node.value if isinstance(node, cst.Attribute) else node.func.value)
        if kind == "wrap":
            pos = [a for a in node.args if a.keyword is None]
            if len(pos) != 1 or pos[0].star:
                raise _NoFix
            value = pos[0].value
            inner = self._undo(value)
            if self.is_list(value):
                return self.stack(value, inner)
            return inner
        if kind == "numpy":
            if any(a.keyword is not None or a.star for a in node.args):
                raise _NoFix
            func = self.spell(self.qualify(node.func)[len("numpy."):])
            return cst.Call(func=func, args=[a.with_changes(value=self._undo(a.value)) for a in node.args],
                            lpar=node.lpar, rpar=node.rpar)
        if kind == "other-conversion":
            raise _NoFix
        if not self.holds_conversion(node):
            return node
        if isinstance(node, cst.BinaryOperation):
            return node.with_changes(left=self.undo(node.left), right=self.undo(node.right))
        if isinstance(node, cst.UnaryOperation):
            return node.with_changes(expression=self.undo(node.expression))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):  # a tensor method
            func = node.func.with_changes(value=self.undo(node.func.value))
            return node.with_changes(func=func, args=[a.with_changes(value=self.undo(a.value)) for a in node.args])
        if isinstance(node, cst.Subscript):
            return node.with_changes(value=self.undo(node.value))
        if isinstance(node, (cst.List, cst.Tuple)):
            return node.with_changes(elements=[e.with_changes(value=self.undo(e.value)) for e in node.elements])
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and not any(a.keyword is None and a.star for a in node.args):
            self.port_helper(node.func.value)  # a function of the user's written with NumPy
            return node.with_changes(args=[a.with_changes(value=self.undo(a.value)) for a in node.args])
        raise _NoFix

    def port_helper(self, name: str) -> None:
        """Rewrite a module-level helper called only here, whose NumPy use is only
        functions with a framework twin (``np.abs`` -> ``torch.abs``); else _NoFix."""
        infos = [f for f in self.ctx.facts.functions if f.name == name and f.parent is None and f.cls is None]
        if len(infos) != 1 or any(n is infos[0].node for n, _ in self.extra):
            raise _NoFix
        info = infos[0]
        module = self.ctx.facts.module
        calls = [n for n in _walk(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == name]
        mentions = [n for n in _walk(module) if isinstance(n, cst.Name) and n.value == name]
        if len(calls) != 1 or len(mentions) != 1 + 1:  # the def and this one call
            raise _NoFix
        outer = (self.func, self.scope)
        self.func, self.scope = info, info.scope
        try:
            funcs: Dict[int, _Replacement] = {}
            for n in _walk(info.node.body):
                kind = self.kind(n)
                if kind == "numpy" and not any(a.keyword is not None or a.star for a in n.args):
                    funcs[id(n.func)] = self.spell(self.qualify(n.func)[len("numpy."):])
                elif kind is not None:
                    raise _NoFix
            mapped = {id(x) for n in _walk(info.node.body) if id(n) in funcs for x in _walk(n)}
            if not funcs or any(
                isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in mapped and (self.qualify(n) or "").startswith("numpy")
                for n in _walk(info.node.body)
            ):
                raise _NoFix  # NumPy used some other way
        finally:
            self.func, self.scope = outer
        self.extra.append((info.node, info.node.visit(_Replace(funcs))))

    def spell(self, name: str) -> cst.BaseExpression:
        if self.fw == TORCH:
            expr = spell(self.ctx, self.scope, f"torch.{name}")
        else:
            expr = spell(self.ctx, self.scope, f"mxnet.nd.{name}") or spell(self.ctx, self.scope, f"mxnet.ndarray.{name}")
        if expr is None:
            raise _NoFix
        return expr

    def stack(self, original: cst.BaseExpression, items: cst.BaseExpression) -> cst.Call:
        """One array of a list of graph values: ``torch.stack``; MXNet's scalars (shape
        (1,)) joined with ``nd.concat(..., dim=0)``, other arrays with ``nd.stack``."""
        if self.fw == TORCH:
            return cst.Call(func=self.spell("stack"), args=[cst.Arg(items)])
        scalars = isinstance(original, (cst.List, cst.Tuple)) and original.elements and all(
            isinstance(e.value, cst.Call) and isinstance(e.value.func, cst.Attribute) and e.value.func.attr.value == "asscalar"
            for e in original.elements
        )
        if scalars:
            dim = _call(cst.Name("_"), dim=cst.Integer("0")).args[0]
            return cst.Call(func=self.spell("concat"), args=[cst.Arg(items, star="*"), dim])
        return cst.Call(func=self.spell("stack"), args=[cst.Arg(items, star="*")])

    def is_list(self, expr) -> bool:
        """A list (or tuple) literal, or a name only ever bound to one here (whose items
        are not taken out of the graph on the way: that edit would be elsewhere)."""
        if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if not isinstance(expr, cst.Name):
            return False
        body = self.func.node if self.func is not None else self.ctx.facts.module
        values = []
        stack = [body]
        while stack:
            n = stack.pop()
            if n is not body and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == expr.value for t in n.targets):
                values.append(n.value)
            stack.extend(n.children)
        if not values or not all(isinstance(v, (cst.List, cst.ListComp)) for v in values):
            return False
        if any(self.holds_conversion(v) for v in values):
            raise _NoFix
        return True

    def top(self, conv: cst.CSTNode) -> cst.CSTNode:
        """The outermost expression around ``conv`` that belongs to the round trip out of
        and back into the framework (arithmetic, NumPy functions, the re-wrapping call)."""
        table = parents(self.ctx.facts.module)
        top = current = conv
        while True:
            parent = table.get(id(current))
            if isinstance(parent, cst.Arg):
                call = table.get(id(parent))
                if not isinstance(call, cst.Call) or self.kind(call) not in ("wrap", "numpy"):
                    return top
                current = top = call
            elif isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
                current = parent
            elif isinstance(parent, cst.Attribute) and parent.value is current and isinstance(table.get(id(parent)), cst.Call) \
                    and table.get(id(parent)).func is parent:
                current = table.get(id(parent))  # a method on the converted value
            else:
                return top


@_quiet
def reconnect_graph(ctx, conversions: Sequence[cst.CSTNode], fw: str) -> Optional[NodeFix]:
    """SL206: undo the conversions that take the backpropagated value out of the graph
    (each with the round trip around it), so the gradient flows again."""
    if fw not in (TORCH, MXNET) or not conversions:
        return None
    table = parents(ctx.facts.module)
    tops: List[cst.CSTNode] = []
    for conv in conversions:
        top = _Reconnect(ctx, fw, conv).top(conv)
        if all(t is not top for t in tops):
            tops.append(top)

    def inside(node, other) -> bool:
        p = table.get(id(node))
        while p is not None:
            if p is other:
                return True
            p = table.get(id(p))
        return False

    tops = [t for t in tops if not any(inside(t, o) for o in tops if o is not t)]
    pairs = []
    for t in tops:
        rewriter = _Reconnect(ctx, fw, t)
        try:
            new = rewriter._undo(t)
        except _NoFix:
            return None
        if not isinstance(table.get(id(t)), _OPEN_SLOTS):
            new = _paren(new)
        pairs.append((t, new))
        pairs.extend(rewriter.extra)
    first_old, first_new = pairs[0]
    message = f"Stay in the graph: `{_clip(_code(first_old))}` -> `{_clip(_code(first_new))}`"
    if any(isinstance(old, cst.BaseStatement) for old, _ in pairs):
        # A ported helper: statements map exactly onto their source only through the module.
        return _module_fix(ctx.facts.module, {id(old): new for old, new in pairs}, message)
    return NodeFix(first_old, first_new, UNSAFE, message, tuple(pairs[1:]))


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _clip(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


# --- SL302: requires_grad on the tensor that is bound ---------------------------------------
@_quiet
def requires_grad_last(expr: cst.BaseExpression, factory: cst.Call) -> Optional[NodeFix]:
    """``torch.randn(3, requires_grad=True) * 0.01`` -> ``(torch.randn(3) * 0.01).requires_grad_()``:
    the name is bound to a leaf that requires grad."""
    args = [a for a in factory.args if not (a.keyword is not None and a.keyword.value == "requires_grad")]
    if len(args) == len(factory.args):
        return None
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    inner = expr.visit(_Replace({id(factory): factory.with_changes(args=args)}))
    if not isinstance(inner, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not inner.lpar:
        inner = inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    new = cst.Call(func=cst.Attribute(value=inner, attr=cst.Name("requires_grad_")))
    return _localized(expr, new, f"Make the bound tensor the leaf: `{_clip(_code(new))}`")


# --- SL303: attach the gradient buffer before the first use ----------------------------------
def _source_order(module: cst.Module) -> Dict[int, int]:
    return {id(n): i for i, n in enumerate(_walk(module))}


@_quiet
def attach_before_use(ctx, attach: cst.CSTNode, key: str, uses: Sequence[cst.CSTNode]) -> Optional[NodeFix]:
    """SL303: move the ``x.attach_grad()`` statement to just before the first statement of
    the same function that uses ``x`` in the recorded computation."""
    module = ctx.facts.module
    stmt = _statement_of(module, attach)
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is attach):
        return None
    located = _block_of(module, stmt)
    if located is None:
        return None
    func = _function_of(ctx, attach)
    order = _source_order(module)
    targets = []
    for use in uses:
        target = _statement_of(module, use)
        if target is None or target is stmt or _function_of(ctx, use) is not func:
            continue
        if order[id(target)] > order[id(stmt)] or any(n is stmt for n in _walk(target)):
            continue  # not before the attach, or holds it (a loop around both)
        if not any(isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) == key for n in _walk(target)):
            continue  # the name is not spelled there (an alias): it may not be bound yet
        targets.append(target)
    if not targets:
        return None
    target = min(targets, key=lambda t: order[id(t)])
    block, index = located
    moved = stmt.with_changes(leading_lines=target.leading_lines)
    mapping: Dict[int, _Replacement] = {id(target): cst.FlattenSentinel([moved, target.with_changes(leading_lines=())])}
    if len(block.body) == 1:
        mapping[id(stmt)] = cst.SimpleStatementLine([cst.Pass()], leading_lines=stmt.leading_lines)
    else:
        mapping[id(stmt)] = cst.RemovalSentinel.REMOVE
        if index + 1 < len(block.body) and stmt.leading_lines:  # its comment stays where it was
            after = block.body[index + 1]
            mapping[id(after)] = after.with_changes(leading_lines=tuple(stmt.leading_lines) + tuple(after.leading_lines))
    return _module_fix(module, mapping, f"Call `{key}.attach_grad()` before `{key}` is first used")
