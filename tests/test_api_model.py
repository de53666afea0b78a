"""The API model (``scopelint/core/api_model.json``, read by ``scopelint.core.api``): what
it says of the frameworks is what they do, and it is what the installed frameworks give
when regenerated (``scripts/gen_api_model.py``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from scopelint.core import api

ROOT = Path(__file__).resolve().parent.parent
HAVE_FRAMEWORKS = all(importlib.util.find_spec(m) is not None for m in ("torch", "mxnet", "expecttest"))


def test_the_model_is_loaded_without_the_frameworks():
    # (the static linter never imports torch or mxnet: the model is data)
    code = ("import sys; from scopelint.core import api; assert api.function('torch.gather') is not None; "
            "assert 'torch' not in sys.modules and 'mxnet' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_versions_are_the_pinned_ones():
    assert api.version("torch") == "2.13.0"
    assert api.version("mxnet") == "1.9.1"


@pytest.mark.parametrize("qname, position, keyword, differentiable", [
    ("torch.gather", 0, None, True),             # input
    ("torch.gather", 2, None, False),            # index
    ("torch.gather", None, "index", False),
    ("torch.index_select", 2, None, False),
    ("torch.nn.functional.embedding", 0, None, False),  # the indices
    ("torch.nn.functional.embedding", 1, None, True),   # the weight
    ("torch.where", 0, None, False),             # the condition
    ("torch.where", 1, None, True),
    ("torch.cat", 0, None, True),                # a list of tensors
    ("torch.nn.functional.mse_loss", 0, None, True),
    ("mxnet.nd.pick", None, "data", True),
    ("mxnet.nd.pick", 1, None, False),           # index, by position
    ("mxnet.nd.pick", None, "index", False),
    ("mxnet.nd.dot", 1, None, True),
])
def test_differentiable_arguments(qname, position, keyword, differentiable):
    op = api.function(qname)
    assert op is not None and op.known, qname
    assert op.differentiable(position, keyword) is differentiable


@pytest.mark.parametrize("qname, kind", [
    ("torch.argmax", api.NO_GRAPH),
    ("torch.multinomial", api.NO_GRAPH),         # a sample
    ("torch.zeros_like", api.NO_GRAPH),
    ("torch.nn.functional.one_hot", api.NO_GRAPH),
    ("torch.randn", api.FACTORY),
    ("torch.tensor", api.CONVERSION),
    ("torch.exp", api.GRAPH),
    ("mxnet.nd.argmax", api.NO_GRAPH),           # float indices in MXNet, but no gradient
    ("mxnet.nd.one_hot", api.NO_GRAPH),
    ("mxnet.nd.stop_gradient", api.NO_GRAPH),
    ("mxnet.nd.random.normal", api.FACTORY),
    ("mxnet.nd.array", api.CONVERSION),
    ("mxnet.nd.sample_multinomial", api.NO_GRAPH),  # a sample (with get_prob=True, also its log-probability: below)
])
def test_result_kinds(qname, kind):
    assert api.function(qname).kind == kind


def test_an_option_that_adds_a_differentiable_output():
    op = api.function("mxnet.nd.sample_multinomial")
    assert op.flags == ("get_prob",)
    assert op.at_call({"get_prob"}).result == (api.NO_GRAPH, api.GRAPH)  # (the sample, its log-probability)
    assert op.at_call(set()).result == api.NO_GRAPH


def test_as_tensor_is_no_conversion():
    # ``torch.as_tensor(t)`` hands a tensor back as it is, graph and all: probing shows it
    from scopelint.core.frameworks import is_conversion

    assert not is_conversion("torch.as_tensor")
    assert is_conversion("torch.tensor") and is_conversion("torch.from_numpy")


@pytest.mark.parametrize("name, kind, view", [
    ("t", api.GRAPH, True), ("view", api.GRAPH, True), ("sum", api.GRAPH, False), ("argmax", api.NO_GRAPH, False),
    ("long", api.NO_GRAPH, False), ("eq", api.NO_GRAPH, False), ("item", api.PYTHON, False), ("detach", api.LEFT, False),
])
def test_tensor_methods(name, kind, view):
    op = api.method(name, ("torch",))
    assert op.kind == kind
    assert op.view is view


def test_tensor_method_arguments_after_the_receiver():
    gather = api.method("gather", ("torch",))
    assert gather.differentiable("self", None) or "self" in gather.diff
    assert not gather.differentiable(1, None)  # (dim, index): the index
    scatter_add = api.method("scatter_add", ("torch",))
    assert scatter_add.differentiable(2, None) and not scatter_add.differentiable(1, None)  # src, not index
    pick = api.method("pick", ("mxnet",))
    assert "self" in pick.diff and not pick.differentiable(0, None)


def test_attributes():
    assert api.attribute("T", ("torch",)) == api.VIEW
    assert api.attribute("shape", ("torch",)) == api.PYTHON
    assert api.attribute("grad", ("torch",)) == api.NO_GRAPH


def test_constants():
    for q in ("torch.float32", "torch.long", "torch.device", "torch.pi", "mxnet.cpu", "mxnet.gpu"):
        assert api.is_constant(q), q
    assert not api.is_constant("torch.randn")


def test_layers():
    for q in ("torch.nn.Dropout", "torch.nn.BatchNorm2d", "torch.nn.LSTM", "torch.nn.TransformerDecoderLayer",
              "mxnet.gluon.nn.Dropout", "mxnet.gluon.nn.BatchNorm"):
        assert api.layer(q)["mode"] is True, q
    for q in ("torch.nn.Linear", "torch.nn.Conv2d", "torch.nn.Embedding", "torch.nn.ReLU", "mxnet.gluon.nn.Dense"):
        assert api.mode_free_layer(q), q
    assert api.layer("torch.nn.Sequential")["mode"] is None  # (its layers decide)
    assert set(api.layer("torch.nn.Linear")["params"]) == {"weight", "bias"}
    assert api.layer("torch.nn.CrossEntropyLoss")["loss"]


def test_distributions():
    assert api.distribution("torch.distributions.Categorical") == {"rsample": False}
    assert api.distribution("torch.distributions.Normal") == {"rsample": True}
    assert api.distribution_method("sample") == api.NO_GRAPH
    assert api.distribution_method("log_prob") == api.GRAPH
    # (each class as its own submodule defines it, the spelling of pmoe_ppo.py's import)
    assert api.distribution("torch.distributions.normal.Normal") == {"rsample": True}
    assert api.distribution("torch.distributions.categorical.Categorical") == {"rsample": False}
    assert api.canonical("torch.distributions.kl.kl_divergence") == "torch.distributions.kl_divergence"


@pytest.mark.skipif(not HAVE_FRAMEWORKS, reason="needs torch, mxnet and expecttest (the frameworks extra)")
def test_the_checked_in_model_is_what_the_frameworks_give(tmp_path):
    """Regenerated from the installed torch 2.13 and mxnet 1.9.1, the model is the one
    checked in (a framework upgrade, or a change of the generator, shows here)."""
    out = tmp_path / "model.json"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_api_model.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out.read_text(encoding="utf-8") == (ROOT / "scopelint" / "core" / "api_model.json").read_text(encoding="utf-8")
