"""What the server keeps per document, and which documents it lints: pure, no pygls.

``Item``: one finding shown on a document (or a synced notebook's cell) with its LSP
range; ``Linted``: the items of one lint and the version it saw; ``SettingsCache``: the
``pyproject.toml`` settings per document, re-read when one changes; ``Limits``: the
largest document the server analyses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from scopelint.config import CONFIG_FILES, Overrides, Resolver
from scopelint.engine import Settings
from scopelint.finding import Finding

PYTHON_SUFFIXES = (".py", ".pyi")
TOO_LARGE = "scopelint: document too large to analyse"  # the start of every Limits message


def is_notebook_path(path: str, language_id: Optional[str] = None) -> bool:
    return path.lower().endswith(".ipynb") or (language_id or "") in ("jupyter", "ipynb")


def is_python_document(path: str, language_id: Optional[str]) -> bool:
    return path.lower().endswith(PYTHON_SUFFIXES) or language_id == "python"


class SettingsCache:
    """The nearest configuration's settings per document (``.scopelint.toml``,
    ``scopelint.toml``, ``pyproject.toml``), re-read when any of them on the way up
    changes (checked with a few ``stat`` calls on each lint)."""

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
            for name in CONFIG_FILES:  # (scopelint.toml and .scopelint.toml too)
                candidate = d / name
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
        settings = self.resolver.settings_for(Path(os.path.abspath(path)))
        from scopelint import set_docs_url

        set_docs_url(self.resolver.config_for(Path(os.path.abspath(path))).docs_url)  # (the links of its diagnostics)
        return settings


@dataclass
class Limits:
    """The largest document the server analyses. A lint costs about a millisecond a
    line (a few seconds for a few thousand lines of many small functions, more for some
    shapes): beyond these the server shows one diagnostic instead of analysing, so that a
    generated or minified file cannot keep the worker busy for minutes or use gigabytes.
    A lint that runs longer than ``max_seconds`` is stopped, with the same diagnostic.
    Set through ``initializationOptions`` (``{"maxLines": N, "maxChars": N,
    "maxSeconds": N}``, also under a ``"scopelint"`` key), and again by
    ``workspace/didChangeConfiguration``'s ``settings`` (same keys); 0 turns a limit off.

    ``"verifyFixes": true`` (off by default) is the one option that is no limit: it
    offers "Fix and verify" code actions, which run the program (``scopelint.lsp.verified``)."""

    max_lines: int = 20_000
    max_chars: int = 2_000_000
    max_seconds: float = 60.0
    verify_fixes: bool = False

    def update(self, options, source: str = "initializationOptions") -> List[str]:
        """Take the limits from ``options`` (``initializationOptions``, or the settings
        of ``workspace/didChangeConfiguration``: ``source`` names it in the complaints);
        a key not given keeps its value. Returns complaints."""
        if isinstance(options, dict) and isinstance(options.get("scopelint"), dict):
            options = options["scopelint"]
        if not isinstance(options, dict):
            return []
        bad = []
        for key, attr in (("maxLines", "max_lines"), ("maxChars", "max_chars"), ("maxSeconds", "max_seconds")):
            if key not in options:
                continue
            value = options[key]
            kinds = (int, float) if key == "maxSeconds" else int
            if isinstance(value, bool) or not isinstance(value, kinds) or value < 0:
                what = "a number" if key == "maxSeconds" else "a whole number"
                bad.append(f"{source}.{key} must be {what} >= 0, not {value!r}")
                continue
            setattr(self, attr, value)
        if "verifyFixes" in options:
            if isinstance(options["verifyFixes"], bool):
                self.verify_fixes = options["verifyFixes"]
            else:
                bad.append(f"{source}.verifyFixes must be true or false, not {options['verifyFixes']!r}")
        return bad

    def exceeded(self, text: str) -> Optional[str]:
        """The reason ``text`` is too large to analyse, or None."""
        chars = len(text)
        if self.max_chars and chars > self.max_chars:
            return f"{TOO_LARGE} ({chars} characters > limit {self.max_chars})"
        lines = text.count("\n") + 1
        if self.max_lines and lines > self.max_lines:
            return f"{TOO_LARGE} ({lines} lines > limit {self.max_lines})"
        return None


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
