"""``benchmarks/history/score.py`` (the recall instrument from fixed bugs) on a synthetic
repository made here: a parent commit with a bug, a commit that fixes it, and a manifest
that points at both, so the script's checkout, scopelint run and classification cannot rot
unnoticed. No network: the "mirror" is a git repository created in a temporary folder, laid
out as the session's fetch lays mirrors out (``MIRRORS/<owner>+<name>/repo/.git``).

The training script is our own (the classic ``total += loss`` leak that, e.g., the
ImVisible and MVTN fixes in bugs.json removed), not third-party code."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("history_score", ROOT / "benchmarks" / "history" / "score.py")
score = importlib.util.module_from_spec(spec)
spec.loader.exec_module(score)

BUGGY = '''import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total = 0.0
for step in range(10):
    opt.zero_grad()
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    opt.step()
    total += loss
print(total)
'''

FIXED = BUGGY.replace("    total += loss\n", "    total += loss.item()\n")

HELPER = '''def unused():
    return 1
'''


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def mirror(tmp_path):
    """MIRRORS/acme+demo/repo with two commits: the bug (train/loop.py) and its fix."""
    repo = tmp_path / "mirrors" / "acme+demo" / "repo"
    (repo / "train").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "train" / "loop.py").write_text(BUGGY)
    (repo / "train" / "helper.py").write_text(HELPER)
    (repo / "README.md").write_text("demo\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "training loop")
    parent = git(repo, "rev-parse", "HEAD")
    (repo / "train" / "loop.py").write_text(FIXED)
    git(repo, "commit", "-q", "-am", "fix memory leak: accumulate loss.item()")
    fix = git(repo, "rev-parse", "HEAD")
    line = BUGGY.splitlines().index("    total += loss") + 1
    bug = {"id": f"acme/demo#{fix[:7]}:SL201", "repo": "acme/demo", "framework": "torch",
           "fix_commit": fix, "parent": parent, "path": "train/loop.py", "lines": [line],
           "fixed_path": "train/loop.py", "fixed_lines": [line], "code": "SL201",
           "split": score.split_of("acme/demo")}
    return tmp_path / "mirrors", bug


CMD = [sys.executable, "-m", "scopelint"]


def test_found_at_line_and_fixed_silent(mirror):
    mirrors, bug = mirror
    res = score.score_bug(bug, mirrors, CMD, "file")
    assert res["verdict"] == "found-at-line"
    assert res["fixed_silent"] is True
    assert ("train/loop.py", bug["lines"][0], "SL201") in res["parent_findings"]


def test_wrong_line_is_found_elsewhere_and_other_code_is_missed(mirror):
    mirrors, bug = mirror
    assert score.score_bug({**bug, "lines": [1]}, mirrors, CMD, "file")["verdict"] == "found-elsewhere"
    assert score.score_bug({**bug, "code": "SL204"}, mirrors, CMD, "file")["verdict"] == "missed"


def test_fixed_side_reports_a_finding_that_stays(mirror):
    """Pointing the fix side at the parent commit (the bug still there) is not silent."""
    mirrors, bug = mirror
    res = score.score_bug({**bug, "fix_commit": bug["parent"]}, mirrors, CMD, "file")
    assert res["fixed_silent"] is False
    assert score.score_bug({**bug, "fixed_lines": []}, mirrors, CMD, "file")["fixed_silent"] is None


def test_missing_mirror_is_skipped(mirror, tmp_path):
    _, bug = mirror
    res = score.score_bug(bug, tmp_path / "nowhere", CMD, "file")
    assert res["verdict"] == "skipped"


def test_contexts_choose_the_files(mirror):
    mirrors, bug = mirror
    gd = score.gitdir(mirrors, "acme/demo")
    assert score.files_for(gd, bug["parent"], ["train/loop.py"], "file") == ["train/loop.py"]
    assert score.files_for(gd, bug["parent"], ["train/loop.py"], "folder") == ["train/helper.py", "train/loop.py"]
    assert score.files_for(gd, bug["parent"], ["train/loop.py"], "tree") == ["train/helper.py", "train/loop.py"]


def test_main_writes_tables_per_code_and_split(mirror, tmp_path):
    mirrors, bug = mirror
    manifest = tmp_path / "bugs.json"
    manifest.write_text(json.dumps({"about": "synthetic", "bugs": [bug]}))
    out = tmp_path / "out.json"
    md = tmp_path / "out.md"
    results = score.main(["--mirrors", str(mirrors), "--manifest", str(manifest), "--json", str(out),
                          "--markdown", str(md), "--jobs", "1"])
    assert [r["verdict"] for r in results] == ["found-at-line"]
    text = md.read_text()
    assert "| SL201 | 1 | 1 | 0 | 0 | 0 | 100% | 1/1 (100%) |" in text
    assert f"| {bug['split']} | 1 | 1 |" in text
    assert json.loads(out.read_text())["results"][0]["id"] == bug["id"]


def test_classify_counts_a_finding_that_spans_the_line():
    f = {"code": "SL103", "relpath": "a.py", "location": {"row": 10}, "end_location": {"row": 13}}
    assert score.classify("SL103", {"a.py": [12]}, [f]) == "found-at-line"
    assert score.classify("SL103", {"a.py": [14]}, [f]) == "found-elsewhere"
    assert score.classify("SL103", {"b.py": [12]}, [f]) == "missed"


def test_split_is_fixed_by_repository_name():
    import hashlib
    for repo in ("pytorch/examples", "acme/demo", "d2l-ai/d2l-en"):
        want = "dev" if int(hashlib.sha1(repo.encode()).hexdigest(), 16) % 2 == 0 else "test"
        assert score.split_of(repo) == want


def test_manifest_is_consistent():
    """bugs.json: unique ids, full shas, lines given, and each bug on its repository's side."""
    bugs = json.loads((ROOT / "benchmarks" / "history" / "bugs.json").read_text())["bugs"]
    assert bugs
    assert len({b["id"] for b in bugs}) == len(bugs)
    for b in bugs:
        assert len(b["fix_commit"]) == 40 and len(b["parent"]) == 40, b["id"]
        assert b["lines"] and all(isinstance(n, int) and n > 0 for n in b["lines"]), b["id"]
        assert b["split"] == score.split_of(b["repo"]), b["id"]
        assert b["code"].startswith("SL") and b["framework"] in ("torch", "mxnet"), b["id"]
    # both frameworks are measured, not one of them only
    assert {b["framework"] for b in bugs} == {"torch", "mxnet"}


