"""scopelint as a flake8 plugin (entry point ``flake8.extension`` ``SL``): a real
``flake8`` run in a subprocess reports what ``scopelint check`` reports, with flake8's
own noqa, selection and stdin handling."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scopelint.preview import is_preview

from fixtures_util import all_fixtures, expected_findings, is_bad

pytest.importorskip("flake8")

REPO = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<message>.*)$", re.M)
SL101 = (
    "import torch\n"
    "x = torch.ones(2, requires_grad=True)\n"
    "with torch.no_grad():\n"
    "    y = (x * 2).sum()\n"
    "y.backward(){}\n"
)


def flake8(args, cwd: Path, stdin: str = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args], cwd=cwd, input=stdin, capture_output=True,
        text=True, timeout=300, env=env,
    )


def reported(out: str) -> set:
    return {(m["path"], int(m["row"]), int(m["col"]), m["code"], m["message"]) for m in LINE.finditer(out)}


def test_the_plugin_is_registered(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "scopelint" in proc.stdout


def test_flake8_reports_what_scopelint_check_reports_on_every_fixture():
    """flake8 and scopelint over every fixture (one run each: ~15 s)."""
    flake = flake8(["--select", "SL", "-j", "2", "fixtures"], REPO)
    check = subprocess.run(  # (the stable rules, as the plugin: preview rules need scopelint's preview mode)
        [sys.executable, "-m", "scopelint", "check", "--no-cache", "--jobs", "2", "--output-format", "json", "fixtures"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )


    assert flake.returncode == 1 and "Traceback" not in flake.stderr, flake.stderr[-2000:]
    assert check.returncode == 1
    want = {
        (os.path.relpath(f["filename"], REPO), f["location"]["row"], f["location"]["column"], f["code"], f["message"])
        for f in json.loads(check.stdout)
    }
    got = {(os.path.normpath(p), r, c, code, msg) for p, r, c, code, msg in reported(flake.stdout)}
    assert len(want) > 100
    # flake8 hands a plugin one file at a time: the multi-file projects' findings that rest
    # on another file (whole-project analysis) are `scopelint check`'s alone.
    projects = os.path.join("fixtures", "projects") + os.sep
    cross = {w for w in want if w[0].startswith(projects)}
    assert cross and all(g[0].startswith(projects) for g in got - want), sorted(got - want)[:5]
    want, got = want - cross, {g for g in got if not g[0].startswith(projects)}
    assert got == want, (sorted(want - got)[:5], sorted(got - want)[:5])
    # and so the bad fixtures' `# expect:` marks; the good fixtures are silent
    by_file = {}
    for p, r, _, code, _ in reported(flake.stdout):
        by_file.setdefault(Path(os.path.normpath(p)), set()).add((r, code))
    for path in all_fixtures():
        rel = path.relative_to(REPO)
        if is_bad(path):  # (the stable rules' marks: preview rules run only in preview mode)
            assert by_file.get(rel, set()) == {(r, c) for r, c in expected_findings(path) if not is_preview(c)}, rel
        else:
            assert rel not in by_file, (rel, by_file.get(rel))


def test_noqa_is_flake8s(tmp_path):
    (tmp_path / "a.py").write_text(SL101.format("  # noqa: SL101"), encoding="utf-8")
    (tmp_path / "b.py").write_text(SL101.format("  # noqa: SL102"), encoding="utf-8")
    (tmp_path / "c.py").write_text(SL101.format("  # noqa"), encoding="utf-8")
    proc = flake8(["--select", "SL", "a.py", "b.py", "c.py"], tmp_path)
    assert {(p, r, c, code) for p, r, c, code, _ in reported(proc.stdout)} == {("b.py", 5, 1, "SL101")}
    # flake8's --disable-noqa shows them: the plugin reports everything, flake8 filters.
    proc = flake8(["--select", "SL", "--disable-noqa", "a.py", "b.py", "c.py"], tmp_path)
    assert {p for p, *_ in reported(proc.stdout)} == {"a.py", "b.py", "c.py"}


def test_select_and_ignore_are_flake8s(tmp_path):
    (tmp_path / "a.py").write_text(SL101.format(""), encoding="utf-8")
    for args, codes in (
        (["--select", "SL"], {"SL101"}),
        (["--select", "SL1"], {"SL101"}),
        (["--select", "SL2"], set()),
        (["--select", "SL", "--extend-ignore", "SL101"], set()),
        (["--select", "E,W"], set()),  # not selected: flake8 alone
    ):
        proc = flake8([*args, "a.py"], tmp_path)
        assert {code for *_, code, _ in reported(proc.stdout)} == codes, (args, proc.stdout, proc.stderr)
        assert proc.returncode == (1 if codes else 0)
    proc = flake8(["--select", "SL", "--per-file-ignores", "a.py:SL101", "a.py"], tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""


def test_stdin_is_linted_from_what_flake8_read(tmp_path):
    """`flake8 -` hands the plugin stdin's lines; the display name need not exist, and a
    file of that name on disk is not read in its place."""
    (tmp_path / "shown.py").write_text("import torch\n", encoding="utf-8")  # clean on disk
    proc = flake8(["--select", "SL", "--stdin-display-name", "shown.py", "-"], tmp_path, stdin=SL101.format(""))
    assert {(p, r, c, code) for p, r, c, code, _ in reported(proc.stdout)} == {("shown.py", 5, 1, "SL101")}, proc.stderr
    proc = flake8(["--select", "SL", "-"], tmp_path, stdin=SL101.format("  # noqa: SL101"))
    assert proc.returncode == 0 and proc.stdout == ""


def test_columns_are_scopelints(tmp_path):
    """flake8 prints the plugin's 0-based column plus one: scopelint's 1-based column."""
    (tmp_path / "a.py").write_text("import torch\nif True:\n    with torch.no_grad:\n        pass\n", encoding="utf-8")
    proc = flake8(["--select", "SL", "a.py"], tmp_path)
    assert {(r, c, code) for _, r, c, code, _ in reported(proc.stdout)} == {(3, 10, "SL107")}


def test_a_file_that_does_not_parse_is_flake8s_e999(tmp_path):
    (tmp_path / "a.py").write_text("import torch\ndef f(:\n", encoding="utf-8")
    proc = flake8(["--select", "SL,E999", "a.py"], tmp_path)
    assert {code for *_, code, _ in reported(proc.stdout)} == {"E999"} and "Traceback" not in proc.stderr
