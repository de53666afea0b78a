"""Jupyter notebooks.

Linting: the code cells are joined in order so that state flows across cells (a value
computed under ``no_grad`` in one cell and used in another is still tracked); IPython
magics and shell escapes are neutralised; findings are mapped back to
(cell, row in cell). Cells are numbered from 1 over all the notebook's cells (markdown
included), as ruff and the notebook UIs count them.

Fixing: :func:`apply_edits` rewrites only the ``source`` value of the cells that change,
as text, so outputs, metadata and the formatting of every other cell stay byte-identical.

Nothing here executes the notebook.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from json.decoder import scanstring
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from scopelint.finding import FILE_LOCATION, Edit, Finding, Fix

# A line IPython transforms rather than runs as Python: `%magic`, `!shell`, `?help`,
# `obj?` / `obj.attr??`, a wildcard search (`torch.*Tensor?`), and assignments from them:
# `x = !ls`, `y = %who_ls`.
_MAGIC = re.compile(r"^\s*(?:[%!?]|[\w.*]+\s*\?\??\s*$|[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*[%!])")
# Cell magics whose body is Python run in the user namespace: linted, state flows on.
# Others (%%bash, %%writefile, %%html, %%timeit (own scope), ...) are skipped whole.
PYTHON_CELL_MAGICS = frozenset({"time", "capture", "prun"})
_NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(src: str) -> List[str]:
    """Lines as Python (and LibCST) count them: only \\n, \\r\\n and \\r end a line."""
    lines = _NEWLINE.split(src)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass
class Notebook:
    source: str  # the joined code cells, as linted
    line_map: List[Tuple[int, int]]  # joined row - 1 -> (cell number, row in cell)
    cells: list  # the notebook's cells, as loaded
    raw: dict = field(default_factory=dict)

    def cell_text(self, cell: int) -> str:
        """The source of cell ``cell`` (numbered from 1)."""
        if 1 <= cell <= len(self.cells) and isinstance(self.cells[cell - 1], dict):
            return cell_source(self.cells[cell - 1])
        return ""

    def cell_lines(self, cell: int) -> List[str]:
        return split_lines(self.cell_text(cell))


def cell_source(cell) -> str:
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(src, list):
        return "".join(s if isinstance(s, str) else "" for s in src)
    return src if isinstance(src, str) else ""


def _validate_cells(cells: list) -> None:
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise ValueError(f"cell {number} is not an object")
        src = cell.get("source", "")
        if not (isinstance(src, str) or (isinstance(src, list) and all(isinstance(s, str) for s in src))):
            raise ValueError(f"cell {number}: `source` must be a string or a list of strings")


def is_python(data: dict) -> bool:
    """False for notebooks whose kernel language is known and is not Python (R, Julia...)."""
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return True
    info = meta.get("language_info")
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        return info["name"].lower() in ("python", "python3", "ipython", "ipython3")
    spec = meta.get("kernelspec")
    if isinstance(spec, dict) and isinstance(spec.get("language"), str):
        return spec["language"].lower() in ("python", "python3", "ipython", "ipython3")
    return True


def python_lines(src: str) -> Optional[List[str]]:
    """The cell's lines as Python, same count and columns: magics blanked (or ``pass`` where
    a block needs a statement). None when the cell is not Python at all (a cell magic)."""
    lines = split_lines(src)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(None, 1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return None
        lines = list(lines)
        lines[first] = ""
    out: List[str] = []
    previous = ""  # last line with code, comments stripped (roughly)
    open_ = _Open()
    for line in lines:
        continued = open_.inside()  # (a line inside brackets, a string or after "\\")
        open_.feed(line)
        if not continued and _MAGIC.match(line):
            indent = line[: len(line) - len(line.lstrip())]
            # A block opened on the previous line needs a statement: keep it parseable.
            out.append(indent + "pass" if previous.endswith(":") and indent else "")
            continue
        out.append(line)
        code = line.split("#", 1)[0].rstrip()
        if code:
            previous = code
    return out


class _Open:
    """What a line leaves open for the next: bracket depth, a triple-quoted string, a
    backslash continuation (a rough scanner: enough to tell a continuation line that
    starts with ``%``, ``!`` or ``?`` from a magic)."""

    def __init__(self):
        self.depth = 0
        self.quote: Optional[str] = None  # the open triple quote
        self.backslash = False

    def inside(self) -> bool:
        return self.depth > 0 or self.quote is not None or self.backslash

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.backslash = False
        while i < n:
            if self.quote is not None:
                end = line.find(self.quote, i)
                while end > 0 and line[end - 1] == "\\" and not line[:end].endswith("\\\\"):
                    end = line.find(self.quote, end + 1)
                if end < 0:
                    return
                i, self.quote = end + 3, None
                continue
            c = line[i]
            if c == "#":
                break
            if c in "\"'":
                if line.startswith(c * 3, i):
                    self.quote, i = c * 3, i + 3
                    continue
                j = i + 1
                while j < n and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                i = j + 1
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            i += 1
        self.backslash = line.rstrip("\r\n").endswith("\\") and self.quote is None


def join(cells: Sequence[Tuple[int, str]]) -> Tuple[str, List[Tuple[int, int]]]:
    """Join (cell number, source) of code cells into one module; return it and the line map."""
    lines: List[str] = []
    line_map: List[Tuple[int, int]] = []
    for number, src in cells:
        converted = python_lines(src)
        if converted is None:
            continue
        for row, line in enumerate(converted, start=1):
            lines.append(line)
            line_map.append((number, row))
        # A blank separator line (owned by the cell) so cells never run into each other.
        lines.append("")
        line_map.append((number, len(converted) + 1))
    return "\n".join(lines) + "\n", line_map


def load(text: str) -> Notebook:
    """Raises ValueError on anything that is not a (version 4) notebook."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("notebook JSON is too deeply nested") from None
    if not isinstance(data, dict):
        raise ValueError("not a Jupyter notebook (the top level is not an object)")
    if "worksheets" in data and "cells" not in data:
        raise ValueError("nbformat 3 notebooks are not supported (convert with `jupyter nbconvert --to notebook`)")
    if not isinstance(data.get("cells"), list):
        raise ValueError("not a Jupyter notebook (no `cells` list)")
    cells = data["cells"]
    _validate_cells(cells)
    code: List[Tuple[int, str]] = []
    if is_python(data):
        code = [(n, cell_source(c)) for n, c in enumerate(cells, start=1) if c.get("cell_type") == "code"]
    source, line_map = join(code)
    return Notebook(source, line_map, cells, data)