NOTEBOOK_CELL = BUGGY.replace("print(total)\n", "")


def _notebook(code: str) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# training\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": code.splitlines(keepends=True)}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_notebook_bug_is_located_by_cell_and_row(tmp_path):
    # Notebook bugs (mxnet-the-straight-dope's were only in .ipynb files) name their cell,
    # counted over all cells as ``scopelint check`` counts them, and rows in that cell.
    repo = tmp_path / "mirrors" / "acme+nb" / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "train.ipynb").write_text(_notebook(NOTEBOOK_CELL))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "notebook")
    parent = git(repo, "rev-parse", "HEAD")
    (repo / "train.ipynb").write_text(_notebook(NOTEBOOK_CELL.replace("total += loss\n", "total += loss.item()\n")))
    git(repo, "commit", "-q", "-am", "fix")
    fix = git(repo, "rev-parse", "HEAD")
    row = NOTEBOOK_CELL.splitlines().index("    total += loss") + 1
    bug = {"id": "acme/nb#1:SL201", "repo": "acme/nb", "framework": "torch", "fix_commit": fix, "parent": parent,
           "path": "train.ipynb", "cell": 2, "lines": [row], "fixed_lines": [row], "code": "SL201"}
    res = score.score_bug(bug, tmp_path / "mirrors", CMD, "file")
    assert res["verdict"] == "found-at-line" and res["fixed_silent"] is True, res
    assert score.score_bug({**bug, "cell": 1}, tmp_path / "mirrors", CMD, "file")["verdict"] == "found-elsewhere"
