"""What the server keeps per document, and which documents it lints: pure, no pygls.

``Item``: one finding shown on a document (or a synced notebook's cell) with its LSP
range; ``Linted``: the items of one lint and the version it saw; ``SettingsCache``: the
``pyproject.toml`` settings per document, re-read when one changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from scopelint.config import Overrides, Resolver
from scopelint.engine import Settings
from scopelint.finding import Finding

PYTHON_SUFFIXES = (".py", ".pyi")


def is_notebook_path(path: str, language_id: Optional[str] = None) -> bool:
    return path.lower().endswith(".ipynb") or (language_id or "") in ("jupyter", "ipynb")


def is_python_document(path: str, language_id: Optional[str]) -> bool:
    return path.lower().endswith(PYTHON_SUFFIXES) or language_id == "python"


class SettingsCache:
    """The nearest pyproject.toml's settings per document, re-read when any pyproject.toml
    on the way up changes (checked with a few ``stat`` calls on each lint)."""

    def __init__(self):
        self.resolver = Resolver(Overrides())
        self._seen: Dict[Path, tuple] = {}

    def invalidate(self) -> None:
        self.resolver = Resolver(Overrides())
        self._seen.clear()

    @staticmethod
    def _fingerprint(directory: Path) -> tuple:
        out = []
        d = directory
        while True:
            candidate = d / "pyproject.toml"
            try:
                st = candidate.stat()
                out.append((str(candidate), st.st_mtime_ns, st.st_size))
            except OSError:
                pass
            if d.parent == d:
                return tuple(out)
            d = d.parent

    def settings_for(self, path: Path) -> Settings:
        """Raises ConfigError for a broken configuration."""
        directory = Path(os.path.abspath(path.parent))
        fp = self._fingerprint(directory)
        if self._seen.get(directory, fp) != fp:
            self.invalidate()
        self._seen[directory] = fp
        return self.resolver.settings_for(Path(os.path.abspath(path)))


@dataclass
class Item:
    finding: Finding
    uri: str  # the document the diagnostic is shown on (a cell's URI for synced notebooks)
    range: tuple  # ((line, char), (line, char)), LSP units
    diagnostic: object = None


@dataclass
class Linted:
    version: object
    items: List[Item] = field(default_factory=list)


def overlaps(a: tuple, b: tuple) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
