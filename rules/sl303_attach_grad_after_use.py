from scopelint.core.frameworks import MXNET
from scopelint.rule import Report, Rule
from scopelint.runtime_check import counterfactuals as cf


class AttachGradAfterUse(Rule):
    code = "SL303"
    name = "attach-grad-after-use"
    severity = "error"
    frameworks = ("mxnet",)
    fixable = "unsafe"
    summary = "`x.attach_grad()` is called after `x` was already used in the recorded computation that is backpropagated."
    help = "Call `x.attach_grad()` before `x` is used inside `autograd.record()`."
    why = """
        `attach_grad()` makes `x` a new leaf. The computation recorded before it used
        the old `x`, which has no gradient buffer, so it is not connected to the new
        leaf: backward raises `Cannot differentiate node because it is not in a
        computational graph` (or leaves `x.grad` at zero).
    """
    bad = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        with autograd.record():
            y = x * x
            x.attach_grad()
        y.backward()
    """
    good = """
        from mxnet import autograd, nd

        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
        y.backward()
    """

    def check(self, ctx):
        facts = ctx.facts
        if MXNET not in facts.frameworks:
            return
        attaches = [m for m in facts.mutations if m.kind == "attach" and m.before is not None]
        for m in attaches:
            for b in facts.backwards:
                if MXNET not in b.frameworks or b.seq < m.seq:
                    continue
                uses = [
                    v.node
                    for value in b.values
                    for v in value.ancestors()
                    if m.before in v.parents and v.state is not None and v.state.mxnet.on and v.node is not None
                ]
                if uses:
                    fix = cf.attach_before_use(ctx, m.node, m.key, uses)
                    yield Report(m.node, f"`{m.key}.attach_grad()` after `{m.key}` was used in the recorded computation: that use is not connected to the new leaf", fix)
                    break


RULE = AttachGradAfterUse
