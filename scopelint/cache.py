"""A persistent per-file cache of lint results.

An entry is keyed by a hash of the file's bytes, scopelint's version (and, for
development installs, a stamp of its own source files), the file's effective
``Settings`` and its display name (findings carry it). Entries live in
``.scopelint_cache/`` at the project root (the folder of the nearest ``pyproject.toml``
above the working directory, else the working directory), one small JSON file per
entry in 256 shard folders.

Concurrent runs (pre-commit starts several) are safe: an entry is written to a
temporary file in its shard and moved into place with ``os.replace``, so a reader
sees either nothing or a whole entry. An entry that cannot be read back (truncated,
corrupt, written by another format) is a miss and is rewritten after linting. Each entry
carries a checksum of its body, so that damage that leaves valid JSON (a flipped byte
in a message, an edited field) is a miss too, never another result.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Optional

from scopelint import __version__
from scopelint.files import write_bytes_atomic
from scopelint.finding import Edit, Finding, Fix

CACHE_DIR_NAME = ".scopelint_cache"
FORMAT = 2  # 2: the body and its checksum
MAX_BYTES = 10 * 1024 * 1024  # as scopelint.files.MAX_BYTES: larger files are never cached


def project_root(cwd: Optional[Path] = None) -> Path:
    """The folder of the nearest pyproject.toml at or above ``cwd``; else ``cwd``."""
    cwd = Path(cwd or os.getcwd()).absolute()
    for folder in (cwd, *cwd.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return cwd


def cache_dir(cwd: Optional[Path] = None) -> Path:
    return project_root(cwd) / CACHE_DIR_NAME


def _code_stamp() -> str:
    """The version, plus the names, sizes and mtimes of scopelint's own sources, so that
    an edited development install never reads results of the code it replaced."""
    h = hashlib.blake2b(f"{__version__}:{FORMAT}".encode(), digest_size=16)
    pkg = Path(__file__).resolve().parent
    # (a development install maps ``scopelint.rules`` to the repository's ``rules/``,
    # outside the package's folder: its sources count too)
    spec = importlib.util.find_spec("scopelint.rules")  # (not imported: that imports every rule)
    places = (spec.submodule_search_locations or []) if spec is not None else []
    roots = [pkg] + [Path(p).resolve() for p in places if pkg not in Path(p).resolve().parents]
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    try:
                        st = os.stat(os.path.join(dirpath, name))
                    except OSError:
                        continue
                    h.update(f"{os.path.relpath(os.path.join(dirpath, name), root.parent)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


# --- (de)serialising results ---------------------------------------------------------
def _finding_to_json(f: Finding) -> dict:
    fix = None
    if f.fix is not None:
        fix = [f.fix.applicability, f.fix.message, [[e.content, list(e.start), list(e.end)] for e in f.fix.edits]]
    return {
        "code": f.code, "message": f.message, "severity": f.severity, "filename": f.filename,
        "start": list(f.start), "end": list(f.end), "help": f.help, "fix": fix, "cell": f.cell,
        "runtime": f.runtime, "extra": f.extra,
    }


def _finding_from_json(d: dict) -> Finding:
    fix = None
    if d["fix"] is not None:
        app, msg, edits = d["fix"]
        fix = Fix(app, msg, tuple(Edit(c, tuple(s), tuple(e)) for c, s, e in edits))
    return Finding(
        d["code"], d["message"], d["severity"], d["filename"], tuple(d["start"]), tuple(d["end"]),
        help=d["help"], fix=fix, cell=d["cell"], runtime=d["runtime"], extra=d["extra"],
    )


def _read_regular(path: Path) -> bytes:
    """The bytes of ``path`` when it is a regular file. Opened non-blocking, so that a
    FIFO or a device planted in the cache folder never hangs the run (it raises
    OSError, which the callers take as a miss)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            raise OSError(f"{path}: not a regular cache entry")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


_SUM = 16  # bytes of the body's blake2b digest


def _pack(key: str, body: bytes) -> bytes:
    """An entry: JSON whose ``body`` (bytes of JSON) is checked against ``sum`` on reading."""
    digest = hashlib.blake2b(body, digest_size=_SUM).hexdigest()
    return b'{"key": "%s", "sum": "%s", "body": %s}' % (key.encode(), digest.encode(), body)


