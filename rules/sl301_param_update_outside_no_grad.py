from scopelint.core.frameworks import TORCH
from scopelint.rule import Report, Rule
from scopelint.runtime_check import counterfactuals as cf


class ParamUpdateOutsideNoGrad(Rule):
    code = "SL301"
    name = "param-update-outside-no-grad"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "A manual update of a parameter that requires grad runs while recording."
    help = "Put the update inside `with torch.no_grad():` (and zero `.grad` after it)."
    why = """
        `w -= lr * w.grad` or `p.add_(...)` on a leaf that requires grad, with
        recording on, raises `RuntimeError: a leaf Variable that requires grad is
        being used in an in-place operation`. Rebinding instead (`w = w - lr * w.grad`)
        runs, but makes `w` a non-leaf: the next `w.grad` is `None` and training
        silently stops.
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
            if m.kind not in ("augassign", "inplace", "rebind") or "leaf" not in m.before.tags:
                continue
            sw = m.state.torch
            # ON, or a function entry nobody fixed in a function that backpropagates.
            known_on = sw.on or (sw.probably_on and id(m.func) in trains)
            if not known_on:
                continue
            fix = cf.wrap_in_no_grad(ctx, m.func, m.node, "Update the parameter under `torch.no_grad()`")
            if m.kind == "rebind":
                yield Report(m.node, f"`{m.key}` is rebound from itself while recording: it becomes a non-leaf and its next `.grad` is None", fix)
            else:
                yield Report(m.node, "in-place update of a parameter that requires grad while recording: raises at run time", fix)


RULE = ParamUpdateOutsideNoGrad
