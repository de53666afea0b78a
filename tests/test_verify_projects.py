"""``scopelint verify <folder>`` on a project (issue 23): a flagged function of
``engine.py`` that nothing in its own file calls gets a harness that builds the
project's own model class (``runtime_check/project.py``), found through the program's
imports from the call sites in the other files; local modules import in the sandbox
(a package's file runs as ``python -m pkg.engine``); where the class cannot be built
(``Net(cfg)``) or does not run, the stand-in fills in and the verdict says so.

The projects are in tests/data/verify_projects/<name>/{bad,good}: real, runnable
programs (``python train.py``), each bad file marking its finding with ``# expect:``.
Each verified bad project costs two or four sandboxed runs (a few seconds)."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scopelint.cli import main
from scopelint.runtime_check import synth
from scopelint.runtime_check.project import Asker, Project, layout

DATA = Path(__file__).resolve().parent / "data" / "verify_projects"
HAS = {fw: importlib.util.find_spec(fw) is not None for fw in ("torch", "mxnet")}
TIMEOUT = 120
EXPECT = re.compile(r"#\s*expect:\s*(SL\d+)")


def expected(root: Path):
    out = set()
    for p in sorted(root.rglob("*.py")):
        for row, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            m = EXPECT.search(line)
            if m:
                out.add((p.relative_to(root).as_posix(), row, m.group(1)))
    return out


@pytest.fixture
def copy(tmp_path):
    def make(name, kind):
        dest = tmp_path / name / kind
        shutil.copytree(DATA / name / kind, dest)
        return dest
    return make


def verify(root: Path, monkeypatch, capsys, *args):
    monkeypatch.chdir(root)
    capsys.readouterr()
    rc = main(["verify", "--no-cache", "--preview", "--output-format", "json", "--verify-timeout", str(TIMEOUT), *args, "."])
    out = capsys.readouterr().out
    assert rc in (0, 1), out
    return json.loads(out)


def test_the_projects_are_paired_and_marked():
    names = sorted(p.name for p in DATA.iterdir() if p.is_dir())
    assert len(names) >= 4
    for name in names:
        bad, good = DATA / name / "bad", DATA / name / "good"
        files = lambda root: sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))  # noqa: E731
        assert files(bad) == files(good), name
        assert len(expected(bad)) == 1 and not expected(good), name
        assert "Modelled on" in "".join(p.read_text(encoding="utf-8") for p in bad.rglob("*.py")), name


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.iterdir() if p.is_dir()))
def test_linting_each_project_finds_its_marker_and_nothing_on_the_good_twin(name, monkeypatch, capsys):
    for kind in ("bad", "good"):
        root = DATA / name / kind
        monkeypatch.chdir(root)
        capsys.readouterr()
        main(["check", "--no-cache", "--preview", "--output-format", "json", "."])
        found = {(Path(f["filename"]).resolve().relative_to(root.resolve()).as_posix(), f["location"]["row"], f["code"])
                 for f in json.loads(capsys.readouterr().out)}
        assert found == expected(root), (name, kind)


# --- what the project tells the harness (static: nothing runs) -----------------------------
def test_the_class_passed_at_the_call_site_with_its_literal_arguments():
    root = DATA / "torch_engine_evaluate" / "bad"
    project = Project.of([str(p) for p in root.glob("*.py")])
    choice = project.model_for(str(root / "engine.py"), "evaluate", "model")
    assert choice is not None and choice.usable
    assert (choice.cls, choice.module, choice.args) == ("Net", "models", "num_classes=4")
    assert "passed to `evaluate` at train.py:" in choice.how and choice.where == "models.py:7"
    # the same class for the other helper's parameter
    assert project.model_for(str(root / "engine.py"), "train_one_epoch", "model").cls == "Net"


def test_a_class_needing_an_argument_no_name_fills_is_not_built():
    root = DATA / "torch_net_cfg_fallback" / "bad"
    choice = Project.of([str(p) for p in root.glob("*.py")]).model_for(str(root / "engine.py"), "train_one_epoch", "model")
    assert choice is not None and not choice.usable and "needs `cfg`" in choice.why


def test_type_hint_and_only_model_class(tmp_path):
    (tmp_path / "nets.py").write_text(
        "from torch import nn\n\n"
        "class Block(nn.Module):\n    pass\n\n"
        "class Encoder(Block):\n"
        "    def __init__(self, hidden_size, vocab_size, dropout=0.1):\n        super().__init__()\n\n"
        "class Helper:\n    pass\n")
    (tmp_path / "steps.py").write_text(
        "from nets import Encoder\n\n"
        "def step(encoder: Encoder, loader):\n    for x in loader:\n        encoder(x)\n")
    project = Project.of([str(tmp_path / "nets.py"), str(tmp_path / "steps.py")])
    choice = project.model_for(str(tmp_path / "steps.py"), "step", "encoder")
    assert (choice.cls, choice.args, choice.how) == ("Encoder", "hidden_size=16, vocab_size=20", "its type hint")
    # no hint, no call site: two model classes say nothing ...
    (tmp_path / "steps.py").write_text("def step(model, loader):\n    for x in loader:\n        model(x)\n")
    project = Project.of([str(tmp_path / "nets.py"), str(tmp_path / "steps.py")])
    assert project.model_for(str(tmp_path / "steps.py"), "step", "model") is None
    # ... the only one does
    (tmp_path / "nets.py").write_text("import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self, p=0.5):\n        super().__init__()\n")
    project = Project.of([str(tmp_path / "nets.py"), str(tmp_path / "steps.py")])
    choice = project.model_for(str(tmp_path / "steps.py"), "step", "model")
    assert (choice.cls, choice.args, choice.how) == ("Net", "", "the project's only model class")


def test_a_package_module_runs_as_a_module_from_above_its_package():
    root = DATA / "mxnet_pkg_evaluate" / "bad"
    project = Project.of([str(p) for p in root.rglob("*.py")])
    where = project.layout(str(root / "gluonproj" / "engine.py"))
    assert (Path(where.root), where.relpath, where.module) == (root, "gluonproj/engine.py", "gluonproj.engine")
    plain = layout(str(root / "train.py"))
    assert (Path(plain.root), plain.relpath, plain.module) == (root, "train.py", None)


def test_a_script_of_a_subfolder_importing_the_root_runs_from_the_root():
    root = DATA / "torch_tools_script_root" / "bad"
    project = Project.of([str(p) for p in root.rglob("*.py")])
    where = project.layout(str(root / "tools" / "eval_net.py"))
    assert (Path(where.root), where.relpath, where.module, where.paths, where.cwd) == (root, "tools/eval_net.py", None, (".",), ".")
    # (a script that imports nothing of the project outside its folder runs from its folder)
    assert Path(project.layout(str(root / "models.py")).root) == root


def test_the_harness_builds_the_project_class_then_falls_back_to_the_stand_in():
    root = DATA / "torch_engine_evaluate" / "bad"
    project = Project.of([str(p) for p in root.glob("*.py")])
    source = (root / "engine.py").read_text(encoding="utf-8")
    ask = Asker(lambda: project, str(root / "engine.py"))
    first = synth.plan(source, [21], {"SL207"}, project=ask)
    assert first.attempts == synth.ATTEMPTS + 1
    assert "from models import Net as _Project_Net" in first.prelude and "_probe(model" in first.prelude
    assert "the project's `Net(num_classes=4)`" in first.text(source)
    ast.parse(first.text(source))
    second = synth.plan(source, [21], {"SL207"}, attempt=1, project=ask, failed="RuntimeError: boom")
    assert "_Project_Net" not in second.prelude and "torch.nn.Sequential" in second.prelude
    assert second.notes == ["model `model`: a stand-in (the project's `Net` (models.py:7) failed in attempt 1: RuntimeError: boom)"]
    assert isinstance(synth.plan(source, [21], {"SL207"}, attempt=first.attempts, project=ask), str)


def test_a_batch_unpacked_into_a_pair_is_a_pair():
    src = "def run_step(model, optimizer, batch):\n    inputs, targets = batch\n    model(inputs).sum().backward()\n    optimizer.step()\n"
    h = synth.plan(src, [3], {"SL202"})
    assert "batch = (_X[:_B].clone(), _Y[:_B].clone())" in h.prelude
    assert h.program(src).endswith("_result = run_step(model=model, optimizer=optimizer, batch=batch)\n")
    guarded = h.program(src, module=True)
    assert guarded.startswith(src) and "if __name__ == '__main__':" in guarded and len(guarded.splitlines()) == len(src.splitlines()) + 3


def test_a_class_of_the_flagged_file_itself_is_built_after_it_ran(tmp_path):
    (tmp_path / "solo.py").write_text(
        "import torch\nfrom torch import nn\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(6, 2)\n"
        "    def forward(self, x):\n        return self.fc(x)\n\n"
        "def evaluate(model, loader):\n    with torch.no_grad():\n        for x, y in loader:\n            out = model(x)\n")
    project = Project.of([str(tmp_path / "solo.py")])
    ask = Asker(lambda: project, str(tmp_path / "solo.py"))
    h = synth.plan((tmp_path / "solo.py").read_text(), [14], {"SL207"}, project=ask)
    assert "Net" not in h.prelude and "model = Net()" in h.epilogue and h.epilogue.rstrip().endswith("evaluate(model=model, loader=loader)")


# --- verified: the project's class, then the fallbacks ---------------------------------------
@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_verify_a_torch_project_uses_its_net(copy, monkeypatch, capsys):
    found = verify(copy("torch_engine_evaluate", "bad"), monkeypatch, capsys, "--show-harness")
    (f,) = found
    rt = f["runtime"]
    assert (f["code"], f["location"]["row"]) == ("SL207", 21)
    assert rt["verdict"] == "confirmed:outputs-differ", rt["detail"]
    assert "training mode as written, predict mode with the fix" in rt["detail"]
    assert "the project's `Net(num_classes=4)` (models.py:7; passed to `evaluate` at train.py:19)" in rt["detail"]
    assert "from models import Net as _Project_Net" in rt["harness"] and "model: model" in rt["holes"]
    assert verify(copy("torch_engine_evaluate", "good"), monkeypatch, capsys) == []


@pytest.mark.skipif(not HAS["mxnet"], reason="needs mxnet")
def test_verify_an_mxnet_package_with_relative_imports(copy, monkeypatch, capsys):
    (f,) = verify(copy("mxnet_pkg_evaluate", "bad"), monkeypatch, capsys)
    rt = f["runtime"]
    assert f["code"] == "SL103" and rt["verdict"] == "confirmed:outputs-differ", rt["detail"]
    assert "the project's `Net(num_hidden=32, num_outputs=4)` (models.py:6" in rt["detail"]
    assert "from gluonproj.models import Net as _Project_Net" in rt["harness"]
    # (its package's __init__ imports engine.py too: the call runs only in __main__)
    assert "if __name__ == '__main__':  # (its package may import this module too)\n    _result = evaluate(" in rt["harness"]
    assert verify(copy("mxnet_pkg_evaluate", "good"), monkeypatch, capsys) == []


@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_verify_falls_back_to_the_stand_in_where_the_class_needs_a_config(copy, monkeypatch, capsys):
    (f,) = verify(copy("torch_net_cfg_fallback", "bad"), monkeypatch, capsys)
    rt = f["runtime"]
    assert f["code"] == "SL201" and rt["verdict"] == "confirmed:graph-retained", rt["detail"]
    assert "model `model`: a stand-in (the project's `Net` (models.py:7) needs `cfg`" in rt["detail"]
    assert "_Project_Net" not in rt["harness"] and "torch.nn.Sequential" in rt["harness"]
    assert verify(copy("torch_net_cfg_fallback", "good"), monkeypatch, capsys) == []


@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_verify_falls_back_to_the_stand_in_where_the_class_does_not_run(copy, monkeypatch, capsys):
    (f,) = verify(copy("torch_cnn_input_fallback", "bad"), monkeypatch, capsys)
    rt = f["runtime"]
    assert f["code"] == "SL207" and rt["verdict"] == "confirmed:outputs-differ", rt["detail"]
    assert "(synthesized harness, attempt 2; model `model`: a stand-in (the project's `Net` (models.py:8) failed in attempt 1: " \
           "RuntimeError: the project's Net took none of the inputs tried" in rt["detail"]
    assert verify(copy("torch_cnn_input_fallback", "good"), monkeypatch, capsys) == []


@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_verify_a_tools_script_with_the_project_root_on_its_path(copy, monkeypatch, capsys):
    (f,) = verify(copy("torch_tools_script_root", "bad"), monkeypatch, capsys)
    rt = f["runtime"]
    assert (f["code"], f["filename"].replace(os.sep, "/").endswith("tools/eval_net.py")) == ("SL103", True)
    assert rt["verdict"] == "confirmed:graph-retained", rt["detail"]  # (from its folder alone: No module named 'models')
    assert "harness" not in rt  # a whole program: its __main__ block calls `predict`
    assert verify(copy("torch_tools_script_root", "good"), monkeypatch, capsys) == []


def test_a_method_nobody_calls_gets_its_class_built_only_where_the_module_runs_nothing(tmp_path):
    model = ("import torch\nfrom torch import nn\n\n"
             "class Net(nn.Module):\n"
             "    def __init__(self, hidden_size):\n        super().__init__()\n        self.fc = nn.Linear(5, hidden_size)\n"
             "    def forward(self, x):\n        return self.fc(x)\n"
             "    def infer(self, tokens):\n        return self.fc(tokens)\n")
    (tmp_path / "net.py").write_text(model)
    project = Project.of([str(tmp_path / "net.py")])
    h = synth.plan(model, [11], {"SL103"}, project=Asker(lambda: project, str(tmp_path / "net.py")))
    assert "_self = Net(hidden_size=16)" in h.epilogue and "_result = _self.infer(tokens=tokens)" in h.epilogue
    assert h.filled == ["self: the project's `Net`", "tokens: tensor"]
    # a module that runs something is a whole program, as before
    runs = model + "\nprint(Net(3).infer(torch.ones(1, 5)))\n"
    assert synth.plan(runs, [11], {"SL103"}, project=Asker(lambda: project, str(tmp_path / "net.py"))) is None
    # and without a project (a stdin snippet) nothing changes
    assert synth.plan(model, [11], {"SL103"}) is None


@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_verify_a_method_of_a_model_class_nobody_calls(tmp_path, monkeypatch, capsys):
    root = tmp_path / "speechbrain"
    shutil.copytree(DATA.parent.parent.parent / "fixtures" / "projects" / "speechbrain_infer_called_in_no_grad" / "bad", root)
    (f,) = verify(root, monkeypatch, capsys)
    rt = f["runtime"]
    assert (f["code"], rt["verdict"]) == ("SL103", "confirmed:graph-retained"), rt["detail"]
    assert "`self`: the project's `Tacotron()` (model.py:5; the flagged method's class)" in rt["detail"]


@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_the_projects_run_as_written(copy):
    """The bad projects are real programs: each runs to its end."""
    for name in ("torch_engine_evaluate", "torch_net_cfg_fallback"):
        root = copy(name, "bad")
        proc = subprocess.run([sys.executable, "train.py"], cwd=root, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "epoch 1" in proc.stdout
