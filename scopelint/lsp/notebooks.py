"""Notebooks synchronised as notebook documents: their Python code cells are linted as
one program, and each finding is shown on its cell."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from lsprotocol import types

from scopelint import notebook
from scopelint.engine import Settings, lint_source
from scopelint.lsp.diagnostics import finding_range, make_diagnostic, too_large_item
from scopelint.lsp.documents import Item, Linted, open_document
from scopelint.lsp.text import DocText


def notebook_cells(ls, nb) -> List[Tuple[int, str, str]]:
    """(cell number, cell URI, source) of a synced notebook's Python code cells."""
    out = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        doc = open_document(ls, cell.document)
        if doc is None or (doc.language_id and doc.language_id != "python"):
            continue
        out.append((number, cell.document, doc.source))
    return out


def lint_cells(ls, path: str, cells: List[Tuple[int, str, str]]):
    """Lint cells as a notebook: (findings with cell numbers, errors)."""
    return lint_cell_sources(path, ls.settings_for(path), cells)


def lint_cell_sources(path: str, settings: Settings, cells: List[Tuple[int, str, str]]):
    """``lint_cells`` with the settings given: pure (the lint worker runs it)."""
    source, line_map = notebook.join([(n, src) for n, _, src in cells])
    nb = notebook.Notebook(source, line_map, [])
    result = lint_source(source, path, settings)
    notebook.map_findings(nb, result.findings)
    return result.findings, result.errors


def notebook_items(path: str, settings: Settings, encoding: str, cells: List[Tuple[int, str, str]]):
    """(cell URI -> its items, errors) of a lint of the cells: pure (the worker runs it)."""
    findings, errors = lint_cell_sources(path, settings, cells)
    uri_of = {n: u for n, u, _ in cells}
    source_of = {u: src for _, u, src in cells}
    per_cell: Dict[str, List[Item]] = {u: [] for _, u, _ in cells}
    for f in findings:
        uri = uri_of.get(f.cell) if f.cell is not None else (cells[0][1] if cells else None)
        if uri is None:
            continue
        dt = DocText(source_of[uri], encoding)
        rng = finding_range(dt, f, dt.offset(*f.start), dt.offset(*f.end))
        item = Item(f, uri, rng)
        item.diagnostic = make_diagnostic(f, rng)
        per_cell[uri].append(item)
    return per_cell, list(errors)


def lint_notebook(ls, nb_uri: str) -> None:
    """Lint a synced notebook on the worker; publish per cell if still current."""
    ls.pending.pop(nb_uri, None)
    nb = ls.workspace.get_notebook_document(notebook_uri=nb_uri)
    if nb is None:
        return
    cells = notebook_cells(ls, nb)
    version, path = nb.version, ls.path_of(nb_uri)
    too_large = ls.limits.exceeded("\n".join(src for _, _, src in cells))
    if too_large is not None and cells:
        per_cell = {u: [] for _, u, _ in cells}
        per_cell[cells[0][1]] = [too_large_item(cells[0][1], path, too_large)]
        publish_cells(ls, nb_uri, version, per_cell)
        return
    settings, encoding = ls.settings_for(path), ls.encoding()

    def still_current() -> bool:
        current = ls.workspace.get_notebook_document(notebook_uri=nb_uri)
        return current is not None and current.version == version

    def done(result) -> None:
        per_cell, errors = result
        if still_current():
            ls.log_errors(errors)
            publish_cells(ls, nb_uri, version, per_cell)

    def too_slow(reason: str) -> None:
        if still_current() and cells:
            per_cell = {u: [] for _, u, _ in cells}
            per_cell[cells[0][1]] = [too_large_item(cells[0][1], path, reason)]
            publish_cells(ls, nb_uri, version, per_cell)

    ls.submit(nb_uri, (notebook_items, (path, settings, encoding, cells)), done, too_slow)


def publish_cells(ls, nb_uri: str, version, per_cell: Dict[str, List[Item]]) -> None:
    old = ls.linted.get(nb_uri)
    ls.linted[nb_uri] = Linted(version, [i for items in per_cell.values() for i in items])
    for uri, items in per_cell.items():
        ls.publish(uri, items)
    if old is not None:  # cells that went away or stopped being Python
        for item in old.items:
            if item.uri not in per_cell:
                ls.publish(item.uri, [])


def notebook_of_cell(ls, uri: str) -> Optional[str]:
    """The URI (workspace key) of the synced notebook holding cell ``uri``, if any."""
    nb = ls.workspace.get_notebook_document(cell_uri=uri)
    if nb is None:
        return None
    return next((k for k, v in ls.workspace.notebook_documents.items() if v is nb), None)
