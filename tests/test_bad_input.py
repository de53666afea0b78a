"""Bad input never crashes the run: each odd file is a finding (SL000) or a clean
message, and the good sibling file in the same run is still checked."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys

import pytest

import scopelint.engine
import scopelint.files
import scopelint.runner
from scopelint.rules import ALL_RULES
from test_cli import MX_BAD, TORCH_BAD, found, run, run_process, write

SIBLING = ("good.py", 2, 6, "SL107")


def check(tmp_path, monkeypatch, capsys, *args):
    return run(["check", "--output-format", "concise", "--jobs", "1", *args], tmp_path, monkeypatch, capsys)


def sl000(out: str) -> dict:
    """path -> (row, col, message) of each SL000 line."""
    res = {}
    for line in out.splitlines():
        if ": SL000 " in line:
            head, message = line.split(": SL000 ", 1)
            path, row, col = head.rsplit(":", 2)
            res[path] = (int(row), int(col), message)
    return res


def assert_clean_run(out: str, err: str, rc: int) -> None:
    assert SIBLING in found(out), out
    assert "Traceback" not in err and "Traceback" not in out
    assert rc == 1, err


@pytest.fixture
def proj(tmp_path):
    write(tmp_path, {"good.py": TORCH_BAD})
    return tmp_path


# --- syntax errors ---------------------------------------------------------------------------
def test_syntax_error_is_sl000_at_its_position(proj, monkeypatch, capsys):
    write(proj, {"bad.py": "import torch\n\ndef f(:\n    pass\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    row, col, message = sl000(out)["bad.py"]
    assert (row, col) == (3, 7)
    assert message.startswith("SyntaxError")
    rc, out, err = run(["check", "--output-format", "json"], proj, monkeypatch, capsys)
    (item,) = [d for d in json.loads(out) if d["code"] == "SL000"]
    assert item["location"] == {"row": 3, "column": 7} and item["severity"] == "error"
    assert item["filename"].endswith("bad.py") and item["fix"] is None
    assert any(d["code"] == "SL107" for d in json.loads(out))


def test_syntax_error_full_text_output(proj, monkeypatch, capsys):
    write(proj, {"bad.py": "import torch\nx = (1,\ny = 2\n"})
    rc, out, err = run(["check", "bad.py"], proj, monkeypatch, capsys)
    assert rc == 1 and "Traceback" not in err
    assert "bad.py:2:5: SL000 SyntaxError: '(' was never closed" in out
    assert "2 | x = (1,\n" in out


@pytest.mark.parametrize(
    "source, position",
    [
        ("import torch\n  x = 1\n", (2, None)),  # unexpected indent
        ("import torch\nif True:\nx = 1\n", (3, 1)),  # expected an indented block
        ("import torch\nx = 'abc\n", (2, 5)),  # unterminated string
        ("import torch\nx = 1 +\n", (2, 8)),
        ("import torch\nprint 'x'\n", (2, 1)),
    ],
)
def test_syntax_error_positions(proj, monkeypatch, capsys, source, position):
    write(proj, {"bad.py": source})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    row, col, _ = sl000(out)["bad.py"]
    assert (row, col if position[1] is not None else None) == position


def test_syntax_error_in_a_file_without_framework_code(proj, monkeypatch, capsys):
    write(proj, {"plain.py": "def f(:\n    pass\n", "fine.py": "print('ok')\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert set(sl000(out)) == {"plain.py"}
    assert sl000(out)["plain.py"][:2] == (1, 7)


def test_newer_syntax_is_not_a_syntax_error(proj, monkeypatch, capsys):
    # Valid Python 3.12 (PEP 695), whatever Python runs the linter.
    write(proj, {"new.py": "import torch\ntype Alias = list[int]\ndef f[T](x: T) -> T:\n    return x\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert "new.py" not in sl000(out)


# --- encodings and odd bytes ---------------------------------------------------------------------
def test_pep263_cookie_is_honoured(proj, monkeypatch, capsys):
    write(proj, {"latin.py": b'# -*- coding: latin-1 -*-\nimport torch\ns = "caf\xe9"\nwith torch.no_grad:\n    pass\n'})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert ("latin.py", 4, 6, "SL107") in found(out)
    assert sl000(out) == {}


def test_bom_and_crlf(proj, monkeypatch, capsys):
    write(proj, {"bom.py": b"\xef\xbb\xbfimport torch\r\nwith torch.no_grad:\r\n    pass\r\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert ("bom.py", 2, 6, "SL107") in found(out)


def test_undecodable_bytes(proj, monkeypatch, capsys):
    write(proj, {"bad.py": b'import torch\ns = "\xff\xfe"\n'})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    row, col, message = sl000(out)["bad.py"]
    assert (row, col) == (2, 6)
    assert "0xff" in message and "utf-8" in message


@pytest.mark.parametrize("data, at", [
    (b'import torch  # \xff\ns = 1\n', (1, 17)),  # the first two lines are read for a coding comment first
    (b'\xef\xbb\xbfimport torch  # \xff\n', (1, 17)),  # (after a BOM)
    (b'#!/usr/bin/env python\ns = "\xff"\nimport torch\n', (2, 6)),
    (b'import torch\ns = "\xc3\xa9\xc3\xa9\xff"\n', (2, 8)),  # a column in characters
])
def test_undecodable_bytes_where_a_coding_comment_may_stand(proj, monkeypatch, capsys, data, at):
    """No coding comment: the byte that is not UTF-8 is said, where it is (not "bad
    encoding declaration": there is none)."""
    write(proj, {"bad.py": data})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    row, col, message = sl000(out)["bad.py"]
    assert (row, col) == at
    assert "cannot decode byte 0xff as utf-8" in message and "declaration" not in message


def test_unknown_encoding_cookie(proj, monkeypatch, capsys):
    write(proj, {"bad.py": b"# coding: no-such-codec\nimport torch\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert "no-such-codec" in sl000(out)["bad.py"][2]


def test_binary_file(proj, monkeypatch, capsys):
    write(proj, {"x.py": bytes(range(256)) * 4, "late.py": b"import torch\n" * 1000 + b"\0"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert "binary" in sl000(out)["x.py"][2]
    assert "binary" in sl000(out)["late.py"][2]


def test_empty_file(proj, monkeypatch, capsys):
    write(proj, {"empty.py": "", "blank.py": "\n\n   \n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert sl000(out) == {}
    rc, out, err = check(proj, monkeypatch, capsys, "empty.py")
    assert rc == 0 and err == ""


# --- odd things on disk ----------------------------------------------------------------------------
def test_directory_named_like_a_source_file(proj, monkeypatch, capsys):
    (proj / "x.py").mkdir()
    write(proj, {"x.py/inner.py": MX_BAD})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert (os.path.join("x.py", "inner.py"), 2, 6, "SL104") in found(out)
    rc, out, err = check(proj, monkeypatch, capsys, "x.py", "good.py")
    assert_clean_run(out, err, rc)


def test_dangling_symlink(proj, monkeypatch, capsys):
    os.symlink(proj / "missing.py", proj / "dangling.py")
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert "dangling" in sl000(out)["dangling.py"][2]
    rc, out, err = check(proj, monkeypatch, capsys, "dangling.py", "good.py")
    assert_clean_run(out, err, rc)
    assert "dangling.py" in sl000(out)


def test_fifo_does_not_hang(proj):
    os.mkfifo(proj / "x.py")
    for args in (["check"], ["check", "x.py", "good.py"], ["check", "--jobs", "2", "."]):
        proc = run_process([*args, "--output-format", "concise"], proj)  # times out (fails) on a hang
        out = proc.stdout.decode()
        assert proc.returncode == 1 and SIBLING in found(out), proc.stderr
        assert "not a regular file" in sl000(out)["x.py"][2]
        assert b"Traceback" not in proc.stderr


def test_fifo_gitignore_and_pyproject_do_not_hang(proj):
    os.mkfifo(proj / ".gitignore")
    os.mkfifo(proj / "pyproject.toml")
    proc = run_process(["check", "--output-format", "concise"], proj)
    assert proc.returncode == 1 and SIBLING in found(proc.stdout.decode())


def test_unreadable_file_open_fails(proj, monkeypatch, capsys):
    write(proj, {"secret.py": TORCH_BAD})
    real_open = builtins.open

    def guarded(file, *args, **kwargs):
        if str(file).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert "Permission denied" in sl000(out)["secret.py"][2]


def test_unreadable_file_stat_fails(proj, monkeypatch, capsys):
    write(proj, {"secret.py": TORCH_BAD})
    real_stat = os.stat

    def guarded(path, *args, **kwargs):
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(scopelint.files.os, "stat", guarded)
    rc, out, err = check(proj, monkeypatch, capsys, "secret.py", "good.py")
    assert_clean_run(out, err, rc)
    assert "Permission denied" in sl000(out)["secret.py"][2]


def test_read_error_midway(proj, monkeypatch, capsys):
    write(proj, {"eio.py": TORCH_BAD})
    real_open = builtins.open

    class Failing:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, *args):
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: Failing() if str(f).endswith("eio.py") else real_open(f, *a, **k))
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert "Input/output error" in sl000(out)["eio.py"][2]


def test_huge_file(proj, monkeypatch, capsys):
    with open(proj / "huge.py", "wb") as fh:  # sparse: cheap to make
        fh.write(b"import torch\n")
        fh.truncate(scopelint.files.MAX_BYTES + 1)
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert "too large" in sl000(out)["huge.py"][2]


# --- pathological nesting ---------------------------------------------------------------------------
def test_deeply_nested_parentheses(proj, monkeypatch, capsys):
    write(proj, {"deep.py": "import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    row, col, message = sl000(out)["deep.py"]
    assert row == 2 and "nested" in message


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "import torch\nx = " + "[" * 3000 + "]" * 3000 + "\n",
        "import torch\nx = " + "not " * 20000 + "1\n",
        "import torch\nx = a" + ".b" * 50000 + "\n",
        "import torch\nif x:\n    pass\n" + "elif x:\n    pass\n" * 20000,
        "import torch\nx = 1" + " and 1" * 10000 + "\n",  # parses in CPython; LibCST recurses deeply
    ],
    ids=["parens", "lists", "not-chain", "attribute-chain", "elif-chain", "bool-chain"],
)
def test_pathological_nesting_never_kills_the_process(proj, source):
    # A separate process: a native stack overflow would be a signal, not an exception.
    # The words of a real finding keep the engine's cheap pre-parse gate from skipping it.
    source = source.replace("import torch\n", TORCH_BAD, 1)
    write(proj, {"deep.py": source})
    proc = run_process(["check", "--output-format", "concise", "--jobs", "1"], proj)
    out = proc.stdout.decode()
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert SIBLING in found(out)
    assert b"Traceback" not in proc.stderr
    # Either LibCST's verdict on the deep part (SL000), or the gate kept only the part
    # with the finding away from it, and that finding is reported.
    assert "deep.py" in sl000(out) or "deep.py" not in out or ("deep.py", 2, 6, "SL107") in found(out)


def test_the_library_entry_is_the_safe_one():
    """``engine.lint_source`` is what the CLI and the editor call: input too deep for
    LibCST never reaches it, LibCST runs on a large stack, and a syntax error has
    CPython's position, also in a file that never mentions a framework."""
    code = (
        "import json, sys; from scopelint.engine import lint_source; "
        "deep = 'import torch\\nx = ' + '(' * 5000 + '1' + ')' * 5000 + '\\n'; "
        "chain = 'import torch\\nwith torch.no_grad:\\n    pass\\nx = 1' + ' and 1' * 10000 + '\\n'; "
        "plain = 'x = 1\\ny = (1,\\n'; "
        "print(json.dumps([[(f.code, f.start, f.message) for f in lint_source(t, 't.py').findings] for t in (deep, chain, plain)]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    deep, chain, plain = json.loads(proc.stdout)
    assert len(deep) == 1 and deep[0][0] == "SL000" and deep[0][1] == [2, 205] and deep[0][2] == "SyntaxError: too many nested parentheses"
    assert chain == [["SL000", [1, 1], "file is too deeply nested to analyse"]]  # parsed, on the large stack
    assert plain == [["SL000", [2, 5], "SyntaxError: '(' was never closed"]]


def test_a_long_operator_chain_cpython_compiles_is_analysed():
    """A 2,100-term ``w + w + ...`` (found by the battery's fuzzing) is deeper than Python's
    default recursion limit for the analysis' walk: it was "too deeply nested to
    analyse" (SL000) though CPython compiles it. The analysis runs with a higher limit on
    its large stack; a chain far deeper (the 10,000-term one above) is still SL000."""
    code = ("import torch\nw = torch.zeros(3, requires_grad=True)\nbig = w" + " + w" * 2100 + "\n"
            "with torch.no_grad():\n    y = big * 2\ny.sum().backward()\n")
    compile(code, "t.py", "exec")
    assert [(f.code, f.start) for f in scopelint.engine.lint_source(code, "t.py").findings] == [("SL101", (6, 1))]


# --- notebooks -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    ["{not json", "[1, 2]", '{"cells": 3}', "[" * 100000 + "]" * 100000, ""],
    ids=["invalid-json", "not-an-object", "cells-not-a-list", "deep-json", "empty"],
)
def test_bad_notebook(proj, monkeypatch, capsys, text):
    write(proj, {"nb.ipynb": text})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert SIBLING in found(out) and "Traceback" not in err
    if text:
        assert "nb.ipynb" in sl000(out)


# --- internal failures --------------------------------------------------------------------------------------
def test_internal_error_in_one_rule_is_reported_and_the_run_goes_on(proj, monkeypatch, capsys):
    write(proj, {"mx.py": MX_BAD})

    def boom(self, ctx):
        raise ZeroDivisionError("simulated rule bug")

    monkeypatch.setattr(ALL_RULES["SL104"], "check", boom)
    rc, out, err = check(proj, monkeypatch, capsys)
    assert SIBLING in found(out)  # other rules, other files: still checked
    assert "mx.py" in err and "SL104" in err and "simulated rule bug" in err
    assert "Traceback" not in err
    assert rc == 2  # an internal failure is exit 2, findings or not


def test_internal_error_outside_the_rules(proj, monkeypatch, capsys):
    write(proj, {"other.py": MX_BAD})
    real = scopelint.engine.lint_fired

    def flaky(source, filename, settings, *rest):
        if filename.endswith("other.py"):
            raise RuntimeError("simulated engine bug")
        return real(source, filename, settings, *rest)

    monkeypatch.setattr(scopelint.engine, "lint_fired", flaky)
    rc, out, err = check(proj, monkeypatch, capsys)
    assert SIBLING in found(out)
    assert "other.py" in err and "simulated engine bug" in err and "Traceback" not in err
    assert rc == 2


def _failing_on(monkeypatch, *names):
    """Every file whose name ends in one of ``names`` fails with an internal error."""
    real = scopelint.engine.lint_fired

    def flaky(source, filename, settings, *rest):
        if filename.endswith(names):
            raise AttributeError("module 'ast' has no attribute 'MatchAs'")  # (issue 22: Python 3.9)
        return real(source, filename, settings, *rest)

    monkeypatch.setattr(scopelint.engine, "lint_fired", flaky)


def test_no_passing_summary_when_every_file_failed(tmp_path, monkeypatch, capsys):
    """Issue 22: every file failed, no finding: the summary said "All checks passed!"."""
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": MX_BAD, "clean.py": "x = 1\n"})
    _failing_on(monkeypatch, "a.py", "b.py")
    rc, out, err = run(["check", "--jobs", "1"], tmp_path, monkeypatch, capsys)
    assert rc == 2
    assert "All checks passed" not in out + err
    assert out.strip().splitlines()[-1] == "Found 0 findings; 2 files failed with an internal error."
    assert err.strip().splitlines()[-1] == (
        "scopelint: error: 2 files failed with an internal error; their findings may be missing."
    )
    assert "a.py: internal error: AttributeError" in err and "b.py: internal error: AttributeError" in err


def test_the_summary_counts_failed_files_next_to_the_findings(proj, monkeypatch, capsys):
    write(proj, {"other.py": MX_BAD, "fixable.py": "import torch\nwith torch.no_grad:\n    pass\n"})
    _failing_on(monkeypatch, "other.py")
    rc, out, err = run(["check", "--jobs", "1"], proj, monkeypatch, capsys)
    assert rc == 2 and SIBLING in found(out)
    assert out.strip().splitlines()[-1] == "Found 2 findings (2 fixable with --fix); 1 file failed with an internal error."
    assert "1 file failed with an internal error" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github", "statistics", "diff"])
def test_every_format_says_how_many_files_failed_and_exits_2(proj, monkeypatch, capsys, fmt):
    write(proj, {"broken1.py": MX_BAD, "broken2.py": TORCH_BAD})
    _failing_on(monkeypatch, "broken1.py", "broken2.py")
    extra = {"statistics": ["--statistics"], "diff": ["--diff"]}.get(fmt, ["--output-format", fmt])
    rc, out, err = run(["check", "--jobs", "1", *extra], proj, monkeypatch, capsys)
    assert rc == 2, (out, err)
    assert "All checks passed" not in out + err
    assert err.strip().splitlines()[-1] == (
        "scopelint: error: 2 files failed with an internal error; their findings may be missing."
    )
    if fmt == "json":  # still the findings array (ruff's contract): the good file's finding, nothing made up
        assert [(os.path.basename(d["filename"]), d["code"]) for d in json.loads(out)] == [("good.py", "SL107")]
    elif fmt == "sarif":
        assert json.loads(out)["runs"][0]["invocations"][0]["executionSuccessful"] is False
    elif fmt == "github":  # annotations for the failures too, not only the findings
        errors = [line for line in out.splitlines() if line.startswith("::error file=broken")]
        assert len(errors) == 2 and all("title=scopelint::" in line and "internal error" in line for line in errors)
        assert any(line.startswith("::error file=good.py,line=2") for line in out.splitlines())
    elif fmt == "statistics":
        assert out.splitlines() == ["    1\tSL107\t[*] grad-context-not-called"]


@pytest.mark.skipif(sys.platform == "win32", reason="needs fork")
@pytest.mark.parametrize("cache", [[], ["--no-cache"]])  # (without: workers start before the program is read)
def test_a_worker_that_dies_costs_only_its_file(proj, monkeypatch, capsys, cache):
    import multiprocessing

    if multiprocessing.get_start_method(allow_none=False) != "fork":
        pytest.skip("the monkeypatch reaches workers only when they are forked")
    write(proj, {f"f{i}.py": MX_BAD for i in range(8)})
    write(proj, {"crash.py": TORCH_BAD})
    real = scopelint.runner._check_path

    def dying(task):
        if task[0].endswith("crash.py"):
            os._exit(139)  # as a segfault in native code would
        return real(task)

    monkeypatch.setattr(scopelint.runner, "_check_path", dying)
    rc, out, err = run(["check", "--output-format", "concise", "--jobs", "2", *cache], proj, monkeypatch, capsys)
    assert SIBLING in found(out)
    assert len([f for f in found(out) if f[3] == "SL104"]) == 8
    assert "crash.py" in err and "crashed" in err
    assert rc == 2


def test_form_feed_and_line_separator_do_not_shift_the_shown_line(proj, monkeypatch, capsys):
    write(proj, {"ff.py": "import torch\n\x0c\ns = 'a\u2028b'\nwith torch.no_grad:\n    pass\n"})
    rc, out, err = run(["check", "ff.py"], proj, monkeypatch, capsys)
    assert "ff.py:4:6: SL107" in out
    assert "4 | with torch.no_grad:" in out


@pytest.mark.parametrize("cache", [[], ["--no-cache"]])
def test_a_pool_that_breaks_while_chunks_are_handed_out_loses_no_file_and_runs_none_here(proj, monkeypatch, capsys, cache):
    """A worker may die before every chunk is submitted (submit then raises): the rest
    is retried in worker processes, never in this one (a crash here would end the run)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    write(proj, {f"f{i}.py": MX_BAD for i in range(40)})
    real_submit = ProcessPoolExecutor.submit
    submitted = []

    def breaking_submit(self, fn, *args, **kwargs):
        submitted.append(1)
        if len(submitted) == 3:  # the first pool breaks on its third chunk
            raise BrokenProcessPool("a worker died")
        return real_submit(self, fn, *args, **kwargs)

    here = os.getpid()
    real_check = scopelint.runner._check_path

    def checked(task):
        assert os.getpid() != here, "a file was checked in the main process"
        return real_check(task)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", breaking_submit)
    monkeypatch.setattr(scopelint.runner, "_check_path", checked)
    rc, out, err = run(["check", "--output-format", "concise", "--jobs", "2", *cache], proj, monkeypatch, capsys)
    assert SIBLING in found(out)
    assert len([f for f in found(out) if f[3] == "SL104"]) == 40
    assert "internal error" not in err
    assert rc == 1


# --- issue 24: honest failures -----------------------------------------------------------------
def test_non_utf8_pyproject_is_one_line_exit_2(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": b"[tool.scopelint]\nselect = [\"SL1\"]\n# caf\xe9\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert rc == 2
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "pyproject.toml" in line and "not UTF-8" in line and "0xe9" in line


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e308", "0", "-1", "soon"])
def test_verify_timeout_is_validated(proj, monkeypatch, capsys, value):
    rc, out, err = check(proj, monkeypatch, capsys, "--verify", "--verify-timeout", value, "good.py")
    assert rc == 2
    assert "Traceback" not in err and "--verify-timeout" in err.splitlines()[-1], err
    assert out == ""  # refused before anything was checked


def test_verify_timeout_accepts_seconds():
    from scopelint.runtime_check.cli import _timeout

    assert _timeout("2.5") == 2.5 and _timeout("1e6") == 1e6


def test_unreadable_folder_is_reported(proj, monkeypatch, capsys):
    write(proj, {"locked/inner.py": TORCH_BAD})
    real_scandir = os.scandir

    def guarded(path=".", *args, **kwargs):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path, *args, **kwargs)

    monkeypatch.setattr(scopelint.files.os, "scandir", guarded)
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    row, col, message = sl000(out)["locked"]
    assert message == "cannot read folder: Permission denied"
    assert "inner.py" not in out
    # Named on the command line, the same.
    rc, out, err = check(proj, monkeypatch, capsys, "locked", "good.py")
    assert_clean_run(out, err, rc)
    assert sl000(out)["locked"][2] == "cannot read folder: Permission denied"


def test_fifo_in_cache_does_not_hang(proj):
    first = run_process(["check", "--output-format", "concise"], proj)
    assert first.returncode == 1
    entries = [p for p in (proj / ".scopelint_cache").rglob("*.json")]
    assert entries
    for p in entries:
        p.unlink()
        os.mkfifo(p)
    proc = run_process(["check", "--output-format", "concise"], proj)  # (120 s timeout: a hang fails)
    assert proc.returncode == 1 and SIBLING in found(proc.stdout.decode())
    assert not any(p.is_fifo() for p in entries)  # the miss was linted and its entry rewritten


_SLOW_WORKERS = """
import sys, time
import scopelint.runner as r
real = r._check_path
r._check_path = lambda task: (time.sleep(120), real(task))[1]
from scopelint.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _children(pid: int) -> list:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_workers_die_with_their_parent(proj, sig):
    import signal
    import time

    for i in range(6):
        write(proj, {f"m{i}.py": TORCH_BAD})
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WORKERS, "check", "--no-cache", "--jobs", "2", "."],
                            cwd=proj, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        workers: list = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.05)
            workers = [k for k in _children(proc.pid) if _alive(k)]
        assert len(workers) >= 2, "the workers never started"
        time.sleep(0.3)  # (busy in their first file)
        proc.send_signal(getattr(signal, sig))
        proc.wait(timeout=60)  # (generous: the whole suite may be loading both cores)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.05)
        assert not any(_alive(w) for w in workers), "a worker outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- found by benchmarks/battery.py (issue 24) ----------------------------------------------------
@pytest.mark.parametrize("kind", ["for", "while"])
def test_deeply_nested_loops_do_not_blow_up(kind):
    """Each loop's body was walked twice, so n nested loops cost 2**n walks (18 levels:
    20 s and 800 MB; 25 never ended). Loops deeper than the two-pass depth are walked once."""
    import time

    from scopelint.engine import lint_source

    depth = 25
    head = "for i{0} in x:\n" if kind == "for" else "while x{0}:\n"
    body = "".join("    " * (i + 1) + head.format(i) for i in range(depth))
    source = f"import torch\n\ndef train(model, y):\n{body}" + "    " * (depth + 1) + "loss = model(y)\n" + "    " * (depth + 1) + "loss.backward()\n"
    source += TORCH_BAD.replace("import torch\n", "")
    start = time.process_time()
    result = lint_source(source, "deep_loops.py")
    assert time.process_time() - start < 10
    assert not result.errors
    assert [f.code for f in result.findings] == ["SL107"]


@pytest.mark.parametrize(
    "text, words",
    [
        ("[tool.x]\na = " + "[" * 10000 + "]" * 10000 + "\n", "nested too deeply"),
        ("tool = 3\n", "`tool` must be a table"),
    ],
    ids=["deep-arrays", "tool-not-a-table"],
)
def test_pyproject_that_tomllib_chokes_on_is_one_line_exit_2(proj, monkeypatch, capsys, text, words):
    write(proj, {"pyproject.toml": text})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert rc == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "pyproject.toml" in line and words in line


def test_deep_toml_override_is_a_usage_error(proj, monkeypatch, capsys):
    rc, out, err = check(proj, monkeypatch, capsys, "--config", "select = " + "[" * 3000 + "]" * 3000, "good.py")
    assert rc == 2 and "Traceback" not in err and "nested too deeply" in err


@pytest.mark.parametrize(
    "data, position",
    [
        (b"\xef\xbb\xbf\xef\xbb\xbfimport torch\n", (1, 1)),  # a second BOM: U+FEFF in the code
        (b"import torch\na\xe2\x80\x8db = 1\n", (2, 2)),  # a zero-width joiner in a name
    ],
    ids=["second-bom", "zero-width-joiner"],
)
def test_non_printable_character_in_code_is_sl000(proj, monkeypatch, capsys, data, position):
    """CPython rejects these in any version; LibCST's tokenizer let them through."""
    write(proj, {"bad.py": data})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    row, col, message = sl000(out)["bad.py"]
    assert (row, col) == position and "non-printable character" in message


def test_non_printable_characters_in_strings_and_comments_are_fine(proj, monkeypatch, capsys):
    write(proj, {"ok.py": "import torch\ns = 'a\u200db\ufeff'\n# \ufeff\nwith torch.no_grad:\n    pass\n"})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert ("ok.py", 4, 6, "SL107") in found(out) and sl000(out) == {}


# Indentation CPython accepts (tab stops of 8: a tab and 4 spaces is column 12, inside a
# block of 4 spaces) and LibCST's tokenizer rejects ("no matching outer block for dedent").
TABBED = "import torch\n\nmodel = torch.nn.Linear(3, 1)\n\n\ndef predict(batch):\n    if batch:\n\t    model.eval()\n\t    return model(batch)\n"


def test_tab_indentation_cpython_accepts_is_analysed_not_sl000():
    """Issue 24's battery: a false SL000. The file is analysed in a copy with its
    indentation's tabs expanded: the findings of the all-spaces file, at the original's
    columns (7 fewer where a tab stood for 8 columns), without fixes (made for the copy)."""
    import libcst

    from scopelint.engine import lint_source

    compile(TABBED, "t.py", "exec")
    with pytest.raises(libcst.ParserSyntaxError):
        libcst.parse_module(TABBED)
    spaced = TABBED.replace("\t    ", " " * 12)
    tabbed, plain = lint_source(TABBED, "t.py").findings, lint_source(spaced, "t.py").findings
    assert [f.code for f in tabbed] == [f.code for f in plain] == ["SL103"]
    assert [(f.start[0], f.start[1] + 7, f.end[0], f.end[1] + 7) for f in tabbed] == [(*f.start, *f.end) for f in plain]
    assert tabbed[0].start == (9, 13) and TABBED.splitlines()[8][12:].startswith("model(batch)")
    assert tabbed[0].fix is None and plain[0].fix is not None
    mixed = "from mxnet import autograd\nfor p in ps:\n\tp.attach_grad()\nfor e in r:\n    for p in ps:\n\t    p[:] = p - 1\n"
    assert lint_source(mixed, "t.py").findings == []  # (the battery's case: was SL000)


def test_tab_indentation_cpython_rejects_is_still_sl000(proj, monkeypatch, capsys):
    write(proj, {"bad.py": "import torch\nif x:\n\tif y:\n        pass\n", "tabs.py": TABBED})
    rc, out, err = check(proj, monkeypatch, capsys)
    assert_clean_run(out, err, rc)
    assert set(sl000(out)) == {"bad.py"} and "inconsistent use of tabs" in sl000(out)["bad.py"][2]
    assert ("tabs.py", 9, 13, "SL103") in found(out)


@pytest.mark.parametrize("src, row, col", [
    ("try:\n    pass\nexcept ValueError, e:\n    pass\n", 3, 8),
    ("import torch\ntry:\n    x = 1\nexcept (IOError, OSError), err:\n    pass\n", 4, 8),
])
def test_python2_except_comma_is_a_syntax_error(src, row, col):
    # Issue 44: LibCST's grammar reads `except X, e:` as a tuple of types; no Python 3
    # before 3.14 compiles it (and 3.14 reads it as `except (X, e):`).
    from scopelint.engine import lint_source

    res = lint_source(src, "py2.py")
    assert [(f.code, f.row, f.col) for f in res.findings] == [("SL000", row, col)], res.findings
    assert "multiple exception types must be parenthesized" in res.findings[0].message
