"""Run one variant of a program in a fresh, limited, isolated subprocess and collect its trace.

Isolation (see README, "What the verifier isolates"): each variant runs in a private
copy of the program's folder (its cwd and ``__file__`` point there; HOME and TMPDIR
are private too) with a scrubbed environment, file-size/process-count/memory/CPU
limits, and -- where ``unshare`` works (Linux) -- in its own network and PID
namespaces, so it has no network and every process it starts dies with it; as root
it runs as ``nobody`` (the child drops privileges before any framework is imported).

The trace travels over an inherited pipe: the config (with the pipe's number and a
per-run token) comes on the child's stdin, which the child reads and closes before the
program starts; no file holds either. A trace that is not exactly one frame carrying
the token is rejected (``RunResult.tampered``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import re
import secrets
import stat
import threading
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

from scopelint.runtime_check import sandbox

CHILD = str(Path(__file__).resolve().with_name("_child.py"))
DEFAULT_MEMORY_MB = 4096  # RLIMIT_AS: torch+mxnet map ~1.5 GB of address space at rest
STDOUT_LIMIT = 1 << 20
TRACE_LIMIT = 64 << 20  # bytes read from the trace pipe at most
DEFAULT_FILE_MB = 1024  # RLIMIT_FSIZE: the largest file a variant may write
DEFAULT_NPROC = 256  # RLIMIT_NPROC (counts the unprivileged user's processes and threads)
COPY_LIMIT = 64 << 20  # bytes of the program's folder copied into the sandbox at most
COPY_FILE_LIMIT = 16 << 20  # larger files are not copied
COPY_MAX_FILES = 2000
COPY_MAX_ENTRIES = 20000  # names looked at, at most (a program in / or ~ copies little)
COPY_DEPTH = 3  # folders below the program's, at most
COPY_SKIP = {".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"}
TRACE_MAGIC = b"SCOPELINT-TRACE"
# What the scrubbed environment keeps of the verifier's (names, then prefixes).
ENV_KEEP = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
            "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "SYSTEMROOT", "_SCOPELINT_FORCE_ONEDNN_ERROR"}
ENV_KEEP_PREFIXES = ("LC_", "NVIDIA_", "MXNET_", "KMP_", "ONEDNN_", "DNNL_")
FRAMEWORK_IMPORT = re.compile(r"^\s*(?:import|from)\s+(torch|mxnet)\b", re.MULTILINE)


def frameworks_of(source: str) -> List[str]:
    return sorted(set(FRAMEWORK_IMPORT.findall(source)))


def _megabytes(variable: str, default: int, floor: int) -> int:
    """``$variable`` in MB (``default`` when unset or not a number), at least ``floor``, in bytes."""
    try:
        mb = int(os.environ.get(variable, default))
    except ValueError:
        mb = default
    return max(mb, floor) << 20


def memory_limit_bytes() -> int:
    return _megabytes("SCOPELINT_VERIFY_MEMORY_MB", DEFAULT_MEMORY_MB, 512)


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
    tampered: Optional[str] = None  # why the trace channel's content is not the child's trace


@dataclass(frozen=True)
class Isolation:
    """What this machine lets the harness do; ``warning`` is None when all of it works.

    ``mode``: ``"bwrap"`` (bubblewrap: ``runtime_check.sandbox``), ``"unshare"`` (the
    fallback: network, PID and mount namespaces from util-linux's ``unshare``, and the
    seccomp filter the child installs) or ``"none"``."""

    namespaces: List[str]  # the ``unshare`` command line prefix (the fallback), or []
    uid: Optional[int]  # the child drops to this user (as root), else stays the verifier's
    gid: Optional[int]
    warning: Optional[str]
    mode: str = "none"
    userns: bool = False  # bwrap: a new user namespace (False: run by root, without one)
    description: str = ""  # what the sandbox is, in words (``scopelint verify --explain-sandbox``)


BWRAP_WHY = "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"


@functools.lru_cache(maxsize=None)
def isolation() -> Isolation:
    """Probe once: bubblewrap first (as root: without a user namespace, the child then
    dropping to ``nobody``; else with one), else ``unshare``'s namespaces and, as root,
    user ``nobody``."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    why_not = BWRAP_WHY
    if sys.platform.startswith("linux") and os.environ.get("SCOPELINT_VERIFY_NO_NAMESPACES") != "1":
        if sandbox.bwrap_path():
            found, why_not = _probe_bwrap(root)
            if found is not None:
                return found
        else:
            why_not = BWRAP_WHY if os.environ.get("SCOPELINT_VERIFY_NO_BWRAP") != "1" else "bubblewrap turned off (SCOPELINT_VERIFY_NO_BWRAP=1)"
    return _fallback(root, why_not)


