"""Lint one source text: parse, analyse, run the active rules, apply ``# noqa``.

Knows nothing about files on disk, the CLI or editors; they all call ``lint_source``,
the one entry: safe for any text (CPython's pre-check, a large stack for LibCST), and
for notebooks (``notebook=True``) it maps the findings to cells.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import re
import symtable
import sys
import threading
import unicodedata
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple, Type

from scopelint.core import slicing
from scopelint.core.fragments import fragment_imports
from scopelint.core.frameworks import DEFAULT_INFERENCE_FUNCTIONS
from scopelint.finding import SYNTAX_ERROR, Edit, Finding, Fix, syntax_finding
from scopelint.noqa import noqa_codes, suppressed  # noqa: F401  (re-exported: lsp.text)
from scopelint.noqa import UNUSED_NOQA
from scopelint.rules import ALL_RULES, OPT_IN

if TYPE_CHECKING:  # LibCST is imported when something is parsed, not before
    import libcst as cst

    from scopelint import positions
    from scopelint.core.interfile import Context, Exports
    from scopelint import rule
    from scopelint.notebook import Notebook
    from scopelint.rule import Report, Rule

_SKIP_FILE = re.compile(r"#\s*scopelint:\s*skip-file\b")


def might_fire(source: str, settings: "Settings") -> bool:
    """The cheap text gate, before any parsing: a file that names neither framework
    cannot produce a finding; nor can one that imports neither, nor one whose text holds
    none of the anchors the analysis needs (``slicing``: the gate, read in text)."""
    # The text as written (what LibCST reads) and, when not ASCII, with identifiers as
    # Python reads them (``ｔｏｒｃｈ`` is ``torch``): a reason in either counts.
    texts: Tuple[str, ...] = (source,)
    if not source.isascii():
        read = unicodedata.normalize("NFKC", source)
        if read != source:  # (most text that is not ASCII reads as written: scan it once)
            texts = (source, read)
    if settings.project is not None and settings.project.framework is not None:
        return True  # the project says what the file's code is for
    if not any(slicing.mentions_framework(text) for text in texts):
        return False
    if not settings.gate or (settings.project is not None and settings.project.needs_whole):
        return True
    frameworks = set().union(*(slicing.imported_frameworks(text) for text in texts))
    inference_functions = tuple(settings.inference_functions)
    return bool(frameworks) and any(slicing.text_may_anchor(text, frameworks, inference_functions) for text in texts)


@dataclass(frozen=True)
class Settings:
    """The effective configuration for one file."""

    # Every rule but the opt-in ones (SL001): the analysis's default. What a run without
    # configuration selects also leaves the preview rules out (``config.default_selection``).
    select: Tuple[str, ...] = tuple(c for c in ALL_RULES if c not in OPT_IN)
    inference_functions: Tuple[str, ...] = DEFAULT_INFERENCE_FUNCTIONS
    severity: Tuple[Tuple[str, str], ...] = ()
    gate: bool = True  # skip files with none of the words any rule needs
    # Analyse the gate's slice in a tree built from ``ast`` first (``core.lower``); parse
    # with LibCST only when that finds something (off: always parse).
    lower: bool = True
    ignore_noqa: bool = False  # report findings whatever `# noqa` says (and no SL001)
    per_file_ignored: Tuple[str, ...] = ()  # codes per-file-ignores turn off here (SL001 leaves them alone)
    framework: Optional[str] = None  # ``[tool.scopelint] framework``: for files that import none
    # What the other modules of the program tell this one (``scopelint.project`` makes
    # it; part of the cache key like every setting). With one, the file is analysed whole.
    project: Optional["Context"] = None
    # Make the fixes' text edits. False (``check``'s text, concise, github, gitlab,
    # junit and pylint outputs, which show whether a finding is fixable, never how): a
    # fix keeps its applicability and message, and its edits are left out (``()``) where
    # they would rewrite module-level statements (generating their code was about a
    # third of a run where most functions have a fixable finding). A notebook's fixes
    # always get their edits (mapping them to cells decides whether a fix is kept).
    edits: bool = True


@dataclass
class LintResult:
    findings: List[Finding] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # internal failures, one line each
    needs_whole: bool = False  # fixes must be made from one parse of the whole file
    notebook: Optional["Notebook"] = None  # the notebook linted (``lint_source(..., notebook=True)``)


def skip_file(source: str) -> bool:
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            return False
        if _SKIP_FILE.search(stripped):
            return True
    return False


def parse(source: str, filename: str, starts: Sequence[int] = (), inner: "slicing.Cuts" = ()) -> Tuple[Optional["cst.Module"], Optional[Finding]]:
    """``starts``: lines where module-level statements start; a long text is parsed in
    pieces cut there (LibCST's parser peaks at ~30 kB per line of a dense file, and keeps
    most of what it took: ~9 kB per line of a long function after its tree is freed).
    ``inner``: where the bodies of long module-level functions and classes may be cut
    (``slicing.inner_cuts``), so that one long function is parsed in pieces too."""
    import libcst as cst

    try:
        with _unvalidated():
            if (len(starts) > 1 or inner) and source.count("\n") > 2 * CHUNK_LINES:
                module = _parse_in_pieces(source, starts, dict(inner))
                if module is not None:
                    return module, None
            return cst.parse_module(source), None
    except cst.ParserSyntaxError as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid syntax"
        return None, syntax_finding(filename, f"SyntaxError: {msg}", exc.raw_line, exc.raw_column + 1)
    except RecursionError:
        return None, syntax_finding(filename, "file is too deeply nested to parse")
    except Exception as exc:  # libcst can fail in odd ways on odd input
        return None, syntax_finding(filename, f"cannot parse: {type(exc).__name__}: {exc}")


CHUNK_LINES = 500
_VALIDATION_LOCK = threading.Lock()


@contextlib.contextmanager
def _unvalidated():
    """Build nodes without ``CSTNode._validate``: what the parser makes of source it
    accepted is valid by construction, and validating every node costs ~25% of the
    parse (LibCST's own PERF note in ``CSTNode.__post_init__`` says as much). Nodes
    built elsewhere (fixes) are still validated; ``core.lower`` builds its own without
    (``lower.N``)."""
    from libcst._nodes.base import CSTNode

    with _VALIDATION_LOCK:  # (not reentrant)
        validate = CSTNode.__dict__["__post_init__"]
        CSTNode.__post_init__ = _no_validation
        try:
            yield
        finally:
            CSTNode.__post_init__ = validate


def _no_validation(self) -> None:
    pass


def _parse_in_pieces(source: str, starts: Sequence[int], inner: Optional[Dict[int, Tuple[int, ...]]] = None) -> Optional["cst.Module"]:
    """One module made of the parses of consecutive pieces of ``source``, each cut where
    a module-level statement starts, or, in a long function or class (``inner``: its
    first line -> lines where its body may be cut), where one of its body's statements
    ends; its code is ``source``. None when the pieces do not agree on indentation or
    newlines (then parse the whole)."""
    import libcst as cst

    if "\r" in source:
        return None  # keep line counting trivial: "\n" only
    inner = inner or {}
    lines = slicing.split_lines(source)
    cuts = [1]
    for line in sorted(set(starts) | set(inner)):
        if (line - cuts[-1] >= CHUNK_LINES or (line in inner and line > cuts[-1])) and _may_cut(lines, line):
            cuts.append(line)  # (a long statement starts a piece of its own ...)
        if line in inner:
            after = [s for s in starts if s > line]
            if after and _may_cut(lines, min(after)):
                cuts.append(min(after))  # (... and ends one)
    cuts = sorted(set(cuts))
    if len(cuts) == 1 and not inner:
        return None
    cuts.append(len(lines) + 1)
    modules = []
    for a, b in zip(cuts, cuts[1:]):
        try:
            m = _parse_long_statement(lines, a, b, inner[a]) if a in inner else cst.parse_module("".join(lines[a - 1:b - 1]))
        except cst.ParserSyntaxError:
            return None  # (the whole text tells what is wrong, and where)
        if m is None:
            return None
        modules.append(m)
    first = modules[0]
    if any(m.default_indent != first.default_indent or m.default_newline != first.default_newline for m in modules):
        return None
    body: List["cst.BaseStatement"] = []
    carry: List["cst.EmptyLine"] = []  # blank lines and comments between two pieces' statements
    for i, m in enumerate(modules):
        lead = carry + (list(m.header) if i else [])
        stmts = list(m.body)
        if stmts:
            stmts[0] = stmts[0].with_changes(leading_lines=lead + list(stmts[0].leading_lines))
            carry = list(m.footer)
        else:
            carry = lead + list(m.footer)
        body.extend(stmts)
    return first.with_changes(body=body, footer=carry, has_trailing_newline=modules[-1].has_trailing_newline)


def _may_cut(lines: List[str], line: int) -> bool:
    """Whether a piece may end before ``line``: not after indented comment lines
    (LibCST's parser drops all but the last of those at the end of a text: ``x = 1`` and
    two lines ``    # c``)."""
    i = line - 2
    while i >= 0:
        text = lines[i]
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            return True
        if stripped and text[0] in " \t\f":
            return False
        i -= 1
    return True


_WRAPPER = "if 1:\n"  # (a block around statements cut out of a body: any indentation fits)


def _parse_long_statement(lines: List[str], a: int, b: int, cuts: Tuple[int, ...]) -> Optional["cst.Module"]:
    """The parse of ``lines[a - 1:b - 1]``, one module-level function or class statement
    (and what follows it up to the next module-level statement), in pieces cut at
    ``cuts`` (lines right after a body statement ends): the first piece holds the header;
    each later one is parsed inside ``_WRAPPER`` and gives its statements to the body."""
    import libcst as cst

    marks = [a]
    for line in cuts:
        if a < line < b and line - marks[-1] >= CHUNK_LINES and not lines[line - 2].rstrip("\n").endswith("\\"):
            marks.append(line)  # (a backslash continues the statement ``ast`` ended above)
    if len(marks) == 1:
        return cst.parse_module("".join(lines[a - 1:b - 1]))
    marks.append(b)
    head = cst.parse_module("".join(lines[a - 1:marks[1] - 1]))
    if len(head.body) != 1 or type(head.body[0]) not in (cst.FunctionDef, cst.ClassDef):
        return None
    stmt = head.body[0]
    block = stmt.body
    if type(block) is not cst.IndentedBlock or block.indent is not None:
        return None
    if block.footer or head.footer:
        return None  # (a piece ends where a statement of the body ends: nothing trails it)
    stmts = list(block.body)
    footer: List["cst.EmptyLine"] = []
    tail: List["cst.EmptyLine"] = []
    last = head
    for c, d in zip(marks[1:], marks[2:]):
        m = cst.parse_module(_WRAPPER + "".join(lines[c - 1:d - 1]))
        if m.default_indent != head.default_indent or m.default_newline != head.default_newline or len(m.body) != 1:
            return None
        wrap = m.body[0]
        inner_block = wrap.body
        if type(wrap) is not cst.If or wrap.orelse is not None or type(inner_block) is not cst.IndentedBlock or inner_block.indent is not None:
            return None
        if m.header or wrap.leading_lines or not inner_block.body:
            return None
        stmts.extend(inner_block.body)
        if d == b:
            footer, tail = list(inner_block.footer), list(m.footer)
        elif inner_block.footer or m.footer:
            return None
        last = m
    stmt = stmt.with_changes(body=block.with_changes(body=stmts, footer=footer))
    return head.with_changes(body=[stmt], footer=tail, has_trailing_newline=last.has_trailing_newline)


# LibCST's native parser recurses on the C stack and overflows it (a segfault that
# kills the whole run) on deeply nested input; parsing on a thread with a large stack
# moves that limit far beyond what CPython itself accepts.
_STACK_SIZE = 256 * 1024 * 1024
# CPython's own parser guards its recursion: what it rejects as too deep is reported
# as SL000 before LibCST ever sees it.
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too complex", "nested too deeply")
# Errors no Python version's grammar undoes (LibCST's tokenizer lets these characters
# through: a U+FEFF or U+200D inside the code was no finding at all; issue 24's battery).
_FINAL = ("invalid non-printable character",)
# Python 2's ``except X, e:``, which LibCST's grammar accepts (as ``except (X, e):``):
# a syntax error in every Python 3 before 3.14, whose PEP 758 reads it as a tuple of
# exception types (ruff, at its default target, reports it too). Issue 44.
if sys.version_info < (3, 14):
    _FINAL += ("multiple exception types must be parenthesized",)


def _cpython_check(text: str, filename: str, tree: bool = True) -> Tuple[Optional[Finding], Optional[SyntaxError], Optional[ast.Module]]:
    """Parse with CPython's parser (fast, C, recursion-guarded).

    Returns (a finding for input nested too deeply for any parser, CPython's syntax
    error if any, the tree when it parses and ``tree`` asks for it). A plain syntax error
    is not final by itself: the running Python may be older than the syntax the file
    uses, so it only refines LibCST's verdict. The tree serves the engine's gate, which
    would parse it again; without it, the check costs ~40% less (``symtable`` parses
    but builds no Python objects for the tree; it also rejects a few programs the
    parser accepts, e.g. a duplicate argument: LibCST has the last word on those too).
    """
    if text.startswith("\ufeff"):  # (a text handed over with its file's BOM: ``lint_source``'s callers, an editor)
        text = text[1:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if not tree:
                symtable.symtable(text, filename, "exec")
                return None, None, None
            parsed = compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if any(t in msg for t in _TOO_DEEP + _FINAL):
            return syntax_finding(filename, f"SyntaxError: {msg}", exc.lineno or 1, max(1, exc.offset or 1)), exc, None
        return None, exc, None
    except (RecursionError, MemoryError):
        return syntax_finding(filename, "SyntaxError: too deeply nested to parse"), None, None
    except Exception:  # e.g. ValueError on odd input: let LibCST decide
        return None, None, None
    return None, None, parsed


def _syntax_finding_from(exc: SyntaxError, filename: str) -> Finding:
    row = exc.lineno or 1
    col = max(1, exc.offset or 1)
    f = syntax_finding(filename, f"SyntaxError: {exc.msg or 'invalid syntax'}", row, col)
    end_row, end_col = getattr(exc, "end_lineno", None), getattr(exc, "end_offset", None)
    if end_row and end_col and (end_row, end_col) > (row, col):
        f.end = (end_row, end_col)
    return f


def _on_big_stack(func, *args):
    """Run ``func(*args)`` on a thread with a large stack; re-raise what it raises."""
    box: list = []

    def target():
        try:
            with _deep_recursion():
                box.append((True, func(*args)))
        except BaseException as exc:  # handed to the caller
            box.append((False, exc))

    with _STACK_LOCK:
        try:
            previous = threading.stack_size(_STACK_SIZE)
        except (ValueError, RuntimeError):  # the platform refuses: run here
            return func(*args)
        try:
            thread = threading.Thread(target=target, name="scopelint-lint", daemon=True)
            thread.start()
        except RuntimeError:  # cannot start a thread: run here
            return func(*args)
        finally:
            threading.stack_size(previous)
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


_STACK_LOCK = threading.Lock()
# The recursion limit while an analysis runs on that stack (Python's default is 1,000,
# too few for a valid program the analysis walks recursively: a 2,100-term ``x + x + ...``
# was "too deeply nested to analyse", found by the battery's fuzzing). The stack holds
# far more frames on every supported Python; deeper input is still SL000.
_DEEP_LIMIT = 8000
_DEPTH_LOCK = threading.Lock()
_deep_runs = [0, 0]  # (analyses on a large stack now, the limit before the first)


@contextlib.contextmanager
def _deep_recursion():
    """Raise the (process-wide) recursion limit to ``_DEEP_LIMIT`` while any analysis runs
    on a large stack; the last one to end puts the limit back."""
    import sys

    with _DEPTH_LOCK:
        if _deep_runs[0] == 0:
            _deep_runs[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_deep_runs[1], _DEEP_LIMIT))
        _deep_runs[0] += 1
    try:
        yield
    finally:
        with _DEPTH_LOCK:
            _deep_runs[0] -= 1
            if _deep_runs[0] == 0:
                sys.setrecursionlimit(_deep_runs[1])


def lint_source(source: str, filename: str, settings: Settings = Settings(), notebook: bool = False) -> LintResult:
    """Lint one text: the entry for every caller (files, stdin, editors, tests), safe for
    hostile input (input too deep for LibCST is SL000, and LibCST runs on a thread with a
    large stack) and with CPython's precise location for syntax errors, which are
    reported for every file, also those that never mention a framework.

    ``notebook``: ``source`` is a ``.ipynb`` file's JSON; its code cells are linted as
    one program and the findings (and their fixes' edits) carry cell numbers (from 1)
    and cell-relative positions; ``LintResult.notebook`` is the loaded notebook."""
    if not notebook:
        return _lint_code(source, filename, settings)
    if not settings.edits:
        settings = replace(settings, edits=True)
    from scopelint import notebook as nb_module

    try:
        nb = nb_module.load(source)
    except (ValueError, RecursionError) as exc:
        return LintResult([syntax_finding(filename, f"invalid notebook: {exc}")])
    result = _lint_code(nb.source, filename, settings)
    result = _without_broken_cells(nb, result, filename, settings)
    nb_module.map_findings(nb, result.findings)  # cell numbers from 1; fix edits mapped too
    result.notebook = nb
    return result


def _without_broken_cells(nb, result: LintResult, filename: str, settings: Settings, most: int = 8) -> LintResult:
    """A syntax error in one cell must not hide the other cells' findings: lint again
    with each cell that holds one blanked (its lines kept, so rows still map), and report
    its syntax error with what the rest of the notebook shows."""
    from scopelint import notebook as nb_module

    cells = {c for c, _ in nb.line_map}
    broken: dict = {}  # cell -> its syntax finding
    current = result
    while len(broken) < min(most, len(cells) - 1):  # (one cell left: nothing else to show)
        syntax = next((f for f in current.findings if f.code == SYNTAX_ERROR), None)
        cell = nb_module.locate(nb, syntax.start[0])[0] if syntax is not None else None
        if cell is None or cell in broken:
            break
        broken[cell] = syntax
        lines = nb.source.split("\n")
        for i, (c, _) in enumerate(nb.line_map):
            if c in broken and i < len(lines):
                lines[i] = ""
        current = _lint_code("\n".join(lines), filename, settings)
    if not broken:
        return result
    current.findings = list(broken.values()) + current.findings  # (a syntax error left in ``current`` stays)
    return current


def _lint_code(code: str, filename: str, settings: Settings) -> LintResult:
    """``lint_source`` for Python text: the findings, then what ``# noqa`` comments and
    ``# scopelint: noqa`` leave of them (and SL001, unused directives, when selected)."""
    if skip_file(code):
        return LintResult()
    implied = fragment_imports(code)
    if implied:
        # A fragment (a forum post, an issue, a notebook cell pasted alone): the framework
        # names it uses without importing them are read as their imports, appended at
        # the end so that every line keeps its number. A fix keeps only if it edits the
        # user's lines alone (one that would add an import after the read ones goes).
        result = _lint_python(code + implied, filename, settings)
        last = len(slicing.split_lines(code))
        # (nor one that writes a framework name the text never uses: ``with torch.no_grad():``
        # in a post that names no framework would raise NameError where it is pasted back)
        unused = [line.split()[-1] for line in implied.split("\n") if line and line.split()[-1] not in code]
        result.findings = [f if f.fix is None or all(e.end[0] <= last and not any(n in e.content for n in unused) for e in f.fix.edits)
                           else replace(f, fix=None) for f in result.findings if f.start[0] <= last]
    else:
        result = _lint_python(code, filename, settings)
    if result.findings or UNUSED_NOQA in settings.select:
        from scopelint import noqa

        result.findings = noqa.apply(result.findings, code, filename, _noqa_policy(settings), settings.ignore_noqa)
    return result


def _noqa_policy(settings: Settings):
    from scopelint.noqa import Policy

    if UNUSED_NOQA not in settings.select:
        return Policy(settings.select)
    rule = ALL_RULES[UNUSED_NOQA]
    return Policy(settings.select, settings.per_file_ignored, tuple(ALL_RULES),
                  dict(settings.severity).get(UNUSED_NOQA, rule.severity), rule.help)


def _lint_python(code: str, filename: str, settings: Settings) -> LintResult:
    lint = might_fire(code, settings)
    too_deep, cpython_error, tree = _cpython_check(code, filename, tree=lint)
    if too_deep is not None:
        return LintResult([too_deep])
    result = _on_big_stack(lint_fired, code, filename, settings, tree) if lint else LintResult()
    if cpython_error is None:
        if "\t" in code and any(f.code == SYNTAX_ERROR and f.message.startswith("SyntaxError") for f in result.findings):
            return _lint_tabs_expanded(code, filename, settings) or result
        return result
    syntax = [f for f in result.findings if f.code == SYNTAX_ERROR and f.message.startswith("SyntaxError")]
    if syntax:  # both parsers reject it: CPython's message and position are the precise ones
        others = [f for f in result.findings if f.code != SYNTAX_ERROR]
        result.findings = [_syntax_finding_from(cpython_error, filename)] + others
    elif not result.findings and not result.errors:
        # The text gate skips files that never mention a framework without parsing them;
        # a syntax error there is still an error, once LibCST agrees it is one.
        _, error = _on_big_stack(parse, code, filename)
        if error is not None:
            result.findings.append(_syntax_finding_from(cpython_error, filename))
    return result


def _lint_tabs_expanded(code: str, filename: str, settings: Settings) -> Optional[LintResult]:
    """The findings of a file CPython compiles and LibCST's tokenizer rejects for its
    mixed tab/space indentation (``if a:`` / 4 spaces ``if b:`` / a tab and 4 spaces
    ``x = 1``: CPython compares columns with tab stops of 8, LibCST wants each block's
    indentation to extend its parent's as text). Analysed in a copy whose lines'
    indentation has its tabs expanded (the same blocks for CPython), and reported at
    the original's columns; without fixes, which would be made for the copy's text
    (its spaces where the file has tabs: a fix could leave a block CPython rejects).
    None when the copy is not that (no such line, or it fails to parse too): the
    caller keeps LibCST's SL000."""
    expanded, shifts = _expand_indentation(code)
    if not shifts:
        return None
    too_deep, error, tree = _cpython_check(expanded, filename)
    if too_deep is not None or error is not None:
        return None
    result = _on_big_stack(lint_fired, expanded, filename, settings, tree)
    if any(f.code == SYNTAX_ERROR for f in result.findings):
        return None
    for f in result.findings:
        f.start, f.end = _unexpanded(f.start, shifts), _unexpanded(f.end, shifts)
        f.fix = None
    return result


def _expand_indentation(code: str) -> Tuple[str, Dict[int, Tuple[int, int]]]:
    """``code`` with the tabs of the indentation of each line that starts a logical line
    expanded to tab stops of 8 (as CPython's tokenizer counts them), and for each line
    changed (1-based) its indentation's length before and after; ``{}`` where nothing
    changes or ``tokenize`` refuses the text (indentation inside a string or a bracket
    is the text's own: left as it is)."""
    import io
    import tokenize

    starts = set()
    expect = True
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.NEWLINE:
                expect = True
            elif expect and tok.type not in skip:
                starts.add(tok.start[0])
                expect = False
    except (tokenize.TokenError, SyntaxError):
        return code, {}
    lines = slicing.split_lines(code)
    shifts: Dict[int, Tuple[int, int]] = {}
    for row in sorted(starts):
        if row > len(lines):
            continue
        line = lines[row - 1]
        body = line.lstrip(" \t")
        indent = line[:len(line) - len(body)]
        if "\t" in indent and "\f" not in indent:
            wide = indent.expandtabs(8)
            lines[row - 1] = wide + body
            shifts[row] = (len(indent), len(wide))
    return "".join(lines), shifts


def _unexpanded(pos: Tuple[int, int], shifts: Dict[int, Tuple[int, int]]) -> Tuple[int, int]:
    """A 1-based (row, column) of the copy ``_expand_indentation`` made, in the original
    (a column inside the widened indentation: where the code starts)."""
    row, col = pos
    shift = shifts.get(row)
    if shift is None or col <= 1:
        return pos
    before, after = shift
    return (row, col - after + before) if col - 1 >= after else (row, before + 1)


def _lint_trusted(source: str, filename: str, settings: Settings, tree: Optional[ast.Module] = None) -> LintResult:
    """Lint trusted text (already on the large stack: ``lint_fired`` lints a file again
    whole from here). ``tree``: ``ast.parse(source)`` when the caller has it already. The
    text gate, then ``lint_fired``."""
    if skip_file(source) or not might_fire(source, settings):
        return LintResult()
    return lint_fired(source, filename, settings, tree)


def lint_fired(source: str, filename: str, settings: Settings, tree: Optional[ast.Module] = None) -> LintResult:
    """``_lint_trusted`` for text that passed its text gate (``might_fire``)."""
    result = LintResult()
    # (A file told of other modules' functions or classes is analysed whole: what its
    # calls of them do is not among the gate's anchors.)
    whole = settings.project is not None and settings.project.needs_whole
    plan = slicing.plan(source, settings.inference_functions, tree) if settings.gate and not whole else None
    if plan is not None and plan.source is None:
        return result  # no rule can fire anywhere in the file
    if plan is not None and settings.lower and plan.body is not None:
        finds = _lowered_finds(source, plan, settings)
        if finds is False:
            return result
        if finds and plan.sliced:
            # Its findings will be those of the whole file (the gate changes none), and a
            # slice's fixes are made from the whole file: parse that at once.
            return _lint_trusted(source, filename, replace(settings, gate=False), tree)
    if plan is not None:
        module, error = parse(plan.source, filename, plan.starts, plan.inner)
    elif tree is not None and len(tree.body) and tree.body[-1].end_lineno > 2 * CHUNK_LINES:
        module, error = parse(source, filename, slicing.starts_of(tree.body), slicing.inner_cuts(tree.body))
    else:
        module, error = parse(source, filename)
    if error is not None:
        result.findings.append(error)
        return result
    parsed = plan.source if plan is not None else source
    body = plan.body if plan is not None else tree.body if tree is not None else None
    result = lint_module(module, parsed, source, filename, settings, result, plan.whole if plan is not None else None, body)
    if result.needs_whole:
        return _lint_trusted(source, filename, replace(settings, gate=False), tree)
    return result


def summarize(source: str, filename: str, program: Optional["Context"] = None, functions: bool = True) -> "Exports":
    """What the other modules of a program learn of this one (``core.interfile``): its
    functions' summaries (``functions``: else only its model classes, which need no walk
    of its code) and its model classes, from an analysis of the whole text (no gate: a
    summary must see every ``return``). ``filename``: how messages name it. Never
    raises: what cannot be analysed exports nothing."""
    from scopelint.core.interfile import Exports, calls_a_parameter, may_export

    if skip_file(source):
        return Exports()
    if not may_export(source, program is not None and bool(program.functions or program.model_classes)) and not calls_a_parameter(source):
        if _MODULE_DEF.search(source) is None:
            return Exports()
        functions = False  # (no summary to carry: only which of its functions are mode-free)
    try:
        return _on_big_stack(_summarize, source, filename, program, functions)
    except Exception:  # (nothing known is no summary: the callers' analyses stay silent)
        return Exports()


_MODULE_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]", re.M)  # a module-level function


def _summarize(source: str, filename: str, program: Optional["Context"], functions: bool) -> "Exports":
    from scopelint.core import queries
    from scopelint.core.flow import Analyzer
    from scopelint.core.callsites import forwards_detaching, forwards_switching_recording
    from scopelint.core.interfile import Exports, exports_of
    from scopelint.core.lower import Unsupported, lower_module
    from scopelint.core.summaries import detaches_in_place, frozen_by_constructor

    tree = ast.parse(source)
    body = tree.body
    if not functions:  # the classes' headers and the imports are all it takes
        tree.body = [_header_only(n) for n in body if isinstance(n, (ast.Import, ast.ImportFrom, ast.ClassDef))]
    try:
        module = lower_module(tree.body, source)
    except Unsupported:  # (Python 3.12 or later, an identifier not ASCII: LibCST reads it all)
        module, error = parse(source, filename)
        if module is None:
            return Exports()
    analyzer = Analyzer(module, whole=slicing.whole_of(tree), program=program)
    bases = {name: analyzer.graph.framework_bases.get(id(node), ()) for name, (node, _) in analyzer.graph.classes.items() if name in analyzer.graph.model_classes}
    whole_tree = ast.Module(body=body, type_ignores=[])
    switching = forwards_switching_recording(whole_tree, analyzer.graph.model_classes)
    detaching = forwards_detaching(whole_tree, analyzer.graph.model_classes)
    if not functions:
        mode_free, mode_free_functions = _mode_free_definitions(body, source, analyzer.graph.model_classes, program)
        return Exports((), tuple(sorted(analyzer.graph.model_classes)), tuple(sorted(analyzer.names.frameworks)), tuple(sorted(bases.items())),
                       tuple(sorted(mode_free)), tuple(sorted(mode_free_functions)), tuple(sorted(switching)), tuple(sorted(detaching)))
    facts = analyzer.run()
    lines = {n.name: n.lineno for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    lines.update((f"{n.name}.{m.name}", m.lineno) for n in tree.body if isinstance(n, ast.ClassDef)
                 for m in n.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
    steps = {id(b.func) for b in facts.backwards if b.func is not None}
    trains = {id(f): queries.trained_models(facts, f) for f in facts.functions if id(f) in steps}
    forwards = {id(f): queries.forwarded_models(facts, f) for f in facts.functions if id(f) not in steps and f.cls is None and f.parent is None}
    mode_free = {name for name in analyzer.graph.model_classes if queries.mode_free_class(facts, name)}
    mode_free_functions = {f.name for f in facts.functions if f.cls is None and f.parent is None and queries.mode_free_function(facts, f.name)}
    defers = {id(f): queries.deferred_method_calls(facts, f) for f in facts.functions if f.cls is None and f.parent is None}
    detaches = {id(f): tuple(p for p, _ in detaches_in_place(f, lambda call, _f: getattr(facts.call_of(call), "target", None)))
                for f in facts.functions if f.cls is None and f.parent is None}
    frozen = []
    for f in facts.functions:
        if f.name == "__init__" and f.cls is not None and f.parent is None and f.cls.name.value in analyzer.graph.model_classes:
            found = frozen_by_constructor(f)
            if found is not None:
                frozen.append((f.cls.name.value, *found))
    return exports_of(facts.functions, analyzer.graph.model_classes, facts.frameworks, lines, filename, trains, bases, mode_free,
                      mode_free_functions, forwards, defers, detaches, switching, detaching, frozen)


def _mode_free_definitions(body: List[ast.stmt], source: str, model_classes, program: Optional["Context"]) -> Tuple[set, set]:
    """Of a module's model classes (from its headers), those ``queries.mode_free_class``
    finds mode-free, and of its module-level functions those
    ``queries.mode_free_function`` finds so: read from the module with their bodies and
    every module-level statement (what a name there is bound to), the bodies of its other
    classes left out (a class whose ``__init__`` calls one is not mode-free either way).
    No flow analysis runs: the question is only what the classes and functions build
    and call."""
    from scopelint.core import queries
    from scopelint.core.facts import Facts
    from scopelint.core.flow import Analyzer
    from scopelint.core.interfile import NO_CONTEXT
    from scopelint.core.lower import Unsupported, lower_module

    if not model_classes and not any(isinstance(n, ast.FunctionDef) for n in body):
        return set(), set()
    kept = [n if (isinstance(n, ast.ClassDef) and n.name in model_classes) or isinstance(n, ast.FunctionDef) else _header_only(n) for n in body]
    try:
        module = lower_module(kept, source)
    except Unsupported:  # (Python 3.12 or later, an identifier not ASCII: LibCST reads it all)
        module, _ = parse(source, "<module>")
        if module is None:
            return set(), set()  # (unknown: nothing is mode-free)
        kept = body
    analyzer = Analyzer(module, whole=slicing.whole_of(ast.Module(body=kept, type_ignores=[])), program=program)
    facts = Facts(module, analyzer.names, frozenset(analyzer.names.frameworks), analyzer.graph.functions, [], [], [], [],
                  program or NO_CONTEXT)
    classes = {name for name in model_classes if name in analyzer.graph.model_classes and queries.mode_free_class(facts, name)}
    functions = {f.name for f in analyzer.graph.functions if f.cls is None and f.parent is None and queries.mode_free_function(facts, f.name)}
    return classes, functions


def _header_only(node: ast.stmt) -> ast.stmt:
    """A class or function statement without its body (``pass`` where it was); other
    statements as they are."""
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
        return node
    first = node.body[0]
    stub = ast.Pass(lineno=first.lineno, col_offset=first.col_offset, end_lineno=first.lineno, end_col_offset=first.col_offset + 4)
    out = copy.copy(node)  # (its fields as they are: decorators, bases, type parameters)
    out.body = [stub]
    return out


def _lowered_finds(source: str, plan: slicing.Plan, settings: Settings) -> Optional[bool]:
    """Whether a rule reports anything in the analysis of the plan's slice built from
    ``ast`` (``core.lower``: LibCST's node classes and fields, without whitespace);
    None when that cannot be told (a construct ``lower`` does not build, an error).
    False: the file has no findings (most files stop here). Otherwise LibCST parses
    (``lint_fired``: the slice, or the whole file when the slice reports), which gives
    the findings their positions, ``# noqa`` and fixes. (The rules build a report's fix
    before they yield it: a file with findings pays for one fix on the lowered tree.)"""
    from scopelint.core.lower import lower_module

    try:
        head = _head_of(plan.body)
        if head is not None and _reports(lower_module(head, source, plan.lines), plan, settings):
            return True
        return _reports(lower_module(plan.body, source, plan.lines), plan, settings)
    except Exception:  # (``Unsupported``, too deep, an internal error: the parse path tells)
        return None


# A file of at least this many lines is first analysed in its head, its first statements
# up to a sixteenth of its lines (``_head_of``): where they report, the rest need not be.
HEAD_FROM_LINES = 8000


def _head_of(body: Sequence[ast.stmt]) -> Optional[Sequence[ast.stmt]]:
    """The first module-level statements of ``body`` that end within its first sixteenth
    (None: a file shorter than ``HEAD_FROM_LINES``, or no such statements). The head
    only says yes early: that it reports tells ``lint_fired`` to parse with LibCST,
    whose analysis of the file (or of its slice) alone makes the findings, as after
    a yes of the whole file; a head that reports nothing says nothing (the whole file is
    analysed then). Files with findings all through (generated ones, issue 24's
    ``functions`` and ``loops``) skip most of the lowered analysis; one without pays
    at most a sixteenth more."""
    if not body or body[-1].end_lineno < HEAD_FROM_LINES:
        return None
    cut = body[-1].end_lineno // 16
    n = 0
    while n < len(body) and body[n].end_lineno <= cut:
        n += 1
    return body[:n] if 0 < n < len(body) else None


def _reports(module, plan: slicing.Plan, settings: Settings) -> bool:
    """Whether a rule reports anything in the analysis of the lowered ``module``
    (``plan``'s statements, or the first of them)."""
    from scopelint.core.flow import Analyzer
    from scopelint.rule import RuleContext

    facts = Analyzer(module, whole=plan.whole, program=settings.project).run()
    if not facts.frameworks:
        return False
    ctx = RuleContext(facts, tuple(settings.inference_functions))
    try:
        for code in settings.select:
            rule = ALL_RULES.get(code)
            if rule is not None and next(iter(rule().check(ctx)), None) is not None:
                return True
    finally:
        _forget(module, facts)
    return False


def _forget(module, facts) -> None:
    """Drop the module's parent table, and ``fixkit.forget`` where fixkit was loaded (a
    fix was built)."""
    import sys

    from scopelint.core.syntax import forget_parents

    forget_parents(module)
    fixkit = sys.modules.get("scopelint.fixkit")
    if fixkit is not None:
        fixkit.forget(module, facts)


def lint_module(
    module: "cst.Module",
    parsed: str,
    source: str,
    filename: str,
    settings: Settings,
    result: Optional[LintResult] = None,
    whole: Optional[slicing.Whole] = None,
    body: Optional[Sequence[ast.stmt]] = None,
) -> LintResult:
    """``module``: the parse of ``parsed``, which is ``source`` or a plan's slice of it
    (same lines and columns; then ``whole``). ``body``: the module-level statements of
    ``ast``'s tree of ``parsed`` (``Plan.body``), when the caller has them."""
    from scopelint import positions
    from scopelint.core.flow import Analyzer
    from scopelint.rule import RuleContext

    result = result or LintResult()
    try:
        # (``parsed`` is ``module.code``, which LibCST would generate again: ~0.3 s for
        # an 11,000-line file)
        facts = Analyzer(module, whole=whole if whole is not None else slicing.whole_of_source(parsed), program=settings.project).run()
    except RecursionError:
        result.findings.append(syntax_finding(filename, "file is too deeply nested to analyse"))
        return result
    except Exception as exc:
        result.errors.append(f"{filename}: internal error in the analysis: {type(exc).__name__}: {exc}")
        return result
    if not facts.frameworks:
        return result
    ctx = RuleContext(facts, tuple(settings.inference_functions))
    reports: List[Tuple[Type["Rule"], "Report"]] = []
    for code in settings.select:
        rule = ALL_RULES.get(code)
        if rule is None:
            continue
        try:
            reports.extend((rule, r) for r in rule().check(ctx))
        except Exception as exc:
            result.errors.append(f"{filename}: internal error in rule {code}: {type(exc).__name__}: {exc}")
    if not reports:
        _forget(module, facts)
        return result
    nodes = [r.node for _, r in reports] + [n for _, r in reports if r.fix is not None for n, _ in r.fix.pairs() if n is not module]
    nodes += [w for _, r in reports for w, _ in r.related if not isinstance(w, str)]  # (places in this file)
    # One statement at a time where ``ast``'s tree of the text tells where it starts (the
    # code before it is not generated); what is left, in one walk of the module
    from scopelint.core.syntax import parents

    ranges, left = positions.ranges_by_statement(module, nodes, parsed, body, parents(module)) if body is not None else ({}, nodes)
    starts: List[int] = []
    if left:
        ranges.update(positions.ranges_or_provider(module, left, starts))
    lines = [line.rstrip("\r\n") for line in slicing.split_lines(source)]  # as Python counts lines
    severity = dict(settings.severity)
    seen = set()
    statements = _Statements(module, parsed, starts)
    for rule, report in reports:
        finding = _to_finding(rule, report, module, parsed, ranges, filename, severity, statements, settings.edits)
        key = (finding.code, finding.start)
        if key in seen:  # (``# noqa`` is applied by ``_lint_code``, to every finding of the file)
            continue
        seen.add(key)
        result.findings.append(finding)
    # Fix builders read the whole module (its names, every mention of a helper): a
    # slice's fixes are made again from the whole file. Pieces of the whole text give its
    # fixes (``_parse_in_pieces`` joins them only when their default indentation and
    # newline agree, hence are the file's).
    result.needs_whole = parsed != source and any(
        f.fix is not None and (settings.ignore_noqa or not suppressed(f, lines)) for f in result.findings
    )
    _forget(module, facts)
    return result


def _columns(r: "positions.Range") -> Tuple[Tuple[int, int], Tuple[int, int]]:
    (l1, c1), (l2, c2) = r
    return (l1, c1 + 1), (l2, c2 + 1)


def _module_edit(old: str, new: str) -> Edit:
    """A fix that rewrites the module, as one edit of the lines that change."""
    a, b = slicing.split_lines(old), slicing.split_lines(new)
    same = min(len(a), len(b))
    head = 0
    while head < same and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < same - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    if tail or old.endswith(("\n", "\r")):
        end = (len(a) - tail + 1, 1)
    else:  # up to the end of a last line without a newline
        end = (len(a), len(a[-1]) + 1) if a else (1, 1)
    return Edit("".join(b[head:len(b) - tail]), (head + 1, 1), end)


class _Statements:
    """``_module_edit`` for a fix that replaces the module, in the time of the statements
    it changes (not the file's: a file with thousands of findings made each of them
    generate and compare the whole module). A fix of the module is a ``ModuleSplice``:
    the module-level statements it replaces (``fixkit.module_fix``), so only those are
    generated; the lines around them
    are the text's own, compared exactly as ``_module_edit`` compares them (same edit)."""

    def __init__(self, module: "cst.Module", text: str, known: Sequence[int] = ()):
        self.module, self.text = module, text
        self.lines: Optional[List[str]] = None
        self.starts: List[int] = []  # the line (0-based) where each statement's code starts; then the footer's
        # Where the code of the first statements starts, as ``positions.ranges`` counted
        # it on its way (their code is not generated again here)
        self.known = known

    def _index(self) -> bool:
        if self.lines is None:
            m = self.module
            self.lines = slicing.split_lines(self.text)
            known = list(self.known[:len(m.body)])
            if known:  # (from the last one counted: its code is generated, then the rest's)
                self.starts.extend(known[:-1])
                at = known[-1]
            else:
                at = len(slicing.split_lines("".join(m.code_for_node(e) for e in m.header)))
            for stmt in m.body[len(self.starts):]:
                self.starts.append(at)
                at += len(slicing.split_lines(m.code_for_node(stmt)))
            self.starts.append(at)
            if "".join(self.lines[self.starts[-1]:]) != "".join(m.code_for_node(e) for e in m.footer):
                self.starts = []  # (the text is not this module's code as counted: never here)
        return bool(self.starts)

    def edit(self, splice: "rule.ModuleSplice") -> Optional[Edit]:
        m = self.module
        if splice.module is not m or not m.has_trailing_newline:
            return None
        head, end = splice.first, splice.end
        if not (0 <= head <= end <= len(m.body)) or not self._index():
            return None
        old = self.lines
        s, e = self.starts[head], self.starts[end]
        snippet = slicing.split_lines("".join(m.code_for_node(stmt) for stmt in splice.statements))
        n_old, n_new = len(old), len(old) - (e - s) + len(snippet)

        def line(k: int) -> str:  # line k of the new text
            if k < s:
                return old[k]
            if k < s + len(snippet):
                return snippet[k - s]
            return old[k - s - len(snippet) + e]

        same = min(n_old, n_new)
        first = s  # (the lines before s are the same objects' code)
        while first < same and old[first] == line(first):
            first += 1
        last = min(n_old - e, max(0, same - first))  # (so are the lines after e)
        while last < same - first and old[-1 - last] == line(n_new - 1 - last):
            last += 1
        content = "".join(line(k) for k in range(first, n_new - last))
        if last or self.text.endswith(("\n", "\r")):
            end = (n_old - last + 1, 1)
        else:
            end = (n_old, len(old[-1]) + 1) if old else (1, 1)
        return Edit(content, (first + 1, 1), end)


def _location(where, filename: str, ranges: Dict[int, "positions.Range"]) -> str:
    """A related location: ``path:line`` as given, or that of a node of this file."""
    if isinstance(where, str):
        return where
    return f"{filename}:{_columns(ranges[id(where)])[0][0]}"


def _to_finding(rule, report: "Report", module, text: str, ranges: Dict[int, "positions.Range"], filename: str,
                severity: Dict[str, str], statements: Optional["_Statements"] = None, make_edits: bool = True) -> Finding:
    """``make_edits``: ``Settings.edits`` (False: a fix of the module is kept without
    making its edit, and every fix's edits are left out)."""
    start, end = _columns(ranges[id(report.node)])
    fix = None
    if report.fix is not None:
        from scopelint.rule import ModuleSplice

        f = report.fix
        edits = []
        rewrites_module = False
        for node, replacement in f.pairs():
            if node is module:
                rewrites_module = True
                if not make_edits:
                    continue  # (a fix of the module always makes an edit)
                splice = replacement if isinstance(replacement, ModuleSplice) else None
                edit = statements.edit(splice) if statements is not None and splice is not None else None
                whole = splice.to_module() if splice is not None else replacement
                edits.append(edit if edit is not None else _module_edit(text, module.code_for_node(whole)))
                continue
            content = module.code_for_node(replacement)
            if content == module.code_for_node(node):
                continue  # (changes nothing: e.g. what it would undo is in another module)
            fstart, fend = _columns(ranges[id(node)])
            edits.append(Edit(content, fstart, fend))
        if edits or rewrites_module:
            fix = Fix(f.applicability, f.message, tuple(sorted(edits, key=lambda e: e.start)) if make_edits else ())
    return Finding(
        rule.code,
        report.message,
        severity.get(rule.code, rule.severity),
        filename,
        start,
        end,
        help=rule.help,
        fix=fix,
        extra={"related": [{"location": _location(w, filename, ranges), "message": m} for w, m in report.related]} if report.related else {},
    )
