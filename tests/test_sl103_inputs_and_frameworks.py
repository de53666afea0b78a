"""SL103's conditions on what a forward pass runs and is fed (issues 39 and 41; first-contact
round 19, and the review of that change):

- a model known to be MXNet's is not judged by PyTorch's always-recording rule, but a
  PyTorch module built around a Gluon block is PyTorch's (``roles.model_framework`` reads
  constructors through joins, not through a constructor's arguments);
- a forward fed a tensor the code made require grad wants gradients with respect to it
  (``queries.input_requires_grad``), but not through ``.detach()``."""

from __future__ import annotations

import textwrap

import pytest

from scopelint.engine import lint_source

HEAD = """\
import torch
import torch.nn as nn
from mxnet import gluon


class Net(nn.Module):
    def __init__(self, d=8, inner=None):
        super().__init__()
        self.inner = inner
        self.fc = nn.Linear(d, 2)

    def forward(self, x):
        return self.fc(x)

"""


def _sl103(body: str):
    src = HEAD + textwrap.dedent(body)
    return [f.start[0] - HEAD.count("\n") for f in lint_source(src, "t.py").findings if f.code == "SL103"]


@pytest.mark.parametrize("body, found", [
    # a Gluon block, by its constructor and through a parameter its caller fills
    ("""
     def evaluate(data, net):
         return sum(net(x).sum().asscalar() for x in data)
     net = gluon.nn.Dense(2)
     net.initialize()
     evaluate([], net)
     """, []),
    # a PyTorch module that holds a Gluon block: PyTorch's
    ("""
     def evaluate(loader):
         model = Net(8, gluon.nn.Dense(8))
         model.eval()
         return [model(x).sum().item() for x, y in loader]
     """, [5]),
    # the input made to require grad: gradients with respect to it are wanted
    ("""
     def evaluate(loader):
         model = Net(8)
         model.eval()
         total = 0.0
         for x, y in loader:
             x = x.clone()
             x.requires_grad = True
             total += model(x).sum().item()
         return total
     """, []),
    # ... unless it is detached on the way
    ("""
     def evaluate(loader):
         model = Net(8)
         model.eval()
         total = 0.0
         for x, y in loader:
             z = torch.randn(4, 8, requires_grad=True)
             total += model(z.detach()).sum().item()
         return total
     """, [8]),
])
def test_sl103_model_framework_and_input_gradients(body, found):
    assert _sl103(body) == found
