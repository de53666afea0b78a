from typing import Optional

import libcst as cst

from scopelint.core.frameworks import TORCH
from scopelint.core.names import dotted
from scopelint.core.syntax import walk
from scopelint.core.queries import from_gradient, wanted_as_leaf_after, written_leaf
from scopelint.fixkit import keyword_call, module_fix, quiet, scope_of, spell_or_import, statement_of, wrap
from scopelint.rule import NodeFix, Report, Rule


class ParamUpdateOutsideNoGrad(Rule):
    code = "SL301"
    name = "param-update-outside-no-grad"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "A manual update of a parameter that requires grad runs while recording."
    help = "Update the parameter in place inside `with torch.no_grad():` (`w -= lr * w.grad`, not `w = w - ...`), and zero `.grad` after it."
    why = """
        `w -= lr * w.grad` or `p.add_(...)` on a leaf that requires grad, with
        recording on, raises `RuntimeError: a leaf Variable that requires grad is
        being used in an in-place operation`; a write into a slice of it (`w[:] -= ...`,
        `w[0] = v`) raises the same for "a view of a leaf Variable". Rebinding instead
        (`w = w - lr * w.grad`) runs, but makes `w` a non-leaf: the next `w.grad` is
        `None` and training silently stops.
    """
    bad = """
        import torch

        w = torch.randn(3, requires_grad=True)
        for step in range(5):
            loss = (w * w).sum()
            loss.backward()
            w -= 0.1 * w.grad
            w.grad.zero_()
    """
    good = """
        import torch

        w = torch.randn(3, requires_grad=True)
        for step in range(5):
            loss = (w * w).sum()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        trains = {id(b.func) for b in facts.backwards}
        for m in facts.mutations:
            if m.kind == "rebind":
                if "leaf" not in m.before.tags:
                    continue
            elif written_leaf(m) is None:  # (also a write into a view of the leaf: ``w[:] -= ...``)
                continue
            sw = m.state.torch
            if m.kind == "rebind" and sw.off and sw.origin is not None and sw.origin.explicit:
                # ``with torch.no_grad(): w = w - lr * w.grad``: the name now holds a new
                # tensor that does not require grad (RULES.md, SL301)
                if from_gradient(facts, m.value) and wanted_as_leaf_after(facts, m.func, m.node, m.loops, {m.key}) \
                        and not _made_leaf_again(facts, m):
                    yield Report(m.node, f"`{m.key}` is rebound under `no_grad`: it now holds a new tensor that does not require grad, "
                                         "so its next `.grad` is None and it stops training", in_place_update(ctx, m.node))
                continue
            # ON, or a function entry nobody fixed in a function that backpropagates.
            known_on = sw.on or (sw.probably_on and id(m.func) in trains)
            if not known_on:
                continue
            if m.kind == "rebind" and not from_gradient(facts, m.value):
                continue  # (``acc = acc + loss`` on a seed made with requires_grad=True: no parameter)
            if m.kind == "rebind" and not wanted_as_leaf_after(facts, m.func, m.node, m.loops, {m.key}):
                continue  # (one FGSM step, ``x = x + eps * x.grad.sign()``: no next ``.grad`` to miss)
            fix = wrap_in_no_grad(ctx, m.func, m.node, "Update the parameter under `torch.no_grad()`")
            if m.kind == "rebind":
                yield Report(m.node, f"`{m.key}` is rebound from itself while recording: it becomes a non-leaf and its next `.grad` is None", fix)
            elif written_leaf(m) is m.before and m.kind != "subscript":
                yield Report(m.node, "in-place update of a parameter that requires grad while recording: raises at run time", fix)
            else:
                yield Report(m.node, "in-place write into a slice of a parameter that requires grad while recording: raises at run time", fix)


# --- the fix ----------------------------------------------------------------------------
_IN_PLACE = {cst.Add: cst.AddAssign, cst.Subtract: cst.SubtractAssign, cst.Multiply: cst.MultiplyAssign}


@quiet
def wrap_in_no_grad(ctx, func, node: cst.CSTNode, message: str) -> Optional[NodeFix]:
    """``with torch.no_grad():`` around the statement holding ``node``; a rebinding
    ``w = w - e`` becomes the in-place ``w -= e`` that keeps ``w`` the same leaf."""
    module = ctx.facts.module
    stmt = statement_of(module, node)
    scope_fn, imports = spell_or_import(ctx, scope_of(ctx, func), "torch.no_grad")
    if stmt is None or scope_fn is None:
        return None
    if isinstance(node, cst.Assign) and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and not isinstance(node.targets[0].target, cst.Subscript):  # (``w[i] = v``: wrapped as it is)
        value, target = node.value, node.targets[0].target
        op = _IN_PLACE.get(type(getattr(value, "operator", None)))
        if op is None or not isinstance(value, cst.BinaryOperation) or not value.left.deep_equals(target):
            return None
        stmt = stmt.with_changes(body=[cst.AugAssign(target=target, operator=op(), value=value.right)])
        original = statement_of(module, node)
        return module_fix(module, {id(original): wrap([stmt], keyword_call(scope_fn))}, message, imports)
    return module_fix(module, {id(stmt): wrap([stmt], keyword_call(scope_fn))}, message, imports)


def _made_leaf_again(facts, m) -> bool:
    """The name is made a leaf again where it is used next (``z.requires_grad_(True)``
    at the top of the loop, ``z.requires_grad = True``): the rebinding is deliberate."""
    unit = m.func.node if m.func is not None else facts.module
    scope = m.loops[-1] if m.loops else unit
    for n in walk(scope):
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in ("requires_grad_", "attach_grad") \
                and dotted(n.func.value) == m.key:
            return True
        if type(n) is cst.Assign and any(type(t.target) is cst.Attribute and t.target.attr.value == "requires_grad"
                                         and dotted(t.target.value) == m.key for t in n.targets):
            return True
    return False


@quiet
def in_place_update(ctx, node: cst.CSTNode) -> Optional[NodeFix]:
    """``w = w - lr * w.grad`` (already under ``no_grad``) becomes ``w -= lr * w.grad``:
    the same leaf, updated in place."""
    module = ctx.facts.module
    stmt = statement_of(module, node)
    if not isinstance(node, cst.Assign) or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    value, target = node.value, node.targets[0].target
    op = _IN_PLACE.get(type(getattr(value, "operator", None)))
    if op is None or not isinstance(value, cst.BinaryOperation) or not value.left.deep_equals(target) or len(node.targets) != 1:
        return None
    new = stmt.with_changes(body=[cst.AugAssign(target=target, operator=op(), value=value.right)])
    return module_fix(module, {id(stmt): new}, "Update the parameter in place: it stays the leaf that requires grad")


RULE = ParamUpdateOutsideNoGrad
