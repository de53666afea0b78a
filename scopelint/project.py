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

import dataclasses
import functools
import hashlib
import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from scopelint.core.frameworks import DEFAULT_INFERENCE_FUNCTIONS, FRAMEWORKS, name_matcher
from scopelint.core.interfile import Context, Exports, Summary, calls_a_parameter, may_export
from scopelint.core.callsites import names_fed_backward
from scopelint.core.modules import relative_module
from scopelint.core.slicing import defined_names, imported_frameworks, mentions_framework, names_called, names_called_without_grad, text_may_anchor

_MOST_BYTES = 2_000_000
_MEMO: "OrderedDict[bytes, object]" = OrderedDict()  # ``Program.stored`` without a store: by the digest of (kind, extra, text)
_MEMO_SIZE = 4_096  # (entries of a few KB, 80 KB for torch's largest file: tens of MB at most)
_INSTALLED = ("site-packages", "dist-packages")  # a larger file is not read for its imports (no summary, no context)


@dataclass
class _Module:
    path: str  # absolute
    name: str  # dotted, from its root
    package: Optional[str]  # the package it is in ("" : none, a top-level module)
    roots: Tuple[str, ...]  # the folder its absolute imports are found from (none: installed)
    given: Optional[str] = None  # its text, where the caller gave it (an editor's buffer)
    # local name -> dotted name it imports (module level); star-imported modules
    imports: Dict[str, str] = field(default_factory=dict)
    stars: List[str] = field(default_factory=list)
    _frameworks: Optional[Set[str]] = None
    exports: Dict[bool, Exports] = field(default_factory=dict)  # with function summaries or not
    contexts: Dict[Tuple[Optional[str], bool], Optional[Context]] = field(default_factory=dict)  # by (framework, with summaries)

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

    def __init__(self, display=lambda p: p, texts: Optional[Dict[str, str]] = None, store=None, memo: bool = False):
        """``texts``: by absolute path, texts that stand for the files' (an editor's
        unsaved buffers). ``store``: a ``scopelint.cache.Cache`` that keeps summaries
        between runs (keyed by the module's text and what it is told of the others)."""
        self.display = display
        self.store = store
        self.memo = memo
        # What the folders held is read anew for each program (an editor's server lives
        # on while files come and go).
        _program_imports.cache_clear()
        _project_root.cache_clear()
        _package_files.cache_clear()
        _dependency_cache.clear()
        self.texts = {os.path.abspath(p): t for p, t in (texts or {}).items()}
        self.modules: Dict[str, _Module] = {}  # by absolute path
        self._busy: Set[str] = set()
        self._found: Dict[Tuple[Tuple[str, ...], str], Optional[Tuple[_Module, str]]] = {}
        self._star_aliases: Dict[str, Tuple[Tuple[str, str], ...]] = {}  # by path (``star_aliases``)

    def stored(self, kind: str, text: str, extra: str, compute, disk: bool = True):
        """``compute()`` (JSON data, a function of ``text`` and ``extra`` alone), kept in
        the run's store between runs when it has one (and ``disk``: worth a file's read),
        else in this process's memory when the program asks (``memo``: an editor's
        server, which lints one document after another in a folder whose other files do
        not change)."""
        if self.store is None or not disk:
            if not self.memo:
                return compute()
            digest = hashlib.blake2b(f"{kind}\0{extra}\0".encode("utf-8", "surrogatepass"), digest_size=16)
            digest.update(text.encode("utf-8", "surrogatepass"))
            key = digest.digest()
            if key in _MEMO:
                _MEMO.move_to_end(key)
                return _MEMO[key]
            found = _MEMO[key] = compute()
            if len(_MEMO) > _MEMO_SIZE:
                _MEMO.popitem(last=False)
            return found
        key = self.store.value_key(kind, text, extra)
        kept = self.store.get_value(key)
        if kept is not None:
            return kept
        found = compute()
        self.store.put_value(key, found)
        return found

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
        # Also the project's root (where its .git or pyproject.toml is): scripts in a
        # subfolder run from there (``python tools/train.py`` with the root on the path),
        # and repositories whose root holds an ``__init__.py`` import from it.
        roots = tuple(dict.fromkeys(r for r in (top, _project_root(folder)) if r is not None and os.path.basename(r) not in _INSTALLED))
        mod = _Module(path, name, package if package or top != folder else "", roots, self.texts.get(path))
        if top == folder and mod.text and os.path.basename(parent := os.path.dirname(folder)) not in _INSTALLED and re.search(
                rf"^[ \t]*(?:from|import)[ \t]+{re.escape(os.path.basename(folder))}\.", mod.text, re.M):
            # ``from metrics.inception import X`` in ``metrics/fid_score.py``, a folder
            # without ``__init__.py``: its module is run as ``metrics.fid_score`` by the
            # scripts of the folder above, which is then where its imports are found
            mod.roots = tuple(dict.fromkeys(mod.roots + (parent,)))
        self._read_imports(mod)
        self.modules[path] = mod
        return mod

    def _read_imports(self, mod: _Module) -> None:
        # (Most files import nothing of the program: their folder tells, or one search.)
        pattern = _program_imports(*_import_scope(mod))
        if pattern is None or mod.text is None:
            return
        text = mod.text
        imports, stars = self.stored("imports", text, f"{pattern.pattern}\0{mod.package}",
                                     lambda: self._imports_in(mod, pattern, text), disk=False)
        mod.imports.update(imports)
        mod.stars.extend(stars)

    def _imports_in(self, mod: _Module, pattern: "re.Pattern[str]", text: str) -> Tuple[Dict[str, str], List[str]]:
        imports: Dict[str, str] = {}
        stars: List[str] = []
        if pattern.search(text) is None:
            return imports, stars
        for m in _FROM.finditer(text):
            source = self._absolute(mod, len(m.group(1)), m.group(2) or None)
            if source is None:
                continue
            for name, local in _names(m.group(3)):
                if name == "*":
                    stars.append(source)
                else:
                    imports[local or name] = f"{source}.{name}"
        for m in _IMPORT.finditer(text):
            for name, local in _names(m.group(1)):
                imports[local or name.split(".", 1)[0]] = name if local else name.split(".", 1)[0]
        return imports, stars

    @staticmethod
    def _absolute(mod: _Module, level: int, module: Optional[str]) -> Optional[str]:
        return relative_module(mod.package, level, module) if level else module

    def _find(self, mod: _Module, dotted: str) -> Optional[Tuple[_Module, str]]:
        """The module of the program ``dotted`` (as ``mod`` spells it, absolute) is, or
        the module it is defined in and the name there: (module, "") or (module, name)."""
        key = (mod.roots, dotted)
        if key not in self._found:
            self._found[key] = self._find_new(mod, dotted)
        return self._found[key]

    def _find_new(self, mod: _Module, dotted: str) -> Optional[Tuple[_Module, str]]:
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
    def exports(self, mod: _Module, functions: bool = True) -> Exports:
        """``mod``'s exports, computed after those of the modules it imports
        (``functions``: else only its model classes, which cost no walk of its code)."""
        if functions in mod.exports:
            return mod.exports[functions]
        if not functions and True in mod.exports:
            return mod.exports[True]
        if mod.path in self._busy:  # an import cycle: what it cuts stays unknown
            return Exports()
        self._busy.add(mod.path)
        try:
            # What it is told of its own imports: their model classes, not their functions'
            # summaries (those of one level are what its callers are told; going deeper
            # would summarise most of a package whose modules import each other).
            context = self.context(mod, None, functions=False)
            found = self._summarize(mod, context, functions)
            models = set(found.model_classes)
            bases = dict(found.class_bases)
            mode_free = set(found.mode_free) - set(mod.imports)  # (a name also imported: which is bound is not told)
            mode_free_functions = set(found.mode_free_functions) - set(mod.imports)
            switching = set(found.switching)
            detaching = {d[0]: d for d in found.detaching}
            frozen = {f[0]: f for f in found.frozen}
            if context is not None:  # re-exported model classes and mode-free functions
                for local, dotted in mod.imports.items():
                    if context.is_model_class(dotted):
                        if context.is_mode_free(dotted) and local not in found.model_classes:
                            mode_free.add(local)
                        if context.switches_recording(dotted):
                            switching.add(local)
                        cut = context.detached_by_forward(dotted)
                        if cut is not None and local not in detaching:
                            detaching[local] = (local, *cut)
                        how = context.frozen_by_constructor(dotted)
                        if how is not None and local not in frozen:
                            frozen[local] = (local, *how)
                        models.add(local)
                        bases[local] = context.framework_bases(dotted)
                    elif context.is_mode_free_function(dotted) and local not in found.model_classes:
                        mode_free_functions.add(local)
            mod.exports[functions] = Exports(found.functions, tuple(sorted(models)), found.frameworks, tuple(sorted(bases.items())),
                                             tuple(sorted(mode_free)), tuple(sorted(mode_free_functions)), tuple(sorted(switching & models)),
                                             tuple(sorted(d for n, d in detaching.items() if n in models)),
                                             tuple(sorted(frozen.values())))
        finally:
            self._busy.discard(mod.path)
        return mod.exports[functions]

    def _summarize(self, mod: _Module, context: Optional[Context], functions: bool) -> Exports:
        from scopelint.engine import summarize

        if not mod.text:
            return Exports()
        shown = self.display(mod.path)
        key = self.store.value_key("exports", mod.text, f"{functions}\0{shown}\0{context!r}") if self.store is not None else None
        kept = self.store.get_value(key) if key is not None else None
        if kept is not None:
            try:
                return Exports.from_json(kept)
            except (KeyError, TypeError, ValueError):
                pass
        found = summarize(mod.text, shown, context, functions)
        if key is not None:
            self.store.put_value(key, found.to_json())
        return found

    def context(self, mod: _Module, framework: Optional[str] = None, functions: bool = True) -> Optional[Context]:
        """What ``mod`` is told of the modules it imports; None when nothing (the file is
        then checked as on its own). ``framework``: the one the run says ``mod`` is for,
        if it imports none. ``functions``: with their functions' summaries (else only
        their model classes)."""
        key = (framework, functions)
        if key in mod.contexts:
            return mod.contexts[key]
        mod.contexts[key] = None  # (while it is computed: an import cycle sees none)
        if mod.imports or mod.stars or framework is not None:
            mod.contexts[key] = self._context(mod, framework, functions)
        return mod.contexts[key]

    def _resolve(self, mod: _Module, dotted: str) -> Optional[Tuple[_Module, str]]:
        """Where ``dotted`` (imported by ``mod``) is defined: through re-exports
        (``from .engine import train`` or ``from .engine import *`` in an ``__init__``)."""
        found = self._bound_by_package(mod, dotted, self._find(mod, dotted))
        for _ in range(8):
            if found is None or not found[1]:
                return found
            target, name = found
            if name in target.imports:
                found = self._find(target, target.imports[name])
                continue
            for star in target.stars:
                deeper = self._find(target, f"{star}.{name}")
                if deeper is not None and deeper[0] is not target:
                    found = deeper
                    break
            else:
                return found
        return found

    def _bound_by_package(self, mod: _Module, dotted: str, found: Optional[Tuple[_Module, str]]) -> Optional[Tuple[_Module, str]]:
        """``pkg.name`` found as the module ``pkg/name.py``: what the import binds is the
        package's attribute, and an ``__init__`` that imports another ``name``
        (``from .upfirdn2d import upfirdn2d``) rebinds it from the submodule to that (so
        ``from op import upfirdn2d`` is stylegan2's function, not its module)."""
        if found is None or found[1] or "." not in dotted:
            return found
        package = self._find(mod, dotted.rpartition(".")[0])
        if package is None or package[1] or os.path.basename(package[0].path) != "__init__.py":
            return found
        init, last = package[0], dotted.rpartition(".")[2]
        bound = init.imports.get(last)
        if bound is None or bound == f"{init.name}.{last}":
            return found
        return init, last

    def imported_paths(self, path: str) -> Set[str]:
        """The files of the program's modules that the module of ``path`` imports (by name,
        as a module, or with ``*``), through re-exports."""
        mod = self.module(path)
        if mod is None:
            return set()
        out = set()
        for dotted in set(mod.imports.values()) | set(mod.stars):
            found = self._resolve(mod, dotted)
            if found is not None:
                out.add(found[0].path)
        return out

    def _context(self, mod: _Module, framework: Optional[str], with_functions: bool) -> Optional[Context]:
        functions: Dict[str, Summary] = {}
        models: Set[str] = set()
        mode_free: Set[str] = set()
        mode_free_functions: Set[str] = set()
        switching: Set[str] = set()
        detaching: List[Tuple[str, Tuple[str, ...], Tuple[str, ...]]] = []
        bases: Dict[str, Tuple[str, ...]] = {}
        stars: Dict[str, Tuple[str, ...]] = {}
        aliases: Dict[str, Tuple[Tuple[str, str], ...]] = {}
        frozen: List[Tuple[str, str, int]] = []
        for dotted in sorted(set(mod.imports.values()) | set(mod.stars)):
            found = self._resolve(mod, dotted)
            if found is None:
                continue
            target, name = found
            # (A class imported by name needs only the model classes: no walk of the module.)
            exports = self.exports(target, with_functions and (not name or _may_be_function(target, name)))
            # Keyed as ``mod`` spells it: ``dotted`` is the function or class itself, or
            # the module whose names follow it.
            for fname, summary in exports.functions:
                if not name:
                    functions[f"{dotted}.{fname}"] = summary
                elif fname == name:
                    functions[dotted] = summary
                elif summary.method and fname.startswith(name + "."):  # a method of a class imported by name
                    functions[dotted + fname[len(name):]] = summary
            known = dict(exports.class_bases)
            for cname in exports.model_classes:
                if not name or cname == name:
                    spelled = f"{dotted}.{cname}" if not name else dotted
                    models.add(spelled)
                    bases[spelled] = known.get(cname, ())
                    if cname in exports.mode_free:
                        mode_free.add(spelled)
                    if cname in exports.switching:
                        switching.add(spelled)
                    for d in exports.detaching:
                        if d[0] == cname:
                            detaching.append((spelled, d[1], d[2]))
                    frozen.extend((spelled, f[1], f[2]) for f in exports.frozen if f[0] == cname)
            for fname in exports.mode_free_functions:
                if not name or fname == name:
                    mode_free_functions.add(f"{dotted}.{fname}" if not name else dotted)
            if dotted in mod.stars:
                stars[dotted] = tuple(n for n, _ in exports.functions) + tuple(exports.model_classes)
                found_aliases = self.star_aliases(target)
                if found_aliases:
                    aliases[dotted] = found_aliases
        fw = framework if framework is not None and not mod.frameworks else None
        if not (functions or models or fw or mode_free_functions or aliases):
            return None
        return Context(mod.package or None, tuple(sorted(functions.items())), tuple(sorted(models)),
                       tuple(sorted(stars.items())), fw, tuple(sorted(bases.items())), mode_free=tuple(sorted(mode_free)),
                       mode_free_functions=tuple(sorted(mode_free_functions)), switching=tuple(sorted(switching)),
                       detaching=tuple(sorted(detaching)), star_aliases=tuple(sorted(aliases.items())),
                       frozen=tuple(sorted(frozen)))

    def star_aliases(self, mod: _Module) -> Tuple[Tuple[str, str], ...]:
        """The framework modules and names ``from <mod> import *`` binds: Python's star
        import binds every public module-level name, imports included, so ``from utils
        import *`` after utils' ``import torch.nn as nn`` binds ``nn`` (older research code
        gets its ``torch`` and ``nn`` this way). Through ``mod``'s own star imports of the
        program's modules too. Nothing where ``mod`` names its exports (``__all__``).
        Computed once per module, over the star imports' strongly connected components
        (modules that star-import each other share one answer)."""
        if mod.path not in self._star_aliases:
            self._star_components(mod, {}, [], set(), {})
        return self._star_aliases.get(mod.path, ())

    def _star_components(self, mod: _Module, index: Dict[str, int], stack: List[_Module], on: Set[str],
                         after: Dict[str, List[_Module]]) -> int:
        """Tarjan's algorithm over star imports from ``mod``: its lowest index; each
        component's answer kept in ``_star_aliases`` once found."""
        low = index[mod.path] = len(index)
        stack.append(mod)
        on.add(mod.path)
        after[mod.path] = []  # the modules it star-imports (of its component or after it)
        if mod.text is not None and "__all__" not in mod.text:
            for star in mod.stars:
                found = self._resolve(mod, star)
                if found is None or found[1]:
                    continue
                other = found[0]
                after[mod.path].append(other)
                if other.path not in index and other.path not in self._star_aliases:
                    low = min(low, self._star_components(other, index, stack, on, after))
                elif other.path in on:
                    low = min(low, index[other.path])
        if low == index[mod.path]:
            members = []
            while True:
                m = stack.pop()
                on.discard(m.path)
                members.append(m)
                if m is mod:
                    break
            out: Dict[str, str] = {}
            paths = {m.path for m in members}
            for m in members:
                for other in after[m.path]:
                    if other.path not in paths:
                        out.update(self._star_aliases.get(other.path, ()))
            for m in members:
                if m.text is not None and "__all__" not in m.text:
                    out.update(_framework_imports(m.text))
            found_aliases = tuple(sorted(out.items()))
            for m in members:
                self._star_aliases[m.path] = found_aliases if m.text is not None and "__all__" not in m.text else ()
        return low


