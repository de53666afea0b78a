"""The verifier's inert stand-ins for missing modules (issue 47): a plotting, logging or
progress-bar import that is not installed here no longer makes every verdict of a real
script ``inconclusive``; a stand-in that reaches the computation keeps it so, and says
why; an import the program guards itself is left to fail as the program expects."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from scopelint.engine import lint_source
from scopelint.runner import FileResult
from scopelint.runtime_check.standins import missing_imports
from scopelint.runtime_check.verify import verify

HAS_TORCH = importlib.util.find_spec("torch") is not None
TIMEOUT = 180.0

# Names no machine has (so the tests do not depend on what happens to be installed).
PLOT, LOG, BAR = "scopelint_absent_plots", "scopelint_absent_tracker", "scopelint_absent_bars"


def test_only_unconditional_absolute_missing_imports_are_stood_in(tmp_path):
    (tmp_path / "datautils.py").write_text("X = 1\n")
    src = textwrap.dedent(f"""
        import os, {PLOT}.pyplot as plt
        import torch, numpy as np
        from {BAR} import bar
        from datautils import X          # the project's own, found in its folder
        from .models import Net          # relative: the project's
        try:
            import {LOG}
        except ImportError:              # the program has its own way without it
            {LOG} = None
        def report():
            import {LOG}_inner
        if True:
            from {PLOT}_cond import style
    """)
    assert missing_imports(src, [str(tmp_path)]) == sorted([BAR, PLOT, f"{PLOT}_cond", f"{LOG}_inner"])
    assert missing_imports("import mxnet\nimport numpy\n", []) == []  # the computation itself: never
    assert missing_imports("def (:\n", []) == []


def _verify_one(tmp_path: Path, source: str):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    lint = lint_source(path.read_text(), str(path))
    assert not lint.errors
    result = FileResult(str(path), str(path), lint.findings, source=path.read_text())
    verify([result], timeout=TIMEOUT)
    return {(f.code, f.runtime["verdict"]): f.runtime["detail"] for f in result.findings}


TRAIN = f"""
    import torch
    import {PLOT}.pyplot as plt
    from {BAR} import bar
    import {LOG}

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    run = {LOG}.init(project="demo")
    losses = []
    for x, y in bar(data, desc="train"):
        opt.zero_grad()
        with torch.no_grad():
            loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        {LOG}.log({{"loss": loss.item()}})
    with plt.style.context("ggplot"):
        plt.plot(losses)
    plt.savefig("loss.png")
