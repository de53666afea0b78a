#!/usr/bin/env python3
"""How scopelint's cost grows with a file's size (issue 24: near linear, and under
1 GB and 10 s at 100k lines). Generated files of 1k, 2k, ... lines in four shapes, each
checked by ``scopelint check --no-cache --jobs 1`` in a fresh process: wall time, CPU
time (user + system: what a shared machine's load moves least) and peak memory (the
child's max RSS) per size, and the fitted growth exponents (the slopes of log time and
log memory against log lines; 1 is linear, 2 quadratic).

    python benchmarks/scaling.py                         # 1k .. 256k lines, every shape
    python benchmarks/scaling.py --max-lines 16000       # quick
    python benchmarks/scaling.py --shapes rebinds,functions --timeout 60

Shapes: ``rebinds`` (one name rebound by every line, read under ``no_grad``: the gate's
old pairwise blow-up), ``functions`` (small functions, each with an SL103 finding and a
module-level fix), ``huge_function`` (one function of n lines, an SL107 finding every
20 lines), ``nesting`` (blocks nested 40 deep, repeated, a finding at each bottom),
``loops`` (``for`` loops nested 25 deep, repeated, a finding at each bottom).
A size whose run exceeds ``--timeout`` ends that shape (larger sizes would too).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple


def rebinds(n: int) -> str:
    return "import torch\n" + "x = 1\n" * (n - 3) + "with torch.no_grad():\n    y = model(x)\n"


def functions(n: int) -> str:
    head = "import torch\n\nmodel = torch.nn.Linear(3, 1)\n"
    one = "\n\ndef predict_{}(batch):\n    model.eval()\n    return model(batch)\n"
    return head + "".join(one.format(i) for i in range(max(1, (n - 3) // 5)))


def huge_function(n: int) -> str:
    out = ["import torch\n\n\ndef train(x):\n"]
    for i in range(max(1, (n - 4) // 20)):
        out.append("    x = x + 1\n" * 18 + "    with torch.no_grad:\n        pass\n")
    return "".join(out)


def nesting(n: int, depth: int = 40) -> str:
    out = ["import torch\n\n\n"]
    per = depth + 2
    for k in range(max(1, (n - 3) // per)):
        out.append(f"def f{k}(x):\n")
        for d in range(depth):
            out.append("    " * (d + 1) + f"if x > {d}:\n")
        out.append("    " * (depth + 1) + "with torch.no_grad:\n" + "    " * (depth + 2) + "pass\n")
    return "".join(out)


def loops(n: int, depth: int = 25) -> str:
    """Functions of ``for`` loops nested ``depth`` deep, a finding at each bottom (each
    level's body was walked twice: 2**depth walks; now a loop inside another loop's first
    pass is walked once: ~depth**2/2)."""
    out = ["import torch\n\n\n"]
    per = depth + 3
    for k in range(max(1, (n - 3) // per)):
        out.append(f"def g{k}(model, x):\n")
        for d in range(depth):
            out.append("    " * (d + 1) + f"for i{d} in x:\n")
        out.append("    " * (depth + 1) + "with torch.no_grad:\n" + "    " * (depth + 2) + "model(x).sum().backward()\n")
    return "".join(out)


# --- issue 44's shapes: whole-program analysis across many functions, classes, cells ---
TRAIN_CELL = """\
model_{k} = torch.nn.Linear(4, 1)
opt_{k} = torch.optim.SGD(model_{k}.parameters(), lr=0.1)
total_{k} = 0


def batch_{k}(n):
    return torch.randn(n, 4), torch.randn(n, 1)


def step_{k}(x, y):
    opt_{k}.zero_grad()
    loss = torch.nn.functional.mse_loss(model_{k}(x), y)
    loss.backward()
    opt_{k}.step()
    return loss


for epoch in range(2):
    x, y = batch_{k}(8)
    loss = step_{k}(x, y)
    total_{k} += loss
with torch.no_grad():
    pred_{k} = model_{k}(x)
