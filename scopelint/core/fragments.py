"""Fragments: texts pasted alone (a forum post, an issue, a notebook cell) that use a
framework's names without importing them. What they imply is read here, before any
parse by LibCST (docs/model.md, "Fragments"); ``names.Names.hole`` says which names a
parsed text uses and binds nowhere.
"""

from __future__ import annotations

import ast
import re
from typing import Set

from scopelint.core import slicing


# The names fragments use for the frameworks' modules, as their tutorials import them.
_TORCH_NAMES = {"torch": "import torch", "nn": "import torch.nn as nn", "F": "import torch.nn.functional as F",
                "optim": "import torch.optim as optim", "Variable": "from torch.autograd import Variable"}
_MXNET_NAMES = {"mx": "import mxnet as mx", "mxnet": "import mxnet", "nd": "from mxnet import nd",
                "gluon": "from mxnet import gluon"}


_MXNET_WORDS = ("nd.", "gluon.", "mx.", "autograd.record")
_MXNET_LOOP_WORDS = _MXNET_WORDS + ("collect_params", "asnumpy", "asscalar", "attach_grad", "autograd.", "trainer.step", "ctx")
_MXNET_AUTOGRAD = re.compile(r"\bautograd\.(?:record|pause|train_mode|predict_mode)\(")
_IMPORT_LINE = re.compile(r"^\s*(?:import|from)\s", re.M)
_TORCH_LOOP = re.compile(r"\b(?:opt|optim|optimizer|optimiser)\w*\.zero_grad\(")


def fragment_imports(code: str) -> str:
    """The import lines a fragment implies (``""``: none; see docs/model.md, "Fragments"):
    a text that names a framework (``torch.no_grad()``, ``mx.nd.array``) but imports
    neither, where ``torch`` (or ``mx``/``mxnet``/``nd``/``gluon``) is used and bound
    nowhere -- then such a name can only be the framework's module, and the other
    conventional names (``nn``, ``F``, ``optim``, ``autograd``) of that framework, used
    and bound nowhere, are read so too. Names the fragment defines are never read so. A
    text whose only framework name is ``autograd``, opening ``autograd.record()`` or
    ``pause()``, is MXNet's. A text naming no framework that runs PyTorch's loop (``optimizer.zero_grad()``,
    ``.backward()``, no Gluon word) implies ``import torch``."""
    imported = slicing.imported_frameworks(code)
    if imported:
        # A module that imports a framework's submodule (``import torch.nn as nn``) and
        # reads ``torch`` from a star import (``from utils import *``, whose module
        # imports torch): the framework's module name, used and bound nowhere here, is
        # what the star import binds.
        return _star_bound_frameworks(code, imported) if "import *" in code and len(imported) == 1 else ""
    # Naming no framework at all, ``optimizer.zero_grad()`` with ``loss.backward()`` is
    # PyTorch's loop (Gluon zeroes through ``collect_params()`` and steps a Trainer with
    # a batch size): read as ``import torch``.
    torch_loop = _TORCH_LOOP.search(code) is not None and ".backward(" in code and not any(w in code for w in _MXNET_LOOP_WORDS) \
        and _IMPORT_LINE.search(code) is None  # (a program that imports something else may be tinygrad's, JAX's...)
    if not (torch_loop or slicing.mentions_framework(code) or any(w in code for w in _MXNET_WORDS)):
        return ""
    names = _free_and_bound(code)
    if names is None:
        return ""
    free, bound = names
    # (``autograd.record()``/``autograd.pause()`` are MXNet's alone: torch.autograd has neither)
    mxnet_on = bool(free & {"mx", "mxnet", "nd", "gluon"}) or ("autograd" in free and _MXNET_AUTOGRAD.search(code) is not None)
    torch_on = "torch" in free or (torch_loop and not mxnet_on and "torch" not in bound)
    if torch_on == mxnet_on:
        return ""  # (neither, or both: not guessed)
    return _implied(free, torch_on)


def _star_bound_frameworks(code: str, imported) -> str:
    names = _free_and_bound(code)
    if names is None:
        return ""
    free = names[0]
    torch_on = "torch" in imported and "torch" in free
    if not (torch_on or ("mxnet" in imported and free & {"mx", "mxnet", "nd", "gluon"})):
        return ""
    return _implied(free, torch_on)


def _implied(free, torch_on: bool) -> str:
    names = _TORCH_NAMES if torch_on else _MXNET_NAMES
    lines = [line for name, line in names.items() if name in free or (name == "torch" and torch_on)]
    if "autograd" in free:
        lines.append("from torch import autograd" if torch_on else "from mxnet import autograd")
    return "\n" + "\n".join(lines) + "\n" if lines else ""


def _free_and_bound(code: str):
    """The names ``code`` uses and binds nowhere, and those it binds (None: it does not
    parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound = bound_names(tree)
    used = {n.id for n in ast.walk(tree) if type(n) is ast.Name and type(n.ctx) is ast.Load}
    return used - bound, bound


def bound_names(tree: ast.AST) -> Set[str]:
    """Every name a text (CPython's tree) binds anywhere: an over-approximation, a name
    bound in one scope counts as bound in all. (``names.Names.hole`` asks the same of
    LibCST's tree, scope by scope; the verifier's snippet harness asks it of a fragment
    it completes.)"""
    out: Set[str] = set()
    for node in ast.walk(tree):
        t = type(node)
        if t is ast.Name:
            if type(node.ctx) is not ast.Load:
                out.add(node.id)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.add(node.name)
        elif t is ast.arg:
            out.add(node.arg)
        elif t in (ast.Import, ast.ImportFrom):
            out.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
        elif t is ast.ExceptHandler and node.name:
            out.add(node.name)
    return out