def _may_be_function(mod: _Module, name: str) -> bool:
    """Whether ``name`` may be a function (or a class, for its methods) of ``mod`` whose summary says something: a name
    it imports (a re-export), or a module-level ``def`` whose text (decorators included)
    holds a word a summary rests on (``interfile.may_export``: a grad-mode scope,
    ``eval()``, ``.item()``...). (A summary from the helpers it calls is lost to that
    look: the analysis then knows nothing of the call, and says nothing of it.)"""
    if name in mod.imports:
        return True
    text = mod.text
    if text is None:
        return False
    m = re.search(rf"^(?:@[^\n]*\n(?:[ \t#][^\n]*\n)*)*(?:(?:async[ \t]+)?def|class)[ \t]+{re.escape(name)}\b", text, re.M)
    if m is None:
        return False
    end = _TOP_LEVEL.search(text, m.end())
    definition = text[m.start():end.start() if end is not None else len(text)]
    if re.match(r"(?:@[^\n]*\n(?:[ \t#][^\n]*\n)*)*class\b", definition):
        # A class whose methods switch modes or train (``VSE.val_start``, ``train_emb``):
        # their mode effects are exported (``Summary.method``).
        return _MODE_METHODS.search(definition) is not None or "requires_grad" in definition
    return may_export(definition, False) or calls_a_parameter(definition)


