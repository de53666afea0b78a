"""The verifier's sandbox: bubblewrap's command line, and a seccomp filter.

Bubblewrap (``bwrap``, Debian's ``bubblewrap``) runs each variant in a new root made
of read-only binds of what Python needs -- ``/usr`` (and the ``/bin``, ``/lib*``
links or folders), a few files of ``/etc`` (never ``shadow``: a ``passwd`` and a
``group`` naming only root, nobody and the verifier's user are written for it),
the interpreter's prefixes, its ``site-packages`` and the frameworks' folders -- plus
its private box (read-write), a fresh ``/proc`` of its own PID namespace, a minimal
``/dev`` (null, zero, full, random, urandom, tty, a private shm) on a tmpfs, and an
empty ``/tmp``. Every namespace is new (user where the kernel allows it, mount, PID,
network, IPC, UTS, cgroup), no capability is kept, ``--new-session`` takes the
terminal away, ``--die-with-parent`` kills it when the verifier dies, and
``--disable-userns`` (with a user namespace) stops it making more.

The seccomp filter (:func:`filter_program`, a classic BPF program built here, no
libseccomp) answers ``EPERM`` to what a training script never needs and a hostile one
would: the kernel keyrings (not namespaced), new namespaces (``unshare``, ``setns``,
``clone`` with a namespace flag; ``clone3`` answers ``ENOSYS`` so that the C library
falls back to ``clone``), mounts, module loading, ``bpf``, ``perf_event_open``,
``userfaultfd``, ``kexec``, ``reboot``, swap, ``syslog``, ``acct``, ``quotactl``,
and the terminal ioctls ``TIOCSTI``/``TIOCLINUX``; syscalls of another ABI (x32,
i386) answer ``ENOSYS``. With ``unix_sockets=False`` (the ``unshare`` fallback, where
the host's file system is visible) ``socket(AF_UNIX, ...)`` is refused too, so no
path socket on disk (docker.sock, D-Bus) can be reached; under bubblewrap no host
socket is inside the new root, and ``socketpair`` (multiprocessing) works in both.

Standard library only (``_child.py`` installs the same filter by itself in the
fallback).
"""

from __future__ import annotations

import functools
import os
import platform
import pwd
import shutil
import struct
import subprocess
import sys
import sysconfig
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

# --- seccomp ---------------------------------------------------------------------
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# (x86_64, aarch64) numbers
SYSCALLS: Dict[str, Tuple[int, int]] = {
    "socket": (41, 198), "ioctl": (16, 29), "clone": (56, 220), "clone3": (435, 435),
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218), "bpf": (321, 280),
    "perf_event_open": (298, 241), "userfaultfd": (323, 282), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106), "swapon": (167, 224),
    "swapoff": (168, 225), "reboot": (169, 142), "syslog": (103, 116), "acct": (163, 89), "quotactl": (179, 60),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442), "quotactl_fd": (443, 443),
}
DENIED = ("unshare", "setns", "mount", "umount2", "pivot_root", "keyctl", "add_key", "request_key", "bpf",
          "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
          "delete_module", "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl", "open_tree", "move_mount",
          "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "quotactl_fd")
CLONE_NAMESPACES = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
AF_UNIX = 1
EPERM, EACCES, ENOSYS = 1, 13, 38
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
LD_W_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
X32_BIT = 0x40000000


def _arch() -> Optional[str]:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine) if sys.platform.startswith("linux") else None


