"""Smoke run of ``scopelint check`` on other Python versions than the one running it.

For each version asked for (default: every one below that can be had), this fetches a
CPython interpreter from Debian's package archive (``apt-get download`` with a private
apt configuration: nothing is installed on the system), makes a venv with scopelint in
it (a wheel built here, its dependencies from PyPI), runs
``scopelint check --no-cache --output-format json fixtures/ demo/`` there and compares
the findings with this interpreter's: they must be equal, with exit status 1 and no
internal error.

    python scripts/smoke_interpreters.py            # every version that can be had
    python scripts/smoke_interpreters.py 3.9 3.13

``tests/test_interpreters.py`` runs it in the test suite (one test per version, skipped
with the reason where an interpreter cannot be had, e.g. no network).

Where the interpreters come from (Debian amd64; the machine is Debian 12 "bookworm"):

- 3.9: bullseye's ``python3.9`` (built for an older glibc: runs here as it is) and the
  libraries bookworm no longer has (``libssl1.1``, ``libffi7``).
- 3.13: trixie's ``python3.13``, built for glibc 2.38 or later: it runs on trixie's own
  ``libc6`` (its ELF interpreter and library path set with ``patchelf``, from bullseye).
- 3.10 and 3.12: no Debian release ships them (bullseye has 3.9, bookworm 3.11, trixie
  3.13), and ``uv python install`` downloads from GitHub, which this project's machines
  cannot reach: see ``UNAVAILABLE``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
PATHS = ("fixtures", "demo")  # what is checked, relative to the repository
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
APT_SOURCES = Path("/etc/apt")


@dataclass(frozen=True)
class Source:
    suite: str  # Debian release the packages come from
    packages: Tuple[str, ...]
    binary: str  # the interpreter, inside the unpacked packages
    own_libc: bool = False  # needs the suite's glibc (newer than the machine's)


SOURCES: Dict[str, Source] = {
    "3.9": Source(
        "bullseye",
        ("python3.9-minimal", "libpython3.9-minimal", "libpython3.9-stdlib", "python3-distutils",
         "python3-lib2to3", "libssl1.1", "libffi7"),
        "usr/bin/python3.9",
    ),
    "3.13": Source(
        "trixie",
        ("python3.13-minimal", "libpython3.13-minimal", "libpython3.13-stdlib", "libssl3t64", "libffi8", "libc6"),
        "usr/bin/python3.13",
        own_libc=True,
    ),
}
PATCHELF = Source("bullseye", ("patchelf",), "usr/bin/patchelf")
# Neovim 0.10 (bookworm's is 0.7, older than ``vim.lsp.start``): tests/test_editors.py
NEOVIM = Source(
    "trixie",
    ("neovim", "neovim-runtime", "libluajit-5.1-2", "libluajit-5.1-common", "libmsgpack-c2", "libtree-sitter0.22",
     "libunibilium4", "libuv1t64", "libvterm0", "lua-lpeg", "lua-luv", "libc6", "libgcc-s1"),
    "usr/bin/nvim",
    own_libc=True,
)
UNAVAILABLE: Dict[str, str] = {
    "3.10": "no Debian release ships CPython 3.10 (bullseye: 3.9, bookworm: 3.11, trixie: 3.13), "
            "and uv's interpreters download from GitHub, which is not reachable here",
    "3.12": "no Debian release ships CPython 3.12 (bookworm: 3.11, trixie: 3.13), "
            "and uv's interpreters download from GitHub, which is not reachable here",
}
NETWORK_TROUBLE = (
    "Temporary failure in name resolution", "Name or service not known", "Network is unreachable",
    "NewConnectionError", "ConnectionError", "Max retries exceeded", "Could not resolve", "Failed to fetch",
    "Connection timed out", "connection refused", "Read timed out",
)


class Unavailable(Exception):
    """The interpreter cannot be had here (no apt, no network): a skip, not a failure."""


class SmokeFailure(Exception):
    """scopelint misbehaves on that interpreter: a failure."""


def _run(cmd: Sequence[str], timeout: int = 600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, **kwargs)


def _network_trouble(text: str) -> bool:
    return any(t.lower() in text.lower() for t in NETWORK_TROUBLE)


def debian_archive(etc: Path = APT_SOURCES) -> Tuple[str, str]:
    """(URI, keyring) of the Debian archive that this machine's apt reads its release
    from (the one whose suites name no ``-security``); the other releases lie there too."""
    entries = []  # (uri, suites, keyring)
    for f in sorted((etc / "sources.list.d").glob("*.sources")):
        for stanza in f.read_text(errors="replace").split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if ":" in line and not line.lstrip().startswith("#"):
                    key, _, value = line.partition(":")
                    fields[key.strip().lower()] = value.strip()
            for uri in fields.get("uris", "").split():
                entries.append((uri, fields.get("suites", "").split(), fields.get("signed-by", KEYRING)))
    lists = [etc / "sources.list", *sorted((etc / "sources.list.d").glob("*.list"))]
    for f in lists:
        for line in (f.read_text(errors="replace").splitlines() if f.is_file() else ()):
            words = line.split("#", 1)[0].split()
            if words[:1] == ["deb"]:
                words = [w for w in words[1:] if not w.startswith("[")]  # ([options])
                if len(words) >= 2:
                    entries.append((words[0], [words[1]], KEYRING))
    for uri, suites, keyring in entries:
        if suites and not any("security" in s for s in suites) and uri.rstrip("/").endswith("/debian"):
            return uri.rstrip("/"), keyring if keyring.startswith("/") else KEYRING
    raise Unavailable("apt's sources name no Debian archive")


class Apt:
    """``apt-get`` on a private configuration under ``root``: one suite, main, amd64."""

    def __init__(self, root: Path, suite: str):
        self.root = root
        for d in ("lists/partial", "cache/archives/partial", "preferences.d"):
            (root / d).mkdir(parents=True, exist_ok=True)
        archive, keyring = debian_archive()
        (root / "sources.list").write_text(f"deb [signed-by={keyring}] {archive} {suite} main\n")
        self.options = [
            f"-oDir::Etc::SourceList={root / 'sources.list'}", "-oDir::Etc::SourceParts=/nonexistent",
            f"-oDir::State::Lists={root / 'lists'}", f"-oDir::Cache={root / 'cache'}",
            "-oDir::Etc::Preferences=/dev/null", f"-oDir::Etc::PreferencesParts={root / 'preferences.d'}",
            "-oDir::State::status=/dev/null", "-oAcquire::Languages=none", "-oAPT::Architecture=amd64",
            "-oAPT::Sandbox::User=root", "-oAcquire::Retries=1", "-oAcquire::http::Timeout=30",
        ]
        self.suite = suite
        self.updated = False

    def download(self, packages: Sequence[str], into: Path) -> List[Path]:
        if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
            raise Unavailable("needs Debian's apt-get and dpkg-deb")
        if platform.machine() not in ("x86_64", "AMD64"):
            raise Unavailable(f"the packages named here are amd64's; this machine is {platform.machine()}")
        if not self.updated:
            proc = _run(["apt-get", *self.options, "update"], timeout=300)
            if proc.returncode != 0 or "Err:" in proc.stdout or (proc.stderr and "W: Failed" in proc.stderr):
                raise Unavailable(f"cannot read Debian {self.suite}'s package list: {(proc.stderr or proc.stdout).strip()[-400:]}")
            self.updated = True
        into.mkdir(parents=True, exist_ok=True)
        proc = _run(["apt-get", *self.options, "download", *packages], cwd=into, timeout=300)
        if proc.returncode != 0:
            message = (proc.stderr or proc.stdout).strip()[-400:]
            if _network_trouble(message):
                raise Unavailable(f"cannot download from Debian {self.suite}: {message}")
            raise SmokeFailure(f"apt-get download {' '.join(packages)} from {self.suite} failed: {message}")
        return sorted(into.glob("*.deb"))


def _unpack(debs: Sequence[Path], root: Path) -> None:
    for deb in debs:
        proc = _run(["dpkg-deb", "-x", str(deb), str(root)])
        if proc.returncode != 0:
            raise SmokeFailure(f"dpkg-deb -x {deb.name}: {proc.stderr.strip()}")


def unpack_program(src: Source, work: Path) -> Path:
    """Debian's packages ``src.packages`` unpacked under ``work``, their program
    ``src.binary`` made to find their libraries (and, with ``own_libc``, their glibc)
    wherever it lies; its path."""
    apt = Apt(work / "apt", src.suite)
    root = work / "root"
    _unpack(apt.download(src.packages, work / "debs"), root)
    program = root / src.binary
    libs = [root / "usr/lib/x86_64-linux-gnu", root / "lib/x86_64-linux-gnu"]
    patch = ["--force-rpath", "--set-rpath", ":".join(str(p) for p in libs)]  # (DT_RPATH: its modules' too)
    if src.own_libc:
        patch = ["--set-interpreter", str(root / "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"), *patch]
    tools = work / "tools"
    tools_apt = apt if PATCHELF.suite == src.suite else Apt(work / "apt-tools", PATCHELF.suite)
    _unpack(tools_apt.download(PATCHELF.packages, work / "debs-tools"), tools)
    proc = _run([str(tools / PATCHELF.binary), *patch, str(program)])
    if proc.returncode != 0:
        raise SmokeFailure(f"patchelf {program}: {proc.stderr.strip()}")
    return program


def fetch_interpreter(version: str, work: Path) -> Path:
    """The path of a working CPython ``version`` unpacked under ``work``."""
    if version in UNAVAILABLE:
        raise Unavailable(UNAVAILABLE[version])
    if version not in SOURCES:
        raise Unavailable(f"no source for Python {version} is known (known: {', '.join(SOURCES)})")
    python = unpack_program(SOURCES[version], work)
    proc = _run([str(python), "-c", "import sys, ssl; print('%d.%d' % sys.version_info[:2])"])
    if proc.returncode != 0 or proc.stdout.strip() != version:
        raise SmokeFailure(f"the unpacked interpreter does not run as Python {version}: {proc.stdout}{proc.stderr}")
    return python


def build_wheel(out: Path) -> Path:
    """scopelint's wheel (pure Python: one for every version), built by this interpreter
    from a copy of the sources (setuptools builds in the tree: runs in parallel would
    share ``build/``)."""
    src = out / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("scopelint", "rules", "runtime_check", "docs"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    proc = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)])
    wheels = sorted(out.glob("scopelint-*.whl"))
    if proc.returncode != 0 or not wheels:
        message = (proc.stderr or proc.stdout).strip()[-600:]
        if _network_trouble(message):
            raise Unavailable(f"cannot build the wheel (setuptools from PyPI): {message}")
        raise SmokeFailure(f"pip wheel failed: {message}")
    return wheels[-1]


def make_venv(python: Path, wheel: Path, where: Path) -> Path:
    """A venv of ``python`` with ``wheel`` and its dependencies (this interpreter's pip,
    run there with ``--python``); its ``scopelint``."""
    proc = _run([str(python), "-m", "venv", "--without-pip", str(where)])
    if proc.returncode != 0:
        raise SmokeFailure(f"venv: {proc.stderr.strip()}")
    proc = _run([sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"), "install", "-q", str(wheel)])
    if proc.returncode != 0:
        message = (proc.stderr or proc.stdout).strip()[-800:]
        if _network_trouble(message):
            raise Unavailable(f"cannot install scopelint's dependencies from PyPI: {message}")
        raise SmokeFailure(f"pip install into the {python.name} venv failed: {message}")
    return where / "bin" / "scopelint"


def check(command: Sequence[str]) -> Tuple[int, list, str]:
    """``command check --no-cache --output-format json PATHS`` in the repository: exit
    status, the findings, stderr."""
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTHONPATH", None)
    proc = _run([*command, "check", "--no-cache", "--output-format", "json", *PATHS], cwd=REPO, env=env)
    try:
        findings = json.loads(proc.stdout)
    except ValueError:
        raise SmokeFailure(f"not JSON (exit {proc.returncode}): {proc.stdout[:400]!r} {proc.stderr[-800:]}") from None
    for f in findings:  # the rule page's file URI names where scopelint is installed: compare the page only
        if isinstance(f, dict) and isinstance(f.get("url"), str):
            f["url"] = f["url"].rsplit("/", 1)[-1]
    return proc.returncode, findings, proc.stderr


def reference() -> Tuple[int, list, str]:
    """This interpreter's run (the test suite's Python: 3.11 in CI)."""
    return check([sys.executable, "-m", "scopelint"])


def _key(f: dict) -> tuple:
    return f["filename"], f["location"]["row"], f["location"]["column"], f["code"]


def compare(version: str, expected: Tuple[int, list, str], got: Tuple[int, list, str]) -> str:
    """Raise SmokeFailure unless both runs are the same; a one-line account if they are."""
    (rc0, want, _), (rc, have, err) = expected, got
    if "internal error" in err or rc != rc0 or rc != 1:
        raise SmokeFailure(f"Python {version}: exit {rc} (reference {rc0}); stderr: {err.strip()[-1500:]}")
    if have != want:
        missing = sorted(set(map(_key, want)) - set(map(_key, have)))[:10]
        extra = sorted(set(map(_key, have)) - set(map(_key, want)))[:10]
        raise SmokeFailure(
            f"Python {version}: findings differ from the reference's ({len(have)} against {len(want)}); "
            f"missing {missing}, extra {extra}"
            + ("" if missing or extra else "; same positions and codes: messages, fixes or order differ")
        )
    return f"Python {version}: {len(have)} findings, equal to {sys.version.split()[0]}'s"


def smoke(version: str, work: Path, expected: Optional[Tuple[int, list, str]] = None, wheel: Optional[Path] = None) -> str:
    """Fetch, install and compare Python ``version``; raises Unavailable or SmokeFailure."""
    python = fetch_interpreter(version, work / "python")
    wheel = wheel or build_wheel(work / "wheel")
    scopelint = make_venv(python, wheel, work / "venv")
    return compare(version, expected or reference(), check([str(scopelint)]))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="*", default=list(SOURCES), help=f"default: {' '.join(SOURCES)}")
    parser.add_argument("--work", type=Path, help="keep downloads and venvs here (default: a temporary folder)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="scopelint-smoke-"))
    expected = reference()
    status = 0
    for version in args.versions:
        try:
            print(smoke(version, work / version, expected), flush=True)
        except Unavailable as exc:
            print(f"Python {version}: SKIPPED: {exc}", flush=True)
        except SmokeFailure as exc:
            print(f"Python {version}: FAILED: {exc}", flush=True)
            status = 1
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
