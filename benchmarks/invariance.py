#!/usr/bin/env python3
"""Refactoring invariance (issue 18): does the analysis follow real program structure?

Every fixture (``fixtures/SL*/bad_*.py`` and ``good_*.py``) is rewritten by small,
semantics-preserving refactorings; each variant must draw the findings its moved
``# expect:`` markers name (bad fixtures) or stay silent (good ones), and, run, must still
behave like its original.

    python benchmarks/invariance.py                          # static pass, table, diff against the baseline
    python benchmarks/invariance.py --update                 # rewrite benchmarks/invariance/baseline.json
    python benchmarks/invariance.py --run --sample 40        # also run a stratified sample (seed 18)
    python benchmarks/invariance.py --run                    # run every variant (slow: one process each)
    python benchmarks/invariance.py --write DIR              # write the variants to DIR (to read them)
    python benchmarks/invariance.py --show SL101/bad_mxnet_pause_slice/helper/0

The refactorings (each a named transformation with an applicability check; where it
does not apply cleanly the variant is not generated and is counted "not applicable"):

- ``helper``: the region's statements become a module-level function; the names it reads
  that are variables of the enclosing scope become parameters, the names it binds that
  are read afterwards are returned and re-bound at the call site;
- ``method``: the same, as a method of a class, called through an instance made just
  before (``obj = C(); a, b = obj.run(...)``);
- ``forward``: the same, as ``forward`` of an ``nn.Module`` (torch) / ``gluon.Block``
  (MXNet), called as ``net(...)``;
- ``trainer``: the loop around the region becomes ``fit`` of a ``Trainer`` class and its
  body ``train_epoch``, which ``fit`` calls once per iteration;
- ``closure``: the region becomes a nested function that reads the enclosing scope's
  names as a closure, passed to a runner (``_inv_run(step, ...)``);
- ``loss_module``: every loss assignment (``loss = criterion(model(x), y)``) computes its
  value in ``forward`` of a loss-module class, called as ``loss = loss_module(...)``;
- ``loss_list``: every backward call ``E.backward(...)`` becomes ``losses = [E]`` and a
  loop ``for l in losses: l.backward(...)``.

The region: for a bad fixture, the statements carrying ``# expect:`` markers (grouped by
the block they stand in; one variant per block, the smallest run of statements covering
the group); for a good one, the statements that touch the autograd machinery (backward,
``grad``, ``step``, ``zero_grad``, grad-mode scopes, ``+=``, ``append``, ``.data``, ...),
grouped the same way. Trailing comments move with their statements, so the expected
findings of a variant are read from its own ``# expect:`` markers.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
BASELINE = ROOT / "benchmarks" / "invariance" / "baseline.json"
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from fixtures_util import EXPECT, declared_effect, expected_findings, frameworks_of  # noqa: E402

REFACTORINGS = ["helper", "method", "forward", "trainer", "closure", "loss_module", "loss_list"]
PREFIX = "_inv_"
SEED = 18

# What makes a good fixture's statement part of a region: it touches the autograd
# machinery (the first line of a compound statement, a simple statement's whole text).
ANCHOR = re.compile(
    r"backward\(|grad\(|\.step\(|\+=|-=|\.append\(|no_grad|enable_grad|inference_mode|set_grad_enabled"
    r"|record\(|pause\(|set_recording|set_training|train_mode|predict_mode|\.data\b|requires_grad"
    r"|attach_grad|detach|\.eval\(\)|\.train\(\)|optim\.|Trainer\(")
LOSS_CALLEE = re.compile(r"loss|criterion|crit$|cross_entropy|nll|mse|bce|hinge", re.IGNORECASE)
BANNED_CALLS = {"locals", "vars", "exec", "eval", "super", "globals", "__class__", "dir"}


class NotApplicable(Exception):
    """The refactoring does not apply cleanly to this region (the reason)."""


# --- names: what a piece of code reads and binds ------------------------------------------------

def _target_names(t: cst.BaseExpression) -> List[str]:
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, (cst.Tuple, cst.List)):
        return [n for el in t.elements for n in _target_names(el.value)]
    if isinstance(t, cst.StarredElement):
        return _target_names(t.value)
    return []


def _comp_targets(node) -> Set[str]:
    names: Set[str] = set()
    f = node.for_in
    while f is not None:
        names.update(_target_names(f.target))
        f = f.inner_for_in
    return names


def _param_names(params: cst.Parameters) -> Set[str]:
    out = {p.name.value for p in (*params.params, *params.kwonly_params, *params.posonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.add(star.name.value)
    return out


class _Bindings(cst.CSTVisitor):
    """Names bound at one scope's level (nested functions, classes, lambdas and
    comprehensions are other scopes; their own name is bound here)."""

    def __init__(self):
        self.names: Dict[str, Set[str]] = defaultdict(set)

    def _bind(self, names: Iterable[str], kind: str):
        for n in names:
            self.names[n].add(kind)

    def visit_FunctionDef(self, node):
        self._bind([node.name.value], "def")
        return False

    def visit_ClassDef(self, node):
        self._bind([node.name.value], "class")
        return False

    def visit_Lambda(self, node):
        return False

    def _comp(self, node):
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comp

    def visit_AssignTarget(self, node):
        self._bind(_target_names(node.target), "assign")

    def visit_AnnAssign(self, node):
        self._bind(_target_names(node.target), "assign")

    def visit_AugAssign(self, node):
        self._bind(_target_names(node.target), "assign")

    def visit_For(self, node):
        self._bind(_target_names(node.target), "assign")

    def visit_WithItem(self, node):
        if node.asname is not None:
            self._bind(_target_names(node.asname.name), "assign")

    def visit_ExceptHandler(self, node):
        if node.name is not None:
            self._bind(_target_names(node.name.name), "assign")

    def visit_NamedExpr(self, node):
        self._bind(_target_names(node.target), "assign")

    def visit_Import(self, node):
        for alias in node.names:
            name = alias.asname.name.value if alias.asname else cst.Module([]).code_for_node(alias.name).split(".")[0]
            self._bind([name], "import")
        return False

    def visit_ImportFrom(self, node):
        if isinstance(node.names, cst.ImportStar):
            self._bind(["*"], "import")
        else:
            for alias in node.names:
                name = alias.asname.name.value if alias.asname else cst.Module([]).code_for_node(alias.name)
                self._bind([name], "import")
        return False

    def visit_Global(self, node):
        self._bind([n.name.value for n in node.names], "global")

    def visit_Nonlocal(self, node):
        self._bind([n.name.value for n in node.names], "nonlocal")

    def visit_Del(self, node):
        self._bind(_target_names(node.target), "del")


def bindings(nodes: Iterable[cst.CSTNode]) -> Dict[str, Set[str]]:
    v = _Bindings()
    for n in nodes:
        n.visit(v)
    return v.names


def _def_locals(node: cst.FunctionDef) -> Set[str]:
    b = bindings([node.body])
    return (_param_names(node.params) | set(b)) - {n for n, k in b.items() if k & {"global", "nonlocal"}}


class _Loads(cst.CSTVisitor):
    """Free names read in a piece of code. Lambdas, comprehensions and nested functions
    hide their own names; what is read inside a nested function or lambda (run later, so
    it sees later bindings) is also kept in ``nested``."""

    def __init__(self, skip: Set[int] = frozenset(), record=None):
        self.loads: Set[str] = set()
        self.nested: Set[str] = set()
        self.stack: List[Tuple[Set[str], bool]] = []  # (bound names, runs later)
        self.skip = skip
        self.record = record  # called with (Name node, read later) for each free read

    def on_visit(self, node):
        if id(node) in self.skip:
            return False
        return super().on_visit(node)

    def visit_Name(self, node):
        if any(node.value in b for b, _ in self.stack):
            return
        self.loads.add(node.value)
        later = any(later for _, later in self.stack)
        if later:
            self.nested.add(node.value)
        if self.record is not None:
            self.record(node, later)

    def _target(self, t):
        if isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                self._target(el.value)
        elif isinstance(t, cst.StarredElement):
            self._target(t.value)
        elif isinstance(t, (cst.Attribute, cst.Subscript)):
            t.visit(self)

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False

    def visit_Arg(self, node):
        node.value.visit(self)
        return False

    def visit_Param(self, node):
        if node.default is not None:
            node.default.visit(self)
        if node.annotation is not None:
            node.annotation.visit(self)
        return False

    def visit_AssignTarget(self, node):
        self._target(node.target)
        return False

    def visit_AugAssign(self, node):
        if isinstance(node.target, cst.Name):
            self.visit_Name(node.target)
        else:
            node.target.visit(self)
        node.value.visit(self)
        return False

    def visit_AnnAssign(self, node):
        self._target(node.target)
        node.annotation.visit(self)
        if node.value is not None:
            node.value.visit(self)
        return False

    def visit_For(self, node):
        self._target(node.target)
        node.iter.visit(self)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_CompFor(self, node):
        self._target(node.target)
        node.iter.visit(self)
        for i in node.ifs:
            i.visit(self)
        if node.inner_for_in is not None:
            node.inner_for_in.visit(self)
        return False

    def visit_WithItem(self, node):
        node.item.visit(self)
        if node.asname is not None:
            self._target(node.asname.name)
        return False

    def visit_ExceptHandler(self, node):
        if node.type is not None:
            node.type.visit(self)
        node.body.visit(self)
        return False

    def visit_NamedExpr(self, node):
        node.value.visit(self)
        return False

    def visit_Del(self, node):
        if not isinstance(node.target, cst.Name):
            self._target(node.target)
        return False

    def visit_Import(self, node):
        return False

    def visit_ImportFrom(self, node):
        return False

    def visit_Global(self, node):
        return False

    def visit_Nonlocal(self, node):
        return False

    def visit_FunctionDef(self, node):
        for d in node.decorators:
            d.visit(self)
        node.params.visit(self)
        if node.returns is not None:
            node.returns.visit(self)
        self.stack.append((_def_locals(node), True))
        node.body.visit(self)
        self.stack.pop()
        return False

    def visit_ClassDef(self, node):
        for d in node.decorators:
            d.visit(self)
        for a in (*node.bases, *node.keywords):
            a.visit(self)
        node.body.visit(self)  # class names do not hide anything from its methods: keep them all
        return False

    def visit_Lambda(self, node):
        node.params.visit(self)
        self.stack.append((_param_names(node.params), True))
        node.body.visit(self)
        self.stack.pop()
        return False

    def _comp(self, node):
        # the first iterable is evaluated at once, outside; the rest sees the targets (and,
        # in a generator expression, runs later)
        node.for_in.iter.visit(self)
        self.stack.append((_comp_targets(node), isinstance(node, cst.GeneratorExp)))
        for part in (getattr(node, "elt", None), getattr(node, "key", None), getattr(node, "value", None)):
            if part is not None:
                part.visit(self)
        f = node.for_in
        while f is not None:
            if f is not node.for_in:
                f.iter.visit(self)
            for i in f.ifs:
                i.visit(self)
            f = f.inner_for_in
        self.stack.pop()
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comp


def loads(nodes: Iterable[cst.CSTNode], skip: Set[int] = frozenset(), record=None) -> _Loads:
    v = _Loads(skip, record)
    for n in nodes:
        n.visit(v)
    return v


class _Banned(cst.CSTVisitor):
    """What no extracted region may hold (outside nested functions and lambdas)."""

    def __init__(self):
        self.reasons: Set[str] = set()
        self.loop_depth = 0

    def visit_Return(self, node):
        self.reasons.add("return in region")

    def visit_Yield(self, node):
        self.reasons.add("yield in region")

    def visit_Await(self, node):
        self.reasons.add("await in region")

    def visit_Global(self, node):
        self.reasons.add("global/nonlocal in region")

    visit_Nonlocal = visit_Global

    def visit_Import(self, node):
        self.reasons.add("import in region")

    visit_ImportFrom = visit_Import

    def visit_FunctionDef(self, node):
        self.reasons.add("def/class in region")
        return False

    visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return False

    def visit_NamedExpr(self, node):
        self.reasons.add("walrus in region")

    def visit_Del(self, node):
        if _target_names(node.target):
            self.reasons.add("del of a name in region")

    def visit_Match(self, node):
        self.reasons.add("match in region")

    def visit_For(self, node):
        if node.asynchronous is not None:
            self.reasons.add("async in region")
        node.target.visit(self)
        node.iter.visit(self)
        self.loop_depth += 1
        node.body.visit(self)
        self.loop_depth -= 1
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_While(self, node):
        node.test.visit(self)
        self.loop_depth += 1
        node.body.visit(self)
        self.loop_depth -= 1
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_With(self, node):
        if node.asynchronous is not None:
            self.reasons.add("async in region")

    def visit_Break(self, node):
        if not self.loop_depth:
            self.reasons.add("break/continue in region")

    visit_Continue = visit_Break

    def visit_Name(self, node):
        if node.value in BANNED_CALLS:
            self.reasons.add(f"`{node.value}` in region")
        elif node.value.startswith("__") and not node.value.endswith("__"):
            self.reasons.add("private (mangled) name in region")

    def visit_Attribute(self, node):
        node.value.visit(self)
        if node.attr.value.startswith("__") and not node.attr.value.endswith("__"):
            self.reasons.add("private (mangled) name in region")
        return False


def banned(nodes: Sequence[cst.CSTNode]) -> Set[str]:
    v = _Banned()
    for n in nodes:
        n.visit(v)
    return v.reasons


def _nonempty(it: cst.BaseExpression, known: Dict[str, cst.BaseExpression], depth: int = 0) -> bool:
    """An iterable that is not empty: ``range(<literal>)``, a non-empty literal list or
    tuple, ``[...] * <literal>``, a list comprehension over one of those, ``enumerate``,
    ``zip``, ``list`` or ``tqdm`` of them, or a module name bound once to one of them."""
    if depth > 4:
        return False
    if isinstance(it, (cst.List, cst.Tuple)):
        return bool(it.elements) and not any(isinstance(e, cst.StarredElement) for e in it.elements)
    if isinstance(it, cst.ListComp):
        f = it.for_in
        return f.inner_for_in is None and not f.ifs and _nonempty(f.iter, known, depth + 1)
    if isinstance(it, cst.BinaryOperation) and isinstance(it.operator, cst.Multiply):
        return isinstance(it.right, cst.Integer) and int(it.right.value) > 0 and _nonempty(it.left, known, depth + 1)
    if isinstance(it, cst.Name):
        return it.value in known and _nonempty(known[it.value], known, depth + 1)
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name):
        name = it.func.value
        if name == "range":
            try:
                nums = [int(cst.Module([]).code_for_node(a.value)) for a in it.args]
            except ValueError:
                return False
            return 1 <= len(nums) <= 3 and len(range(*nums)) > 0
        positional = [a.value for a in it.args if a.keyword is None and not a.star]
        if name in ("enumerate", "list", "tqdm") and positional:
            return _nonempty(positional[0], known, depth + 1)
        if name == "zip" and positional:
            return all(_nonempty(a, known, depth + 1) for a in positional)
    return False


class Flow:
    """One pass over a region in execution order: the names it reads before binding them
    (``needs``), every name it binds (``stores``), and those bound on every path through it
    (what ``walk`` returns)."""

    def __init__(self, known: Optional[Dict[str, cst.BaseExpression]] = None):
        self.known = known or {}  # module names bound once: a loop over one may be known to run
        self.needs: Set[str] = set()
        self.stores: Set[str] = set()
        self.reads: Set[str] = set()
        self.late: Set[str] = set()  # read inside a lambda or generator expression: when it runs
        self.order: List[str] = []

    def load(self, node: Optional[cst.CSTNode], assigned: Set[str]):
        if node is None:
            return
        found = loads([node])
        self.late |= found.nested
        for n in found.loads:
            self.reads.add(n)
            if n not in assigned:
                self.needs.add(n)

    def store(self, t: cst.BaseExpression, assigned: Set[str]):
        for n in _target_names(t):
            assigned.add(n)
            if n not in self.stores:
                self.stores.add(n)
                self.order.append(n)
        if isinstance(t, (cst.Attribute, cst.Subscript)):
            self.load(t, assigned)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                if not isinstance(el.value, cst.Name):
                    self.store(el.value, assigned)
        elif isinstance(t, cst.StarredElement) and not isinstance(t.value, cst.Name):
            self.store(t.value, assigned)

    def walk(self, stmts: Sequence[cst.BaseStatement], assigned: Set[str]) -> Set[str]:
        assigned = set(assigned)
        for s in stmts:
            assigned = self.stmt(s, assigned)
        return assigned

    def _block(self, body, assigned):
        if isinstance(body, cst.IndentedBlock):
            return self.walk(body.body, assigned)
        if isinstance(body, cst.SimpleStatementSuite):
            a = set(assigned)
            for small in body.body:
                self.small(small, a)
            return a
        return set(assigned)

    def stmt(self, s, assigned: Set[str]) -> Set[str]:
        if isinstance(s, cst.SimpleStatementLine):
            a = set(assigned)
            for small in s.body:
                self.small(small, a)
            return a
        if isinstance(s, cst.If):
            self.load(s.test, assigned)
            a1 = self._block(s.body, assigned)
            if s.orelse is None:
                return set(assigned)
            a2 = self.stmt(s.orelse, assigned) if isinstance(s.orelse, cst.If) else self._block(s.orelse.body, assigned)
            return a1 & a2
        if isinstance(s, cst.For):
            self.load(s.iter, assigned)
            a = set(assigned)
            self.store(s.target, a)
            a = self._block(s.body, a)
            # the body again: what it reads before binding, bound by the previous iteration
            if s.orelse is not None:
                self._block(s.orelse.body, assigned)
            return a if _nonempty(s.iter, self.known) and s.orelse is None else set(assigned)
        if isinstance(s, cst.While):
            self.load(s.test, assigned)
            self._block(s.body, assigned)
            if s.orelse is not None:
                self._block(s.orelse.body, assigned)
            return set(assigned)
        if isinstance(s, cst.With):
            a = set(assigned)
            for item in s.items:
                self.load(item.item, a)
                if item.asname is not None:
                    self.store(item.asname.name, a)
            return self._block(s.body, a)
        if isinstance(s, cst.Try):
            a_body = self._block(s.body, assigned)
            for h in s.handlers:
                self.load(h.type, assigned)
                a = set(assigned)
                if h.name is not None:
                    self.store(h.name.name, a)
                self._block(h.body, a)
            if s.orelse is not None:
                a_body = self._block(s.orelse.body, a_body)
            after = set(a_body) if not s.handlers else set(assigned)
            if s.finalbody is not None:
                after = self._block(s.finalbody.body, after)
            return after
        raise NotApplicable(f"{type(s).__name__} in region")

    def small(self, s, a: Set[str]):
        if isinstance(s, cst.Expr):
            self.load(s.value, a)
        elif isinstance(s, cst.Assign):
            self.load(s.value, a)
            for t in s.targets:
                self.store(t.target, a)
        elif isinstance(s, cst.AugAssign):
            self.load(s.target, a)
            self.load(s.value, a)
            self.store(s.target, a)
        elif isinstance(s, cst.AnnAssign):
            self.load(s.annotation, a)
            if s.value is not None:
                self.load(s.value, a)
                self.store(s.target, a)
        elif isinstance(s, (cst.Raise,)):
            self.load(s.exc, a)
            self.load(s.cause, a)
        elif isinstance(s, cst.Assert):
            self.load(s.test, a)
            self.load(s.msg, a)
        elif isinstance(s, cst.Del):
            self.load(s.target, a)
        elif isinstance(s, (cst.Pass, cst.Break, cst.Continue)):
            pass
        else:
            raise NotApplicable(f"{type(s).__name__} in region")


# --- the fixture's structure: blocks, scopes, statements ----------------------------------------

@dataclass
class Scope:
    node: cst.CSTNode
    kind: str  # module | function | class
    parent: Optional["Scope"]
    names: Dict[str, Set[str]] = field(default_factory=dict)  # bound here: name -> kinds
    lines: Dict[str, List[int]] = field(default_factory=dict)  # name -> lines of its bindings
    params: Set[str] = field(default_factory=set)

    def body(self) -> List[cst.CSTNode]:
        return list(self.node.body) if self.kind == "module" else [self.node.body]

    def local(self, name: str) -> bool:
        kinds = self.names.get(name, set())
        return name in self.params or bool(kinds - {"global", "nonlocal"}) and not kinds & {"global", "nonlocal"}


@dataclass
class Block:
    owner: cst.CSTNode  # cst.Module or cst.IndentedBlock
    stmts: List[cst.BaseStatement]
    scope: Scope
    loops: List[cst.CSTNode]  # For/While statements between the block and its scope, outermost first
    top: int  # index in module.body of the top-level statement holding the block (-1: the module itself)


@dataclass
class Region:
    block: Block
    start: int
    end: int

    @property
    def stmts(self) -> List[cst.BaseStatement]:
        return self.block.stmts[self.start:self.end]


def _own_bindings(s: cst.BaseStatement) -> Set[str]:
    """The names a statement binds itself (a compound statement: in its header and in
    one-line bodies; its blocks' statements are walked on their own)."""
    if isinstance(s, cst.SimpleStatementLine):
        return set(bindings([s]))
    if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
        return {s.name.value}
    out: Set[str] = set()
    if isinstance(s, cst.For):
        out.update(_target_names(s.target))
    elif isinstance(s, cst.With):
        for item in s.items:
            if item.asname is not None:
                out.update(_target_names(item.asname.name))
    elif isinstance(s, cst.Try):
        for h in s.handlers:
            if h.name is not None:
                out.update(_target_names(h.name.name))
    for part in (getattr(s, "body", None), getattr(getattr(s, "orelse", None), "body", None)):
        if isinstance(part, cst.SimpleStatementSuite):
            out.update(bindings([part]))
    return out


class Program:
    """A fixture parsed, with every block of statements, each statement's place and lines."""

    def __init__(self, text: str):
        self.text = text
        self.wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self.pos = self.wrapper.resolve(PositionProvider)
        self.parent: Dict[int, cst.CSTNode] = {}  # statements and the nodes between them and their blocks
        self.blocks: List[Block] = []
        self.where: Dict[int, Tuple[Block, int]] = {}
        self.scopes: List[Scope] = []
        self.extractions: Dict[tuple, object] = {}
        self.scope_reads: Dict[int, List[Tuple[str, int, bool]]] = {}
        root = Scope(self.module, "module", None)
        self._scope(root, self.module.body)
        self._walk(self.module, list(self.module.body), root, [], -1)
        # module names bound once, by a plain assignment at module level
        self.known: Dict[str, cst.BaseExpression] = {}
        for st in self.module.body:
            if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign):
                a = st.body[0]
                if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                    name = a.targets[0].target.value
                    if root.names.get(name) == {"assign"} and len(root.lines.get(name, ())) == 1:
                        self.known[name] = a.value

    def lines(self, node) -> Tuple[int, int]:
        p = self.pos[node]
        return p.start.line, p.end.line

    def _scope(self, scope: Scope, body):
        self.scopes.append(scope)
        scope.names = dict(bindings(body))
        if scope.kind == "function":
            scope.params = _param_names(scope.node.params)

    def _walk(self, owner, stmts, scope, loops, top):
        block = Block(owner, stmts, scope, loops, top)
        self.blocks.append(block)
        for i, s in enumerate(stmts):
            self.where[id(s)] = (block, i)
            self.parent[id(s)] = owner
            t = i if top < 0 else top
            line = self.lines(s)[0]
            for name in _own_bindings(s):
                scope.lines.setdefault(name, []).append(line)
            if isinstance(s, cst.FunctionDef):
                inner = Scope(s, "function", scope)
                self._scope(inner, [s.body])
                for p in inner.params:
                    inner.lines.setdefault(p, []).append(line)
                self._children(s, inner, [], t)
            elif isinstance(s, cst.ClassDef):
                inner = Scope(s, "class", scope)
                self._scope(inner, [s.body])
                self._children(s, inner, [], t)
            elif not isinstance(s, cst.SimpleStatementLine):
                is_loop = isinstance(s, (cst.For, cst.While))
                self._children(s, scope, loops + [s] if is_loop else loops, t, s if is_loop else None)

    def _children(self, s, scope, loops, top, loop_owner=None):
        def blocks_of(node, parent):
            self.parent[id(node)] = parent
            if isinstance(node, cst.IndentedBlock):
                yield node
            elif isinstance(node, (cst.Else, cst.Finally, cst.ExceptHandler)):
                yield from blocks_of(node.body, node)
            elif isinstance(node, cst.If):
                yield from blocks_of(node.body, node)
                if node.orelse is not None:
                    yield from blocks_of(node.orelse, node)

        def loop_blocks(node):
            # the loop's own body runs in the loop; its ``else`` does not
            return {id(node.body)} if isinstance(node, (cst.For, cst.While)) else set()

        in_loop = loop_blocks(s)
        parts: List[cst.CSTNode] = [s.body]
        for attr in ("orelse", "finalbody"):
            if getattr(s, attr, None) is not None:
                parts.append(getattr(s, attr))
        parts.extend(getattr(s, "handlers", ()))
        for part in parts:
            for blk in blocks_of(part, s):
                lp = loops if (loop_owner is None or id(blk) in in_loop) else loops[:-1]
                self._walk(blk, list(blk.body), scope, lp, top)

    def reads_outside(self, region: Region) -> "_Loads":
        """The free reads of the region's scope outside the region (``loads``; ``nested``:
        those inside nested functions and lambdas)."""
        scope = region.block.scope
        if id(scope) not in self.scope_reads:
            rows: List[Tuple[str, int, bool]] = []
            loads(scope.body(), record=lambda node, later: rows.append((node.value, self.pos[node].start.line, later)))
            self.scope_reads[id(scope)] = rows
        first, last = self.lines(region.stmts[0])[0], self.lines(region.stmts[-1])[1]
        out = _Loads()
        for name, line, later in self.scope_reads[id(scope)]:
            if not first <= line <= last:
                out.loads.add(name)
                if later:
                    out.nested.add(name)
        return out

    def replace(self, old: cst.CSTNode, new: cst.CSTNode) -> cst.Module:
        """The module with ``old`` replaced by ``new`` (only its ancestors rebuilt)."""
        while old is not self.module:
            parent = self.parent[id(old)]
            changes = {}
            for f in dataclasses.fields(parent):
                value = getattr(parent, f.name)
                if value is old:
                    changes[f.name] = new
                elif isinstance(value, (tuple, list)) and any(x is old for x in value):
                    changes[f.name] = type(value)(new if x is old else x for x in value)
            assert changes, (type(parent).__name__, type(old).__name__)
            old, new = parent, parent.with_changes(**changes)
        return new

    def statement_at(self, line: int) -> Optional[cst.BaseStatement]:
        best, best_span = None, None
        for block in self.blocks:
            for s in block.stmts:
                a, b = self.lines(s)
                if a <= line <= b and (best_span is None or b - a < best_span):
                    best, best_span = s, b - a
        return best

    def top_index(self, region: Region) -> int:
        return region.start if region.block.top < 0 else region.block.top


