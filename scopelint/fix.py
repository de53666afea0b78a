"""Applying fixes: text edits from LibCST transforms, written atomically."""

from __future__ import annotations

import bisect
import difflib
import errno
import os
import re
import stat
import textwrap
import warnings
from typing import Callable, Iterable, List, Optional, Tuple

from scopelint.files import write_bytes_atomic
from scopelint.finding import Finding


def _offsets(text: str) -> List[int]:
    """Where each line starts; lines end as Python (and LibCST's positions) count them:
    at ``\r\n``, ``\r`` or ``\n``."""
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


_NEWLINE = re.compile(r"\r\n|\r|\n")


def apply_edits(text: str, findings: Iterable[Finding], unsafe: bool) -> Tuple[str, int]:
    """Apply non-overlapping fixes. Returns (new text, fixes applied).

    A fix whose edits overlap one already chosen waits for the next round (the caller
    re-lints and applies again); a fix whose positions lie outside the text is dropped.
    """
    starts = _offsets(text)

    def offset(pos) -> int:
        row, col = pos
        if not 1 <= row <= len(starts) or col < 1:
            raise ValueError(pos)
        line_end = starts[row] - 1 if row < len(starts) else len(text)
        if starts[row - 1] + col - 1 > line_end + (1 if row < len(starts) else 0):
            raise ValueError(pos)
        return starts[row - 1] + col - 1

    candidates = []
    for f in findings:
        if f.fix is None or (f.fix.applicability != "safe" and not unsafe) or not f.fix.edits:
            continue
        try:
            spans = sorted((offset(e.start), offset(e.end), e.content) for e in f.fix.edits)
        except ValueError:
            continue
        if any(a > b for a, b, _ in spans) or any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1)):
            continue  # malformed: reversed or self-overlapping edits
        if all(text[a:b] == content for a, b, content in spans) or any(_holds_result(text, starts, *sp) for sp in spans):
            continue  # a no-op, or its result is there already: applied again it would nest again
        candidates.append(spans)
    chosen: List[Tuple[int, int, str]] = []
    count = 0
    for spans in sorted(candidates, key=lambda sp: (sp[0][0], sp[-1][1])):
        if any(a < d and c < b or a == b == c == d for a, b, _ in spans for c, d, _ in chosen):
            continue  # overlaps a chosen fix: next round
        chosen.extend(spans)
        count += 1
    for start, end, content in sorted(chosen, key=lambda sp: (sp[0], sp[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, count


def _holds_result(text: str, starts: List[int], a: int, b: int, content: str) -> bool:
    """Whether an edit that adds lines around ``text[a:b]`` (a wrapping ``with``, say)
    finds them there already: the lines just above the region and the region itself
    are, but for indentation, the edit's content (a fix that does not remove its
    finding would otherwise wrap the same statement once per round and per run)."""
    added = content.count("\n") - text.count("\n", a, b)
    if added <= 0 or (a not in starts[:1] and text[a - 1:a] not in ("\n", "\r")):
        return False
    line = bisect.bisect_right(starts, a) - 1
    if line < added:
        return False
    return textwrap.dedent(text[starts[line - added]:b]) == textwrap.dedent(content)


def compiles(text: str, filename: str) -> bool:
    """CPython compiles it (its compiler rejects more than its parser: more than 20
    statically nested blocks, ``return`` outside a function, ...)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


def fix_until_stable(res, settings, unsafe: bool, apply: Callable = apply_edits, rounds: int = 10):
    """Apply ``res``'s fixes (a ``runner.FileResult`` with its source) in rounds, each
    re-linting the text, until a round changes nothing, at most ``rounds`` rounds.
    A round's text is kept only when it reads back, parses, and, where the file
    compiled before, still compiles (never write what Python refuses). Returns (text,
    the FileResult of that text, fixes applied); problems are in its ``errors``."""
    from scopelint.files import decode, encode
    from scopelint.runner import check_source

    text = res.source
    current = res
    applied = 0
    notebook = res.filename.lower().endswith(".ipynb")
    check_compile: Optional[bool] = None  # (decided once a fix is there to check)
    try:
        for _ in range(rounds):
            candidate, n = apply(text, current.findings, unsafe)
            if n == 0 or candidate == text:
                break
            source = decode(encode(candidate, res.encoding), res.filename)
            if source.error is not None:  # never write what cannot be read back
                break
            nxt = check_source(source, res.filename, res.path, settings, keep_source=True)
            if check_compile is None:
                check_compile = not notebook and compiles(res.source, res.filename)
            if any(f.code == "SL000" for f in nxt.findings) or nxt.errors or (check_compile and not compiles(candidate, res.filename)):
                # A fix that breaks the file is a bug in the fix: keep the last good text.
                current.errors.append(f"{res.filename}: a fix produced invalid code; left unfixed")
                break
            text, current, applied = candidate, nxt, applied + n
    except UnicodeEncodeError:  # keep the last round that could be written
        current.errors.append(f"{res.filename}: a fix cannot be written in the file's encoding ({res.encoding})")
    return text, current, applied


def unified_diff(old: str, new: str, filename: str) -> str:
    return "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{filename}", f"b/{filename}")
    )


def write_atomic(path: str, text: str, encoding: str = "utf-8") -> None:
    """Write via a temporary file in the same folder and rename, keeping the mode.

    A symbolic link is followed: its target is rewritten, the link stays a link.

    A read-only file is refused (``PermissionError``, the file untouched), as ruff's
    in-place write is: the rename would replace it whatever its mode says (it needs
    only the folder's write permission), and root may write any file. Read-only means
    no write bit at all, or none that lets this user write (``os.access``)."""
    path = os.path.realpath(path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not mode & 0o222 or not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied (the file is read-only)", path)
    write_bytes_atomic(path, text.encode(encoding), mode)
