"""`--fix` and `--diff` over the whole fixture corpus, and SARIF of the demo folder."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def scopelint(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "scopelint", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def findings(folder: Path):
    out = scopelint("check", "--no-cache", "--exit-zero", "--output-format", "json", ".", cwd=folder)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def changed_lines(before: str, after: str):
    import difflib

    rows = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before.splitlines(), after.splitlines()).get_opcodes():
        if tag != "equal":
            rows.update(range(i1 + 1, max(i1 + 1, i2) + 1))
    return rows


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fix_over_the_fixtures(tmp_path, unsafe):
    corpus = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", corpus)
    before = {p: p.read_text(encoding="utf-8") for p in corpus.rglob("*.py")}
    found = findings(corpus)
    flags = ["--unsafe-fixes"] if unsafe else []
    fixable = {
        (Path(f["filename"]).resolve(), f["location"]["row"])
        for f in found
        if f["fix"] and (unsafe or f["fix"]["applicability"] == "safe")
    }
    assert fixable

    # --diff prints the change and writes nothing
    diff = scopelint("check", "--no-cache", "--diff", *flags, ".", cwd=corpus)
    assert {p: p.read_text(encoding="utf-8") for p in before} == before
    assert diff.stdout.count("+++ b/") == len({path for path, _ in fixable})

    fixed = scopelint("check", "--no-cache", "--fix", "--exit-zero", *flags, ".", cwd=corpus)
    assert fixed.returncode == 0, fixed.stderr
    for path, text in before.items():
        after = path.read_text(encoding="utf-8")
        ast.parse(after)  # the result parses
        if after == text:
            continue
        # a good fixture has nothing to fix; a bad one changes only for its fixable findings
        assert path.name.startswith("bad_") or "bad" in path.relative_to(corpus).parts, path  # (projects: <name>/bad/...)
        rows = {row for p, row in fixable if p == path.resolve()}
        assert rows, f"{path} changed without a fixable finding"
        if not unsafe:
            assert changed_lines(text, after) <= rows, path

    # the fixed findings are gone, and a second run changes nothing
    again = {p: p.read_text(encoding="utf-8") for p in before}
    remaining = {(Path(f["filename"]).resolve(), f["location"]["row"], f["code"]) for f in findings(corpus)}
    if not unsafe:
        assert not any(code == "SL107" for _, _, code in remaining)
    scopelint("check", "--no-cache", "--fix", "--exit-zero", *flags, ".", cwd=corpus)
    assert {p: p.read_text(encoding="utf-8") for p in before} == again


def test_sarif_of_the_demo_folder_validates():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    out = scopelint("check", "--no-cache", "--output-format", "sarif", "demo", cwd=ROOT)
    assert out.returncode == 1, out.stderr  # the demo has findings
    log = json.loads(out.stdout)
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    results = log["runs"][0]["results"]
    assert results and {r["ruleId"] for r in results} >= {"SL101", "SL107"}
