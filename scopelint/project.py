"""The files of one run as one program: which module each file is, what it imports from
the others, and what each file is told of them (``core.interfile.Context``).

A file's imports resolve to files on disk the way Python would find them when the
program runs from its project: a package's modules from the folder above its top
package, a script's siblings from the script's folder (``python train.py``). Imported
modules that are not in the run (the rest of a package, when one file is named) are
read as context: summarised, never reported on. Frameworks' own modules (``torch``,
``mxnet``) are the analysis' APIs, never a summary.

Summaries are computed in import order (a module's after those it imports; an import
cycle is cut, and what it cuts is unknown: no summary), once per file, in this process:
a project's modules that import each other are few, and a file whose imports reach no
other module of the program costs a look at its import lines.

Where the run names what a file that imports no framework is for (``[tool.scopelint]
framework``, else a project that depends on exactly one framework, else the one
framework of every file of the run that imports a function of it), that file is
analysed for that framework: the code of ``engine.py`` that only uses the model and
optimizer it is handed.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from scopelint.core.frameworks import FRAMEWORKS
from scopelint.core.interfile import Context, Exports, Summary
from scopelint.core.slicing import imported_frameworks, mentions_framework, text_may_anchor

_MOST_BYTES = 2_000_000
_INSTALLED = ("site-packages", "dist-packages")  # a larger file is not read for its imports (no summary, no context)


@dataclass
class _Module:
    path: str  # absolute
    name: str  # dotted, from its root
    package: Optional[str]  # the package it is in ("" : none, a top-level module)
    roots: Tuple[str, ...]  # the folder its absolute imports are found from (none: installed)
    given: Optional[str] = None  # its text, where the caller gave it (an editor's buffer)
    tree: Optional[ast.Module] = None
    # local name -> dotted name it imports (module level); star-imported modules
    imports: Dict[str, str] = field(default_factory=dict)
    stars: List[str] = field(default_factory=list)
    _frameworks: Optional[Set[str]] = None
    exports: Optional[Exports] = None
    context: Optional[Context] = None

    _text: object = False  # (not read yet)

    @property
    def text(self) -> Optional[str]:
        """Its text (None: unreadable, not UTF-8, too large), read when first asked."""
        if self._text is False:
            self._text = self.given if self.given is not None else _read(self.path)
        return self._text  # type: ignore[return-value]

    @property
    def frameworks(self) -> Set[str]:
        """The frameworks it may import (an upper bound: a mention in a string counts)."""
        if self._frameworks is None:
            text = self.text or ""
            self._frameworks = set(imported_frameworks(text)) if mentions_framework(text) else set()
        return self._frameworks


class Program:
    """The modules of one run and those they import. ``display``: a path as messages
    name it."""

    def __init__(self, display=lambda p: p, texts: Optional[Dict[str, str]] = None):
        """``texts``: by absolute path, texts that stand for the files' (an editor's
        unsaved buffers)."""
        self.display = display
        self.texts = {os.path.abspath(p): t for p, t in (texts or {}).items()}
        self.modules: Dict[str, _Module] = {}  # by absolute path
        self._busy: Set[str] = set()

    # --- modules ---------------------------------------------------------------------
    def module(self, path: str) -> Optional[_Module]:
        path = os.path.abspath(path)
        found = self.modules.get(path)
        if found is not None or path in self.modules:
            return found
        self.modules[path] = None  # type: ignore[assignment]  (being read)
        if not path.endswith(".py"):
            return None
        folder, base = os.path.split(path)
        parts = [] if base == "__init__.py" else [base[:-3]]
        top = folder
        while os.path.isfile(os.path.join(top, "__init__.py")):
            parts.insert(0, os.path.basename(top))
            parent = os.path.dirname(top)
            if parent == top:
                break
            top = parent
        name = ".".join(parts)
        package = ".".join(parts[:-1]) if base != "__init__.py" else name
        if not name or any(not p.isidentifier() for p in parts):
            return None
        # (Installed packages are not the project's code: from a folder of them, nothing
        # but the file's own package resolves.)
        # (A package's modules import absolutely from above its top package only: Python 3
        # has no implicit relative imports.)
        roots = tuple(r for r in (top,) if os.path.basename(r) not in _INSTALLED)
        mod = _Module(path, name, package if package or top != folder else "", roots, self.texts.get(path))
        self._read_imports(mod)
        self.modules[path] = mod
        return mod

    def _read_imports(self, mod: _Module) -> None:
        # (Most files import nothing of the program: their folder tells, or one search.)
        pattern = _program_imports(*_import_scope(mod))
        if pattern is None or mod.text is None or pattern.search(mod.text) is None:
            return
        text = mod.text
        try:
            mod.tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        for node in _module_level(mod.tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is not None:
                        mod.imports[alias.asname] = alias.name
                    else:
                        mod.imports[alias.name.split(".", 1)[0]] = alias.name.split(".", 1)[0]
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(mod, node.level, node.module)
                if source is None:
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        mod.stars.append(source)
                    else:
                        mod.imports[alias.asname or alias.name] = f"{source}.{alias.name}"

    @staticmethod
    def _absolute(mod: _Module, level: int, module: Optional[str]) -> Optional[str]:
        if not level:
            return module
        if not mod.package:
            return None
        parts = mod.package.split(".")
        if level - 1 > len(parts) - (0 if module else 1):
            return None
        base = parts[: len(parts) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    def _find(self, mod: _Module, dotted: str) -> Optional[Tuple[_Module, str]]:
        """The module of the program ``dotted`` (as ``mod`` spells it, absolute) is, or
        the module it is defined in and the name there: (module, "") or (module, name)."""
        if not dotted or _is_framework(dotted.split(".", 1)[0]):
            return None
        parts = dotted.split(".")
        for root in mod.roots:
            for cut in (len(parts), len(parts) - 1):
                if cut < 1:
                    continue
                base = os.path.join(root, *parts[:cut])
                for path in (base + ".py", os.path.join(base, "__init__.py")):
                    if os.path.isfile(path):
                        target = self.module(path)
                        if target is not None:
                            return target, ".".join(parts[cut:])
        return None

    # --- summaries --------------------------------------------------------------------
    def exports(self, mod: _Module) -> Exports:
        """``mod``'s exports, computed after those of the modules it imports."""
        if mod.exports is not None:
            return mod.exports
        if mod.path in self._busy:  # an import cycle: what it cuts stays unknown
            return Exports()
        self._busy.add(mod.path)
        try:
            from scopelint.engine import summarize

            context = self.context(mod)
            found = summarize(mod.text or "", self.display(mod.path), context) if mod.text else Exports()
            functions = dict(found.functions)
            # Re-exports (``from .engine import train`` in a package's ``__init__``).
            if context is not None:
                for local, dotted in mod.imports.items():
                    summary = context.function(dotted)
                    if summary is not None and local not in functions:
                        functions[local] = summary
            models = set(found.model_classes)
            if context is not None:
                models.update(local for local, dotted in mod.imports.items() if context.is_model_class(dotted))
            mod.exports = Exports(tuple(sorted(functions.items())), tuple(sorted(models)), found.frameworks)
        finally:
            self._busy.discard(mod.path)
        return mod.exports

    def context(self, mod: _Module, framework: Optional[str] = None) -> Optional[Context]:
        """What ``mod`` is told of the modules it imports; None when nothing (the file is
        then checked as on its own). ``framework``: the one the run says ``mod`` is for,
        if it imports none."""
        if mod.context is not None:
            return mod.context
        functions: Dict[str, Summary] = {}
        models: Set[str] = set()
        stars: Dict[str, Tuple[str, ...]] = {}
        dotted_names = set(mod.imports.values()) | set(mod.stars)
        for dotted in sorted(dotted_names):
            found = self._find(mod, dotted)
            if found is None:
                continue
            target, name = found
            exports = self.exports(target)
            prefix = dotted[: len(dotted) - len(name) - 1] if name else dotted
            for fname, summary in exports.functions:
                if not name or fname == name:
                    functions[f"{prefix}.{fname}"] = summary
            for cname in exports.model_classes:
                if not name or cname == name:
                    models.add(f"{prefix}.{cname}")
            if dotted in mod.stars:
                stars[dotted] = tuple(n for n, _ in exports.functions) + tuple(exports.model_classes)
        fw = framework if framework is not None and not mod.frameworks else None
        if not (functions or models or fw):
            return None
        context = Context(mod.package or None, tuple(sorted(functions.items())), tuple(sorted(models)),
                          tuple(sorted(stars.items())), fw)
        mod.context = context
        return context


