"""Reading the fixture corpus: expected findings and declared runtime effects; running a fixture."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

EXPECT = re.compile(r"#\s*expect:\s*(SL\d{3}(?:\s*,\s*SL\d{3})*)")
VERDICT = re.compile(r"^#\s*verdict:\s*(\S+)", re.MULTILINE)
EFFECT = re.compile(r"^#\s*effect:\s*(raises|prints)\s+(.+?)\s*$", re.MULTILINE)


def all_fixtures() -> List[Path]:
    return sorted(FIXTURES.glob("SL*/*.py"))


def is_bad(path: Path) -> bool:
    return path.name.startswith("bad_")


def expected_findings(path: Path) -> Set[Tuple[int, str]]:
    expected = set()
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            for code in re.split(r"\s*,\s*", m.group(1)):
                expected.add((row, code))
    return expected


def declared_effect(path: Path) -> Optional[Tuple[str, str]]:
    m = EFFECT.search(path.read_text(encoding="utf-8"))
    return (m.group(1), m.group(2)) if m else None


def expected_verdict(path: Path) -> str:
    """What RULES.md predicts for the fixture's own rule."""
    from scopelint.runtime_check import oracle

    text = path.read_text(encoding="utf-8")
    stated = VERDICT.search(text)
    if stated:
        return stated.group(1)
    code = path.parent.name
    fixed = {
        "SL101": oracle.CONFIRMED_ERROR,
        "SL102": oracle.REFUTED,
        "SL104": oracle.REFUTED,
        "SL105": oracle.CONFIRMED_ERROR,
        "SL107": oracle.CONFIRMED_ERROR,
        "SL108": oracle.CONFIRMED_ERROR,
        "SL201": oracle.CONFIRMED_GRAPH,
        "SL203": oracle.CONFIRMED_GRADS,
        "SL304": oracle.CONFIRMED_ERROR,
    }
    if code in fixed:
        return fixed[code]
    if code == "SL103":
        return oracle.CONFIRMED_OUTPUTS if "mxnet" in frameworks_of(path) else oracle.CONFIRMED_GRAPH
    # Per the fixture's declared effect: an error, or (SL106) what the program prints,
    # (SL204/SL205, SL202, SL206) the gradients, (SL302) the non-leaf: backward reaches the
    # hidden leaf with the same gradients, but the bound name holds a tensor with a grad_fn
    # (its `.grad` None) where the fix binds the leaf itself.
    effect = declared_effect(path)
    assert effect is not None, "a bad fixture declares its `# effect:`"
    if effect[0] == "raises":
        return oracle.CONFIRMED_ERROR
    if code == "SL302":
        return oracle.CONFIRMED_GRAPH
    return oracle.CONFIRMED_OUTPUTS if code in ("SL106", "SL207") else oracle.CONFIRMED_GRADS


def frameworks_of(path: Path) -> Set[str]:
    text = path.read_text(encoding="utf-8")
    found = set()
    if re.search(r"^\s*(import|from)\s+torch\b", text, re.MULTILINE):
        found.add("torch")
    if re.search(r"^\s*(import|from)\s+mxnet\b", text, re.MULTILINE):
        found.add("mxnet")
    return found


# --- running a fixture --------------------------------------------------------------------------
# Threads pinned as the verifier's child pins them (harness.child_env): BLAS and OpenMP
# reductions then add in one order on every machine.
FIXTURE_ENV = dict(
    PYTHONHASHSEED="0", MXNET_ENGINE_TYPE="NaiveEngine", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
)
# Runs a fixture as `python FIXTURE` does, with torch's oneDNN on ("1") or off ("0");
# set_onednn also honours the verifier's internal test hook (_SCOPELINT_FORCE_ONEDNN_ERROR).
_BOOT = """\
import os, runpy, sys
path, onednn, uses_torch = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
sys.argv = [path]
sys.path[0] = os.path.dirname(path)
if uses_torch:
    import torch
    from scopelint.runtime_check._child import set_onednn
    set_onednn(torch, onednn)
runpy.run_path(path, run_name="__main__")
"""
_EXCEPTION_HEADER = re.compile(r"^((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)): ?(.*)$")


def onednn_refusal(returncode: int, stderr: str) -> Optional[str]:
    """The exception a failed run ended with (its header line), when oneDNN raised it."""
    from scopelint.runtime_check._child import is_onednn_error

    if returncode == 0:
        return None
    lines = stderr.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        m = _EXCEPTION_HEADER.match(lines[i])
        if m and m.group(2).endswith(("Error", "Exception")):
            rest = "\n".join([m.group(3)] + lines[i + 1:])
            return lines[i] if is_onednn_error(m.group(2), rest) else None
    return None


def run_fixture(path: Path, cwd: Path, timeout: float = 180) -> Tuple[subprocess.CompletedProcess, Optional[str]]:
    """Run a fixture as a program, and again with oneDNN off when oneDNN refused an
    operation on this processor (torch 2.13 cannot build its bf16 LSTM primitive on
    some CPUs). Returns the run that counts and, when it fell back, what was refused."""
    from scopelint.runtime_check._child import FORCE_ONEDNN_ENV

    uses_torch = "torch" in frameworks_of(path)
    forced = uses_torch and bool(os.environ.get(FORCE_ONEDNN_ENV))

    def run(onednn: bool) -> subprocess.CompletedProcess:
        env = dict(os.environ, **FIXTURE_ENV)
        if onednn and not forced:
            cmd = [sys.executable, str(path)]
        else:
            cmd = [sys.executable, "-c", _BOOT, str(path), "1" if onednn else "0", "1" if uses_torch else "0"]
        if not onednn:
            env["MXNET_MKLDNN_ENABLED"] = "0"
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)

    proc = run(True)
    refused = onednn_refusal(proc.returncode, proc.stderr)
    if refused is None:
        return proc, None
    return run(False), refused


# A GAN's two models and optimizers (D then G), indented as the test programs that start
# with it are (they dedent the whole text): the setup of the SL210 two-backward cases.
GAN_SETUP = """
    import torch
    from torch import nn

    G = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 4))
    D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
"""


def verify_text(folder: Path, name: str, source: str, timeout: float = 180.0) -> list:
    """``source`` saved as ``folder/name``, linted and verified as one file: its findings,
    each with its ``runtime`` verdict."""
    from scopelint.engine import lint_source
    from scopelint.runner import FileResult
    from scopelint.runtime_check.verify import verify

    path = folder / name
    path.write_text(source, encoding="utf-8")
    lint = lint_source(source, str(path))
    assert not lint.errors, lint.errors
    result = FileResult(str(path), str(path), lint.findings, source=source)
    verify([result], timeout=timeout)
    return result.findings