def _probe_bwrap(root: bool):
    """(Isolation, "") where bubblewrap runs Python here, else (None, why not)."""
    tmp = tempfile.mkdtemp(prefix="scopelint-probe-")
    try:
        os.chmod(tmp, 0o711)
        box = os.path.join(tmp, "box")
        os.makedirs(box)
        found = [m for m in ("torch", "mxnet") if _find_spec(m)]
        check = ("import importlib.util as u, sys;open(%r).close();"
                 "sys.exit(3) if not all(u.find_spec(m) for m in %r) else print('sandboxed')" % (CHILD, found))
        drop = "import os;os.setgroups([]);os.setgid(%d);os.setuid(%d);" % (NOBODY, NOBODY)
        tries = []
        if root and os.environ.get("SCOPELINT_VERIFY_AS_ROOT") != "1":
            tries.append(("root, no user namespace, the child becomes nobody", False, True))
        tries.append(("a user namespace", True, False))
        if root:
            tries.append(("root, no user namespace", False, False))
        errors = []
        for label, userns, as_nobody in tries:
            os.chown(box, NOBODY if as_nobody else os.getuid(), NOBODY if as_nobody else os.getgid())
            fd = sandbox.seccomp_pipe(True)
            try:
                cmd = sandbox.command(box, box, os.path.join(tmp, "etc"), extra_ro=[CHILD], userns=userns,
                                      seccomp_fd=fd, keep_setuid=as_nobody)
                ok, why = sandbox.probe(cmd + [sys.executable, "-c", (drop if as_nobody else "") + check], pass_fds=() if fd is None else (fd,))
            finally:
                if fd is not None:
                    os.close(fd)
            if ok:
                uid = NOBODY if as_nobody else None
                desc = _describe_bwrap(userns, as_nobody, root, fd is not None)
                warning = None
                if root and not as_nobody:
                    warning = ("weaker isolation: bubblewrap runs the program as root " + ("in a user namespace" if userns else "without a user namespace") +
                               ", without capabilities (user nobody cannot run Python here): the files bound into the sandbox are "
                               "read-only, but a fork bomb is bounded only by the PID namespace, not RLIMIT_NPROC")
                if fd is None:
                    warning = ((warning + "; ") if warning else "weaker isolation: ") + f"no seccomp filter on {platform.machine()}"
                return Isolation([], uid, NOBODY if as_nobody else None, warning, "bwrap", userns, desc), ""
            errors.append(f"{label}: {why}")
        return None, "bubblewrap does not run here (" + "; ".join(errors) + ")"
    finally:
        _remove(tmp)


NOBODY = 65534


def _describe_bwrap(userns: bool, as_nobody: bool, root: bool, seccomp: bool) -> str:
    who = ("user nobody (65534: the child drops root before the program or any framework is imported)" if as_nobody
           else "root in a user namespace, without capabilities" if root and userns
           else "root without capabilities" if root else "your user, in a user namespace")
    return (f"bubblewrap: the program runs as {who}; new mount, PID, network, IPC, UTS and cgroup namespaces"
            f"{' and a user namespace' if userns else ''}; a new root holding only read-only binds of /usr, the /bin and /lib links, a few /etc files "
            "(its own passwd and group), Python's folders and the frameworks', plus its private box; a fresh /proc, a minimal "
            "/dev and an empty /tmp; --new-session, --die-with-parent" + (", seccomp" if seccomp else ""))


