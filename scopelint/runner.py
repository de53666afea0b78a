"""Check many files: read, lint (in parallel), and map notebook positions."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from scopelint import notebook
from scopelint.engine import LintResult, Settings, lint_source
from scopelint.files import Source, decode, read_source
from scopelint.finding import Finding, syntax_finding


@dataclass
class FileResult:
    filename: str  # as shown to the user
    path: Optional[str]  # on disk; None for stdin
    findings: List[Finding] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    lines: Dict[Tuple[Optional[int], int], str] = field(default_factory=dict)  # shown source lines
    source: Optional[str] = None  # kept only when asked (fixing)


def display_name(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith(".." + os.sep + "..") else rel


def lint_text(text: str, filename: str, settings: Settings, is_notebook: bool) -> Tuple[LintResult, Optional["notebook.Notebook"]]:
    if not is_notebook:
        return lint_source(text, filename, settings), None
    try:
        nb = notebook.load(text)
    except ValueError as exc:
        return LintResult([syntax_finding(filename, f"invalid notebook: {exc}")]), None
    result = lint_source(nb.source, filename, settings)
    notebook.map_findings(nb, result.findings)  # cell numbers from 1; fix edits mapped too
    return result, nb


def check_source(source: Source, filename: str, path: Optional[str], settings: Settings, keep_source: bool = False) -> FileResult:
    out = FileResult(filename, path)
    if source.error is not None:
        out.findings.append(source.error)
        return out
    is_nb = filename.endswith(".ipynb")
    try:
        result, nb = lint_text(source.text, filename, settings, is_nb)
    except Exception as exc:  # never let one file take the run down
        out.errors.append(f"{filename}: internal error: {type(exc).__name__}: {exc}")
        return out
    out.findings = sorted(result.findings, key=lambda f: (f.cell or 0, f.start, f.code))
    out.errors = result.errors
    if keep_source:
        out.source = source.text
    if out.findings:
        if nb is None:
            lines = source.text.splitlines()
            for f in out.findings:
                if 1 <= f.start[0] <= len(lines):
                    out.lines[(None, f.start[0])] = lines[f.start[0] - 1]
        else:
            for f in out.findings:
                if f.cell is not None:
                    cell_lines = nb.cell_lines(f.cell)
                    if 1 <= f.start[0] <= len(cell_lines):
                        out.lines[(f.cell, f.start[0])] = cell_lines[f.start[0] - 1]
    return out


def _check_path(task) -> FileResult:
    path, filename, settings, keep = task
    return check_source(read_source(Path(path), filename), filename, path, settings, keep)


def check_stdin(data: bytes, filename: str, settings: Settings, keep_source: bool = False) -> FileResult:
    return check_source(decode(data, filename), filename, None, settings, keep_source)


def check_paths(tasks: List[Tuple[str, str, Settings, bool]], jobs: int) -> List[FileResult]:
    """``tasks``: (path, display name, settings, keep source). Order is preserved."""
    if jobs <= 1 or len(tasks) < 4:
        return [_check_path(t) for t in tasks]
    chunk = max(1, min(16, len(tasks) // (jobs * 4)))
    try:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(_check_path, tasks, chunksize=chunk))
    except (OSError, RuntimeError):  # no processes available: do it here
        return [_check_path(t) for t in tasks]
