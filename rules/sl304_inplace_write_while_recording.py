from typing import Optional

import libcst as cst

from scopelint.core import frameworks as F
from scopelint.core.flow import BLOCK_INPUT, CONTAINER
from scopelint.core.frameworks import MXNET
from scopelint.core.names import dotted
from scopelint.core.queries import is_object, loops_around, made_this_iteration, plain_builtin
from scopelint.core.roles import is_child_block_call, is_model_call, made_loss, made_model
from scopelint.core.syntax import enclosing_if_tests, is_nested_scope, spells_any, walk
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
            if m.kind == "augassign" and type(m.node) is cst.AugAssign and type(m.node.value) in _LIST_LITERALS:
                continue  # (``states += [s]``: a Python list grows)
            in_graph = m.before.rec[MXNET].on
            # A value carried from the previous iteration: in the graph from the second on.
            carried = "carried" in m.before.tags and m.before.parents[-1].rec[MXNET].on
            origin = m.state.mxnet.origin
            block = origin is not None and origin.kind == "block-entry"
            if block and _asks_recording(facts.module, m.node):
                continue  # (``if not autograd.is_recording(): out *= 0.5``: the forward says)
            # (the first write of a loop that puts an array in the graph: only inside a
            # ``record()`` the code opens, not a Block's forward, whose loops over a graph
            # library's fields, NMS masks and bookkeeping arrays are no graph of its own)
            if (in_graph or carried) and not _python_list(facts, m) and (
                    _array_in_graph(facts, m.before) or (not block and _rewritten_each_iteration(facts, m))):
                fix = augassign_to_assign(m.node) or write_to_rebind(m.node) or drop_out_argument(m.node)
                where = ("in a Gluon Block's forward, which its training call runs inside `autograd.record()`,"
                         if block else "inside `autograd.record()`")
                yield Report(m.node, f"in-place write {where} to an array that is part of the recorded graph", fix)


def _asks_recording(module, node) -> bool:
    """``node`` sits under an ``if`` that asks ``autograd.is_recording()`` or
    ``is_training()``: the Block's forward chooses what to do per state."""
    return any(spells_any(test, ("is_recording", "is_training")) for test in enclosing_if_tests(module, node))


_LIST_METHODS = ("append", "extend", "insert")
_LIST_LITERALS = (cst.List, cst.Tuple, cst.ListComp)


def _python_list(facts, m) -> bool:
    """The write goes into a Python list: ``key[i] = v`` where ``key.append(...)`` (or
    ``extend``/``insert``) is called in the same function or, for ``self.x``, in a method
    of the same class (gluon-cv's ``ImagePool``: ``self.images.append(image)``, then
    ``self.images[i] = image``). An NDArray has no ``append``."""
    if m.kind != "subscript" or not m.key:
        return False
    unit = m.func.node if m.func is not None else facts.module
    if m.key.startswith("self.") and m.func is not None:
        top = m.func
        while top.parent is not None:
            top = top.parent
        if top.cls is not None:
            unit = top.cls
    for n in walk(unit, None if type(unit) is cst.ClassDef else is_nested_scope):
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in _LIST_METHODS \
                and dotted(n.func.value) == m.key:
            return True
    return False


def _array_in_graph(facts, value) -> bool:
    """``value`` is an array of the recorded graph: a leaf (``attach_grad``), a model
    call's output, or an MXNet operation recorded on such -- not a Python number or
    list, a NumPy array (a value taken out with ``.asnumpy()``/``.asscalar()`` is not
    looked past), an attribute or parameter nobody knows, an object's field
    (``self.count += 1``, ``task.args["k"] = v``), an array computed only from values
    made in ``pause()`` or outside ``record()`` (MXNet records an operation only when an
    input is in the graph), nor what an unknown function returns from such values (a
    DGL graph whose ``edata`` is written). The value itself is what is written to: a Python container
    (``rewards[i] = r`` on a list) is no array."""
    if CONTAINER <= value.tags or all(CONTAINER <= v.tags for v in _joined(value)):
        return False
    memo: dict = {}
    return _in_graph(facts, value, memo, 0)


def _joined(value):
    """The values a value joined over branches or iterations (no node of its own) stands for."""
    if value.node is not None or not value.parents:
        return [value]
    out = []
    for p in value.parents:
        out.extend(_joined(p) if p is not value else [])
    return out or [value]