def contexts(paths: Sequence[str], declared: Sequence[Optional[str]], display=lambda p: p,
             texts: Optional[Dict[str, str]] = None) -> List[Optional[Context]]:
    """For each file of a run (``declared``: the framework its settings name, if any),
    what it is told of the program: None where nothing (most files). ``texts``: see
    ``Program``."""
    program = Program(display, texts)
    mods = [program.module(p) if p.endswith(".py") else None for p in paths]
    frameworks = _run_frameworks(program, mods, declared)
    out: List[Optional[Context]] = []
    for mod, fw in zip(mods, frameworks):
        out.append(program.context(mod, fw) if mod is not None else None)
    return out


def with_program(settings, path: str, texts: Dict[str, str], display=lambda p: p):
    """``settings`` for the one file ``path`` (an editor's document), with what the
    program around it tells it; ``texts``: the editor's open documents by path (the
    document's own included), which stand for the files on disk."""
    from dataclasses import replace

    found = contexts([path], [settings.framework], display, texts)[0]
    return settings if found is None else replace(settings, project=found)


def imports_module(text: str, path: str) -> bool:
    """Whether ``text`` may import the module of the file ``path`` (a line that imports
    and names it: an editor re-lints the documents that may depend on a changed one)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "__init__":
        stem = os.path.basename(os.path.dirname(path))
    return stem.isidentifier() and re.search(rf"^[ \t]*(?:from|import)\b[^\n]*\b{re.escape(stem)}\b", text, re.M) is not None


def _run_frameworks(program: Program, mods: Sequence[Optional[_Module]], declared: Sequence[Optional[str]]) -> List[Optional[str]]:
    """Per file that imports no framework and may hold an anchor, the framework the
    program says it is for: its settings' ``framework``, else its project's
    dependencies, else the one framework of the files importing a function or class of
    it, or all of it (``*``) (among the run's files, its folder's and its top folder's: alike whether the
    folder or one file is named)."""
    out: List[Optional[str]] = []
    for mod, fw in zip(mods, declared):
        if mod is None:
            out.append(None)
            continue
        if fw is None:
            fw = _dependency_framework(os.path.dirname(mod.path))
        if fw is None and _neighbours(program, mod, mods):
            fws: Set[str] = set()
            for other in _neighbours(program, mod, mods):
                if other is mod or not (other.imports or other.stars) or len(other.frameworks) != 1:
                    continue
                # (``from engine import *`` imports its functions as a named import does.)
                for dotted in set(other.imports.values()) | set(other.stars):
                    found = program._find(other, dotted)
                    if found is not None and found[0] is mod and (found[1] or dotted in other.stars):
                        fws.update(other.frameworks)
            fw = next(iter(fws)) if len(fws) == 1 else None
        # (Only for a file that imports none and holds something a rule reads.)
        if fw is not None and (mod.text is None or mentions_framework(mod.text) or not text_may_anchor(mod.text, (fw,), ())):
            fw = None
        out.append(fw)
    return out


def _neighbours(program: Program, mod: _Module, mods: Sequence[Optional[_Module]]) -> List[_Module]:
    """The modules that may import ``mod``: the run's, and those of its folder and its
    top folder (the first ``_MOST_NEIGHBOURS`` of each)."""
    if _program_imports(*_import_scope(mod)) is None:
        return []  # (nothing near it may import a module of the program)
    found = {id(m): m for m in mods if m is not None}
    for folder in {os.path.dirname(mod.path), *mod.roots[:1]}:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names[:_MOST_NEIGHBOURS]:
            if name.endswith(".py"):
                other = program.module(os.path.join(folder, name))
                if other is not None:
                    found.setdefault(id(other), other)
    return list(found.values())


_MOST_NEIGHBOURS = 500
_DEPENDENCY_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "requirements.txt")
_DEPENDS = {"torch": re.compile(r"""["'\s^,;](?:torch|pytorch)\s*(?:[<>=!~;\[,"'\n]|$)""", re.M),
            "mxnet": re.compile(r"""["'\s^,;]mxnet(?:-cu\d+)?\s*(?:[<>=!~;\[,"'\n]|$)""", re.M)}
