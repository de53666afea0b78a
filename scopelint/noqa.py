"""``# noqa`` comments, as ruff reads them: line directives (``# noqa``, ``# noqa: SL101``),
file exemptions (``# scopelint: noqa``, ``# scopelint: noqa: SL101``), unused directives
(SL001, ruff's RUF100) and adding directives (``--add-noqa``, the editor's "disable for
this line"). Pure text work: no LibCST, no files, no CLI."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from scopelint.finding import SYNTAX_ERROR, Edit, Finding, Fix

_CODES = r"[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*"
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>" + _CODES + "))?", re.IGNORECASE)
# An own-line comment anywhere in the file, as ruff's ``# ruff: noqa``; flake8's
# ``# flake8: noqa`` too, as ruff reads it (with codes: those codes in the file).
_FILE_NOQA = re.compile(r"^[ \t\f]*#\s*(?:scopelint|flake8):\s*noqa(?::\s*(?P<codes>" + _CODES + r"))?(?![\w:-])",
                        re.IGNORECASE | re.MULTILINE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
UNUSED_NOQA = "SL001"
OWN_PREFIX = "SL"  # codes of other prefixes belong to other tools: never judged here


def split_codes(codes: Optional[str]) -> Tuple[str, ...]:
    return tuple(c.upper() for c in re.split(r"[,\s]+", codes.strip())) if codes else ()


def noqa_codes(line: str) -> Optional[Tuple[str, ...]]:
    """None: no noqa; empty tuple: bare noqa (all codes); else the listed codes."""
    m = NOQA.search(line)
    if m is None:
        return None
    return split_codes(m.group("codes"))


def suppressed(finding: Finding, lines: List[str]) -> bool:
    row = finding.start[0]
    if not 1 <= row <= len(lines):
        return False
    codes = noqa_codes(lines[row - 1])
    return codes is not None and (codes == () or finding.code in codes)


def file_exemption(text: str) -> Optional[Tuple[str, ...]]:
    """``# scopelint: noqa`` or ``# flake8: noqa`` (empty tuple: every code) or
    ``# scopelint: noqa: SL101, ...`` (those codes, over all such comments); None when
    the file has none."""
    if "scopelint" not in text and "flake8" not in text.lower():
        return None
    codes: List[str] = []
    found = False
    for m in _FILE_NOQA.finditer(text):
        found = True
        listed = split_codes(m.group("codes"))
        if not listed:
            return ()
        codes.extend(listed)
    return tuple(codes) if found else None


def _comment_rows(text: str) -> Optional[Dict[int, int]]:
    """Row -> 0-based column where the row's comment starts; None when the text does not
    tokenize (then no directive is judged unused)."""
    rows: Dict[int, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                rows[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return rows


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


@dataclass
class Policy:
    """What the unused-noqa check needs of the file's settings."""

    select: Sequence[str]  # the codes that run on this file
    per_file_ignored: Sequence[str] = ()  # never reported (ruff: a per-file-ignored code is not judged)
    known: Sequence[str] = ()  # every scopelint code
    severity: str = "warning"
    help: Optional[str] = None


def apply(findings: List[Finding], text: str, filename: str, policy: Policy, ignore_noqa: bool = False) -> List[Finding]:
    """The findings that remain after the file's exemptions and line directives, plus an
    SL001 finding per directive with unused scopelint codes when SL001 is selected. Syntax
    errors (SL000) are never suppressed. ``--ignore-noqa``: everything, no SL001."""
    if ignore_noqa:
        return findings
    judge = UNUSED_NOQA in policy.select
    if not findings and not judge:
        return findings
    exempt = file_exemption(text)
    if exempt == ():
        return [f for f in findings if f.code == SYNTAX_ERROR]
    if exempt:
        findings = [f for f in findings if f.code == SYNTAX_ERROR or f.code not in exempt]
    if not findings and (not judge or NOQA.search(text) is None):
        return findings
    lines = _LINE_BREAK.split(text)
    kept: List[Finding] = []
    used: Dict[int, Set[str]] = {}
    for f in findings:
        if f.code != SYNTAX_ERROR and suppressed(f, lines):
            used.setdefault(f.start[0], set()).add(f.code)
            continue
        kept.append(f)
    if judge and not any(f.code == SYNTAX_ERROR for f in findings) and (exempt is None or UNUSED_NOQA not in exempt):
        kept.extend(unused_directives(text, lines, filename, used, policy))
    return kept


