"""The wheel as users get it: built from the sources, installed (not editable) in a
fresh venv, it runs, ships its LICENSE, rule pages and flake8 entry point, and declares
its classifiers; with the one canonical documentation address set (``Documentation`` in
``[project.urls]``, issue 43), its metadata and every rule URL the installed tool writes
follow it.

Slow (~30 s: a wheel build and a venv), hence ``-m packaging`` to pick it out and
``-m "not packaging"`` to leave it out. Offline: the wheel is built with the suite's
setuptools (``pip wheel --no-build-isolation``), and the venv reaches the suite's
installed dependencies (libcst, ...) through a ``.pth`` line instead of installing them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

REPO = Path(__file__).resolve().parents[1]
# What the build reads (pyproject's packages, readme and license-files).
SOURCES = ["pyproject.toml", "README.md", "LICENSE", "scopelint", "rules", "runtime_check", "docs"]
# A stand-in for the address the project will publish its site at (set in the copy only)
SITE = "https://docs.example.org/scopelint/"


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0 or kw.get("check") is False, f"{cmd}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the sources, so that no stale ``build/`` of the checkout
    (a page since removed) gets into it."""
    pytest.importorskip("setuptools")
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    pyproject = (src / "pyproject.toml").read_text(encoding="utf-8")
    assert "\n[project.urls]" not in pyproject  # (none is published yet: see its comment)
    pyproject = pyproject.replace("[project.optional-dependencies]", f'[project.urls]\nDocumentation = "{SITE}"\n\n[project.optional-dependencies]', 1)
    (src / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out), str(src)])
    (built,) = out.glob("scopelint-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("venv") / "v"
    _run([sys.executable, "-m", "venv", "--without-pip", str(where)])
    python = where / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # The suite's dependencies, after the venv's own site-packages (a path line in a .pth
    # file is appended to sys.path; the .pth files in it, the editable install's, are not run).
    (site / "zz_suite_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)])
    return where


def test_the_wheel_ships_the_license_the_pages_and_the_urls(wheel):
    from scopelint import __version__

    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(f"{dist}/METADATA").decode("utf-8")
        entry_points = zf.read(f"{dist}/entry_points.txt").decode("utf-8")
        license_text = zf.read(f"{dist}/licenses/LICENSE").decode("utf-8")
    assert license_text == (REPO / "LICENSE").read_text(encoding="utf-8") and license_text.startswith("MIT License")
    headers = [line.split(": ", 1) for line in metadata.split("\n\n", 1)[0].splitlines() if ": " in line]
    urls = dict(value.split(", ", 1) for key, value in headers if key == "Project-URL")
    assert urls == {"Documentation": SITE}
    classifiers = {value for key, value in headers if key == "Classifier"}
    assert {f"Programming Language :: Python :: 3.{n}" for n in range(9, 14)} <= classifiers
    assert "Topic :: Software Development :: Quality Assurance" in classifiers and "Framework :: Flake8" in classifiers
    assert ("Version", __version__) in [tuple(h) for h in headers]  # (one version: scopelint.__version__)
    assert ("License-Expression", "MIT") in [tuple(h) for h in headers] and ("License-File", "LICENSE") in [tuple(h) for h in headers]
    assert {"scopelint/docs/model.md", "scopelint/docs/rules/index.md", "scopelint/docs/rules/SL000.md", "scopelint/docs/rules/SL101.md"} <= names
    assert "scopelint/rules/sl101_backward_on_untracked_value.py" in names and "scopelint/runtime_check/__init__.py" in names
    assert "[flake8.extension]" in entry_points and "SL = scopelint.flake8_plugin:Plugin" in entry_points


def test_the_installed_wheel_checks_the_demo(venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCOPELINT_DOCS_URL")}
    env["NO_COLOR"] = "1"
    probe = _run([str(venv / "bin" / "python"), "-c",
                  "import scopelint, scopelint.rules as r; print(scopelint.__file__); print(r.ALL_RULES['SL101'].url())"],
                 cwd=tmp_path, env=env)
    module, url = probe.stdout.split()
    assert Path(module).resolve().is_relative_to(venv.resolve()), module  # the wheel's copy, not the checkout
    assert url == SITE + "rules/SL101/"  # from the metadata's Documentation URL
    proc = _run([str(venv / "bin" / "scopelint"), "check", "--no-cache", "--output-format", "json", "demo/"],
                cwd=REPO, env=env, check=False)
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)
    assert len(findings) == 8 and "internal error" not in proc.stderr  # (one program per bug: demo/README.md)
    assert all(f["url"] == f"{SITE}rules/{f['code']}/" for f in findings)
    sarif = json.loads(_run([str(venv / "bin" / "scopelint"), "check", "--no-cache", "--output-format", "sarif", "demo/"],
                            cwd=REPO, env=env, check=False).stdout)
    driver = sarif["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == SITE
    assert {r["id"]: r["helpUri"] for r in driver["rules"]}["SL204"] == SITE + "rules/SL204/"
