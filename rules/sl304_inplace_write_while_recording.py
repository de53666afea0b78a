from typing import Optional

import libcst as cst

from scopelint.core.frameworks import MXNET
from scopelint.core.queries import is_object
from scopelint.fixkit import localized
from scopelint.rule import NodeFix, Report, Rule


class InplaceWriteWhileRecording(Rule):
    code = "SL304"
    name = "inplace-write-while-recording"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("mxnet",)
    summary = "Inside `autograd.record()`, an in-place write to an array that is part of the recorded graph."
    help = "Compute a new array instead (`y = y + 1`, `y = nd.concat(...)`); write in place only outside `record()`."
    why = """
        MXNet warns `Assigning to NDArrays that are already in a computational graph
        will cause undefined behavior when evaluating gradients`: `y[:] = ...`,
        `y += ...` or `out=y` inside `record()` overwrite values the backward pass
        needs, and gradients come out wrong without an error.
    """
    bad = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
            y += 1
        y.backward()
    """
    good = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
            y = y + 1
        y.backward()
    """

    def check(self, ctx):
        facts = ctx.facts
        if MXNET not in facts.frameworks:
            return
        for m in facts.mutations:
            if m.kind not in ("augassign", "subscript", "out", "inplace") or not m.state.mxnet.on:
                continue
            in_graph = m.before.rec[MXNET].on
            # A value carried from the previous iteration: in the graph from the second on.
            carried = "carried" in m.before.tags and m.before.parents[-1].rec[MXNET].on
            if (in_graph or carried) and _array_in_graph(m.before):
                fix = augassign_to_assign(m.node) or write_to_rebind(m.node) or drop_out_argument(m.node)
                yield Report(m.node, "in-place write inside `autograd.record()` to an array that is part of the recorded graph", fix)


def _array_in_graph(value) -> bool:
    """``value`` comes from an array of the graph: a leaf, a model's output or an MXNet
    operation recorded as such -- not a Python number, a list of them, an attribute or
    parameter nobody knows, or an object's field (``self.count += 1``,
    ``task.args["k"] = v``, ``counts[i] += x.shape[0]``)."""
    for v in value.ancestors(is_object):
        if "left-graph" in v.tags or is_object(v):
            continue
        if "leaf" in v.tags:
            return True
        if type(v.node) is cst.Call and v.rec[MXNET].on:
            return True
    return False


# --- the fix ----------------------------------------------------------------------------
def drop_out_argument(node: cst.CSTNode) -> Optional[NodeFix]:
    """``f(x, out=y)`` -> ``f(x)``: no write into ``y``."""
    if not isinstance(node, cst.Call):
        return None
    args = [a for a in node.args if not (a.keyword is not None and a.keyword.value == "out")]
    if len(args) == len(node.args):
        return None
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return localized(node, node.with_changes(args=args), "Do not write the result into an array of the graph")


def write_to_rebind(node: cst.CSTNode) -> Optional[NodeFix]:
    """``y[:] = v`` -> ``y = v``: bind a new array instead of writing into the old one."""
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript)):
        return None
    target = node.targets[0].target.value
    return localized(node, node.with_changes(targets=[cst.AssignTarget(target=target)]), "Bind a new array instead of writing into it")


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
    return localized(node, replacement, "Compute a new array instead of writing in place")


RULE = InplaceWriteWhileRecording
