"""Where a few nodes of a LibCST module are, without LibCST's position metadata.

``PositionProvider`` generates the module's code and records a range for every node
on the way: ~10x the cost of generating the code alone (2 s for an 11,000-line file
here, more than parsing it). Findings need the ranges of a handful of nodes. This
generates the code with LibCST's own codegen and LibCST's own rules for ranges, but
counts lines only when a wanted node's subtree is entered, records ranges only inside
those subtrees, and stops once every wanted node has its range.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState

Position = Tuple[int, int]  # (line, column), 1-based line, 0-based column as LibCST's
Range = Tuple[Position, Position]


class _Done(Exception):
    pass


class _NoRecord:
    """``record_syntactic_position`` outside the wanted subtrees: a shared context that
    does nothing (a generator-based one per node was a third of the walk)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        return False


_NO_RECORD = _NoRecord()


class _RangeState(CodegenState):
    """A codegen state that keeps the ranges ``PositionProvider`` would give the wanted
    nodes: whitespace-inclusive when a node's code is generated, replaced by the
    syntactic range where the node records one."""

    def __init__(self, module: cst.Module, wanted: Dict[int, cst.CSTNode], starts: Optional[List[int]] = None):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        # id(module-level statement) -> its index, when ``starts`` is to be filled: the
        # 0-based line where each statement's code starts, for those the walk enters
        self.tops = {id(stmt): i for i, stmt in enumerate(module.body)} if starts is not None else {}
        self.top_starts = starts
        self.left = len(wanted)
        self.depth = 0  # > 0 inside a wanted node's code
        self.line, self.column, self.counted = 1, 0, 0  # where tokens[:counted] end
        self.starts: List[Position] = []
        self.ranges: Dict[int, Range] = {}

    def _now(self) -> Position:
        tokens = self.tokens
        line, column = self.line, self.column
        for i in range(self.counted, len(tokens)):
            token = tokens[i]
            if "\n" in token or "\r" in token:  # as PositionProvider: per token, \r\n? or \n
                lines = token.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                line += len(lines) - 1
                column = len(lines[-1])
            else:
                column += len(token)
        self.line, self.column, self.counted = line, column, len(tokens)
        return line, column

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if self.tops:
            top = self.tops.get(key)
            if top is not None and top == len(self.top_starts):
                line, column = self._now()
                if column == 0:
                    self.top_starts.append(line - 1)
                else:  # (never: a statement starts a line)
                    self.tops = {}
        if self.depth or key in self.wanted:
            self.depth += 1
            self.starts.append(self._now())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if not self.depth:
            return
        start = self.starts.pop()
        key = id(node)
        if key not in self.ranges:
            self.ranges[key] = (start, self._now())
        self.depth -= 1
        if key in self.wanted:
            self.left -= 1
            if not self.left:
                raise _Done

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None):
        if not self.depth:
            return _NO_RECORD
        return self._record(node, start_node, end_node)

    @contextmanager
    def _record(self, node: cst.CSTNode, start_node: Optional[cst.CSTNode], end_node: Optional[cst.CSTNode]) -> Iterator[None]:
        start = self._now()
        yield  # (when the walk stops early, ``_Done`` passes through here unrecorded)
        end = self._now()
        if start_node is not None:
            start = self.ranges[id(start_node)][0]
        if end_node is not None:
            end = self.ranges[id(end_node)][1]
        self.ranges[id(node)] = (start, end)


def ranges(module: cst.Module, nodes: Iterable[cst.CSTNode], starts: Optional[List[int]] = None) -> Dict[int, Range]:
    """The range ``PositionProvider`` gives each of ``nodes`` (nodes of ``module``), by
    ``id``; a node not in ``module`` has none. ``starts``: an empty list to receive the
    0-based line where the code of each of ``module.body[:k]`` starts, for the first
    ``k`` statements the walk entered before it stopped (``engine._Statements``)."""
    wanted = {id(n): n for n in nodes}
    if not wanted:
        return {}
    state = _RangeState(module, wanted, starts)
    try:
        module._codegen(state)
    except _Done:
        pass
    return {key: r for key, r in state.ranges.items() if key in wanted}


