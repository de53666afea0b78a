"""The verifier runs the user's code: hostile programs must not change anything outside
their sandbox, outlive the run, see secrets, reach the network, stop the verifier or
forge a verdict (issue 24). Each program is an SL101 finding (backward of a value
computed under no_grad: ``confirmed:error`` when verified) plus one hostile behaviour,
placed before the flagged line."""

from __future__ import annotations

import importlib.util
import os
import socket
import textwrap
import time
from pathlib import Path

import pytest

from scopelint.engine import lint_source
from scopelint.runner import FileResult
from scopelint.runtime_check import harness, oracle
from scopelint.runtime_check.verify import verify

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
TIMEOUT = 120.0
ISO = harness.isolation()
STRONG = ISO.warning is None  # namespaces (net, PID, mount) or an unprivileged user
ISOLATED = ISO.mode != "none"  # bubblewrap, or unshare's namespaces

BODY = """\
model = torch.nn.Linear(3, 1)
x = torch.ones(2, 3)
with torch.no_grad():
    y = model(x)
y.sum().backward()
print("done")
"""


def _program(folder: Path, hostile: str, name: str = "train.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("import os, sys, time\nimport torch\n" + textwrap.dedent(hostile) + BODY, encoding="utf-8")
    return path


def _verify(*paths: Path, **kw):
    results = []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        lint = lint_source(source, str(path))
        assert [f.code for f in lint.findings] == ["SL101"], lint.findings
        results.append(FileResult(str(path), str(path), lint.findings, source=source))
    verify(results, "cpu", TIMEOUT, jobs=2)
    return [r.findings[0].runtime for r in results]


def _run(path: Path):
    source = path.read_text(encoding="utf-8")
    return harness.run_variant(source, str(path), ["torch"], "cpu", TIMEOUT, folder=str(path.parent), watch=[7])


def _alive(marker: str):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


def test_writes_stay_in_the_private_copy(tmp_path):
    folder = tmp_path / "checkout"
    folder.mkdir()
    sentinel = folder / "sentinel.txt"
    sentinel.write_text("original\n")
    (folder / "model.pt").write_bytes(b"user checkpoint")
    site = tmp_path / "site-packages"
    site.mkdir()
    path = _program(folder, f"""
    here = os.path.dirname(os.path.abspath(__file__))
    assert os.getcwd() == here and open(os.path.join(here, "sentinel.txt")).read() == "original\\n"
    open("sentinel.txt", "a").write("appended via cwd\\n")
    open(os.path.join(here, "model.pt"), "wb").write(b"overwritten")
    for target in ({str(sentinel)!r}, {str(site / "evil.pth")!r}):
        try:
            open(target, "a").write("import os\\n")
        except OSError:
            pass
    """)
    (rt,) = _verify(path)
    assert rt["verdict"] == oracle.CONFIRMED_ERROR, rt
    assert (folder / "model.pt").read_bytes() == b"user checkpoint"
    if STRONG:
        assert sentinel.read_text() == "original\n"
        assert not (site / "evil.pth").exists()
    else:
        pytest.skip(f"absolute paths are writable here: {ISO.warning}")


def test_detached_children_are_killed(tmp_path):
    marker = f"scopelint-sandbox-test-{os.getpid()}-{time.time_ns()}"
    path = _program(tmp_path / "p", f"""
    import subprocess
    for i in range(3):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {marker!r}], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", {marker!r}])
    time.sleep(0.5)
    """)
    run = _run(path)
    assert run.status == "ran", run.stderr_tail
    deadline = time.monotonic() + 5
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not ISOLATED:
        for pid in _alive(marker):
            os.kill(pid, 9)
        pytest.skip("no PID namespace here: a setsid child may outlive the run")
    assert _alive(marker) == []


def test_fork_many_bounded(tmp_path):
    marker = f"scopelint-fork-test-{os.getpid()}-{time.time_ns()}"
    path = _program(tmp_path / "p", f"""
    for i in range(50):
        try:
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", {marker!r}])
        except OSError:
            break
    """)
    run = _run(path)
    assert run.trace is not None, run.stderr_tail
    time.sleep(0.5)
    if not ISOLATED:
        for pid in _alive(marker):
            os.kill(pid, 9)
        pytest.skip("no PID namespace here")
    assert _alive(marker) == []


def test_secrets_not_in_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SCOPELINT_TEST_SECRET", "hunter2")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter3")
    monkeypatch.setenv("GITHUB_TOKEN", "hunter4")
    path = _program(tmp_path / "p", """
    print("ENV", sorted(os.environ.items()))
    print("HOME", os.environ.get("HOME"))
    """)
    run = _run(path)
    assert "ENV" in run.stdout, run.stderr_tail
    for secret in ("hunter2", "hunter3", "hunter4", "SCOPELINT_TEST_SECRET", "GITHUB_TOKEN", "AWS_"):
        assert secret not in run.stdout
    home = run.stdout.split("HOME ", 1)[1].split()[0]
    assert home != os.path.expanduser("~") and "scopelint-verify-" in home


