"""What a project tells a fragment's harness: where its file runs from, and which of the
project's own model classes fills a ``model`` hole.

``scopelint verify <folder>`` lints the files of the run as one program
(``scopelint.project``). A flagged ``train_one_epoch(model, loader, optimizer,
criterion)`` in ``engine.py`` that nothing in its own file calls gets a synthesized
harness (``runtime_check.synth``); this module reads the rest of the program for it:

- **Layout** (``layout``): a file inside a package (its folder holds ``__init__.py``)
  runs as ``python -m pkg.engine`` would, from the folder above its top package (that
  folder is copied; ``from .models import Net`` resolves); a script runs from its own
  folder (``import utils`` finds its sibling).
- **Model class** (``Project.model_for``): for a ``model`` parameter of the flagged
  function, the class the project passes there -- from its call sites in the other
  files (``train_one_epoch(model, ...)`` where ``model = Net(...).to(device)``), else
  its type hint (``model: Net``), else the project's only model class -- resolved
  through the program's imports (``Program._resolve``) to the module that defines it.
  Its constructor's arguments come from the call site where they are literals, else
  from their names (small ints: ``num_classes``, ``hidden_size``; defaults stay); a
  required argument neither gives (``Net(cfg)``) leaves the stand-in, and says why.

Only syntax is read here (``ast``, and the linter's project layer): nothing is imported.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

# Constructor arguments filled by their names (values small enough to run in a second).
SIZE_VALUES = [
    (re.compile(r"^(n_?|num_?)?(classes|class|labels|outputs?|out_?(features|dim|size|channels)?|targets)$|^nclass(es)?$|^output_(dim|size)$", re.I), 3),
    (re.compile(r"^(n_?|num_?)?(in_?(put)?_?(features|dim|size|channels)?|inputs|features|feature_dim|in_dim|input_dim)$|^nin$", re.I), 8),
    (re.compile(r"^(n_?|num_?)?(hidden|hid|hidden_?(size|dim|units|features)|nhid|d_?model|embed(ding)?_?(dim|size)?|ninp|emsize|width|channels)$", re.I), 16),
    (re.compile(r"^(vocab(_size)?|ntokens?|n_?tokens|num_?tokens|n_?vocab)$", re.I), 20),
    (re.compile(r"^(n_?|num_?)(layers?|blocks?|heads?)$|^nlayers$|^depth$", re.I), 1),
]
FLOAT_VALUES = re.compile(r"^(dropout|drop_?(rate|prob|p)?|p_?drop|p)$", re.I)
MODEL_BASES = {"Module", "Block", "HybridBlock", "Sequential", "HybridSequential", "SymbolBlock"}
UNWRAP = {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "initialize", "hybridize"}


@dataclass
class Layout:
    """Where a file runs from: ``root`` is copied, the file is ``relpath`` in it;
    ``module`` (dotted) when it runs as a module of its package (``python -m``);
    ``paths``: more folders (relative to ``root``) its imports are found in; ``cwd``: its
    working folder (relative to ``root``; None: its own folder)."""

    root: str
    relpath: str
    module: Optional[str] = None
    paths: Tuple[str, ...] = ()
    cwd: Optional[str] = None


@dataclass
class ModelChoice:
    """The project's class for a ``model`` hole: ``module`` (dotted, importable from the
    run's root) and ``cls``; ``args`` its constructor's arguments as Python text; or,
    when it cannot be built, ``why`` (the harness then uses its stand-in)."""

    cls: str
    module: str
    where: str  # for messages: models.py:12
    how: str  # why this class: "passed by train.py:20", "type hint", "the project's only model class"
    args: Optional[str] = None
    why: Optional[str] = None
    framework: str = "torch"
    path: str = ""  # the file that defines it
    same_file: bool = False  # defined in the flagged file itself: built after it ran

    @property
    def usable(self) -> bool:
        return self.why is None

    def describe(self) -> str:
        return f"the project's `{self.cls}({self.args or ''})` ({self.where}; {self.how})"


def layout(path: str, program=None) -> Layout:
    """How the file at ``path`` runs: as a module of its package, or as a script."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    mod = program.module(path) if program is not None else None
    if mod is not None and mod.package and os.path.basename(path) != "__init__.py":
        top = folder
        for _ in mod.package.split("."):
            top = os.path.dirname(top)
        return Layout(top, os.path.relpath(path, top), mod.name)
    if mod is not None and program is not None:
        # A script in a subfolder of its project (``python tools/train.py`` from the root,
        # the root on the path) that imports the project's modules from there: it runs
        # from a copy of the root.
        for root in mod.roots:
            if root == folder or not folder.startswith(root.rstrip(os.sep) + os.sep):
                continue
            for dotted in set(mod.imports.values()) | set(mod.stars):
                try:
                    found = program._resolve(mod, dotted)
                except Exception:
                    found = None
                if found is not None and not found[0].path.startswith(folder + os.sep) and found[0].path.startswith(root + os.sep):
                    return Layout(root, os.path.relpath(path, root), None, (".",), ".")
    return Layout(folder, os.path.basename(path))


