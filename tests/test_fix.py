"""`--fix`, `--unsafe-fixes` and `--diff`."""

from __future__ import annotations

import json
import os
import stat

import pytest

import scopelint.cli
import scopelint.fix
from test_cli import CLEAN, MX_BAD, TORCH_BAD, found, run, run_process, write

TWO = "import torch\nwith torch.no_grad:\n    pass\nwith torch.enable_grad:\n    pass\n"
TWO_FIXED = "import torch\nwith torch.no_grad():\n    pass\nwith torch.enable_grad():\n    pass\n"


def fix(tmp_path, monkeypatch, capsys, *args, stdin=None):
    return run(["check", "--output-format", "concise", "--jobs", "1", *args], tmp_path, monkeypatch, capsys, stdin=stdin)


def test_fix_adds_the_call(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD})
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix")
    assert (tmp_path / "a.py").read_text() == CLEAN
    assert rc == 0, out + err  # nothing remains
    assert "Fixed 1 finding" in out and found(out) == set()
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]  # no temporary file left behind


def test_second_fix_is_a_no_op(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD})
    fix(tmp_path, monkeypatch, capsys, "--fix")
    before = os.stat(tmp_path / "a.py")
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--fix")
    after = os.stat(tmp_path / "a.py")
    assert rc == 0 and "Fixed" not in out and "All checks passed!" in out
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)  # not rewritten
    assert (tmp_path / "a.py").read_text() == CLEAN


def test_fix_several_in_one_file_and_several_files(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TWO, "b.py": TORCH_BAD, "c.py": "import torch\nwith torch.no_grad, torch.enable_grad:\n    pass\n"})
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--fix")
    assert (tmp_path / "a.py").read_text() == TWO_FIXED
    assert (tmp_path / "b.py").read_text() == CLEAN
    assert (tmp_path / "c.py").read_text() == "import torch\nwith torch.no_grad(), torch.enable_grad():\n    pass\n"
    assert "Fixed 5 findings" in out and rc == 0


def test_fix_leaves_unfixable_and_unsafe_findings(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": MX_BAD})
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--fix")
    assert (tmp_path / "b.py").read_text() == MX_BAD  # SL104's fix is unsafe: not applied
    assert found(out) == {("b.py", 2, 6, "SL104")} and rc == 1
    assert "--unsafe-fixes" in out


def test_unsafe_fixes(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"b.py": MX_BAD})
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--fix", "--unsafe-fixes")
    new = (tmp_path / "b.py").read_text()
    assert new != MX_BAD and "pause" not in new and "pass" in new
    compile(new, "b.py", "exec")
    assert rc == 0 and found(out) == set()


