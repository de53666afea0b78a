"""Small syntactic helpers over LibCST statement trees (no flow, no names).

LibCST's node classes are ABCs: ``isinstance`` against one runs ``ABCMeta``'s check in
Python. Only the abstract ``Base*`` classes have subclasses, so the core tests a node's
kind as ``type(node) is cst.Name`` and an abstract one with ``is_subclass`` (cached):
~10% of the analysis' time.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

# Fields that only hold whitespace and punctuation: never walked.
_SKIPPED = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after",
            "header", "footer", "newline", "colon", "equal", "dot", "operator", "asynchronous")
_FIELDS: Dict[type, Tuple[str, ...]] = {}
_SUBCLASSES: Dict[Tuple[type, type], bool] = {}


def is_subclass(t: type, base: type) -> bool:
    """``issubclass(t, base)``, cached: LibCST's node classes are ABCs, whose checks
    are slow (so is ``isinstance`` against them)."""
    r = _SUBCLASSES.get((t, base))
    if r is None:
        r = _SUBCLASSES[t, base] = issubclass(t, base)
    return r


def _is_node(t: type) -> bool:
    r = _NODES[t] = issubclass(t, cst.CSTNode)
    return r


_NODES: Dict[type, bool] = {}  # (``is_subclass(t, cst.CSTNode)``, read inline in the hot loop)


def iter_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The child nodes that carry code, in source order (a list). Much cheaper than
    ``node.children`` or a ``CSTVisitor`` (which rebuild nodes as they go)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node) if not any(k in f.name for k in _SKIPPED))
        _FIELDS[type(node)] = names
    out: List[cst.CSTNode] = []
    known = _NODES.get
    for name in names:
        value = getattr(node, name)
        t = type(value)
        if t is list or t is tuple:
            out.extend(value)  # (LibCST's sequence fields hold nodes only)
        else:
            is_node = known(t)
            if is_node or (is_node is None and _is_node(t)):
                out.append(value)
    return out


def walk(node: cst.CSTNode, prune: Optional[Callable[[cst.CSTNode], bool]] = None) -> Iterator[cst.CSTNode]:
    """Pre-order walk; below a node for which ``prune`` is true nothing is visited
    (the node itself is)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if prune is not None and n is not node and prune(n):
            continue
        stack.extend(reversed(iter_children(n)))


_SCOPE_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def is_nested_scope(n: cst.CSTNode) -> bool:
    return type(n) in _SCOPE_TYPES


def statements(body) -> Sequence[cst.CSTNode]:
    """The statement list of a body, suite, ``else``/``finally`` clause or ``elif``."""
    if body is None:
        return ()
    if type(body) is cst.If:  # an ``elif``
        return [body]
    if isinstance(body, (list, tuple)):
        return body
    if type(body) is cst.SimpleStatementSuite:
        return [cst.SimpleStatementLine(body=body.body)]
    inner = getattr(body, "body", ())
    if isinstance(inner, cst.BaseSuite):
        return statements(inner)
    return inner


def child_blocks(stmt: cst.CSTNode):
    """The statement blocks nested directly in a compound statement."""
    for attr in ("body", "orelse", "finalbody"):
        child = getattr(stmt, attr, None)
        if child is None or isinstance(child, cst.BaseExpression):
            continue
        if type(child) is cst.If:
            yield [child]
        elif type(child) in (cst.Else, cst.Finally):
            yield statements(child)
        elif isinstance(child, cst.BaseSuite):
            yield statements(child)
    for handler in getattr(stmt, "handlers", ()):
        yield statements(handler.body)
    for case in getattr(stmt, "cases", ()):
        yield statements(case.body)


def finds(node: cst.CSTNode, pred: Callable[[cst.CSTNode], bool]) -> bool:
    """Some node in ``node`` (nested functions and classes excluded) satisfies ``pred``."""
    return any(pred(n) for n in walk(node, is_nested_scope))


def terminates(node: cst.CSTNode) -> bool:
    """``node`` may leave the function early (return, raise, yield)."""
    return finds(node, lambda n: type(n) in (cst.Return, cst.Raise, cst.Yield))


def block_path(body, target: cst.CSTNode) -> List[Tuple[Sequence[cst.CSTNode], int]]:
    """(block, index) pairs from ``body`` down to the statement holding ``target``."""
    return _block_path(body, target) or []