def _parse(text: Optional[str]) -> Optional[ast.Module]:
    if not text:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string hint: "Net"
        return node.value if re.fullmatch(r"[\w.]+", node.value) else None
    return None


def _constructor(node: ast.AST) -> Optional[ast.Call]:
    """The class call inside ``Net(...).to(device)``, ``nn.DataParallel(Net())``..."""
    for _ in range(6):
        if not isinstance(node, ast.Call):
            return None
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in UNWRAP and isinstance(f.value, ast.Call):
            node = f.value
            continue
        if _dotted(f) in ("nn.DataParallel", "torch.nn.DataParallel", "DataParallel") and node.args:
            node = node.args[0]
            continue
        return node
    return None


@dataclass
class _File:
    path: str
    tree: ast.Module
    mod: object  # scopelint.project._Module


@dataclass
class Project:
    """The run's files as a program, read for harnesses (parsed when first asked: a
    layout needs only the program's modules)."""

    paths: Sequence[str]
    program: object = None
    _files: Optional[Dict[str, _File]] = None

    @classmethod
    def of(cls, paths: Iterable[str]) -> "Project":
        from scopelint.project import Program

        return cls([os.path.abspath(p) for p in paths if str(p).endswith(".py")], Program())

    @property
    def files(self) -> Dict[str, _File]:
        if self._files is None:
            self._files = {}
            for p in self.paths:
                mod = self.program.module(p)
                tree = _parse(mod.text) if mod is not None else None
                if tree is not None:
                    self._files[p] = _File(p, tree, mod)
        return self._files

    def layout(self, path: str) -> Layout:
        return layout(path, self.program)

    # --- which class ----------------------------------------------------------------
    def model_for(self, path: str, function: str, param: str) -> Optional[ModelChoice]:
        """The project's class for ``param`` of ``function`` (defined in ``path``), or
        None when the project says nothing (the stand-in is used)."""
        path = os.path.abspath(path)
        choice = self._model_for(path, function, param)
        if choice is not None:
            choice.same_file = choice.path == path
        return choice

    def _model_for(self, path: str, function: str, param: str) -> Optional[ModelChoice]:
        me = self.files.get(path)
        if me is None:
            return None
        fn = next((n for n in me.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function), None)
        if fn is None:
            return None
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        for caller, call in self._call_sites(path, function):
            arg = self._argument(call, params, param)
            if arg is None:
                continue
            built = self._built_from(caller, call, arg)
            if built is None:
                continue
            class_call, scope_file = built
            choice = self._class_choice(scope_file, class_call, f"passed to `{function}` at {self._where(caller.path, call.lineno)}")
            if choice is not None:
                return choice
        # its type hint
        for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if a.arg == param and a.annotation is not None:
                spelled = _dotted(a.annotation)
                if spelled:
                    choice = self._class_choice(me, ast.Call(func=ast.Name(spelled), args=[], keywords=[]), "its type hint",
                                                spelled=spelled)
                    if choice is not None:
                        return choice
        # the project's only model class
        classes = [(f, c) for f in self.files.values() for c in f.tree.body
                   if isinstance(c, ast.ClassDef) and self._is_model(f, c)]
        if len(classes) == 1:
            f, c = classes[0]
            return self._build(f, c, None, "the project's only model class")
        return None

    def own_class(self, path: str, name: str) -> Optional[ModelChoice]:
        """The class ``name`` of the file at ``path`` (a flagged method's), built as a
        model class is; None where it is not one."""
        me = self.files.get(os.path.abspath(path))
        cls = next((n for n in me.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None) if me else None
        if cls is None or not self._is_model(me, cls):
            return None
        choice = self._build(me, cls, None, "the flagged method's class")
        choice.same_file = True
        return choice

    def _where(self, path: str, line: int) -> str:
        return f"{os.path.basename(path)}:{line}"

    def _call_sites(self, path: str, function: str) -> Iterable[Tuple[_File, ast.Call]]:
        """Calls of ``function`` of the module at ``path`` in the other files."""
        for f in self.files.values():
            if f.path == path:
                continue
            names = set()  # local spellings of the function
            mods = set()  # local names of the module
            for local, dotted in f.mod.imports.items():
                found = self.program._resolve(f.mod, dotted)
                if found is None or found[0].path != path:
                    continue
                if found[1] == function:
                    names.add(local)
                elif not found[1]:
                    mods.add(local)
            stars = any((self.program._find(f.mod, s) or (None,))[0] is not None and self.program._find(f.mod, s)[0].path == path
                        for s in f.mod.stars)
            if stars:
                names.add(function)
            if not names and not mods:
                continue
            for node in ast.walk(f.tree):
                if not isinstance(node, ast.Call):
                    continue
                fn = node.func
                if isinstance(fn, ast.Name) and fn.id in names:
                    yield f, node
                elif isinstance(fn, ast.Attribute) and fn.attr == function and _dotted(fn.value) in mods:
                    yield f, node

    @staticmethod
    def _argument(call: ast.Call, params: List[str], param: str) -> Optional[ast.AST]:
        for kw in call.keywords:
            if kw.arg == param:
                return kw.value
        if param in params:
            i = params.index(param)
            positional = [a for a in call.args if not isinstance(a, ast.Starred)]
            if i < len(positional) and len(positional) == len([a for a in call.args]):
                return positional[i]
        return None

    def _built_from(self, caller: _File, call: ast.Call, arg: ast.AST) -> Optional[Tuple[ast.Call, _File]]:
        """The constructor call that made ``arg`` (the expression passed): the call
        itself, or the last assignment to that name before ``call`` in its function (or
        at module level)."""
        direct = _constructor(arg)
        if direct is not None:
            return direct, caller
        if not isinstance(arg, ast.Name):
            return None
        scope = _enclosing(caller.tree, call) or caller.tree
        best = None
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and node.lineno <= call.lineno:
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id == arg.id:
                        made = _constructor(node.value)
                        if made is not None and (best is None or node.lineno > best.lineno):
                            best = made
        return (best, caller) if best is not None else None

    def _class_choice(self, scope: _File, class_call: ast.Call, how: str, spelled: Optional[str] = None) -> Optional[ModelChoice]:
        spelled = spelled or _dotted(class_call.func)
        if not spelled:
            return None
        target = self._find_class(scope, spelled)
        if target is None:
            return None
        f, cls = target
        if not self._is_model(f, cls):
            return None
        return self._build(f, cls, class_call, how)

    def _find_class(self, scope: _File, spelled: str) -> Optional[Tuple[_File, ast.ClassDef]]:
        head, _, rest = spelled.partition(".")
        if not rest:
            for node in scope.tree.body:
                if isinstance(node, ast.ClassDef) and node.name == spelled:
                    return scope, node
        dotted = scope.mod.imports.get(head)
        if dotted is None:
            return None
        found = self.program._resolve(scope.mod, f"{dotted}.{rest}" if rest else dotted)
        if found is None or not found[1] or "." in found[1]:
            return None
        mod, name = found
        f = self.files.get(mod.path)
        if f is None:  # a module of the program outside the run
            tree = _parse(mod.text)
            if tree is None:
                return None
            f = self.files[mod.path] = _File(mod.path, tree, mod)
        for node in f.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return f, node
        return None

    def _is_model(self, f: _File, cls: ast.ClassDef, depth: int = 0) -> bool:
        for base in cls.bases:
            spelled = _dotted(base) or ""
            if spelled.rsplit(".", 1)[-1] in MODEL_BASES:
                return True
            if depth < 3:
                found = self._find_class(f, spelled) if spelled else None
                if found is not None and found[1] is not cls and self._is_model(found[0], found[1], depth + 1):
                    return True
        return False

    # --- how to build it --------------------------------------------------------------
    def _build(self, f: _File, cls: ast.ClassDef, call: Optional[ast.Call], how: str) -> ModelChoice:
        text = f.mod.text or ""
        framework = "mxnet" if re.search(r"^\s*(import mxnet|from mxnet)", text, re.M) else "torch"
        choice = ModelChoice(cls.name, f.mod.name, self._where(f.path, cls.lineno), how, framework=framework, path=f.path)
        init = self._init_of(f, cls)
        if init is None:
            choice.args = ""
            return choice
        args = init.args
        positional = [a.arg for a in args.posonlyargs + args.args][1:]  # (self)
        n_required = len(positional) - len(args.defaults)
        required = positional[:n_required] + [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
        given: Dict[str, str] = {}
        if call is not None:  # the call site's literal arguments
            for i, a in enumerate(call.args):
                if isinstance(a, ast.Starred) or i >= len(positional):
                    break
                if _literal(a):
                    given[positional[i]] = ast.unparse(a)
            for kw in call.keywords:
                if kw.arg is not None and _literal(kw.value):
                    given[kw.arg] = ast.unparse(kw.value)
        out = []
        for name in required:
            value = given.get(name) or by_name(name)
            if value is None:
                choice.why = (f"the project's `{cls.name}` ({choice.where}) needs `{name}`, which the harness cannot fill "
                              f"(not a literal where it is built, and its name does not say what it holds)")
                return choice
            out.append(f"{name}={value}")
        out += [f"{name}={value}" for name, value in given.items() if name not in required and name in positional + [a.arg for a in args.kwonlyargs]]
        choice.args = ", ".join(out)
        return choice

    def _init_of(self, f: _File, cls: ast.ClassDef, depth: int = 0) -> Optional[ast.FunctionDef]:
        for node in cls.body:
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                return node
        if depth < 3:  # inherited from a project class
            for base in cls.bases:
                spelled = _dotted(base)
                found = self._find_class(f, spelled) if spelled else None
                if found is not None and found[1] is not cls:
                    return self._init_of(found[0], found[1], depth + 1)
        return None


def by_name(name: str) -> Optional[str]:
    """A constructor argument's value from its name, or None."""
    for pattern, value in SIZE_VALUES:
        if pattern.match(name):
            return str(value)
    if FLOAT_VALUES.match(name):
        return "0.5"
    return None


def _literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _enclosing(tree: ast.Module, target: ast.AST) -> Optional[ast.AST]:
    """The innermost function holding ``target``."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= target.lineno <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


class Asker:
    """What the harness of one file asks its project (``synth.plan``'s ``project``):
    ``model(function, parameter)``, the class for a model parameter, and
    ``own(cls)``, the flagged method's class. An analysis bug answers None (the stand-in);
    in a project of several files, a model no class fills says why."""

    def __init__(self, project: Callable[[], Project], path: str, files: int = 1):
        self._project, self.path, self.files = project, path, files

    def model(self, function: str, param: str) -> Optional[ModelChoice]:
        try:
            found = self._project().model_for(self.path, function, param)
        except Exception:
            return None
        if found is None and self.files > 1:
            return ModelChoice("", "", "", "", why="no model class of the project is passed there or hinted, and it has not exactly one")
        return found

    def own(self, cls: str) -> Optional[ModelChoice]:
        try:
            return self._project().own_class(self.path, cls)
        except Exception:
            return None
