"""Issue 44: the verifier's sandbox holds as root and as an unprivileged user.

Each hostile program below is one of the battery's probes (written outside the
project): write to ``/dev``, read the host's ``/proc`` (other processes' command lines)
or rename the host through ``/proc/sys/kernel/hostname``, read root-owned secrets,
send data to a path socket on disk, survive SIGTERM/SIGINT to ``scopelint verify``,
and crash the verifier with a malformed trace forged through ``gc``.

Every program runs twice: as the verifier's user (root on CI and here) and as an
unprivileged user (``nobody``, through ``setpriv``; where the tests do not run as root,
that is the user running them). They need bubblewrap (Debian's ``bubblewrap``) and,
for the unprivileged run, user namespaces: without them they are skipped, saying why.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import textwrap
import time
from pathlib import Path

import pytest

from scopelint.runtime_check import harness, sandbox

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534
TOKEN = f"scopelint-hold-{os.getpid()}-{time.time_ns()}"
HAS_TORCH = importlib.util.find_spec("torch") is not None

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")

_AS_USER = f"""
import json, site, sys
site.addsitedir({sysconfig.get_paths()["purelib"]!r})
from scopelint.runtime_check import harness
iso = harness.isolation()
src = sys.stdin.read()
r = harness.run_variant(src, "probe.py", [], "cpu", 60.0)
print(json.dumps({{"mode": iso.mode, "warning": iso.warning, "stdout": r.stdout, "status": r.status,
                  "stderr": r.stderr_tail, "uid": __import__("os").getuid()}}))
