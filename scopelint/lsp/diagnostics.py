"""Diagnostics of a text document: which documents are linted, the lint, and the
LSP form of a finding (range, severity, code)."""

from __future__ import annotations

from bisect import bisect_right
from typing import List, Optional

from lsprotocol import types

from scopelint import notebook
from scopelint.engine import lint_source
from scopelint.finding import Finding
from scopelint.lsp.documents import Item, Linted, is_notebook_path, is_python_document
from scopelint.lsp.text import DocText
from scopelint.rules import ALL_RULES

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


def lintable(ls, uri: str) -> Optional[str]:
    """'python' | 'ipynb' | None for a text document."""
    doc = ls.workspace.text_documents.get(uri)
    if doc is None or ls.workspace.get_notebook_document(cell_uri=uri) is not None:
        return None
    path = ls.path_of(uri)
    if is_notebook_path(path, doc.language_id):
        return "ipynb"
    if is_python_document(path, doc.language_id):
        return "python"
    return None


def lint_document(ls, uri: str) -> None:
    ls.pending.pop(uri, None)
    kind = lintable(ls, uri)
    if kind is None:
        return
    doc = ls.workspace.get_text_document(uri)
    text = doc.source
    path = ls.path_of(uri)
    settings = ls.settings_for(path)
    dt = DocText(text, ls.encoding())
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
    ls.log_errors(result.errors)
    for item in items:
        item.diagnostic = make_diagnostic(item.finding, item.range)
    ls.linted[uri] = Linted(doc.version, items)
    ls.publish(uri, items, doc.version)
