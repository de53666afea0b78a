import libcst as cst

from scopelint.core.arguments import argument_for, bound_params
from scopelint.core.queries import feeds_another_backward, graph_path, params_frozen_at
from scopelint.core.roles import (
    is_discriminator_name,
    is_discriminator_optimizer,
    is_generator_name,
    is_model_call,
    is_optimizer_step,
    optimizer_model,
    optimizer_name,
)
from scopelint.fixkit import detach_expression
from scopelint.rule import Report, Rule


class GeneratorOutputNotDetached(Rule):
    code = "SL205"
    name = "generator-output-not-detached"
    severity = "warning"
    fixable = "unsafe"
    frameworks = ("torch", "mxnet")
    summary = "A generator's output reaches the discriminator's loss without `.detach()` (or, in MXNet, outside `pause()`)."
    help = "Feed `fake.detach()` to the discriminator for its own loss; keep `fake` for the generator's loss."
    why = """
        The discriminator's backward then also computes gradients for the generator's
        parameters: wasted work, gradients that pollute the generator's next step
        unless zeroed, and an error (`Trying to backward through the graph a second
        time`) once the generator's own backward reuses the freed graph.
        Not reported: a sample the generator made while its parameters did not require
        grad (`for p in G.parameters(): p.requires_grad = False`, `G.requires_grad_(False)`,
        or a helper that does so to the model it is handed, as stylegan2's
        `requires_grad(generator, False)`): it holds no graph into the generator.
    """
    bad = """
        import torch

        netG, netD = torch.nn.Linear(2, 3), torch.nn.Linear(3, 1)
        optD = torch.optim.SGD(netD.parameters(), lr=0.1)
        fake = netG(torch.randn(4, 2))
        optD.zero_grad()
        errD = netD(fake).mean()
        errD.backward()
        optD.step()
    """
    good = """
        import torch

        netG, netD = torch.nn.Linear(2, 3), torch.nn.Linear(3, 1)
        optD = torch.optim.SGD(netD.parameters(), lr=0.1)
        fake = netG(torch.randn(4, 2))
        optD.zero_grad()
        errD = netD(fake.detach()).mean()
        errD.backward()
        optD.step()
    """

    def check(self, ctx):
        facts = ctx.facts
        reported = set()
        backwards = sorted(facts.backwards, key=lambda b: b.seq)
        for i, b in enumerate(backwards):
            for d_call, site in self._d_calls_on_fake(b, facts):
                if id(d_call.node) in reported or not self._is_discriminator_step(b, backwards[i + 1:], facts):
                    continue
                reported.add(id(d_call.node))
                args = d_call.node.args
                sample = args[0].value if args else None
                at = d_call.node
                if site is not None:  # (a helper's call of the discriminator: detach what this call hands it)
                    at, sample = site.node, argument_for(site.node, bound_params(site.node, site.target), args[0].value.value).value
                # (the discriminator's output also feeds another backward, the generator's
                # own loss computed from the same ``dis_fake``: detaching its input would cut
                # the generator's gradient; the discriminator must be run again on a
                # detached sample, which is no edit of this call)
                # (of a helper's call, ``d_logits(netD, fake)``: where the fix goes, the site)
                fix = None if feeds_another_backward(facts, at, b) else detach_expression(sample, "Feed the discriminator a detached sample")
                yield Report(at, "the generator's output is fed to the discriminator for the discriminator's loss without `.detach()`", fix)

    @staticmethod
    def _d_calls_on_fake(b, facts):
        """Discriminator calls on the path to ``b`` whose input is an undetached generator
        output, each with the call of the local function it is in that hands it that
        input (None: it is in ``b``'s own function)."""
        def stop(v):
            return "left-graph" in v.tags

        def generated(arg) -> bool:
            for w in graph_path(arg, lambda x: stop(x) or (facts.call_of(x.node) is not None and x is not arg and not x.pure)):
                g = facts.call_of(w.node)
                if g is not None and is_model_call(g) and is_generator_name(g.callee or "") and g.state.recording(next(iter(facts.frameworks))).mode.value != "off" \
                        and not params_frozen_at(g):
                    return True
            return False

        for value in b.values:
            path = list(graph_path(value, stop))
            # (``z_out, _ = D(G(z))`` of a model class of this file: each name is read out
            # of the call's result, its holder, the call that runs the discriminator)
            path += [v.parents[-1] for v in list(path) if v.held and v.parents and facts.call_of(v.parents[-1].node) is not None]
            for v in path:
                d = facts.call_of(v.node)
                if d is None or not is_model_call(d) or not is_discriminator_name(d.callee or ""):
                    continue
                if d.func is not None and d.func is not b.func and d.func.name in ("forward", "hybrid_forward") \
                        and d.func.param_names and (d.callee or "").partition(".")[0] == d.func.param_names[0]:
                    continue  # (a layer of a model's own forward, ``self.d(h)``: part of the call that runs it)
                if d.func is b.func or d.func is None:
                    if any(generated(arg) for arg in d.args):
                        yield d, None
                    continue
                # In a local function this step calls (``d_logits(netD, fake)``): the
                # sample is what that call hands it, and the fix goes there. (One it
                # reads otherwise, a closure's free ``fake``, is detached where it is read.)
                arg = d.node.args[0].value if d.node.args else None
                if type(arg) is not cst.Name or arg.value not in d.func.param_names:
                    if arg is not None and any(generated(a) for a in d.args[:1]):
                        yield d, None
                    continue
                for w in path:
                    site = facts.call_of(w.node)
                    if site is None or site.target is not d.func or site.func is not b.func:
                        continue
                    handed = argument_for(site.node, bound_params(site.node, d.func), arg.value)
                    if handed is not None and generated(site.args[list(site.node.args).index(handed)]):
                        yield d, site
                        break

    @staticmethod
    def _is_discriminator_step(b, later, facts) -> bool:
        """The backward belongs to the discriminator: the next optimizer step is the
        discriminator's, or another backward (the generator's) follows in the same body."""
        steps = [c for c in facts.calls_in(b.func) if is_optimizer_step(c) and c.seq > b.seq]
        if steps:
            step = min(steps, key=lambda c: c.seq)
            return is_discriminator_optimizer(optimizer_name(step)) or is_discriminator_name(optimizer_model(step))
        return any(other.func is b.func and other.loops == b.loops for other in later)


RULE = GeneratorOutputNotDetached
