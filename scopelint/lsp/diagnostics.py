"""Diagnostics of a text document: which documents are linted, the lint, and the
LSP form of a finding (range, severity, code)."""

from __future__ import annotations

from bisect import bisect_right
import logging
from typing import Dict, List, Optional, Tuple

from lsprotocol import types

from scopelint import notebook
from scopelint.engine import Settings, lint_source
from scopelint.finding import Finding, syntax_finding
from scopelint.lsp.documents import Item, Linted, is_notebook_path, is_python_document, open_document
from scopelint.lsp.text import DocText
from scopelint.rules import ALL_RULES

log = logging.getLogger("scopelint.lsp")

SOURCE = "scopelint"
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def lsp_range(start, end) -> types.Range:
    return types.Range(types.Position(*start), types.Position(*end))


def make_diagnostic(f: Finding, rng: tuple) -> types.Diagnostic:
    rule = ALL_RULES.get(f.code)
    return types.Diagnostic(
        range=lsp_range(*rng),
        message=f.message,
        severity=SEVERITY.get(f.severity, types.DiagnosticSeverity.Error),
        code=f.code,
        code_description=types.CodeDescription(href=rule.url()) if rule and rule.url() else None,
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


def lintable(ls, uri: str) -> Optional[str]:
    """'python' | 'ipynb' | None for a text document."""
    doc = open_document(ls, uri)
    if doc is None or ls.workspace.get_notebook_document(cell_uri=uri) is not None:
        return None
    path = ls.path_of(uri)
    if is_notebook_path(path, doc.language_id):
        return "ipynb"
    if is_python_document(path, doc.language_id):
        return "python"
    return None


def too_large_item(uri: str, path: str, message: str) -> Item:
    """The one diagnostic of a document too large to analyse (on its first line)."""
    f = syntax_finding(path, message)
    f.severity = "warning"
    item = Item(f, uri, ((0, 0), (0, 0)))
    item.diagnostic = make_diagnostic(f, item.range)
    return item


def lint_text(text: str, path: str, settings: Settings, encoding: str, uri: str, kind: str,
              buffers: Optional[Dict[str, str]] = None) -> Tuple[List[Item], List[str]]:
    """Lint a text document: (its items, with their diagnostics; the engine's errors).
    Pure (no server): this runs on the lint worker. ``buffers``: the other open Python
    documents' texts by path (they stand for the files on disk when the document is
    linted as part of its program: ``scopelint.project``)."""
    dt = DocText(text, encoding)
    if kind == "python" and path and buffers is not None:
        from scopelint.project import with_program

        try:
            settings = with_program(settings, path, {**buffers, path: text}, memo=True)
        except Exception:  # (the program cannot be read: the document on its own)
            log.debug("cannot read the program around %s", path, exc_info=True)
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
    for item in items:
        item.diagnostic = make_diagnostic(item.finding, item.range)
    return items, list(result.errors)


def lint_document(ls, uri: str) -> None:
    """Lint a text document on the worker and publish the result, if it is still the
    document's state when the lint ends (``Server.submit``)."""
    ls.pending.pop(uri, None)
    kind = lintable(ls, uri)
    if kind is None:
        return
    doc = ls.workspace.get_text_document(uri)
    text, version, path = doc.source, doc.version, ls.path_of(uri)
    too_large = ls.limits.exceeded(text)
    if too_large is not None:
        show_too_large(ls, uri, path, version, too_large)
        return
    settings, encoding = ls.settings_for(path), ls.encoding()

    def still_current() -> bool:  # not closed, not changed since
        current = open_document(ls, uri)
        return current is not None and current.version == version

    def done(result) -> None:
        items, errors = result
        if still_current():
            ls.log_errors(errors)
            ls.linted[uri] = Linted(version, items)
            ls.publish(uri, items, version)

    def too_slow(reason: str) -> None:
        if still_current():
            show_too_large(ls, uri, path, version, reason)

    buffers = {ls.path_of(u): d.source for u, d in ls.workspace.text_documents.items() if u != uri and ls.path_of(u).endswith(".py")}
    ls.submit(uri, (lint_text, (text, path, settings, encoding, uri, kind, buffers)), done, too_slow)


def lint_dependants(ls, uri: str, delay: float) -> None:
    """After ``uri`` changed: lint again the other open documents that may import it
    (their findings may rest on what it does), and those it may import (theirs may rest
    on how it calls them: the state its calls run in, its loops)."""
    from scopelint.project import imports_module

    path = ls.path_of(uri)
    if not path.endswith(".py"):
        return
    changed = ls.workspace.text_documents.get(uri)
    source = changed.source if changed is not None else ""
    for other, doc in list(ls.workspace.text_documents.items()):
        if other == uri or other not in ls.linted or lintable(ls, other) != "python":
            continue
        if imports_module(doc.source, path) or imports_module(source, ls.path_of(other)):
            ls.schedule(other, lint_document, delay)


def show_too_large(ls, uri: str, path: str, version, reason: str) -> None:
    items = [too_large_item(uri, path, reason)]
    ls.linted[uri] = Linted(version, items)
    ls.publish(uri, items, version)