def regions_of(program: Program, lines: Iterable[int]) -> List[Region]:
    """The statements at ``lines``, grouped by the block they stand in: one region per
    block, the smallest run of statements covering its group (in the file's order)."""
    groups: Dict[int, Tuple[Block, Set[int]]] = {}
    for line in sorted(set(lines)):
        s = program.statement_at(line)
        if s is None:
            continue
        block, i = program.where[id(s)]
        groups.setdefault(id(block), (block, set()))[1].add(i)
    out = [Region(block, min(idx), max(idx) + 1) for block, idx in groups.values()]
    return sorted(out, key=lambda r: program.lines(r.stmts[0])[0])


def anchor_lines(program: Program) -> List[int]:
    lines = program.text.splitlines()
    out = []
    for block in program.blocks:
        for s in block.stmts:
            a, b = program.lines(s)
            own = lines[a - 1:b] if isinstance(s, cst.SimpleStatementLine) else lines[a - 1:a]
            code = "\n".join(l.split("#", 1)[0] for l in own)
            if ANCHOR.search(code):
                out.append(a)
    return out


# --- extraction: what the moved code reads and hands back ---------------------------------------

@dataclass
class Extraction:
    params: List[str]
    outputs: List[str]
    stmts: List[cst.BaseStatement]


def _frameworks(text: str) -> Set[str]:
    found = set()
    if re.search(r"^\s*(import|from)\s+torch\b", text, re.MULTILINE):
        found.add("torch")
    if re.search(r"^\s*(import|from)\s+mxnet\b", text, re.MULTILINE):
        found.add("mxnet")
    return found


