"""SL301 and SL302 on the leaves the flow knows: made with ``x.requires_grad = True``,
written through a slice, rebound to a copy (unknown means silence)."""

from __future__ import annotations

import textwrap

import pytest

from scopelint.engine import lint_source


def codes(src: str, code: str):
    result = lint_source(textwrap.dedent(src), "t.py")
    assert not result.errors
    return [f.start[0] for f in result.findings if f.code == code]


@pytest.mark.parametrize("write, flagged", [
    ("c[:] += 1", True),
    ("c[0] = 5.0", True),
    ("c[1:, ...] -= 0.5", True),
    ("c[:2].add_(1)", True),
    ("d = c[1:]\nd += 1", True),
    ("c[[0, 1]] += 1", True),  # stored into c: index_put_ on the leaf
    # a copy (advanced indexing), or an index the flow cannot tell: silent
    ("d = c[[0, 1]]\nd += 1", False),
    ("c[idx].zero_()", False),
    ("c.data[:] += 1", False),
    ("with torch.no_grad():\n    c[:] += 1", False),
])
def test_sl301_write_into_a_slice_of_a_leaf(write, flagged):
    body = textwrap.indent(write, "    ")
    src = "import torch\n\nidx = 2\nif True:\n    c = torch.randn(4, requires_grad=True)\n" + body + "\n"
    assert bool(codes(src, "SL301")) == flagged


def test_sl301_slice_of_data_or_a_list_is_silent():
    src = """
        import torch

        x = torch.randn(4)
        x[:] += 1
        ws = [torch.zeros(2, requires_grad=True)]
        ws[0] = torch.ones(2)
    """
    assert codes(src, "SL301") == []


@pytest.mark.parametrize("setup, rebind, read, flagged", [
    ("x.requires_grad = True", "x = x.to('cpu', copy=True)", "print(x.grad)", True),
    ("x.requires_grad_()", "x = x.double()", "print(x.grad)", True),
    ("x.requires_grad = True", "x = x * 2", "opt = torch.optim.SGD([x], lr=0.1)", True),
    # the gradient read before the rebinding: nobody expects the copy to be a leaf
    ("x.requires_grad = True", "print(x.grad)", "x = x * 2", False),
    # never read as a leaf
    ("x.requires_grad = True", "x = x.double()", "print(x.sum())", False),
    # a fresh leaf again
    ("x.requires_grad = True", "x = x.double().detach().requires_grad_()", "print(x.grad)", False),
    ("x.requires_grad = False", "x = x.double()", "print(x.grad)", False),
    ("x.requires_grad = flag", "x = x.double()", "print(x.grad)", False),
    # not a method chain on the name
    ("x.requires_grad = True", "x = model(x)", "print(x.grad)", False),
])
def test_sl302_leaf_rebound_to_a_copy(setup, rebind, read, flagged):
    src = f"""
        import torch

        flag = True
        model = torch.nn.Linear(3, 3)
        x = torch.randn(2, 3)
        {setup}
        {rebind}
        model(x.float()).sum().backward()
        {read}
    """
    found = codes(src, "SL302")
    assert bool(found) == flagged
    if flagged:
        assert found == [8]


def test_sl302_rebind_from_a_gradient_is_sl301s():
    src = """
        import torch

        w = torch.randn(3)
        w.requires_grad = True
        for step in range(3):
            (w * w).sum().backward()
            w = w - 0.1 * w.grad
    """
    assert codes(src, "SL302") == []
    assert codes(src, "SL301") == [8]


def test_requires_grad_attribute_on_a_model_makes_no_leaf():
    src = """
        import torch

        model = torch.nn.Linear(3, 3)
        model.requires_grad = True
        model = model.double()
        model(torch.randn(2, 3).double()).sum().backward()
        print(model.grad)
    """
    assert codes(src, "SL302") == []


@pytest.mark.parametrize("after, flagged", [
    ("", False),  # one FGSM step: no next `.grad` to miss
    ("x.grad.zero_()", False),
    ("print(x.grad)", True),
])
def test_sl301_rebind_needs_a_later_gradient_read(after, flagged):
    src = f"""
        import torch

        model = torch.nn.Linear(4, 2)
        x = torch.randn(3, 4)
        x.requires_grad = True
        model(x).sum().backward()
        x = x + 0.1 * x.grad.sign()
        {after}
    """
    assert bool(codes(src, "SL301")) == flagged
