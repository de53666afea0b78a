"""A document's text as the LSP sees it (positions in the negotiated encoding) and the
edits the server makes to it: pure functions, no pygls."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Optional, Tuple

from scopelint.finding import Finding
from scopelint.noqa import add_noqa, rows_inside_strings  # noqa: F401  (shared with --add-noqa)

_NEWLINE = re.compile(r"\r\n|\r|\n")


class DocText:
    """A document's text with LSP positions: lines end at \\n, \\r\\n or \\r only (as the
    LSP says), characters counted in the negotiated encoding (UTF-16 by default)."""

    def __init__(self, text: str, encoding: str = "utf-16"):
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def _units(self, s: str) -> int:
        if self.encoding == "utf-32":
            return len(s)
        if self.encoding == "utf-8":
            return len(s.encode("utf-8", "surrogatepass"))
        return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line`` (0-based), before its line break."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1]
            return end - (2 if self.text[end - 2 : end] == "\r\n" else 1)
        return len(self.text)

    def position(self, offset: int) -> Tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        return line, self._units(self.text[self.starts[line] : offset])

    def offset(self, row: int, col: int) -> int:
        """Offset of a finding position (1-based row and column in code points), clamped."""
        if row > len(self.starts):
            return len(self.text)
        line = max(row, 1) - 1
        return min(self.starts[line] + max(col, 1) - 1, self.line_end(line))

    def offset_of(self, line: int, character: int) -> int:
        """Offset of an LSP position, clamped to its line."""
        if line >= len(self.starts):
            return len(self.text)
        start, end = self.starts[line], self.line_end(line)
        units = 0
        for i in range(start, end):
            if units >= character:
                return i
            units += self._units(self.text[i])
        return end


def minimal_change(old: str, new: str) -> Tuple[int, int, str]:
    """(start, end, replacement) in ``old`` that turns it into ``new``."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return start, end_old, new[start:end_new]


def noqa_in(text: str, f: Finding) -> Optional[str]:
    """``text`` with ``# noqa: <code>`` added on the finding's line, or None."""
    dt = DocText(text)
    row = f.start[0]
    if not 1 <= row <= len(dt.starts) or row in rows_inside_strings(text):
        return None
    start, end = dt.starts[row - 1], dt.line_end(row - 1)
    new_line = add_noqa(text[start:end], f.code)
    if new_line is None:
        return None
    return text[:start] + new_line + text[end:]