_MODE_METHODS = re.compile(r"\.[ \t]*(?:eval|train|backward|zero_grad|step)[ \t]*\(")


_TOP_LEVEL = re.compile(r"^(?=[^\s#)\]}])", re.M)  # a line that starts a module-level statement


def contexts(paths: Sequence[str], declared: Sequence[Optional[str]], display=lambda p: p,
             texts: Optional[Dict[str, str]] = None, store=None,
             inference: Optional[Sequence[Tuple[str, ...]]] = None, memo: bool = False) -> List[Optional[Context]]:
    """For each file of a run (``declared``: the framework its settings name, if any;
    ``inference``: its inference-function patterns), what it is told of the program:
    None where nothing (most files). ``texts``, ``store``, ``memo``: see ``Program``."""
    program = Program(display, texts, store, memo)
    mods = [program.module(p) if p.endswith(".py") else None for p in paths]
    frameworks = _run_frameworks(program, mods, declared)
    out: List[Optional[Context]] = []
    for i, (mod, fw) in enumerate(zip(mods, frameworks)):
        # Only for a file a rule may fire in (what its text gate lets through): a file
        # that names no framework, unless the run says which, or holds no anchor has no
        # finding whatever the others do (a backward, a step, a scope... is in it).
        patterns = tuple(inference[i]) if inference is not None else DEFAULT_INFERENCE_FUNCTIONS
        linted = mod is not None and (fw is not None or (
            (mod.imports or mod.stars) and mod.text is not None and mentions_framework(mod.text)
            and _may_anchor(program, mod.text, mod.frameworks, patterns)))
        out.append(program.context(mod, fw) if linted else None)
    return _with_callers_off(program, mods, out, [
        tuple(inference[i]) if inference is not None else DEFAULT_INFERENCE_FUNCTIONS for i in range(len(mods))])