def locate(nb: Notebook, row: int) -> Tuple[Optional[int], int]:
    """Joined row -> (cell number, row in cell); (None, row) when out of range."""
    if 1 <= row <= len(nb.line_map):
        return nb.line_map[row - 1]
    return None, row


def map_findings(nb: Notebook, findings: Iterable[Finding]) -> None:
    """Rewrite findings (and their fix edits) from joined to (cell, row in cell), in place.
    A fix whose edits leave the finding's cell is dropped: it cannot be applied per cell."""
    for f in findings:
        if f.cell is not None:
            continue
        cell, row = locate(nb, f.start[0])
        end_cell, end_row = locate(nb, f.end[0])
        if cell is None:
            continue
        f.cell = cell
        f.start = (row, f.start[1])
        f.end = (end_row, f.end[1]) if end_cell == cell else (row, f.start[1])
        if f.fix is not None:
            edits = []
            for e in f.fix.edits:
                c1, r1 = locate(nb, e.start[0])
                c2, r2 = locate(nb, e.end[0])
                if c1 != cell or c2 != cell:
                    edits = None
                    break
                edits.append(Edit(e.content, (r1, e.start[1]), (r2, e.end[1])))
            f.fix = Fix(f.fix.applicability, f.fix.message, tuple(edits)) if edits else None


# ---------------------------------------------------------------------------------------
# Where each cell's `source` sits in the notebook's JSON text.

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


