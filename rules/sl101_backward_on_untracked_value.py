from scopelint.core.frameworks import TORCH
from scopelint.core.queries import describe_origin, untracked_by
from scopelint.rule import Report, Rule
from scopelint.runtime_check import counterfactuals as cf


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
                    continue
                if origin.kind == "decorator" and TORCH in b.frameworks:
                    continue  # SL105 reports this call
                yield Report(b.node, f"`backward` on a value computed {describe_origin(origin)}: it has no graph", cf.backward_on_untracked(ctx, b, value, origin))
                break


RULE = BackwardOnUntrackedValue
