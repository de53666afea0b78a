"""The project corpus (fixtures/projects/<name>/{bad,good}): multi-file programs whose bug
crosses a file boundary (issue 20). For every project: linting its folder gives exactly the
`# expect:` markers of all its files and nothing else; naming one file alone gives that
file's findings; --jobs 1 == --jobs 2; the cache (cold, then warm) == --no-cache; the good
twin is silent. Changing a callee changes its caller's findings on the next cached run.
A fixed sample (RUN_SAMPLE) is executed with Python; `scripts/run_projects.py` runs all."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures_util import EXPECT, FIXTURE_ENV, FIXTURES
from scopelint.cli import main

PROJECTS = FIXTURES / "projects"
NAMES = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())
# Executed here (two torch, two mxnet layouts); the rest by scripts/run_projects.py.
RUN_SAMPLE = ["tv_classification_evaluate", "detectron2_engine_pyproject", "mxnet_engine_requirements",
              "gluon_pkg_relative_pause"]


def py_files(root: Path):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if ".scopelint_cache" not in p.parts)


def expected(root: Path):
    out = set()
    for rel in py_files(root):
        for row, line in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), start=1):
            m = EXPECT.search(line)
            if m:
                out.update((rel, row, code.strip()) for code in m.group(1).split(","))
    return out


def entry(root: Path) -> str:
    (found,) = [rel for rel in py_files(root) if (root / rel).read_text(encoding="utf-8").startswith("# entry")]
    return found


def lint(root: Path, monkeypatch, capsys, *args, paths=(".",)):
    monkeypatch.chdir(root)
    capsys.readouterr()
    code = main(["check", "--preview", "--output-format", "json", *args, *paths])  # (every rule: preview ones too)
    out = capsys.readouterr().out
    assert code in (0, 1), out
    found = {(Path(f["filename"]).resolve().relative_to(root.resolve()).as_posix(), f["location"]["row"], f["code"])
             for f in json.loads(out)}
    return found, json.loads(out)


@pytest.fixture
def copy(tmp_path):
    def make(name, kind):
        dest = tmp_path / name / kind
        shutil.copytree(PROJECTS / name / kind, dest)
        return dest
    return make


def test_the_corpus_is_big_enough_and_paired():
    assert len(NAMES) >= 16
    frameworks = {"torch": 0, "mxnet": 0}
    for name in NAMES:
        bad, good = PROJECTS / name / "bad", PROJECTS / name / "good"
        assert py_files(bad) == py_files(good), name
        assert expected(bad) and not expected(good), name
        text = "".join((bad / f).read_text(encoding="utf-8") for f in py_files(bad))
        assert len(py_files(bad)) >= 2 and "Modelled on" in (bad / entry(bad)).read_text(encoding="utf-8")
        frameworks["mxnet" if "import mxnet" in text or "from mxnet" in text else "torch"] += 1
        # the bug crosses a file: a finding's file is not the only file the bug needs
        assert len({f for f, _, _ in expected(bad)}) == 1
    assert frameworks["torch"] >= 10 and frameworks["mxnet"] >= 5, frameworks


@pytest.mark.parametrize("name", NAMES)
def test_project_findings_are_the_markers_everywhere(name, copy, monkeypatch, capsys):
    bad = copy(name, "bad")
    want = expected(bad)
    folder, items = lint(bad, monkeypatch, capsys, "--no-cache")
    assert folder == want
    assert all(i["message"] for i in items)
    for rel in py_files(bad):  # one file named alone: the rest of the project is its context
        alone, _ = lint(bad, monkeypatch, capsys, "--no-cache", paths=(rel,))
        assert alone == {f for f in want if f[0] == rel}, rel
    assert lint(bad, monkeypatch, capsys, "--no-cache", "--jobs", "2")[0] == want
    assert lint(bad, monkeypatch, capsys, "--jobs", "1")[0] == want  # cold cache
    assert (bad / ".scopelint_cache").is_dir()
    assert lint(bad, monkeypatch, capsys, "--jobs", "2")[0] == want  # warm
    good = copy(name, "good")
    assert lint(good, monkeypatch, capsys, "--no-cache")[0] == set()
    assert lint(good, monkeypatch, capsys)[0] == set()


def test_messages_name_the_other_file(copy, monkeypatch, capsys):
    bad = copy("tv_classification_evaluate", "bad")
    (_, items) = lint(bad, monkeypatch, capsys, "--no-cache")
    assert "`evaluate` (utils.py:4)" in items[0]["message"]


@pytest.mark.parametrize("name, callee, old, new", [
    ("tv_classification_evaluate", "utils.py", "    model.eval()\n", ""),  # evaluate() no longer leaves eval mode
    ("mxnet_engine_requirements", "utils.py", "autograd.pause()", "autograd.record()"),
    ("d2l_mxnet_package_asnumpy", "d2l_mx/helpers.py", "nd.array(np.tanh(a.asnumpy()))", "nd.tanh(a)"),
    # the imported class loses its Dropout: eval() changes nothing in it any more
    ("examples_super_resolution_model_py", "model.py", "nn.Dropout(0.3)", "nn.Identity()"),
])
def test_changing_the_callee_changes_the_callers_cached_findings(name, callee, old, new, copy, monkeypatch, capsys):
    bad = copy(name, "bad")
    want = expected(bad)
    assert want and all(f[0] != callee for f in want)  # the finding is the caller's
    assert lint(bad, monkeypatch, capsys)[0] == want  # cold
    assert lint(bad, monkeypatch, capsys)[0] == want  # warm
    text = (bad / callee).read_text(encoding="utf-8")
    assert text.count(old) == 1
    (bad / callee).write_text(text.replace(old, new), encoding="utf-8")
    after = lint(bad, monkeypatch, capsys)[0]
    assert after == lint(bad, monkeypatch, capsys, "--no-cache")[0] == set()


def test_a_callee_that_gains_a_mode_dependent_layer_changes_the_callers_cached_findings(copy, monkeypatch, capsys):
    """The other direction: the caller's cached silence (its model's class was mode-free)
    does not outlive the class file's change."""
    good = copy("examples_super_resolution_model_py", "good")
    want = {("main.py", row, code) for _, row, code in expected(PROJECTS / "examples_super_resolution_model_py" / "bad")}
    for paths in ((".",), ("main.py",)):
        for jobs in ("1", "2"):
            assert lint(good, monkeypatch, capsys, "--jobs", jobs, paths=paths)[0] == set()  # cold, then warm
    text = (good / "model.py").read_text(encoding="utf-8")
    (good / "model.py").write_text(text.replace("nn.Identity()", "nn.BatchNorm2d(8)"), encoding="utf-8")
    for paths in ((".",), ("main.py",)):
        for jobs in ("1", "2"):
            assert lint(good, monkeypatch, capsys, "--jobs", jobs, paths=paths)[0] == want


def test_a_framework_less_engine_is_silent_without_a_project_framework(copy, monkeypatch, capsys):
    bad = copy("tv_detection_engine_requirements", "bad")
    assert lint(bad, monkeypatch, capsys, "--no-cache")[0] == expected(bad)
    # (A fresh folder: the project layer keeps a folder's dependency framework for the
    # life of the process, see the issue-20 note.)
    lone = bad.parent / "lone"
    lone.mkdir()
    shutil.copy(bad / "engine.py", lone / "engine.py")  # nothing names the framework
    assert lint(lone, monkeypatch, capsys, "--no-cache")[0] == set()


def run_entry(root: Path):
    env = dict(os.environ, **FIXTURE_ENV)
    return subprocess.run([sys.executable, entry(root)], cwd=root, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kind", ["bad", "good"])
@pytest.mark.parametrize("name", RUN_SAMPLE)
def test_sample_projects_run(name, kind):
    proc = run_entry(PROJECTS / name / kind)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip()