@dataclass
class SourceSpan:
    """The raw text of one cell's ``source`` value: [start, end) in the notebook text, and
    the raw spans of its string literals, quotes included."""

    start: int
    end: int
    strings: List[Tuple[int, int]]
    is_list: bool


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _skip(text: str, i: int) -> int:
    """End of the JSON value starting at ``i`` (the text is known to be valid JSON)."""
    depth = 0
    while True:
        i = _ws(text, i)
        c = text[i]
        if c == '"':
            i = scanstring(text, i + 1, True)[1]
        elif c in "[{":
            depth += 1
            i += 1
            continue
        elif c in "]}":
            depth -= 1
            i += 1
        elif c in ",:":
            i += 1
            continue
        else:
            m = _SCALAR.match(text, i)
            if m is None:
                raise ValueError(f"unexpected character at offset {i}")
            i = m.end()
        if depth == 0:
            return i


def _object_members(text: str, i: int):
    """Yield (key, value start) of the object at ``i``; the caller must consume each value
    and send back its end offset."""
    assert text[i] == "{"
    i = _ws(text, i + 1)
    if text[i] == "}":
        return
    while True:
        key, i = scanstring(text, _ws(text, i) + 1, True)
        i = _ws(text, i)
        assert text[i] == ":"
        i = _ws(text, i + 1)
        i = yield key, i
        i = _ws(text, i)
        if text[i] == "}":
            return
        i += 1  # ","


def _array_items(text: str, i: int):
    assert text[i] == "["
    i = _ws(text, i + 1)
    if text[i] == "]":
        return
    while True:
        i = _ws(text, i)
        i = yield i
        i = _ws(text, i)
        if text[i] == "]":
            return
        i += 1


def _drive(gen, handle):
    """Run a member/item generator, calling ``handle(item) -> end offset`` for each."""
    try:
        item = next(gen)
        while True:
            item = gen.send(handle(item))
    except StopIteration:
        pass


def source_spans(text: str) -> Dict[int, SourceSpan]:
    """Cell number -> where its ``source`` value is in ``text``. Raises ValueError."""
    spans: Dict[int, SourceSpan] = {}
    try:
        start = _ws(text, 0)
        if text[start] != "{":
            raise ValueError("not a Jupyter notebook")

        def cell(i: int, number: int) -> int:
            if text[i] != "{":
                return _skip(text, i)

            def member(item):
                key, j = item
                end = _skip(text, j)
                if key == "source":
                    strings: List[Tuple[int, int]] = []
                    if text[j] == "[":
                        _drive(_array_items(text, j), lambda k: strings.append((k, _skip(text, k))) or strings[-1][1])
                    elif text[j] == '"':
                        strings.append((j, end))
                    spans[number] = SourceSpan(j, end, strings, text[j] == "[")
                return end

            _drive(_object_members(text, i), member)
            return _skip(text, i)

        def top(item):
            key, j = item
            if key == "cells" and text[j] == "[":
                counter = iter(range(1, 1 << 62))
                _drive(_array_items(text, j), lambda k: cell(k, next(counter)))
            return _skip(text, j)

        _drive(_object_members(text, start), top)
    except (IndexError, AssertionError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot locate cell sources: {exc}") from None
    return spans


def _decode_offsets(text: str, strings: List[Tuple[int, int]]) -> Tuple[str, List[int]]:
    """Decode string literals; for each decoded character its raw offset in ``text``, plus
    one final entry: the offset just past the last character (before the closing quote)."""
    chars: List[str] = []
    offsets: List[int] = []
    end = strings[-1][1] - 1 if strings else 0
    for s, e in strings:
        i, stop = s + 1, e - 1
        while i < stop:
            c = text[i]
            if c != "\\":
                chars.append(c)
                offsets.append(i)
                i += 1
                continue
            kind = text[i + 1]
            if kind == "u":
                unit = int(text[i + 2 : i + 6], 16)
                if 0xD800 <= unit < 0xDC00 and text.startswith("\\u", i + 6):
                    low = int(text[i + 8 : i + 12], 16)
                    if 0xDC00 <= low < 0xE000:
                        chars.append(chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)))
                        offsets.append(i)
                        i += 12
                        continue
                chars.append(chr(unit))
                offsets.append(i)
                i += 6
            else:
                chars.append(json.loads(f'"\\{kind}"'))
                offsets.append(i)
                i += 2
    offsets.append(end)
    return "".join(chars), offsets


