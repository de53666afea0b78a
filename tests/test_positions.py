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
