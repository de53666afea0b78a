"""More output formats, as ruff writes them: ``json-lines``, ``junit``, ``gitlab`` and
``pylint``. (text, concise, json and github live in ``scopelint.output``, SARIF in
``scopelint.sarif``.)"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Callable, Dict, List, TextIO

from scopelint.output import finding_json
from scopelint.runner import FileResult


def _json_path(r: FileResult):
    return r.path or (r.filename if r.filename != "-" else None)


def write_json_lines(results: List[FileResult], out: TextIO) -> None:
    """One JSON object per line, the keys of ``--output-format json``'s objects."""
    for r in results:
        for f in r.findings:
            out.write(json.dumps(finding_json(f, _json_path(r))) + "\n")


def write_pylint(results: List[FileResult], out: TextIO) -> None:
    """``path:row: [CODE] message`` (pylint's parseable format, as ruff writes it; a
    notebook's row is the row in its cell, as ruff's)."""
    for r in results:
        for f in r.findings:
            out.write(f"{r.filename}:{f.start[0]}: [{f.code}] {f.message}\n")


def write_junit(results: List[FileResult], out: TextIO) -> None:
    """JUnit XML as ruff writes it: one ``testsuite`` per file with findings, one
    ``testcase`` per finding holding a ``failure``; a run without findings is one suite
    with one passing test case, "No errors found"."""
    with_findings = [r for r in results if r.findings]
    from xml.sax.saxutils import escape, quoteattr  # (here: it imports urllib.request, http, email)

    total = sum(len(r.findings) for r in with_findings)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    if not with_findings:
        lines.append('<testsuites name="scopelint" tests="1" failures="0" errors="0">')
        lines.append('    <testsuite name="scopelint" tests="1" disabled="0" errors="0" failures="0" package="org.scopelint">')
        lines.append('        <testcase name="No errors found" classname="scopelint">')
        lines.append("        </testcase>")
        lines.append("    </testsuite>")
    else:
        lines.append(f'<testsuites name="scopelint" tests="{total}" failures="{total}" errors="0">')
        for r in with_findings:
            n = len(r.findings)
            name = r.filename.replace(os.sep, "/")
            classname = os.path.splitext(name)[0]
            lines.append(f'    <testsuite name={quoteattr(name)} tests="{n}" disabled="0" errors="0" failures="{n}" package="org.scopelint">')
            for f in r.findings:
                where = f"line {f.start[0]}, col {f.start[1]}"
                if f.cell is not None:
                    where = f"cell {f.cell}, {where}"
                lines.append(f'        <testcase name={quoteattr("org.scopelint." + f.code)} classname={quoteattr(classname)} '
                             f'line="{f.start[0]}" column="{f.start[1]}">')
                lines.append(f"            <failure message={quoteattr(f.message)}>{escape(where + ', ' + f.message)}</failure>")
                lines.append("        </testcase>")
            lines.append("    </testsuite>")
    lines.append("</testsuites>")
    out.write("\n".join(lines) + "\n")


_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def write_gitlab(results: List[FileResult], out: TextIO) -> None:
    """GitLab Code Quality JSON (the report of a job's ``artifacts:reports:codequality``):
    ``description``, ``check_name``, ``fingerprint`` (stable while the finding's file,
    code and message stay: line moves keep it), ``severity`` and ``location`` (the path
    relative to ``$CI_PROJECT_DIR``, else the working folder, as ruff does)."""
    root = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    seen: Dict[str, int] = {}
    data = []
    for r in results:
        path = os.path.abspath(r.path) if r.path else r.filename
        try:
            rel = os.path.relpath(path, root) if r.path else r.filename
        except ValueError:
            rel = path
        rel = rel.replace(os.sep, "/")
        for f in r.findings:
            base = f"{rel}\0{f.code}\0{f.cell}\0{f.message}"
            n = seen.get(base, 0)
            seen[base] = n + 1  # the same finding twice in a file: each its own fingerprint
            fingerprint = hashlib.sha256(f"{base}\0{n}".encode("utf-8", "surrogatepass")).hexdigest()
            data.append({
                "description": f"{f.code}: {f.message}" if f.cell is None else f"{f.code}: cell {f.cell}: {f.message}",
                "check_name": f.code,
                "fingerprint": fingerprint,
                "severity": _GITLAB_SEVERITY.get(f.severity, "minor"),
                "location": {"path": rel, "lines": {"begin": f.start[0], "end": max(f.start[0], f.end[0])}},
            })
    json.dump(data, out, indent=2)
    out.write("\n")


def write_azure(results: List[FileResult], out: TextIO) -> None:
    """Azure Pipelines logging commands, as ruff writes them:
    ``##vso[task.logissue type=error;sourcepath=a.py;linenumber=2;columnnumber=6;code=SL107;]message``
    (warnings and infos as ``type=warning``: Azure has no third level)."""
    for r in results:
        name = r.filename.replace(os.sep, "/")
        for f in r.findings:
            kind = "error" if f.severity == "error" else "warning"
            message = f.message if f.cell is None else f"cell {f.cell}: {f.message}"
            props = f"type={kind};sourcepath={_vso(name)};linenumber={f.start[0]};columnnumber={f.start[1]};code={f.code};"
            out.write(f"##vso[task.logissue {props}]{_vso(message)}\n")


def _vso(text: str) -> str:
    """Azure's escaping of a logging command's data (``%``, ``;``, ``]`` and line breaks)."""
    return (text.replace("%", "%AZP25").replace(";", "%3B").replace("]", "%5D")
            .replace("\r", "%0D").replace("\n", "%0A"))


def write_rdjson(results: List[FileResult], out: TextIO) -> None:
    """Reviewdog's Diagnostic Format (rdjson), as ruff writes it: ``source``, ``severity``
    and one diagnostic per finding (``code.value``, ``code.url`` when the pages have an
    address, ``location.range``, the fix's edits as ``suggestions``)."""
    from scopelint import docs_base, docs_url

    diagnostics = []
    for r in results:
        path = r.filename.replace(os.sep, "/")
        for f in r.findings:
            code = {"value": f.code}
            url = docs_url(f.code)
            if url:
                code["url"] = url
            d = {
                "message": f.message if f.cell is None else f"cell {f.cell}: {f.message}",
                "location": {"path": path, "range": _range(f.start, f.end)},
                "severity": {"error": "ERROR", "warning": "WARNING", "info": "INFO"}.get(f.severity, "WARNING"),
                "code": code,
            }
            if f.fix is not None and f.cell is None and f.fix.edits:
                d["suggestions"] = [{"range": _range(e.start, e.end), "text": e.content} for e in f.fix.edits]
            diagnostics.append(d)
    source = {"name": "scopelint"}
    base = docs_base()
    if base and "{code}" not in base:
        source["url"] = base
    json.dump({"source": source, "severity": "WARNING", "diagnostics": diagnostics}, out, indent=2)
    out.write("\n")


def _range(start, end) -> dict:
    return {"start": {"line": start[0], "column": start[1]}, "end": {"line": end[0], "column": end[1]}}


WRITERS: Dict[str, Callable[[List[FileResult], TextIO], None]] = {
    "azure": write_azure,
    "rdjson": write_rdjson,
    "json-lines": write_json_lines,
    "junit": write_junit,
    "gitlab": write_gitlab,
    "pylint": write_pylint,
}
