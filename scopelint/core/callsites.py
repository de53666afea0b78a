"""The recording state at each call a module makes of names it imports, read from its
text with the stdlib ``ast`` (no analysis of the module: the project layer asks this of
every file that imports another module of the program, so it must be cheap).

A call's state is known only where the text alone decides it: inside ``with
torch.no_grad():``/``inference_mode()``/``set_grad_enabled(False)``, ``enable_grad()``/
``set_grad_enabled(True)``, MXNet's ``autograd.record()``/``pause()``, in a function
decorated with ``@torch.no_grad()``/``@torch.inference_mode()``, or in module-level code
(each framework's default: PyTorch records, MXNet does not), unless the module switches
a mode globally (``set_grad_enabled(...)`` as a statement, ``set_recording(...)``). A
call inside another function (its entry state is that of its own callers), a lambda, or
a ``with`` of something unknown that may be a grad mode (``with ctx:``,
``with maybe_no_grad():``) is unknown. A name that is used other than by a call
(handed to a runner, stored) has callers nobody sees.

The project layer (``scopelint.project``) joins these states over the program's files
into ``Context.entered``: the state a function of another module is entered in, where
all its calls agree; and the calls a loop runs (of functions, and of methods called on an
instance of an imported class: ``trainer.step(x)``) into ``Context.looped``.

Two facts of a module's own model classes are read here too, for the modules that call
their instances (``Exports``): a ``forward`` that switches recording itself on some path
(``forwards_switching_recording``) and one that detaches the state it is handed
(``forwards_detaching``).
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from typing import Dict, List, Optional, Tuple

ON, OFF = "on", "off"
# A framework's recording state at a call: (ON or OFF, the API that set it, None for the
# module-level default), or None: unknown.
State = Optional[Tuple[str, Optional[str]]]
# MXNet's: (recording ON or OFF, the API that set it, its training flag ON/OFF/None), or
# None: unknown.
MxState = Optional[Tuple[str, Optional[str], Optional[str]]]
# (framework, state) -> the with-item or decorator call that sets it, by its last name.
_TORCH_OFF = frozenset(("no_grad", "inference_mode"))
_TORCH_ON = frozenset(("enable_grad",))
_GLOBAL_SETTERS = frozenset(("set_grad_enabled", "set_recording", "set_training", "_set_grad_enabled"))
# Words in the name of a context manager that may switch a grad mode we cannot read.
_MAYBE_MODE = ("grad", "record", "pause", "infer", "mode", "ctx", "context", "scope")


def _last_name(func: ast.expr) -> Optional[str]:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _constant_bool(args) -> Optional[bool]:
    if len(args) == 1 and isinstance(args[0], ast.Constant) and isinstance(args[0].value, bool):
        return args[0].value
    return None


def _with_item(item: ast.withitem, torch: State, mxnet: MxState) -> Tuple[State, MxState]:
    expr = item.context_expr
    if not isinstance(expr, ast.Call):
        return None, None  # (``with ctx:``: anything)
    name = _last_name(expr.func)
    if name is None:
        return None, None
    if name in _TORCH_OFF:
        return (OFF, f"torch.{name}"), mxnet
    if name in _TORCH_ON:
        return (ON, f"torch.{name}"), mxnet
    if name == "set_grad_enabled":
        flag = _constant_bool(expr.args)
        return (None if flag is None else (ON if flag else OFF, "torch.set_grad_enabled")), mxnet
    if name in ("record", "pause", "train_mode", "predict_mode"):
        # MXNet: recording, and the training flag (Dropout/BatchNorm); ``train_mode=`` as
        # written, else each scope's default
        given = _keyword_or_first(expr, "train_mode")
        train = {"record": ON, "pause": OFF, "train_mode": ON, "predict_mode": OFF}[name]
        if name in ("record", "pause") and (expr.args or expr.keywords):
            train = None if given is None else (ON if given else OFF)
        if name == "record":
            return torch, (ON, "mxnet.autograd.record", train)
        if name == "pause":
            return torch, (OFF, "mxnet.autograd.pause", train)
        return torch, (mxnet[0], mxnet[1], train) if mxnet is not None else None
    if any(w in name.lower() for w in _MAYBE_MODE):
        return None, None
    return torch, mxnet


def _keyword_or_first(call: ast.Call, keyword: str) -> Optional[bool]:
    """The constant bool ``call`` gives as its first argument or as ``keyword=``."""
    for k in call.keywords:
        if k.arg == keyword:
            return k.value.value if isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool) else None
    return _constant_bool(call.args[:1]) if call.args else None


def _decorated(node) -> State:
    """PyTorch's state a function's body runs in, as far as its own decorators tell:
    unknown (its callers decide) unless a decorator sets it."""
    t: State = None
    for dec in node.decorator_list:
        name = _last_name(dec.func if isinstance(dec, ast.Call) else dec)
        if name in _TORCH_OFF:
            t = (OFF, f"torch.{name}")
        elif name in _TORCH_ON:
            t = (ON, f"torch.{name}")
    return t


# (line, torch state, mxnet state, in a loop, the arguments in eval mode: positions as
# digits, keywords by name, where the argument is a name put in ``eval()`` on every path
# to the call in its scope)
Call = Tuple[int, State, MxState, bool, Tuple[str, ...]]


_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t][^\n;]*", re.M)  # (``import x; x.f()``: up to the ``;``)


class _Words:
    """Where words stand in a text: by character offset (a statement's lines are a range
    of offsets), and whether one stands anywhere but on an import line."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0]
        self.starts.extend(m.end() for m in re.finditer("\n", text))
        self.starts.append(len(text) + 1)
        self._offsets: Dict[str, List[int]] = {}
        self._bare: Optional[str] = None

    def offsets(self, word: str) -> List[int]:
        found = self._offsets.get(word)
        if found is None:
            self.index((word,))
            found = self._offsets[word]
        return found

    def index(self, words) -> None:
        """Find where ``words`` stand, in one pass over the text."""
        missing = sorted({w for w in words if w not in self._offsets}, key=len, reverse=True)
        if not missing:
            return
        for w in missing:
            self._offsets[w] = []
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, missing)) + r")\b")
        for m in pattern.finditer(self.text):
            self._offsets[m.group()].append(m.start())

    def on_lines(self, word: str, first: int, last: int) -> bool:
        """``word`` stands on a line from ``first`` to ``last`` (from 1)."""
        found = self.offsets(word)
        i = bisect.bisect_left(found, self.starts[first - 1])
        return i < len(found) and found[i] < self.starts[min(last, len(self.starts) - 1)]

    def outside_imports(self, word: str) -> bool:
        if self._bare is None:  # (the text with its import lines blanked, offsets kept)
            self._bare = _IMPORT_LINE.sub(lambda m: " " * len(m.group()), self.text)
        return re.search(rf"\b{re.escape(word)}\b", self._bare) is not None


