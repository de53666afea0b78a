"""SL210's loop form: one backward per iteration through a forward pass made before the
loop, an optimizer step in the loop (unknown means silence)."""

from __future__ import annotations

import textwrap

import pytest

from fixtures_util import GAN_SETUP
from scopelint.engine import lint_source


def codes(src: str, code: str = "SL210"):
    result = lint_source(textwrap.dedent(src), "t.py")
    assert not result.errors
    return [f.start[0] for f in result.findings if f.code == code]


LOOP = """
    import torch

    net = torch.nn.Linear(5, 5)
    other = torch.nn.Linear(5, 5)
    opt = torch.optim.Adam(net.parameters(), lr=0.001)
    out = net(torch.randn(3, 5, requires_grad=True))
    {loop}
        opt.zero_grad()
        {body}
"""


@pytest.mark.parametrize("loop, body, flagged", [
    ("for i in range(3):", "out.pow(2).mean().backward(retain_graph=True)\n        opt.step()", True),
    ("while True:", "opt.step()\n        out.sum().backward(retain_graph=True)", True),
    # without retain_graph the second backward raises another error (the graph is freed)
    ("for i in range(3):", "out.pow(2).mean().backward()\n        opt.step()", False),
    # the loop runs once
    ("for i in range(1):", "out.pow(2).mean().backward(retain_graph=True)\n        opt.step()", False),
    # the forward is made again in the loop, before the backward or at its end
    ("for i in range(3):", "out = net(torch.randn(3, 5, requires_grad=True))\n        out.sum().backward(retain_graph=True)\n        opt.step()", False),
    ("for i in range(3):", "out.sum().backward(retain_graph=True)\n        opt.step()\n        out = net(torch.randn(3, 5, requires_grad=True))", False),
    # the step is after the loop
    ("for i in range(3):", "out.sum().backward(retain_graph=True)\n    opt.step()", False),
    # the optimizer holds another model
    ("for i in range(3):", "(out.sum() + other(torch.randn(2, 5)).sum()).backward(retain_graph=True)\n        torch.optim.SGD(other.parameters(), lr=0.1).step()", False),
    # the backward goes through a detached copy
    ("for i in range(3):", "out.detach().sum().backward(retain_graph=True)\n        opt.step()", False),
])
def test_sl210_loop_form(loop, body, flagged):
    src = LOOP.replace("{loop}", loop).replace("{body}", body)
    assert bool(codes(src)) == flagged


def test_sl210_loop_form_needs_a_forward_that_saves_weights():
    src = """
        import torch

        net = torch.nn.Linear(5, 5)
        opt = torch.optim.Adam(net.parameters(), lr=0.001)
        out = net(torch.randn(3, 5))  # data in, one layer: the weight is not saved
        for i in range(3):
            opt.zero_grad()
            out.sum().backward(retain_graph=True)
            opt.step()
    """
    assert codes(src) == []


# The two-backward form across a call and through a list of losses (issue 18's
# refactorings: the first backward and the step in a helper, the losses in a list).
SHARED = GAN_SETUP + """{helper}
    for step in range(2):
        fake = G(torch.randn(6, 5))
{body}
"""
HELPER = """
    def update_d(fake):
        scores = D(fake)
        loss_d = scores.mean()
        opt_d.zero_grad()
        loss_d.backward(retain_graph=True)
        opt_d.step()
        return -scores.mean()
"""


@pytest.mark.parametrize("helper, body, flagged", [
    # the helper steps D between its backward and the caller's through the same D(fake)
    (HELPER, "loss_g = update_d(fake)\nopt_g.zero_grad()\nloss_g.backward()\nopt_g.step()", [15]),
    # the caller makes the generator's loss from a forward pass of its own, after the step
    (HELPER, "update_d(fake)\nloss_g = -D(fake).mean()\nopt_g.zero_grad()\nloss_g.backward()\nopt_g.step()", []),
    # the helper's backward without retain_graph: another error, not this one
    (HELPER.replace("retain_graph=True", ""), "loss_g = update_d(fake)\nloss_g.backward()\nopt_g.step()", []),
    # the losses in lists, each backpropagated in a loop over the list
    ("", "scores = D(fake)\nlosses = [scores.mean()]\nfor l in losses:\n    l.backward(retain_graph=True)\n"
         "opt_d.step()\nfor l in [-scores.mean()]:\n    l.backward()\nopt_g.step()", [16]),
    # ... with nothing in the first list, no backward runs before the step
    ("", "scores = D(fake)\nlosses = []\nfor l in losses:\n    l.backward(retain_graph=True)\n"
         "opt_d.step()\nfor l in [-scores.mean()]:\n    l.backward()\nopt_g.step()", []),
])
def test_sl210_across_a_call_and_through_a_list_of_losses(helper, body, flagged):
    src = SHARED.format(helper=textwrap.indent(textwrap.dedent(helper), "    "), body=textwrap.indent(body, "        "))
    assert codes(src) == flagged, textwrap.dedent(src)
