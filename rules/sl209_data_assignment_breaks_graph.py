from typing import Optional

import libcst as cst

from scopelint.core.frameworks import TORCH
from scopelint.core.names import dotted
from scopelint.core.queries import grad_read, names_bound_to, optimized, origins
from scopelint.core.roles import is_model_call, made_model
from scopelint.fixkit import module_fix, quiet, statement_of
from scopelint.rule import NodeFix, Report, Rule


class DataAssignmentBreaksGraph(Rule):
    code = "SL209"
    name = "data-assignment-breaks-graph"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "A `.data` write stores a value computed from a tensor that requires grad: that tensor gets no gradient."
    help = "Use the computed tensor itself in the forward pass (e.g. `F.linear(x, w)`, `torch.nn.utils.parametrize`) instead of writing it into `.data`."
    why = """
        `p.data = expr`, `p.data.copy_(expr)` and `p.data[...] = expr` are invisible
        to autograd: the forward pass then reads `p`, a leaf, and the graph stops
        there. When `expr` was computed from another tensor that requires grad -- a
        hypernetwork's output, a learnable mask, a tied weight -- and that tensor is
        trained (given to an optimizer, or its `.grad` read), it never gets a
        gradient from this use: `.grad` stays `None` and the optimizer does not move
        it. Nothing raises.
    """
    bad = """
        import torch
        from torch import nn

        hyper, target = nn.Linear(2, 12), nn.Linear(3, 4)
        opt = torch.optim.SGD(hyper.parameters(), lr=0.1)
        z = torch.randn(2)
        for step in range(3):
            target.weight.data = hyper(z).view(4, 3)
            loss = target(torch.randn(8, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    good = """
        import torch
        from torch import nn
        import torch.nn.functional as F

        hyper, target = nn.Linear(2, 12), nn.Linear(3, 4)
        opt = torch.optim.SGD(hyper.parameters(), lr=0.1)
        z = torch.randn(2)
        for step in range(3):
            weight = hyper(z).view(4, 3)
            loss = F.linear(torch.randn(8, 3), weight, target.bias).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        trains = {id(b.func) for b in facts.backwards}
        held = None  # (tensors, models) every optimizer of the file holds, once
        for m in facts.mutations:
            base = self._written_tensor(m)
            if base is None or m.value is None or not _records(m.state.torch, id(m.func) in trains):
                continue
            if held is None:
                held = optimized(facts)
            if not _backprop_follows(facts, m):
                continue
            source = self._trained_source(facts, m, base, held, id(m.func) in trains)
            if source is None:
                continue
            fix = data_write_fix(ctx, m)
            yield Report(m.node, f"`{m.key}` is written from {source}, which requires grad: autograd does not see a `.data` write, so it gets no gradient from here", fix)

    @staticmethod
    def _written_tensor(m) -> Optional[str]:
        """``p`` for ``p.data = v``, ``p.data.copy_(v)``, ``p.data[...] = v``."""
        key = m.key or ""
        if not key.endswith(".data"):
            return None
        if m.kind == "inplace" and not (type(m.node) is cst.Call and m.node.func.attr.value == "copy_"):
            return None
        if m.kind not in ("data", "inplace", "subscript"):
            return None
        return key[: -len(".data")]

    @staticmethod
    def _trained_source(facts, m, base: str, held, trains: bool) -> Optional[str]:
        """The tensor that requires grad ``m`` writes from, whose gradient is used, in words."""
        tensors, models = held

        def stop(v):
            return "left-graph" in v.tags or "const" in v.tags or v.rec[TORCH].off

        for v in m.value.ancestors(stop):
            if stop(v) or v.node is None:
                continue
            if "leaf" in v.tags and "param" not in v.tags:
                names = names_bound_to(facts, v.node)
                if base in names or id(v.node) in origins(m.before):
                    continue  # its own value
                if id(v.node) in tensors or (facts.backwards and grad_read(facts, names)):
                    return f"`{sorted(names)[0]}`" if names else "a tensor that requires grad"
                continue
            call = facts.call_of(v.node) if type(v.node) is cst.Call else None
            if call is not None and is_model_call(call) and made_model(call.callee_value):
                if not _records(call.state.torch, trains):
                    continue
                if _trained_model(facts, call.callee_value, call.callee, models):
                    return f"the output of `{call.callee}(...)`"
                continue
            if type(v.node) is cst.Attribute and v.parents and _parameter_name(v.node.attr.value):
                owner = v.parents[0]
                spelled = dotted(v.node)
                if spelled == base or not made_model(owner) or not _in_training_step(facts, m):
                    continue  # (a parameter copied once, at setup, is initialisation or tying)
                if _trained_model(facts, owner, dotted(v.node.value), models):
                    return f"`{spelled}`"
        return None


