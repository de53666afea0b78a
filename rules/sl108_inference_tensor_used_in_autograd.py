from typing import Optional

import libcst as cst

from scopelint.core.arguments import call_arg
from scopelint.core.syntax import literal_bool
from scopelint.core.frameworks import TORCH
from scopelint.core.queries import may_carry_graph
from scopelint.fixkit import code_of, function_of, quiet, scope_of, torch_scope_call
from scopelint.rule import NodeFix, Report, Rule


class InferenceTensorUsedInAutograd(Rule):
    code = "SL108"
    name = "inference-tensor-used-in-autograd"
    severity = "error"
    frameworks = ("torch",)
    fixable = "unsafe"
    summary = "A tensor created inside `torch.inference_mode()` is used in a computation that is backpropagated."
    help = "Create the tensor under `torch.no_grad()` instead of `inference_mode()`, or use `.clone()` of it outside."
    why = """
        Inference tensors cannot be saved for backward. Using one in a recorded
        computation raises `RuntimeError: Inference tensors cannot be saved for
        backward` at that computation, typically when data prepared for evaluation
        is reused for training.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        with torch.inference_mode():
            features = torch.randn(8, 3) * 2
        loss = model(features).pow(2).mean()
        loss.backward()
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)
        with torch.no_grad():
            features = torch.randn(8, 3) * 2
        loss = model(features).pow(2).mean()
        loss.backward()
    """

    def check(self, ctx):
        reported = set()
        for b in ctx.facts.backwards:
            if TORCH not in b.frameworks:
                continue
            for value in b.values:
                for v in value.ancestors():
                    if v.node is None or id(v.node) in reported or v.rec[TORCH].off:
                        continue
                    if not any(p.inference for p in v.parents):
                        continue
                    saves_input = not v.pure or any(may_carry_graph(a, TORCH) for p in v.parents for a in p.ancestors())
                    if saves_input:
                        reported.add(id(v.node))
                        yield Report(v.node, "a tensor created in `torch.inference_mode()` is used in a computation that is backpropagated", inference_tensor(ctx, v))


# --- the fix ----------------------------------------------------------------------------
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


@quiet
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
    sc = scope_of(ctx, function_of(ctx, origin))
    return torch_scope_call(ctx, sc, "torch.no_grad", module, expr, f"Use `{{new}}` instead of `{code_of(expr)}`")


RULE = InferenceTensorUsedInAutograd
