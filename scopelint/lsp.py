"""``scopelint lsp``: a Language Server (pygls, stdio).

Diagnostics on open, change (debounced) and save; a quick fix per fixable finding; a
"Disable SLxxx for this line" action; ``source.fixAll.scopelint``; the rule's short doc
on hover. Settings come from the nearest ``pyproject.toml`` of each document and are
re-read when one changes. Python files, ``.ipynb`` files opened as text, and notebooks
synchronised as notebook documents are linted. The server only parses: it never imports
or runs the code it checks. A malformed request gets an error response, and nothing a
client sends takes the server down.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import re
import sys
import tokenize
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from scopelint import __version__, notebook
from scopelint.config import ConfigError, Overrides, Resolver
from scopelint.engine import Settings, lint_source, noqa_codes
from scopelint.finding import SYNTAX_ERROR, Finding
from scopelint.fix import apply_edits
from scopelint.rules import ALL_RULES

log = logging.getLogger("scopelint.lsp")

SOURCE = "scopelint"
FIX_ALL_KIND = "source.fixAll.scopelint"
DEBOUNCE_S = 0.3
FIX_ROUNDS = 8
PYTHON_SUFFIXES = (".py", ".pyi")
_NEWLINE = re.compile(r"\r\n|\r|\n")

MISSING_PYGLS = (
    "scopelint: error: `scopelint lsp` needs the `pygls` package; "
    "install it with: pip install 'scopelint[lsp]'"
)


# ---------------------------------------------------------------------------------------
# Pure helpers (no pygls): positions, minimal edits, noqa.


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


def add_noqa(line: str, code: str) -> Optional[str]:
    """``line`` (no line break) with ``code`` added to its ``# noqa:`` list (or a new one);
    None when it cannot be done or is not needed (bare ``# noqa``, line continuation)."""
    codes = noqa_codes(line)
    if codes is not None:
        if codes == () or code in codes:
            return None
        m = re.search(r"#\s*noqa:\s*[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*", line, re.IGNORECASE)
        if m is None:
            return None
        return line[: m.end()] + ", " + code + line[m.end() :]
    body = line.rstrip()
    if body.endswith("\\"):
        return None
    return body + "  # noqa: " + code


def rows_inside_strings(text: str) -> Set[int]:
    """1-based rows whose end lies inside a (multi-line) string: no comment can go there."""
    rows: Set[int] = set()
    string_types = {tokenize.STRING}
    for name in ("FSTRING_MIDDLE", "TSTRING_MIDDLE"):
        if hasattr(tokenize, name):
            string_types.add(getattr(tokenize, name))
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in string_types and tok.end[0] > tok.start[0]:
                rows.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError, ValueError):
        pass
    return rows


def is_notebook_path(path: str, language_id: Optional[str] = None) -> bool:
    return path.lower().endswith(".ipynb") or (language_id or "") in ("jupyter", "ipynb")


def is_python_document(path: str, language_id: Optional[str]) -> bool:
    return path.lower().endswith(PYTHON_SUFFIXES) or language_id == "python"


def hover_markdown(codes: Sequence[str]) -> str:
    parts = []
    for code in codes:
        rule = ALL_RULES.get(code)
        if rule is None:
            parts.append(f"**{code}**: the file cannot be parsed, so it was not checked.")
            continue
        fix = {"safe": "Fix available.", "unsafe": "Fix available (unsafe)."}.get(rule.fixable or "", "")
        parts.append(
            f"**{rule.code}** `{rule.name}` ({rule.severity})\n\n{rule.summary}\n\n"
            f"**How to fix:** {rule.help} {fix}".rstrip()
            + f"\n\n[Documentation]({rule.url()}) · `scopelint rule {rule.code}`"
        )
    return "\n\n---\n\n".join(parts)


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


# ---------------------------------------------------------------------------------------
# What one lint produced, per document.


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


def _overlaps(a: tuple, b: tuple) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


# ---------------------------------------------------------------------------------------
# The server.


