"""Applying fixes: text edits from LibCST transforms, written atomically."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from typing import Iterable, List, Tuple

from scopelint.finding import Edit, Finding


def _offsets(text: str) -> List[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def apply_edits(text: str, findings: Iterable[Finding], unsafe: bool) -> Tuple[str, int]:
    """Apply non-overlapping fixes (later ones first). Returns (new text, fixes applied)."""
    starts = _offsets(text)

    def offset(pos) -> int:
        row, col = pos
        return starts[row - 1] + col - 1

    chosen: List[Tuple[int, int, str]] = []
    count = 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.fix is None or (f.fix.applicability != "safe" and not unsafe):
            continue
        spans = [(offset(e.start), offset(e.end), e.content) for e in f.fix.edits]
        if any(s < prev_end for s, _, _ in spans for _, prev_end, _ in chosen[-1:]):
            continue  # overlaps the previous fix: next round
        chosen.extend(spans)
        count += 1
    for start, end, content in sorted(chosen, reverse=True):
        text = text[:start] + content + text[end:]
    return text, count


def unified_diff(old: str, new: str, filename: str) -> str:
    return "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{filename}", f"b/{filename}")
    )


def write_atomic(path: str, text: str, encoding: str = "utf-8") -> None:
    """Write via a temporary file in the same folder and rename, keeping the mode.

    A symbolic link is followed: its target is rewritten, the link stays a link."""
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=".scopelint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
