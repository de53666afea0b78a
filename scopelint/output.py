"""Output formats: text (full and concise), JSON (ruff-compatible keys), GitHub
workflow commands and statistics. SARIF lives in ``scopelint.sarif``."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import List, Optional, TextIO

from scopelint import docs_url
from scopelint.finding import FILE_LOCATION, SYNTAX_ERROR, Finding
from scopelint.rules import ALL_RULES
from scopelint.runner import FileResult

_COLORS = {"error": "31", "warning": "33", "info": "36", "bold": "1", "dim": "2", "path": "1", "code": "1;31"}


class _Paint:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, what: str) -> str:
        return f"\x1b[{_COLORS[what]}m{text}\x1b[0m" if self.enabled else text


def _location(f: Finding, filename: str) -> str:
    if f.cell is not None:
        return f"{filename}:cell {f.cell}:{f.start[0]}:{f.start[1]}"
    return f"{filename}:{f.start[0]}:{f.start[1]}"


def fixable_mark(f: Finding, unsafe: bool = False) -> str:
    if f.fix is None:
        return ""
    return "[*] " if f.fix.applicability == "safe" or unsafe else ""


def write_text(results: List[FileResult], out: TextIO, concise: bool, color: bool, show_fixes: bool = True) -> None:
    paint = _Paint(color)
    for res in results:
        for f in res.findings:
            head = f"{paint(_location(f, res.filename), 'path')}: {paint(f.code, f.severity)} {fixable_mark(f)}{f.message}"
            out.write(head + "\n")
            if concise:
                continue
            line = res.lines.get((f.cell, f.start[0]))
            if line is not None:
                gutter = " " * len(str(f.start[0]))
                width = (f.end[1] - f.start[1]) if f.end[0] == f.start[0] else len(line) - f.start[1] + 1
                width = max(1, width)
                out.write(f"{gutter} |\n")
                out.write(f"{f.start[0]} | {line.rstrip()}\n")
                out.write(f"{gutter} | {' ' * (f.start[1] - 1)}{paint('^' * width, f.severity)}\n")
            if f.help:
                out.write(f"{' ' * len(str(f.start[0]))} = {paint('help', 'bold')}: {f.help}\n")
            out.write("\n")


def write_grouped(results: List[FileResult], out: TextIO, color: bool) -> None:
    """ruff's ``grouped`` format: each file's name, then its findings indented, one a
    line (``row:col CODE [*] message``, rows and columns aligned), a blank line after."""
    paint = _Paint(color)
    for res in results:
        if not res.findings:
            continue
        out.write(f"{paint(res.filename, 'path')}:\n")
        places = [(f"cell {f.cell}:" if f.cell is not None else "") + str(f.start[0]) for f in res.findings]
        rw = max(len(p) for p in places)
        cw = max(len(str(f.start[1])) for f in res.findings)
        for place, f in zip(places, res.findings):
            out.write(f"  {place:>{rw}}:{f.start[1]:<{cw}} {paint(f.code, f.severity)} {fixable_mark(f)}{f.message}\n")
        out.write("\n")


def write_fixed(before, results: List[FileResult], out: TextIO) -> None:
    """``--show-fixes`` after ``--fix``: what was fixed, per file and code (ruff's
    enumeration): ``Fixed 2 findings:``, ``- a.py:``, ``    1 × SL107 (grad-context-not-called)``."""
    rows = []
    for res in results:
        gone = before.get(res.filename, Counter()) - Counter(f.code for f in res.findings)
        if gone:
            rows.append((res.filename, sorted(gone.items())))
    total = sum(n for _, codes in rows for _, n in codes)
    if not total:
        return
    out.write(f"Fixed {total} finding{'s' if total != 1 else ''}:\n")
    for filename, codes in rows:
        out.write(f"- {filename}:\n")
        for code, n in codes:
            rule = ALL_RULES.get(code)
            out.write(f"    {n} \u00d7 {code} ({rule.name if rule else 'syntax-error'})\n")


def failed_files(results: List[FileResult]) -> int:
    """How many files the run could not check (or fix) in full: an internal error."""
    return sum(1 for r in results if r.errors)


UNWRITTEN = "cannot write the fixed file"  # (an error that is no internal one: a read-only file, a full disk)


def _unwritten(results: List[FileResult]) -> int:
    return sum(1 for r in results if r.errors and all(UNWRITTEN in e for e in r.errors))


def failure_line(failed: int, results: Optional[List[FileResult]] = None) -> str:
    """What a run with internal errors says last, in every output format (on stderr);
    files whose fixes could not be written (``results`` tells) are said to be so."""
    unwritten = _unwritten(results or [])
    if unwritten and unwritten == failed:
        return (f"{failed} file{'s' if failed != 1 else ''} could not be written: left unchanged, "
                f"{'their' if failed != 1 else 'its'} findings reported as they are.")
    return f"{failed} file{'s' if failed != 1 else ''} failed with an internal error; their findings may be missing."


def summary(results: List[FileResult], fixed: int = 0, unsafe_hidden: int = 0) -> str:
    findings = [f for r in results for f in r.findings]
    n = len(findings)
    fixable = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe")
    failed = failed_files(results)
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} finding{'s' if fixed != 1 else ''}.")
    if failed:  # never a passing summary: some files were not (fully) checked
        text = f"Found {n} finding{'s' if n != 1 else ''}"
        text += f" ({fixable} fixable with --fix)" if fixable else ""
        why = "could not be written" if _unwritten(results) == failed else "failed with an internal error"
        parts.append(f"{text}; {failed} file{'s' if failed != 1 else ''} {why}.")
    elif n == 0:
        parts.append("All checks passed!" if not fixed else "No findings remain.")
    else:
        text = f"Found {n} finding{'s' if n != 1 else ''}"
        text += f" ({fixable} fixable with --fix)." if fixable else "."
        parts.append(text)
    if unsafe_hidden:
        parts.append(f"{unsafe_hidden} more fix{'es' if unsafe_hidden != 1 else ''} available with --unsafe-fixes.")
    return " ".join(parts)


def fix_only_summary(results: List[FileResult], fixed: int, unsafe_hidden: int = 0) -> str:
    """``--fix-only``'s last line (ruff's): what was fixed; nothing when nothing was and
    no fix waits for ``--unsafe-fixes``."""
    more = f"{unsafe_hidden} more fix{'es' if unsafe_hidden != 1 else ''} available with --unsafe-fixes."
    if failed_files(results):
        return f"Fixed {fixed} finding{'s' if fixed != 1 else ''}; {failure_line(failed_files(results), results)}"
    if fixed:
        return f"Fixed {fixed} finding{'s' if fixed != 1 else ''}." + (f" {more}" if unsafe_hidden else "")
    return f"No findings fixed ({more[:-1]})." if unsafe_hidden else ""


def _pos(p) -> dict:
    return {"row": p[0], "column": p[1]}


def finding_json(f: Finding, path: Optional[str]) -> dict:
    rule = ALL_RULES.get(f.code)
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability,
            "message": f.fix.message,
            "edits": [{"content": e.content, "location": _pos(e.start), "end_location": _pos(e.end)} for e in f.fix.edits],
        }
    return {
        "code": f.code,
        "name": rule.name if rule else ("syntax-error" if f.code == SYNTAX_ERROR else None),
        "message": f.message,
        "severity": f.severity,
        "filename": os.path.abspath(path) if path else f.filename,
        "cell": f.cell,
        "location": _pos(f.start),
        "end_location": _pos(f.end),
        "noqa_row": f.start[0],
        "url": docs_url(f.code) if rule is not None or f.code == SYNTAX_ERROR else None,
        "fix": fix,
        "runtime": f.runtime,
    }


def write_json(results: List[FileResult], out: TextIO) -> None:
    data = [finding_json(f, r.path or (r.filename if r.filename != "-" else None)) for r in results for f in r.findings]
    json.dump(data, out, indent=2)
    out.write("\n")


def write_statistics(results: List[FileResult], out: TextIO, unsafe: bool = False) -> None:
    counts = Counter(f.code for r in results for f in r.findings)
    fixable = {f.code for r in results for f in r.findings if fixable_mark(f, unsafe)}
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = ALL_RULES.get(code)
        name = rule.name if rule else "syntax-error"
        out.write(f"{n:>5}\t{code}\t{'[*] ' if code in fixable else '    '}{name}\n")


# --- GitHub Actions workflow commands --------------------------------------------------
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(f: Finding, filename: str) -> str:
    level = _GITHUB_LEVEL.get(f.severity, "warning")
    start, end = f.start, f.end
    in_file = f.extra.get(FILE_LOCATION) if f.cell is not None else None
    if in_file:  # a notebook's finding: annotate the .ipynb file's own line
        start, end = tuple(in_file["start"]), tuple(in_file["end"])
    end_row, end_col = end if tuple(end) >= tuple(start) else start
    props = [
        f"file={_escape_property(filename)}",
        f"line={start[0]}",
        f"col={start[1]}",
        f"endLine={end_row}",
        f"endColumn={end_col}",
        f"title={_escape_property(f.code)}",
    ]
    message = f.message if f.cell is None else f"cell {f.cell}: {f.message}"
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def write_github(results: List[FileResult], out: TextIO) -> None:
    for res in results:
        name = res.filename.replace(os.sep, "/")
        for f in res.findings:
            out.write(github_line(f, name) + "\n")
        for e in res.errors:  # an annotation too: the run failed, not only the step
            out.write(f"::error file={_escape_property(name)},title=scopelint::{_escape_data(e)}\n")