def _bound_before(program: Program, region: "Region", name: str) -> bool:
    """Bound in the scope before the region's first line, or (a later iteration sees
    it) by a statement of an enclosing loop outside the region."""
    scope, loops = region.block.scope, region.block.loops
    if scope.kind == "function" and name in scope.params:
        return True
    first, last = program.lines(region.stmts[0])[0], program.lines(region.stmts[-1])[1]
    lines = scope.lines.get(name, ())
    if any(l < first for l in lines):
        return True
    if loops:
        start, end = program.lines(loops[0])
        return any(start <= l <= end and not first <= l <= last for l in lines)
    return False


def _global_reads(program: Program) -> Set[str]:
    """Names any function declares ``global``."""
    declared = set()
    for scope in program.scopes:
        declared |= {n for n, k in scope.names.items() if "global" in k}
    return declared


def _analyse(program: Program, region: Region, stmts: Optional[Sequence[cst.BaseStatement]]):
    """(flow, names bound on every path, outputs) of ``region`` (or ``stmts`` standing where
    the region stands), cached; raises NotApplicable with the reason."""
    key = (id(region.block), region.start, region.end, None if stmts is None else tuple(map(id, stmts)))
    if key not in program.extractions:
        try:
            program.extractions[key] = _analyse_now(program, region, stmts)
        except NotApplicable as e:
            program.extractions[key] = e
    found = program.extractions[key]
    if isinstance(found, NotApplicable):
        raise found
    return found


