"""Jupyter notebooks: code cells joined in order so state flows across cells; magics
and shell escapes blanked; findings mapped back to (cell, line in cell)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

_MAGIC = re.compile(r"^\s*([%!?]|\w+\?\s*$)")


@dataclass
class Notebook:
    source: str  # the joined code cells
    line_map: List[Tuple[int, int]]  # joined row - 1 -> (cell index, row in cell)
    cells: list  # the notebook's cells, as loaded
    raw: dict


def cell_source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def load(text: str) -> Notebook:
    """Raises ValueError on anything that is not a notebook."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ValueError("not a Jupyter notebook (no `cells` list)")
    lines: List[str] = []
    line_map: List[Tuple[int, int]] = []
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell_source(cell)
        if src.lstrip().startswith("%%"):
            continue  # a cell magic: the cell is not Python
        for row, line in enumerate(src.splitlines(), start=1):
            lines.append("" if _MAGIC.match(line) else line)
            line_map.append((index, row))
        lines.append("")
        line_map.append((index, len(src.splitlines()) + 1))
    return Notebook("\n".join(lines) + "\n", line_map, data["cells"], data)


def locate(nb: Notebook, row: int) -> Tuple[Optional[int], int]:
    if 1 <= row <= len(nb.line_map):
        return nb.line_map[row - 1]
    return None, row