@functools.lru_cache(maxsize=64)
def _words(text: str) -> _Words:
    return _Words(text)


@functools.lru_cache(maxsize=32)
def parsed(text: str) -> Optional[ast.Module]:
    """``text`` parsed (None: it does not parse). Kept for a few texts: one importer is
    read for each module of the program it imports."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def call_states(text: str, names: Dict[Tuple[str, ...], str],
                classes: Optional[Dict[Tuple[str, ...], str]] = None) -> Dict[str, Optional[List[Call]]]:
    """The calls in ``text`` of the functions ``names`` stand for: by how the text spells
    one (``("train_step",)`` imported by name, ``("engine", "train_step")`` through a
    module), the function's key. For each key called or used: its calls, (line, torch
    state, mxnet state, whether a loop of the text runs it) each; or None where the text
    uses it other than by a call (hands it on, stores it), rebinds the name it is spelled
    by, names an attribute so by another spelling (``pkg.engine.step``, ``self.step``:
    it may be the function), or does not parse: its callers are not all seen.

    ``classes``: likewise, classes of other modules; a name bound to an instance of one in
    the same scope (``trainer = Trainer(...)``) has its method calls (``trainer.step(x)``)
    listed under ``"Trainer.step"`` (the class's key, a dot, the method): those are some of
    the method's calls, never all (an instance can go anywhere)."""
    everything: Dict[str, Optional[list]] = {key: None for key in set(names.values())}
    classes = classes or {}
    heads = {k[0] for k in names} | {k[0] for k in classes}
    # (a function's key is its name in its module, after a prefix and a NUL where one
    # scan answers for functions of several modules)
    bare: Dict[str, List[str]] = {}
    for key in set(names.values()):
        bare.setdefault(key.rsplit("\0", 1)[-1], []).append(key)
    where = _words(text)
    words = heads | set(bare)
    where.index(words)
    if any(where.offsets(w) for w in words) and not any(where.outside_imports(w) for w in words):
        return {}  # (named on import lines alone: neither called nor used, parsed or not)
    tree = parsed(text)
    if tree is None:
        return everything
    # A grad mode switched globally (``torch.set_grad_enabled(False)`` as a statement):
    # what module-level code runs in is nobody's guess.
    switched = any(w in text for w in _GLOBAL_SETTERS) and any(
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and _last_name(n.value.func) in _GLOBAL_SETTERS
        for n in ast.walk(tree))
    calls: Dict[str, list] = {}
    escaped = set()

    def spelled(expr: ast.expr, among=heads) -> Optional[Tuple[str, ...]]:
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name) or expr.id not in among:
            return None
        parts.append(expr.id)
        return tuple(reversed(parts))

    # A statement none of whose lines spells a key's name (nor a method's, nor an instance
    # of a class of the keys) holds no call or use of one: not walked. (Most of an
    # importer: a module of a package imports a few names of many others.)
    def mentions(node: ast.stmt, instances) -> bool:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        last = node.end_lineno or node.lineno
        return any(where.on_lines(w, first, last) for w in (*words, *instances))

    def visit(node: ast.AST, torch: State, mxnet: MxState, looped: bool, instances: Dict[str, str]) -> None:
        def down(child, t=torch, m=mxnet, lp=looped):
            visit(child, t, m, lp, instances)

        if isinstance(node, ast.stmt) and not mentions(node, instances):
            return

        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in heads:  # (rebinds a name a key is spelled by)
                escaped.update(v for k, v in names.items() if k[0] == node.name)
            instances.pop(node.name, None)
            for d in node.decorator_list:
                down(d)
            if isinstance(node, ast.ClassDef):
                for child in (*node.bases, *node.keywords):
                    down(child)
                for stmt in node.body:
                    visit(stmt, torch, mxnet, looped, {})
                return
            for d in (*node.args.defaults, *node.args.kw_defaults):
                if d is not None:
                    down(d)
            t = _decorated(node)
            inner: Dict[str, str] = {}
            for stmt in node.body:  # (its entry state is its callers': PyTorch's only if decorated)
                visit(stmt, t, None, False, inner)
            return
        if isinstance(node, ast.Lambda):
            visit(node.body, None, None, False, {})
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            t, m = torch, mxnet
            for item in node.items:
                down(item.context_expr, t, m)
                if item.optional_vars is not None:
                    down(item.optional_vars, t, m)
                t, m = _with_item(item, t, m)
            for stmt in node.body:
                down(stmt, t, m)
            return
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            for child in ((node.iter, node.target) if not isinstance(node, ast.While) else (node.test,)):
                down(child)
            for stmt in node.body:
                down(stmt, lp=True)
            if isinstance(node, ast.While):
                down(node.test, lp=True)
            for stmt in node.orelse:
                down(stmt)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for gen in node.generators:
                down(gen.iter)
                for child in (gen.target, *gen.ifs):
                    down(child, lp=True)
            for child in ((node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)):
                down(child, lp=True)
            return
        if isinstance(node, ast.Assign):
            down(node.value)
            made = spelled(node.value.func) if isinstance(node.value, ast.Call) else None
            for target in node.targets:
                down(target)
                if isinstance(target, ast.Name):
                    if made is not None and made in classes and len(node.targets) == 1:
                        instances[target.id] = classes[made]
                    else:
                        instances.pop(target.id, None)
            return
        if isinstance(node, ast.Call):
            key = spelled(node.func)
            if key is not None and key in names:
                calls.setdefault(names[key], []).append((node.lineno, torch, mxnet, looped, _args_in_eval(node, in_eval)))
                if isinstance(node.func, ast.Attribute):
                    down(node.func.value)
                for child in (*node.args, *node.keywords):
                    down(child)
                return
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in instances and f.value.id not in heads:
                calls.setdefault(f"{instances[f.value.id]}.{f.attr}", []).append((node.lineno, torch, mxnet, looped, ()))
                for child in (*node.args, *node.keywords):
                    down(child)
                return
        if isinstance(node, (ast.Name, ast.Attribute)):
            key = spelled(node)
            if key is not None and key in names:  # (loaded other than by a call, stored, deleted)
                escaped.add(names[key])
                return
            if isinstance(node, ast.Attribute) and node.attr in bare:
                escaped.update(bare[node.attr])  # (``pkg.engine.step``, ``self.step``: may be it, by a spelling not read)
            if key is not None:
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):  # (``engine = ...``)
                    escaped.update(v for k, v in names.items() if k[0] == node.id)
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                instances.pop(node.id, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            return  # (the imports that bind the keys' names)
        elif isinstance(node, ast.Global):
            escaped.update(v for k, v in names.items() if k[0] in node.names)
        for child in ast.iter_child_nodes(node):
            down(child)

    module: Dict[str, str] = {}
    in_eval = _eval_at_calls(tree) if "eval" in text else {}
    try:
        for stmt in tree.body:
            visit(stmt, None if switched else (ON, None), None if switched else (OFF, None, OFF), False, module)
    except RecursionError:
        return everything
    out: Dict[str, Optional[list]] = {key: found for key, found in calls.items() if key not in escaped}
    out.update((key, None) for key in escaped)
    return out


def _args_in_eval(call: ast.Call, in_eval: Dict[int, frozenset]) -> Tuple[str, ...]:
    names = in_eval.get(id(call))
    if not names:
        return ()
    out = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if _dotted_name(arg) in names:
            out.append(str(i))
    out.extend(k.arg for k in call.keywords if k.arg is not None and _dotted_name(k.value) in names)
    return tuple(out)


def _eval_at_calls(tree: ast.Module) -> Dict[int, frozenset]:
    """For each call (by id), the names put in eval mode (``model.eval()``, ``.train(False)``)
    on every path to it in its own scope, read block by block: a statement's ``eval()``
    counts for the statements after it in its block and in the blocks nested there; one
    in a nested block counts only inside it; a ``.train()`` or a rebinding anywhere in a
    statement ends it after that statement."""
    out: Dict[int, frozenset] = {}

    def record(node, names: frozenset) -> None:
        if not names:
            return
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(n, ast.Call):
                out[id(n)] = names
            todo.extend(ast.iter_child_nodes(n))

    def effects(stmt, names: set) -> None:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("eval", "train"):
                key = _dotted_name(n.func.value)
                if key is None:
                    continue
                off = n.func.attr == "eval" and not n.args or (
                    n.func.attr == "train" and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value is False)
                if off and n is getattr(stmt, "value", None) and isinstance(stmt, ast.Expr):
                    names.add(key)
                else:
                    names.discard(key)
            elif isinstance(n, (ast.Name, ast.Attribute)) and isinstance(getattr(n, "ctx", None), (ast.Store, ast.Del)):
                key = _dotted_name(n)
                if key is not None:
                    for k in [k for k in names if k == key or k.startswith(key + ".")]:
                        names.discard(k)

    def block(stmts, names: frozenset) -> None:
        cur = set(names)
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                block(stmt.body, frozenset())
                continue
            if isinstance(stmt, ast.ClassDef):
                block(stmt.body, frozenset())
                continue
            bodies = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, f, None), list)]
            bodies += [h.body for h in getattr(stmt, "handlers", ())]
            bodies += [c.body for c in getattr(stmt, "cases", ())]
            if bodies:
                here = frozenset(cur)
                for field, value in ast.iter_fields(stmt):
                    if field not in ("body", "orelse", "finalbody", "handlers", "cases"):
                        for v in value if isinstance(value, list) else [value]:
                            if isinstance(v, ast.AST):
                                record(v, here)
                for b in bodies:
                    block(b, here)
                effects(stmt, cur)
                # (an ``eval()`` nested in it held on some paths only)
                cur &= set(here)
                continue
            record(stmt, frozenset(cur))
            effects(stmt, cur)

    block(tree.body, frozenset())
    return out


