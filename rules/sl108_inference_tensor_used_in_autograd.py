from scopelint.core.frameworks import TORCH
from scopelint.core.queries import may_carry_graph
from scopelint.rule import Report, Rule
from scopelint.runtime_check import counterfactuals as cf


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
                        yield Report(v.node, "a tensor created in `torch.inference_mode()` is used in a computation that is backpropagated", cf.inference_tensor(ctx, v))


RULE = InferenceTensorUsedInAutograd