def _analyse_now(program: Program, region: Region, stmts: Optional[Sequence[cst.BaseStatement]]):
    block = region.block
    scope = block.scope
    stmts = list(stmts if stmts is not None else region.stmts)
    if scope.kind == "class":
        raise NotApplicable("region in a class body")
    reasons = banned(stmts)
    if reasons:
        raise NotApplicable(sorted(reasons)[0])
    flow = Flow(program.known)
    definite = flow.walk(stmts, set())
    outside = program.reads_outside(region)
    live = set(outside.loads)
    if block.loops:
        live |= flow.needs  # read before bound: what the previous iteration left
    outputs = [n for n in flow.order if n in live]
    declared_global = _global_reads(program)
    touched = flow.reads | flow.stores
    if touched & declared_global:
        raise NotApplicable("a name some function declares global")
    if scope.kind == "function":
        kinds = scope.names
        if any(kinds.get(n, set()) & {"global", "nonlocal"} for n in touched):
            raise NotApplicable("a global/nonlocal name of the enclosing function")
        if any("import" in kinds.get(n, set()) for n in flow.needs):
            raise NotApplicable("reads a name the enclosing function imports")
        if flow.stores & outside.nested:
            raise NotApplicable("binds a name a nested function of the scope reads")
    elif flow.stores & outside.nested:
        raise NotApplicable("binds a global some function reads")
    return flow, definite, outputs


def extract(program: Program, region: Region, stmts: Optional[Sequence[cst.BaseStatement]] = None,
            closure: bool = False) -> Extraction:
    """Parameters and results for moving ``region`` (or ``stmts`` standing where the region
    stands) out of its scope: the names it reads that are variables of the scope become
    parameters (with ``closure``, only those it also binds: the rest it reads as a
    closure), the names it binds that are read afterwards (or, in a loop, again) are
    returned. Raises NotApplicable with the reason."""
    flow, definite, outputs = _analyse(program, region, stmts)
    block = region.block
    scope = block.scope
    stmts = list(stmts if stmts is not None else region.stmts)

    def variable(n: str) -> bool:
        """A name the moved code must be handed (not reached as a global or builtin)."""
        if scope.kind == "function":
            if scope.local(n):
                return True
            s = scope.parent
            while s is not None:
                if s.kind == "function" and s.local(n):
                    return True
                s = s.parent
            return False
        kinds = scope.names.get(n, set())
        return bool(kinds) and kinds <= {"assign", "del"}

    if closure:
        params = [n for n in sorted(flow.needs) if n in flow.stores]
    else:
        params = [n for n in sorted(flow.needs) if variable(n) or n in flow.stores]
        # a lambda or generator expression reads its names when it runs: handed over, it
        # would keep the value of the call
        late = [n for n in params if n in flow.late]
        if late and scope.kind == "module" and not set(late) & flow.stores:
            params = [n for n in params if n not in late]
        elif late:
            raise NotApplicable("a lambda in the region reads a variable of the scope")
    for n in outputs:
        if n not in definite and n not in params:
            params.append(n)
    for n in params:
        if not _bound_before(program, region, n):
            raise NotApplicable("hands over a name that may be unbound")
    return Extraction(params, outputs, stmts)


# --- building the variants ----------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _stmt(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


def _call_site(call: str, outputs: Sequence[str]) -> cst.BaseStatement:
    if not outputs:
        return _stmt(f"{call}\n")
    return _stmt(f"{', '.join(outputs)} = {call}\n")


def _return(outputs: Sequence[str]) -> List[cst.BaseStatement]:
    return [_stmt(f"return {', '.join(outputs)}\n")] if outputs else []


