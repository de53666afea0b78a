from typing import Optional

import libcst as cst

from scopelint.core import frameworks as F, roles
from scopelint.core.frameworks import MXNET
from scopelint.core.names import dotted
from scopelint.core.queries import sets_grad_req_add, zeroes_grads
from scopelint.core.roles import is_optimizer_step
from scopelint.fixkit import code_of, function_of, insert_call, quiet
from scopelint.rule import NodeFix, Report, Rule


class MissingZeroGrad(Rule):
    code = "SL202"
    name = "missing-zero-grad"
    severity = "warning"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "A training loop calls backward and `step()` but never zeroes the gradients."
    help = "Call `optimizer.zero_grad()` (or set `p.grad = None`) once per step, before `backward()`."
    why = """
        Backward adds into `.grad`. Without `zero_grad()` in the loop every step uses
        the sum of all gradients so far: the effective learning rate grows and
        training diverges or silently degrades. Deliberate gradient accumulation
        (`if (i + 1) % k == 0: opt.step(); opt.zero_grad()`) zeroes in the loop and
        is not flagged. MXNet overwrites gradients unless `grad_req='add'`, so there
        only `grad_req='add'` without any `zero_grad()` is flagged.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(10):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
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
        zeroing = [c for c in facts.calls if zeroes_grads(c)] + [m for m in facts.mutations if m.kind == "grad-none"]
        zero_loops = set()
        for z in zeroing:
            zero_loops.update(id(loop) for loop in z.loops)
        # Local functions that zero gradients count where they are called.
        zero_funcs = {id(z.func) for z in zeroing if z.func is not None}
        for c in facts.calls:
            if c.target is not None and id(c.target) in zero_funcs:
                zero_loops.update(id(loop) for loop in c.loops)
        mxnet_accumulates = F.MXNET in facts.frameworks and any(sets_grad_req_add(c) for c in facts.calls) and not zeroing
        steps = [c for c in facts.calls if is_optimizer_step(c) and c.loops]
        reported = set()
        for b in facts.backwards:
            fws = b.frameworks & facts.frameworks
            if not b.loops or len(fws) != 1 or (F.MXNET in fws and not mxnet_accumulates):
                continue
            if any(id(loop) in zero_loops for loop in b.loops):
                continue
            loop = next((l for l in b.loops if any(l in s.loops for s in steps)), None)
            if loop is not None and id(loop) not in reported:
                reported.add(id(loop))
                in_loop = [s for s in steps if loop in s.loops]
                step = next((s for s in in_loop if s.func is b.func and s.seq > b.seq), in_loop[0])
                fix = zero_grad_before_backward(ctx, b.node, step, next(iter(fws)))
                yield Report(b.node, "backward and optimizer step in a loop that never zeroes the gradients: they accumulate across steps", fix)


# --- the fix ----------------------------------------------------------------------------
def _zero_grad_target(ctx, step, fw: str) -> Optional[str]:
    """What to call ``zero_grad()`` on for the optimizer ``step`` belongs to: the optimizer
    (``opt``, ``self.optimizer``; ``scaler.step(opt)`` -> ``opt``) or, for a Gluon
    ``Trainer`` (it has no ``zero_grad`` in MXNet 1.x), the parameters it was made with
    (``net.collect_params()``), when they are spelled the same where the step is."""
    callee = step.callee or ""
    if not callee.endswith(".step"):
        return None
    receiver = callee[: -len(".step")]
    ctor = roles.constructor(step.receiver)
    if roles.is_scaler_step(step):
        args = step.node.args
        return dotted(args[0].value) if args and args[0].keyword is None else None
    if fw == MXNET:
        made = getattr(step.receiver, "node", None)
        if ctor != "mxnet.gluon.Trainer" or not isinstance(made, cst.Call) or not made.args or made.args[0].keyword is not None:
            return None
        params = made.args[0].value
        if function_of(ctx, made) is not step.func and not (dotted(params) or code_of(params)).startswith("self."):
            return None
        # ``net.collect_params()`` / ``params``: an expression that is cheap and safe to re-evaluate.
        if isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute) and params.func.attr.value == "collect_params" \
                and dotted(params.func.value) is not None and not params.args:
            return code_of(params)
        return dotted(params)
    return receiver or None


@quiet
def zero_grad_before_backward(ctx, backward_node: cst.CSTNode, step, fw: str) -> Optional[NodeFix]:
    """SL202: ``<optimizer>.zero_grad()`` just before the backward call."""
    target = _zero_grad_target(ctx, step, fw)
    if not target:
        return None
    return insert_call(ctx, backward_node, target, "zero_grad", False, f"Zero the gradients before backward: `{target}.zero_grad()`")


RULE = MissingZeroGrad