_dependency_cache: Dict[str, Optional[str]] = {}


def _dependency_framework(folder: str) -> Optional[str]:
    """The one framework the nearest project folder above ``folder`` (the first holding
    one of ``_DEPENDENCY_FILES`` or ``requirements*.txt``) depends on; None if none or both."""
    if folder in _dependency_cache:
        return _dependency_cache[folder]
    found: Optional[str] = None
    current = folder
    while True:
        try:
            names = os.listdir(current)
        except OSError:
            names = []
        files = [n for n in names if n in _DEPENDENCY_FILES or (n.startswith("requirements") and n.endswith(".txt"))]
        if files:
            text = "\n" + "\n".join(_read(os.path.join(current, n)) or "" for n in sorted(files))
            named = [fw for fw in FRAMEWORKS if _DEPENDS[fw].search(text)]
            found = named[0] if len(named) == 1 else None
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    _dependency_cache[folder] = found
    return found


def _is_framework(top: str) -> bool:
    return top.split(".", 1)[0] in FRAMEWORKS


def _import_scope(mod: _Module) -> Tuple[Optional[str], bool]:
    """Where ``mod``'s absolute imports of the program are found, and whether its
    relative ones are of the program (not a framework's own package)."""
    return (mod.roots[0] if mod.roots else None), bool(mod.package) and not _is_framework(mod.package)


