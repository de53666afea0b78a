"""Applying fixes: text edits from LibCST transforms, written atomically."""

from __future__ import annotations

import difflib
import os
import re
import stat
from typing import Iterable, List, Tuple

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


def unified_diff(old: str, new: str, filename: str) -> str:
    return "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{filename}", f"b/{filename}")
    )


def write_atomic(path: str, text: str, encoding: str = "utf-8") -> None:
    """Write via a temporary file in the same folder and rename, keeping the mode.

    A symbolic link is followed: its target is rewritten, the link stays a link."""
    path = os.path.realpath(path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    write_bytes_atomic(path, text.encode(encoding), mode)