def _backprop_follows(facts, m) -> bool:
    """Some backward may run after the write: later in its function, in a loop around
    it, or in another function."""
    loops = set(m.loops)
    return any(b.func is not m.func or b.seq > m.seq or loops & set(b.loops) for b in facts.backwards)


def _in_training_step(facts, m) -> bool:
    """The write is part of a training step: in a loop that backpropagates, or in a
    function that backpropagates after it."""
    loops = set(m.loops)
    return any(b.func is m.func and (loops & set(b.loops) or (m.func is not None and b.seq > m.seq)) for b in facts.backwards)


def _records(sw, trains: bool) -> bool:
    """Recording is on, or (a function entry nobody fixed) the function backpropagates."""
    return sw.on or (sw.probably_on and trains)


def _parameter_name(attr: str) -> bool:
    return "weight" in attr or "bias" in attr


def _trained_model(facts, model, spelled: Optional[str], models: set) -> bool:
    """The model's parameters are given to an optimizer, or (where the file backpropagates)
    a gradient of them is read."""
    if origins(model) & models:
        return True
    if not facts.backwards:  # (no gradient computed here to read)
        return False
    names = set()
    if spelled:
        names.add(spelled)
    if model is not None and model.node is not None:
        names |= names_bound_to(facts, model.node)
    return grad_read(facts, names, prefix=True)


# --- the fix ----------------------------------------------------------------------------
_COPY = "_sl209_value"


def target_of(m) -> Optional[cst.BaseExpression]:
    """The ``p`` of ``p.data = e``, ``p.data.copy_(e)``, ``p.data[i] = e``."""
    if m.kind == "data":
        return m.node.targets[0].target.value
    if m.kind == "inplace":
        return m.node.func.value.value
    if m.kind == "subscript":
        return m.node.targets[0].target.value.value
    return None


@quiet
def data_write_fix(ctx, m) -> Optional[NodeFix]:
    """Store the computed tensor itself, so the graph reaches what it was computed from:
    ``w.data = e`` -> ``w = e``; ``m.weight.data = e`` (or ``.data.copy_(e)``) -> ``del
    m.weight`` then ``m.weight = e`` (a module's parameter gives way to a plain tensor
    attribute, which a forward pass reads as it read the parameter); ``p.data[i] = e``
    writes ``e`` into a copy of ``p`` (a write autograd records) and stores the copy so."""
    module = ctx.facts.module
    stmt = statement_of(module, m.node)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    if type(target_of(m)) not in (cst.Name, cst.Attribute):
        return None
    target = target_of(m)
    copy = cst.Name(_COPY)
    if m.kind == "subscript":  # ``p.data[i] = e``: write into a copy, which records, and store it
        sub = m.node.targets[0].target
        new = [
            cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(copy)], cst.parse_expression(f"{module.code_for_node(target)}.detach().clone()"))]),
            cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(sub.with_changes(value=copy))], m.node.value)]),
        ]
        value = copy
    elif m.kind == "data":
        new, value = [], m.node.value
    elif m.kind == "inplace" and type(stmt.body[0]) is cst.Expr and stmt.body[0].value is m.node and len(m.node.args) == 1:
        new, value = [], m.node.args[0].value
    else:
        return None
    if type(target) is cst.Attribute:
        if value is not copy:  # (computed before the parameter is gone: ``e`` may read it)
            new.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(copy)], value)]))
        store = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], copy)])
        new += [cst.SimpleStatementLine([cst.Del(target)]), store]
    else:
        new.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)]))
    new[0] = new[0].with_changes(leading_lines=stmt.leading_lines)
    new[-1] = new[-1].with_changes(trailing_whitespace=stmt.trailing_whitespace)
    return module_fix(module, {id(stmt): cst.FlattenSentinel(new)}, "Store the computed tensor itself instead of writing `.data`")


RULE = DataAssignmentBreaksGraph
