"""Where a few nodes of a LibCST module are, without LibCST's position metadata.

``PositionProvider`` generates the module's code and records a range for every node
on the way: ~10x the cost of generating the code alone (2 s for an 11,000-line file
here, more than parsing it). Findings need the ranges of a handful of nodes. This
generates the code with LibCST's own codegen and LibCST's own rules for ranges, but
counts lines only when a wanted node's subtree is entered, records ranges only inside
those subtrees, and stops once every wanted node has its range.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

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