def _def(name: str, params: Sequence[str], body: Sequence[cst.BaseStatement]) -> cst.FunctionDef:
    node = _stmt(f"def {name}({', '.join(params)}):\n    pass\n")
    return node.with_changes(body=node.body.with_changes(body=list(body)))


def _class(name: str, base: str, methods: Sequence[cst.FunctionDef]) -> cst.ClassDef:
    node = _stmt(f"class {name}{'(' + base + ')' if base else ''}:\n    pass\n")
    spaced = [m.with_changes(leading_lines=[cst.EmptyLine()]) if i else m for i, m in enumerate(methods)]
    return node.with_changes(body=node.body.with_changes(body=spaced))


def _spaced(stmts: Sequence[cst.BaseStatement]) -> List[cst.BaseStatement]:
    return [s.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]) for s in stmts]


def _base_class(program: Program) -> Tuple[cst.BaseStatement, str]:
    fws = _frameworks(program.text)
    if "torch" in fws:
        return _stmt(f"import torch.nn as {PREFIX}nn\n"), f"{PREFIX}nn.Module"
    if "mxnet" in fws:
        return _stmt(f"from mxnet import gluon as {PREFIX}gluon\n"), f"{PREFIX}gluon.Block"
    raise NotApplicable("no framework imported")


class _Replace(cst.CSTTransformer):
    """Replace statements (by identity) with lists of statements; replace blocks' bodies."""

    def __init__(self, stmts: Dict[int, List[cst.BaseStatement]], owners: Dict[int, List[cst.BaseStatement]]):
        self.stmts = stmts
        self.owners = owners

    def on_leave(self, original, updated):
        if id(original) in self.stmts:
            new = self.stmts[id(original)]
            return cst.FlattenSentinel(new) if new else cst.RemovalSentinel.REMOVE
        if id(original) in self.owners and isinstance(updated, cst.IndentedBlock):
            return updated.with_changes(body=self.owners[id(original)])
        return updated


def _rewrite_region(program: Program, region: Region, replacement: List[cst.BaseStatement],
                    module_defs: List[cst.BaseStatement]) -> str:
    """The module with ``region`` replaced and ``module_defs`` placed before the top-level
    statement that holds it."""
    block = region.block
    new_body = list(block.stmts[:region.start]) + replacement + list(block.stmts[region.end:])
    top = program.top_index(region)
    module = program.module
    if block.owner is not module:
        new_body = list(program.replace(block.owner, block.owner.with_changes(body=new_body)).body)
    if module_defs and top < len(new_body):
        new_body[top] = _after_defs(new_body[top])
    return module.with_changes(body=new_body[:top] + _spaced(module_defs) + new_body[top:]).code


def _after_defs(s: cst.BaseStatement) -> cst.BaseStatement:
    """Two blank lines between inserted definitions and the statement after them."""
    lines = list(s.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return s.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *lines])


class _Rename(cst.CSTTransformer):
    """Rename variables (not attribute names or keywords)."""

    def __init__(self, mapping: Dict[str, str]):
        self.mapping = mapping

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.mapping[updated.value]) if updated.value in self.mapping else updated

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def _rename(stmts: Sequence[cst.BaseStatement], mapping: Dict[str, str]) -> List[cst.BaseStatement]:
    if not mapping:
        return list(stmts)
    return [s.visit(_Rename(mapping)) for s in stmts]


def _as_method(params: Sequence[str], stmts: Sequence[cst.BaseStatement]):
    """A method's parameters and body for code that reads ``params``: its instance is
    ``self``, so the enclosing method's own ``self`` is handed over as ``outer``."""
    if "self" not in params:
        return ["self", *params], list(stmts)
    return ["self", *("outer" if p == "self" else p for p in params)], _rename(stmts, {"self": "outer"})


def refactor_region(program: Program, region: Region, kind: str, n: int) -> str:
    """One generic refactoring of ``region`` (``n`` numbers the generated names)."""
    if kind == "trainer":
        return _trainer(program, region, n)
    ex = extract(program, region, closure=kind == "closure")
    args = ", ".join(ex.params)
    body = list(ex.stmts) + _return(ex.outputs)
    if kind == "helper":
        name = f"{PREFIX}helper{n}"
        return _rewrite_region(program, region, [_call_site(f"{name}({args})", ex.outputs)], [_def(name, ex.params, body)])
    if kind == "method":
        cls, obj = f"InvSteps{n}", f"{PREFIX}obj{n}"
        method = _def("run", *_as_method(ex.params, body))
        site = [_stmt(f"{obj} = {cls}()\n"), _call_site(f"{obj}.run({args})", ex.outputs)]
        return _rewrite_region(program, region, site, [_class(cls, "", [method])])
    if kind == "forward":
        imp, base = _base_class(program)
        cls, net = f"InvStep{n}", f"{PREFIX}net{n}"
        method = _def("forward", *_as_method(ex.params, body))
        site = [_stmt(f"{net} = {cls}()\n"), _call_site(f"{net}({args})", ex.outputs)]
        return _rewrite_region(program, region, site, [imp, _class(cls, base, [method])])
    if kind == "closure":
        fn, runner = f"{PREFIX}step{n}", f"{PREFIX}run"
        run_def = _stmt(f"def {runner}(fn, *args):\n    return fn(*args)\n")
        site = [_def(fn, ex.params, body), _call_site(f"{runner}({', '.join([fn, *ex.params])})", ex.outputs)]
        return _rewrite_region(program, region, site, [run_def])
    raise ValueError(kind)


def _trainer(program: Program, region: Region, n: int) -> str:
    """The loop around the region becomes ``Trainer.fit``; its body ``train_epoch``."""
    block = region.block
    if region.end - region.start == 1 and isinstance(region.stmts[0], (cst.For, cst.While)):
        loop = region.stmts[0]
    elif block.loops:
        loop = block.loops[-1]
    else:
        return _trainer_once(program, region, n)
    if not isinstance(loop.body, cst.IndentedBlock):
        raise NotApplicable("one-line loop")
    if loop.orelse is not None:
        raise NotApplicable("loop with else")
    if getattr(loop, "asynchronous", None) is not None:
        raise NotApplicable("async loop")
    outer_block, i = program.where[id(loop)]
    body_block, _ = program.where[id(loop.body.body[0])]
    body_region = Region(body_block, 0, len(body_block.stmts))
    inner = extract(program, body_region)
    cls, obj, me = f"InvTrainer{n}", f"{PREFIX}trainer{n}", f"{PREFIX}me"
    call = _call_site(f"{me}.train_epoch({', '.join(inner.params)})", inner.outputs)
    new_loop = loop.with_changes(body=loop.body.with_changes(body=[call]))
    loop_region = Region(outer_block, i, i + 1)
    outer = extract(program, loop_region, stmts=[new_loop])
    # in the class, ``self`` is the trainer: the enclosing method's ``self`` is ``outer``
    fit_params, fit_body = _as_method(outer.params, [new_loop] + _return(outer.outputs))
    fit = _def("fit", fit_params, _rename(fit_body, {me: "self"}))
    epoch = _def("train_epoch", *_as_method(inner.params, list(inner.stmts) + _return(inner.outputs)))
    site = [_stmt(f"{obj} = {cls}()\n"), _call_site(f"{obj}.fit({', '.join(outer.params)})", outer.outputs)]
    return _rewrite_region(program, loop_region, site, [_class(cls, "", [fit, epoch])])


def _trainer_once(program: Program, region: Region, n: int) -> str:
    """No loop around the region: ``fit`` calls ``train_epoch``, which holds it, once."""
    ex = extract(program, region)
    cls, obj = f"InvTrainer{n}", f"{PREFIX}trainer{n}"
    params, body = _as_method(ex.params, list(ex.stmts) + _return(ex.outputs))
    inner = ", ".join(params[1:])
    call = f"self.train_epoch({inner})"
    fit = _def("fit", params, [_stmt(f"return {call}\n" if ex.outputs else f"{call}\n")])
    epoch = _def("train_epoch", params, body)
    site = [_stmt(f"{obj} = {cls}()\n"), _call_site(f"{obj}.fit({', '.join(ex.params)})", ex.outputs)]
    return _rewrite_region(program, region, site, [_class(cls, "", [fit, epoch])])


# fixture-wide refactorings ------------------------------------------------------------------------

def _callee_name(call: cst.Call) -> str:
    f = call.func
    if isinstance(f, cst.Name):
        return f.value
    if isinstance(f, cst.Attribute):
        return f.attr.value
    return ""