pred_{k}.sum().backward()
"""


def notebook(n: int) -> str:
    """A notebook of code cells of ~25 lines each (a model, a training step, a loop with
    ``total += loss`` and an SL101 finding per cell), state flowing across cells."""
    import json

    per = TRAIN_CELL.count("\n")
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": "import torch\n"}]
    for k in range(max(1, n // per)):
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": TRAIN_CELL.format(k=k)})
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5})


def as_script(n: int) -> str:
    """The notebook's code as one ``.py`` file (the same cells, joined)."""
    per = TRAIN_CELL.count("\n")
    return "import torch\n" + "".join(TRAIN_CELL.format(k=k) for k in range(max(1, n // per)))


def call_chain(n: int) -> str:
    """Functions each calling the next (5 lines each): ``f0 -> f1 -> ... -> fN``, the last
    one computing under ``no_grad``; the entry point calls ``backward`` on the result."""
    k = max(2, (n - 8) // 5)
    out = ["import torch\n\nmodel = torch.nn.Linear(3, 1)\n"]
    for i in range(k - 1):
        out.append(f"\n\ndef f{i}(x):\n    y = f{i + 1}(x)\n    return y\n")
    out.append(f"\n\ndef f{k - 1}(x):\n    with torch.no_grad():\n        return model(x)\n")
    out.append("\n\nf0(torch.ones(2, 3)).sum().backward()\n")
    return "".join(out)


def mutual_recursion(n: int, ring: int = 50) -> str:
    """Rings of ``ring`` functions each calling the next and the first calling the last
    (mutual recursion), every function passing a tensor through a model."""
    out = ["import torch\n\nmodel = torch.nn.Linear(3, 3)\n"]
    per = 7
    rings = max(1, (n - 3) // (per * ring))
    for r in range(rings):
        for i in range(ring):
            nxt = f"r{r}_{(i + 1) % ring}"
            out.append(f"\n\ndef r{r}_{i}(x, depth):\n    if depth <= 0:\n        return model(x)\n"
                       f"    return {nxt}(model(x), depth - 1)\n")
        out.append(f"\n\nwith torch.no_grad():\n    out{r} = r{r}_0(torch.ones(2, 3), 3)\nout{r}.sum().backward()\n")
    return "".join(out)


def class_chain(n: int) -> str:
    """Classes each inheriting from the last (6 lines each), every ``forward`` calling
    ``super().forward``; the last class trained under ``no_grad`` (SL101)."""
    k = max(2, (n - 12) // 6)
    out = ["import torch\n\n\nclass C0(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.lin = torch.nn.Linear(3, 1)\n\n    def forward(self, x):\n        return self.lin(x)\n"]
    for i in range(1, k):
        out.append(f"\n\nclass C{i}(C{i - 1}):\n    def forward(self, x):\n        return super().forward(x) + {i}\n")
    out.append(f"\n\nnet = C{k - 1}()\nwith torch.no_grad():\n    out = net(torch.ones(2, 3))\nout.sum().backward()\n")
    return "".join(out)


def training_loops(n: int) -> str:
    """Training loops, one per function (20 lines each), each with a model, an optimizer,
    ``total_loss += loss``, an RNN state carried across steps and a missing ``zero_grad``."""
    one = """

def train_{k}(data):
    model = torch.nn.LSTM(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hidden = None
    total_loss = 0
    for epoch in range(3):
        for x, y in data:
            out, hidden = model(x, hidden)
            loss = (out - y).pow(2).mean()
            loss.backward()
            opt.step()
            total_loss += loss
        model.eval()
        preds = [model(x)[0] for x, _ in data]
        model.train()
    print(total_loss.item(), len(preds))
    return model
"""
    per = one.count("\n")
    return "import torch\n" + "".join(one.format(k=k) for k in range(max(1, (n - 1) // per)))


MAX_BYTES = 10 * 1024 * 1024  # ``scopelint.files.MAX_BYTES`` (not imported: the script runs scopelint in a child)

SHAPES: Dict[str, Callable[[int], str]] = {"rebinds": rebinds, "functions": functions, "huge_function": huge_function, "nesting": nesting,
                                           "loops": loops, "notebook": notebook, "as_script": as_script, "call_chain": call_chain,
                                           "mutual_recursion": mutual_recursion, "class_chain": class_chain,
                                           "training_loops": training_loops}
SUFFIX = {"notebook": ".ipynb"}  # (every other shape is a .py file)


def lines_of(name: str, text: str) -> int:
    """Lines of code: a notebook's are those of its cells."""
    if name == "notebook":
        import json

        return sum(cell_source.count("\n") for cell_source in (c["source"] for c in json.loads(text)["cells"]))
    return text.count("\n")


def measure(path: Path, timeout: float) -> Tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak MiB, exit status) of one cold check of ``path``."""
    cmd = [sys.executable, "-m", "scopelint", "check", "--no-cache", "--jobs", "1", "--exit-zero", "--output-format", "concise", str(path)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return float("inf"), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, -9
        time.sleep(0.01)
    seconds = time.perf_counter() - start
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def slope(points: List[Tuple[int, float]]) -> float:
    """Least-squares slope of log(value) against log(lines)."""
    pts = [(math.log(n), math.log(v)) for n, v in points if v > 0 and math.isfinite(v)]
    if len(pts) < 2:
        return float("nan")
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-lines", type=int, default=1000)
    ap.add_argument("--max-lines", type=int, default=256_000)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    args = ap.parse_args(argv)
    sizes = []
    n = args.min_lines
    while n <= args.max_lines:
        sizes.append(n)
        n *= 2
    ok = True
    with tempfile.TemporaryDirectory(prefix="scopelint-scaling-") as tmp:
        for name in args.shapes.split(","):
            make = SHAPES[name]
            times: List[Tuple[int, float]] = []
            cpus: List[Tuple[int, float]] = []
            peaks: List[Tuple[int, float]] = []
            print(f"\n{name}\n{'lines':>8} {'wall s':>9} {'CPU s':>9} {'peak MiB':>9}")
            for n in sizes:
                path = Path(tmp) / f"{name}_{n}{SUFFIX.get(name, '.py')}"
                text = make(n)
                if len(text.encode()) > MAX_BYTES:  # scopelint refuses it unread (one SL000): nothing to time
                    print(f"{text.count(chr(10)):>8}   over the {MAX_BYTES // 1048576} MiB file limit: not checked")
                    break
                path.write_text(text)
                lines = lines_of(name, text)
                seconds, cpu, peak, rc = measure(path, args.timeout)
                print(f"{lines:>8} {seconds:>9.2f} {cpu:>9.2f} {peak:>9.0f}" + ("" if rc == 0 else f"   (exit {rc})"), flush=True)
                if rc != 0:
                    ok = False
                times.append((lines, seconds))
                cpus.append((lines, cpu if rc != -9 else float("inf")))
                peaks.append((lines, peak))
                if not math.isfinite(seconds):
                    break
            print(f"growth (fitted): wall ~ n^{slope(times):.2f}, CPU ~ n^{slope(cpus):.2f}, memory ~ n^{slope(peaks):.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