def _unpack(key: str, data: bytes) -> Optional[bytes]:
    """The body of an entry ``_pack`` wrote for ``key``; None when anything differs."""
    head = b'{"key": "%s", "sum": "' % key.encode()
    n = len(head) + 2 * _SUM
    tail = b'", "body": '
    if not data.startswith(head) or data[n:n + len(tail)] != tail or not data.endswith(b"}"):
        return None
    body = data[n + len(tail):-1]
    if hashlib.blake2b(body, digest_size=_SUM).hexdigest().encode() != data[len(head):n]:
        return None
    return body


class Cache:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.stamp = _code_stamp()

    def __repr__(self) -> str:
        return f"Cache({str(self.directory)!r})"

    def key(self, data: bytes, settings, filename: str) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{self.stamp}\0{settings!r}\0{filename}\0".encode("utf-8", "surrogatepass"))
        h.update(data)
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / (key[2:] + ".json")

    @staticmethod
    def read_bytes(path: str) -> Optional[bytes]:
        """The file's bytes when it is a regular, readable file small enough to check;
        else None (the normal reading path then reports why)."""
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
                return None
            with open(path, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def get(self, key: str, path: Optional[str] = None):
        """A FileResult for the entry, or None on a miss (also for any unreadable entry)."""
        from scopelint.runner import FileResult

        try:
            body = _unpack(key, _read_regular(self._entry(key)))
            if body is None:
                return None
            d = json.loads(body)
            res = FileResult(d["filename"], path)
            res.findings = [_finding_from_json(f) for f in d["findings"]]
            res.lines = {(cell, row): text for cell, row, text in d["lines"]}
            return res
        except Exception:  # missing, truncated, corrupt, another format: a miss
            return None

    def lookup(self, path: str, filename: str, settings):
        data = self.read_bytes(path)
        if data is None:
            return None
        return self.get(self.key(data, settings, filename), path)

    def put(self, key: str, result) -> None:
        """Store ``result`` (a FileResult); results with internal errors are not kept."""
        if result.errors:
            return
        try:
            payload = json.dumps({
                "filename": result.filename,
                "findings": [_finding_to_json(f) for f in result.findings],
                "lines": [[cell, row, text] for (cell, row), text in result.lines.items()],
            }, ensure_ascii=False).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError):  # something not JSON-able: just do not cache it
            return
        entry = self._entry(key)
        try:
            self._ensure_root()
            entry.parent.mkdir(exist_ok=True)
            write_bytes_atomic(str(entry), _pack(key, payload))
        except OSError:  # read-only or full disk: run without the cache
            pass

    def value_key(self, kind: str, text: str, extra: str) -> str:
        """The key of a value (not a file's result) computed from ``text`` and ``extra``."""
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{self.stamp}\0{kind}\0{extra}\0".encode("utf-8", "surrogatepass"))
        h.update(text.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def get_value(self, key: str):
        """A value ``put_value`` stored (JSON data), or None on a miss."""
        try:
            body = _unpack(key, _read_regular(self._entry(key)))
            return None if body is None else json.loads(body)["value"]
        except Exception:  # missing, truncated, corrupt: a miss
            return None

    def put_value(self, key: str, value) -> None:
        try:
            payload = json.dumps({"value": value}, ensure_ascii=False).encode("utf-8", "surrogatepass")
            self._ensure_root()
            entry = self._entry(key)
            entry.parent.mkdir(exist_ok=True)
            write_bytes_atomic(str(entry), _pack(key, payload))
        except (OSError, TypeError, ValueError):  # read-only, full, not JSON-able: not kept
            pass

    def _ensure_root(self) -> None:
        if (self.directory / ".gitignore").is_file():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", "# Automatically created by scopelint.\n*\n"),
                           ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n")):
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, self.directory / name)


def clean(cwd: Optional[Path] = None) -> Optional[Path]:
    """Remove the cache folder; returns it when there was one."""
    directory = cache_dir(cwd)
    if not directory.exists():
        return None
    shutil.rmtree(directory, ignore_errors=True)
    return directory
