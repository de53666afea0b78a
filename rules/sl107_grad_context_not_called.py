import libcst as cst

from scopelint.rule import NodeFix, Report, Rule


class GradContextNotCalled(Rule):
    code = "SL107"
    name = "grad-context-not-called"
    severity = "error"
    frameworks = ("torch", "mxnet")
    summary = "A recording scope is used in `with` without being called: `with torch.no_grad:`."
    help = "Call it: `with torch.no_grad():`, `with autograd.record():`."
    fixable = "safe"
    why = """
        `torch.no_grad`, `torch.enable_grad`, `torch.inference_mode` and MXNet's
        `autograd.record`, `pause`, `train_mode`, `predict_mode` are a class or a
        function, not a context manager instance. `with torch.no_grad:` raises
        `TypeError: 'type' object does not support the context manager protocol`
        the first time the line runs, which may be deep into a long job.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        with torch.no_grad:
            out = model(torch.ones(2, 3))
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)
        with torch.no_grad():
            out = model(torch.ones(2, 3))
    """
    NEEDS_ARGUMENT = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}

    def check(self, ctx):
        for scope in ctx.facts.scopes:
            if scope.called:
                continue
            expr = scope.item.item
            fix = None
            if scope.api not in self.NEEDS_ARGUMENT:
                fix = NodeFix(expr, cst.Call(func=expr), "safe", "Call the context manager: add `()`")
            yield Report(expr, "context manager used without calling it: raises `TypeError` when the `with` runs", fix)


RULE = GradContextNotCalled