class TextIndex:
    """Maps (cell, row, column) of a notebook's cells to offsets in its JSON text."""

    def __init__(self, text: str):
        self.text = text
        self.spans = source_spans(text)
        self._cells: Dict[int, Tuple[List[Tuple[int, int]], List[int]]] = {}

    def _cell(self, cell: int):
        if cell not in self._cells:
            span = self.spans.get(cell)
            if span is None or not span.strings:
                return None
            decoded, offsets = _decode_offsets(self.text, span.strings)
            lines: List[Tuple[int, int]] = []
            pos = 0
            for m in _NEWLINE.finditer(decoded):
                lines.append((pos, m.start()))
                pos = m.end()
            lines.append((pos, len(decoded)))
            self._cells[cell] = (lines, offsets)
        return self._cells[cell]

    def offset(self, cell: int, row: int, col: int) -> Optional[int]:
        """Raw offset in the notebook text of (row, col) (1-based) in ``cell``; a column past
        the end of its line is the line's end; None when the cell has no source."""
        data = self._cell(cell)
        if data is None:
            return None
        lines, offsets = data
        if row > len(lines):
            return offsets[-1]
        start, end = lines[max(row, 1) - 1]
        return offsets[min(start + max(col, 1) - 1, end)]


def _render(new_src: str, span: SourceSpan, text: str) -> str:
    ascii_only = "\\u" in text[span.start : span.end] and not any(ord(c) > 127 for c in text[span.start : span.end])

    def dumps(s: str) -> str:
        return json.dumps(s, ensure_ascii=ascii_only)

    if not span.is_list:
        return dumps(new_src)
    parts = new_src.splitlines(True)  # nbformat's own split
    if not parts:
        return "[]"
    raw = text[span.start : span.end]
    if "\n" not in raw:  # compact style: ["a\n", "b"] on one line
        sep = ", " if re.search(r'",\s', raw) or not span.strings else ","
        return "[" + sep.join(dumps(p) for p in parts) + "]"
    line_start = text.rfind("\n", 0, span.start) + 1
    key_indent = re.match(r"[ \t]*", text[line_start:]).group(0)
    if span.strings:
        first = span.strings[0][0]
        item_indent = text[text.rfind("\n", 0, first) + 1 : first]
        if item_indent.strip():
            item_indent = key_indent + " "
    else:
        item_indent = key_indent + " "
    close_start = text.rfind("\n", 0, span.end - 1) + 1
    close_indent = text[close_start : span.end - 1]
    if close_indent.strip():
        close_indent = key_indent
    return "[\n" + ",\n".join(item_indent + dumps(p) for p in parts) + "\n" + close_indent + "]"


def replace_sources(text: str, new_sources: Dict[int, str]) -> str:
    """``text`` with the ``source`` of the given cells (numbered from 1) replaced, everything
    else byte-identical. Raises ValueError when the text is not a notebook."""
    if not new_sources:
        return text
    spans = source_spans(text)
    pieces: List[str] = []
    pos = 0
    for cell in sorted(new_sources):
        span = spans.get(cell)
        if span is None:
            raise ValueError(f"cell {cell} has no source")
        pieces.append(text[pos : span.start])
        pieces.append(_render(new_sources[cell], span, text))
        pos = span.end
    pieces.append(text[pos:])
    return "".join(pieces)


def _edit_fits(edit: Edit, lines: List[str]) -> bool:
    def fits(pos) -> bool:
        row, col = pos
        if row == len(lines) + 1:
            return col == 1
        return 1 <= row <= len(lines) and 1 <= col <= len(lines[row - 1]) + 1

    return fits(edit.start) and fits(edit.end) and edit.start <= edit.end


