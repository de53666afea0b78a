from typing import Optional

import libcst as cst

from scopelint.core.facts import FunctionInfo
from scopelint.core.frameworks import TORCH
from scopelint.core.names import dotted
from scopelint.core.queries import optimized, origins
from scopelint.core.roles import is_optimizer_name, is_optimizer_step, optimizer_name
from scopelint.core.syntax import enclosing_if_tests, spells_any, walk
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
        for step in [*facts.calls, *facts.effects]:
            if not is_optimizer_step(step) or not step.grads or step.grads[0] not in ("zeroed", "zeroed-some") or step.grads[2] is not True:
                continue
            some = " on the paths that take it" if step.grads[0] == "zeroed-some" else ""
            zero = step.grads[1]
            if id(zero) in reported or not self._same_optimizer(zero, step, facts):
                continue
            reported.add(id(zero))
            via = next((e.via for e in facts.effects_at(zero) if e.method == "zero_grad"), None)
            inner = next((e.inner for e in facts.effects_at(zero) if e.method == "zero_grad"), None)
            if _skips_a_bad_step(facts.module, inner if inner is not None else zero):
                continue  # (``if not torch.isfinite(norm): opt.zero_grad(set_to_none=True)``: the step is skipped on purpose)
            if via is not None:  # (a helper that zeroes: dropping its call is a fix when zeroing is all it does)
                fix = drop_statement(ctx, zero, f"Do not call `{via.name}()` between backward and step") if _only_zeroes(via) else None
                yield Report(zero, f"`{via.name}()` zeroes the gradients after backward and before `{step.callee}()`: "
                                   f"the step uses zero gradients{some}", fix)
                continue
            fix = drop_statement(ctx, zero, "Do not zero the gradients between backward and step")
            yield Report(zero, f"gradients are zeroed after backward and before `{step.callee}()`: the step uses zero gradients{some}", fix)

    @staticmethod
    def _same_optimizer(zero, step, facts) -> bool:
        zero_fact = facts.call_of(zero)
        target = dotted(zero.func.value) if zero_fact is not None and type(zero.func) is cst.Attribute else None
        zeroes = [e for e in facts.effects_at(zero) if e.method == "zero_grad"]
        if zeroes:  # ``reset(opt)``: the optimizers it zeroes, as this call spells them
            target = zeroes[0].callee[: -len(".zero_grad")] if len(zeroes) == 1 else None
        opt = optimizer_name(step)
        if target is None:
            return False
        if target == opt or target.rsplit(".", 1)[-1] == opt:
            return True
        # zero_grad on a model: only unambiguous when one optimizer steps here, and (where
        # what it holds is known) it holds that model (``clear(D)`` before G's step: no harm).
        stepped = {optimizer_name(c) for c in facts.calls_in(step.func) if is_optimizer_step(c)}
        if len(stepped) != 1 or is_optimizer_name(target):
            return False
        model = zeroes[0].receiver if zeroes else (zero_fact.receiver if zero_fact is not None else None)
        _, models = optimized(facts, step.receiver) if step.receiver is not None else (None, set())
        made = origins(model) if model is not None else set()
        return not (models and made and not made & models)


def _only_zeroes(func) -> bool:
    """The function's body is ``zero_grad()`` calls (a docstring, ``pass`` aside). (Not
    known of another module's function, whose summary is all this run has of it.)"""
    if not isinstance(func, FunctionInfo):
        return False
    for stmt in func.node.body.body:
        if type(stmt) is not cst.SimpleStatementLine:
            return False
        for small in stmt.body:
            if type(small) is cst.Pass or (type(small) is cst.Expr and type(small.value) in (cst.SimpleString, cst.ConcatenatedString)):
                continue
            call = small.value if type(small) is cst.Expr else None
            if type(call) is not cst.Call or type(call.func) is not cst.Attribute or call.func.attr.value != "zero_grad":
                return False
    return True


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


_NONFINITE = frozenset({"isfinite", "isnan", "isinf", "isneginf", "isposinf"})


def _skips_a_bad_step(module, node) -> bool:
    """The zeroing sits under an ``if`` that tests for a non-finite value: it drops a bad
    batch's gradients so that the step skips it (AMP's and clipping's idiom), on purpose."""
    return any(spells_any(test, _NONFINITE) or any(type(n) is cst.SimpleString and n.value.strip("\"'").lower() in ("nan", "inf")
                                                   for n in walk(test))
               for test in enclosing_if_tests(module, node))