def _loss_site(s: cst.BaseStatement) -> Optional[cst.Assign]:
    if not isinstance(s, cst.SimpleStatementLine) or len(s.body) != 1 or not isinstance(s.body[0], cst.Assign):
        return None
    a = s.body[0]
    if len(a.targets) != 1 or not isinstance(a.targets[0].target, cst.Name):
        return None
    value = a.value
    calls = []

    class C(cst.CSTVisitor):
        def visit_Call(self, node):
            calls.append(node)

    value.visit(C())
    if not calls:
        return None
    top = value
    while isinstance(top, cst.Call) and isinstance(top.func, cst.Attribute) and top.func.attr.value in ("mean", "sum"):
        top = top.func.value
    if isinstance(top, cst.Call):
        name = _callee_name(top)
        if name[:1].isupper():
            return None  # a loss object made, not a loss computed
        if LOSS_CALLEE.search(name):
            return a
    if "loss" in a.targets[0].target.value.lower():
        if cst.Module([]).code_for_node(value).rstrip().endswith((".item()", ".asscalar()")):
            return None
        return a
    return None


def loss_module(program: Program) -> str:
    """Every loss assignment computes its value in a loss module's ``forward``."""
    imp, base = _base_class(program)
    replace: Dict[int, List[cst.BaseStatement]] = {}
    defs: Dict[int, List[cst.BaseStatement]] = defaultdict(list)
    n = 0
    reasons = Counter()
    for block in program.blocks:
        for i, s in enumerate(block.stmts):
            a = _loss_site(s)
            if a is None:
                continue
            try:
                if block.scope.kind == "class":
                    raise NotApplicable("loss in a class body")
                why = banned([a.value])
                if why:
                    raise NotApplicable(sorted(why)[0])
                ex = extract(program, Region(block, i, i + 1), stmts=[_stmt("pass\n").with_changes(
                    body=[cst.Expr(a.value)])])
            except NotApplicable as e:
                reasons[str(e)] += 1
                continue
            n += 1
            cls, mod = f"InvLoss{n}", f"{PREFIX}loss{n}"
            ret = cst.SimpleStatementLine([cst.Return(a.value)], trailing_whitespace=s.trailing_whitespace)
            forward = _def("forward", *_as_method(ex.params, [ret]))
            target = a.targets[0].target.value
            site = _stmt(f"{target} = {mod}({', '.join(ex.params)})\n").with_changes(leading_lines=s.leading_lines)
            replace[id(s)] = [site]
            top = program.top_index(Region(block, i, i + 1))
            defs[top] += [imp, _class(cls, base, [forward]), _stmt(f"{mod} = {cls}()\n")]
    if not n:
        raise NotApplicable(reasons.most_common(1)[0][0] if reasons else "no loss assignment")
    return _with_module_defs(program, replace, defs)


def _with_module_defs(program: Program, replace, defs) -> str:
    module = program.module
    new_top: List[cst.BaseStatement] = []
    for k, s in enumerate(module.body):
        if defs.get(k):
            new_top += _spaced(defs[k])
            if id(s) in replace:
                replace[id(s)] = [_after_defs(replace[id(s)][0]), *replace[id(s)][1:]]
            else:
                s = _after_defs(s)
        new_top.append(s)
    module = module.with_changes(body=new_top)
    return module.visit(_Replace(replace, {})).code


def _backward_split(call: cst.Call, item: str) -> Optional[Tuple[cst.BaseExpression, cst.Call]]:
    """(the value backpropagated, the call with ``item`` in its place)."""
    f = call.func
    if not isinstance(f, cst.Attribute) or f.attr.value != "backward":
        return None
    holder = cst.Module([]).code_for_node(f.value)
    if re.search(r"(autograd|\bag|accelerator)$", holder, re.IGNORECASE):  # autograd.backward(loss), accelerator.backward(loss)
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        first = call.args[0].value
        if isinstance(first, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.StarredElement)):
            return None
        return first, call.with_changes(args=[call.args[0].with_changes(value=cst.Name(item)), *call.args[1:]])
    return f.value, call.with_changes(func=f.with_changes(value=cst.Name(item)))


def loss_list(program: Program) -> str:
    """Every backward call: the losses built in a list, backpropagated in a loop."""
    replace: Dict[int, List[cst.BaseStatement]] = {}
    n = 0
    for block in program.blocks:
        for s in block.stmts:
            if not isinstance(s, cst.SimpleStatementLine) or len(s.body) != 1 or not isinstance(s.body[0], cst.Expr):
                continue
            call = s.body[0].value
            if not isinstance(call, cst.Call):
                continue
            lst, item = f"{PREFIX}losses{n + 1}", f"{PREFIX}l{n + 1}"
            split = _backward_split(call, item)
            if split is None:
                continue
            value, new_call = split
            n += 1
            build = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(lst))], cst.List([cst.Element(value)]))],
                                            leading_lines=s.leading_lines)
            loop = _stmt(f"for {item} in {lst}:\n    pass\n")
            inner = s.with_changes(body=[s.body[0].with_changes(value=new_call)], leading_lines=[])
            loop = loop.with_changes(body=loop.body.with_changes(body=[inner]))
            replace[id(s)] = [build, loop]
    if not n:
        raise NotApplicable("no backward call")
    return _with_module_defs(program, replace, {})


# --- the corpus of variants ---------------------------------------------------------------------

@dataclass
class Variant:
    id: str  # CODE/stem/refactoring/k
    fixture: Path
    refactoring: str
    bad: bool
    framework: str
    text: str

    @property
    def code(self) -> str:
        return self.fixture.parent.name

    @property
    def filename(self) -> str:
        return self.id.replace("/", "__") + ".py"


@dataclass
class Skipped:
    id: str
    fixture: Path
    refactoring: str
    bad: bool
    framework: str
    reason: str


def fixture_framework(path: Path) -> str:
    fws = frameworks_of(path)
    return "torch" if "torch" in fws else ("mxnet" if "mxnet" in fws else "none")


def fixtures() -> List[Path]:
    return sorted(FIXTURES.glob("SL*/*.py"))


def _anchors(path: Path, program: Program) -> List[int]:
    if path.name.startswith("bad_"):
        return sorted(r for r, _ in expected_findings(path))
    return anchor_lines(program)


def variants_of(path: Path) -> Tuple[List[Variant], List[Skipped]]:
    text = path.read_text(encoding="utf-8")
    program = Program(text)
    bad = path.name.startswith("bad_")
    fw = fixture_framework(path)
    stem = f"{path.parent.name}/{path.stem}"
    made: List[Variant] = []
    skipped: List[Skipped] = []
    regions = regions_of(program, _anchors(path, program))
    loops_done: Set[int] = set()

    def add(vid, kind, make):
        try:
            new = make()
        except NotApplicable as e:
            skipped.append(Skipped(vid, path, kind, bad, fw, str(e)))
            return
        if new == text:
            skipped.append(Skipped(vid, path, kind, bad, fw, "nothing changed"))
            return
        made.append(Variant(vid, path, kind, bad, fw, new))

    for kind in REFACTORINGS:
        if kind == "loss_module":
            add(f"{stem}/{kind}/0", kind, lambda: loss_module(program))
            continue
        if kind == "loss_list":
            add(f"{stem}/{kind}/0", kind, lambda: loss_list(program))
            continue
        for k, region in enumerate(regions):
            if kind == "trainer":
                loop = _target_loop(region)
                if loop is not None and id(loop) in loops_done:
                    continue
                if loop is not None:
                    loops_done.add(id(loop))
            add(f"{stem}/{kind}/{k}", kind, lambda: refactor_region(program, region, kind, k))
        if not regions:
            skipped.append(Skipped(f"{stem}/{kind}/-", path, kind, bad, fw, "no region"))
    return made, skipped


def _target_loop(region: Region):
    if region.end - region.start == 1 and isinstance(region.stmts[0], (cst.For, cst.While)):
        return region.stmts[0]
    return region.block.loops[-1] if region.block.loops else None


def corpus(paths: Optional[Sequence[Path]] = None) -> Tuple[List[Variant], List[Skipped]]:
    made, skipped = [], []
    for path in paths or fixtures():
        m, s = variants_of(path)
        made += m
        skipped += s
    return made, skipped


# --- the static pass ----------------------------------------------------------------------------

def write_variants(variants: Sequence[Variant], folder: Path) -> Dict[str, Path]:
    """Each variant in a folder of its own (each is one program)."""
    out = {}
    for v in variants:
        d = folder / v.id.replace("/", "__")
        d.mkdir(parents=True, exist_ok=True)
        p = d / (v.fixture.stem + ".py")
        p.write_text(v.text, encoding="utf-8")
        out[v.id] = p
    return out


