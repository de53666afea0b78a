"""Finding the files to check and reading them safely (encodings, binaries, oddities)."""

from __future__ import annotations

import codecs
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from scopelint.config import Resolver
from scopelint.finding import Finding, syntax_finding

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
MAX_BYTES = 10 * 1024 * 1024


# --- .gitignore ----------------------------------------------------------------------
class GitIgnore:
    """The patterns of one .gitignore file, matched relative to its directory."""

    def __init__(self, base: Path, lines: List[str]):
        self.base = base
        self.rules: List[Tuple[re.Pattern, bool, bool]] = []  # (regex, negated, dir_only)
        for line in lines:
            line = line.rstrip("\r\n")
            if line.endswith("\\ "):  # an escaped trailing space is kept
                line = line[:-2].rstrip() + " "
            else:
                line = line.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            elif line.startswith(("\\#", "\\!")):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            # A slash at the start or in the middle anchors the pattern to this folder.
            anchored = "/" in line
            line = line.lstrip("/")
            if not line:
                continue
            try:
                regex = re.compile(_glob_to_regex(line, anchored))
            except re.error:  # a malformed pattern matches nothing, as in git
                continue
            self.rules.append((regex, negated, dir_only))

    @classmethod
    def load(cls, directory: Path) -> Optional["GitIgnore"]:
        f = directory / ".gitignore"
        if not os.path.isfile(f):  # also never open a FIFO or a device: it could block
            return None
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                return cls(directory, fh.readlines())
        except OSError:
            return None

    def match(self, path: Path, is_dir: bool) -> Optional[bool]:
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        result = None
        for regex, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.fullmatch(rel):
                result = not negated
        return result


def _glob_to_regex(pattern: str, anchored: bool) -> str:
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out += "/.*"
            i += 3
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j == -1:
                out += re.escape(c)
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += "[" + body.replace("\\", "\\\\") + "]"
                i = j
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out += re.escape(pattern[i])
        else:
            out += re.escape(c)
        i += 1
    return out if anchored else "(?:.*/)?" + out


def _repo_ignores(directory: Path) -> List[GitIgnore]:
    """.gitignore files of the enclosing directories, up to the repository root."""
    found = []
    d = directory.resolve()
    while True:
        gi = GitIgnore.load(d)
        if gi is not None:
            found.append(gi)
        if os.path.exists(d / ".git") or d.parent == d:
            break
        d = d.parent
    return list(reversed(found))


def _ignored(path: Path, is_dir: bool, ignores: List[GitIgnore]) -> bool:
    verdict = False
    for gi in ignores:
        m = gi.match(path, is_dir)
        if m is not None:
            verdict = m
    return verdict


def discover(paths: List[str], resolver: Resolver) -> Iterator[Path]:
    """Files to check, in a stable order. Paths named explicitly are always checked."""
    seen = set()
    for raw in paths:
        p = Path(raw)
        if os.path.isdir(p):  # never raises (an unreadable path is reported when read)
            for f in _walk(p, resolver):
                key = os.path.abspath(f)
                if key not in seen:
                    seen.add(key)
                    yield f
        else:
            key = os.path.abspath(p)
            if key not in seen:
                seen.add(key)
                yield p  # missing or odd paths are reported when read


def _walk(top: Path, resolver: Resolver) -> Iterator[Path]:
    real_top = Path(os.path.realpath(top))
    respect = resolver.run_config().respect_gitignore is not False  # (ruff's respect-gitignore, default true)
    inside_repo = respect and not os.path.exists(real_top / ".git") and real_top.parent != real_top
    base_ignores = _repo_ignores(real_top.parent) if inside_repo else []
    stack: List[Tuple[Path, List[GitIgnore]]] = [(top, base_ignores)]
    while stack:
        directory, ignores = stack.pop()
        real_dir = Path(os.path.realpath(directory))
        own = GitIgnore.load(real_dir) if respect else None
        if own is not None:
            ignores = ignores + [own]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:  # reported (as SL000) when "read", like an unreadable file
            yield directory
            continue
        subdirs = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            # Matched where it lies (a symbolic link by its own name, as git does).
            if resolver.excluded(path) or _ignored(real_dir / entry.name, is_dir, ignores):
                continue
            if is_dir:
                if not entry.is_symlink():
                    subdirs.append(path)
            elif resolver.included(path):
                yield path
        for sub in reversed(subdirs):
            stack.append((sub, ignores))