def _with_callers_off(program: Program, mods: Sequence[Optional[_Module]], found: List[Optional[Context]],
                      inference: Sequence[Tuple[str, ...]]) -> List[Optional[Context]]:
    """Tells each file whether another file near it (or of the run) imports it, and which
    of its functions and methods other files near it call with
    PyTorch's recording off (``slicing.names_called_without_grad``, matched by name): a
    method ``infer`` of ``model.py`` that ``tts.py`` runs inside ``torch.no_grad()``. Near
    it: the files of its package (or its script's folder), read as context when the run
    does not name them, so one file named alone is told what its folder would tell it;
    also the run's files that import its module. And which of its inference-named
    functions and methods such a file may backpropagate the result of
    (``Context.fed_backward``)."""
    run: Dict[str, str] = {m.path: m.text for m in mods if m is not None and m.text}
    texts: Dict[str, str] = dict(run)  # (the run's files: importers from farther away too)
    nearby: Dict[Tuple[str, ...], Set[str]] = {}
    for files in {_neighbours(m) for m in mods if m is not None and m.text}:
        nearby[files] = set(files)
        for path in files:
            if path not in texts:
                text = run.get(path) or (program.texts[path] if path in program.texts else _read(path))
                if text:
                    texts[path] = text
    linted = [m for m in mods if m is not None and m.text]
    if all(not (m.imports or m.stars) and not (nearby.get(_neighbours(m), set()) - {m.path}) for m in linted):
        # Nothing to tell: no file of the run imports a module of the program (so none is
        # imported, and ``texts`` are the run's files), and none has a neighbour (a
        # package too large to read, a script alone in its folder). Below, every test
        # would be false (torch's own tree: 0.4 s of this process's time, before any
        # worker had its settings).
        return list(found)
    # What each file imports (resolved: only asked of the files that call something of
    # another file without grad), and, for the files that define a ``forward``, whether
    # anything near imports them (asked only of the files whose import lines name them).
    imports_of: Dict[str, Set[str]] = {}

    def imports_it(path: str, mod_path: str) -> bool:
        if path not in imports_of:
            imports_of[path] = program.imported_paths(path) - {path}
        return mod_path in imports_of[path]

    linked_to: Dict[str, str] = {}  # path -> its program's first file (``one_program``)

    def one_program(path: str, mod: _Module) -> bool:
        """``path`` and ``mod`` are files of one program: modules of one top package, or
        files linked by imports, either way and through other files (``train.py``
        imports ``model.py`` and ``utils.py``: a ``model.sample(x)`` in ``utils.py`` may
        be ``Decoder.sample`` of ``model.py``). Sibling scripts of a folder that import
        nothing of each other are separate programs: a method name they share says
        nothing (a ``decoder.sample(z)`` under ``no_grad()`` in one script is no call of
        another script's ``Decoder.sample``)."""
        other = program.module(path)
        if other is not None and mod.package and other.package and other.roots[:1] == mod.roots[:1] and (
                other.package.split(".")[0] == mod.package.split(".")[0]):
            return True
        if not linked_to:
            first = {q: q for q in texts}

            def root(q: str) -> str:
                while first[q] != q:
                    first[q] = first[first[q]]
                    q = first[q]
                return q

            for q in texts:
                if q not in imports_of:
                    imports_of[q] = program.imported_paths(q) - {q}
                for r in imports_of[q]:
                    if r in first:
                        a, b = root(q), root(r)
                        if a != b:
                            first[max(a, b)] = min(a, b)
            linked_to.update((q, root(q)) for q in texts)
        return path in linked_to and linked_to.get(path) == linked_to.get(mod.path)

    own_methods: Dict[str, FrozenSet[str]] = {}

    def may_call_ours(path: str, name: str, mod: _Module) -> bool:
        """A call ``x.<name>(...)`` in the file ``path`` near ``mod`` may be of ``mod``'s
        method ``name``: the two files are one program, or ``path`` defines no method of
        that name itself (an instance can come from anywhere: speechbrain's ``TTS.py``
        runs the ``infer`` of a model it is handed)."""
        if path not in own_methods:
            own_methods[path] = defined_names(texts[path])[1]
        return name not in own_methods[path] or one_program(path, mod) or name in delegated(path)

    delegates: Dict[str, FrozenSet[str]] = {}

    def delegated(path: str) -> FrozenSet[str]:
        """The methods of ``path`` that hand their work to another object's method of the
        same name (``def generate(self, x): return self.model.generate(x)``, a wrapper
        around a model loaded with ``torch.load``): that call is of another class."""
        if path not in delegates:
            delegates[path] = _delegating_methods(texts[path])
        return delegates[path]

    importing: Optional[Dict[str, Set[str]]] = None  # a word of an import line -> the files with it

    def imported_by_name(mod: _Module) -> bool:
        nonlocal importing
        if importing is None:
            importing = {}
            for path, text in texts.items():
                for line in _import_lines(text):
                    for w in _WORDS.findall(line):
                        importing.setdefault(w, set()).add(path)
        return any(imports_it(p, mod.path) for p in importing.get(_stem(mod.path), set()) - {mod.path})

    bare: Dict[str, Set[str]] = {}  # name -> the files calling it without grad, bare
    attr: Dict[str, Set[str]] = {}  # ... or as an attribute (``model.infer(...)``)
    any_bare: Dict[str, Set[str]] = {}  # name -> the files calling it at all, bare
    any_attr: Dict[str, Set[str]] = {}  # ... or as an attribute
    for path, text in texts.items():
        off_bare, off_attr, called_bare, called_attr = _calls_of(program, text)
        for name in off_bare:
            bare.setdefault(name, set()).add(path)
        for name in off_attr:
            attr.setdefault(name, set()).add(path)
        for name in called_bare:
            any_bare.setdefault(name, set()).add(path)
        for name in called_attr:
            any_attr.setdefault(name, set()).add(path)
    fed_of: Dict[str, frozenset] = {}  # path -> the inference-named functions its calls feed a backward

    def fed(path: str, wanted: frozenset) -> frozenset:
        if path not in fed_of:
            fed_of[path] = names_fed_backward(texts[path], wanted)
        return fed_of[path]

    out: List[Optional[Context]] = []
    asked = []  # (index in ``out``, module, its functions called elsewhere, the files importing it)
    for mod, ctx, patterns in zip(mods, found, inference):
        if mod is not None and mod.text and "forward" in mod.text and _DEFINES_FORWARD.search(mod.text) and imported_by_name(mod):
            ctx = dataclasses.replace(ctx if ctx is not None else Context(), imported=True)
        if mod is not None and mod.text:
            top, inner = defined_names(mod.text)
            near = nearby.get(_neighbours(mod), set()) - {mod.path}  # (its package, or its script's folder)

            # A method: called on an object by name from another file near it of the same
            # program (an instance can come from anywhere in it) or from one that imports
            # its module. A module-level function: from a file that imports its module
            # (sibling scripts each have their own ``evaluate``).
            def called(by_bare, by_attr) -> Tuple[str, ...]:
                names = {n for n in inner if any(imports_it(p, mod.path) or (p in near and may_call_ours(p, n, mod))
                                                 for p in by_attr.get(n, set()) - {mod.path})}
                names |= {n for n in top if any(imports_it(p, mod.path) for p in (by_bare.get(n, set()) | by_attr.get(n, set())) - {mod.path})}
                return tuple(sorted(n for n in names if not n.startswith("__")))

            names = called(bare, attr) if bare or attr else ()
            if names:
                ctx = dataclasses.replace(ctx if ctx is not None else Context(), called_off=names)
            # (with grad or without: the callers in this file are not all its callers).
            # Only from a file that imports its module: sibling scripts of one folder
            # (each with its own ``_step``) do not call each other's functions.
            elsewhere = tuple(sorted(
                n for n in top | inner if not n.startswith("__")
                and any(imports_it(p, mod.path) for p in (any_bare.get(n, set()) | any_attr.get(n, set())) - {mod.path})))
            if elsewhere:
                ctx = dataclasses.replace(ctx if ctx is not None else Context(), called_elsewhere=elsewhere)
                named = frozenset(filter(name_matcher(tuple(patterns)), elsewhere))
                feeding = {p for n in named for p in any_bare.get(n, set()) | any_attr.get(n, set())} - {mod.path}
                fed_names = tuple(sorted(n for n in named if any(
                    n in fed(p, named) and (imports_it(p, mod.path) or (n in inner and p in near and may_call_ours(p, n, mod)))
                    for p in sorted(feeding))))
                if fed_names:
                    ctx = dataclasses.replace(ctx, fed_backward=fed_names)
                asked.append((len(out), mod, top & set(elsewhere), [p for p in texts if p != mod.path and imports_it(p, mod.path)]))
        out.append(ctx)
    # (each importer read once for every module it imports: one scan answers for all)
    for i, (entered, looped, entered_eval) in zip([a[0] for a in asked], _from_importers(program, [a[1:] for a in asked])):
        if entered or looped or entered_eval:
            out[i] = dataclasses.replace(out[i] if out[i] is not None else Context(), entered=entered, looped=looped,
                                         entered_eval=entered_eval)
    return out


