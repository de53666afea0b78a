"""Which missing imports of a program the verifier replaces with inert stand-ins (issue 47).

Real training scripts import what their gradients never depend on: plotting, logging,
dataframes, metrics, progress bars, a domain library, the project's I/O helpers. Where one
is not installed here, the program stops at its import and every verdict of the file was
``inconclusive`` ("not self-contained"). The verifier instead runs both variants with an
inert stand-in for each such module (``_child.install_standins``): any attribute of it,
any call, is another stand-in (a call handed an iterable or a function hands it back:
``tqdm(loader)``, a decorator), it is falsy, empty and a context manager, and it defines no
arithmetic, no conversion and no array protocol, so a value of it that reaches a
computation raises at once instead of changing a number. The verdict names the stand-ins;
a run that fails on one says so and stays ``inconclusive``.

A module is stood in only when the program imports it unconditionally (not under a
``try`` that handles ``ImportError``: such code has its own way without the module, and a
stand-in would change the path it takes), it is absolute (a relative import is the
project's own), it is neither a framework nor NumPy (without those nothing can be
verified), and neither this interpreter nor the program's folders can find it. The
verifier decides it per program, before the runs."""

from __future__ import annotations

import ast
import importlib.util
import os
from typing import Iterable, List, Optional, Sequence

from scopelint.runtime_check.harness import COPY_SKIP

# Without these the computation itself is missing: never stood in.
NEVER = frozenset({"torch", "mxnet", "numpy", "__future__"})
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def missing_imports(source: str, folders: Sequence[str] = ()) -> List[str]:
    """The top-level names of ``source``'s unconditional absolute imports that neither
    this interpreter nor ``folders`` (the program's folder, its project's paths) can
    find, frameworks excepted; sorted. [] when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    tops = set()
    for node in _unguarded_imports(tree.body):
        if isinstance(node, ast.Import):
            tops.update(alias.name.split(".")[0] for alias in node.names)
        elif node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return sorted(t for t in tops if t not in NEVER and not _findable(t, folders))


def missing_imports_of_project(source: str, root: Optional[str], folders: Sequence[str] = (),
                               most_files: int = 400, most_bytes: int = 8 << 20) -> List[str]:
    """``missing_imports`` of the program and of the other ``.py`` files under ``root``
    (the folder copied for its run: the project's modules it imports import theirs),
    bounded in files and bytes; sorted."""
    found = set(missing_imports(source, folders))
    if not root or not os.path.isdir(root):
        return sorted(found)
    files = budget = 0
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in COPY_SKIP and not d.startswith("."))  # (what the run's copy leaves out)
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(here, name)
            try:
                size = os.path.getsize(path)
                if files >= most_files or budget + size > most_bytes:
                    return sorted(found)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            files, budget = files + 1, budget + size
            found.update(missing_imports(text, list(folders) + [here]))
    return sorted(found)


def _unguarded_imports(body: Iterable[ast.stmt]):
    """Imports in ``body`` and the blocks under it, functions and classes included, but
    not in a ``try`` whose handlers catch ``ImportError`` (or everything), nor in those
    handlers (a fallback)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        handlers = getattr(node, "handlers", None) or []
        if handlers and any(_catches_import_error(h) for h in handlers):
            blocks = [node.orelse, node.finalbody]  # (these run whether or not it failed)
        else:
            blocks = [getattr(node, f, None) for f in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in handlers] + [c.body for c in getattr(node, "cases", None) or []]
        for block in blocks:
            if isinstance(block, list):
                yield from _unguarded_imports(st for st in block if isinstance(st, ast.stmt))


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for n in names:
        name = n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", None)
        if name in _IMPORT_ERRORS:
            return True
    return False


def _findable(top: str, folders: Sequence[str]) -> bool:
    for folder in folders:
        if folder and (os.path.isdir(os.path.join(folder, top)) or os.path.isfile(os.path.join(folder, top + ".py"))):
            return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def described(names: Optional[Sequence[str]]) -> str:
    """How a verdict names the stand-ins a run used ('' for none)."""
    if not names:
        return ""
    return f" [inert stand-ins for missing modules: {', '.join(sorted(names))}]"
