"""Verdict agreement: does ``scopelint verify`` say what running the program shows?

    python benchmarks/verdict_agreement.py [--jobs N] [--realistic] [--json FILE] [GLOB ...]   (default: SL*)

Over the bad fixtures (``fixtures/SL*/bad_*.py``), each of which records the effect it
shows when run (its ``# effect:`` header, and a ``# verdict:`` line where the effect is
seen elsewhere than the rule's usual oracle), runs the verifier (cpu) and compares the
verdict of each of the fixture's own findings with the verdict that effect means
(``tests/fixtures_util.expected_verdict``, what ``tests/test_verify.py`` asserts). Prints
every disagreement with the verifier's detail, the agreement over all of them and over
the *realistic* ones (those whose comments name the project, tutorial or report they
were modelled on; ``--realistic`` runs only those), the median verification time per finding,
and where a run's time goes (``verify_times.record_phases``). Exits 1 below 0.95."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

# Comments that name what the program was written from (a project, a tutorial, a report).
REALISTIC = re.compile(r"(?i)modell?ed on|written from|reported in|issue|forum|discuss|stack ?overflow|github|\b[\w.-]+/[\w.-]+'s\b")
GOAL = 0.95


def comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("globs", nargs="*", default=["SL*"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--json", help="write every finding's verdict here")
    ap.add_argument("--realistic", action="store_true", help="only the fixtures whose comments name what they were modelled on")
    args = ap.parse_args(argv)

    from fixtures_util import expected_verdict
    from scopelint.engine import lint_source
    from scopelint.runner import FileResult
    from scopelint.runtime_check import harness
    from scopelint.runtime_check.verify import verify
    from verify_times import print_phases, record_phases

    paths = sorted({p for g in args.globs for p in (ROOT / "fixtures").glob(f"{g}/bad_*.py")})
    results, skipped = [], []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        if args.realistic and not REALISTIC.search(comments(source)):
            continue
        missing = [fw for fw in harness.frameworks_of(source) if importlib.util.find_spec(fw) is None]
        if missing:
            skipped.append((path, f"{', '.join(missing)} not installed"))
            continue
        lint = lint_source(source, str(path))
        own = [f for f in lint.findings if f.code == path.parent.name]
        if not own:
            skipped.append((path, "no finding of its own rule"))
            continue
        results.append((path, FileResult(str(path), str(path), own, source=source)))
    phases = record_phases()
    start = time.monotonic()
    verify([r for _, r in results], "cpu", args.timeout, jobs=args.jobs, progress=sys.stderr)
    wall = time.monotonic() - start

    rows = []
    for path, res in results:
        want = expected_verdict(path)
        realistic = bool(REALISTIC.search(comments(res.source)))
        for f in res.findings:
            rt = f.runtime or {}
            rows.append({"fixture": f"{path.parent.name}/{path.name}", "line": f.start[0], "code": f.code, "expected": want,
                         "verdict": rt.get("verdict"), "detail": rt.get("detail"), "realistic": realistic,
                         "seconds": f.extra.get("verify_seconds", 0.0)})
    for row in rows:
        if row["verdict"] != row["expected"]:
            print(f"DISAGREE {row['fixture']}:{row['line']} {row['code']}: expected {row['expected']}, got {row['verdict']}: {row['detail']}")
    for path, why in skipped:
        print(f"skipped {path.parent.name}/{path.name}: {why}")

    def rate(sel):
        agree = sum(1 for r in sel if r["verdict"] == r["expected"])
        return agree, len(sel), (agree / len(sel) if sel else 1.0)

    a, n, frac = rate(rows)
    ra, rn, rfrac = rate([r for r in rows if r["realistic"]])
    seconds = [r["seconds"] for r in rows if r["seconds"]]
    print(f"agreement: {a} of {n} findings ({frac:.3f}) over {len(results)} bad fixtures; "
          f"realistic (comments name its source): {ra} of {rn} ({rfrac:.3f})")
    if seconds:
        print(f"median verification time per finding: {statistics.median(seconds):.2f}s (both variants' runs); wall {wall:.0f}s with --jobs {args.jobs}")
    print_phases(phases)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if frac >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
