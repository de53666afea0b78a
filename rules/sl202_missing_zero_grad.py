from typing import Optional

import libcst as cst

from scopelint.core import frameworks as F, roles
from scopelint.core.frameworks import MXNET
from scopelint.core.names import dotted
from scopelint.core.facts import CallFact
from scopelint.core.queries import grad_req_add, loops_around, zeroes_grads
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
        only `grad_req='add'` (as an argument, `setattr` or `p.grad_req = 'add'`)
        without any `zero_grad()` is flagged. The innermost loop that repeats the
        backward and the step must zero (a training step in a helper counts in the loop
        that calls it), and each stepping optimizer must be zeroed: a GAN loop that
        zeroes `opt_G` but never `opt_D` is flagged at `opt_D.step()`.
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
        # (with a helper's ``zero_grad()`` also as its call spells the optimizer: ``Facts.effects``)
        zeroing = [c for c in [*facts.calls, *facts.effects] if zeroes_grads(c)] + [m for m in facts.mutations if m.kind == "grad-none"]
        # A fact's loops include those around the calls of its function: a training step
        # in a helper, called once per batch, zeroes (or not) in the caller's loop.
        around = {id(x): loops_around(facts, x) for x in zeroing}
        zero_loops = {id(loop) for z in zeroing for loop in around[id(z)]}
        mxnet_accumulates = F.MXNET in facts.frameworks and not zeroing and grad_req_add(facts)
        steps = [s for s in facts.calls if is_optimizer_step(s)]
        step_loops = {id(s): loops_around(facts, s) for s in steps}
        steps = [s for s in steps if step_loops[id(s)]]
        # (by loop, once: asked per backward call and per loop, a scan of every step was
        # quadratic in a file of many training loops; issue 44)
        steps_in: dict = {}
        for s in steps:
            for l in {id(l) for l in step_loops[id(s)]}:
                steps_in.setdefault(l, []).append(s)
        reported = set()
        for b in facts.backwards:
            fws = b.frameworks & facts.frameworks
            b_loops = loops_around(facts, b)
            if not b_loops or len(fws) != 1 or (F.MXNET in fws and not mxnet_accumulates):
                continue
            # The innermost loop that repeats this backward and a step must zero: once
            # per epoch around a loop of steps is not enough.
            loop = next((l for l in reversed(b_loops) if id(l) in steps_in), None)
            if loop is None:
                continue
            if id(loop) in zero_loops or any(id(inner) in zero_loops for inner in b_loops[b_loops.index(loop) + 1:]):
                yield from self._per_optimizer(ctx, b, b_loops, zeroing, around, steps, step_loops, reported, next(iter(fws)))
                continue
            if id(loop) not in reported:
                reported.add(id(loop))
                in_loop = steps_in[id(loop)]
                step = next((s for s in in_loop if s.func is b.func and s.seq > b.seq), in_loop[0])
                fix = zero_grad_before_backward(ctx, b.node, step, next(iter(fws)))
                yield Report(b.node, "backward and optimizer step in a loop that never zeroes the gradients: they accumulate across steps", fix)

    def _per_optimizer(self, ctx, b, b_loops, zeroing, around, steps, step_loops, reported, fw):
        """Each stepping optimizer must be zeroed: a GAN loop that zeroes ``opt_G`` but
        never ``opt_D`` while both step. Only where every zeroing in the loop is an
        optimizer's ``zero_grad()`` (a model's, ``p.grad = None`` or a helper zero
        parameters nobody here can map to an optimizer)."""
        shared = [z for z in zeroing if set(around[id(z)]) & set(b_loops)]
        if not shared or not all(isinstance(z, CallFact) and z.method == "zero_grad" and _is_optimizer(z) for z in shared):
            return
        zeroed = {_last(roles.optimizer_name(z)) for z in shared}
        for s in steps:
            name = _last(roles.optimizer_name(s))
            if not name or name in zeroed or id(s) in reported or not (set(step_loops[id(s)]) & set(b_loops)):
                continue
            if s.func is not b.func or s.seq < b.seq:
                continue  # (the step this backward feeds: after it, in its function)
            reported.add(id(s))
            fix = zero_grad_before_backward(ctx, b.node, s, fw)
            others = ", ".join(f"`{n}`" for n in sorted(zeroed))
            yield Report(s.node, f"`{name}` steps in a loop that zeroes only {others}: `{name}`'s gradients accumulate across steps", fix)


def _last(name: str) -> str:
    """``self.opt_d`` and ``opt_d`` spell one optimizer (``scaler.step(self.opt)``)."""
    return name.rsplit(".", 1)[-1]


def _is_optimizer(call) -> bool:
    """``opt_g.zero_grad()`` on an optimizer (by what made it, else by its name)."""
    ctor = roles.constructor(call.receiver)
    if ctor:
        return F.is_optimizer_constructor(ctor)
    return roles.is_optimizer_name(call.callee[: -len(".zero_grad")] if call.callee else "")


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