# --- reading -------------------------------------------------------------------------
@dataclass
class Source:
    text: Optional[str]
    error: Optional[Finding]
    encoding: str = "utf-8"
    bom: bool = False


def decode(data: bytes, filename: str) -> Source:
    if b"\0" in data[:8192] or b"\0" in data:
        return Source(None, syntax_finding(filename, "binary file (contains NUL bytes); not Python source"))
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if _declares_encoding(data):
            return Source(None, syntax_finding(filename, f"bad encoding declaration: {exc.msg if hasattr(exc, 'msg') else exc}"))
        encoding = "utf-8"  # (none declared: a byte of the first two lines is not UTF-8, said below as for later lines)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        row = col = 1
        if isinstance(exc, UnicodeDecodeError):
            row = data[: exc.start].count(b"\n") + 1
            start = data.rfind(b"\n", 0, exc.start) + 1
            if start == 0 and data.startswith(codecs.BOM_UTF8):
                start = len(codecs.BOM_UTF8)
            col = len(data[start:exc.start].decode(encoding, "replace")) + 1  # (in characters, as editors count)
            reason = f"cannot decode byte 0x{data[exc.start]:02x} as {encoding}"
        else:
            reason = f"unknown encoding `{encoding}`"
        return Source(None, syntax_finding(filename, f"{reason}; declare the file's encoding with a PEP 263 coding comment", row, col))
    bom = encoding == "utf-8-sig"  # decoding with utf-8-sig already dropped the BOM
    if bom and text.startswith("\ufeff"):  # a second U+FEFF after the BOM is code: CPython rejects it
        return Source(None, syntax_finding(filename, "SyntaxError: invalid non-printable character U+FEFF", 1, 1))
    if text.startswith("\ufeff"):
        text = text[1:]
    return Source(text, None, encoding, bom)


# PEP 263's coding comment, on the bytes of one line
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


def _declares_encoding(data: bytes) -> bool:
    """One of the first two lines holds a coding comment (``tokenize.detect_encoding``
    reads the second only after a first that is blank or a comment)."""
    lines = data.split(b"\n", 2)[:2]
    if lines and lines[0].startswith(codecs.BOM_UTF8):
        lines[0] = lines[0][len(codecs.BOM_UTF8):]
    return any(_CODING.match(line) for line in lines)


def encode(text: str, encoding: str) -> bytes:
    """Text back to the bytes of its file: same encoding, BOM kept (``utf-8-sig``)."""
    return text.encode(encoding)


def read_source(path: Path, filename: str) -> Source:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        what = "dangling symbolic link" if os.path.islink(path) else "no such file"
        return Source(None, syntax_finding(filename, f"cannot read: {what}"))
    except OSError as exc:
        return Source(None, syntax_finding(filename, f"cannot read: {exc.strerror or exc}"))
    if stat.S_ISDIR(st.st_mode):  # a folder that could not be listed (see _walk)
        try:
            os.scandir(path).close()
        except OSError as exc:
            return Source(None, syntax_finding(filename, f"cannot read folder: {exc.strerror or exc}"))
    if not stat.S_ISREG(st.st_mode):
        return Source(None, syntax_finding(filename, "cannot read: not a regular file"))
    if st.st_size > MAX_BYTES:
        return Source(None, syntax_finding(filename, f"file too large to check ({st.st_size // 1048576} MiB > {MAX_BYTES // 1048576} MiB)"))
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return Source(None, syntax_finding(filename, f"cannot read: {exc.strerror or exc}"))
    return decode(data, filename)


def write_bytes_atomic(path: str, data: bytes, mode: Optional[int] = None) -> None:
    """Write through a temporary file in the same folder and rename it into place, so a
    reader never sees a half-written file; ``mode`` is given to the result."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".scopelint-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
