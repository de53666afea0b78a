from typing import Optional

from scopelint.core.frameworks import TORCH
from scopelint.core.queries import decorated_caller, spell, untracked_by
from scopelint.fixkit import code_of, drop_decorator, quiet
from scopelint.rule import NodeFix, Report, Rule


class NoGradDecoratorOnTrainingStep(Rule):
    code = "SL105"
    name = "no-grad-decorator-on-training-step"
    severity = "error"
    frameworks = ("torch",)
    fixable = "unsafe"
    summary = "A function decorated with `@torch.no_grad()`/`@torch.inference_mode()` backpropagates values it computes."
    help = "Remove the decorator from the training step; put `with torch.no_grad():` around only what must not record."
    why = """
        Everything the decorated function computes has no graph, so its backward call
        raises `RuntimeError: element 0 of tensors does not require grad and does not
        have a grad_fn`. The decorator usually came from copying an evaluation function.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        @torch.no_grad()
        def train_step(x, y):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def train_step(x, y):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    """

    def check(self, ctx):
        for b in ctx.facts.backwards:
            if TORCH not in b.frameworks:
                continue
            for value in b.values:
                origin = untracked_by(value, b.frameworks)
                step = decorated_caller(ctx.facts, origin, b.func, b.frameworks) if origin is not None else None
                if step is None:
                    continue
                where = "a function" if step is b.func else f"`{b.func.name}`, called from `{step.name}`, a function"
                yield Report(
                    b.node,
                    f"backward in {where} decorated with `@{spell(step.decorator[0])}`: the values it computes have no graph",
                    no_grad_decorator(ctx, step.decorator[1]),
                )
                break


# --- the fix ----------------------------------------------------------------------------
@quiet
def no_grad_decorator(ctx, decorator) -> Optional[NodeFix]:
    """SL105: drop the ``@torch.no_grad()`` / ``@torch.inference_mode()`` decorator."""
    return drop_decorator(ctx, decorator, f"Remove `@{code_of(decorator.decorator)}` from the training step")


RULE = NoGradDecoratorOnTrainingStep