def _fallback(root: bool, bwrap_why: str) -> Isolation:
    """``unshare``'s network, PID and mount namespaces (and, as root, user ``nobody``)."""
    weak = [bwrap_why]
    prefix: List[str] = []
    if sys.platform.startswith("linux") and shutil.which("unshare") and os.environ.get("SCOPELINT_VERIFY_NO_NAMESPACES") != "1":
        cmd = ["unshare"] + ([] if root else ["--user", "--map-root-user"]) + ["--net", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "private"]
        try:
            ok = subprocess.run(cmd + ["true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        prefix = cmd if ok else []
    if prefix:
        weak.append("unshare fallback: network, PID and mount namespaces and a seccomp filter (no UNIX sockets at all: "
                    "DataLoader workers cannot pass tensors), but the host's /proc and /dev, and every file its user may read")
    else:
        weak.append("no network or PID namespace here (unshare unavailable): the program can reach the network and a process it detaches may outlive the run")
    uid = gid = None
    if root:
        uid, gid = _unprivileged_user()
        if uid is None:
            if not prefix:
                weak.append("runs as root (user nobody cannot run Python here): it can write files outside its private copy")
            else:
                weak.append("runs as root (user nobody cannot run Python here), without capabilities, every mount but its box read-only: it can read root's files")
    elif sys.platform.startswith("linux") or sys.platform == "darwin":
        weak.append("runs as your user: it can write your files by absolute path")
    else:
        weak.append(f"no sandbox on {sys.platform}: only a private folder, a scrubbed environment and a timeout")
    mode = "unshare" if prefix else "none"
    return Isolation(prefix, uid, gid, "weaker isolation: " + "; ".join(weak), mode, False, "; ".join(weak))


def _unprivileged_user():
    if os.environ.get("SCOPELINT_VERIFY_AS_ROOT") == "1":
        return None, None
    try:
        import pwd

        pw = pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        return None, None
    found = [m for m in ("torch", "mxnet") if _find_spec(m)]
    probe = (
        "import os,sys,importlib.util as u;os.setgroups([]);os.setgid(%d);os.setuid(%d);"
        "open(%r).close();open(u.find_spec('pkgutil').origin).close();"
        "sys.exit(0 if all(u.find_spec(m) for m in %r) else 3)" % (pw.pw_gid, pw.pw_uid, CHILD, found)
    )
    try:
        ok = subprocess.run([sys.executable, "-I", "-c", probe], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return (pw.pw_uid, pw.pw_gid) if ok else (None, None)


def _find_spec(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def file_limit_bytes() -> int:
    return _megabytes("SCOPELINT_VERIFY_FILE_MB", DEFAULT_FILE_MB, 1)


def onednn_failure(run: RunResult) -> Optional[str]:
    """The exception, as text, when this run failed only because oneDNN (on) refused an
    operation on this processor; None otherwise (and for a run with oneDNN off)."""
    exc = (run.trace or {}).get("exception") or {}
    if not run.onednn or run.status != "ran" or (run.trace or {}).get("status") != "exception" or not exc.get("onednn"):
        return None
    return f"{exc.get('type')}: {exc.get('message')}"


def child_env(device: str, onednn: bool = True, home: Optional[str] = None) -> dict:
    """A scrubbed environment: what Python and the frameworks need, no secrets."""
    env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    if home is not None:
        env.update(HOME=home, USERPROFILE=home, TMPDIR=os.path.join(home, "tmp"), TEMP=os.path.join(home, "tmp"),
                   TMP=os.path.join(home, "tmp"), XDG_CACHE_HOME=os.path.join(home, ".cache"), MPLCONFIGDIR=os.path.join(home, ".mpl"))
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
    folder: Optional[str] = None, watch: Sequence[int] = (), realign: Optional[List] = None, prelude: Optional[str] = None,
    relpath: Optional[str] = None, module: Optional[str] = None, paths: Sequence[str] = (), cwd: Optional[str] = None,
    standins: Sequence[str] = (), watch_recording: Sequence[int] = (),
) -> RunResult:
    """Run ``source`` (saved as ``filename`` in a private copy of ``folder``, or of
    nothing) under the instrumentation; ``onednn=False`` runs it with the frameworks'
    oneDNN backend off; the trace says which of the ``watch`` lines ran; ``realign``:
    line spans around which the child realigns the random streams
    (``_child.realign_rng``); ``prelude``: a synthesized harness's code, run in the
    program's globals before it (``runtime_check.synth``), in the same sandbox;
    ``relpath``: where the program stands in ``folder`` (else its base name at the top);
    ``module``: its dotted name, to run it as ``python -m`` would (a module of a
    package, ``folder`` being the folder above its top package); ``paths``: more folders
    of ``folder`` its imports are found in; ``cwd``: its working folder in ``folder``
    (else the program's own); ``standins``: missing modules its imports get an inert
    stand-in for (``runtime_check.standins``); ``watch_recording``: lines the trace says
    whether they ran while MXNet recorded (``reached_recording``)."""
    tmp = tempfile.mkdtemp(prefix="scopelint-verify-")
    try:
        return _run_in(tmp, source, filename, frameworks, device, timeout, seed, onednn, folder, list(watch), realign, prelude,
                       relpath, module, paths, cwd, list(standins), list(watch_recording))
    finally:
        _remove(tmp)


def _remove(path: str) -> None:
    def writable(func, p, exc):  # the program may have made its files read-only
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=writable)


def copy_folder(src: str, dst: str) -> None:
    """Copy the program's folder (bounded: no VCS/venv/cache folders, no links, no big
    files) so that the program finds its data files next to it."""
    budget, files, seen = COPY_LIMIT, 0, 0
    src = os.path.abspath(src)
    for here, dirs, names in os.walk(src):
        rel = os.path.relpath(here, src)
        depth = 0 if rel == "." else rel.count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if d not in COPY_SKIP and not d.startswith(".") and depth < COPY_DEPTH
                         and not os.path.islink(os.path.join(here, d)))
        seen += len(names) + len(dirs)
        if seen > COPY_MAX_ENTRIES or files >= COPY_MAX_FILES or budget <= 0:
            break
        target = os.path.join(dst, rel)
        os.makedirs(target, exist_ok=True)
        for name in sorted(names):
            path = os.path.join(here, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_size > COPY_FILE_LIMIT or st.st_size > budget or files >= COPY_MAX_FILES:
                continue
            try:
                shutil.copyfile(path, os.path.join(target, name))
            except OSError:
                continue
            budget -= st.st_size
            files += 1


def _chown_tree(path: str, uid: int, gid: int) -> None:
    for here, dirs, names in os.walk(path):
        os.chown(here, uid, gid)
        for name in names:
            os.chown(os.path.join(here, name), uid, gid, follow_symlinks=False)


def _run_in(tmp: str, source: str, filename: str, frameworks: List[str], device: str, timeout: float, seed: int,
            onednn: bool, folder: Optional[str] = None, watch: Sequence[int] = (), realign=None, prelude=None,
            relpath: Optional[str] = None, module: Optional[str] = None, paths: Sequence[str] = (),
            cwd: Optional[str] = None, standins: Sequence[str] = (), watch_recording: Sequence[int] = ()) -> RunResult:
    iso = isolation()
    os.chmod(tmp, 0o711)  # the sandbox's user may pass through, not list (stdout, stderr stay private)
    box = os.path.join(tmp, "box")
    workdir, home = os.path.join(box, "work"), os.path.join(box, "home")
    os.makedirs(workdir)
    os.makedirs(os.path.join(home, "tmp"))
    if folder and os.path.isdir(folder):
        copy_folder(folder, workdir)
    rel = os.path.normpath(relpath) if relpath else ""
    if not rel or rel.startswith("..") or os.path.isabs(rel):
        rel, module, paths, cwd = os.path.basename(filename) or "program.py", None, (), None

    def inside(p: str) -> Optional[str]:  # a folder of the copy, never one outside it
        return None if os.path.isabs(p) or os.path.normpath(p).startswith("..") else os.path.normpath(os.path.join(workdir, p))

    program = os.path.join(workdir, rel)
    if not program.endswith(".py"):
        program += ".py"
    os.makedirs(os.path.dirname(program), exist_ok=True)
    with open(program, "w", encoding="utf-8") as fh:
        fh.write(source)
    if iso.uid is not None:
        _chown_tree(box, iso.uid, iso.gid)
    memory = memory_limit_bytes()
    token = secrets.token_hex(16)
    trace_r, trace_w = os.pipe()
    bwrap = iso.mode == "bwrap"
    cfg = {
        "program": program,
        "trace_fd": trace_w,
        "token": token,
        "frameworks": frameworks,
        "device": device,
        "seed": seed,
        "memory_bytes": memory,
        "file_bytes": file_limit_bytes(),
        "nproc": DEFAULT_NPROC if iso.uid is not None else None,
        "uid": iso.uid,
        "sandbox": box,
        "lockdown": not bwrap and bool(iso.namespaces) and iso.uid is None and (os.geteuid() == 0 or "--user" in iso.namespaces),
        "gid": iso.gid,
        "cpu_seconds": int(timeout * 2) + 10,
        "mentions_cuda": bool(re.search(r"cuda|gpu", source)),
        "onednn": onednn,
        "watch": sorted(set(watch)),
        "watch_recording": sorted(set(watch_recording)),
        "realign": [list(r) for r in realign or []],
        "prelude": prelude,
        "module": module,
        "root": workdir,
        "paths": [d for d in (inside(p) for p in paths) if d],
        "cwd": inside(cwd) if cwd else None,
        "standins": list(standins),
    }
    if not bwrap and sys.platform.startswith("linux"):  # (bubblewrap loads it itself)
        prog = sandbox.filter_program(unix_sockets=False)
        if prog is not None:
            cfg["seccomp"] = prog.hex()
    cfg_r, cfg_w = os.pipe()
    seccomp_fd = None
    prefix = iso.namespaces
    if bwrap:
        seccomp_fd = sandbox.seccomp_pipe(unix_sockets=True)
        prefix = sandbox.command(box, workdir, os.path.join(tmp, "etc"), extra_ro=[CHILD], userns=iso.userns,
                                 cuda=device == "cuda", seccomp_fd=seccomp_fd, keep_setuid=iso.uid is not None)
    out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
    result = RunResult("ran", timeout=timeout, memory_bytes=memory, onednn=onednn)
    chunks: List[bytes] = []
    start = time.monotonic()
    proc = None
    try:
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            os.chmod(out_path, 0o600)
            os.chmod(err_path, 0o600)
            try:
                with _LIVE_LOCK:
                    if STOPPING.is_set():
                        raise OSError("the verification was interrupted")
                    proc = subprocess.Popen(
                        (prefix if bwrap or not prefix else _pdeathsig() + prefix) + [sys.executable, CHILD],
                        cwd=workdir,
                        stdin=cfg_r,
                        stdout=out,
                        stderr=err,
                        pass_fds=(trace_w,) if seccomp_fd is None else (trace_w, seccomp_fd),
                        env=child_env(device, onednn, home),
                        start_new_session=True,
                    )
                    _LIVE.add(proc)
            except OSError as exc:
                result.status = "failed-to-start"
                result.notes.append(str(exc))
                return result
            finally:
                os.close(cfg_r)
                os.close(trace_w)
                trace_w = -1
                if seccomp_fd is not None:
                    os.close(seccomp_fd)
            reader = threading.Thread(target=_drain, args=(trace_r, chunks), daemon=True)
            reader.start()
            try:
                with os.fdopen(cfg_w, "w") as fh:
                    cfg_w = -1
                    json.dump(cfg, fh)
            except OSError:
                pass  # the child died before reading it: no trace
            try:
                result.returncode = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                result.status = "timeout"
            finally:
                _kill_tree(proc)
                if result.returncode is None:
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        pass
            reader.join(timeout=5)  # EOF once every holder of the write end is gone
    finally:
        if proc is not None:
            with _LIVE_LOCK:
                _LIVE.discard(proc)
        for fd in (cfg_w, trace_w):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
    result.seconds = time.monotonic() - start
    result.stdout = _read(out_path, STDOUT_LIMIT, head=True)
    result.stderr_tail = _read(err_path, 4000, head=False)
    data = b"".join(chunks)
    if data:
        result.trace, result.tampered = parse_trace(data, token)
        if result.tampered:
            result.notes.append(result.tampered)
    if result.status == "ran" and result.trace is None:
        result.status = "crashed"
    if (iso.namespaces or bwrap) and result.returncode is not None and result.returncode > 128 and result.trace is None:
        result.returncode = -(result.returncode - 128)  # unshare and bwrap report their child's signal as 128+N
    return result


# Every variant running now, so that an interrupted verification (Ctrl-C, SIGTERM) can
# end them at once (``stop_all``), and start no more.
_LIVE: set = set()
_LIVE_LOCK = threading.Lock()
STOPPING = threading.Event()


def stop_all() -> None:
    """Kill every running variant and everything it started; start none after this."""
    with _LIVE_LOCK:
        STOPPING.set()
        live = list(_LIVE)
    for proc in live:
        _kill_tree(proc)


class Terminated(KeyboardInterrupt):
    """SIGTERM during a verification (``interruptible``)."""

    signum = signal.SIGTERM


@contextlib.contextmanager
def interruptible():
    """While verifying: SIGTERM raises ``Terminated`` (in the main thread, where Python
    runs signal handlers) so that the variants are ended (``stop_all``) and their
    folders removed, as Ctrl-C's ``KeyboardInterrupt`` does; elsewhere nothing changes."""
    STOPPING.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    except KeyboardInterrupt:
        stop_all()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@functools.lru_cache(maxsize=None)
def _pdeathsig() -> List[str]:
    """The fallback's launcher dies with the verifier (``setpriv --pdeathsig``, from
    util-linux as ``unshare`` is), and ``unshare --kill-child`` takes the program with it."""
    setpriv = shutil.which("setpriv")
    if setpriv:
        try:
            if subprocess.run([setpriv, "--pdeathsig", "KILL", "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20).returncode == 0:
                return [setpriv, "--pdeathsig", "KILL"]
        except (OSError, subprocess.SubprocessError):
            pass
    return []


def _drain(fd: int, chunks: List[bytes]) -> None:
    total = 0
    try:
        while True:
            data = os.read(fd, 1 << 16)
            if not data:
                break
            total += len(data)
            if total <= TRACE_LIMIT:
                chunks.append(data)
    except OSError:
        pass
    finally:
        os.close(fd)


def parse_trace(data: bytes, token: str):
    """(trace, None), or (None, why) when the channel holds anything but exactly one
    frame ``SCOPELINT-TRACE <token> <length>\\n<json>`` from the child."""
    head, sep, rest = data.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 3 or parts[0] != TRACE_MAGIC or not secrets.compare_digest(parts[1], token.encode()):
        return None, "the trace channel held something other than the verifier's trace (written by the program?)"
    try:
        n = int(parts[2])
    except ValueError:
        return None, "the trace channel's frame is malformed"
    if len(rest) != n:
        return None, "the trace channel held more or less than one trace (written by the program?)"
    try:
        trace = json.loads(rest.decode("utf-8"))
    except ValueError as exc:
        return None, f"unreadable trace: {exc}"
    problem = trace_problem(trace)
    if problem:
        return None, f"a malformed trace ({problem}): the program changed the instrumentation's data?"
    return trace, None


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _num(x) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) or x in ("nan", "inf", "-inf")


def _opt(check):
    return lambda x: x is None or check(x)


def _list_of(check):
    return lambda x: isinstance(x, list) and all(check(v) for v in x)


def _str(x) -> bool:
    return isinstance(x, str)


def _bool(x) -> bool:
    return isinstance(x, bool)


def _summary(x) -> bool:
    if x is None:
        return True
    if not isinstance(x, dict) or not _list_of(_int)(x.get("shape", [])):
        return False
    return all(_num(x[k]) for k in ("sum", "abs") if k in x) and _list_of(_num)(x.get("head", []))


def _fields(spec):
    def check(x) -> bool:
        return isinstance(x, dict) and all(k not in x or ok(x[k]) for k, ok in spec.items())

    return check


_EVENT = {"line": _opt(_int), "seq": _int, "api": _str, "what": _str, "names": _list_of(_str), "recorded": _bool,
          "training": _bool, "grads": _list_of(_summary), "params": _list_of(_summary), "values": _list_of(_summary)}
_TRACE = {
    "status": lambda x: x in ("ok", "exit", "exception", "memory"),
    "exception": _opt(_fields({"type": _str, "module": _str, "message": _str, "line": _opt(_int), "onednn": _bool})),
    "exit": _opt(_fields({"how": _str, "code": lambda c: c is None or _int(c) or _str(c), "line": _opt(_int)})),
    "frameworks": _list_of(_str), "missing": _list_of(_str), "device_map": _list_of(_str), "no_cuda": _bool,
    "backward": _list_of(_fields(_EVENT)), "grad": _list_of(_fields(_EVENT)), "steps": _list_of(_fields(_EVENT)),
    "outputs": _list_of(_fields(_EVENT)),
    "counts": lambda x: isinstance(x, dict) and all(_int(v) for v in x.values()),
    "graph": _opt(lambda x: isinstance(x, dict) and all(_int(v) for v in x.values())),
    "rss_start_kb": _int, "rss_peak_kb": _int, "seconds": _num, "cpu_seconds": _num, "setup_seconds": _num,
    "instrumentation_errors": _list_of(_str), "isolation_errors": _list_of(_str), "reached": _list_of(_int), "reached_recording": _list_of(_int),
    "realigned": _int, "in_harness": _bool, "harness_failed": _bool,
}
_REQUIRED = ("status", "exception", "exit", "backward", "grad", "steps", "outputs", "counts")


def trace_problem(trace) -> Optional[str]:
    """What is wrong with a trace's shape (a field of the wrong type, a missing one),
    or None: what the verdict reads is what the child writes, whatever the program
    did to the instrumentation's objects (``gc`` reaches them)."""
    if not isinstance(trace, dict):
        return f"a {type(trace).__name__}, not an object"
    missing = [k for k in _REQUIRED if k not in trace]
    if missing:
        return "no " + ", ".join(missing)
    bad = [k for k, ok in _TRACE.items() if k in trace and not ok(trace[k])]
    if bad:
        return "bad " + ", ".join(bad)
    return None


def _kill_tree(proc: subprocess.Popen) -> None:
    """Kill the variant and everything it started: in a PID namespace, killing its
    init (the child of ``unshare``) makes the kernel kill every process in it; then the
    session's process group, then the launcher."""
    for pid in _children(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _kill_group(proc)
    try:
        proc.kill()
    except OSError:
        pass


def _children(pid: int) -> List[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except (OSError, ValueError):
        return []


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