"""


# (PYTHONPATH: the frameworks for the child, where the user's Python is not the venv's)
USER_ENV = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent", "LANG": "C.UTF-8",
            "PYTHONPATH": sysconfig.get_paths()["purelib"]}


def _user_python():
    """(command prefix, why not): a Python the unprivileged user can run, with this
    checkout's packages: the tests' own where that user can read it, else the system's
    of the same version (its ``site-packages`` added)."""
    if not shutil.which("setpriv") and IS_ROOT:
        return None, "setpriv (util-linux) is not installed"
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if IS_ROOT else []
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for exe in (sys.executable, shutil.which(version), f"/usr/bin/{version}"):
        if not exe or not os.path.exists(exe):
            continue
        probe = _AS_USER.split("from scopelint", 1)[0] + (  # (its interpreter and standard library readable: bwrap binds them)
            "import os, sysconfig\nassert os.access(os.path.realpath(sys.executable), os.R_OK | os.X_OK)\n"
            "os.listdir(sysconfig.get_paths()['stdlib'])\nfrom scopelint.runtime_check import harness\nprint('ok')\n")
        try:
            out = subprocess.run(prefix + [exe, "-c", probe], capture_output=True, text=True, timeout=120, cwd="/",
                                 env=USER_ENV)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip() == "ok":
            return prefix + [exe], ""
    return None, f"no Python that user {NOBODY} can run with this checkout's packages (the venv's is unreadable to it)"


USER_PY, USER_WHY = _user_python()
ISO = harness.isolation()


def _run(mode: str, source: str, tmp_path: Path) -> dict:
    """Run ``source`` in the sandbox as ``mode`` ("root": the tests' own user;
    "user": unprivileged) and return what it printed (and how it was isolated)."""
    source = textwrap.dedent(source)
    if mode == "root":
        if not IS_ROOT:
            pytest.skip("the tests do not run as root here")
        if ISO.mode != "bwrap":
            pytest.skip(f"bubblewrap is not usable here: {ISO.warning}")
        r = harness.run_variant(source, "probe.py", [], "cpu", 60.0)
        return {"mode": ISO.mode, "stdout": r.stdout, "status": r.status, "stderr": r.stderr_tail, "warning": ISO.warning}
    if USER_PY is None:
        pytest.skip(USER_WHY)
    proc = subprocess.run(USER_PY + ["-c", _AS_USER], input=source, capture_output=True, text=True, timeout=180, cwd="/",
                          env=USER_ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if got["mode"] != "bwrap":
        pytest.skip(f"bubblewrap (or user namespaces) not usable by an unprivileged user here: {got['warning']}")
    return got


MODES = pytest.mark.parametrize("mode", ["root", "user"])


@MODES
def test_dev_is_private_and_minimal(mode, tmp_path):
    got = _run(mode, f"""
    import os
    made = []
    for name in ({TOKEN!r}, {TOKEN + "-dir"!r}):
        try:
            if name.endswith("-dir"):
                os.mkdir("/dev/" + name)
            else:
                open("/dev/" + name, "w").write("x")
            made.append(name)
        except OSError as exc:
            pass
    print("DEV", sorted(os.listdir("/dev")))
    print("MADE", made)
    """, tmp_path)
    assert "DEV" in got["stdout"], got
    assert not [n for n in os.listdir("/dev") if n.startswith(TOKEN)], "a file the program made in /dev outlived it"
    listing = eval(got["stdout"].split("DEV ", 1)[1].splitlines()[0])
    assert set(listing) <= {"null", "zero", "full", "random", "urandom", "tty", "pts", "ptmx", "shm", "fd", "stdin", "stdout",
                            "stderr", "core", "console", "mqueue", TOKEN, TOKEN + "-dir"}, listing
    assert not any(n.startswith(("sd", "nvme", "loop", "mem", "kmsg", "port")) for n in listing)


@MODES
def test_proc_is_its_own(mode, tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", TOKEN])
    host = socket.gethostname()
    try:
        got = _run(mode, f"""
        import os
        seen = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if {TOKEN!r}.encode() in open(f"/proc/{{pid}}/cmdline", "rb").read():
                        seen.append(pid)
                except OSError:
                    pass
        print("PIDS", len([p for p in os.listdir("/proc") if p.isdigit()]))
        print("SEEN", seen)
        try:
            open("/proc/sys/kernel/hostname", "w").write("pwned-by-scopelint-test")
            print("HOSTNAME WRITTEN")
        except OSError as exc:
            print("HOSTNAME REFUSED", exc)
        """, tmp_path)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert "SEEN []" in got["stdout"], got
    assert int(got["stdout"].split("PIDS ", 1)[1].split()[0]) < 10, got  # its own PID namespace's
    assert socket.gethostname() == host != "pwned-by-scopelint-test"


@MODES
def test_secrets_are_unreadable(mode, tmp_path):
    home = Path(os.path.expanduser("~"))
    secret = home / f".{TOKEN}-id_rsa"
    try:
        secret.write_text(f"SECRET-{TOKEN}\n")
    except OSError:
        pytest.skip(f"cannot write a test secret into {home}")
    os.chmod(secret, 0o600)
    try:
        got = _run(mode, f"""
        for path in ("/etc/shadow", "/etc/gshadow", {str(secret)!r}):
            try:
                print("READ", path, open(path).read())
            except OSError as exc:
                print("DENIED", path, type(exc).__name__)
        """, tmp_path)
    finally:
        secret.unlink()
    assert "READ" not in got["stdout"] and f"SECRET-{TOKEN}" not in got["stdout"], got
    assert got["stdout"].count("DENIED") == 3, got


@MODES
def test_path_sockets_are_unreachable(mode, tmp_path):
    places = [tmp_path / "agent.sock"]
    if os.path.isdir("/run") and os.access("/run", os.W_OK):
        places.append(Path("/run") / f"{TOKEN}.sock")
    listeners = []
    try:
        for place in places:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(str(place))
            os.chmod(place, 0o777)
            s.listen(4)
            s.settimeout(0.3)
            listeners.append(s)
        for d in {p.parent for p in places}:
            if d != Path("/run"):
                os.chmod(d, 0o755)
        got = _run(mode, f"""
        import socket
        for path in {[str(p) for p in places]!r}:
            try:
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.settimeout(2)
                c.connect(path)
                c.sendall(b"LEAKED")
                print("CONNECTED", path)
            except OSError as exc:
                print("BLOCKED", path, type(exc).__name__)
        """, tmp_path)
        for s in listeners:
            with pytest.raises(socket.timeout):
                s.accept()
    finally:
        for s in listeners:
            s.close()
        for p in places:
            if p.exists():
                p.unlink()
    assert "CONNECTED" not in got["stdout"] and got["stdout"].count("BLOCKED") == len(places), got


@MODES
def test_seccomp_refuses_keyrings_and_namespaces(mode, tmp_path):
    got = _run(mode, """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    for name, nr, args in (("keyctl", 250, (0, 0)), ("unshare", 272, (0x10000000,))):
        ret = libc.syscall(nr, *args)
        print("SYSCALL", name, ret, ctypes.get_errno())
    print("SECCOMP", open("/proc/self/status").read().split("Seccomp:")[1].split()[0])
    """, tmp_path)
    if os.uname().machine != "x86_64":
        pytest.skip("the syscall numbers above are x86_64's")
    assert "SECCOMP 2" in got["stdout"], got
    assert "SYSCALL keyctl -1 1" in got["stdout"] and "SYSCALL unshare -1 1" in got["stdout"], got  # EPERM


@MODES
def test_frameworks_run_inside(mode, tmp_path):
    if not HAS_TORCH:
        pytest.skip("needs torch")
    got = _run(mode, """
    import importlib.util
    import torch
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    print("TORCH", x.grad.tolist())
    if importlib.util.find_spec("mxnet") is not None:
        import mxnet as mx
        from mxnet import autograd
        a = mx.nd.ones(3)
        a.attach_grad()
        with autograd.record():
            b = (a * 3).sum()
        b.backward()
        print("MXNET", a.grad.asnumpy().tolist())
    from torch.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(torch.arange(6.0)), batch_size=3, num_workers=2)  # tensors shared by the workers
    print("LOADER", [b[0].tolist() for b in loader])
    """, tmp_path)
    assert "TORCH [2.0, 2.0, 2.0]" in got["stdout"], got
    assert "LOADER [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]" in got["stdout"], got
    if importlib.util.find_spec("mxnet") is not None:
        assert "MXNET [3.0, 3.0, 3.0]" in got["stdout"], got


def test_fallback_is_named(monkeypatch):
    monkeypatch.setenv("SCOPELINT_VERIFY_NO_BWRAP", "1")
    sandbox.bwrap_path.cache_clear()
    harness.isolation.cache_clear()
    try:
        iso = harness.isolation()
        assert iso.mode in ("unshare", "none")
        assert iso.warning and "bubblewrap" in iso.warning, iso
    finally:
        monkeypatch.delenv("SCOPELINT_VERIFY_NO_BWRAP")
        sandbox.bwrap_path.cache_clear()
        harness.isolation.cache_clear()


def test_fallback_seccomp_blocks_unix_sockets(monkeypatch):
    """Without bubblewrap the host's file system is visible: no AF_UNIX socket at all."""
    monkeypatch.setenv("SCOPELINT_VERIFY_NO_BWRAP", "1")
    sandbox.bwrap_path.cache_clear()
    harness.isolation.cache_clear()
    try:
        if harness.isolation().mode != "unshare":
            pytest.skip(f"no unshare fallback here: {harness.isolation().warning}")
        r = harness.run_variant(textwrap.dedent("""
        import socket
        try:
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            print("UNIX SOCKET")
        except OSError as exc:
            print("REFUSED", exc.errno)
        a, b = socket.socketpair()
        a.sendall(b"pair")
        print("PAIR", b.recv(4))
        """), "probe.py", [], "cpu", 60.0)
    finally:
        monkeypatch.delenv("SCOPELINT_VERIFY_NO_BWRAP")
        sandbox.bwrap_path.cache_clear()
        harness.isolation.cache_clear()
    assert "REFUSED 13" in r.stdout and "PAIR b'pair'" in r.stdout, (r.stdout, r.stderr_tail)


