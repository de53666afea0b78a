"""What the server keeps per document, and which documents it lints: pure, no pygls.

``Item``: one finding shown on a document (or a synced notebook's cell) with its LSP
range; ``Linted``: the items of one lint and the version it saw; ``SettingsCache``: the
``pyproject.toml`` settings per document, re-read when one changes, with the editor's
settings over them (``ClientSettings``); ``Limits``: the largest document the server
analyses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional
from urllib.parse import unquote

from scopelint.config import CONFIG_FILES, ConfigError, Overrides, Resolver, expand_codes, load_config
from scopelint.engine import Settings
from scopelint.finding import Finding

PYTHON_SUFFIXES = (".py", ".pyi")
TOO_LARGE = "scopelint: document too large to analyse"  # the start of every Limits message


def open_document(ls, uri: str):
    """The open text document ``uri`` names, or None. pygls keeps them under their URIs
    percent-decoded, and clients send them encoded: VS Code's notebook cells always
    (``vscode-notebook-cell:/nb.ipynb#W0sZmlsZQ%3D%3D``), files where the path has a space
    or another character URIs escape."""
    docs = ls.workspace.text_documents
    return docs.get(uri) or docs.get(unquote(uri))


def is_notebook_path(path: str, language_id: Optional[str] = None) -> bool:
    return path.lower().endswith(".ipynb") or (language_id or "") in ("jupyter", "ipynb")


def is_python_document(path: str, language_id: Optional[str]) -> bool:
    return path.lower().endswith(PYTHON_SUFFIXES) or language_id == "python"


def _options(options) -> Optional[dict]:
    """The client's options: a dict, or the dict under its ``"scopelint"`` key."""
    if isinstance(options, dict) and isinstance(options.get("scopelint"), dict):
        options = options["scopelint"]
    return options if isinstance(options, dict) else None


class ClientSettings:
    """The editor's settings of the rules, as the command line's options: ``select``,
    ``ignore`` and ``extendSelect`` (lists of codes or prefixes, as ``--select``,
    ``--ignore``, ``--extend-select``), ``severity`` (``{CODE: "error" | "warning" |
    "info"}``, as ``--config 'severity = {...}'``: it replaces the file's table) and
    ``configuration`` (a ``pyproject.toml`` or TOML file used instead of the nearest one,
    as ``--config FILE``; relative to the workspace root). Given in
    ``initializationOptions`` and again in ``workspace/didChangeConfiguration``'s
    ``settings`` (also under a ``"scopelint"`` key): a key given replaces its value, a key
    not given keeps it, ``null`` unsets it. A bad value is a complaint and is not taken."""

    KEYS = ("select", "ignore", "extendSelect", "severity", "configuration")

    def __init__(self):
        self.values: Dict[str, object] = {}

    def update(self, options, source: str = "initializationOptions", root: Optional[str] = None) -> List[str]:
        """Take the keys given in ``options``; returns complaints."""
        options = _options(options)
        if options is None:
            return []
        bad = []
        for key in self.KEYS:
            if key not in options:
                continue
            value = options[key]
            if value is None:
                self.values.pop(key, None)
                continue
            where = f"{source}.{key}"
            try:
                self.values[key] = self._checked(key, value, where, root)
            except ConfigError as exc:
                bad.append(str(exc))
        return bad

    @staticmethod
    def _checked(key: str, value, where: str, root: Optional[str]):
        if key in ("select", "ignore", "extendSelect"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where} must be a list of codes, not {value!r}")
            expand_codes(value, where)  # an unknown code: ConfigError
            return list(value)
        if key == "severity":
            if not isinstance(value, dict):
                raise ConfigError(f"{where} must be a table of CODE: \"error\" | \"warning\" | \"info\", not {value!r}")
            load_config(Path(where), {}, {"severity": value})  # its errors name ``where``
            return dict(value)
        if not isinstance(value, str) or not value.strip():  # configuration
            raise ConfigError(f"{where} must be the path of a TOML file, not {value!r}")
        path = Path(os.path.expanduser(value))
        if not path.is_absolute() and root:
            path = Path(root) / path
        if not path.is_file():
            raise ConfigError(f"{where}: no such file: {path}")
        Resolver(Overrides(config_file=path))  # an unreadable or invalid file: ConfigError
        return str(path)

    def overrides(self) -> Overrides:
        v = self.values
        settings = {"severity": v["severity"]} if "severity" in v else {}
        config = Path(v["configuration"]) if "configuration" in v else None
        return Overrides(v.get("select"), list(v.get("ignore", [])), list(v.get("extendSelect", [])), config, settings)


class SettingsCache:
    """The nearest configuration's settings per document (``.scopelint.toml``,
    ``scopelint.toml``, ``pyproject.toml``), re-read when any of them on the way up
    changes (checked with a few ``stat`` calls on each lint), with the editor's settings
    (``overrides``, ``ClientSettings``) over them."""

    def __init__(self, overrides: Optional[Overrides] = None):
        self.overrides = overrides or Overrides()
        self.resolver = Resolver(self.overrides)
        self._seen: Dict[Path, tuple] = {}

    def invalidate(self, overrides: Optional[Overrides] = None) -> None:
        """Read every configuration again (with new ``overrides``, if given)."""
        if overrides is not None:
            self.overrides = overrides
        self.resolver = Resolver(self.overrides)
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
        options = _options(options)
        if options is None:
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