def _block_path(block, target) -> Optional[List[Tuple[Sequence[cst.CSTNode], int]]]:
    # (not a recursive closure: that is a reference cycle holding the tree)
    stmts = list(statements(block))
    for i, stmt in enumerate(stmts):
        if stmt is target or finds(stmt, lambda n: n is target):
            for child in child_blocks(stmt):
                deeper = _block_path(child, target)
                if deeper is not None:
                    return [(stmts, i)] + deeper
            return [(stmts, i)]
    return None


def runs_once(loop) -> bool:
    """``for _ in range(1)``, ``for x in [a]``, or a loop whose body (or the ``try`` in
    it) ends in ``break``: a retry loop (``while True: try: ...; break``)."""
    if ends_in_break(loop.body):
        return True
    if type(loop) is not cst.For:
        return False
    it = loop.iter
    if type(it) is cst.Call and _dotted_name(it.func) == "range" and len(it.args) == 1 and type(it.args[0].value) is cst.Integer:
        return it.args[0].value.evaluated_value <= 1
    return type(it) in (cst.List, cst.Tuple) and len(it.elements) <= 1


def is_main_guard(stmt: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` (either side)."""
    if type(stmt) is not cst.If or type(stmt.test) is not cst.Comparison or len(stmt.test.comparisons) != 1:
        return False
    sides = (stmt.test.left, stmt.test.comparisons[0].comparator)
    return any(type(s) is cst.Name and s.value == "__name__" for s in sides) and any(
        type(s) is cst.SimpleString and s.evaluated_value == "__main__" for s in sides)


def ends_in_break(block) -> bool:
    body = list(getattr(block, "body", ()))
    if not body:
        return False
    last = body[-1]
    if type(last) is cst.SimpleStatementLine:
        return any(type(small) is cst.Break for small in last.body)
    if type(last) in (cst.Try, cst.TryStar):
        return ends_in_break(last.body)
    return False


def _dotted_name(node) -> Optional[str]:
    return node.value if type(node) is cst.Name else None


# Parent tables of a few modules (``parents``), by id with the module kept to check it.
_PARENTS: Dict[int, Tuple[cst.Module, Dict[int, cst.CSTNode]]] = {}


def parents(module: cst.Module) -> Dict[int, cst.CSTNode]:
    """id(node) -> parent node, computed once per module (a few kept)."""
    hit = _PARENTS.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    table: Dict[int, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [module]
    pop, push, known, fields = stack.pop, stack.append, _NODES.get, _FIELDS.get
    while stack:  # (``iter_children`` inlined: one call and one list fewer per node of the file)
        node = pop()
        names = fields(type(node))
        if names is None:
            iter_children(node)  # (fills ``_FIELDS``)
            names = _FIELDS[type(node)]
        for name in names:  # (not ``node.children``: it rebuilds the tree)
            value = getattr(node, name)
            t = type(value)
            if t is list or t is tuple:
                for child in value:
                    table[id(child)] = node
                    push(child)
            else:
                is_node = known(t)
                if is_node or (is_node is None and _is_node(t)):
                    table[id(value)] = node
                    push(value)
    if len(_PARENTS) > 8:
        _PARENTS.clear()
    _PARENTS[id(module)] = (module, table)
    return table


def enclosing_if_tests(module: cst.Module, node: cst.CSTNode, stop: Optional[cst.CSTNode] = None) -> Iterator[cst.BaseExpression]:
    """The tests of the ``if`` statements whose branches hold ``node``, innermost first,
    up to the function around it (or ``stop``, a statement around it)."""
    table = parents(module)
    child, up = node, table.get(id(node))
    while up is not None and up is not stop and type(up) is not cst.FunctionDef:
        if type(up) is cst.If and child is not up.test:
            yield up.test
        child, up = up, table.get(id(up))


def spells_any(expr: cst.CSTNode, words) -> bool:
    """``expr`` names one of ``words``, as a name or as an attribute (``isnan``,
    ``torch.isnan``)."""
    return any((type(n) is cst.Name and n.value in words) or (type(n) is cst.Attribute and n.attr.value in words)
               for n in walk(expr))


def forget_parents(module: cst.Module) -> None:
    """Drop ``module``'s parent table (its file's findings are made)."""
    hit = _PARENTS.get(id(module))
    if hit is not None and hit[0] is module:
        del _PARENTS[id(module)]


def literal_bool(expr: Optional[cst.BaseExpression]) -> Optional[bool]:
    """``True``/``False`` (or ``1``/``0``) as written; None for anything else."""
    if type(expr) is cst.Name and expr.value in ("True", "False"):
        return expr.value == "True"
    if type(expr) is cst.Integer and expr.value in ("0", "1"):
        return expr.value == "1"
    return None