def test_no_network(tmp_path):
    if not ISOLATED:
        pytest.skip("no network namespace here: the verifier warns of weaker isolation")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    path = _program(tmp_path / "p", f"""
    import socket
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
        print("CONNECTED")
    except OSError as exc:
        print("BLOCKED", exc)
    """)
    try:
        run = _run(path)
        assert "BLOCKED" in run.stdout and "CONNECTED" not in run.stdout, (run.stdout, run.stderr_tail)
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()


def test_forged_trace_is_rejected(tmp_path):
    # A trace that would say "refuted" (no backward call that fails), written to every
    # pipe the program can find, and to the trace file of the old layout.
    path = _program(tmp_path / "p", """
    import json, stat
    fake = json.dumps({"status": "ok", "exception": None, "exit": None, "frameworks": ["torch"], "missing": [],
                       "device_map": [], "no_cuda": False, "backward": [], "grad": [], "steps": [], "outputs": [],
                       "counts": {"backward": 0, "grad": 0, "steps": 0, "outputs": 0, "outputs_recorded": 0},
                       "graph": None, "rss_start_kb": 0, "rss_peak_kb": 0, "reached": [5, 6, 7]}).encode()
    try:
        cfg = json.load(open("../config.json"))
        open(cfg["trace"], "wb").write(fake)
    except (OSError, ValueError, KeyError):
        pass
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b"SCOPELINT-TRACE forged %d\\n" % len(fake) + fake)
        except OSError:
            pass
    os._exit(0)
    """)
    (rt,) = _verify(path)
    assert rt["verdict"] == oracle.INCONCLUSIVE, rt
    assert "trustworthy" in rt["detail"] or "never ran" in rt["detail"], rt


def test_exit_before_the_flagged_line(tmp_path):
    (rt,) = _verify(_program(tmp_path / "p", "sys.exit(0)\n"))
    assert rt["verdict"] == oracle.INCONCLUSIVE, rt
    assert "the flagged line never ran" in rt["detail"], rt


def test_killing_the_parent_ends_only_that_variant(tmp_path):
    hostile = _program(tmp_path / "a", """
    import signal
    for target in (os.getppid(), 1):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    except OSError:
        pass
    """)
    plain = _program(tmp_path / "b", "")
    rt_hostile, rt_plain = _verify(hostile, plain)
    assert rt_hostile["verdict"] in (oracle.CONFIRMED_ERROR, oracle.INCONCLUSIVE), rt_hostile
    assert rt_plain["verdict"] == oracle.CONFIRMED_ERROR, rt_plain


def test_deleting_the_sandbox(tmp_path):
    folder = tmp_path / "p"
    path = _program(folder, """
    import shutil
    shutil.rmtree(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ignore_errors=True)
    """)
    run = _run(path)
    assert run.status == "ran" and run.trace is not None, run.stderr_tail
    assert path.exists()


def test_filling_the_disk_is_inconclusive(tmp_path, monkeypatch):
    monkeypatch.setenv("SCOPELINT_VERIFY_FILE_MB", "1")
    folder = tmp_path / "p"
    path = _program(folder, """
    with open("big.bin", "wb") as fh:
        for i in range(8):
            fh.write(b"x" * (1 << 20))
    """)
    (rt,) = _verify(path)
    assert rt["verdict"] == oracle.INCONCLUSIVE, rt
    assert "File too large" in rt["detail"] or "SIGXFSZ" in rt["detail"], rt  # Python ignores SIGXFSZ: EFBIG
    assert not (folder / "big.bin").exists()
