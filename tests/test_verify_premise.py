"""A ``refuted`` verdict stands only on a run where the finding's premise held (issue 47).

Modelled on three of the history corpus's MXNet bugs (osmr/imgclsmob: `x += last_branch`
in a block's `hybrid_forward`, which the projects' training runs inside
`autograd.record()`): the model file's own `_test()` only predicts, so the verifier saw
"no observable difference" and said `refuted` on bugs the project fixed. The child now
records which flagged lines ran while MXNet recorded; a write-while-recording finding
whose line ran only with recording off is `inconclusive`, and says why. The same block
run under `record()` is still confirmed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fixtures_util import verify_text

HAS_MXNET = importlib.util.find_spec("mxnet") is not None
TIMEOUT = 180.0

MODEL_FILE = """\
import mxnet as mx
from mxnet import autograd, gluon


class Root(gluon.HybridBlock):
    def __init__(self, units, **kwargs):
        super(Root, self).__init__(**kwargs)
        with self.name_scope():
            self.dense = gluon.nn.Dense(units, in_units=units)

    def hybrid_forward(self, F, x, last):
        x = self.dense(x)
        x += last
        return F.relu(x)


class Net(gluon.HybridBlock):
    def __init__(self, units=4, **kwargs):
        super(Net, self).__init__(**kwargs)
        with self.name_scope():
            self.root = Root(units)
            self.head = gluon.nn.Dense(2, in_units=units)

    def hybrid_forward(self, F, x):
        return self.head(self.root(x, x))


def get_net(**kwargs):
    return Net(**kwargs)


def _test():
    net = get_net()
    net.initialize(ctx=mx.cpu())
    x = mx.nd.ones((2, 4))
    y = net(x)
    print(y.shape)


if __name__ == "__main__":
    _test()
"""
WRITE = MODEL_FILE.splitlines().index("        x += last") + 1
TRAINS = MODEL_FILE.replace("    y = net(x)\n", "    with autograd.record():\n        y = net(x)\n        loss = y.sum()\n    loss.backward()\n")


def _verify(tmp_path: Path, source: str):
    return [f for f in verify_text(tmp_path, "dla.py", source, TIMEOUT) if f.code == "SL304"]


@pytest.mark.skipif(not HAS_MXNET, reason="mxnet is not installed")
def test_a_write_that_never_ran_while_recording_is_not_refuted(tmp_path):
    [f] = _verify(tmp_path, MODEL_FILE)
    assert f.start[0] == WRITE
    assert f.runtime["verdict"] == "inconclusive", f.runtime["detail"]
    assert "ran only with MXNet's recording off" in f.runtime["detail"]
    assert "no observable difference" in f.runtime["detail"]  # (what the run as written showed)


@pytest.mark.skipif(not HAS_MXNET, reason="mxnet is not installed")
def test_the_same_write_run_while_recording_is_confirmed(tmp_path):
    [f] = _verify(tmp_path, TRAINS)
    assert f.start[0] == WRITE
    assert f.runtime["verdict"] == "confirmed:error", f.runtime["detail"]
