"""Positions of a few nodes (scopelint.positions) are those of LibCST's PositionProvider;
module-rewriting fixes become one edit of the lines that change."""

from __future__ import annotations

import pytest

from fixtures_util import all_fixtures
from scopelint import engine, positions
from scopelint.core import slicing
from scopelint.core.syntax import walk
from scopelint.fix import apply_edits
from scopelint.finding import Finding, Fix

libcst = pytest.importorskip("libcst")
from libcst.metadata import MetadataWrapper, PositionProvider  # noqa: E402

ODD = [
    "import torch\r\n\r\ndef f(x):\r\n    with torch.no_grad():\r\n        return x * 2\r\n",
    "x = (1,\r  2)\rif x:\r    y = [\r        3]\r",
    "class A:\n    @property\n    def f(self): return 1  # c\n\n\n# tail comment\ny = '''a\nb''' ; z = 2",
    "",
    "\n\n# only comments\n",
]


def _expected(module):
    found = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(n): ((r.start.line, r.start.column), (r.end.line, r.end.column)) for n, r in found.items()}


@pytest.mark.parametrize("source", [*ODD, *(p.read_text(encoding="utf-8") for p in all_fixtures()[::5])])
def test_every_node_s_range_is_libcst_s(source):
    module = libcst.parse_module(source)
    nodes = [*walk(module), module]
    expected = _expected(module)
    assert positions.ranges(module, nodes) == {id(n): expected[id(n)] for n in nodes}


def test_one_node_alone_stops_early_and_is_still_right():
    source = "import torch\n" + "".join(f"x{i} = torch.zeros({i})\n" for i in range(200))
    module = libcst.parse_module(source)
    expected = _expected(module)
    some = list(walk(module.body[3]))[-1]
    assert positions.ranges(module, [some]) == {id(some): expected[id(some)]}
    assert positions.ranges(module, [libcst.Name("elsewhere")]) == {}


BLOCKS = [
    "if a:\n    x = 1\nelif b: y = 2\nelse:\n    if c:\n        z = 3\n",
    "try:\n    a()\nexcept E as e:\n    b()\nelse:\n    c()\nfinally:\n    d()\n",
    "x = 1; y = 2\n@dec\n# c\n@dec2\ndef f():\n    '''doc'''\n    return [1,\n  2]\n\n\n# tail\nclass A:  # c\n    def g(self): return 1\n    x = 'é'; y = 2\n",
    "match x:\n    case 1:\n        a = 1\n    case _:\n        pass\nwhile x:\n    pass\nelse:\n    b = 2\n",
    "if x:\n\tif y:\n\t\tz = 1\n",
    "def f():\n  if x:\n        a = 1\n  b = 2\n",
    "async def f():\n    async with a as b:\n        async for c in d:\n            yield c  # t\n    ",
    "if x:  \\\n    pass\ny = 1\n",
]


@pytest.mark.parametrize("source", [*ODD, *BLOCKS, *(p.read_text(encoding="utf-8") for p in all_fixtures()[::3])])
def test_one_statement_at_a_time_gives_libcst_s_ranges(source):
    """``ranges_by_statement``: the ranges it gives are PositionProvider's; it leaves a
    node to the walk of the module only where it cannot tell (the module itself here)."""
    import ast

    from scopelint.fixkit import parents

    module = libcst.parse_module(source)
    nodes = [*walk(module), module]
    expected = _expected(module)
    found, left = positions.ranges_by_statement(module, nodes, source, ast.parse(source).body, parents(module))
    assert found == {key: expected[key] for key in found}
    assert set(found) | {id(n) for n in left} == {id(n) for n in nodes}
    # (the walk does it for a last line without a newline, a backslash after a colon, and
    # inside ``match``, whose cases' indentation is the ``match``'s own)
    if source.endswith("\n") and "\r" not in source and "\\\n" not in source and "match " not in source:
        assert [n for n in left if n is not module] == []


def test_one_statement_at_a_time_leaves_what_the_tree_does_not_match():
    import ast

    from scopelint.fixkit import parents

    text = "x = 1\ny = 2\n"
    module = libcst.parse_module(text)
    nodes = list(walk(module.body[1]))
    for other in ("x = 1\n\ny = 2\n", "x = 1\n"):  # (another text's tree: y's line is not its, or no y)
        found, left = positions.ranges_by_statement(module, nodes, text, ast.parse(other).body, parents(module))
        assert found == {} and len(left) == len(nodes)


@pytest.mark.parametrize("old, new", [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("a\nb\nc\n", "a\nb\nx\nc\n"),
    ("a\nb\nc\n", "import z\na\nb\nc\n"),
    ("a\nb\nc", "a\nb\nC"),
    ("a\nb\nc", "a\nb\nc\nd\n"),
    ("a\nb\n", "a\n"),
    ("a\n", "a\n    b\n"),
    ("a\r\nb\r\n", "a\r\nX\r\nb\r\n"),
    ("a\rb", "a\rB"),
    ("", "import x\n"),
])
def test_a_module_rewrite_is_one_edit_of_the_changed_lines(old, new):
    edit = engine._module_edit(old, new)
    a, b = slicing.split_lines(old), slicing.split_lines(new)
    head = edit.start[0] - 1
    assert edit.start[1] == 1 and a[:head] == b[:head]  # whole lines, after the common head
    assert head == min(len(a), len(b)) or a[head] != b[head]  # ... and no longer than it
    finding = Finding("SL000", "m", "error", "t.py", (1, 1), (1, 1), fix=Fix("safe", "m", (edit,)))
    assert apply_edits(old, [finding], unsafe=False) == (new, 1)