@functools.lru_cache(maxsize=256)
def _program_imports(root: Optional[str], relative: bool) -> "Optional[re.Pattern[str]]":
    """A search for the import statements that may name a module of the program: of the
    modules and packages in ``root`` (frameworks' aside), and relative ones where
    ``relative``; None when there are none."""
    names = []
    try:
        entries = sorted(os.listdir(root)) if root is not None else []
    except OSError:
        entries = []
    for entry in entries:
        stem = entry[:-3] if entry.endswith(".py") else entry
        if not stem.isidentifier() or _is_framework(stem):
            continue
        if entry.endswith(".py") or os.path.isfile(os.path.join(root, entry, "__init__.py")):
            names.append(re.escape(stem))
    alternatives = []
    if names:
        either = "|".join(names)
        alternatives.append(rf"from[ \t]+(?:{either})\b|import[ \t]+(?:[\w.]+[ \t]*(?:as[ \t]+\w+[ \t]*)?,[ \t]*)*(?:{either})\b")
    if relative:
        alternatives.append(r"from[ \t]+\.")
    if not alternatives:
        return None
    return re.compile(rf"^[ \t]*(?:{'|'.join(alternatives)})", re.M)


def _module_level(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Module-level statements, also those in ``if``/``try`` blocks (``if TYPE_CHECKING``
    and ``try: import``): a module's bindings."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)
            if isinstance(node, ast.Try):
                for h in node.handlers:
                    yield from _module_level(h.body)
                yield from _module_level(node.finalbody)


def _read(path: str) -> Optional[str]:
    try:
        if os.path.getsize(path) > _MOST_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