def _calls_of(program: Program, text: str) -> Tuple[FrozenSet[str], ...]:
    """What ``text`` calls with PyTorch's recording off and at all, bare and as an
    attribute (``slicing.names_called_without_grad``, ``slicing.names_called``), kept
    in the run's store: these scans of every text of the program were most of a cached
    run on mxnet's tree."""
    found = program.stored("calls", text, "", lambda: [sorted(k) for k in (
        (names_called_without_grad(text) if "torch" in text else (frozenset(), frozenset())) + names_called(text))])
    return tuple(frozenset(k) for k in found)


def _may_anchor(program: Program, text: str, frameworks: Iterable[str], inference: Tuple[str, ...]) -> bool:
    """``slicing.text_may_anchor``, kept in the run's store."""
    frameworks = tuple(sorted(frameworks))
    return program.stored("anchor", text, repr((frameworks, inference)), lambda: text_may_anchor(text, frameworks, inference))


def _delegating_methods(text: str) -> FrozenSet[str]:
    """Names of the methods of ``text`` that call a method of the same name on an object
    other than their own (``self.model.generate(...)`` inside ``def generate(self, ...)``).
    A text that does not parse: none. (Parsed once with the importer scans of
    ``callsites``, which read the same texts.)"""
    import ast

    from scopelint.core.callsites import parsed

    tree = parsed(text)
    if tree is None:
        return frozenset()
    out = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args:
                continue
            me = fn.args.args[0].arg
            for n in ast.walk(fn):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == fn.name and not (
                        isinstance(n.func.value, ast.Name) and n.func.value.id == me):
                    out.add(fn.name)
    return frozenset(out)