# --- scopelint verify, interrupted -------------------------------------------------
SL101 = """\
import os, subprocess, sys, time
import torch
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {marker!r}], start_new_session=True)
time.sleep(300)
model = torch.nn.Linear(3, 1)
with torch.no_grad():
    y = model(torch.ones(2, 3))
y.sum().backward()
"""


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


def _verify_cmd(mode: str):
    script = "import sys\nfrom scopelint.cli import run\nsys.argv[0] = 'scopelint'\nrun()\n"
    if mode == "root":
        if not IS_ROOT:
            pytest.skip("the tests do not run as root here")
        return [sys.executable, "-c", script]
    if USER_PY is None:
        pytest.skip(USER_WHY)
    return USER_PY + ["-c", _AS_USER.split("from scopelint", 1)[0] + script]


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@MODES
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_end_the_program_and_its_children(mode, sig, tmp_path):
    if ISO.mode == "none":
        pytest.skip(f"no sandbox here: {ISO.warning}")
    marker = f"{TOKEN}-{sig.name}-{mode}"
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="scopelint-hold-"))  # (pytest's tmp_path is private to its user)
    os.chmod(folder, 0o755)
    prog = folder / "train.py"
    prog.write_text(SL101.format(marker=marker))
    os.chmod(prog, 0o644)
    cmd = _verify_cmd(mode) + ["verify", "--no-cache", "--verify-timeout", "280", str(prog)]
    env = dict(USER_ENV, HOME=str(folder))
    proc = subprocess.Popen(cmd, cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 120
        while not _alive(marker) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        if not _alive(marker):
            out, err = proc.communicate(timeout=60) if proc.poll() is not None else (b"", b"")
            pytest.fail(f"the program never started its child (exit {proc.returncode}): {out.decode()[-2000:]} {err.decode()[-2000:]}")
        ours = _sandboxes_holding(marker)  # (other tests may be verifying beside this one)
        started = time.monotonic()
        proc.send_signal(sig)
        rc = proc.wait(timeout=30)
        took = time.monotonic() - started
        deadline = time.monotonic() + 10
        while _alive(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _alive(marker)
        err = proc.stderr.read().decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _alive(marker):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
    assert left == [], f"the program's child outlived `scopelint verify` ({sig.name})"
    assert took < 15, took
    assert rc == 128 + sig, (rc, err[-2000:])
    assert "Traceback" not in err, err[-3000:]
    assert ours and set(_sandboxes()) & ours == set(), "the variant's folder was left behind"


def _sandboxes_holding(marker: str) -> set:
    """The sandbox folders whose copy of the program holds ``marker`` (this test's)."""
    import tempfile

    found = set()
    for name in _sandboxes():
        for here, _, files in os.walk(os.path.join(tempfile.gettempdir(), name)):
            if "train.py" in files:
                try:
                    with open(os.path.join(here, "train.py")) as fh:
                        if marker in fh.read():
                            found.add(name)
                except OSError:
                    pass
    return found


def _sandboxes():
    import tempfile

    return [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("scopelint-verify-")]


# --- a malformed trace forged through gc -------------------------------------------
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_malformed_trace_through_gc_is_inconclusive(tmp_path):
    from scopelint.engine import lint_source
    from scopelint.runner import FileResult
    from scopelint.runtime_check import oracle
    from scopelint.runtime_check.verify import verify

    prog = tmp_path / "train.py"
    prog.write_text(textwrap.dedent("""\
    import gc
    import torch


    def forge():
        for obj in gc.get_objects():
            if type(obj).__name__ == "Trace" and type(getattr(obj, "data", None)) is dict:
                obj.data["backward"] = [{"grads": "forged", "line": "x"}]
                obj.data["counts"] = "forged"


    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        y = model(torch.ones(2, 3))
    try:
        y.sum().backward()
    finally:
        forge()
    """))
    source = prog.read_text()
    lint = lint_source(source, str(prog))
    assert [f.code for f in lint.findings] == ["SL101"], lint.findings
    results = [FileResult(str(prog), str(prog), lint.findings, source=source)]
    verify(results, "cpu", 120.0, jobs=2)
    rt = results[0].findings[0].runtime
    assert rt["verdict"] == oracle.INCONCLUSIVE, rt
    assert "malformed trace" in rt["detail"], rt


@pytest.mark.parametrize("trace, problem", [
    ([], "a list, not an object"),
    ({"status": "ok"}, "no exception, exit, backward, grad, steps, outputs, counts"),
    ({"status": "ok", "exception": None, "exit": None, "backward": [{"grads": "x"}], "grad": [], "steps": [], "outputs": [],
      "counts": {}}, "bad backward"),
    ({"status": "ok", "exception": None, "exit": None, "backward": [], "grad": [], "steps": [], "outputs": [],
      "counts": {"backward": "1"}}, "bad counts"),
    ({"status": "ok", "exception": None, "exit": None, "backward": [{"grads": [{"shape": [2], "sum": 1.0, "head": ["nan", 2]}],
      "line": 3, "names": ["x"]}], "grad": [], "steps": [], "outputs": [], "counts": {"backward": 1}}, None),
])
def test_trace_shape_is_checked(trace, problem):
    assert harness.trace_problem(trace) == problem
