"""Counterfactuals that fail on their own: over the bad fixtures (``fixtures/SL*/bad_*.py``),
run each finding's fixed program (the rule's fix, which is also its ``--fix``) next to
the program as written, with the verifier, and list the fixes that break the program:
the fixed program raises where the original does not, or raises another exception, or
the fix does not compile.

    python benchmarks/counterfactuals.py [--jobs N] [GLOB ...]   (default: SL*)

Prints one line per failure and the fraction of counterfactual runs that failed because
of the fix; exits 1 when that fraction is not 0."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The verifier's details that blame the fix (runtime_check/oracle.py).
BROKEN = ("the fix breaks the program", "both variants fail: ", "the counterfactual does not compile")


def fix_failure(runtime: dict) -> bool:
    detail = (runtime or {}).get("detail") or ""
    return any(detail.startswith(b) for b in BROKEN)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("globs", nargs="*", default=["SL*"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=180.0)
    args = ap.parse_args(argv)

    from scopelint.engine import lint_source
    from scopelint.runner import FileResult
    from scopelint.runtime_check import harness
    from scopelint.runtime_check.verify import verify

    paths = sorted({p for g in args.globs for p in (ROOT / "fixtures").glob(f"{g}/bad_*.py")})
    results = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        if any(importlib.util.find_spec(fw) is None for fw in harness.frameworks_of(source)):
            continue
        lint = lint_source(source, str(path))
        results.append(FileResult(str(path), str(path), [f for f in lint.findings if f.fix is not None], source=source))
    start = time.monotonic()
    verify(results, "cpu", args.timeout, jobs=args.jobs, progress=sys.stderr)
    runs = failures = 0
    for res in results:
        for f in res.findings:
            rt = f.runtime or {}
            if rt.get("detail", "").startswith(("no counterfactual", "the counterfactual does not change")):
                continue
            runs += 1
            if fix_failure(rt):
                failures += 1
                print(f"FIX FAILS {Path(res.filename).relative_to(ROOT)}:{f.start[0]} {f.code}: {rt['detail']}")
    frac = failures / runs if runs else 0.0
    print(f"{failures} of {runs} counterfactual runs fail because of the fix ({frac:.1%}) in {time.monotonic() - start:.0f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
