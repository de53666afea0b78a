"""Run one variant of a program in a fresh, limited subprocess and collect its trace."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

CHILD = str(Path(__file__).resolve().with_name("_child.py"))
DEFAULT_MEMORY_MB = 4096  # RLIMIT_AS: torch+mxnet map ~1.5 GB of address space at rest
STDOUT_LIMIT = 1 << 20
FRAMEWORK_IMPORT = re.compile(r"^\s*(?:import|from)\s+(torch|mxnet)\b", re.MULTILINE)


def frameworks_of(source: str) -> List[str]:
    return sorted(set(FRAMEWORK_IMPORT.findall(source)))


def memory_limit_bytes() -> int:
    try:
        mb = int(os.environ.get("SCOPELINT_VERIFY_MEMORY_MB", DEFAULT_MEMORY_MB))
    except ValueError:
        mb = DEFAULT_MEMORY_MB
    return max(mb, 512) << 20


@dataclass
class RunResult:
    status: str  # "ran" (the trace says how it ended) | "timeout" | "crashed" | "failed-to-start"
    trace: Optional[dict] = None
    stdout: str = ""
    stderr_tail: str = ""
    returncode: Optional[int] = None
    seconds: float = 0.0
    timeout: float = 0.0
    memory_bytes: int = 0
    notes: List[str] = field(default_factory=list)
    onednn: bool = True  # oneDNN left on (False: the fallback run, oneDNN off)


def onednn_failure(run: RunResult) -> Optional[str]:
    """The exception, as text, when this run failed only because oneDNN (on) refused an
    operation on this processor; None otherwise (and for a run with oneDNN off)."""
    exc = (run.trace or {}).get("exception") or {}
    if not run.onednn or run.status != "ran" or (run.trace or {}).get("status") != "exception" or not exc.get("onednn"):
        return None
    return f"{exc.get('type')}: {exc.get('message')}"


def child_env(device: str, onednn: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONBREAKPOINT")}
    env.update(
        PYTHONHASHSEED="0",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONIOENCODING="utf-8",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MXNET_ENGINE_TYPE="NaiveEngine",
        MXNET_CUDNN_AUTOTUNE_DEFAULT="0",
        MPLBACKEND="Agg",
        PYTHONBREAKPOINT="0",
    )
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    if not onednn:
        env["MXNET_MKLDNN_ENABLED"] = "0"  # torch: the child sets torch.backends.mkldnn.enabled
    return env


def run_variant(
    source: str, filename: str, frameworks: List[str], device: str, timeout: float, seed: int = 0, onednn: bool = True,
    realign: Optional[List] = None,
) -> RunResult:
    """Run ``source`` (saved as ``filename`` in a temp dir) under the instrumentation;
    ``onednn=False`` runs it with the frameworks' oneDNN backend off; ``realign``: line
    spans around which the child realigns the random streams (``_child.realign_rng``)."""
    tmp = tempfile.mkdtemp(prefix="scopelint-verify-")
    try:
        return _run_in(tmp, source, filename, frameworks, device, timeout, seed, onednn, realign)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_in(tmp: str, source: str, filename: str, frameworks: List[str], device: str, timeout: float, seed: int, onednn: bool, realign=None) -> RunResult:
    workdir = os.path.join(tmp, "work")
    os.mkdir(workdir)
    program = os.path.join(workdir, os.path.basename(filename) or "program.py")
    if not program.endswith(".py"):
        program += ".py"
    with open(program, "w", encoding="utf-8") as fh:
        fh.write(source)
    trace_path = os.path.join(tmp, "trace.json")
    memory = memory_limit_bytes()
    cfg = {
        "program": program,
        "trace": trace_path,
        "frameworks": frameworks,
        "device": device,
        "seed": seed,
        "memory_bytes": memory,
        "cpu_seconds": int(timeout * 2) + 10,
        "mentions_cuda": bool(re.search(r"cuda|gpu", source)),
        "onednn": onednn,
        "realign": [list(r) for r in realign or []],
    }
    cfg_path = os.path.join(tmp, "config.json")
    with open(cfg_path, "w") as fh:
        json.dump(cfg, fh)
    out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
    result = RunResult("ran", timeout=timeout, memory_bytes=memory, onednn=onednn)
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            proc = subprocess.Popen(
                [sys.executable, CHILD, cfg_path],
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=child_env(device, onednn),
                start_new_session=True,
            )
        except OSError as exc:
            result.status = "failed-to-start"
            result.notes.append(str(exc))
            return result
        try:
            result.returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            result.status = "timeout"
        finally:
            _kill_group(proc)
            if result.returncode is None:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
    result.seconds = time.monotonic() - start
    result.stdout = _read(out_path, STDOUT_LIMIT, head=True)
    result.stderr_tail = _read(err_path, 4000, head=False)
    if os.path.exists(trace_path):
        try:
            with open(trace_path) as fh:
                result.trace = json.load(fh)
        except (OSError, ValueError) as exc:
            result.notes.append(f"unreadable trace: {exc}")
    if result.status == "ran" and result.trace is None:
        result.status = "crashed"
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _read(path: str, limit: int, head: bool) -> str:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            if not head and size > limit:
                fh.seek(size - limit)
            data = fh.read(limit)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def cuda_present() -> bool:
    """A cheap look for an NVIDIA GPU, without importing any framework."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    if os.path.exists("/dev/nvidia0") or os.path.isdir("/proc/driver/nvidia/gpus") and os.listdir("/proc/driver/nvidia/gpus"):
        return True
    return False
