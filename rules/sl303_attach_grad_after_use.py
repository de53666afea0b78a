from typing import Dict, Optional, Sequence

import libcst as cst

from scopelint.core.frameworks import MXNET
from scopelint.core.names import dotted
from scopelint.fixkit import block_of, function_of, module_fix, quiet, Replacement, statement_of, walk
from scopelint.rule import NodeFix, Report, Rule


class AttachGradAfterUse(Rule):
    code = "SL303"
    name = "attach-grad-after-use"
    severity = "error"
    frameworks = ("mxnet",)
    fixable = "unsafe"
    summary = "`x.attach_grad()` is called after `x` was already used in the recorded computation that is backpropagated."
    help = "Call `x.attach_grad()` before `x` is used inside `autograd.record()`."
    why = """
        `attach_grad()` makes `x` a new leaf. The computation recorded before it used
        the old `x`, which has no gradient buffer, so it is not connected to the new
        leaf: backward raises `Cannot differentiate node because it is not in a
        computational graph` (or leaves `x.grad` at zero).
    """
    bad = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        with autograd.record():
            y = x * x
            x.attach_grad()
        y.backward()
    """
    good = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
        y.backward()
    """

    def check(self, ctx):
        facts = ctx.facts
        if MXNET not in facts.frameworks:
            return
        attaches = [m for m in facts.mutations if m.kind == "attach" and m.before is not None]
        reported = set()  # (a helper's attach: at its calls, and in its own walk)
        for m in attaches:
            if id(m.node) in reported:
                continue
            for b in facts.backwards:
                if MXNET not in b.frameworks or b.seq < m.seq:
                    continue
                uses = [
                    v.node
                    for value in b.values
                    for v in value.ancestors()
                    if m.before in v.parents and v.state is not None and v.state.mxnet.on and v.node is not None
                ]
                if uses:
                    # (and what reaches a use from the backward: the call of a helper the
                    # use is in, ``linreg(X, w, b)``, is where the fix can move before)
                    fix = attach_before_use(ctx, m.node, m.key, uses + _leading_to(b.values, m.before))
                    reported.add(id(m.node))
                    yield Report(m.node, f"`{m.key}.attach_grad()` after `{m.key}` was used in the recorded computation: that use is not connected to the new leaf", fix)
                    break


def _leading_to(values, before) -> list:
    """The nodes of the recorded values on the way from ``values`` to one computed from
    ``before``."""
    reach: dict = {}
    order = [v for value in values for v in value.ancestors()]
    for v in reversed(order):  # (parents before the values made of them, but for cycles)
        reach[id(v)] = before in v.parents or any(reach.get(id(p), False) for p in v.parents)
    for v in order:
        if not reach[id(v)]:
            reach[id(v)] = any(reach.get(id(p), False) for p in v.parents)
    return [v.node for v in order if reach[id(v)] and v.node is not None and v.state is not None and v.state.mxnet.on]


# --- the fix ----------------------------------------------------------------------------
def _source_order(module: cst.Module) -> Dict[int, int]:
    return {id(n): i for i, n in enumerate(walk(module))}


@quiet
def attach_before_use(ctx, attach: cst.CSTNode, key: str, uses: Sequence[cst.CSTNode]) -> Optional[NodeFix]:
    """SL303: move the ``x.attach_grad()`` statement to just before the first statement of
    the same function that uses ``x`` in the recorded computation."""
    module = ctx.facts.module
    stmt = statement_of(module, attach)
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is attach):
        return None
    located = block_of(module, stmt)
    if located is None:
        return None
    func = function_of(ctx, attach)
    order = _source_order(module)
    targets = []
    for use in uses:
        target = statement_of(module, use)
        if target is None or target is stmt or function_of(ctx, use) is not func:
            continue
        if order[id(target)] > order[id(stmt)] or any(n is stmt for n in walk(target)):
            continue  # not before the attach, or holds it (a loop around both)
        if not any(isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) == key for n in walk(target)):
            continue  # the name is not spelled there (an alias): it may not be bound yet
        targets.append(target)
    if not targets:
        return None
    target = min(targets, key=lambda t: order[id(t)])
    block, index = located
    moved = stmt.with_changes(leading_lines=target.leading_lines)
    mapping: Dict[int, Replacement] = {id(target): cst.FlattenSentinel([moved, target.with_changes(leading_lines=())])}
    if len(block.body) == 1:
        mapping[id(stmt)] = cst.SimpleStatementLine([cst.Pass()], leading_lines=stmt.leading_lines)
    else:
        mapping[id(stmt)] = cst.RemovalSentinel.REMOVE
        if index + 1 < len(block.body) and stmt.leading_lines:  # its comment stays where it was
            after = block.body[index + 1]
            mapping[id(after)] = after.with_changes(leading_lines=tuple(stmt.leading_lines) + tuple(after.leading_lines))
    return module_fix(module, mapping, f"Call `{key}.attach_grad()` before `{key}` is first used")


RULE = AttachGradAfterUse