"""


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_a_script_with_missing_side_modules_is_confirmed(tmp_path):
    verdicts = _verify_one(tmp_path, TRAIN)
    assert list(verdicts)[0][:1] == ("SL101",)
    (code, verdict), detail = next(iter(verdicts.items()))
    assert verdict == "confirmed:error", detail
    assert f"inert stand-ins for missing modules: {BAR}, {PLOT}, {LOG}" in detail


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_a_stand_in_that_reaches_the_computation_stays_inconclusive(tmp_path):
    source = TRAIN.replace("loss = torch.nn.functional.mse_loss(model(x), y)",
                           f"loss = torch.nn.functional.mse_loss(model(x), y) * {LOG}.config.loss_weight")
    verdicts = _verify_one(tmp_path, source)
    (code, verdict), detail = next(iter(verdicts.items()))
    assert code == "SL101" and verdict == "inconclusive", detail
    assert f"a value of a stand-in for a missing module ({BAR}, {PLOT}, {LOG}) reaches the computation" in detail


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_a_guarded_import_takes_the_programs_own_way(tmp_path):
    source = TRAIN.replace(f"from {BAR} import bar\n", f"try:\n        from {BAR} import bar\n    except ImportError:\n        bar = lambda it, desc: it\n")
    verdicts = _verify_one(tmp_path, source)
    (code, verdict), detail = next(iter(verdicts.items()))
    assert verdict == "confirmed:error", detail
    assert f"inert stand-ins for missing modules: {PLOT}, {LOG}]" in detail  # not the guarded one


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_a_notebook_runs_its_code_cells_as_one_program(tmp_path):
    """Issue 47: the code cells in order, magics and shell lines left out (said so), the
    verdict on the cell finding, its lines given as cell and line."""
    import json

    from scopelint.notebook import load, map_findings

    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["%matplotlib inline\n", "import torch\n", f"import {PLOT}.pyplot as plt\n", "torch.manual_seed(0)\n",
                    "model = torch.nn.Linear(3, 1)\n", "opt = torch.optim.SGD(model.parameters(), lr=0.1)"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["!nvidia-smi\n", "for step in range(3):\n", "    x, y = torch.randn(4, 3), torch.randn(4, 1)\n",
                    "    opt.zero_grad()\n", "    with torch.no_grad():\n",
                    "        loss = torch.nn.functional.mse_loss(model(x), y)\n", "    loss.backward()\n", "    opt.step()"]},
    ]
    text = json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "language": "python"},
                                                     "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5})
    path = tmp_path / "train.ipynb"
    path.write_text(text, encoding="utf-8")
    nb = load(text)
    lint = lint_source(nb.source, str(path))
    map_findings(nb, lint.findings)
    result = FileResult(str(path), str(path), lint.findings, source=text)
    verify([result], timeout=TIMEOUT)
    [finding] = [f for f in result.findings if f.code == "SL101"]
    assert (finding.cell, finding.start[0]) == (3, 7)
    assert finding.runtime["verdict"] == "confirmed:error", finding.runtime["detail"]
    detail = finding.runtime["detail"]
    assert "at cell 3, line 7" in detail
    assert "notebook: its code cells run in order as one program (2 magic or shell lines left out)" in detail
    assert f"inert stand-ins for missing modules: {PLOT}" in detail


HAS_MXNET = importlib.util.find_spec("mxnet") is not None


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS_MXNET, reason="needs mxnet")
def test_a_gluon_dataset_not_on_disk_is_synthetic_and_never_downloaded(tmp_path):
    verdicts = _verify_one(tmp_path, """
        import mxnet as mx
        from mxnet import autograd, gluon
        from mxnet.gluon.data.vision import transforms

        mx.random.seed(0)
        train = gluon.data.vision.FashionMNIST(root="./no-data-here", train=True).transform_first(transforms.ToTensor())
        loader = gluon.data.DataLoader(train, batch_size=64)
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(32, activation="relu"), gluon.nn.Dense(10))
        net.initialize(mx.init.Normal(0.1))
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        for x, y in loader:
            with autograd.record():
                out = net(x)
            loss = loss_fn(out, y)
            loss.backward()
            trainer.step(x.shape[0])
    """)
    (code, verdict), detail = next(iter(verdicts.items()))
    assert code == "SL101" and verdict == "confirmed:error", detail
    assert "synthetic data in place of FashionMNIST (not on disk; never downloaded)" in detail
    assert not (tmp_path / "no-data-here").exists()  # (the program ran in a private copy, and downloaded nothing)


def test_the_projects_other_modules_imports_are_stood_in_too(tmp_path):
    from scopelint.runtime_check.standins import missing_imports_of_project

    (tmp_path / "utils.py").write_text(f"import {LOG}\nimport torch\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "io.py").write_text(f"try:\n    import {BAR}\nexcept ImportError:\n    {BAR} = None\nimport {PLOT}\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("import scopelint_absent_in_a_venv\n")
    assert missing_imports_of_project("import utils\n", str(tmp_path), [str(tmp_path)]) == sorted([LOG, PLOT])


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_classes_derived_from_stand_ins_are_made(tmp_path):
    source = TRAIN.replace("losses = []", f"class Logger({LOG}.Callback, plt.Artist):\n        def __init__(self):\n            super().__init__(verbose=1)\n\n    logger = Logger()\n    logger.on_start()\n    losses = []")
    verdicts = _verify_one(tmp_path, source)
    (code, verdict), detail = next(iter(verdicts.items()))
    assert verdict == "confirmed:error", detail
