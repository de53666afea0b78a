"""`scopelint check` / `scopelint rule` end to end, per shared/spec/INTERFACE.md.

A few tests run the real program (`python -m scopelint`) in a subprocess; the rest call
`scopelint.cli.main` in-process on small projects made in tmp_path.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scopelint import __version__
from scopelint.cli import main
from scopelint.rules import ALL_RULES

TORCH_BAD = "import torch\nwith torch.no_grad:\n    pass\n"  # SL107 at 2:6
MX_BAD = "from mxnet import autograd\nwith autograd.pause():\n    pass\n"  # SL104 at 2:6
CLEAN = "import torch\nwith torch.no_grad():\n    pass\n"
LINE = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>SL\d{3}) ", re.M)


def write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
    return root


def found(out: str) -> set:
    """(path, row, col, code) of every finding line in text or concise output."""
    return {(m["path"], int(m["row"]), int(m["col"]), m["code"]) for m in LINE.finditer(out)}


def run(args, cwd: Path, monkeypatch, capsys, stdin: bytes = None):
    monkeypatch.chdir(cwd)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def run_process(args, cwd: Path, stdin: bytes = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "scopelint", *args], cwd=cwd, input=stdin, capture_output=True, timeout=120, env=env
    )


@pytest.fixture
def project(tmp_path):
    return write(tmp_path, {"a.py": TORCH_BAD, "pkg/b.py": MX_BAD, "pkg/clean.py": CLEAN})


# --- end to end, as a separate program ------------------------------------------------
def test_python_m_scopelint_checks_the_current_folder(project):
    proc = run_process(["check"], project)
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr
    assert found(out) == {("a.py", 2, 6, "SL107"), (os.path.join("pkg", "b.py"), 2, 6, "SL104")}
    # full text: the source line, a caret underline under the range, a help line
    assert "2 | with torch.no_grad:\n" in out
    assert re.search(r"^\s*\|\s{6}\^{13}$", out, re.M), out
    assert re.search(r"= help: .*\(\)", out)
    assert "Found 2 findings (1 fixable with --fix)." in out
    assert "\x1b[" not in out  # no colour when not on a terminal
    assert proc.stderr == b""


def test_python_m_scopelint_version_and_help(tmp_path):
    proc = run_process(["--version"], tmp_path)
    assert proc.returncode == 0 and __version__ in proc.stdout.decode()
    proc = run_process(["check", "--help"], tmp_path)
    assert proc.returncode == 0
    for option in ("--select", "--ignore", "--extend-select", "--output-format", "--fix", "--diff", "--statistics",
                   "--exit-zero", "--jobs", "--config", "--stdin-filename"):
        assert option in proc.stdout.decode()


def test_stdin_with_stdin_filename_end_to_end(tmp_path):
    proc = run_process(["check", "-", "--stdin-filename", "src/model.py", "--output-format", "concise"], tmp_path,
                       stdin=TORCH_BAD.encode())
    assert proc.returncode == 1, proc.stderr
    assert found(proc.stdout.decode()) == {("src/model.py", 2, 6, "SL107")}


def test_json_end_to_end_has_ruff_keys(project):
    proc = run_process(["check", "--output-format", "json", "a.py"], project)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert len(data) == 1
    item = data[0]
    assert set(item) >= {"code", "message", "severity", "filename", "cell", "location", "end_location",
                         "noqa_row", "url", "fix", "runtime"}
    assert item["code"] == "SL107" and item["severity"] == "error"
    assert item["filename"] == str(project / "a.py")
    assert item["location"] == {"row": 2, "column": 6}
    assert item["end_location"] == {"row": 2, "column": 19}
    assert item["noqa_row"] == 2 and item["cell"] is None and item["runtime"] is None
    # No documentation address is configured in a checkout: no URL rather than a file:// path
    # of this machine (issue 43); with one, the rule's page (tests/test_release.py).
    assert item["url"] is None and item["name"] == "grad-context-not-called"
    assert item["fix"]["applicability"] == "safe"
    (edit,) = item["fix"]["edits"]
    assert edit["content"] == "torch.no_grad()"
    assert edit["location"] == {"row": 2, "column": 6} and edit["end_location"] == {"row": 2, "column": 19}


# --- paths -------------------------------------------------------------------------------
def test_paths_files_and_folders(project, monkeypatch, capsys):
    rc, out, _ = run(["check", "--output-format", "concise", "a.py"], project, monkeypatch, capsys)
    assert rc == 1 and found(out) == {("a.py", 2, 6, "SL107")}
    rc, out, _ = run(["check", "--output-format", "concise", "pkg"], project, monkeypatch, capsys)
    assert found(out) == {(os.path.join("pkg", "b.py"), 2, 6, "SL104")}
    rc, out, _ = run(["check", "--output-format", "concise", "pkg", "a.py", "a.py"], project, monkeypatch, capsys)
    assert len(LINE.findall(out)) == 2  # a file named twice is checked once


def test_paths_are_shown_relative_to_the_cwd(project, monkeypatch, capsys):
    rc, out, _ = run(["check", "--output-format", "concise", str(project / "pkg" / "b.py")], project / "pkg",
                     monkeypatch, capsys)
    assert found(out) == {("b.py", 2, 6, "SL104")}
    rc, out, _ = run(["check", "--output-format", "concise", ".."], project / "pkg", monkeypatch, capsys)
    assert ("b.py", 2, 6, "SL104") in found(out)
    assert (os.path.join("..", "a.py"), 2, 6, "SL107") in found(out)


def test_missing_path_is_reported_and_others_checked(project, monkeypatch, capsys):
    rc, out, err = run(["check", "--output-format", "concise", "nope.py", "a.py"], project, monkeypatch, capsys)
    assert ("a.py", 2, 6, "SL107") in found(out)
    assert "nope.py" in out + err
    assert rc in (1, 2) and "Traceback" not in err


def test_default_path_is_the_cwd(project, monkeypatch, capsys):
    rc, out, _ = run(["check", "--output-format", "concise"], project, monkeypatch, capsys)
    assert {c for *_, c in found(out)} == {"SL104", "SL107"}


def test_notebooks_and_pyi_are_discovered(tmp_path, monkeypatch, capsys):
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# hi"]},
                    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": ["import torch\n", "with torch.no_grad:\n", "    pass\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(tmp_path, {"n.ipynb": json.dumps(nb), "s.pyi": TORCH_BAD, "notes.txt": TORCH_BAD})
    rc, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    data = json.loads(out)
    by_file = {Path(d["filename"]).name: d for d in data}
    assert set(by_file) == {"n.ipynb", "s.pyi"}
    assert by_file["n.ipynb"]["cell"] is not None and by_file["n.ipynb"]["location"]["row"] == 2


def test_stdin_without_filename(monkeypatch, capsys, tmp_path):
    rc, out, _ = run(["check", "-", "--output-format", "concise"], tmp_path, monkeypatch, capsys, stdin=MX_BAD.encode())
    assert rc == 1
    assert [c for *_, c in found(out)] == ["SL104"]


def test_stdin_and_files_together(project, monkeypatch, capsys):
    rc, out, _ = run(["check", "-", "a.py", "--stdin-filename", "in.py", "--output-format", "concise"], project,
                     monkeypatch, capsys, stdin=MX_BAD.encode())
    assert found(out) == {("in.py", 2, 6, "SL104"), ("a.py", 2, 6, "SL107")}


# --- output ------------------------------------------------------------------------------
def test_concise_is_one_line_per_finding(project, monkeypatch, capsys):
    rc, out, _ = run(["check", "--output-format", "concise"], project, monkeypatch, capsys)
    lines = out.strip().splitlines()
    assert len(lines) == 3  # two findings, one summary
    assert lines[-1].startswith("Found 2 findings (1 fixable with --fix).")
    assert "help:" not in out and "^" not in out


def test_clean_project_passes(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"ok.py": CLEAN, "other.py": "print('hello')\n"})
    rc, out, err = run(["check"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and "All checks passed!" in out and err == ""
    rc, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and json.loads(out) == []


def test_color_only_when_asked_or_on_a_tty(project, monkeypatch, capsys):
    rc, out, _ = run(["check", "a.py"], project, monkeypatch, capsys)
    assert "\x1b[" not in out
    rc, out, _ = run(["check", "--color", "always", "a.py"], project, monkeypatch, capsys)
    assert "\x1b[" in out


# --- selection ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options, expected",
    [
        ([], {"SL104", "SL107"}),
        (["--select", "SL1"], {"SL104", "SL107"}),
        (["--select", "SL10"], {"SL104", "SL107"}),
        (["--select", "SL107"], {"SL107"}),
        (["--select", "sl104"], {"SL104"}),
        (["--select", "SL2"], set()),
        (["--select", "SL104,SL2"], {"SL104"}),
        (["--select", "ALL", "--ignore", "SL104"], {"SL107"}),
        (["--ignore", "SL10"], set()),
        (["--ignore", "SL1"], set()),
        (["--ignore", "SL107"], {"SL104"}),
        (["--select", "SL104", "--extend-select", "SL107"], {"SL104", "SL107"}),
        (["--select", "SL2", "--extend-select", "SL10"], {"SL104", "SL107"}),
        (["--extend-select", "SL107", "--ignore", "SL107"], {"SL104"}),
    ],
)
def test_select_ignore_extend_select(project, monkeypatch, capsys, options, expected):
    rc, out, err = run(["check", "--output-format", "concise", *options], project, monkeypatch, capsys)
    assert {c for *_, c in found(out)} == expected, err
    assert rc == (1 if expected else 0)


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_unknown_code_on_the_command_line_is_a_usage_error(project, monkeypatch, capsys, option):
    rc, out, err = run(["check", option, "SL999"], project, monkeypatch, capsys)
    assert rc == 2
    assert "SL999" in err and option in err
    assert "Traceback" not in err


def test_bad_option_value_is_a_usage_error(project, monkeypatch, capsys):
    rc, _, err = run(["check", "--output-format", "xml"], project, monkeypatch, capsys)
    assert rc == 2 and "xml" in err
    rc, _, err = run(["check", "--jobs", "0"], project, monkeypatch, capsys)
    assert rc == 2 and "--jobs" in err
    rc, _, err = run(["check", "--no-such-option"], project, monkeypatch, capsys)
    assert rc == 2


# --- statistics, exit codes ----------------------------------------------------------------
def test_statistics(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": TORCH_BAD, "c.py": MX_BAD})
    rc, out, _ = run(["check", "--statistics"], tmp_path, monkeypatch, capsys)
    assert rc == 1
    rows = [line.split() for line in out.strip().splitlines()]
    assert rows[0][:2] == ["2", "SL107"] and rows[0][-1] == "grad-context-not-called"
    assert rows[1][:2] == ["1", "SL104"] and rows[1][-1] == "redundant-pause"
    assert "[*]" in out.splitlines()[0]  # SL107's fix is safe
    assert "[*]" not in out.splitlines()[1]  # SL104's is not (without --unsafe-fixes)


def test_exit_codes(project, monkeypatch, capsys):
    assert run(["check", "pkg/clean.py"], project, monkeypatch, capsys)[0] == 0
    assert run(["check", "a.py"], project, monkeypatch, capsys)[0] == 1
    assert run(["check", "--exit-zero", "a.py"], project, monkeypatch, capsys)[0] == 0
    rc, out, _ = run(["check", "--exit-zero", "--output-format", "concise", "a.py"], project, monkeypatch, capsys)
    assert found(out) == {("a.py", 2, 6, "SL107")}  # still reported
    assert run(["check", "--select", "SL4"], project, monkeypatch, capsys)[0] == 2  # (SL0 holds SL001 now)
    assert run([], project, monkeypatch, capsys)[0] == 2  # no command


def test_exit_zero_does_not_hide_config_errors(project, monkeypatch, capsys):
    write(project, {"pyproject.toml": "[tool.scopelint]\nslect = []\n"})
    assert run(["check", "--exit-zero"], project, monkeypatch, capsys)[0] == 2


# --- suppression -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("  # noqa", True),
        ("  # noqa: SL107", True),
        ("  # NOQA:SL107", True),
        ("  # noqa: SL101, SL107", True),
        ("  # noqa: SL101", False),
        ("  # noqa: SL104", False),
        ("  # a comment", False),
    ],
)
def test_noqa(tmp_path, monkeypatch, capsys, comment, suppressed):
    write(tmp_path, {"a.py": f"import torch\nwith torch.no_grad:{comment}\n    pass\n"})
    rc, out, _ = run(["check", "--output-format", "concise"], tmp_path, monkeypatch, capsys)
    assert found(out) == (set() if suppressed else {("a.py", 2, 6, "SL107")})
    assert rc == (0 if suppressed else 1)


def test_noqa_on_another_line_does_not_suppress(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": "import torch  # noqa: SL107\nwith torch.no_grad:\n    pass  # noqa\n"})
    rc, out, _ = run(["check", "--output-format", "concise"], tmp_path, monkeypatch, capsys)
    assert found(out) == {("a.py", 2, 6, "SL107")}


@pytest.mark.parametrize(
    "head, skipped",
    [
        ("# scopelint: skip-file\n", True),
        ("#!/usr/bin/env python\n# Copyright nobody\n#scopelint: skip-file\n", True),
        ('"""doc"""\n# scopelint: skip-file\n', False),  # only the first comment block counts
        ("# scopelint: skip-files-maybe\n", False),
    ],
)
def test_skip_file(tmp_path, monkeypatch, capsys, head, skipped):
    write(tmp_path, {"a.py": head + TORCH_BAD, "b.py": MX_BAD})
    rc, out, _ = run(["check", "--output-format", "concise"], tmp_path, monkeypatch, capsys)
    codes = {c for *_, c in found(out)}
    assert ("SL107" not in codes) == skipped
    assert "SL104" in codes  # the sibling is still checked


# --- parallelism ------------------------------------------------------------------------------
def test_jobs_1_and_2_give_identical_results(tmp_path, monkeypatch, capsys):
    files = {}
    for i in range(12):
        files[f"m{i:02d}/a.py"] = TORCH_BAD
        files[f"m{i:02d}/b.py"] = MX_BAD
        files[f"m{i:02d}/c.py"] = CLEAN
    files["broken.py"] = "import torch\ndef f(:\n"
    write(tmp_path, files)
    outputs = {}
    for jobs in ("1", "2"):
        for fmt in ("concise", "json"):
            rc, out, err = run(["check", "--jobs", jobs, "--output-format", fmt], tmp_path, monkeypatch, capsys)
            assert rc == 1 and err == ""
            outputs[jobs, fmt] = out
    assert outputs["1", "concise"] == outputs["2", "concise"]
    assert outputs["1", "json"] == outputs["2", "json"]
    assert len(found(outputs["1", "concise"])) == 25


def test_jobs_2_end_to_end(tmp_path):
    write(tmp_path, {f"f{i}.py": TORCH_BAD for i in range(6)})
    one = run_process(["check", "--jobs", "1", "--output-format", "concise"], tmp_path)
    two = run_process(["check", "--jobs", "2", "--output-format", "concise"], tmp_path)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout and len(found(one.stdout.decode())) == 6


# --- rule documentation -----------------------------------------------------------------------
def test_rule_documentation(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule", "SL101"], tmp_path, monkeypatch, capsys)
    assert rc == 0
    assert "SL101" in out and ALL_RULES["SL101"].name in out
    for section in ("What it does", "Why is this bad?", "Example", "Use instead", "How to fix"):
        assert section in out
    rc, out2, _ = run(["rule", "sl101"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and out2 == out


def test_rule_all_documents_every_rule(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule", "--all"], tmp_path, monkeypatch, capsys)
    assert rc == 0
    for code, rule in ALL_RULES.items():
        assert f"({code})" in out and rule.name in out


@pytest.mark.parametrize("args", [["rule", "SL999"], ["rule", "XYZ"], ["rule", "backward-on-untracked"]])
def test_rule_unknown_is_exit_2(tmp_path, monkeypatch, capsys, args):
    rc, out, err = run(args, tmp_path, monkeypatch, capsys)
    assert rc == 2 and "Traceback" not in err


def test_rule_end_to_end(tmp_path):
    proc = run_process(["rule", "SL107"], tmp_path)
    assert proc.returncode == 0 and b"grad-context-not-called" in proc.stdout
    proc = run_process(["rule", "SL999"], tmp_path)
    assert proc.returncode == 2 and b"SL999" in proc.stderr and b"Traceback" not in proc.stderr


def test_stdin_filename_alone_reads_stdin(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["check", "--stdin-filename", "m.py", "--output-format", "json"], tmp_path, monkeypatch, capsys,
                     stdin=TORCH_BAD.encode())
    (item,) = json.loads(out)
    assert rc == 1 and item["code"] == "SL107"
    assert item["filename"] == str(tmp_path / "m.py")
    rc, out, _ = run(["check", "-", "--output-format", "json"], tmp_path, monkeypatch, capsys, stdin=TORCH_BAD.encode())
    assert json.loads(out)[0]["filename"] == "-"


def test_force_exclude_applies_exclusions_to_named_files(tmp_path, monkeypatch, capsys):
    write(tmp_path, {
        "pyproject.toml": '[tool.scopelint]\nextend-exclude = ["sub", "gen_*.py"]\n',
        "sub/deep/c.py": TORCH_BAD, "gen_x.py": TORCH_BAD, "a.py": TORCH_BAD,
    })
    named = ["sub/deep/c.py", "gen_x.py", "a.py", "--no-cache", "--output-format", "concise"]
    rc, out, _ = run(["check", *named], tmp_path, monkeypatch, capsys)
    assert {m["path"] for m in LINE.finditer(out)} == {"sub/deep/c.py", "gen_x.py", "a.py"}
    rc, out, _ = run(["check", "--force-exclude", *named], tmp_path, monkeypatch, capsys)
    assert rc == 1 and {m["path"] for m in LINE.finditer(out)} == {"a.py"}
    rc, out, _ = run(["check", "--force-exclude", "sub/deep/c.py", "--no-cache"], tmp_path, monkeypatch, capsys)
    assert rc == 0, out


def test_a_batch_in_this_process_collects_each_files_cycles_and_restores_the_collector(tmp_path, monkeypatch):
    """Batches run with automatic collection off (it costs ~13% of a cold run) and
    collect after each file instead; the collector is as it was afterwards."""
    import gc
    import weakref

    from scopelint import engine, runner
    from scopelint.engine import LintResult, Settings

    write(tmp_path, {"a.py": TORCH_BAD, "b.py": TORCH_BAD})

    class Node:
        pass

    left = []

    def lint_leaving_a_cycle(source, filename, settings, tree=None):
        a, b = Node(), Node()
        a.other, b.other = b, a  # unreachable after this call: only the collector frees it
        left.append(weakref.ref(a))
        if len(left) == 2:
            assert left[0]() is None, "the first file's cycle outlived it"
        return LintResult()

    monkeypatch.setattr(engine, "lint_fired", lint_leaving_a_cycle)
    tasks = [(str(tmp_path / n), n, Settings(), False) for n in ("a.py", "b.py")]
    assert gc.isenabled()
    runner.check_paths(tasks, jobs=1)
    assert len(left) == 2 and left[1]() is None
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_checking_one_file_imports_neither_the_verifier_nor_process_pools_nor_notebooks(tmp_path):
    """The editor path pays only for what it uses (each of these costs ms to import)."""
    path = tmp_path / "t.py"
    path.write_text(TORCH_BAD)
    probe = (
        "import sys; from scopelint.cli import main; "
        "rc = main(['check', '--no-cache', '--jobs', '1', '--output-format', 'concise', sys.argv[1]]); "
        "heavy = ['scopelint.runtime_check.verify', 'concurrent.futures.process', 'scopelint.notebook']; "
        "print('LOADED', rc, [m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=120)
    assert "LOADED 1 []" in out.stdout, out.stdout + out.stderr


def test_the_console_entry_exits_with_main_s_code_and_reports_a_failed_write(tmp_path):
    """``run`` leaves without tearing the interpreter down: the exit code is still
    ``main``'s, output is flushed, a report that cannot be written is an error (2), and
    a reader that stops early (``| head``) is not."""
    path = tmp_path / "t.py"
    path.write_text(TORCH_BAD)
    cmd = [sys.executable, "-m", "scopelint", "check", "--no-cache", "--output-format", "json", str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and len(json.loads(out.stdout)) == 1, out.stderr
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            failed = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        assert failed.returncode == 2 and "cannot write the output" in failed.stderr
    reader = subprocess.Popen(cmd[:-3] + [str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()  # before anything is written
    _, err = reader.communicate(timeout=120)
    assert reader.returncode == 0 and b"Traceback" not in err, err


@pytest.mark.parametrize("shadow", ["json.py", "libcst.py", "argparse.py"])
def test_python_m_does_not_import_the_working_folder(tmp_path, shadow):
    # Issue 44: `python -m` puts the working folder first on sys.path; a module there
    # named like one scopelint imports must not run (outside the verifier's sandbox).
    marker = tmp_path / "IMPORTED"
    (tmp_path / shadow).write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit('shadowed')\n")
    (tmp_path / "a.py").write_text("import torch\nwith torch.no_grad:\n    pass\n")
    out = run_process(["check", "--no-cache", "--output-format", "concise", "a.py"], tmp_path)
    stdout, stderr = out.stdout.decode(), out.stderr.decode()
    assert not marker.exists(), stderr
    assert out.returncode == 1 and "a.py:2:6: SL107" in stdout, (stdout, stderr)
