"""The pre-commit hook (.pre-commit-hooks.yaml), run by the real pre-commit.

`pre-commit try-repo` installs scopelint from a snapshot of this working tree into its own
virtualenv (which needs PyPI for libcst) and runs the hook in a throwaway git repository.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

if importlib.util.find_spec("pre_commit") is None:
    pytest.skip("pre-commit is not installed (pip install 'scopelint[test]')", allow_module_level=True)
if shutil.which("git") is None:
    pytest.skip("pre-commit needs git, which is not installed", allow_module_level=True)

BAD = "import torch\n\nmodel = torch.nn.Linear(3, 1)\nwith torch.no_grad:\n    out = model(torch.ones(2, 3))\n"
GOOD = BAD.replace("torch.no_grad:", "torch.no_grad():")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
SNAPSHOT_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".mypy_cache"
)


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(("git", *args), cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def snapshot(dest: Path) -> Path:
    """This working tree as a git repository with everything committed (tracked files plus
    untracked, not ignored ones): what pre-commit would install from a pushed commit."""
    dest.mkdir()
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO, check=True, capture_output=True,
        ).stdout.decode().split("\0")
    except (subprocess.CalledProcessError, OSError):
        listed = None  # not a git checkout (an sdist, a copy): take the tree as it is
    if listed is None:
        shutil.copytree(REPO, dest, ignore=SNAPSHOT_IGNORE, dirs_exist_ok=True)
    else:
        for rel in filter(None, listed):
            src = REPO / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "snapshot", cwd=dest)
    return dest


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    return snapshot(tmp_path_factory.mktemp("scopelint-hook") / "repo")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    # One store for the module: the hook's virtualenv is built once.
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git("init", "-q", cwd=root)
    (root / "bad.py").write_text(BAD)
    (root / "good.py").write_text(GOOD)
    (root / "README.md").write_text("# not Python\n")
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "init", cwd=root)
    return root


def try_repo(hook_repo: Path, home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "GIT_CONFIG_GLOBAL": os.devnull}
    env.pop("PRE_COMMIT", None)
    env.pop("VIRTUAL_ENV", None)
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "scopelint", "--color", "never", *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
    if "Could not find a version" in proc.stdout + proc.stderr or "Failed to establish a new connection" in (
        proc.stdout + proc.stderr
    ):
        pytest.fail(f"pre-commit could not install scopelint's dependencies (PyPI unreachable?):\n{proc.stdout}\n{proc.stderr}")
    return proc


def test_manifest_matches_the_interface():
    import yaml  # pre-commit depends on PyYAML

    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "scopelint"
    assert hook["entry"] == "scopelint check"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "pyi", "jupyter"]
    assert hook["require_serial"] is False
    assert hook.get("pass_filenames", True) is True


def test_hook_fails_on_bad_file_then_passes_once_fixed(hook_repo, pre_commit_home, project):
    proc = try_repo(hook_repo, pre_commit_home, project, "--files", "bad.py", "good.py")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "bad.py:4:6: SL107" in out, out
    assert "good.py:" not in out  # no finding in the good file
    assert "Failed" in out

    (project / "bad.py").write_text(GOOD)
    proc = try_repo(hook_repo, pre_commit_home, project, "--files", "bad.py", "good.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout


def test_hook_with_fix_argument_rewrites_and_fails(hook_repo, pre_commit_home, project, tmp_path):
    # Users can pass `args: [--fix]`: the file is fixed and pre-commit reports the change.
    config = tmp_path / "config.yaml"
    rev = git("rev-parse", "HEAD", cwd=hook_repo).strip()
    config.write_text(
        f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: scopelint\n    args: [--fix]\n"
    )
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(pre_commit_home), "GIT_CONFIG_GLOBAL": os.devnull}
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--config", str(config), "--files", "bad.py", "--color", "never"],
        cwd=project, env=env, capture_output=True, text=True, timeout=1200,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (project / "bad.py").read_text() == GOOD


def test_hook_with_no_matching_files_does_not_fail(hook_repo, pre_commit_home, project):
    proc = try_repo(hook_repo, pre_commit_home, project, "--files", "README.md")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no files to check" in proc.stdout and "Skipped" in proc.stdout
    # Nothing staged at all: the hook is skipped too.
    proc = try_repo(hook_repo, pre_commit_home, project)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hook_checks_notebooks(hook_repo, pre_commit_home, project):
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": ["%matplotlib inline\n", "import torch\n", "with torch.no_grad:\n", "    pass\n"]},
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (project / "nb.ipynb").write_text(json.dumps(nb, indent=1))
    git("add", "nb.ipynb", cwd=project)
    proc = try_repo(hook_repo, pre_commit_home, project, "--files", "nb.ipynb")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "nb.ipynb:cell 1:3:6: SL107" in out, out


def _readme_block(section: str, language: str) -> str:
    """The first ``language`` code block under the README's ``## section`` heading."""
    import re

    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(rf"```{language}\n(.*?)```", body, re.S).group(1)


def test_the_readmes_pre_commit_snippet_works_as_written(hook_repo, pre_commit_home, project, tmp_path):
    """Issue 22: the README pinned `rev: v0.1.0`, a tag that does not exist. Its snippet,
    with only the two placeholders filled in, must run the hook."""
    snippet = _readme_block("pre-commit", "yaml")
    assert "<url of this repository>" in snippet and "<commit SHA>" in snippet
    rev = git("rev-parse", "HEAD", cwd=hook_repo).strip()
    config = tmp_path / "config.yaml"
    config.write_text(snippet.replace("<url of this repository>", str(hook_repo)).replace("<commit SHA>", rev))
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(pre_commit_home), "GIT_CONFIG_GLOBAL": os.devnull}
    env.pop("PRE_COMMIT", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--config", str(config), "--files", "bad.py", "good.py", "--color", "never"],
        cwd=project, env=env, capture_output=True, text=True, timeout=1200,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "bad.py:4:6: SL107" in out and "good.py:" not in out, out


def test_the_readmes_pip_install_from_the_repository_resolves(hook_repo, tmp_path):
    """The Actions snippet's `pip install "git+<url>@<commit SHA>"` (scopelint is not on
    PyPI, so `pip install scopelint` cannot resolve): pip installs this package from it."""
    import re

    (line,) = {m for m in re.findall(r'pip install "([^"]+)"', _readme_block("GitHub Actions", "yaml"))}
    rev = git("rev-parse", "HEAD", cwd=hook_repo).strip()
    spec = line.replace("<url of this repository>", f"file://{hook_repo}").replace("<commit SHA>", rev)
    target = tmp_path / "site"
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), spec],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / "scopelint" / "cli.py").is_file() and (target / "scopelint" / "rules").is_dir()
    (dist,) = target.glob("scopelint-*.dist-info")
    assert json.loads((dist / "direct_url.json").read_text())["vcs_info"]["commit_id"] == rev
