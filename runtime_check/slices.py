"""The slice of a whole program that one finding needs (issue 47).

A real training script rarely runs as far as its flagged line in the verifier's sandbox:
it parses arguments it is not given, downloads or reads data that is not there, builds a
model from a checkpoint, sets up several GPUs, and only then calls the function that
holds the bug. When the program as written gives no verdict, the verifier runs the
*slice* instead: the module's definitions that the flagged function reaches (the
function, the functions and classes it uses, transitively, the imports and constant
assignments they read), with everything else at module level left out -- the script's
own statements, ``if __name__ == "__main__":`` and the definitions nothing there uses --
and then calls the function in a synthesized harness (``runtime_check.synth``: a small
model or the project's class, a real optimizer and loss, a loader of a few random
batches, hyper-parameters from their names), so its loops run a few steps.

A slice keeps the program's line numbers (what is left out becomes blank lines), so the
trace, the flagged lines and the fix's lines mean what they meant; each variant (as
written, fixed) is cut by the same names. What is left out is never guessed back: a
module-level name the kept code reads but the slice left out (``device =
torch.device(...)``, ``writer = SummaryWriter()``) is a hole the harness fills from its
uses, or the slice cannot be made and says why.

Pure analysis over ``ast``; nothing here runs code or imports a framework."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, Iterable, List, Optional, Set, Union

_FRAMEWORK_ROOTS = frozenset({"torch", "mxnet", "numpy", "__future__"})


@dataclass(frozen=True)
class Slice:
    function: str  # the module-level function the flagged lines are in (the harness calls it)
    keep: FrozenSet[str]  # the module-level names the slice keeps (definitions, imports, constants)
    left_out: int  # module-level statements left out of the program as written

    def describe(self) -> str:
        others = len(self.keep) - 1
        return (f"a slice: `{self.function}` alone, with the {others} other module-level "
                f"name{'s' if others != 1 else ''} it reaches; {self.left_out} module-level "
                f"statement{'s' if self.left_out != 1 else ''} left out")


def _parse(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _start(node: ast.stmt) -> int:
    decos = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decos])


def _inert(node: ast.stmt) -> bool:
    """A statement that binds names without running the program's code: an import, a
    constant assignment (no call in it), ``pass``, a docstring; a ``try``/``if`` made of
    such statements only (``try: import apex`` / ``except ImportError: apex = None``)."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        return node.value is None or not any(isinstance(n, (ast.Call, ast.Lambda, ast.Await)) for n in ast.walk(node.value))
    if isinstance(node, ast.Try):
        body = node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
        return all(_inert(s) for s in body)
    if isinstance(node, ast.If):
        return all(_inert(s) for s in node.body + node.orelse) and not any(
            isinstance(n, ast.Call) for n in ast.walk(node.test))
    return False


def _binds(node: ast.stmt) -> Set[str]:
    """The module-level names an inert statement (or a definition) binds."""
    out: Set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    for n in ast.walk(node):
        if isinstance(n, ast.alias):
            if n.name == "*":
                continue
            out.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
    return out


def _framework_import(node: ast.stmt) -> bool:
    """``import torch``, ``import numpy as np``, ``from mxnet import gluon``: kept whether
    used or not. A submodule (``from torch.utils.tensorboard import SummaryWriter``,
    which needs a package of its own) is kept only where the slice uses it."""
    if isinstance(node, ast.Import):
        return all(a.name in _FRAMEWORK_ROOTS for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and node.module in _FRAMEWORK_ROOTS
    return False


def _loads(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def slice_for(source: str, lines: Iterable[int]) -> Union[Slice, str]:
    """The slice for a finding at ``lines`` of ``source``, or why there is none."""
    tree = _parse(source)
    if tree is None:
        return "the program does not parse"
    lines = sorted(set(lines))
    if not lines:
        return "the finding has no line"
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)
               and _start(n) <= lines[0] and lines[-1] <= (n.end_lineno or n.lineno)), None)
    if fn is None:
        return "the flagged lines are not inside a module-level function"
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in tree.body):
        return "a star import defines names nobody can list"
    if _shared_lines(tree):
        return "two module-level statements share a line"
    keep = _closure(tree, fn)
    if len([n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn.name]) > 1:
        return f"`{fn.name}` is defined more than once"
    left_out = sum(1 for node in tree.body if not _kept(node, keep))
    if not left_out:
        return "the slice would be the whole program"
    return Slice(fn.name, frozenset(keep), left_out)


def _closure(tree: ast.Module, fn: ast.FunctionDef) -> Set[str]:
    """The module-level names ``fn`` reaches: ``fn``, and, transitively, the
    definitions and inert statements that bind a name a kept statement reads."""
    binders = {}  # name -> the statements that bind it at module level (definitions and inert statements)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or _inert(node):
            for name in _binds(node):
                binders.setdefault(name, []).append(node)
    keep: Set[str] = {fn.name}
    todo: List[ast.AST] = [fn]
    seen_nodes = {id(fn)}
    while todo:
        node = todo.pop()
        for name in _loads(node):
            for b in binders.get(name, []):
                keep.add(name)
                if id(b) not in seen_nodes:
                    seen_nodes.add(id(b))
                    todo.append(b)
    return keep


def _shared_lines(tree: ast.Module) -> bool:
    last = 0
    for node in tree.body:
        if _start(node) <= last:
            return True
        last = node.end_lineno or node.lineno
    return False


def _kept(node: ast.stmt, keep: FrozenSet[str]) -> bool:
    if isinstance(node, ast.ImportFrom) and node.module == "__future__":
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # (a docstring)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name in keep
    if _framework_import(node):
        return True
    return _inert(node) and bool(_binds(node) & keep)


def cut(text: str, s: Slice) -> Optional[str]:
    """``text`` (the program as written, or a fixed variant of it) cut to the slice
    ``s``: every module-level statement it does not keep becomes blank lines (what the
    function reaches in ``text`` is kept too: a fix may use an import the function as
    written did not). None where ``text`` does not parse, its statements share lines, or
    it no longer defines ``s.function`` once."""
    tree = _parse(text)
    if tree is None or _shared_lines(tree):
        return None
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == s.function]
    if len(fns) != 1:
        return None
    keep = frozenset(s.keep | _closure(tree, fns[0]))
    rows = text.splitlines(True)
    for node in tree.body:
        if _kept(node, keep):
            continue
        for i in range(_start(node) - 1, min(node.end_lineno or node.lineno, len(rows))):
            rows[i] = "\n"
    return "".join(rows)
