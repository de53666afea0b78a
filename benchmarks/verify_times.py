"""Median verification time per finding over a few bad fixtures.

    python benchmarks/verify_times.py [FIXTURE ...]

Runs ``scopelint verify`` (cpu, one job) on each fixture and prints, per finding, its
verdict and the seconds its runs took (``verify_seconds``: the original and the fixed
variant), then the median; and where a run's time goes, as medians over the runs:
starting the sandboxed interpreter (``unshare``, Python, until the child's first line),
importing and instrumenting the frameworks (the trace's ``setup_seconds``), and the
program itself (with torch, its first optimizer imports ``torch._dynamo``)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = [
    "SL101/bad_torch_loss_in_no_grad.py", "SL103/bad_torch_evaluate_method.py", "SL201/bad_accelerator_total_loss.py",
    "SL202/bad_accelerator_backward.py", "SL203/bad_accelerator_zero_grad.py", "SL204/bad_rnn_tbptt_hidden.py",
    "SL204/bad_lstm_tuple_state.py", "SL206/bad_torch_numpy_custom_loss.py", "SL207/bad_torch_no_grad_without_eval.py",
    "SL207/bad_torch_inline_eval_in_epoch.py", "SL209/bad_torch_trainer_data_attr.py",
]


def record_phases() -> dict:
    """From now on, where each variant's run spends its time (seconds per run):
    ``start`` (the sandboxed interpreter, until the child's first line), ``setup``
    (importing and instrumenting the frameworks), ``program``."""
    from scopelint.runtime_check import harness

    phases = {"start": [], "setup": [], "program": []}
    run_in = harness._run_in

    def timed(*a, **kw):  # every variant's run, as the verifier makes it
        run = run_in(*a, **kw)
        t = run.trace or {}
        if run.status == "ran" and "setup_seconds" in t:
            phases["start"].append(max(0.0, run.seconds - t["seconds"]))
            phases["setup"].append(t["setup_seconds"])
            phases["program"].append(max(0.0, t["seconds"] - t["setup_seconds"]))
        return run

    harness._run_in = timed
    return phases


def print_phases(phases: dict) -> None:
    if phases["setup"]:
        parts = ", ".join(f"{k} {statistics.median(v):.2f}s" for k, v in phases.items())
        print(f"per run (median over {len(phases['setup'])} runs): {parts}")


def main(argv) -> int:
    from scopelint.engine import lint_source
    from scopelint.runner import FileResult
    from scopelint.runtime_check.verify import verify

    phases = record_phases()

    paths = [Path(a) for a in argv] or [p for p in (ROOT / "fixtures" / s for s in SAMPLE) if p.exists()]
    seconds = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        lint = lint_source(source, str(path))
        res = FileResult(str(path), str(path), lint.findings, source=source)
        start = time.monotonic()
        verify([res], "cpu", 180.0, jobs=1)
        wall = time.monotonic() - start
        for f in res.findings:
            s = f.extra.get("verify_seconds", 0.0)
            seconds.append(s)
            print(f"{path.parent.name}/{path.name}:{f.start[0]} {f.code} {f.runtime['verdict']:26} {s:6.2f}s  ({(f.runtime['detail'] or '')[:110]})")
        print(f"  file wall {wall:.2f}s")
    if seconds:
        print(f"median verification time per finding: {statistics.median(seconds):.2f}s over {len(seconds)} findings")
    print_phases(phases)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