def apply_edits(text: str, findings: Iterable[Finding], unsafe: bool) -> Tuple[str, int]:
    """The notebook counterpart of :func:`scopelint.fix.apply_edits`: ``findings`` carry
    cell numbers and cell-relative positions (fix edits included). Returns (new notebook
    text, fixes applied); only the changed cells' ``source`` values are rewritten."""
    try:
        nb = load(text)
    except ValueError:
        return text, 0
    by_cell: Dict[int, List[Finding]] = {}
    for f in findings:
        if f.cell is None or f.fix is None:
            continue
        by_cell.setdefault(f.cell, []).append(f)
    new_sources: Dict[int, str] = {}
    total = 0
    for cell, cell_findings in by_cell.items():
        new_src, n = _fixed_cell(nb.cell_text(cell), cell_findings, unsafe)
        if new_src is not None:
            new_sources[cell] = new_src
            total += n
    if not new_sources:
        return text, 0
    return replace_sources(text, new_sources), total


def _fixed_cell(src: str, findings: List[Finding], unsafe: bool) -> Tuple[Optional[str], int]:
    """A cell's source with the fixes of ``findings`` applied (None when nothing
    changes), and how many were applied."""
    from scopelint.fix import apply_edits as apply_text_edits

    lines = split_lines(src)
    usable = [f for f in findings if all(_edit_fits(e, lines) for e in f.fix.edits)]
    if not usable:
        return None, 0
    new_src, n = apply_text_edits(_with_final_newline(src), usable, unsafe)
    if not src.endswith(("\n", "\r")):
        new_src = new_src[:-1] if new_src.endswith("\n") else new_src
    if n and new_src != src:
        return new_src, n
    return None, 0


def _with_final_newline(src: str) -> str:
    # Edits may end at (last row + 1, 1): give that position a place to exist.
    return src if src.endswith(("\n", "\r")) else src + "\n"


def line_starts(text: str) -> List[int]:
    return [0] + [m.end() for m in re.finditer(r"\n", text)]


def offset_to_row_col(starts: List[int], offset: int) -> Tuple[int, int]:
    """0-based (line, character) of a raw offset, given :func:`line_starts`."""
    line = bisect_right(starts, offset) - 1
    return line, offset - starts[line]


# ---------------------------------------------------------------------------------------
# Where a finding is in the .ipynb file itself (SARIF, GitHub annotations), as ruff puts it:
# the line and column of the notebook's JSON text, the cell kept alongside.


def locate_in_file(text: str, findings: Iterable[Finding]) -> None:
    """Give each cell finding ``extra[FILE_LOCATION]``: ``start``/``end`` as (line, column)
    of the notebook's text (1-based, code points; the end exclusive), and, for a finding
    with a fix, ``fix``: the edit of the file that applying it makes, which replaces the
    cell's whole ``source`` value (``--fix`` rewrites it so: :func:`apply_edits`).
    Findings that cannot be placed are left alone."""
    findings = [f for f in findings if f.cell is not None]
    if not findings:
        return
    try:
        index = TextIndex(text)
    except ValueError:
        return
    starts = line_starts(text)
    nb = None
    if any(f.fix is not None for f in findings):
        try:  # (once: loading per finding made a notebook of n cells cost n**2; issue 44)
            nb = load(text)
        except ValueError:
            nb = None

    def where(offset: int) -> Tuple[int, int]:
        line, char = offset_to_row_col(starts, offset)
        return line + 1, char + 1

    for f in findings:
        start = index.offset(f.cell, f.start[0], f.start[1])
        end = index.offset(f.cell, f.end[0], f.end[1])
        if start is None or end is None:
            continue
        located = {"start": where(start), "end": where(max(start, end))}
        span = index.spans.get(f.cell)
        if f.fix is not None and span is not None and nb is not None:
            # (what ``apply_edits(text, [f])`` puts in place of the cell's source value)
            new_src, applied = _fixed_cell(nb.cell_text(f.cell), [f], True)
            if applied and new_src is not None:
                located["fix"] = {"start": where(span.start), "end": where(span.end), "content": _render(new_src, span, text)}
        f.extra[FILE_LOCATION] = located