def _call_states(program: Program, text: str, names, classes):
    """``callsites.call_states``, kept in the run's store (a warm run reads the calls each
    importer makes instead of walking it again: on a package whose modules import each
    other, most of a warm run's time)."""
    from scopelint.core.callsites import call_states

    store = program.store
    key = store.value_key("callsites", text, repr((sorted(names.items()), sorted(classes.items())))) if store is not None else None
    kept = store.get_value(key) if key is not None else None
    if kept is not None:
        try:
            return {k: None if calls is None else [(line, _state(t), _state(m), looped, tuple(ev)) for line, t, m, looped, ev in calls]
                    for k, calls in kept.items()}
        except (TypeError, ValueError):
            pass
    found = call_states(text, names, classes)
    if key is not None:
        store.put_value(key, found)
    return found


def _state(s):
    return tuple(s) if s is not None else None


def _from_importers(program: Program, asked: List[Tuple[_Module, Set[str], List[str]]]):
    """For each (module, its module-level functions, the files importing it) of ``asked``,
    what those importers tell of its calls (``callsites.call_states``, read from their
    text, one scan per importer for every module it imports): of the ``functions``, the
    recording state each is entered in where every one of their calls agrees, as
    (function, framework, "on"/"off", the API that set it or "", where the first call
    is); and of those and of its classes' methods called on an instance (``Trainer.step``),
    the ones a loop runs, as (name, where). A function one of them uses other than by a
    call (or names by a spelling the scan does not follow) gets no entry state: its
    callers are not all seen."""
    per_importer: Dict[str, Tuple[Dict[Tuple[str, ...], str], Dict[Tuple[str, ...], str]]] = {}
    lost_of: List[Set[str]] = [set() for _ in asked]
    for i, (mod, functions, importers) in enumerate(asked):
        classes_here = set(_CLASS.findall(mod.text or ""))
        for path in importers:
            importer = program.module(path)
            if importer is None or not importer.text:
                continue
            names, classes = per_importer.setdefault(path, ({}, {}))
            for local, dotted in importer.imports.items():
                target = program._resolve(importer, dotted)
                if target is None or target[0] is not mod:
                    continue
                if target[1] in functions:
                    names[(local,)] = f"{i}\0{target[1]}"
                elif target[1] in classes_here:
                    classes[(local,)] = f"{i}\0{target[1]}"
                elif not target[1]:
                    names.update(((local, f), f"{i}\0{f}") for f in functions)
                    classes.update(((local, c), f"{i}\0{c}") for c in classes_here)
            if importer.stars and any((r := program._resolve(importer, star)) is not None and r[0] is mod for star in importer.stars):
                lost_of[i].update(functions)  # (``from engine import *``: its bare names are those)
    found_of: List[Dict[str, list]] = [{} for _ in asked]
    looped_of: List[Dict[str, str]] = [{} for _ in asked]
    for path in sorted(per_importer):
        names, classes = per_importer[path]
        if not names and not classes:
            continue
        where = program.display(path)
        for prefixed, calls in _call_states(program, program.module(path).text, names, classes).items():
            i, key = prefixed.split("\0", 1)
            i = int(i)
            if calls is None:
                lost_of[i].add(key)
                continue
            for line, _, _, in_loop, _ in calls:
                if in_loop:
                    looped_of[i].setdefault(key, f"{where}:{line}")
            if "." in key:
                continue  # (a method: some of its calls, never all)
            found_of[i].setdefault(key, []).extend((f"{where}:{line}", torch, mx, ev) for line, torch, mx, _, ev in calls)
    return [_entered(found, lost, looped) for found, lost, looped in zip(found_of, lost_of, looped_of)]


