from typing import Optional

import libcst as cst

from scopelint.core.frameworks import TORCH
from scopelint.core.names import dotted
from scopelint.core.roles import is_optimizer_name, is_optimizer_step, optimizer_name
from scopelint.fixkit import module_fix, quiet, statement_of
from scopelint.rule import NodeFix, Report, Rule


class ZeroGradBetweenBackwardAndStep(Rule):
    code = "SL203"
    name = "zero-grad-between-backward-and-step"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "`zero_grad()` runs after backward and before `step()`: the step uses zeroed gradients."
    help = "Move `zero_grad()` before the forward pass (or after `step()`)."
    why = """
        The gradients computed by `loss.backward()` are wiped by `opt.zero_grad()`
        before `opt.step()` reads them, so parameters do not move (or move by momentum
        or weight decay only). Training runs, the loss stays flat, nothing raises.
        Gradient clipping between backward and step is fine.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(10):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            opt.zero_grad()
            opt.step()
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(10):
            opt.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            opt.step()
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        reported = set()
        for step in facts.calls:
            if not is_optimizer_step(step) or not step.grads or step.grads[0] != "zeroed" or not step.grads[2]:
                continue
            zero = step.grads[1]
            if id(zero) in reported or not self._same_optimizer(zero, step, facts):
                continue
            reported.add(id(zero))
            fix = drop_statement(ctx, zero, "Do not zero the gradients between backward and step")
            yield Report(zero, f"gradients are zeroed after backward and before `{step.callee}()`: the step uses zero gradients", fix)

    @staticmethod
    def _same_optimizer(zero, step, facts) -> bool:
        zero_fact = facts.call_of(zero)
        target = dotted(zero.func.value) if zero_fact is not None and hasattr(zero.func, "value") else None
        opt = optimizer_name(step)
        if target is None:
            return False
        if target == opt or target.rsplit(".", 1)[-1] == opt:
            return True
        # zero_grad on a model: only unambiguous when one optimizer steps here.
        stepped = {optimizer_name(c) for c in facts.calls_in(step.func) if is_optimizer_step(c)}
        return len(stepped) == 1 and not is_optimizer_name(target)


# --- the fix ----------------------------------------------------------------------------
@quiet
def drop_statement(ctx, node: cst.CSTNode, message: str) -> Optional[NodeFix]:
    """The statement holding ``node`` becomes ``pass``."""
    module = ctx.facts.module
    stmt = statement_of(module, node)
    if stmt is None:
        return None
    return module_fix(module, {id(stmt): cst.SimpleStatementLine([cst.Pass()], leading_lines=stmt.leading_lines)}, message)


RULE = ZeroGradBetweenBackwardAndStep
