"""SARIF 2.1.0 output: one run, every rule described, results with locations and fixes.

Made to validate against the OASIS SARIF 2.1.0 JSON schema and to load in GitHub code
scanning (relative artifact URIs resolved against ``%SRCROOT%``, the working folder).
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, TextIO
from urllib.parse import quote

from scopelint import __version__, docs_base, docs_url
from scopelint.finding import FILE_LOCATION, SYNTAX_ERROR, Finding
from scopelint.rules import ALL_RULES

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _text(value: str) -> str:
    return textwrap.dedent(value or "").strip()


def _rule_descriptors() -> List[dict]:
    rules = [
        {
            "id": SYNTAX_ERROR,
            "name": "syntax-error",
            "shortDescription": {"text": "The file cannot be read or parsed as Python."},
            "fullDescription": {
                "text": "A syntax error, an undecodable or binary file, or a file that cannot be read. "
                "Nothing else in the file is checked until it parses."
            },
            "help": {"text": "Fix the syntax error or the file's encoding."},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["syntax"]},
        }
    ]
    for code, rule in ALL_RULES.items():
        full = _text(getattr(rule, "why", "")) or rule.summary
        rules.append(
            {
                "id": code,
                "name": rule.name,
                "shortDescription": {"text": _text(rule.summary)},
                "fullDescription": {"text": full},
                "help": {"text": _text(rule.help), "markdown": rule.documentation()},
                "defaultConfiguration": {"level": LEVELS.get(rule.severity, "warning")},
                "properties": {"tags": ["autograd", *getattr(rule, "frameworks", ())]},
            }
        )
    for descriptor in rules:  # a web address only (``docs-url``): none is better than a dead one
        url = docs_url(descriptor["id"])
        if url:
            descriptor["helpUri"] = url
    return rules


def _artifact(filename: str, path: Optional[str]) -> dict:
    """A URI relative to the working folder where the file lies under it, else absolute."""
    if path is None:  # stdin: the name given with --stdin-filename (or "-")
        target = filename
    else:
        target = os.path.abspath(path)
    absolute = os.path.abspath(target)
    try:
        rel = os.path.relpath(absolute)
    except ValueError:  # another drive
        rel = None
    if rel is not None and not rel.startswith(os.pardir):
        return {"uri": quote(Path(rel).as_posix()), "uriBaseId": SRCROOT}
    return {"uri": Path(absolute).as_uri()}


def _folder_uri(folder: str) -> str:
    uri = Path(folder).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _region(start, end) -> dict:
    region = {"startLine": max(1, start[0]), "startColumn": max(1, start[1])}
    if end and tuple(end) >= tuple(start):
        region["endLine"] = max(1, end[0])
        region["endColumn"] = max(1, end[1])
    return region


def _related(f: Finding) -> List[dict]:
    """Places in other files of the program the finding rests on (``path:line``, as the
    project layer names them, relative to the working folder)."""
    out = []
    for i, r in enumerate(f.extra.get("related") or ()):
        path, _, line = str(r.get("location", "")).rpartition(":")
        if not path or not line.isdigit():
            continue
        out.append({
            "id": i,
            "physicalLocation": {"artifactLocation": _artifact(path, path), "region": {"startLine": max(1, int(line))}},
            "message": {"text": str(r.get("message", ""))},
        })
    return out


def _result(f: Finding, artifact: dict, index: Dict[str, int]) -> dict:
    message = f.message
    if f.cell is not None:
        message = f"cell {f.cell}: {message}"
    # A notebook's finding: the region is in the .ipynb file's own lines (as ruff does),
    # the cell and the region within it in the location's properties.
    in_file = f.extra.get(FILE_LOCATION) if f.cell is not None else None
    location = {"physicalLocation": {"artifactLocation": dict(artifact), "region": _region(f.start, f.end)}}
    if in_file:
        location["physicalLocation"]["region"] = _region(in_file["start"], in_file["end"])
        location["properties"] = {"cell": f.cell, "cellRegion": _region(f.start, f.end)}
    result = {
        "ruleId": f.code,
        "ruleIndex": index.get(f.code, 0),
        "level": LEVELS.get(f.severity, "warning"),
        "message": {"text": message},
        "locations": [location],
    }
    related = _related(f)
    if related:
        result["relatedLocations"] = related
    properties = {"severity": f.severity}
    if f.cell is not None:
        properties["cell"] = f.cell
    if f.runtime:
        properties["runtime"] = f.runtime
    result["properties"] = properties
    replacements = None
    if f.fix is not None and f.cell is None:
        replacements = [
            {"deletedRegion": _region(e.start, e.end), "insertedContent": {"text": e.content}} for e in f.fix.edits
        ]
    elif f.fix is not None and in_file and in_file.get("fix"):  # the cell's `source`, rewritten
        edit = in_file["fix"]
        replacements = [{"deletedRegion": _region(edit["start"], edit["end"]), "insertedContent": {"text": edit["content"]}}]
    if replacements:
        result["fixes"] = [
            {
                "description": {"text": f.fix.message or "Apply the fix"},
                "artifactChanges": [{"artifactLocation": dict(artifact), "replacements": replacements}],
            }
        ]
    return result


def sarif_log(results, errors: Optional[List[str]] = None) -> dict:
    """``results``: the runner's FileResults."""
    rules = _rule_descriptors()
    index = {r["id"]: i for i, r in enumerate(rules)}
    out = []
    for res in results:
        artifact = _artifact(res.filename, res.path)
        for f in res.findings:
            out.append(_result(f, artifact, index))
    invocation = {"executionSuccessful": not errors}
    if errors:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": e}} for e in errors
        ]
    driver = {"name": "scopelint", "version": __version__, "semanticVersion": __version__, "rules": rules}
    base = docs_base()
    if base and "{code}" not in base:  # (the site's address; a per-page template names no home)
        driver["informationUri"] = base
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: {"uri": _folder_uri(os.getcwd())}},
                "columnKind": "unicodeCodePoints",
                "results": out,
            }
        ],
    }


def write_sarif(results, out: TextIO, errors: Optional[List[str]] = None) -> None:
    json.dump(sarif_log(results, errors), out, indent=2)
    out.write("\n")