def test_fix_with_exit_zero_and_json(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": MX_BAD})
    rc, out, _ = run(["check", "--fix", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert [d["code"] for d in json.loads(out)] == ["SL104"] and rc == 1
    assert (tmp_path / "a.py").read_text() == CLEAN


def test_diff_prints_and_writes_nothing(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": MX_BAD, "c.py": CLEAN})
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--diff")
    assert (tmp_path / "a.py").read_text() == TORCH_BAD
    assert "--- a/a.py\n+++ b/a.py\n" in out
    assert "-with torch.no_grad:\n+with torch.no_grad():\n" in out
    assert "b.py" not in out and "c.py" not in out  # unsafe / nothing to fix
    assert rc == 1
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--diff", "--unsafe-fixes", "b.py")
    assert "--- a/b.py" in out and rc == 1 and (tmp_path / "b.py").read_text() == MX_BAD
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--diff", "c.py")
    assert out == "" and rc == 0


def test_fix_and_diff_together_only_diff(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD})
    rc, out, _ = fix(tmp_path, monkeypatch, capsys, "--fix", "--diff")
    assert (tmp_path / "a.py").read_text() == TORCH_BAD and "+with torch.no_grad():" in out


def test_fix_keeps_encoding_bom_newlines_and_mode(tmp_path, monkeypatch, capsys):
    latin = b'# -*- coding: latin-1 -*-\nimport torch\ns = "caf\xe9"\nwith torch.no_grad:\n    pass\n'
    bom = b"\xef\xbb\xbfimport torch\r\nwith torch.no_grad:\r\n    pass\r\n"
    write(tmp_path, {"latin.py": latin, "bom.py": bom})
    os.chmod(tmp_path / "bom.py", 0o751)
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix")
    assert rc == 0, out + err
    assert (tmp_path / "latin.py").read_bytes() == latin.replace(b"no_grad:", b"no_grad():")
    assert (tmp_path / "bom.py").read_bytes() == bom.replace(b"no_grad:", b"no_grad():")
    assert stat.S_IMODE(os.stat(tmp_path / "bom.py").st_mode) == 0o751


def test_fix_stdin_prints_the_fixed_source(tmp_path, monkeypatch, capsys):
    proc = run_process(["check", "--fix", "-", "--stdin-filename", "x.py"], tmp_path, stdin=TORCH_BAD.encode())
    assert proc.stdout.decode() == CLEAN
    assert proc.returncode == 0
    proc = run_process(["check", "--diff", "-", "--stdin-filename", "x.py"], tmp_path, stdin=TORCH_BAD.encode())
    assert "+with torch.no_grad():" in proc.stdout.decode() and proc.returncode == 1


def test_fix_stdin_with_nothing_to_fix_echoes_the_source(tmp_path):
    proc = run_process(["check", "--fix", "-"], tmp_path, stdin=MX_BAD.encode())
    assert proc.stdout.decode() == MX_BAD  # ruff's contract: stdout is the (unchanged) file
    assert proc.returncode == 1


def test_fix_end_to_end(tmp_path):
    write(tmp_path, {f"f{i}.py": TWO for i in range(5)})
    proc = run_process(["check", "--fix", "--jobs", "2"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all((tmp_path / f"f{i}.py").read_text() == TWO_FIXED for i in range(5))
    assert b"Fixed 10 findings" in proc.stdout


def test_fix_notebook(tmp_path, monkeypatch, capsys):
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["text"]},
                    {"cell_type": "code", "metadata": {"keep": 1}, "execution_count": 3, "outputs": [],
                     "source": ["import torch\n", "with torch.no_grad:\n", "    pass"]}],
          "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    write(tmp_path, {"n.ipynb": json.dumps(nb, indent=1)})
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix")
    new = json.loads((tmp_path / "n.ipynb").read_text())
    assert "".join(new["cells"][1]["source"]) == "import torch\nwith torch.no_grad():\n    pass"
    assert new["cells"][0] == nb["cells"][0] and new["metadata"] == nb["metadata"]
    assert new["cells"][1]["metadata"] == {"keep": 1}
    assert rc == 0, out + err


def test_write_failure_is_reported_and_others_fixed(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "locked.py": TORCH_BAD})
    real = scopelint.fix.write_atomic

    def failing(path, text, encoding="utf-8"):
        if path.endswith("locked.py"):
            raise PermissionError(13, "Permission denied")
        return real(path, text, encoding)

    monkeypatch.setattr(scopelint.cli, "write_atomic", failing)
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix")
    assert (tmp_path / "a.py").read_text() == CLEAN
    assert (tmp_path / "locked.py").read_text() == TORCH_BAD
    assert "locked.py" in err and "Permission denied" in err and "Traceback" not in err
    assert rc == 2


def test_a_fix_that_breaks_the_file_is_not_written(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD})
    monkeypatch.setattr(scopelint.cli, "apply_edits", lambda text, findings, unsafe: (text.replace(":", "((", 1), 1))
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix")
    assert (tmp_path / "a.py").read_text() == TORCH_BAD
    assert "a.py" in err and "invalid" in err
    assert rc == 2


def test_write_atomic_replaces_and_cleans_up(tmp_path):
    target = tmp_path / "t.py"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    scopelint.fix.write_atomic(str(target), "new\r\n")
    assert target.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["t.py"]


def test_apply_edits_skips_overlaps_until_the_next_round():
    from scopelint.finding import Edit, Finding, Fix

    def finding(start, end, content, applicability="safe"):
        return Finding("SL107", "m", "error", "x", start, end,
                       fix=Fix(applicability, "m", (Edit(content, start, end),)))

    text = "abcdef\n"
    new, n = scopelint.fix.apply_edits(text, [finding((1, 2), (1, 4), "X"), finding((1, 3), (1, 5), "Y"),
                                              finding((1, 6), (1, 6), "Z")], unsafe=False)
    assert (new, n) == ("aXdeZf\n", 2)
    new, n = scopelint.fix.apply_edits(text, [finding((1, 1), (1, 2), "Q", "unsafe")], unsafe=False)
    assert (new, n) == (text, 0)
    new, n = scopelint.fix.apply_edits(text, [finding((1, 1), (1, 2), "Q", "unsafe")], unsafe=True)
    assert (new, n) == ("Qbcdef\n", 1)


def test_fix_through_a_symlink_keeps_the_link(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"real/a.py": TORCH_BAD})
    os.symlink(tmp_path / "real" / "a.py", tmp_path / "link.py")
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix", "link.py")
    assert rc == 0, out + err
    assert os.path.islink(tmp_path / "link.py")
    assert (tmp_path / "real" / "a.py").read_text() == CLEAN


def test_many_overlapping_fixes_converge(tmp_path, monkeypatch, capsys):
    # SL104's fix rewrites a large region: each round applies one, the loop goes on.
    src = "from mxnet import autograd\n" + "with autograd.pause():\n    x = 1\n" * 8 + "import torch\nwith torch.no_grad:\n    pass\n"
    write(tmp_path, {"m.py": src})
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix", "--unsafe-fixes")
    new = (tmp_path / "m.py").read_text()
    assert "pause" not in new and "torch.no_grad():" in new, out + err
    assert rc == 0 and "Fixed 9 findings" in out