_SWITCHES = _TORCH_OFF | _TORCH_ON | {"set_grad_enabled", "record", "pause"}


def _forwards(tree: ast.Module, classes):
    """(class name, its ``forward`` or ``hybrid_forward``) of the module-level ``classes``
    of ``tree`` that define one."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in classes:
            found = next((item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and item.name in ("forward", "hybrid_forward")), None)
            if found is not None:
                yield node.name, found


def forwards_switching_recording(tree: ast.Module, classes) -> List[str]:
    """Of the module-level ``classes`` (names) of ``tree``, those whose ``forward`` (or
    ``hybrid_forward``) switches the recording state itself on some path (a ``with
    torch.no_grad():``, ``autograd.pause()``, ``set_grad_enabled(...)``, or such a
    decorator: SPADE's ``Pix2PixModel.forward(data, mode="inference")``): whether a call
    of their instances records is decided inside, per path."""
    return [name for name, forward in _forwards(tree, classes) if _switches(forward)]


def _switches(func) -> bool:
    for dec in func.decorator_list:
        if _last_name(dec.func if isinstance(dec, ast.Call) else dec) in _SWITCHES:
            return True
    for n in ast.walk(func):
        if isinstance(n, (ast.With, ast.AsyncWith)):
            if any(isinstance(i.context_expr, ast.Call) and _last_name(i.context_expr.func) in _SWITCHES for i in n.items):
                return True
        elif isinstance(n, ast.Call) and _last_name(n.func) in _GLOBAL_SETTERS:
            return True
    return False


def forwards_detaching(tree: ast.Module, classes) -> List[Tuple[str, Tuple[str, ...], Tuple[str, ...]]]:
    """Of the module-level ``classes`` of ``tree``: those whose ``forward`` cuts the graph
    of a state it is handed itself (``h = h.detach()``, ``h.detach_()``, ``h =
    tuple(s.detach() for s in h)``: ``queries.detaches_param`` as ``ast`` reads it), as
    (class, its ``forward``'s parameters after ``self``, those it detaches)."""
    out = []
    for name, forward in _forwards(tree, classes):
        params = tuple(a.arg for a in (*forward.args.posonlyargs, *forward.args.args))[1:]
        if forward.name == "hybrid_forward":
            params = params[1:]  # (``F``)
        cut = tuple(p for p in params if _detaches(forward, p))
        if cut:
            out.append((name, params, cut))
    return out


def _detaches(func, name: str) -> bool:
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in ("detach", "detach_")
                   for c in ast.walk(n.value)):
                return True
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "detach_" \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == name:
            return True
    return False


# Calls that backpropagate what they are handed: ``x.backward()`` (its receiver and
# arguments), ``autograd.grad(...)``/``autograd.backward(...)`` and their bare imports.
_BACKPROP_LAST = frozenset(("backward", "grad"))
_KEEPS = frozenset(("append", "extend", "insert", "add", "update", "put"))


def names_fed_backward(text: str, wanted) -> frozenset:
    """Of the function names ``wanted``, those a call of which (bare or as a method:
    ``self.policy_net.evaluate(state)``) has its result reach a backward pass in
    ``text``: through the names it is bound to (tuple targets, ``+=``, a loop over it,
    ``buf.append(it)``, attribute paths as written) up to a ``.backward()`` receiver or
    an argument of ``autograd.grad``/``autograd.backward``, in the same function, or in
    another method of the same class through a ``self.`` attribute. By name and by
    text, an upper bound: evidence that a caller trains on what such a function returns
    (RULES.md, SL103: a function whose outputs a caller backpropagates is not inference).
    A result returned, or handed to another function, is not followed."""
    wanted = frozenset(wanted)
    if not wanted or "backward" not in text and "grad" not in text:
        return frozenset()
    where = _words(text)
    where.index(wanted)
    if not any(where.outside_imports(w) for w in wanted):
        return frozenset()
    tree = parsed(text)
    if tree is None:
        return frozenset()
    found: set = set()
    try:
        _fed_in(tree.body, wanted, found)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                _fed_in([m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))], wanted, found, shared="self.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _fed_in(node.body, wanted, found)
    except RecursionError:
        return frozenset(wanted)  # (unread: any of them may be)
    return frozenset(found)