def expected_of(text: str) -> Set[Tuple[int, str]]:
    out = set()
    for row, line in enumerate(text.splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            for c in re.split(r"\s*,\s*", m.group(1)):
                out.add((row, c))
    return out


def check_static(variants: Sequence[Variant], jobs: Optional[int] = None) -> Dict[str, dict]:
    """scopelint on every variant, in one process: per variant, invariant or not, with
    what was expected and found."""
    with tempfile.TemporaryDirectory(prefix="scopelint-invariance-") as tmp:
        paths = write_variants(variants, Path(tmp))
        cmd = [sys.executable, "-m", "scopelint", "check", "--no-cache", "--preview", "--output-format", "json", "--exit-zero"]  # (preview rules too: measured here)
        if jobs:
            cmd += ["--jobs", str(jobs)]
        proc = subprocess.run(cmd + [tmp], capture_output=True, text=True, cwd=tmp)
        if proc.returncode != 0:
            raise RuntimeError(f"scopelint failed ({proc.returncode}): {proc.stderr[-2000:]}")
        findings = json.loads(proc.stdout)
        by_file: Dict[str, List[Tuple[int, str]]] = defaultdict(list)
        for f in findings:
            by_file[os.path.realpath(f["filename"])].append((f["location"]["row"], f["code"]))
        results = {}
        for v in variants:
            found = set(by_file.get(os.path.realpath(paths[v.id]), []))
            expected = expected_of(v.text) if v.bad else set()
            ok = found == expected or (bool(expected) and _at_calls(v.text, expected, found))
            row = {"invariant": ok}
            if not ok:
                row["expected"] = sorted([r, c] for r, c in expected)
                row["found"] = sorted([r, c] for r, c in found)
            results[v.id] = row
        if "internal error" in proc.stderr:
            raise RuntimeError(f"scopelint reported an internal error: {proc.stderr[-2000:]}")
        return results


def _at_calls(text: str, expected: Set[Tuple[int, str]], found: Set[Tuple[int, str]]) -> bool:
    """The findings are the expected ones, some of them reported where the function the
    marked statement moved into is called or handed over (``reset(opt)`` for a
    ``zero_grad()`` moved into ``reset``): a finding lands where the fix goes."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    missing, extra = expected - found, found - expected
    for line, code in missing:
        holders = [f for f in funcs if f.lineno < line <= f.end_lineno]
        if not holders:
            return False
        holder = min(holders, key=lambda f: f.end_lineno - f.lineno)
        name = holder.name
        uses = {n.lineno for n in ast.walk(tree) if (isinstance(n, ast.Name) and n.id == name)
                or (isinstance(n, ast.Attribute) and n.attr == name)}
        uses |= _instance_calls(tree, holder)
        match = next(((l, c) for l, c in sorted(extra) if c == code and l in uses), None)
        if match is None:
            return False
        extra.discard(match)
    return not extra


_CALLED_AS_INSTANCE = ("forward", "hybrid_forward", "__call__")


def _instance_calls(tree: ast.AST, func: ast.AST) -> Set[int]:
    """The lines that call an instance of the class ``func`` is the ``forward`` (or
    ``__call__``) of: ``net(x)`` after ``net = Net()`` calls it, as ``helper(x)`` calls
    ``helper``."""
    if func.name not in _CALLED_AS_INSTANCE:
        return set()
    cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and func in c.body), None)
    if cls is None:
        return set()

    def spelled(e) -> Optional[str]:
        return e.id if isinstance(e, ast.Name) else ("." + e.attr if isinstance(e, ast.Attribute) else None)

    made = {spelled(t) for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
            and isinstance(n.value.func, ast.Name) and n.value.func.id == cls.name for t in n.targets}
    made.discard(None)
    return {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        spelled(n.func) in made or (isinstance(n.func, ast.Call) and isinstance(n.func.func, ast.Name)
                                    and n.func.func.id == cls.name))}


# --- the dynamic pass ---------------------------------------------------------------------------

def behaves(path: Path, bad: bool, effect, tmp: Path) -> Tuple[bool, str]:
    """Run a program as tests/test_fixtures_run.py runs a fixture: a bad one must show its
    declared effect, a good one must run cleanly."""
    from fixtures_util import run_fixture

    proc, refused = run_fixture(path, tmp)
    how = f" (oneDNN off: {refused})" if refused else ""
    if not bad:
        return proc.returncode == 0, (proc.stderr[-1500:] + how) if proc.returncode else ""
    kind, text = effect
    if kind == "raises":
        exc, _, frag = text.partition(":")
        ok = proc.returncode != 0 and exc.strip() in proc.stderr and frag.strip() in proc.stderr
        return ok, "" if ok else f"expected {text}{how}: rc {proc.returncode}\n{proc.stderr[-1500:]}"
    ok = proc.returncode == 0 and text in proc.stdout
    return ok, "" if ok else f"expected output {text!r}{how}: rc {proc.returncode}\n{proc.stdout[-800:]}\n{proc.stderr[-1500:]}"


def run_variants(variants: Sequence[Variant], verbose: bool = True) -> Dict[str, Tuple[bool, str]]:
    out = {}
    with tempfile.TemporaryDirectory(prefix="scopelint-invariance-run-") as tmp:
        for v in variants:
            d = Path(tmp) / v.id.replace("/", "__")
            d.mkdir(parents=True)
            p = d / (v.fixture.stem + ".py")
            p.write_text(v.text, encoding="utf-8")
            t0 = time.time()
            ok, why = behaves(p, v.bad, declared_effect(v.fixture) if v.bad else None, d)
            out[v.id] = (ok, why)
            if verbose:
                print(f"  {'same' if ok else 'DIFFERS'}  {v.id}  ({time.time() - t0:.1f} s)", flush=True)
                if not ok:
                    print("    " + why.replace("\n", "\n    ")[-1500:], flush=True)
    return out


def stratified_sample(variants: Sequence[Variant], n: int, seed: int = SEED) -> List[Variant]:
    """About ``n`` variants, spread over refactoring x bad/good x framework (fixed seed)."""
    strata: Dict[Tuple[str, bool, str], List[Variant]] = defaultdict(list)
    for v in sorted(variants, key=lambda v: v.id):
        strata[(v.refactoring, v.bad, v.framework)].append(v)
    rng = random.Random(seed)
    for key in sorted(strata):
        rng.shuffle(strata[key])
    picked: List[Variant] = []
    keys = sorted(strata)
    depth = 0
    while len(picked) < n and any(len(strata[k]) > depth for k in keys):
        for k in keys:
            if len(strata[k]) > depth and len(picked) < n:
                picked.append(strata[k][depth])
        depth += 1
    return picked


# --- the report ---------------------------------------------------------------------------------

def table(variants: Sequence[Variant], skipped: Sequence[Skipped], results: Dict[str, dict]) -> str:
    rows = ["| refactoring | fixtures | framework | generated | not applicable | invariant | rate |",
            "|---|---|---|---:|---:|---:|---:|"]
    keys = sorted({(v.refactoring, v.bad, v.framework) for v in variants} | {(s.refactoring, s.bad, s.framework) for s in skipped},
                  key=lambda k: (REFACTORINGS.index(k[0]), not k[1], k[2]))
    tot = Counter()
    for key in keys:
        gen = [v for v in variants if (v.refactoring, v.bad, v.framework) == key]
        na = sum(1 for s in skipped if (s.refactoring, s.bad, s.framework) == key)
        inv = sum(1 for v in gen if results[v.id]["invariant"])
        rate = f"{inv / len(gen):.0%}" if gen else "–"
        rows.append(f"| {key[0]} | {'bad' if key[1] else 'good'} | {key[2]} | {len(gen)} | {na} | {inv} | {rate} |")
        tot["gen"] += len(gen)
        tot["na"] += na
        tot["inv"] += inv
    rows.append(f"| **all** | | | {tot['gen']} | {tot['na']} | {tot['inv']} | {tot['inv'] / max(1, tot['gen']):.0%} |")
    per_ref = ["", "| refactoring | generated | not applicable | invariant | rate (bad) | rate (good) | rate |", "|---|---:|---:|---:|---:|---:|---:|"]
    for kind in REFACTORINGS:
        gen = [v for v in variants if v.refactoring == kind]
        na = sum(1 for s in skipped if s.refactoring == kind)
        inv = sum(1 for v in gen if results[v.id]["invariant"])

        def rate(vs):
            return f"{sum(results[v.id]['invariant'] for v in vs) / len(vs):.0%}" if vs else "–"

        per_ref.append(f"| {kind} | {len(gen)} | {na} | {inv} | {rate([v for v in gen if v.bad])} | "
                       f"{rate([v for v in gen if not v.bad])} | {rate(gen)} |")
    def cell(vs):
        inv = sum(results[v.id]["invariant"] for v in vs)
        return f"{inv}/{len(vs)} ({inv / len(vs):.0%})" if vs else "–"

    per_code = ["", "| rule | bad, torch | bad, mxnet | good, torch | good, mxnet |", "|---|---:|---:|---:|---:|"]
    for code in sorted({v.code for v in variants}):
        cells = [cell([v for v in variants if v.code == code and v.bad == bad and v.framework == fw])
                 for bad in (True, False) for fw in ("torch", "mxnet")]
        per_code.append(f"| {code} | " + " | ".join(cells) + " |")
    return "\n".join(rows + per_ref + per_code)


def classify(row: dict) -> List[str]:
    """How a variant missed: ``lost SLx`` (expected, found nowhere), ``moved SLx`` (found on
    another line: the call site, mostly), ``SLx->SLy`` (another code on the line),
    ``extra SLy`` (a finding nobody expected)."""
    expected = {tuple(r) for r in row.get("expected", [])}
    found = {tuple(r) for r in row.get("found", [])}
    missing, extra = expected - found, found - expected
    out = []
    for line, code in sorted(missing):
        if any(c == code for _, c in extra):
            out.append(f"moved {code}")
        elif any(l == line for l, _ in extra):
            out.append(f"{code}->{next(c for l, c in sorted(extra) if l == line)}")
        else:
            out.append(f"lost {code}")
    for line, code in sorted(extra):
        if not any(c == code for _, c in missing) and not any(l == line for l, _ in missing):
            out.append(f"extra {code}")
    return sorted(set(out))


def load_baseline(path: Path = BASELINE) -> Dict[str, dict]:
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["variants"]


def diff_baseline(results: Dict[str, dict], baseline: Dict[str, dict]):
    """(lost: recorded invariant, no longer; gained: newly invariant; changed: a
    non-invariant variant whose findings changed; new: not in the baseline; gone: in the
    baseline, no longer generated)."""
    lost = sorted(k for k, r in results.items() if k in baseline and baseline[k]["invariant"] and not r["invariant"])
    gained = sorted(k for k, r in results.items() if k in baseline and not baseline[k]["invariant"] and r["invariant"])
    changed = sorted(k for k, r in results.items() if k in baseline and not baseline[k]["invariant"] and not r["invariant"]
                     and baseline[k].get("found") != r.get("found"))
    new = sorted(set(results) - set(baseline))
    gone = sorted(set(baseline) - set(results))
    return lost, gained, changed, new, gone


def write_baseline(results: Dict[str, dict], skipped: Sequence[Skipped], path: Path = BASELINE):
    path.parent.mkdir(parents=True, exist_ok=True)
    na = Counter(f"{s.refactoring}: {s.reason}" for s in skipped)
    data = {
        "about": "benchmarks/invariance.py: each applicable variant's static result (invariant, or what was "
                 "expected and found); rewrite with `python benchmarks/invariance.py --update`.",
        "not_applicable": dict(sorted(na.items())),
        "variants": dict(sorted(results.items())),
    }
    # one line per variant: a change of reach reads as a diff of lines
    rows = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data["variants"].items()]
    head = json.dumps({k: v for k, v in data.items() if k != "variants"}, indent=1)[:-2]
    path.write_text(head + ',\n "variants": {\n' + ",\n".join(" " + r for r in rows) + "\n }\n}\n", encoding="utf-8")


GAPS = ROOT / "benchmarks" / "invariance" / "gaps"
WANT = re.compile(r"#\s*want:\s*(SL\d{3})")


def gaps() -> List[Tuple[Path, Set[Tuple[int, str]], Set[Tuple[int, str]]]]:
    """The failure catalogue's minimal programs: (program, wanted, found). Each marks with
    ``# want: SLxxx`` the finding its inlined form draws (``# want: none`` where the
    refactored form draws a false one); a gap is closed when found == wanted."""
    paths = sorted(GAPS.glob("*.py"))
    cmd = [sys.executable, "-m", "scopelint", "check", "--no-cache", "--preview", "--output-format", "json", "--exit-zero"]  # (preview rules too: measured here)
    # one program per run: the catalogue's programs are not one project
    out = []
    for path in paths:
        proc = subprocess.run(cmd + [str(path)], capture_output=True, text=True)
        found = {(f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)}
        wanted = {(i, m.group(1)) for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                  for m in [WANT.search(line)] if m}
        out.append((path, wanted, found))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the baseline")
    ap.add_argument("--run", action="store_true", help="also execute variants (all, or --sample N)")
    ap.add_argument("--sample", type=int, default=0, help="with --run: a stratified sample of N variants")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--only", default="", help="comma-separated refactorings, fixture ids or rule codes to keep")
    ap.add_argument("--write", metavar="DIR", help="write the variants to DIR and exit")
    ap.add_argument("--show", metavar="ID", help="print one variant and its static result")
    ap.add_argument("--failures", action="store_true", help="list every non-invariant variant")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--gaps", action="store_true", help="check the failure catalogue's minimal programs and exit")
    args = ap.parse_args(argv)
    if args.gaps:
        rows = gaps()
        for path, wanted, found in rows:
            state = "closed" if wanted == found else "open"
            print(f"{state:6}  {path.name}: wanted {sorted(wanted)}, found {sorted(found)}")
        print(f"{sum(w != f for _, w, f in rows)} of {len(rows)} gaps open")
        return 0

    t0 = time.time()
    variants, skipped = corpus()
    if args.only:
        keep = [k.strip() for k in args.only.split(",") if k.strip()]
        variants = [v for v in variants if any(k in (v.refactoring, v.code) or v.id.startswith(k) for k in keep)]
        skipped = [s for s in skipped if any(k in (s.refactoring, s.fixture.parent.name) or s.id.startswith(k) for k in keep)]
    print(f"{len(variants)} variants generated, {len(skipped)} not applicable ({time.time() - t0:.1f} s)", flush=True)
    if args.write:
        write_variants(variants, Path(args.write))
        print(f"written to {args.write}")
        return 0
    if args.show:
        v = next((v for v in variants if v.id == args.show), None)
        if v is None:
            s = next((s for s in skipped if s.id == args.show), None)
            print(f"not generated: {s.reason}" if s else "no such variant")
            return 1
        print(v.text)
        print(json.dumps(check_static([v])[v.id]))
        return 0
    t1 = time.time()
    results = check_static(variants, args.jobs)
    print(f"static pass: {time.time() - t1:.1f} s\n")
    print(table(variants, skipped, results))
    if args.failures:
        print("\nnon-invariant variants:")
        kinds = Counter()
        for k, r in sorted(results.items()):
            if not r["invariant"]:
                print(f"  {k}: expected {r['expected']} found {r['found']}  [{', '.join(classify(r))}]")
                kinds.update((k.split("/")[2], "bad" if k.split("/")[1].startswith("bad_") else "good", c) for c in classify(r))
        print("\nhow they missed (refactoring, fixtures, kind: variants):")
        for (kind, side, c), n in sorted(kinds.items(), key=lambda x: (REFACTORINGS.index(x[0][0]), x[0][1], -x[1])):
            print(f"  {kind:12} {side:5} {c:16} {n}")
    status = 0
    if not args.only:
        baseline = load_baseline()
        lost, gained, changed, new, gone = diff_baseline(results, baseline)
        for title, ids in (("LOST (recorded invariant, no longer)", lost), ("newly invariant (run --update)", gained),
                           ("findings changed (still not invariant)", changed), ("not in the baseline", new),
                           ("in the baseline, no longer generated", gone)):
            if ids:
                print(f"\n{title}: {len(ids)}")
                for k in ids[:40]:
                    print(f"  {k}")
        if args.update:
            write_baseline(results, skipped)
            print(f"\nbaseline written: {BASELINE.relative_to(ROOT)}")
        elif lost or new or gone:
            status = 1
    if args.run:
        chosen = stratified_sample(variants, args.sample, args.seed) if args.sample else list(variants)
        print(f"\nrunning {len(chosen)} variants")
        ran = run_variants(chosen)
        same = sum(ok for ok, _ in ran.values())
        print(f"\nexecuted {len(ran)}: {same} behaved like their original, {len(ran) - same} did not")
        if same != len(ran):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