def create_server():
    """Build the pygls server (raises ImportError without pygls)."""
    from lsprotocol import types
    from pygls.exceptions import JsonRpcException, JsonRpcInternalError
    from pygls.lsp.server import LanguageServer
    from pygls.protocol import LanguageServerProtocol
    from pygls.uris import to_fs_path

    class _Malformed:
        """A request whose parameters could not be read: answered with an error."""

        def __init__(self, msg_id, error):
            self.id = msg_id
            self.error = error

    class Protocol(LanguageServerProtocol):
        def structure_message(self, data):
            try:
                return super().structure_message(data)
            except JsonRpcException as exc:
                if isinstance(data, dict) and "id" in data and "method" in data:
                    return _Malformed(data["id"], exc)
                raise
            except Exception as exc:  # pragma: no cover - defensive
                if isinstance(data, dict) and "id" in data and "method" in data:
                    return _Malformed(data["id"], JsonRpcInternalError(str(exc)))
                raise

        def handle_message(self, message):
            if isinstance(message, _Malformed):
                log.warning("malformed request %r: %s", message.id, message.error)
                self._send_response(message.id, None, message.error.to_response_error())
                return
            if not hasattr(message, "jsonrpc"):  # e.g. a JSON array or a bare value
                log.warning("ignoring a message that is not JSON-RPC: %r", message)
                return
            super().handle_message(message)

    class Server(LanguageServer):
        def report_server_error(self, error, source):
            # Log, never pop up or die: requests already get an error response.
            log.error("%s: %s", getattr(source, "__name__", source), error)
            try:
                self.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=f"scopelint: {error}")
                )
            except Exception:
                pass

    nb_sync = types.NotebookDocumentSyncOptions(
        notebook_selector=[
            types.NotebookDocumentFilterWithCells(
                notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]
            )
        ],
        save=True,
    )
    server = Server(
        "scopelint",
        __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Full,
        notebook_document_sync=nb_sync,
        protocol_cls=Protocol,
    )
    settings_cache = SettingsCache()
    linted: Dict[str, Linted] = {}  # text document or notebook URI -> last lint
    by_uri: Dict[str, List[Item]] = {}  # diagnostic URI (document or cell) -> items
    pending: Dict[str, asyncio.TimerHandle] = {}
    shown_errors: Set[str] = set()

    severity_map = {
        "error": types.DiagnosticSeverity.Error,
        "warning": types.DiagnosticSeverity.Warning,
        "info": types.DiagnosticSeverity.Information,
    }

    # -- helpers ------------------------------------------------------------------------

    def encoding() -> str:
        enc = server.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    def path_of(uri: str) -> str:
        path = None
        try:
            path = to_fs_path(uri)
        except Exception:
            path = None
        if not path or not uri.startswith("file:"):
            # An unsaved buffer (untitled:Untitled-1): settings of the workspace root.
            root = server.workspace.root_path or os.getcwd()
            name = re.sub(r"[^\w.-]", "_", uri.rsplit("/", 1)[-1].rsplit(":", 1)[-1]) or "untitled"
            return os.path.join(root, name)
        return path

    def show_once(message: str, kind=types.MessageType.Warning) -> None:
        if message in shown_errors:
            return
        shown_errors.add(message)
        server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def settings_for(path: str) -> Settings:
        try:
            return settings_cache.settings_for(Path(path))
        except ConfigError as exc:
            show_once(f"scopelint: configuration error: {exc}; using the default settings")
            return Settings()
        except Exception as exc:
            log.exception("resolving settings for %s", path)
            show_once(f"scopelint: cannot read the configuration: {exc}")
            return Settings()

    def lsp_range(start, end) -> types.Range:
        return types.Range(types.Position(*start), types.Position(*end))

    def make_diagnostic(f: Finding, rng: tuple) -> types.Diagnostic:
        rule = ALL_RULES.get(f.code)
        return types.Diagnostic(
            range=lsp_range(*rng),
            message=f.message,
            severity=severity_map.get(f.severity, types.DiagnosticSeverity.Error),
            code=f.code,
            code_description=types.CodeDescription(href=rule.url()) if rule else None,
            source=SOURCE,
            data={"fixable": f.fix is not None},
        )

    def finding_range(doc: DocText, f: Finding, start_offset: int, end_offset: int) -> tuple:
        if end_offset <= start_offset:  # an empty range (syntax errors): the rest of the line
            line = bisect_right(doc.starts, start_offset) - 1
            end_offset = max(start_offset, doc.line_end(line))
            if end_offset == start_offset and start_offset > doc.starts[line]:
                start_offset -= 1
        return doc.position(start_offset), doc.position(end_offset)

    def log_errors(errors: Sequence[str]) -> None:
        for e in errors:
            log.error("%s", e)
            server.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"scopelint: {e}"))

    def publish(uri: str, items: List[Item], version=None) -> None:
        by_uri[uri] = items
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[i.diagnostic for i in items], version=version)
        )

    # -- linting ------------------------------------------------------------------------

    def lintable(uri: str) -> Optional[str]:
        """'python' | 'ipynb' | None for a text document."""
        doc = server.workspace.text_documents.get(uri)
        if doc is None or server.workspace.get_notebook_document(cell_uri=uri) is not None:
            return None
        path = path_of(uri)
        if is_notebook_path(path, doc.language_id):
            return "ipynb"
        if is_python_document(path, doc.language_id):
            return "python"
        return None

    def lint_document(uri: str) -> None:
        pending.pop(uri, None)
        kind = lintable(uri)
        if kind is None:
            return
        doc = server.workspace.get_text_document(uri)
        text = doc.source
        path = path_of(uri)
        settings = settings_for(path)
        dt = DocText(text, encoding())
        items: List[Item] = []
        if kind == "ipynb":
            result = lint_source(text, path, settings, notebook=True)
            index = None
            for f in result.findings:
                start = end = None
                if f.cell is not None:
                    if index is None:
                        try:
                            index = notebook.TextIndex(text)
                        except ValueError:
                            index = False
                    if index:
                        start = index.offset(f.cell, *f.start)
                        end = index.offset(f.cell, *f.end)
                if start is None:
                    start = dt.offset(*f.start)
                    end = dt.offset(*f.end)
                rng = finding_range(dt, f, start, end if end is not None else start)
                items.append(Item(f, uri, rng))
        else:
            result = lint_source(text, path, settings)
            for f in result.findings:
                rng = finding_range(dt, f, dt.offset(*f.start), dt.offset(*f.end))
                items.append(Item(f, uri, rng))
        log_errors(result.errors)
        for item in items:
            item.diagnostic = make_diagnostic(item.finding, item.range)
        linted[uri] = Linted(doc.version, items)
        publish(uri, items, doc.version)

    def notebook_cells(nb) -> List[Tuple[int, str, str]]:
        """(cell number, cell URI, source) of a synced notebook's Python code cells."""
        out = []
        for number, cell in enumerate(nb.cells, start=1):
            if cell.kind != types.NotebookCellKind.Code:
                continue
            doc = server.workspace.text_documents.get(cell.document)
            if doc is None or (doc.language_id and doc.language_id != "python"):
                continue
            out.append((number, cell.document, doc.source))
        return out

    def lint_cells(path: str, cells: List[Tuple[int, str, str]]):
        """Lint cells as a notebook: (findings with cell numbers, errors)."""
        source, line_map = notebook.join([(n, src) for n, _, src in cells])
        nb = notebook.Notebook(source, line_map, [])
        result = lint_source(source, path, settings_for(path))
        notebook.map_findings(nb, result.findings)
        return result.findings, result.errors

    def lint_notebook(nb_uri: str) -> None:
        pending.pop(nb_uri, None)
        nb = server.workspace.get_notebook_document(notebook_uri=nb_uri)
        if nb is None:
            return
        cells = notebook_cells(nb)
        findings, errors = lint_cells(path_of(nb_uri), cells)
        log_errors(errors)
        uri_of = {n: u for n, u, _ in cells}
        per_cell: Dict[str, List[Item]] = {u: [] for _, u, _ in cells}
        for f in findings:
            uri = uri_of.get(f.cell) if f.cell is not None else (cells[0][1] if cells else None)
            if uri is None:
                continue
            dt = DocText(server.workspace.get_text_document(uri).source, encoding())
            rng = finding_range(dt, f, dt.offset(*f.start), dt.offset(*f.end))
            item = Item(f, uri, rng)
            item.diagnostic = make_diagnostic(f, rng)
            per_cell[uri].append(item)
        old = linted.get(nb_uri)
        linted[nb_uri] = Linted(nb.version, [i for items in per_cell.values() for i in items])
        for uri, items in per_cell.items():
            publish(uri, items)
        if old is not None:  # cells that went away or stopped being Python
            for item in old.items:
                if item.uri not in per_cell:
                    publish(item.uri, [])

    def safely(fn: Callable, *args) -> None:
        try:
            fn(*args)
        except Exception as exc:  # the server outlives any bug
            log.exception("scopelint: internal error")
            try:
                server.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=f"scopelint: internal error: {exc!r}")
                )
            except Exception:
                pass

    def schedule(key: str, fn: Callable, delay: float) -> None:
        handle = pending.pop(key, None)
        if handle is not None:
            handle.cancel()
        if delay <= 0:
            safely(fn, key)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            safely(fn, key)
            return
        pending[key] = loop.call_later(delay, safely, fn, key)

    def relint_all() -> None:
        for uri in list(server.workspace.text_documents):
            if lintable(uri):
                schedule(uri, lint_document, 0)
        for uri in list(server.workspace.notebook_documents):
            schedule(uri, lint_notebook, 0)

    def notebook_of_cell(uri: str) -> Optional[str]:
        """The URI (workspace key) of the synced notebook holding cell ``uri``, if any."""
        nb = server.workspace.get_notebook_document(cell_uri=uri)
        if nb is None:
            return None
        return next((k for k, v in server.workspace.notebook_documents.items() if v is nb), None)

    def fresh_items(uri: str) -> List[Item]:
        """The items shown on ``uri``, re-linting first if the document moved on."""
        key = notebook_of_cell(uri)
        if key is not None:
            nb = server.workspace.get_notebook_document(notebook_uri=key)
            if key not in linted or linted[key].version != nb.version:
                schedule(key, lint_notebook, 0)
            return by_uri.get(uri, [])
        doc = server.workspace.text_documents.get(uri)
        if doc is None:
            return []
        if uri not in linted or linted[uri].version != doc.version:
            schedule(uri, lint_document, 0)
        return by_uri.get(uri, [])

    # -- edits --------------------------------------------------------------------------

    def text_edit(dt: DocText, start: int, end: int, new_text: str) -> types.TextEdit:
        return types.TextEdit(range=lsp_range(dt.position(start), dt.position(end)), new_text=new_text)

    def whole_change(uri: str, old: str, new: str) -> Optional[types.TextEdit]:
        if old == new:
            return None
        start, end, repl = minimal_change(old, new)
        return text_edit(DocText(old, encoding()), start, end, repl)

    def workspace_edit(changes: Dict[str, List[types.TextEdit]]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(changes={u: e for u, e in changes.items() if e})

    def fix_edit(item: Item) -> Optional[types.WorkspaceEdit]:
        f = item.finding
        text = server.workspace.get_text_document(item.uri).source
        if lintable(item.uri) == "ipynb":
            new, n = notebook.apply_edits(text, [f], unsafe=True)
            edit = whole_change(item.uri, text, new) if n else None
            return workspace_edit({item.uri: [edit]}) if edit else None
        dt = DocText(text, encoding())
        edits = [text_edit(dt, dt.offset(*e.start), dt.offset(*e.end), e.content) for e in f.fix.edits]
        return workspace_edit({item.uri: edits})

    def noqa_edit(item: Item) -> Optional[types.WorkspaceEdit]:
        f = item.finding
        text = server.workspace.get_text_document(item.uri).source
        if lintable(item.uri) == "ipynb":
            try:
                nb = notebook.load(text)
            except ValueError:
                return None
            src = nb.cell_text(f.cell) if f.cell else ""
            new_src = _noqa_in(src, f)
            if new_src is None:
                return None
            try:
                new = notebook.replace_sources(text, {f.cell: new_src})
            except ValueError:
                return None
            edit = whole_change(item.uri, text, new)
            return workspace_edit({item.uri: [edit]}) if edit else None
        new = _noqa_in(text, f)
        if new is None:
            return None
        edit = whole_change(item.uri, text, new)
        return workspace_edit({item.uri: [edit]}) if edit else None

    def _noqa_in(text: str, f: Finding) -> Optional[str]:
        dt = DocText(text)
        row = f.start[0]
        if not 1 <= row <= len(dt.starts) or row in rows_inside_strings(text):
            return None
        start, end = dt.starts[row - 1], dt.line_end(row - 1)
        new_line = add_noqa(text[start:end], f.code)
        if new_line is None:
            return None
        return text[:start] + new_line + text[end:]

    def fix_all_text(text: str, path: str, is_nb: bool) -> str:
        settings = settings_for(path)
        for _ in range(FIX_ROUNDS):
            if is_nb:
                result = lint_source(text, path, settings, notebook=True)
                new, n = notebook.apply_edits(text, result.findings, False)
            else:
                result = lint_source(text, path, settings)
                new, n = apply_edits(text, result.findings, False)
            if n == 0 or new == text:
                break
            text = new
        return text

    def fix_all_notebook(nb_uri: str) -> Dict[str, str]:
        """Cell URI -> new source for a synced notebook."""
        nb = server.workspace.get_notebook_document(notebook_uri=nb_uri)
        if nb is None:
            return {}
        cells = notebook_cells(nb)
        original = {n: src for n, _, src in cells}
        sources = dict(original)
        path = path_of(nb_uri)
        for _ in range(FIX_ROUNDS):
            findings, _errors = lint_cells(path, [(n, u, sources[n]) for n, u, _ in cells])
            changed = 0
            for n in sources:
                mine = [f for f in findings if f.cell == n and f.fix is not None]
                if not mine:
                    continue
                src = sources[n]
                padded = src if src.endswith(("\n", "\r")) else src + "\n"
                new, k = apply_edits(padded, mine, False)
                if padded is not src and new.endswith("\n"):
                    new = new[:-1]
                if k and new != src:
                    sources[n] = new
                    changed += k
            if not changed:
                break
        uri_of = {n: u for n, u, _ in cells}
        return {uri_of[n]: s for n, s in sources.items() if s != original[n]}

    def fix_all_edit(uri: str) -> Optional[types.WorkspaceEdit]:
        key = notebook_of_cell(uri)
        if key is not None:
            changes = {}
            for cell_uri, new in fix_all_notebook(key).items():
                old = server.workspace.get_text_document(cell_uri).source
                edit = whole_change(cell_uri, old, new)
                if edit:
                    changes[cell_uri] = [edit]
            return workspace_edit(changes) if changes else None
        kind = lintable(uri)
        if kind is None:
            return None
        text = server.workspace.get_text_document(uri).source
        new = fix_all_text(text, path_of(uri), kind == "ipynb")
        edit = whole_change(uri, text, new)
        return workspace_edit({uri: [edit]}) if edit else None

    # -- handlers -----------------------------------------------------------------------

    @server.feature(types.INITIALIZED)
    def initialized(params):
        caps = server.client_capabilities
        watch = caps.workspace and caps.workspace.did_change_watched_files
        if watch and watch.dynamic_registration:
            reg = types.Registration(
                id="scopelint-pyproject",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml")]
                ),
            )

            def done(fut):
                if not fut.cancelled() and fut.exception() is not None:
                    log.warning("the client did not register the pyproject.toml watcher: %s", fut.exception())

            try:
                server.client_register_capability(types.RegistrationParams(registrations=[reg])).add_done_callback(done)
            except Exception as exc:
                log.warning("cannot register a pyproject.toml watcher: %s", exc)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params):
        schedule(params.text_document.uri, lint_document, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params):
        schedule(params.text_document.uri, lint_document, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params):
        uri = params.text_document.uri
        if path_of(uri).endswith("pyproject.toml"):
            settings_cache.invalidate()
            shown_errors.clear()
            relint_all()
            return
        schedule(uri, lint_document, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params):
        uri = params.text_document.uri
        handle = pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        linted.pop(uri, None)
        if by_uri.pop(uri, None) is not None:
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params):
        if any(c.uri.endswith("pyproject.toml") for c in params.changes):
            settings_cache.invalidate()
            shown_errors.clear()
            relint_all()

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def nb_did_open(params):
        schedule(params.notebook_document.uri, lint_notebook, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def nb_did_change(params):
        schedule(params.notebook_document.uri, lint_notebook, DEBOUNCE_S)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def nb_did_save(params):
        schedule(params.notebook_document.uri, lint_notebook, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def nb_did_close(params):
        uri = params.notebook_document.uri
        handle = pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        old = linted.pop(uri, None)
        uris = {c.uri for c in params.cell_text_documents} | ({i.uri for i in old.items} if old else set())
        for cell_uri in uris:
            if by_uri.pop(cell_uri, None) is not None:
                server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False
        ),
    )
    def code_action(params):
        uri = params.text_document.uri
        only = params.context.only

        def wanted(kind: str) -> bool:
            return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)

        items = fresh_items(uri)
        actions: List[types.CodeAction] = []
        if wanted(types.CodeActionKind.QuickFix):
            req = ((params.range.start.line, params.range.start.character), (params.range.end.line, params.range.end.character))
            asked = {
                (d.code, (d.range.start.line, d.range.start.character), (d.range.end.line, d.range.end.character))
                for d in params.context.diagnostics
                if d.source == SOURCE
            }
            for item in items:
                f = item.finding
                if not (_overlaps(item.range, req) or (f.code, *item.range) in asked):
                    continue
                if f.fix is not None:
                    edit = fix_edit(item)
                    if edit is not None:
                        unsafe = f.fix.applicability != "safe"
                        actions.append(
                            types.CodeAction(
                                title=f"{f.code}: {f.fix.message}" + (" (unsafe)" if unsafe else ""),
                                kind=types.CodeActionKind.QuickFix,
                                diagnostics=[item.diagnostic],
                                edit=edit,
                                is_preferred=not unsafe,
                            )
                        )
                if f.code != SYNTAX_ERROR:
                    edit = noqa_edit(item)
                    if edit is not None:
                        actions.append(
                            types.CodeAction(
                                title=f"Disable {f.code} for this line",
                                kind=types.CodeActionKind.QuickFix,
                                diagnostics=[item.diagnostic],
                                edit=edit,
                            )
                        )
        if wanted(FIX_ALL_KIND) and (
            only is not None or any(i.finding.fix is not None and i.finding.fix.applicability == "safe" for i in items)
        ):
            edit = fix_all_edit(uri)
            if edit is not None or only is not None:
                actions.append(
                    types.CodeAction(
                        title="scopelint: fix all auto-fixable problems",
                        kind=FIX_ALL_KIND,
                        edit=edit or types.WorkspaceEdit(changes={}),
                    )
                )
        return actions or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params):
        uri = params.text_document.uri
        pos = (params.position.line, params.position.character)
        hits = [i for i in fresh_items(uri) if i.range[0] <= pos <= i.range[1]]
        if not hits:
            return None
        codes = list(dict.fromkeys(i.finding.code for i in hits))
        rng = hits[0].range
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_markdown(codes)),
            range=lsp_range(*rng),
        )

    @server.feature(types.SHUTDOWN)
    def shutdown(params):
        for handle in pending.values():
            handle.cancel()
        pending.clear()

    return server


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of ``scopelint lsp``: serve over stdin/stdout until the client exits."""
    try:
        import pygls  # noqa: F401
        import lsprotocol  # noqa: F401
    except ImportError:
        print(MISSING_PYGLS, file=sys.stderr)
        return 2
    logging.basicConfig(level=os.environ.get("SCOPELINT_LOG_LEVEL", "WARNING").upper(), stream=sys.stderr,
                        format="scopelint-lsp %(levelname)s %(name)s: %(message)s")
    server = create_server()
    # stdout is the protocol channel: anything else printing there would corrupt it.
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr
    server.start_io(sys.stdin.buffer, stdout)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
