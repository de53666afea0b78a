"""SL210's loop form: one backward per iteration through a forward pass made before the
loop, an optimizer step in the loop (unknown means silence)."""

from __future__ import annotations

import textwrap

import pytest

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
