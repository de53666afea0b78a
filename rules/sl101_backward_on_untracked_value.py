import dataclasses
from typing import Dict, List, Optional

import libcst as cst

from scopelint.core.arguments import call_arg
from scopelint.core.frameworks import MXNET, TORCH
from scopelint.core.queries import carried_off, decorated_caller, describe_origin, untracked_by
from scopelint.fixkit import (
    block_of, code_of, dedented, drop_decorator, enclosing_with, function_of, keyword_call, localized, module_fix, quiet,
    Replacement, scope_of, sibling, spell, spell_or_import, statement_of, torch_scope_call, wrap,
)
from scopelint.rule import NodeFix, Report, Rule


class BackwardOnUntrackedValue(Rule):
    code = "SL101"
    name = "backward-on-untracked-value"
    severity = "error"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "Backward is called on a value computed while recording was off, so it has no graph."
    help = "Compute the value outside the `no_grad()`/`inference_mode()`/`pause()` scope (MXNet: inside `autograd.record()`)."
    why = """
        A value computed inside `torch.no_grad()`, `torch.inference_mode()` or
        `mxnet.autograd.pause()` (or, in MXNet, outside every `autograd.record()`) is not
        part of any graph. Calling backward on it raises at run time: PyTorch
        `RuntimeError: element 0 of tensors does not require grad and does not have a
        grad_fn`, MXNet `Cannot differentiate node because it is not in a computational
        graph`.
    """
    bad = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
        with autograd.pause():
            z = y[0] * x[1]
        z.backward()
    """
    good = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
            z = y[0] * x[1]
        z.backward()
    """

    def check(self, ctx):
        for b in ctx.facts.backwards:
            for value in b.values:
                origin = untracked_by(value, b.frameworks)
                if origin is None:
                    carried = carried_off(value, b.frameworks)
                    # (a switch inside a function of this file is SL106's finding, where the
                    # fix goes: one bug, one finding; at module level, or in another module's
                    # helper, this is the only one here)
                    if carried is not None and carried.where is None and carried.node is not None and function_of(ctx, carried.node) is not None:
                        carried = None
                    if carried is not None:  # (the fix records the value's computation: ``enable_grad()``)
                        switch = dataclasses.replace(carried, kind="setter")
                        related = ((carried.where.related("leaves recording off"),) if carried.where is not None
                                   else ((carried.node, "turns recording off"),) if carried.node is not None else ())
                        yield Report(b.node, f"`backward` on a value computed where the previous iteration left recording off "
                                             f"({describe_origin(switch)}, not restored in the loop): from the second "
                                             f"iteration on it has no graph", _wrap_untracked(ctx, b, value, TORCH), related)
                        break
                    continue
                if TORCH in b.frameworks and decorated_caller(ctx.facts, origin, b.func, b.frameworks) is not None:
                    continue  # SL105 reports this call
                related = (origin.where.related(f"turns recording off (`{origin.api}`)"),) if origin.where is not None else ()
                where = describe_origin(origin)
                if noop_pause(ctx, origin, b.frameworks):  # (SL104's pause: not the cause; recording never was on)
                    where = "outside every `autograd.record()` (the `autograd.pause()` around it changes nothing)"
                yield Report(b.node, f"`backward` on a value computed {where}: it has no graph",
                             backward_on_untracked(ctx, b, value, origin), related)
                break


def noop_pause(ctx, origin, frameworks) -> bool:
    """``origin`` is an MXNet ``autograd.pause()`` of this file where nothing records
    (what SL104 reports): the value would have no graph without it, so the message
    does not blame it (SL104 says to remove it; the two agree), and the fix records
    the computation in place of the pause (issue 44)."""
    if MXNET not in frameworks or origin.kind != "with" or origin.api != "mxnet.autograd.pause" or origin.where is not None:
        return False
    scope = next((s for s in ctx.facts.scopes if s.item is origin.node), None)
    return scope is not None and scope.before.mxnet.off and scope.before.mx_train.off


# --- the fix ----------------------------------------------------------------------------
_OFF_APIS = {"torch.no_grad", "torch.inference_mode", "mxnet.autograd.pause"}


def _mx_train_arg(call: Optional[cst.Call], default: bool) -> cst.BaseExpression:
    arg = call_arg(call, 0, "train_mode") if isinstance(call, cst.Call) else None
    if arg is None:
        return cst.Name("True" if default else "False")
    return arg.value


