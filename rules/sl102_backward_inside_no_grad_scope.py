from scopelint.core.queries import explicit_off, recorded_in, spell
from scopelint.rule import Report, Rule
from scopelint.runtime_check import counterfactuals as cf


class BackwardInsideNoGradScope(Rule):
    code = "SL102"
    name = "backward-inside-no-grad-scope"
    severity = "warning"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "Backward is called inside a scope that turns recording off, on a value that was recorded."
    help = "Move the backward call out of the `no_grad()`/`pause()` block: the scope does not change the gradients."
    why = """
        Backward does not look at the recording state: gradients are the same inside
        `torch.no_grad()` or `autograd.pause()` as outside. Authors who put backward
        there usually believe it "pauses gradient updates"; it does not, and the next
        reader is misled. (The runtime verifier usually shows no gradient difference:
        this finding is about a wrong belief, not wrong numbers.)
    """
    bad = """
        from mxnet import autograd, gluon, nd

        net = gluon.nn.Dense(1)
        net.initialize()
        loss_fn = gluon.loss.L2Loss()
        x, y = nd.ones((4, 3)), nd.zeros((4, 1))
        with autograd.pause():
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
    """
    good = """
        from mxnet import autograd, gluon, nd

        net = gluon.nn.Dense(1)
        net.initialize()
        loss_fn = gluon.loss.L2Loss()
        x, y = nd.ones((4, 3)), nd.zeros((4, 1))
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
    """

    def check(self, ctx):
        for b in ctx.facts.backwards:
            off = explicit_off(b.state, b.frameworks)
            if off is None or not all(recorded_in(v, b.frameworks) for v in b.values):
                continue
            where = "a function decorated with" if off.origin.kind == "decorator" else "inside"
            yield Report(
                b.node,
                f"`backward` {where} `{spell(off.origin.api)}` on a recorded value: the scope has no effect on gradients",
                cf.backward_inside_off_scope(ctx, b, off),
            )


RULE = BackwardInsideNoGradScope