def _in_graph(facts, v, memo: dict, depth: int) -> bool:
    key = id(v)
    if key in memo:
        return memo[key]
    memo[key] = False  # (a cycle through a loop's carried value adds nothing)
    found = _in_graph_uncached(facts, v, memo, depth)
    memo[key] = found
    return found


def _in_graph_uncached(facts, v, memo: dict, depth: int) -> bool:
    tags = v.tags
    if "left-graph" in tags or "const" in tags or depth > 200 or is_object(v):
        return False
    if "leaf" in tags or BLOCK_INPUT <= tags:
        return True  # (an array given ``attach_grad``; the prediction a Gluon loss is handed)
    node = v.node
    if type(node) is cst.Comparison:
        return False  # (a mask: comparisons carry no graph, RULES.md "Values and gradient paths")
    if type(node) is cst.Call:
        if not v.rec[MXNET].on:
            return False  # made in ``pause()`` or outside ``record()``: nothing recorded
        fact = facts.call_of(node)
        if fact is None:
            return False
        last = (fact.callee or "").rsplit(".", 1)[-1]
        if is_model_call(fact) or made_model(fact.callee_value) or (fact.qname is None and F.MODEL_NAME.search(last)):
            return True  # (``outer.net(x)``: a model's forward pass, by name)
        if is_child_block_call(fact):
            return True  # (``self.conv(x)`` in a Gluon Block's forward, no method of its class: a child block)
        known = (
            (fact.qname is not None and F.framework_of(fact.qname) == MXNET)
            or (fact.qname is None and fact.receiver is not None and not is_object(fact.receiver))  # ``x.as_in_context(ctx)``
            or fact.target is not None or fact.external is not None  # a function of the program
            or made_loss(fact.callee_value)  # ``loss_fn(out, y)``: a function of its arguments
            or plain_builtin(facts, fact)
        )
        if not known:
            scope = fact.func.scope if fact.func is not None else facts.names.root
            if fact.qname is None and fact.receiver is None and not is_object(fact.callee_value or v) \
                    and facts.names.builtin(node.func, scope) is None:
                return True  # a name of the file the flow cannot follow (a global, a parameter): may be a model
            # A function of another module (imported, also by ``*``), a callable object
            # (``Pad()``), an object's method: what it returns is an array of the graph
            # only if made from one.
            return any(_in_graph(facts, p, memo, depth + 1) for p in v.parents)
    elif v.rec[MXNET].off:
        return False
    if any(_in_graph(facts, p, memo, depth + 1) for p in v.parents):
        return True
    # An array made outside every scope may have had ``attach_grad()`` through another
    # name (``for p in params: p.attach_grad()``): recorded on, it is the graph's input.
    return v.rec[MXNET].on and any(_made_outside_scopes(p) for p in v.parents)


def _made_outside_scopes(v) -> bool:
    """An array made where MXNet records nothing only because no ``record()`` is open
    (not inside ``pause()``): whether it is a leaf, ``attach_grad`` elsewhere decides."""
    sw = v.rec[MXNET]
    if not sw.off or (sw.origin is not None and sw.origin.explicit):
        return False
    return not ({"left-graph", "const", "loop-item"} & v.tags or CONTAINER <= v.tags or is_object(v)
                or any(t.startswith("attr:") for t in v.tags))


def _rewritten_each_iteration(facts, m) -> bool:
    """``H[:] = f(H, W)`` in a loop inside ``record()`` with no backward in it, into an
    array kept across iterations: the first write puts ``H`` in the graph (the value
    written is), the next one writes into a graph array."""
    loops = loops_around(facts, m)  # (also those of a helper's call sites)
    if not loops or m.value is None or m.kind not in ("subscript", "augassign", "inplace"):
        return False
    loop = loops[-1]
    # (a backward in a function called in the loop runs in it too)
    if any(loop in loops_around(facts, b) for b in facts.backwards) or made_this_iteration(m.before, loop):
        return False
    return _in_graph(facts, m.value, {}, 0)


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
    if not isinstance(node, cst.AugAssign) or isinstance(node.target, cst.Subscript):
        return None  # (``y[i] = y[i] + v`` writes into ``y`` all the same)
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