@quiet
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
        with_node = enclosing_with(module, item)
        func = function_of(ctx, with_node or item)
        here = function_of(ctx, backward.node)
        if func is not here and not (func is not None and func.entry.recording(fw).on) and not _encloses(func, here):
            return None  # the scope is in a helper that is not only called while recording: no fix
        scope = scope_of(ctx, func)
        if origin.api.startswith("torch."):
            return torch_scope_call(ctx, scope, "torch.enable_grad", module, call, f"Record the computation: `{code_of(call)}` -> `{{new}}`")
        if noop_pause(ctx, origin, backward.frameworks) and with_node is not None and len(with_node.items) == 1 and item.asname is None:
            return _wrap_untracked(ctx, backward, value, fw, dissolve=with_node)  # (record what it computes, and the rest)
        record = sibling(ctx, scope, call.func, "mxnet.autograd.record")
        if record is None:
            return None
        new = keyword_call(record, train_mode=_mx_train_arg(call, False))
        return localized(call, new, f"Record the computation: `{code_of(call)}` -> `{code_of(new)}`")
    if origin.kind in ("default", "entry") or (origin.kind == "setter" and fw == TORCH):
        # (after ``set_grad_enabled(False)``: ``enable_grad()`` records inside it)
        return _wrap_untracked(ctx, backward, value, fw)
    if origin.kind == "decorator" and fw == TORCH:
        callee = next((f for f in ctx.facts.functions if f.decorator is not None and f.decorator[1] is origin.node), None)
        if callee is not None and callee.called_in.recording(fw).on:  # only called while recording
            return drop_decorator(ctx, origin.node, f"Record what `{callee.name}` computes: remove `@{code_of(origin.node.decorator)}`")
    return None


def _encloses(outer, inner) -> bool:
    """``inner`` is defined in ``outer`` (None: the module) and reads its values there
    (a closure, or a function reading a global the module computed)."""
    if inner is None:
        return False
    f = inner.parent
    while f is not None and f is not outer:
        f = f.parent
    return f is outer


def _wrap_untracked(ctx, backward, value, fw: str, dissolve: Optional[cst.With] = None) -> Optional[NodeFix]:
    """Wrap the statements that compute ``value`` (and its untracked ancestors in the same
    block) in a recording scope; ``dissolve``: the no-op ``pause()`` block that computes
    it (MXNet, nothing recording around it), replaced by its body inside the new scope."""
    module = ctx.facts.module
    if value.node is None:
        return None
    anchor = dissolve if dissolve is not None else statement_of(module, value.node)
    if anchor is None:
        return None
    located = block_of(module, anchor)
    if located is None:
        return None
    block, last = located
    wanted = {last}
    for v in value.ancestors():
        if v.node is None or not v.rec[fw].off or v.rec[fw].origin is None:
            continue
        if v.rec[fw].origin.kind not in ("default", "entry", "setter"):
            continue
        stmt = statement_of(module, v.node)
        here = block_of(module, stmt) if stmt is not None else None
        if here is not None and here[0] is block and here[1] <= last:
            wanted.add(here[1])
    # One ``with`` per run of consecutive statements that compute the value: the
    # statements between them (a print, an unrelated assignment) stay where they are.
    runs: List[List[int]] = []
    for i in sorted(wanted):
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    func = function_of(ctx, anchor)
    scope = scope_of(ctx, func)
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
        scope_expr = keyword_call(api, train_mode=cst.Name("False"))
    mapping: Dict[int, Replacement] = {}
    for run in runs:
        stmts = list(block.body[run[0]:run[-1] + 1])
        inner = [t for s in stmts for t in (dedented(s) if s is dissolve else [s])]
        mapping[id(stmts[0])] = wrap(inner, scope_expr)
        for s in stmts[1:]:
            mapping[id(s)] = cst.RemovalSentinel.REMOVE
    if dissolve is not None:
        return module_fix(module, mapping, f"Compute the value inside `with {code_of(scope_expr)}:` (instead of the no-op `pause()`)", imports)
    return module_fix(module, mapping, f"Compute the value inside `with {code_of(scope_expr)}:`", imports)


RULE = BackwardOnUntrackedValue