def filter_program(unix_sockets: bool = True, arch: Optional[str] = None) -> Optional[bytes]:
    """The filter as ``struct sock_filter`` records (what ``bwrap --seccomp`` reads and
    ``prctl(PR_SET_SECCOMP)`` takes), or None on an architecture it does not know."""
    arch = arch or _arch()
    if arch not in AUDIT_ARCH:
        return None
    which = 0 if arch == "x86_64" else 1
    nr = {name: nums[which] for name, nums in SYSCALLS.items()}
    code: List[tuple] = []  # (op, jt label or int, jf label or int, k) -- labels resolved below

    def emit(op, k=0, jt=0, jf=0):
        code.append([op, jt, jf, k])

    emit(LD_W_ABS, 4)  # seccomp_data.arch
    emit(JEQ, AUDIT_ARCH[arch], jt=1, jf=0)
    emit(RET, RET_ERRNO | ENOSYS)
    emit(LD_W_ABS, 0)  # seccomp_data.nr
    if arch == "x86_64":
        emit(JGE, X32_BIT, jt="enosys", jf=0)
    for name in DENIED:
        emit(JEQ, nr[name], jt="eperm", jf=0)
    emit(JEQ, nr["clone3"], jt="enosys", jf=0)
    emit(JEQ, nr["clone"], jt="clone", jf=0)
    emit(JEQ, nr["ioctl"], jt="ioctl", jf=0)
    if not unix_sockets:
        emit(JEQ, nr["socket"], jt="socket", jf=0)
    emit(RET, RET_ALLOW)
    labels = {}
    labels["clone"] = len(code)
    emit(LD_W_ABS, 16)  # args[0] (flags), low 32 bits
    emit(JSET, CLONE_NAMESPACES, jt="eperm", jf=0)
    emit(RET, RET_ALLOW)
    labels["ioctl"] = len(code)
    emit(LD_W_ABS, 24)  # args[1] (request), low 32 bits
    emit(JEQ, TIOCSTI, jt="eperm", jf=0)
    emit(JEQ, TIOCLINUX, jt="eperm", jf=0)
    emit(RET, RET_ALLOW)
    if not unix_sockets:
        labels["socket"] = len(code)
        emit(LD_W_ABS, 16)  # args[0] (domain)
        emit(JEQ, AF_UNIX, jt="eacces", jf=0)
        emit(RET, RET_ALLOW)
    labels["eperm"] = len(code)
    emit(RET, RET_ERRNO | EPERM)
    labels["enosys"] = len(code)
    emit(RET, RET_ERRNO | ENOSYS)
    labels["eacces"] = len(code)
    emit(RET, RET_ERRNO | EACCES)
    out = []
    for i, (op, jt, jf, k) in enumerate(code):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        assert 0 <= jt < 256 and 0 <= jf < 256
        out.append(struct.pack("=HBBI", op, jt, jf, k))
    return b"".join(out)


# --- bubblewrap ------------------------------------------------------------------
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Files of /etc that the dynamic loader, Python, NumPy and the frameworks read; no
# secret is among them (``passwd``/``group`` are written for the sandbox instead).
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ld.so.preload", "alternatives", "localtime", "timezone",
       "nsswitch.conf", "host.conf", "os-release", "lsb-release", "debian_version", "mime.types", "fonts",
       "matplotlibrc", "protocols", "services", "gai.conf")
SYS_CPU = ("/sys/devices/system/cpu", "/sys/devices/system/node")
TMPFS_BYTES = 256 << 20  # /tmp's size (the program writes to its box; this is for libraries)
SHM_BYTES = 1 << 30  # /dev/shm's (tensors shared with DataLoader workers)


@functools.lru_cache(maxsize=None)
def bwrap_path() -> Optional[str]:
    if not sys.platform.startswith("linux") or os.environ.get("SCOPELINT_VERIFY_NO_BWRAP") == "1":
        return None
    return shutil.which("bwrap")


def _real(path: str) -> str:
    return os.path.realpath(path)


def _covered(path: str, bound: Iterable[str]) -> bool:
    return any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound)


@functools.lru_cache(maxsize=None)
def python_paths(frameworks: Tuple[str, ...] = ("torch", "mxnet")) -> Tuple[str, ...]:
    """Folders the child's interpreter reads: its prefixes (the standard library, the
    interpreter itself), its site-packages, PYTHONPATH's folders and the frameworks'."""
    found: List[str] = []
    candidates = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
                  os.path.dirname(_real(sys.executable)), os.path.dirname(os.path.dirname(_real(sys.executable)))]
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            candidates.append(sysconfig.get_paths()[key])
        except KeyError:
            pass
    candidates += [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)]
    candidates += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    import importlib.util

    for name in frameworks:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                candidates.append(os.path.dirname(loc))
    for c in candidates:
        if not c or not os.path.isabs(c):
            continue
        for p in {os.path.abspath(c), _real(c)}:
            if os.path.isdir(p) and p != "/" and p not in found:
                found.append(p)
    return tuple(found)


def _passwd_lines(uid: int, gid: int) -> Tuple[str, str]:
    users = {0: ("root", 0, "/root"), 65534: ("nobody", 65534, "/nonexistent")}
    try:
        pw = pwd.getpwuid(uid)
        users.setdefault(uid, (pw.pw_name, pw.pw_gid, "/nonexistent"))
    except (KeyError, OSError):
        users.setdefault(uid, ("user", gid, "/nonexistent"))
    passwd = "".join(f"{name}:x:{u}:{g}:{name}:{home}:/usr/sbin/nologin\n" for u, (name, g, home) in sorted(users.items()))
    groups = {0: "root", 65534: "nogroup"}
    groups.setdefault(gid, "users")
    group = "".join(f"{name}:x:{g}:\n" for g, name in sorted(groups.items()))
    return passwd, group


