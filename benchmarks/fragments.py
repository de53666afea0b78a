"""The synthesized harness on the fragment corpus (runtime_check/fragments/, issue 23).

    python benchmarks/fragments.py [-j N] [FRAGMENT ...]

Each bad fragment (a snippet or helper that never defines its model, optimizer, loss or
loader) declares the verdict its rule predicts (``# verdict: confirmed:...``) and marks its
finding (``# expect: SLxxx``); each good twin must draw no ``confirmed:*`` verdict. Every
fragment is linted and verified (cpu) exactly as ``scopelint verify`` does; this prints a
row per fragment and the confirmed rate over the bad ones. Exit status 1 when a twin is
confirmed, a fragment crashes the verifier, or the rate is under 80%."""

from __future__ import annotations

import argparse
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRAGMENTS = ROOT / "runtime_check" / "fragments"
VERDICT = re.compile(r"^# verdict: (\S+)", re.M)
EXPECT = re.compile(r"#\s*expect:\s*(SL\d{3})")


def predicted(path: Path):
    m = VERDICT.search(path.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def expected(path: Path):
    return {(i, m.group(1)) for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) for m in EXPECT.finditer(line)}


def verify_one(path: Path, timeout: float = 180.0) -> dict:
    """Lint and verify one fragment: {path, findings: [(row, code)], verdicts: [(code, verdict, detail)], error}."""
    from scopelint.engine import lint_source
    from scopelint.runner import FileResult
    from scopelint.runtime_check.verify import verify

    source = path.read_text(encoding="utf-8")
    lint = lint_source(source, str(path))
    res = FileResult(str(path), str(path), lint.findings, source=source)
    row = {"path": path, "findings": sorted((f.start[0], f.code) for f in res.findings), "verdicts": [], "error": None}
    try:
        verify([res], "cpu", timeout, jobs=2)
    except Exception as exc:  # the point: it must never happen
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row
    row["verdicts"] = [(f.code, (f.runtime or {}).get("verdict"), (f.runtime or {}).get("detail", ""), (f.runtime or {}).get("harness")) for f in res.findings]
    return row


def run_twin(path: Path, timeout: float = 180.0):
    """Run a good twin in the harness its bad twin's rules get (its flagged function
    called), as written: (ok, text). A twin draws no finding, so the verifier never runs
    it; this shows the harness itself runs the correct code cleanly."""
    from scopelint.engine import lint_source
    from scopelint.runtime_check import harness, synth

    source = path.read_text(encoding="utf-8")
    bad = path.with_name("bad_" + path.name[len("good_"):])
    codes = {f.code for f in lint_source(bad.read_text(encoding="utf-8"), str(bad)).findings}
    for attempt in range(synth.ATTEMPTS):  # (as the verifier does: the next attempt where one raises)
        h = synth.plan(source, range(1, len(source.splitlines()) + 1), codes, attempt=attempt)
        if not isinstance(h, synth.Harness):
            return False, f"no harness: {h}"
        run = harness.run_variant(h.program(source), path.name, h.frameworks, "cpu", timeout, prelude=h.prelude)
        t = run.trace or {}
        if t.get("status") != "exception":
            break
    if run.status != "ran" or t.get("status") != "ok":
        exc = t.get("exception") or {}
        return False, f"{run.status}/{t.get('status')}: {exc.get('type')}: {exc.get('message')} {run.stderr_tail[-300:]}"
    counts = t.get("counts") or {}
    which = f", attempt {attempt + 1}" if attempt else ""
    return True, f"ran cleanly in its harness{which} ({counts.get('backward', 0)} backward, {counts.get('steps', 0)} steps, {counts.get('outputs', 0)} forwards)"


def judge(row: dict):
    """(ok, text) for one fragment's row."""
    path = row["path"]
    if row["error"]:
        return False, f"verifier crashed: {row['error']}"
    if path.name.startswith("good_"):
        confirmed = [v for v in row["verdicts"] if str(v[1]).startswith("confirmed:")]
        if confirmed:
            return False, f"twin confirmed: {confirmed[0][1]} ({confirmed[0][2]})"
        return True, "nothing to verify" if not row["verdicts"] else ", ".join(v[1] for v in row["verdicts"])
    if set(row["findings"]) != expected(path):
        return False, f"findings {row['findings']} != expected {sorted(expected(path))}"
    want = predicted(path)
    got = [v for v in row["verdicts"] if v[1] == want]
    if got:
        return True, f"{want}: {got[0][2]}"
    return False, "; ".join(f"{v[0]} {v[1]}: {v[2]}" for v in row["verdicts"]) or "no verdict"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=1, help="fragments verified at once")
    ap.add_argument("--twins", action="store_true", help="also run every good twin in its synthesized harness (one run each)")
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    paths = args.paths or sorted(FRAGMENTS.glob("*.py"))
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(verify_one, paths))
    bad = [r for r in rows if r["path"].name.startswith("bad_")]
    confirmed, failures = 0, 0
    for r in rows:
        ok, text = judge(r)
        if r in bad and ok:
            confirmed += 1
        if not ok and (r not in bad or r["error"]):
            failures += 1
        print(f"{'ok  ' if ok else 'MISS'} {r['path'].name}: {text}")
    if args.twins:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            twins = [p for p in paths if p.name.startswith("good_")]
            for p, (ok, text) in zip(twins, pool.map(run_twin, twins)):
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {p.name} (run in its harness): {text}")
    rate = confirmed / len(bad) if bad else 1.0
    print(f"\n{confirmed}/{len(bad)} bad fragments confirmed with their predicted effect ({rate:.0%}); "
          f"{len(rows) - len(bad)} twins; {failures} failures; {time.monotonic() - start:.0f}s")
    return 1 if failures or rate < 0.8 else 0


if __name__ == "__main__":
    sys.exit(main())