def ranges_or_provider(module: cst.Module, nodes: Iterable[cst.CSTNode], starts: Optional[List[int]] = None) -> Dict[int, Range]:
    """``ranges``; should a node be left without one (a LibCST whose codegen no longer
    calls these hooks), LibCST's own ``PositionProvider`` for all of them."""
    nodes = list(nodes)
    found = ranges(module, nodes, starts)
    if all(id(n) in found for n in nodes):
        return found
    from libcst.metadata import MetadataWrapper, PositionProvider

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(n): ((p.start.line, p.start.column), (p.end.line, p.end.column))
            for n in nodes if (p := positions.get(n)) is not None}


# --- one statement at a time ----------------------------------------------------------
# The ranges of nodes deep in long code without generating all the code before them:
# the innermost statement of a block that holds a wanted node is found in the ``ast``
# tree of the same text (whose statements know their lines), and only its code is
# generated, from its first line, with the indentation of the blocks around it. What
# it generates must be the text at that line, else the node is left to ``ranges``.

_COMPOUND = {
    cst.If: (ast.If,), cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith), cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,), cst.Try: (ast.Try,),
}
if hasattr(cst, "TryStar") and hasattr(ast, "TryStar"):
    _COMPOUND[cst.TryStar] = (ast.TryStar,)
if hasattr(cst, "Match") and hasattr(ast, "Match"):
    _COMPOUND[cst.Match] = (ast.Match,)


def _cst_statements(stmt: cst.CSTNode, out: List[cst.CSTNode]) -> None:
    """``stmt`` and the statements of its indented blocks, in source order (an ``elif``
    is a statement; the small statements of a one-line suite are not)."""
    out.append(stmt)
    t = type(stmt)
    if t is cst.SimpleStatementLine:
        return
    blocks = [stmt.body] if hasattr(stmt, "body") and t is not cst.Match else []
    for handler in getattr(stmt, "handlers", ()):
        blocks.append(handler.body)
    for case in getattr(stmt, "cases", ()):
        blocks.append(case.body)
    orelse = getattr(stmt, "orelse", None)
    finalbody = getattr(stmt, "finalbody", None)
    for block in blocks:
        _block_statements(block, out)
    if type(orelse) is cst.If:
        _cst_statements(orelse, out)
    elif orelse is not None:
        _block_statements(orelse.body, out)
    if finalbody is not None:
        _block_statements(finalbody.body, out)


def _block_statements(block: cst.CSTNode, out: List[cst.CSTNode]) -> None:
    if type(block) is cst.IndentedBlock:
        for s in block.body:
            _cst_statements(s, out)


class _Lines:
    """The text's lines, and which ``ast`` statements start theirs (the others follow a
    ``;`` or a compound statement's colon: LibCST holds them in another statement)."""

    def __init__(self, lines: List[str]):
        self.lines = lines

    def first_on_line(self, node: ast.stmt) -> bool:
        if not node.col_offset:
            return True
        if not 0 < node.lineno <= len(self.lines):
            return False
        line = self.lines[node.lineno - 1]
        before = line[:node.col_offset] if line.isascii() else line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace")
        return not before.strip()

    def statements(self, node: ast.stmt, out: List[ast.stmt]) -> None:
        if self.first_on_line(node):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                self.statements(child, out)
            elif isinstance(child, ast.excepthandler) or type(child).__name__ == "match_case":
                for grandchild in ast.iter_child_nodes(child):
                    if isinstance(grandchild, ast.stmt):
                        self.statements(grandchild, out)


def _ast_start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or ()
    return min([node.lineno] + [d.lineno for d in decorators])


def _same_kind(stmt: cst.CSTNode, node: ast.stmt) -> bool:
    kinds = _COMPOUND.get(type(stmt))
    if kinds is not None:
        return isinstance(node, kinds)
    return type(stmt) is cst.SimpleStatementLine and not any(isinstance(node, k) for ks in _COMPOUND.values() for k in ks)


