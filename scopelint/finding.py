"""What the engine reports: findings with locations and optional fixes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

Position = Tuple[int, int]  # (row, column), both 1-based

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Edit:
    content: str
    start: Position
    end: Position


@dataclass(frozen=True)
class Fix:
    applicability: str  # "safe" | "unsafe"
    message: str
    edits: Tuple[Edit, ...]


@dataclass
class Finding:
    code: str
    message: str
    severity: str
    filename: str
    start: Position
    end: Position
    help: Optional[str] = None
    fix: Optional[Fix] = None
    cell: Optional[int] = None
    runtime: Optional[dict] = None
    extra: dict = field(default_factory=dict)

    @property
    def row(self) -> int:
        return self.start[0]

    @property
    def col(self) -> int:
        return self.start[1]

    def sort_key(self):
        return (self.filename, self.cell or 0, self.start, self.code)


SYNTAX_ERROR = "SL000"
# ``Finding.extra`` key: a notebook finding's place in the .ipynb text itself
# (``scopelint.notebook.locate_in_file``), for SARIF and GitHub annotations.
FILE_LOCATION = "notebook_file"


def syntax_finding(filename: str, message: str, row: int = 1, col: int = 1) -> Finding:
    return Finding(SYNTAX_ERROR, message, "error", filename, (row, col), (row, col))