def command(box: str, workdir: str, etc_dir: str, extra_ro: Sequence[str] = (), userns: bool = True, cuda: bool = False,
            uid: Optional[int] = None, gid: Optional[int] = None, seccomp_fd: Optional[int] = None,
            keep_setuid: bool = False) -> List[str]:
    """bwrap's argument list (up to ``--``) for a variant whose private box is ``box``;
    ``etc_dir`` is a folder (outside the box) this writes the sandbox's ``passwd`` and
    ``group`` into; ``extra_ro``: files to bind read-only at their own path (the
    child); ``userns``: a new user namespace (False: bwrap run by root without one);
    ``keep_setuid``: keep CAP_SETUID and CAP_SETGID (root without a user namespace,
    whose child drops to ``nobody`` itself, losing them)."""
    bwrap = bwrap_path() or "bwrap"
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "scopelint-sandbox"]
    if userns:
        args += ["--unshare-user", "--disable-userns"]
    args += ["--cap-drop", "ALL"]
    if keep_setuid:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    bound: List[str] = []
    made = {"/"}

    def parents(dest: str) -> List[str]:  # (bwrap would make them 0700: nobody could pass)
        out, here = [], os.path.dirname(dest)
        chain = []
        while here not in made and here != "/":
            chain.append(here)
            here = os.path.dirname(here)
        for d in reversed(chain):
            made.add(d)
            out += ["--perms", "0755", "--dir", d]
        return out

    def ro(src: str, dest: str) -> None:
        args.extend(parents(dest) + ["--ro-bind", src, dest])
        made.add(dest)

    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            ro(path, path)
            bound.append(path)
    os.makedirs(etc_dir, exist_ok=True)
    passwd, group = _passwd_lines(os.getuid() if uid is None else uid, os.getgid() if gid is None else gid)
    if keep_setuid:
        passwd, group = _passwd_lines(65534, 65534)
    for name, text in (("passwd", passwd), ("group", group)):
        with open(os.path.join(etc_dir, name), "w") as fh:
            fh.write(text)
        ro(os.path.join(etc_dir, name), f"/etc/{name}")
    for name in ETC:
        path = os.path.join("/etc", name)
        if os.path.exists(path):
            ro(path, path)
    try:
        pythons = [n for n in os.listdir("/etc") if n.startswith("python")]  # Debian: sitecustomize.py lives there
    except OSError:
        pythons = []
    for name in sorted(pythons):
        ro(os.path.join("/etc", name), os.path.join("/etc", name))
    for path in python_paths():
        if not _covered(path, bound):
            ro(path, path)
            bound.append(path)
    for path in extra_ro:
        if not _covered(path, bound):
            ro(path, path)
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
             "--perms", "1777", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp"]
    made.update(("/proc", "/dev", "/tmp"))
    if cuda:  # the GPU's device nodes and the driver's view of the machine
        for name in sorted(os.listdir("/dev")) if os.path.isdir("/dev") else []:
            if name.startswith("nvidia"):
                args += ["--dev-bind", os.path.join("/dev", name), os.path.join("/dev", name)]
        if os.path.isdir("/sys"):
            ro("/sys", "/sys")
    else:
        for path in SYS_CPU:
            if os.path.isdir(path):
                ro(path, path)
    args += parents(box) + ["--bind", box, box, "--chdir", workdir]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return args + ["--"]


def seccomp_pipe(unix_sockets: bool = True) -> Optional[int]:
    """The read end of a pipe holding the filter (for ``bwrap --seccomp``), or None."""
    prog = filter_program(unix_sockets)
    if prog is None:
        return None
    r, w = os.pipe()
    try:
        os.write(w, prog)  # (a few hundred bytes: within the pipe's buffer)
    finally:
        os.close(w)
    return r


def probe(cmd: List[str], pass_fds: Sequence[int] = (), timeout: float = 60) -> Tuple[bool, str]:
    """Run ``cmd`` (a sandboxed ``python -c`` printing ``sandboxed``): (it worked, why not)."""
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              cwd="/", pass_fds=tuple(pass_fds))
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    if proc.returncode == 0 and proc.stdout.strip() == b"sandboxed":
        return True, ""
    return False, (proc.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit {proc.returncode}"])[-1]
