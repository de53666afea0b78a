"""Releases (issue 43): a changelog per version that matches `scopelint --version`, the
README's first two commands, the constraints file CI and the README share, the
pre-commit hook's `rev:` comment, an sdist whose tests run, and a demo whose every
finding the verifier confirms.

ruff's conventions are the reference: `ruff --version` / `ruff version`
(https://docs.astral.sh/ruff/configuration/#command-line-interface), a changelog per
version, pre-commit pinned by `rev:` (https://docs.astral.sh/ruff/integrations/)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

from scopelint import __version__

REPO = Path(__file__).resolve().parents[1]
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$")


def _scopelint(*args, cwd=REPO, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPELINT_")}
    return subprocess.run([sys.executable, "-m", "scopelint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=kw.pop("timeout", 300), env={**env, "NO_COLOR": "1"}, **kw)


def test_version_is_semantic_and_the_changelog_has_it():
    assert SEMVER.match(__version__)
    for args in (["--version"], ["-V"], ["version"]):
        proc = _scopelint(*args)
        assert proc.returncode == 0 and proc.stdout.strip() == f"scopelint {__version__}", args
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## (\S+)", changelog, re.M)
    assert versions[0] == __version__ and all(SEMVER.match(v) for v in versions)
    newest = changelog.split(f"## {__version__}", 1)[1].split("\n## ", 1)[0]
    # what a reader looks for: the preview tier's moves, new options and formats
    for word in ("Moved to preview", "SL206", "SL207", "--preview", "rdjson", "azure"):
        assert word in newest, word
    # the version is written once: pyproject.toml takes it from scopelint.__version__
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and 'attr = "scopelint.__version__"' in pyproject
    project = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r'^version\s*=', project, re.M)


def _readme_blocks():
    return re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)


def test_the_readme_starts_with_the_demo_and_the_test_commands_and_ci_runs_the_latter():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    first, second = [b.strip() for b in _readme_blocks()[:2]]
    assert text.index("Try it on the bundled demo") < text.index(first) < text.index("Run the tests") < text.index(second)
    assert first == "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/scopelint check demo/"
    assert "-c constraints/test.txt" in second and second.endswith(".venv/bin/python -m pytest -n auto")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert second in ci  # CI runs the README's command, constraints and all


def test_the_constraints_pin_what_the_tests_need_and_the_package_pins_nothing():
    pins = {}
    for line in (REPO / "constraints" / "test.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line}"
            pins[name.lower().replace("_", "-")] = version
    for name in ("torch", "mxnet", "numpy", "pytest", "pytest-xdist", "libcst", "pygls", "mkdocs-material", "flake8"):
        assert name in pins, name
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.findall(r'"([A-Za-z0-9_.-]+)\s*==', pyproject)
    assert deps == [], f"exact pins in the package's own requirements: {deps}"


def test_the_demo_is_found_and_exits_1_as_the_readme_says(tmp_path):
    proc = _scopelint("check", "--no-cache", "--output-format", "json", "demo/")
    assert proc.returncode == 1, proc.stderr
    codes = [f["code"] for f in json.loads(proc.stdout)]
    # one program per bug, a spread of rules over both frameworks (demo/README.md's table)
    assert sorted(codes) == ["SL101", "SL103", "SL105", "SL106", "SL107", "SL108", "SL201", "SL204"]
    by_file = {}
    for f in json.loads(proc.stdout):
        by_file.setdefault(Path(f["filename"]).name, []).append(f["code"])
    assert all(len(c) == 1 for c in by_file.values()), by_file
    table = (REPO / "demo" / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in table and f"| {codes[0]} |" in table for name, codes in by_file.items())


@pytest.mark.frameworks
def test_scopelint_verify_demo_confirms_every_finding():
    """Issue 43: 8 of the old demo's 9 findings were `inconclusive` (its bugs masked each
    other: the first crash hid the rest). Each program now holds one bug."""
    pytest.importorskip("torch")
    pytest.importorskip("mxnet")
    proc = _scopelint("verify", "--no-cache", "--jobs", "2", "--output-format", "json", "demo/", timeout=1200)
    assert proc.returncode == 1, proc.stderr[-2000:]
    verdicts = {(Path(f["filename"]).name, f["code"]): f["runtime"]["verdict"] for f in json.loads(proc.stdout)}
    assert len(verdicts) == 8
    assert all(v.startswith("confirmed:") for v in verdicts.values()), verdicts


def test_the_hook_files_rev_comment_is_a_working_pin():
    """The hook file's own example pins `rev: <commit SHA>` (no release is tagged, so a
    `vX.Y.Z` there named nothing); tests/test_precommit.py runs the README's, which is the same."""
    head = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").split("\n- id:", 1)[0]
    example = "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in head.splitlines() if line.startswith("#"))
    assert "rev: <commit SHA>" in example and "vX.Y.Z" not in example
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "rev: <commit SHA>" in readme
    tags = subprocess.run(["git", "tag", "--list"], cwd=REPO, capture_output=True, text=True).stdout.split()
    for rev in re.findall(r"rev:\s*(v\d[\w.]*)", example + readme):
        assert rev in tags, f"`rev: {rev}` names a tag that does not exist"


def _tracked(dest: Path) -> Path:
    """The committed files, as a fresh clone has them."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.mark.packaging
@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P (no working folder on sys.path) is 3.11's")
def test_the_sdist_carries_its_tests_and_they_run(tmp_path):
    """Built offline (setuptools, no isolation) from the committed files, installed (not
    editable) in a fresh venv that reaches the suite's dependencies through a .pth line,
    and a sample of the sdist's own tests run from the unpacked sdist against it."""
    pytest.importorskip("setuptools")
    src = _tracked(tmp_path / "clone")
    dist = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                           "print(b.build_sdist(sys.argv[1]))", str(dist)], cwd=src, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (sdist,) = dist.glob("scopelint-*.tar.gz")
    assert sdist.name == f"scopelint-{__version__}.tar.gz"
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
        tf.extractall(tmp_path / "unpacked")
    for needed in ("tests/conftest.py", "tests/fixtures_util.py", "tests/data/sarif-schema-2.1.0.json",
                   "fixtures/SL101", "demo/README.md", "docs/rules/SL101.md", "CHANGELOG.md", "constraints/test.txt",
                   "benchmarks/ecosystem/baseline.json", "mkdocs.yml", ".pre-commit-hooks.yaml"):
        assert any(n == needed or n.startswith(needed + "/") for n in names), needed
    assert not any("__pycache__" in n or n.startswith("tests/.artifacts") for n in names)
    root = tmp_path / "unpacked" / sdist.name[: -len(".tar.gz")]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz_suite_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                           "--no-build-isolation", "-q", str(root)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",) and not k.startswith("SCOPELINT_")}
    # -P: the installed package, not the unpacked sources' scopelint/ (its rules/ and
    # runtime_check/ are top-level folders that only an install maps into the package)
    proc = subprocess.run([str(python), "-P", "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                           "tests/test_docs.py", "tests/test_rule_docs.py", "tests/test_fixtures.py", "-k", "not gate"],
                          cwd=root, capture_output=True, text=True, timeout=1200, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\d+ passed", proc.stdout) and " failed" not in proc.stdout
    probe = subprocess.run([str(python), "-P", "-c", "import scopelint; print(scopelint.__file__)"], cwd=root,
                           capture_output=True, text=True, env=env)
    assert Path(probe.stdout.strip()).resolve().is_relative_to(venv.resolve())  # the sdist's build, not the checkout
