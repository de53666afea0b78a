"""``lower`` builds, from ``ast``, the tree LibCST's parser builds, as the analysis reads it."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import List, Optional

import libcst as cst
import pytest

from scopelint.core import slicing
from scopelint.core.lower import Unsupported, lower_module
from scopelint.engine import Settings

ROOT = Path(__file__).resolve().parents[1]
# Fields the analysis never reads: whitespace, punctuation, comments, the text of f-strings.
_SKIPPED = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after", "header", "footer",
            "newline", "colon", "equal", "dot", "lbracket", "rbracket", "lbrace", "rbrace", "indent", "encoding",
            "default_indent", "default_newline", "has_trailing_newline", "first_line", "empty_lines", "separator")
_FSTRING_TEXT = ("start", "end", "conversion")


def difference(a, b, path: str = "") -> Optional[str]:
    """Where ``a`` and ``b`` differ as the analysis reads them, or None."""
    if isinstance(a, cst.SimpleStatementSuite):
        a = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=a.body)])
    if isinstance(b, cst.SimpleStatementSuite):
        b = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=b.body)])
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if a and isinstance(a[0], cst.BaseFormattedStringContent) or b and isinstance(b[0], cst.BaseFormattedStringContent):
            a = [x for x in a if not isinstance(x, cst.FormattedStringText)]
            b = [x for x in b if not isinstance(x, cst.FormattedStringText)]
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, cst.CSTNode):
        for f in dataclasses.fields(a):
            if any(k in f.name for k in _SKIPPED):
                continue
            if isinstance(a, (cst.FormattedString, cst.FormattedStringExpression)) and f.name in _FSTRING_TEXT:
                continue
            if f.name == "asynchronous":
                if (getattr(a, f.name) is None) != (getattr(b, f.name) is None):
                    return f"{path}.{f.name}"
                continue
            d = difference(getattr(a, f.name), getattr(b, f.name), f"{path}.{type(a).__name__}.{f.name}")
            if d:
                return d
        return None
    if a != b:
        return f"{path}: {a!r} != {b!r}"
    return None


def check(source: str) -> Optional[str]:
    return difference(lower_module(ast.parse(source).body, source), cst.parse_module(source))


PROGRAMS = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "tests" / "data").rglob("*.py"))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_lowered_tree_is_the_parsers(path):
    source = path.read_text(encoding="utf-8")
    try:
        ast.parse(source)
    except SyntaxError:
        pytest.skip("not Python")
    try:
        assert check(source) is None
    except Unsupported:
        pytest.skip("unsupported")


@pytest.mark.parametrize("source", [
    "x = 1; y = 2\nif a: b; c\nelif d: pass\nelse:\n    if e: f\n",
    "f(a, *b, c=1, *d, **e)\nclass A(B, *c, metaclass=M, **k): pass\n",
    "a[1, 2]; a[(1, 2)]; a[(1), 2]; a[1:2, ::3]; a[()]\n",
    "s = 'a' \"b\" r'''c'''\nt = (b'x'\n     b'y')\nu = f'{x!r:>{w}}' 'z'\n",
    "def f(a, /, b=1, *c, d, e=2, **g) -> int: return lambda x, *y, z=3: x\n",
    "from .. import a as b\nimport a.b.c as d, e\nfrom x import *\nglobal g\ndel a, b\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise C from e\nelse:\n    pass\nfinally:\n    pass\n",
    "with a as (b, c), d:\n    x = [i async for i in y if i if not i]\n    {**k, 'a': 1}\n",
    "x = 0x10 + 1_000 + 1.5e3 + 2j - ~a ** -b\ny = a < b < c is not d not in e\nz = a and b and c or d\n",
    "x = 1; \\\n y = 2\nif x: \\\n    a; \\\n    b\nz = 3  # ; not a separator\nw = 4\n",
    "del a,\ndel (a\n)\ndel a, b\ndel (a), [b]\n",
    "s = f'{x:{w}.{p}}' f'{y=}' r'\\d' '\\'' \"\"\"a\\\"\"\"\" '''b'''\n",
])
def test_lowered_tree_of_awkward_syntax(source):
    assert check(source) is None


def _reports(module: cst.Module, whole) -> List[tuple]:
    from scopelint.core.flow import Analyzer
    from scopelint.rule import RuleContext
    from scopelint.rules import ALL_RULES

    facts = Analyzer(module, whole=whole).run()
    ctx = RuleContext(facts, tuple(Settings().inference_functions))
    return sorted((code, type(r.node).__name__, r.message) for code, rule in ALL_RULES.items() for r in rule().check(ctx))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_analysis_of_the_lowered_slice_reports_what_the_parsed_one_does(path):
    """What the engine relies on (``engine._lowered_finds``): the gate's slice, lowered
    from the whole file's ``ast``, makes the rules report what LibCST's parse of the
    slice makes them report (the gate cut as finely as it can)."""
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        pytest.skip("not Python")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(slicing, "WHOLE_SHARE", 2.0)
        plan = slicing.plan(source, Settings().inference_functions, tree)
    if plan is None or plan.source is None:
        pytest.skip("nothing to analyse")
    try:
        lowered = lower_module(plan.body, source)
    except Unsupported:
        pytest.skip("unsupported")
    assert difference(lowered, cst.parse_module(plan.source)) is None
    assert _reports(lowered, plan.whole) == _reports(cst.parse_module(plan.source), plan.whole)


def test_an_identifier_that_is_not_ascii_is_not_lowered():
    """``ast`` reads ``ｍodel`` as ``model``, LibCST as written: such a slice is parsed."""
    source = "import torch\nｍodel = 1\n"
    with pytest.raises(Unsupported):
        lower_module(ast.parse(source).body, source)
    source = "import torch\nname = 'ｍodel'  # ｍodel\n"
    assert check(source) is None


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_findings_are_the_same_without_lowering(path):
    from dataclasses import replace

    from scopelint.engine import lint_source

    source = path.read_text(encoding="utf-8")
    def found(settings):
        return [(f.code, f.start, f.end, f.message, f.fix) for f in lint_source(source, "t.py", settings).findings]
    assert found(Settings()) == found(replace(Settings(), lower=False))


def test_lowered_match_statements():
    source = (
        "match command.split():\n"
        "    case [action]: pass\n"
        "    case (a, *rest) | [a, *_]: pass\n"
        "    case a, b if b > 0: pass\n"
        "    case {'x': 1, **kw}: pass\n"
        "    case Point(0, y=-1 | 2 + 3j, z=None) as p: pass\n"
        "    case (b) | 'str' | Color.RED | True: pass\n"
        "    case _:\n"
        "        pass\n"
    )
    assert check(source) is None


@pytest.mark.parametrize("source", [
    "x = f'{\uff4dodel}'\n",  # (``ast`` reads ``model``, LibCST as written)
    "(y): int = 1\n",  # (Python accepts these; LibCST's parser does not)
    "class A(metaclass=M, *b): pass\n",
    "if x:  # a comment ending in a backslash \\\n    a\n",
])
def test_what_lower_does_not_build_is_left_to_libcst(source):
    with pytest.raises(Unsupported):
        lower_module(ast.parse(source).body, source)


def test_lower_builds_libcst_s_own_nodes_with_the_same_signatures():
    """``lower.N.X`` takes what ``cst.X`` takes and builds the node ``cst.X`` builds (a
    default made per node by LibCST, whitespace, is one shared node there)."""
    import inspect
    import re

    from scopelint.core import lower

    used = set(re.findall(r"\bN\.([A-Z]\w*)\b", Path(lower.__file__).read_text(encoding="utf-8")))
    assert {"Call", "Name", "FunctionDef", "Param", "Add"} <= used
    for name in used:
        cls = getattr(cst, name)
        ours, theirs = inspect.signature(getattr(lower.N, name)), inspect.signature(cls)
        assert [(p.name, p.default is p.empty) for p in ours.parameters.values()] == \
               [(p.name, p.default is p.empty) for p in theirs.parameters.values()], name
    f, a = cst.Name("f"), [cst.Arg(cst.Integer("1"))]
    built = lower.N.Call(f, a)
    assert type(built) is cst.Call and built.deep_equals(cst.Call(f, a))
    assert lower.N.Param(cst.Name("x"), star="*").deep_equals(cst.Param(cst.Name("x"), star="*"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.func = f


def test_before_python_3_10_an_fstring_with_expressions_is_not_lowered(monkeypatch):
    """Python 3.9's ``ast`` puts an f-string's expressions at wrong columns (the smoke
    run on 3.9 lowered ``/ 32`` in an f-string as ``/ in``): there such a file goes to
    LibCST's parse, with the same findings."""
    from scopelint.core import lower
    from scopelint.engine import lint_source as lint_code

    source = "import torch\nwith torch.no_grad():\n    y = f(x)\nprint(f'{y.item() / 32:.4f}')\ny.backward()\n"
    exact = lint_code(source, "m.py", Settings())
    assert check(source) is None  # (here, 3.10+: lowered, and right)
    monkeypatch.setattr(lower, "_FSTRING_COLUMNS_EXACT", False)
    with pytest.raises(Unsupported, match="f-string"):
        lower_module(ast.parse(source).body, source)
    plain = "x = f'no expression'\n"
    assert difference(lower_module(ast.parse(plain).body, plain), cst.parse_module(plain)) is None
    fallback = lint_code(source, "m.py", Settings())
    assert [(f.code, f.start) for f in fallback.findings] == [(f.code, f.start) for f in exact.findings] == [("SL101", (5, 1))]
    assert not fallback.errors
