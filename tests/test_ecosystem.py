"""The ecosystem check (benchmarks/ecosystem.py): its diff logic on made-up findings, its
archive handling, and the real run over the corpus against the judged baseline (needs
the package index; skipped with the reason when it cannot be reached)."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "ecosystem.py"


def _load():
    spec = importlib.util.spec_from_file_location("ecosystem", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ecosystem"] = mod
    spec.loader.exec_module(mod)
    return mod


eco = _load()


def _f(path="a.py", line=1, code="SL101", pkg="p", msg="m"):
    return eco.Finding(pkg, path, line, 5, code, msg)


def _row(path="a.py", line=1, code="SL101", verdict="true", pkg="p"):
    return {"package": pkg, "path": path, "line": line, "column": 5, "code": code, "verdict": verdict,
            "reason": "r", "message": "old"}


def test_diff_appeared_vanished_lost_fixed():
    baseline = [_row(line=1), _row(line=2, verdict="false"), _row(line=3), _row(line=9, pkg="other")]
    found = [_f(line=1), _f(line=4)]
    d = eco.compare(found, baseline, ["p"])
    assert [f.line for f in d.appeared] == [4]
    assert sorted(r["line"] for r in d.vanished) == [2, 3]
    assert [r["line"] for r in d.lost] == [3]  # judged true, gone: lost recall
    assert [r["line"] for r in d.fixed] == [2]  # judged false, gone: fixed
    assert [f.line for f in d.unjudged] == [4]
    assert d.failed
    # the package that was not checked is neither lost nor fixed
    assert all(r["package"] == "p" for r in d.vanished)


def test_diff_passes_when_everything_is_judged_and_kept():
    baseline = [_row(line=1), _row(line=2, verdict="false")]
    d = eco.compare([_f(line=1), _f(line=2)], baseline, ["p"])
    assert not d.failed and not d.appeared and not d.vanished


def test_listed_but_unjudged_row_fails():
    d = eco.compare([_f(line=1)], [_row(line=1, verdict=eco.UNJUDGED)], ["p"])
    assert d.failed and [f.line for f in d.unjudged] == [1]


def test_the_same_line_with_another_code_is_another_finding():
    d = eco.compare([_f(line=1, code="SL201")], [_row(line=1, code="SL101")], ["p"])
    assert [f.code for f in d.appeared] == ["SL201"] and [r["code"] for r in d.lost] == ["SL101"]


def test_update_keeps_judgements_marks_new_drops_fixed_keeps_lost(tmp_path):
    baseline = [_row(line=1), _row(line=2, verdict="false"), _row(line=3), _row(line=9, pkg="other")]
    found = [_f(line=1, msg="new text"), _f(line=4)]
    d = eco.compare(found, baseline, ["p"])
    rows = eco.updated_baseline(d, baseline, ["p"], drop_lost=False)
    by = {(r["package"], r["line"]): r for r in rows}
    assert by[("p", 1)]["verdict"] == "true" and by[("p", 1)]["message"] == "new text"
    assert by[("p", 4)]["verdict"] == eco.UNJUDGED
    assert ("p", 2) not in by  # a fixed false alarm leaves the baseline
    assert by[("p", 3)]["verdict"] == "true"  # lost recall stays listed
    assert ("other", 9) in by  # unchecked packages are untouched
    assert ("p", 3) not in {(r["package"], r["line"]) for r in eco.updated_baseline(d, baseline, ["p"], True)}
    # written and read back
    path = tmp_path / "b.json"
    eco.write_baseline(path, rows)
    assert eco.load_baseline(path) == sorted(rows, key=eco._row_key)


def test_a_bad_verdict_in_the_baseline_is_an_error(tmp_path):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"findings": [_row(verdict="maybe")]}))
    with pytest.raises(eco.SetupError):
        eco.load_baseline(path)


def test_archives_keep_python_files_under_include_and_never_write_outside(tmp_path):
    pkg = eco.Package("x", "1", "torch", "sdist", include=("x/",), exclude=("x/skip/",))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in [("x-1/x/a.py", b"a"), ("x-1/x/skip/b.py", b"b"), ("x-1/x/c.txt", b"c"),
                           ("x-1/setup.py", b"s"), ("x-1/x/../../evil.py", b"e")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    members = eco._members(pkg, "x-1.tar.gz", buf.getvalue())
    assert sorted(m[0] for m in members) == ["x/../../evil.py", "x/a.py"]
    dest = tmp_path / "out"
    assert eco._write_tree(dest, members) == 1  # the traversal is refused
    assert (dest / "x" / "a.py").read_bytes() == b"a" and not (tmp_path / "evil.py").exists()

    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as zf:
        zf.writestr("x/a.py", "a")
        zf.writestr("x/skip/b.py", "b")
        zf.writestr("x-1.dist-info/METADATA", "m")
    assert [m[0] for m in eco._members(pkg, "x-1-py3-none-any.whl", zbuf.getvalue())] == ["x/a.py"]


def test_corpus_is_pinned():
    assert len(eco.CORPUS) >= 12
    assert {p.framework for p in eco.CORPUS} == {"torch", "mxnet"}
    for p in eco.CORPUS:
        assert p.version and (p.kind == "installed" or len(p.sha256) == 64), p.name


@pytest.mark.ecosystem
def test_ecosystem_corpus_matches_the_judged_baseline(tmp_path):
    """The real check: every finding on the corpus is judged, no true one is lost."""
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--jobs", "2", "--out", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=1800,
    )
    if proc.returncode == eco.EXIT_UNREACHABLE:
        pytest.skip(f"package index unreachable: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "ecosystem check ok" in proc.stdout


def test_unreachable_index_is_reported_not_passed(tmp_path):
    env = dict(os.environ, SCOPELINT_ECOSYSTEM_INDEX="http://127.0.0.1:9/pypi")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--packages", "d2l", "--cache", str(tmp_path / "c"), "--out", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == eco.EXIT_UNREACHABLE
    assert "cannot be reached" in proc.stderr and "ecosystem check ok" not in proc.stdout