def _entered(found: Dict[str, list], lost: Set[str], looped: Dict[str, str]):
    entered = []
    in_eval = []  # (function, the arguments in eval mode at every call, where the first call is)
    for key in sorted(set(found) - lost):
        calls = found[key]
        common = set(calls[0][3]).intersection(*(c[3] for c in calls[1:]))
        if common:
            in_eval.append((key, tuple(sorted(common)), calls[0][0]))
        parts = {"torch": [c[1] for c in calls],
                 "mxnet": [c[2][:2] if c[2] is not None else None for c in calls],
                 "mx_train": [(c[2][2], None) if c[2] is not None and c[2][2] is not None else None for c in calls]}
        for fw, states in parts.items():
            if len(set(states)) != 1 or states[0] is None:
                continue
            mode, api = states[0]
            entered.append((key, fw, mode, api or "", calls[0][0]))
    return tuple(entered), tuple(sorted(looped.items())), tuple(in_eval)


_CLASS = re.compile(r"^class[ \t]+([A-Za-z_]\w*)", re.M)  # a module-level class


_MOST_NEIGHBOURS = 2000  # files of one package read for its callers (a larger one: the run's alone)
_WORDS = re.compile(r"\w+")


def _import_lines(text: str) -> Iterable[str]:
    """The lines of ``text`` that start with ``import`` or ``from`` (found from each
    ``import``: a literal is searched much faster than a line start)."""
    at = text.find("import")
    seen = -1
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        if start != seen:
            seen = start
            line = text[start:end]
            head = line.lstrip(" \t")
            if head.startswith(("import", "from")):
                yield line
        at = text.find("import", end)


_DEFINES_FORWARD = re.compile(r"def[ \t]+(?:hybrid_)?forward\b")


@functools.lru_cache(maxsize=256)
def _package_files(folder: str, recursive: bool) -> Tuple[str, ...]:
    found: List[str] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules") and d not in _INSTALLED) if recursive else []
        found.extend(os.path.join(here, f) for f in sorted(files) if f.endswith(".py"))
        if len(found) > _MOST_NEIGHBOURS:
            return ()
    return tuple(found)


def _neighbours(mod: _Module) -> Tuple[str, ...]:
    """The files whose calls may enter ``mod``'s functions: its top package's and the
    scripts beside that package (``main.py`` next to ``engine/``, which imports it), or,
    for a script, its folder's."""
    if not mod.roots:
        return ()
    if mod.package:
        package = _package_files(os.path.join(mod.roots[0], mod.package.split(".")[0]), True)
        return package + _package_files(mod.roots[0], False) if package else ()
    return _package_files(os.path.dirname(mod.path), False)


def with_program(settings, path: str, texts: Dict[str, str], display=lambda p: p, memo: bool = False):
    """``settings`` for the one file ``path`` (an editor's document), with what the
    program around it tells it; ``texts``: the editor's open documents by path (the
    document's own included), which stand for the files on disk. ``memo``: see
    ``Program`` (a server that lints again and again)."""
    from dataclasses import replace

    found = contexts([path], [settings.framework], display, texts, inference=[settings.inference_functions], memo=memo)[0]
    return settings if found is None else replace(settings, project=found)


def imports_module(text: str, path: str) -> bool:
    """Whether ``text`` may import the module of the file ``path`` (a line that imports
    and names it: an editor re-lints the documents that may depend on a changed one)."""
    stem = _stem(path)
    return stem.isidentifier() and re.search(rf"^[ \t]*(?:from|import)\b[^\n]*\b{re.escape(stem)}\b", text, re.M) is not None


