"""The split-invariance harness (``benchmarks/split_invariance.py``, issue 40): a fixture
cut into a package and an entry script keeps its findings, and a project fixture its
findings when concatenated. The whole corpus runs from the script (its table is in
benchmarks/README.md); here the cut itself and a fixed sample, so the script cannot rot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import split_invariance as si  # noqa: E402

FIXTURE = '''import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return x


def step(model, x):
    with torch.no_grad():  # expect: SL104
        return model(x)


model = Net()
with torch.no_grad():
    print(step(model, torch.ones(1)))
'''


def test_the_cut_moves_definitions_with_their_markers_and_reexports_them():
    files = si.split(FIXTURE)
    assert set(files) == {"pkg/core.py", "pkg/__init__.py", "main.py"}
    assert files["pkg/__init__.py"] == "from .core import Net, step\n"
    assert "from pkg import Net, step" in files["main.py"] and "class Net" not in files["main.py"]
    assert si.expected(files) == {("pkg/core.py", 11, "SL104")}
    module = si.split(FIXTURE, "module")
    assert "from .models import Net" in module["pkg/engine.py"] and "class Net" in module["pkg/models.py"]


@pytest.mark.parametrize("text, reason", [
    ("import torch\nmodel = 1\n\n\ndef f():\n    return model\n\n\nf()\n", "reads a variable of the script"),
    ("import torch\n\n\ndef f():\n    return 1\n", "no module-level code"),
    ("import torch\nx = 1\n", "nothing to move"),
])
def test_what_cannot_be_cut_cleanly_is_not_applicable(text, reason):
    with pytest.raises(si.NotApplicable, match=reason):
        si.split(text)


@pytest.mark.parametrize("name", ["SL104/bad_mxnet_pause_in_predict_helper", "SL204/good_model_detaches_its_state",
                                  "SL202/good_amp_zero_grad_helper"])
def test_a_sample_keeps_its_findings_across_the_cut(name):
    files = si.split((ROOT / "fixtures" / f"{name}.py").read_text(encoding="utf-8"))
    found, error = si.lint(files)
    assert not error and found == si.expected(files), (found, si.expected(files))


def test_a_project_fixture_concatenated_keeps_its_findings():
    rows = [r for r in si.concat_check(only="d2l_package_reexport_predict")]
    assert [r["outcome"] for r in rows] == ["same", "same"], rows
