"""The verifier on CPU and CUDA side by side, over the torch bad fixtures.

    python benchmarks/gpu_check.py [--jobs N] [--limit N]

Runs ``verify`` with ``--device all`` on every ``fixtures/SL*/bad_*.py`` that imports
torch (and not mxnet) and prints: fixture, verdict on cpu, verdict on cuda, agree?,
seconds (both devices, both variants). Exits 1 when a verdict differs between the two
devices, 2 when there is no CUDA device. benchmarks/gpu_check.sh sets up and calls it."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--limit", type=int, default=0, help="at most this many fixtures (0: all)")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args(argv)

    from scopelint.engine import lint_source
    from scopelint.runner import FileResult
    from scopelint.runtime_check import harness
    from scopelint.runtime_check.verify import verify

    if not harness.cuda_present():
        print("no CUDA device here: nothing to compare", file=sys.stderr)
        return 2
    results = []
    for path in sorted((ROOT / "fixtures").glob("SL*/bad_*.py")):
        source = path.read_text(encoding="utf-8")
        if harness.frameworks_of(source) != ["torch"]:
            continue
        lint = lint_source(source, str(path))
        own = [f for f in lint.findings if f.code == path.parent.name]
        if own:
            results.append(FileResult(str(path), str(path), own, source=source))
    if args.limit:
        results = results[: args.limit]
    start = time.monotonic()
    verify(results, "all", args.timeout, jobs=args.jobs, progress=sys.stderr)
    rows, disagree = [], 0
    for res in results:
        for f in res.findings:
            v = f.extra.get("verdicts", {})
            cpu, cuda = v.get("cpu", {}).get("verdict", "-"), v.get("cuda", {}).get("verdict", "-")
            agree = cpu == cuda
            disagree += not agree
            seconds = sum(d.get("seconds", 0.0) for d in v.values())
            rows.append((f"{Path(res.filename).parent.name}/{Path(res.filename).name}:{f.start[0]}", cpu, cuda, "yes" if agree else "NO", f"{seconds:.1f}"))
    head = ("fixture", "cpu", "cuda", "agree?", "seconds")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(5)]
    for r in [head] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print(f"{len(rows)} findings, {disagree} disagree, {time.monotonic() - start:.0f}s")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