def _stem(path: str) -> str:
    """The name a module of the file ``path`` is imported by (its package's, for an
    ``__init__.py``)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem


def _run_frameworks(program: Program, mods: Sequence[Optional[_Module]], declared: Sequence[Optional[str]]) -> List[Optional[str]]:
    """Per file that imports no framework and may hold an anchor, the framework the
    program says it is for: its settings' ``framework``, else its project's
    dependencies, else the one framework of the files importing a function or class of
    it, or all of it (``*``) (among the run's files, its folder's and its top folder's:
    alike whether the folder or one file is named)."""
    out: List[Optional[str]] = []
    importers: Dict[str, Set[str]] = {}  # module path -> frameworks of the files importing from it
    scanned: Set[str] = set()  # folders whose modules are in ``importers``
    run = [m for m in mods if m is not None]
    for mod, fw in zip(mods, declared):
        if mod is None or mod.text is None or mentions_framework(mod.text):
            out.append(None)  # (it names a framework: its imports say which)
            continue
        if fw is None:
            fw = _dependency_framework(os.path.dirname(mod.path))
        if fw is None and _neighbour_folders(mod) and any(_may_anchor(program, mod.text, (f,), ()) for f in FRAMEWORKS):
            if not scanned:
                _note_importers(program, run, importers)
                scanned.add("")
            for folder in _neighbour_folders(mod) - scanned:
                scanned.add(folder)
                _note_importers(program, _modules_in(program, folder), importers)
            fws = importers.get(mod.path, set())
            fw = next(iter(fws)) if len(fws) == 1 else None
        # (Only for a file that holds something a rule reads.)
        if fw is not None and not _may_anchor(program, mod.text, (fw,), ()):
            fw = None
        out.append(fw)
    return out


def _note_importers(program: Program, modules: Iterable[_Module], into: Dict[str, Set[str]]) -> None:
    """Into ``into``: for each module a function or class is imported from by one of
    ``modules`` that imports exactly one framework, that framework."""
    for other in modules:
        if not (other.imports or other.stars) or len(other.frameworks) != 1:
            continue
        # (``from engine import *`` imports its functions as a named import does.)
        for dotted in set(other.imports.values()) | set(other.stars):
            found = program._find(other, dotted)
            if found is not None and (found[1] or dotted in other.stars):
                into.setdefault(found[0].path, set()).update(other.frameworks)


def _neighbour_folders(mod: _Module) -> Set[str]:
    if _program_imports(*_import_scope(mod)) is None:
        return set()  # (nothing near it may import a module of the program)
    return {os.path.dirname(mod.path), *mod.roots[:1]}


def _modules_in(program: Program, folder: str) -> List[_Module]:
    """The modules of ``folder`` (the first ``_MOST_NEIGHBOURS``)."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    except OSError:
        return []
    found = (program.module(os.path.join(folder, n)) for n in names[:_MOST_NEIGHBOURS])
    return [m for m in found if m is not None]


_MOST_NEIGHBOURS = 500
_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")


@functools.lru_cache(maxsize=1024)
def _project_root(folder: str) -> Optional[str]:
    """The nearest folder at or above ``folder`` that holds a .git or a project file."""
    current = folder
    while True:
        if any(os.path.exists(os.path.join(current, m)) for m in _ROOT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


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


# Import statements, in any block (a function's too: the analysis reads each in its
# scope, a summary too many is one nobody asks for). Read from the text, not ``ast``:
# in a package nearly every module imports another, and parsing each costs more than
# the rest of this layer.
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|(?:[^\n\\;#]|\\\n)*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+((?:[^\n\\;#]|\\\n)*)", re.M)
_ALIAS = re.compile(r"^([\w.]+|\*)(?:\s+as\s+(\w+))?$")


def _framework_imports(text: str) -> Dict[str, str]:
    """A module's module-level (unindented) imports of the frameworks, by the public
    name each binds: ``import torch.nn as nn`` -> ``nn: torch.nn``, ``import mxnet as mx``,
    ``from mxnet import gluon`` -> ``gluon: mxnet.gluon``, ``import torch`` -> ``torch``."""
    out: Dict[str, str] = {}
    if "torch" not in text and "mxnet" not in text:
        return out
    for m in _FROM.finditer(text):
        if m.group(0)[:1] in " \t" or m.group(1) or not _is_framework(m.group(2)):
            continue
        for name, local in _names(m.group(3)):
            if name != "*" and "." not in name and not (local or name).startswith("_"):
                out[local or name] = f"{m.group(2)}.{name}"
    for m in _IMPORT.finditer(text):
        if m.group(0)[:1] in " \t":
            continue
        for name, local in _names(m.group(1)):
            if _is_framework(name) and not (local or name).startswith("_"):
                out[local or name.split(".", 1)[0]] = name if local else name.split(".", 1)[0]
    return out


def _names(text: str) -> List[Tuple[str, Optional[str]]]:
    """``a, b as c`` (or ``(a,\n b)``, comments and continuation lines in it) as
    (name, alias) pairs; what does not read as one is left out."""
    text = re.sub(r"#[^\n]*", "", text).replace("\\\n", " ").strip().strip("()")
    out = []
    for part in text.split(","):
        m = _ALIAS.match(part.strip())
        if m is not None:
            out.append((m.group(1), m.group(2)))
    return out


def _import_scope(mod: _Module) -> Tuple[Tuple[str, ...], bool]:
    """Where ``mod``'s absolute imports of the program are found, and whether its
    relative ones are of the program (not a framework's own package)."""
    return mod.roots, bool(mod.package) and not _is_framework(mod.package)


@functools.lru_cache(maxsize=256)
def _program_imports(roots: Tuple[str, ...], relative: bool) -> "Optional[re.Pattern[str]]":
    """A search for the import statements that may name a module of the program: of the
    modules and folders in ``roots`` (packages, and folders without an ``__init__.py``:
    namespace packages; frameworks' aside), and relative ones where ``relative``; None
    when there are none."""
    names = set()
    for root in roots:
        try:
            entries = os.listdir(root)
        except OSError:
            continue
        for entry in entries:
            stem = entry[:-3] if entry.endswith(".py") else entry
            if stem.isidentifier() and not _is_framework(stem) and (entry.endswith(".py") or os.path.isdir(os.path.join(root, entry))):
                names.add(re.escape(stem))
    names = sorted(names)
    alternatives = []
    if names:
        either = "|".join(names)
        alternatives.append(rf"from[ \t]+(?:{either})\b|import[ \t]+(?:[\w.]+[ \t]*(?:as[ \t]+\w+[ \t]*)?,[ \t]*)*(?:{either})\b")
    if relative:
        alternatives.append(r"from[ \t]+\.")
    if not alternatives:
        return None
    return re.compile(rf"^[ \t]*(?:{'|'.join(alternatives)})", re.M)


def _read(path: str) -> Optional[str]:
    """A regular file's text (a FIFO, a device, a folder: None, never a hang)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MOST_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