def _own_nodes(body):
    """The nodes of ``body``, not those of the functions and classes it defines."""
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                todo.append(child)


def _fed_in(body, wanted: frozenset, found: set, shared: Optional[str] = None) -> None:
    """``names_fed_backward`` for one scope: ``body`` (a function's, the module's), or,
    with ``shared``, the methods of one class (``body``: their definitions), whose local
    names stay apart while attributes under ``shared`` (``self.``) are one."""
    edges: List[Tuple[Tuple[str, ...], set]] = []  # (names bound, what flows into them)
    sinks: List[set] = []
    scopes = [(m.name, m.body) for m in body] if shared is not None else [("", body)]
    for scope, nodes in scopes:
        def key(expr) -> Optional[str]:
            d = _dotted_name(expr)
            if d is None:
                return None
            return d if shared is not None and d.startswith(shared) else f"{scope}\0{d}"

        def sources(*exprs) -> set:
            out = set()
            for e in exprs:
                if e is None:
                    continue
                for n in ast.walk(e):
                    if isinstance(n, ast.Call):
                        last = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
                        if last in wanted:
                            out.add(("call", last))
                    elif isinstance(n, (ast.Name, ast.Attribute)):
                        k = key(n)
                        if k is not None:
                            out.add(("name", k))
            return out

        def targets(t) -> Tuple[str, ...]:
            if isinstance(t, (ast.Tuple, ast.List)):
                return tuple(k for e in t.elts for k in targets(e))
            if isinstance(t, ast.Starred):
                return targets(t.value)
            if isinstance(t, ast.Subscript):
                return targets(t.value)
            k = key(t)
            return (k,) if k is not None else ()

        for n in _own_nodes(nodes) if shared is None else _own_nodes(nodes):
            if isinstance(n, ast.Assign):
                edges.append((tuple(k for t in n.targets for k in targets(t)), sources(n.value)))
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
                edges.append((targets(n.target), sources(n.value)))
            elif isinstance(n, ast.NamedExpr):
                edges.append((targets(n.target), sources(n.value)))
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                edges.append((targets(n.target), sources(n.iter)))
            elif isinstance(n, ast.Call):
                f = n.func
                if isinstance(f, ast.Attribute) and f.attr in _KEEPS:
                    edges.append((targets(f.value), sources(*n.args, *(k.value for k in n.keywords))))
                last = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if last == "backward" and isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id == "autograd"):
                    sinks.append(sources(f.value, *n.args, *(k.value for k in n.keywords)))
                elif last in _BACKPROP_LAST:
                    sinks.append(sources(*n.args, *(k.value for k in n.keywords)))
    reach: Dict[str, set] = {}
    changed = True
    rounds = 0
    while changed and rounds < 50:
        changed = False
        rounds += 1
        for bound, flows in edges:
            called = _called_through(flows, reach)
            for k in bound:
                have = reach.setdefault(k, set())
                if not called <= have:
                    have |= called
                    changed = True
    for flows in sinks:
        found |= _called_through(flows, reach)


def _called_through(flows: set, reach: Dict[str, set]) -> set:
    out = set()
    for kind, what in flows:
        if kind == "call":
            out.add(what)
        else:
            out |= reach.get(what, set())
    return out


def _dotted_name(node) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