def unused_directives(text: str, lines: List[str], filename: str, used: Dict[int, Set[str]], policy: Policy) -> Iterable[Finding]:
    """SL001 findings, as ruff's RUF100 reports them: per directive, its scopelint codes
    that suppressed nothing (unused), that do not run on this file (non-enabled), that it
    names twice (duplicated) or that do not exist (unknown). A bare ``# noqa`` and other
    tools' codes are never reported (scopelint cannot tell what they suppress)."""
    if NOQA.search(text) is None:
        return
    comments = _comment_rows(text)
    if comments is None:
        return
    select, ignored, known = set(policy.select), set(policy.per_file_ignored), set(policy.known) | {SYNTAX_ERROR}
    for row, col in sorted(comments.items()):
        line = lines[row - 1]
        m = NOQA.search(line)
        if m is None or m.start() < col or not m.group("codes"):
            continue  # no directive, one in a string before the comment, or a bare one
        codes = split_codes(m.group("codes"))
        if UNUSED_NOQA in codes:
            continue  # the line asks not to be told
        unused, disabled, duplicated, unknown, keep = [], [], [], [], []
        seen: Set[str] = set()
        for code in codes:
            if code in seen:
                duplicated.append(code)
                continue
            seen.add(code)
            if not code.startswith(OWN_PREFIX) or code in ignored:
                keep.append(code)
            elif code not in known:
                unknown.append(code)
            elif code != SYNTAX_ERROR and code not in select:
                disabled.append(code)
            elif code in used.get(row, ()):
                keep.append(code)
            else:
                unused.append(code)
        if not (unused or disabled or duplicated or unknown):
            continue
        reasons = []
        for label, group in (("unused", unused), ("non-enabled", disabled), ("duplicated", duplicated), ("unknown", unknown)):
            if group:
                reasons.append(f"{label}: " + ", ".join(f"`{c}`" for c in group))
        edit = _removal(lines, row, m, keep)
        yield Finding(
            UNUSED_NOQA, f"Unused `noqa` directive ({'; '.join(reasons)})", policy.severity, filename,
            (row, m.start() + 1), (row, m.end() + 1), help=policy.help,
            fix=Fix("safe", "Remove unused `noqa` directive" if not keep else "Remove the unused codes", (edit,)),
        )


def _removal(lines: List[str], row: int, m: "re.Match", keep: List[str]) -> Edit:
    """The edit that keeps only ``keep`` of the directive ``m`` on ``row`` (the whole
    comment, or the whole line when it held nothing else, when nothing is kept)."""
    line = lines[row - 1]
    if keep:
        return Edit("# noqa: " + ", ".join(keep), (row, m.start() + 1), (row, m.end() + 1))
    before, after = line[: m.start()], line[m.end():]
    if not after.strip():
        if not before.strip():  # the line is only the directive: the line goes
            return Edit("", (row, 1), (row + 1, 1) if row < len(lines) else (row, len(line) + 1))
        return Edit("", (row, len(before.rstrip()) + 1), (row, len(line) + 1))
    rest = after.lstrip()
    if rest.startswith("#"):  # another comment after the directive: it stays
        start = len(before.rstrip()) + 1 if before.strip() else m.start() + 1
        return Edit(("  " if before.strip() else "") + rest, (row, start), (row, len(line) + 1))
    # words after the directive (`because ...`) stay a comment: `# because ...`
    return Edit("# " + rest, (row, m.start() + 1), (row, len(line) + 1))


# --- adding directives ---------------------------------------------------------------
def add_noqa(line: str, codes, reason: Optional[str] = None) -> Optional[str]:
    """``line`` (no line break) with ``codes`` (one code or several) added to its
    ``# noqa:`` list, or a new ``  # noqa: ...`` at its end; None when it cannot be done
    or is not needed (a bare ``# noqa``, every code there, a line continuation)."""
    if isinstance(codes, str):
        codes = (codes,)
    m = NOQA.search(line)
    if m is not None:
        present = split_codes(m.group("codes"))
        if not present:
            return None
        missing = [c for c in dict.fromkeys(codes) if c not in present]
        if not missing:
            return None
        return line[: m.end()] + ", " + ", ".join(missing) + line[m.end():]
    body = line.rstrip()
    if body.endswith("\\"):
        return None
    return body + "  # noqa: " + ", ".join(dict.fromkeys(codes)) + (f" {reason.strip()}" if reason and reason.strip() else "")


def add_noqa_findings(findings: Iterable[Finding], lines_of, inside_strings_of, reason: Optional[str] = None) -> List[Finding]:
    """``lines_of(cell)``: the lines of the text (``cell`` None) or of a notebook cell;
    ``inside_strings_of(cell)``: its rows that end inside a string. One finding per line,
    whose safe fix adds the missing codes (SL000 and SL001 are never added)."""
    by_line: Dict[Tuple[Optional[int], int], List[str]] = {}
    for f in findings:
        if f.code in (SYNTAX_ERROR, UNUSED_NOQA):
            continue
        codes = by_line.setdefault((f.cell, f.start[0]), [])
        if f.code not in codes:
            codes.append(f.code)
    out: List[Finding] = []
    for (cell, row), codes in sorted(by_line.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        lines = lines_of(cell)
        if not 1 <= row <= len(lines) or row in inside_strings_of(cell):
            continue
        line = lines[row - 1]
        new = add_noqa(line, sorted(codes), reason)
        if new is None:
            continue
        fix = Fix("safe", "Add `# noqa`", (Edit(new, (row, 1), (row, len(line) + 1)),))
        out.append(Finding(codes[0], "add noqa", "info", "", (row, 1), (row, 1), fix=fix, cell=cell))
    return out
