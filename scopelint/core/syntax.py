"""Small syntactic helpers over LibCST statement trees (no flow, no names)."""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import libcst as cst


def statements(body) -> Sequence[cst.CSTNode]:
    """The statement list of a body, suite, ``else``/``finally`` clause or ``elif``."""
    if body is None:
        return ()
    if isinstance(body, cst.If):  # an ``elif``
        return [body]
    if isinstance(body, (list, tuple)):
        return body
    if isinstance(body, cst.SimpleStatementSuite):
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
        if isinstance(child, cst.If):
            yield [child]
        elif isinstance(child, (cst.Else, cst.Finally)):
            yield statements(child)
        elif isinstance(child, cst.BaseSuite):
            yield statements(child)
    for handler in getattr(stmt, "handlers", ()):
        yield statements(handler.body)
    for case in getattr(stmt, "cases", ()):
        yield statements(case.body)


def finds(node: cst.CSTNode, pred: Callable[[cst.CSTNode], bool]) -> bool:
    """Some node in ``node`` (nested functions excluded) satisfies ``pred``."""
    found = False

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            nonlocal found
            if found:
                return False
            if pred(n):
                found = True
                return False
            return not (isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and n is not node)

    node.visit(V())
    return found


def terminates(node: cst.CSTNode) -> bool:
    """``node`` may leave the function early (return, raise, yield)."""
    return finds(node, lambda n: isinstance(n, (cst.Return, cst.Raise, cst.Yield)))


def block_path(body, target: cst.CSTNode) -> List[Tuple[Sequence[cst.CSTNode], int]]:
    """(block, index) pairs from ``body`` down to the statement holding ``target``."""

    def search(block) -> Optional[List[Tuple[Sequence[cst.CSTNode], int]]]:
        stmts = list(statements(block))
        for i, stmt in enumerate(stmts):
            if stmt is target or finds(stmt, lambda n: n is target):
                for child in child_blocks(stmt):
                    deeper = search(child)
                    if deeper is not None:
                        return [(stmts, i)] + deeper
                return [(stmts, i)]
        return None

    return search(body) or []