def test_apply_edits_drops_fixes_outside_the_text():
    from scopelint.finding import Edit, Finding, Fix

    bad = Finding("SL107", "m", "error", "x", (9, 1), (9, 2), fix=Fix("safe", "m", (Edit("Q", (9, 1), (9, 2)),)))
    good = Finding("SL107", "m", "error", "x", (1, 1), (1, 2), fix=Fix("safe", "m", (Edit("Q", (1, 1), (1, 2)),)))
    assert scopelint.fix.apply_edits("ab\n", [bad, good], unsafe=False) == ("Qb\n", 1)


# --- issue 44 -----------------------------------------------------------------------------
def test_read_only_file_is_not_fixed(tmp_path, monkeypatch, capsys):
    # ruff refuses a file it may not write; a rename would replace it whatever its mode
    # (and root may write anything): a read-only file is left as it is, exit 2.
    write(tmp_path, {"a.py": TORCH_BAD, "ro.py": TORCH_BAD})
    os.chmod(tmp_path / "ro.py", 0o444)
    before = os.stat(tmp_path / "ro.py")
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix")
    after = os.stat(tmp_path / "ro.py")
    assert (tmp_path / "ro.py").read_text() == TORCH_BAD and before.st_ino == after.st_ino
    assert stat.S_IMODE(after.st_mode) == 0o444
    assert (tmp_path / "a.py").read_text() == CLEAN
    assert "ro.py: cannot write the fixed file: Permission denied (the file is read-only)" in err, err
    assert "1 file could not be written" in err and "internal error" not in out + err
    assert found(out) == {("ro.py", 2, 6, "SL107")}, out  # its finding, as it is
    assert "Fixed 1 finding" in out, out  # (a.py's only)
    assert rc == 2


MX_NOOP_PAUSE = """\
import mxnet as mx
from mxnet import autograd, gluon

net = gluon.nn.Dense(1)
net.initialize()
x = mx.nd.ones((2, 3))
x.attach_grad()
h = net(x)

print("setup done")
scale = 2.0

with autograd.pause():
    y = h * scale
y.backward()
"""
MX_NOOP_PAUSE_FIXED = """\
import mxnet as mx
from mxnet import autograd, gluon

net = gluon.nn.Dense(1)
net.initialize()
x = mx.nd.ones((2, 3))
x.attach_grad()
with autograd.record(train_mode=False):
    h = net(x)

print("setup done")
scale = 2.0

with autograd.record(train_mode=False):
    y = h * scale
y.backward()
"""


def test_mxnet_noop_pause_one_advice_and_fixes_that_wrap_only_the_computation(tmp_path, monkeypatch, capsys):
    # Issue 44: SL104 (the pause is a no-op) and SL101 (the pause broke the graph)
    # contradicted each other on the same pause and, applied together, wrapped the print
    # and `scale` as well.
    write(tmp_path, {"a.py": MX_NOOP_PAUSE})
    rc, out, _ = fix(tmp_path, monkeypatch, capsys)
    assert found(out) == {("a.py", 13, 6, "SL104"), ("a.py", 15, 1, "SL101")}, out
    assert "computed inside `autograd.pause()`" not in out
    assert "outside every `autograd.record()` (the `autograd.pause()` around it changes nothing)" in out
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix", "--unsafe-fixes")
    assert (tmp_path / "a.py").read_text() == MX_NOOP_PAUSE_FIXED, (tmp_path / "a.py").read_text()
    assert rc == 0 and found(out) == set(), out + err
    # SL101's fix alone (SL104 not selected) comes to the same program
    write(tmp_path, {"a.py": MX_NOOP_PAUSE})
    fix(tmp_path, monkeypatch, capsys, "--fix", "--unsafe-fixes", "--select", "SL101")
    assert (tmp_path / "a.py").read_text() == MX_NOOP_PAUSE_FIXED, (tmp_path / "a.py").read_text()


def test_new_with_block_has_no_trailing_spaces(tmp_path, monkeypatch, capsys):
    src = ("import mxnet as mx\nfrom mxnet import autograd, gluon\n\nnet = gluon.nn.Dense(1)\nnet.initialize()\n"
           "x = mx.nd.ones((2, 3))\nx.attach_grad()\nh = net(x)\n\n# scaled\ny = h * 2\n\nz = y + h\nz.backward()\n")
    write(tmp_path, {"a.py": src})
    rc, out, err = fix(tmp_path, monkeypatch, capsys, "--fix", "--unsafe-fixes")
    text = (tmp_path / "a.py").read_text()
    assert "with autograd.record(train_mode=False):\n    h = net(x)\n\n    # scaled\n    y = h * 2\n\n    z = y + h\nz.backward()\n" in text, text
    assert not [l for l in text.splitlines() if l != l.rstrip()], text