def ranges_by_statement(module: cst.Module, nodes: Iterable[cst.CSTNode], text: str, body: Optional[Sequence[ast.stmt]],
                        parents: Dict[int, cst.CSTNode]) -> Tuple[Dict[int, Range], List[cst.CSTNode]]:
    """The ranges of ``nodes`` (as ``ranges``) that can be had one statement at a time,
    and the nodes left without one (for ``ranges_or_provider``). ``text``: the module's
    code; ``body``: the statements of ``ast``'s tree of it; ``parents``: id(node) ->
    parent node (``fixkit.parents``)."""
    nodes = list(nodes)
    if body is None or not nodes:
        return {}, nodes
    from scopelint.core.slicing import split_lines

    lines = _Lines(split_lines(text))
    tops = [s for s in body if lines.first_on_line(s)]
    if len(tops) != len(module.body):
        return {}, nodes
    top_index = {id(s): i for i, s in enumerate(module.body)}
    # the innermost statement of a block around each node, and the blocks around it
    by_statement: Dict[int, Tuple[cst.CSTNode, int, List[str], Dict[int, cst.CSTNode]]] = {}
    left: List[cst.CSTNode] = []
    for node in nodes:
        stmt: Optional[cst.CSTNode] = None
        indents: List[str] = []
        current, top = node, None
        while True:
            parent = parents.get(id(current))
            if parent is None:
                break
            if stmt is None and isinstance(current, cst.BaseStatement) and type(parent) in (cst.IndentedBlock, cst.Module):
                stmt = current
            if stmt is not None and type(parent) is cst.IndentedBlock:
                indents.append(module.default_indent if parent.indent is None else parent.indent)
            if parent is module:
                top = top_index.get(id(current))
                break
            current = parent
        if stmt is None or top is None:
            left.append(node)
            continue
        entry = by_statement.get(id(stmt))
        if entry is None:
            entry = by_statement[id(stmt)] = (stmt, top, indents[::-1], {})
        entry[3][id(node)] = node
    found: Dict[int, Range] = {}
    flat: Dict[int, Tuple[Dict[int, int], List[ast.stmt]]] = {}  # top -> (id(stmt) -> index, ast statements)
    for stmt, top, indents, wanted in by_statement.values():
        if top not in flat:
            cst_list: List[cst.CSTNode] = []
            _cst_statements(module.body[top], cst_list)
            ast_list: List[ast.stmt] = []
            lines.statements(tops[top], ast_list)
            flat[top] = ({id(s): i for i, s in enumerate(cst_list)}, ast_list) if len(cst_list) == len(ast_list) else ({}, [])
        index, ast_list = flat[top]
        i = index.get(id(stmt))
        got = None
        if i is not None and _same_kind(stmt, ast_list[i]):
            got = _one_statement(module, stmt, wanted, indents, _ast_start(ast_list[i]) - len(stmt.leading_lines), lines.lines)
        if got is None:
            left.extend(wanted.values())
        else:
            found.update(got)
    return found, left


def _one_statement(module: cst.Module, stmt: cst.CSTNode, wanted: Dict[int, cst.CSTNode], indents: List[str],
                   first: int, lines: List[str]) -> Optional[Dict[int, Range]]:
    """The ranges of ``wanted`` (nodes of ``stmt``) when ``stmt``'s code starts at line
    ``first`` (1-based) inside blocks indented by ``indents``; None unless that code is
    the text there."""
    if first < 1:
        return None
    state = _RangeState(module, wanted)
    state.left = -1  # (never stops early: the whole statement is compared with the text)
    state.line = first
    state.indent_tokens = list(indents)
    stmt._codegen(state)
    code = split_lines_of("".join(state.tokens))
    if lines[first - 1:first - 1 + len(code)] != code:
        return None
    out = {key: r for key, r in state.ranges.items() if key in wanted}
    return out if len(out) == len(wanted) else None


def split_lines_of(text: str) -> List[str]:
    from scopelint.core.slicing import split_lines

    return split_lines(text)
