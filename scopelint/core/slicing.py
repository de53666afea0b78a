"""Which parts of a file can produce a finding, decided with the stdlib ``ast`` before
LibCST parses anything (LibCST is ~10x slower to parse than ``ast``).

The file is cut into *units*: each module-level statement, and for a module-level
class its header (bases, decorators, body statements that are not methods) and each of
its methods. A unit is an *anchor* when it does something the analysis reacts to (a
backward call, a grad-mode scope or switch, ``zero_grad()``, ``eval()``/``train()``, a
leaf made with ``requires_grad=True``/``x.requires_grad = True``/``Parameter()``/
``parameters()``, ``p.grad = None``, a loss call, an inference-named function that may call a model or, where
something is put in eval mode, any), in the form the analysis reads it
(``requires_grad=True``, not ``requires_grad=flag``; a name that is not ASCII anchors
whatever it spells: ``ast`` reads it NFKC-normalised, LibCST as written). In a file
where nothing may backpropagate (``Whole.backprop``), what only the rules of a backward
pass read (the gradient buffer's forms, ``.data`` writes, state kept on the object) is
no anchor: those rules find nothing there. A finding
needs an anchor, and the analysis of a unit depends on others only through names, so
the kept units are the closure of the anchors under "needs":

- a unit needs the classes its code names (model classes, base classes) and the
  module-level functions it calls by name, in a decorator too (a function referenced
  other than by a call is a value the analysis knows nothing of there, defined or not,
  and it escapes);
- a function needs every unit that calls it (its call sites give its entry state and
  its parameters), unless it escapes (``flow.Analyzer._find_escapes``: then both are
  unknown whatever its call sites); a class needs the classes derived from it;
- a method needs its class header, the methods it calls as ``self.m()``/``cls.m()``
  and, unless it escapes, the units that call it so (a method defined in an ``if`` or
  ``try`` of the class body is in the header); and its class's ``__init__`` where it
  names an attribute ``__init__`` stores on ``self`` (a ``forward``: always);
- the module walk: a unit needs the module-level statements and class bodies that
  change a name it reads at module level (``x = ...``, ``x.append(...)``,
  ``x.requires_grad_()``, ``:=``; decorators included; a def, class or method too when
  it rebinds a name something else binds), and those need what reads it at module
  level (statements, class bodies, decorators; before or after them);
- a function's body runs in the module walk where it is called (or handed to a runner
  of the file): a function that is called (or so handed) and does not escape needs what
  binds the module-level names it reads, and those binders need it where it changes
  their value (a store into it; ``opt.step()``, ``h.detach_()``, ``m.eval()``, ...;
  ``global``);
- module-scope imports, ``raise`` (class bodies included), rebinding an imported name
  and binding a builtin the analysis reads as a conversion (``float``; at module level,
  or as a method) are kept whatever happens (for what they bind; what they call is needed only through the
  closure; an import binds no value the walk tracks, so it needs none of its readers);
  simple statements sharing a line stay together (those sharing one with what is kept
  whatever happens, with what they need).

Excluded units are blanked line by line, so every kept line keeps its number and
columns; the result is parsed with LibCST instead of the file. What the analysis needs
from the whole file (the frameworks imported anywhere, how each function is referenced)
comes from here too, in ``Whole``. A slice that would keep most of the file
(``WHOLE_SHARE`` of its lines) is not made: the whole file is parsed, which costs less
than the second pass a slice's fixes need. All name matching on text is by words, a
superset of the identifiers in code: a word in a comment only keeps more.
"""

from __future__ import annotations

import ast
import copy
import functools
import operator
import re
import string
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from scopelint.core import frameworks as F


@dataclass(frozen=True)
class Whole:
    """Facts of the whole file that the analysis of any part of it needs."""

    frameworks: frozenset
    # For the functions whose callers matter: Name references and direct calls by name,
    # attribute references and ``self.m()``/``cls.m()`` calls by attribute name.
    name_refs: Dict[str, int] = field(default_factory=dict)
    name_calls: Dict[str, int] = field(default_factory=dict)
    attr_refs: Dict[str, int] = field(default_factory=dict)
    self_calls: Dict[str, int] = field(default_factory=dict)
    # The text analysed (the file, or the plan's slice of it) may hold an assignment
    # expression (``:=``): ``names.Names`` then walks every expression for binders.
    walrus: bool = True
    # Something in the file backpropagates (``.backward``, ``backward(...)``, ``grad(...)``,
    # ``autograd.grad``): the analysis then links returned values by value
    # (``facts.Returns.template``), which costs rounds library code has no use for.
    backprop: bool = True

    def escapes(self, name: str, method: bool) -> bool:
        """Whether the function (a method: ``method``) named ``name`` is referenced
        other than by a direct call, or is a method called implicitly (``__x__``): its
        callers are unknown. (``forward`` is called as ``net(x)``: the flow resolves those
        calls, and makes it escape when an instance reaches code it does not follow.)"""
        return escapes(name, method, self.name_refs, self.name_calls, self.attr_refs, self.self_calls)


def escapes(name: str, method: bool, name_refs: Dict[str, int], name_calls: Dict[str, int],
            attr_refs: Dict[str, int], self_calls: Dict[str, int]) -> bool:
    """``Whole.escapes`` by the counts of ``_count``, for the analysis and the plan
    alike. The counts are by names as Python reads them, NFKC-normalised (``ｆorward``
    is ``forward``); LibCST gives names as written."""
    if not name.isascii():
        name = unicodedata.normalize("NFKC", name)
    if method:
        return name.startswith("__") or attr_refs.get(name, 0) > self_calls.get(name, 0)
    return name_refs.get(name, 0) > name_calls.get(name, 0)


@dataclass(frozen=True)
class Plan:
    source: Optional[str]  # the text to parse; None when no rule can fire in the file
    whole: Whole
    kept_lines: int
    total_lines: int
    # Lines where a module-level statement starts: ``source`` may be parsed in pieces cut
    # there (``engine.parse``), which bounds the parser's memory on huge files.
    starts: Tuple[int, ...] = ()
    # The module-level statements of ``source`` in ``ast`` nodes of the whole file (a
    # class with only its kept methods, or a ``pass`` as ``_blank`` puts): what
    # ``lower`` builds the analysis' tree from.
    body: Optional[Tuple[ast.stmt, ...]] = None
    lines: Optional[List[str]] = None  # the file's lines (``split_lines``), for ``lower``
    inner: "Cuts" = ()  # where long functions' and classes' bodies may be cut (``inner_cuts``)

    @property
    def sliced(self) -> bool:
        return self.source is not None and self.kept_lines < self.total_lines


# A slice that keeps at least this share of the file's lines is not worth making.
WHOLE_SHARE = 0.9


# --- anchors ---------------------------------------------------------------------------
def _last(qname: str) -> str:
    return qname.rsplit(".", 1)[-1]


# What the analysis reacts to (flow.Analyzer): grad-mode scopes and switches, named as
# attributes (``torch.no_grad``) or by the names they are imported under, in any use
# (a decorator, a ``with`` item, called or not) ...
_SCOPE_NAMES = {
    fw: frozenset(_last(q) for q in (*F.SCOPES, *F.SETTERS) if F.framework_of(q) == fw) for fw in F.FRAMEWORKS
}
# ... and calls of these methods and functions (``loss.backward()``, ``model.eval()``,
# ``autograd.grad(...)``, ``nn.Parameter(...)``, ``model.parameters()``) ...
_CALLED = frozenset(F.MAKE_LEAF_METHODS) | {_last(q) for q in (*F.BACKWARD_FUNCS, *F.PARAMETER_CLASSES)} | {
    "backward", "zero_grad", "eval", "train", "parameters", "named_parameters",
}
# ... of which these only as methods: called by a bare name (the builtin ``eval(code)``,
# a function ``train(cfg)``), they are nothing the analysis reads (``flow.Analyzer._call``
# and the rules read them as ``CallFact.method``, which a bare name has not).
_METHODS_ONLY = (frozenset(F.MAKE_LEAF_METHODS) | {"zero_grad", "eval", "train", "parameters", "named_parameters"}) - {
    _last(q) for q in (*F.BACKWARD_FUNCS, *F.PARAMETER_CLASSES)}
# ... and, exactly as the analysis and the rules read them: ``requires_grad=True`` (a
# leaf: ``syntax.literal_bool``), ``grad_req="add"`` and ``x.setattr("grad_req", "add")``
# (``queries.sets_grad_req_add``), ``p.grad.zero_()`` (``queries.zeroes_grads``).
_KEYWORDS = {"requires_grad": (True, 1), "grad_req": ("add",), "volatile": (True, 1)}  # (``volatile=True``: SL103)
# Identifiers in text. Outside strings and comments a non-ASCII character can only be
# part of one; ``ast`` reads identifiers NFKC-normalised, so non-ASCII words are too.
# (Written as the ASCII characters that are not in one: a class up to U+10FFFF takes
# 8 ms to compile, a tenth of the editor path's own work.)
_ASCII_ID = "0-9A-Za-z_"  # the ASCII characters of identifiers; any other character may be in one
_NOT_ID = r"\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f"  # (the ASCII characters that are not)
_IDENTIFIER_CHARS = frozenset(string.ascii_letters + string.digits + "_")
_WORD = re.compile(rf"[^{_NOT_ID}0-9][^{_NOT_ID}]*")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
# Nodes that bind their ``name``; the pattern nodes are Python 3.10's (resolved here,
# once: before 3.10 no tree holds them).
_NAMED_BINDERS = tuple(c for c in (ast.ExceptHandler, getattr(ast, "MatchAs", None), getattr(ast, "MatchStar", None)) if c)
_MATCH_MAPPING = getattr(ast, "MatchMapping", None)


def _anchor_lines(found: Dict[type, List[ast.AST]], imported: Dict[str, Set[str]], scope_names: frozenset,
                  inference_functions: Sequence[str], backprop: bool = True) -> Set[int]:
    """The lines where something starts that some rule needs (``found``: ``_index``;
    ``imported``: local name -> the last parts of what it was imported as). A name that
    is not ASCII anchors whatever it spells: ``ast`` reads it NFKC-normalised, the
    analysis (LibCST) as written.

    ``backprop`` (``_backprop``): something in the file may backpropagate. Where nothing
    does, what only the rules of a backward pass read is no anchor: the gradient
    buffer's forms (``p.grad = None``, ``p.grad.zero_()``, ``grad_req``: SL202, SL203),
    ``.data`` writes (SL209) and state kept on the object (SL204). Each of those rules
    needs a backward call of the file (``Facts.backwards``) for any finding, and no other
    rule reads them (a ``.data`` write is no write into a leaf: ``queries.written_leaf``)."""
    loss = F.is_loss_name
    lines = set()
    buffers = ("grad", "data", "grad_req") if backprop else ()
    for node in found[ast.Attribute]:
        if node.attr in scope_names or (node.attr in buffers and type(node.ctx) is ast.Store):  # p.grad = None
            lines.add(node.lineno)  # (and ``p.data = e``: SL209; ``p.grad_req = "add"``: SL202)
    if backprop:
        for node in found[ast.Subscript]:  # ``p.data[i] = e`` (SL209)
            if type(node.ctx) is ast.Store and type(node.value) is ast.Attribute and node.value.attr == "data":
                lines.add(node.lineno)
    scope_ids = {name for name, parts in imported.items() if not scope_names.isdisjoint(parts)}
    if scope_ids:  # grad-mode scopes in any use (the rest when called)
        lines.update([node.lineno for node in found[ast.Name] if node.id in scope_ids])
    for node in found[ast.keyword]:
        if node.arg in _KEYWORDS and _constant_in(node.value, _KEYWORDS[node.arg]) and (backprop or node.arg != "grad_req"):
            lines.add(node.lineno)
    for node in found[ast.Assign]:  # ``x.requires_grad = True``: a leaf (``flow.Analyzer._make_leaf``)
        if _constant_in(node.value, _KEYWORDS["requires_grad"]) and any(
                type(t) is ast.Attribute and t.attr == "requires_grad" for t in node.targets):
            lines.add(node.lineno)
    sets_mode = False  # some ``x.eval()``/``x.train(...)``: names in eval mode are models
    anchoring: Dict[str, bool] = {}  # callee name -> an API or loss name (names repeat)

    def anchors(n: str) -> bool:
        verdict = anchoring.get(n)
        if verdict is None:
            verdict = anchoring[n] = n in _CALLED or loss(n) or not n.isascii()  # roles.is_loss_call
        return verdict

    for node in found[ast.Call]:
        f = node.func
        t = type(f)
        if t is ast.Name:
            name = f.id
            # A name imported under another (``grad as g``): what it names and, should
            # a local binding shadow the import, what is written.
            also = imported.get(name)
        elif t is ast.Attribute:
            name, also = f.attr, None
        else:
            continue
        if (t is ast.Attribute or name not in _METHODS_ONLY) and anchors(name) or (
                also and any(n not in _METHODS_ONLY and anchors(n) for n in also)):
            lines.add(node.lineno)
            sets_mode = sets_mode or (t is ast.Attribute and name in ("eval", "train"))
        elif t is not ast.Attribute or not backprop:
            continue
        elif name == "zero_" and type(f.value) is ast.Attribute and f.value.attr == "grad":  # p.grad.zero_()
            lines.add(node.lineno)
        elif name == "copy_" and type(f.value) is ast.Attribute and f.value.attr == "data":  # p.data.copy_(e): SL209
            lines.add(node.lineno)
        elif name == "setattr" and node.args and _constant_in(node.args[0], ("grad_req",)):
            lines.add(node.lineno)
    # State kept on the object (SL204, ``queries.state_kept_on_self``): a call handed
    # ``self.a`` whose result is stored back into ``self.a``, and every other write of
    # any ``X.a`` (a reset or detach between steps, ``__init__``'s first value).
    carried = set()
    for node in found[ast.Assign] if backprop else ():
        value = node.value
        if type(value) is ast.Call:
            handed = {a.attr for a in value.args if type(a) is ast.Attribute and type(a.value) is ast.Name and a.value.id == "self"}
            if handed:
                stored = {a.attr for t in node.targets for a in ast.walk(t) if type(a) is ast.Attribute and a.attr in handed}
                if stored:
                    carried |= stored
                    lines.add(node.lineno)
    if carried:
        for node in found[ast.Attribute]:
            if node.attr in carried and type(node.ctx) is not ast.Load:
                lines.add(node.lineno)
        for node in found[ast.Call]:
            f = node.func
            if type(f) is ast.Attribute and f.attr in ("detach_", "zero_", "fill_") and type(f.value) is ast.Attribute and f.value.attr in carried:
                lines.add(node.lineno)
    inference = F.name_matcher(tuple(inference_functions))
    reach: Optional[_Reach] = None
    for t in _FUNCS:  # an inference-named function that may call a model (SL103, SL207)
        for node in found[t]:
            if (not node.name.isascii() or inference(node.name)) and (sets_mode or _may_call_a_model(node)):
                lines.add(node.lineno)
            elif not node.name.isascii() or inference(node.name):
                # or that may run one of the file's functions that may, and that only
                # inference code runs (a helper, a method, a runner of a closure:
                # ``queries.run_only_from``)
                if reach is None:
                    reach = _Reach(found, inference)
                if reach.reaches_a_model(node):
                    lines.add(node.lineno)
    return lines


class _Reach:
    """What an inference-named function may run of the file's functions, by name (a
    superset of ``queries.run_only_from``): those whose every call by that name
    (``X(...)``, ``o.X(...)``) stands in a function that is inference-named or so run
    (least fixpoint; ``queries.run_only_from`` rejects a function where any call so named
    stands elsewhere), and, of those, the ones that may call a model
    (``_may_call_a_model``), directly or through more of them. Made once per file, when
    first asked; a function is read only when some inference-named one may reach it."""

    def __init__(self, found: Dict[type, List[ast.AST]], inference) -> None:
        self.by_name: Dict[str, List[ast.AST]] = defaultdict(list)
        for t in _FUNCS:
            for node in found[t]:
                self.by_name[node.name].append(node)
        self.inference = inference
        self.only = self._run_only(found)
        self._model: Dict[str, bool] = {}

    def _run_only(self, found: Dict[type, List[ast.AST]]) -> Set[str]:
        by_name = self.by_name
        calls = []
        for call in found[ast.Call]:
            f = call.func
            name = f.id if type(f) is ast.Name else (f.attr if type(f) is ast.Attribute else None)
            if name in by_name:
                calls.append((call.lineno, name))
        if not calls:
            return set()
        # The functions around each such call, by their lines (a superset: a call on a
        # ``def`` line, in a default, counts as in it). One sweep down the file.
        calls.sort()
        spans = sorted((node.lineno, node.end_lineno or node.lineno, node.name) for nodes in by_name.values() for node in nodes)
        around: Dict[str, List[Set[str]]] = defaultdict(list)
        active: List[Tuple[int, str]] = []
        i = 0
        for line, name in calls:
            while i < len(spans) and spans[i][0] <= line:
                active.append((spans[i][1], spans[i][2]))
                i += 1
            active = [a for a in active if a[0] >= line]
            around[name].append({n for _, n in active})
        inference = self.inference
        runs: Set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, places in around.items():
                if name not in runs and all(any(n in runs or not n.isascii() or inference(n) for n in place) for place in places):
                    runs.add(name)
                    changed = True
        return runs

    def reaches_a_model(self, fdef: ast.AST) -> bool:
        todo = [n for n in _called_names(fdef) if n in self.only]
        seen = set(todo)
        while todo:
            name = todo.pop()
            found = self._model.get(name)
            if found is None:
                found = self._model[name] = any(_may_call_a_model(node) for node in self.by_name[name])
            if found:
                return True
            for node in self.by_name[name]:
                for n in _called_names(node):
                    if n in self.only and n not in seen:
                        seen.add(n)
                        todo.append(n)
        return False


def _called_names(fdef: ast.AST) -> Set[str]:
    """The last part of each callee's name in ``fdef`` (``helper``, ``fit`` of
    ``trainer.fit``), nested functions included."""
    names = set()
    for node in ast.walk(fdef):
        if type(node) is ast.Call:
            f = node.func
            if type(f) is ast.Name:
                names.add(f.id)
            elif type(f) is ast.Attribute:
                names.add(f.attr)
    return names


# --- the anchors, read in text ------------------------------------------------------------
# Before ``ast`` parses a file, its text must hold an anchor in some form
# ``_anchor_lines`` reads it in (``engine.might_fire``; tests check each kind of form):
# a superset, for strings and comments count too. The gradient buffer's forms (``p.grad
# = None``, ``p.grad.zero_()``, ``grad_req``) are left to the backward call they need,
# and ``.data`` writes (SL209) to what their finding needs: a backward call, or an
# optimizer given a leaf or a model's ``.parameters()``, each an anchor.
# Every pattern reads a bounded stretch of text from where it starts (linear in the
# text, however adversarial).
#
# What may stand between a callee's name and its "(": space, continuations, comments
# and the ")" of a parenthesised callee; matched one way only (atomic) and up to 32
# pieces (runs of space, comments of up to 200 characters): unbounded, a comment block
# (or line) after each such name would be scanned to its end, quadratic in it. A longer
# gap counts as a call: the check gives up (counting whole runs and whole comments, one
# way only). A name imported under another may be called by that one: "<name> as"
# counts as a call.
_COMMENT = r"#[^\r\n]{{0,200}}(?![^\r\n])"  # (in a template for str.format)
_GAP = (r"(?:(?=(?:[\s\\{1}]+(?![\s\\{1}])|" + _COMMENT + r"){{32}}|(?:[\s\\{1}]+(?![\s\\{1}])|" + _COMMENT
        + r"){{0,31}}#[^\r\n]{{201}})|(?=(?P<{0}>(?:[\s\\{1}]+|" + _COMMENT + r"){{0,32}}))(?P={0}){2})")
_CALL_END = _GAP.format("gap", ")", rf"(?:\(|as(?![{_ASCII_ID}]))")
_CALLS = {word: re.escape(word) + _CALL_END for word in _CALLED}
_LOSS_PARTS = tuple(part.rstrip("$") for part in F.LOSS_NAME.pattern.split("|"))
assert all(re.fullmatch(r"[a-z0-9_]+", part) for part in _LOSS_PARTS), F.LOSS_NAME.pattern
# In the lower-cased text: a name with the part anywhere in it (any case), called; a
# name running on for more than 64 characters after the part counts as called.
_LOSS_CALLS = {
    part: re.escape(part) + r"(?=(?P<rest>[0-9a-z_]{0,64}))(?P=rest)(?:(?=[0-9a-z_])|" + _CALL_END + ")"
    for part in _LOSS_PARTS
}
# ``requires_grad=True`` or ``=1`` (any number: ``1.0``, ``0x1``), perhaps parenthesised
_LEAF_KEYWORD = r"requires_grad" + _GAP.format("gap", "", "=(?!=)" + _GAP.format("gap2", "(", "(?:True|[0-9.])"))
# A name with a character that is not ASCII, called (read from where the name starts)
_NOT_ASCII_CALL = rf"(?<![^{_NOT_ID}])[{_ASCII_ID}]*[^\x00-\x7f](?=(?P<rest>[^{_NOT_ID}]*))(?P=rest)" + _CALL_END
_WORDS_BY_FRAMEWORK = {fw: {word: re.escape(word) for word in words} for fw, words in _SCOPE_NAMES.items()}
# (Patterns are compiled when first used: most files are decided by the first few, and
# compiling them all costs the editor's one-file run 8 ms.)
_rx = functools.lru_cache(maxsize=None)(re.compile)


# A file that names neither framework, or imports neither, is skipped first (the
# analysis knows a framework only by an absolute import of it: relative imports inside a
# framework's own package do not count). An import statement starts a line or follows
# ``;`` or ``:``; one continued with a backslash may name the framework on a later line.
# (Names first, word boundaries after: a pattern starting with ``\b`` is searched for
# at every position, ~40 times slower on a file that does not hold the name.)
def _name_pattern(name: str) -> str:
    return rf"{name}(?![{_ASCII_ID}])(?<![{_ASCII_ID}]{name})"


_MENTIONS = {name: re.compile(_name_pattern(name)) for name in F.FRAMEWORKS}
_MENTIONS_FRAMEWORK = re.compile("|".join(m.pattern for m in _MENTIONS.values()))
_IMPORT_BEFORE = re.compile(r"(?:^|[;:])[ \t\f\ufeff]*(?:from|import)\b")  # in a line, before the name
CONTINUED_LINE = re.compile(r"\\(?:\r\n|\r|\n)")


def imported_frameworks(source: str) -> Set[str]:
    """The frameworks some line may import (a superset: strings count too)."""
    if CONTINUED_LINE.search(source):
        return set(_MENTIONS_FRAMEWORK.findall(source))
    found: Set[str] = set()
    cr = "\r" in source
    for name, mention in _MENTIONS.items():
        for m in mention.finditer(source):  # (in a framework's sources, most lines name it)
            at = m.start()
            line_start = source.rfind("\n", 0, at) + 1
            if cr:  # (else a search back to the start of the file, each time)
                line_start = max(line_start, source.rfind("\r", 0, at) + 1)
            if _IMPORT_BEFORE.search(source[line_start:at]):
                found.add(name)
                break
    return found


def mentions_framework(text: str) -> bool:
    return _MENTIONS_FRAMEWORK.search(text) is not None


@functools.lru_cache(maxsize=32)
def _inference_defs(inference_functions: Tuple[str, ...]) -> "re.Pattern[str]":
    names = "|".join(_fnmatch_words(p) for p in inference_functions)
    either = rf"(?:{names})[\s\\]*[(\[]|" if names else ""  # ("[": type parameters, Python 3.12)
    return re.compile(rf"def[\s\\]+(?:{either}[{_ASCII_ID}]*[^\x00-\x7f])")


def _fnmatch_words(pattern: str) -> str:
    """A regular expression for the names an ``fnmatch`` pattern matches, or more."""
    out = []
    for part in re.split(r"(\*|\?|\[!?\]?[^\]]*\]?)", pattern):
        if part == "*":
            out.append(r"\w*")
        elif part == "?" or part.startswith("["):
            out.append(r"\w")
        else:
            out.append(re.escape(part))
    return "".join(out)


def _starts_a_word(text: str, at: int) -> bool:
    return at == 0 or text[at - 1] not in _IDENTIFIER_CHARS


_BACKPROP_CALL = re.compile(r"grad(?:[\s\\)]|#[^\r\n]*)*\(")  # (``(grad)(y, x)`` too)


def _may_backprop(text: str) -> bool:
    """A superset, read in text, of ``_backprop``: ``backward`` or ``autograd`` anywhere,
    or ``grad`` called."""
    return "backward" in text or "autograd" in text or ("grad" in text and _BACKPROP_CALL.search(text) is not None)


# A line that holds only a comment (no ``{``: not the text of an f-string's expression
# either) holds no anchor, whatever it says; most files that pass the rest of the gate
# only for their words pass it for a comment (a docstring's stay).
# (Its indentation and ``#`` stay: an inference-named function read alone, by its lines'
# indentation (``_def_text``), must still see a comment there, not a line less indented
# than the code around it.)
_COMMENT_LINE = re.compile(r"^([ \t\f]*#)[^\r\n{]*", re.M)
# ``p.grad = None``, ``p.data = e``, ``p.data[i] = e``, ``p.grad.zero_()``,
# ``p.data.copy_(e)`` (``_anchor_lines``): ``.grad``/``.data`` written, also in
# parentheses or augmented, indexed, a ``for`` target. (Not yet: one of several targets,
# ``a, p.data = ...``; before these patterns the gate read none of the forms.)
_GAP_TO = r"(?:[\s\\]|#[^\r\n]*)*"
_GRAD_OR_DATA = re.compile(rf"\.{_GAP_TO}(?:grad|data){_GAP_TO}(?:(?:\){_GAP_TO})*(?:=(?!=)|(?:[-+*/%&|^@]|\*\*|//|>>|<<)=)|\[|in(?![{_ASCII_ID}])|\.{_GAP_TO}(?:zero_|copy_))")


# A line that turns recording off for the block below it: a ``with`` of ``no_grad()``,
# ``inference_mode()`` or ``set_grad_enabled(False)``, or such a decorator.
_OFF_OPENER = re.compile(
    r"^([ \t]*)(?:(?:async[ \t]+)?with\b[^\r\n]*?\b(?:no_grad|inference_mode)[ \t]*\(|with\b[^\r\n]*?\bset_grad_enabled[ \t]*\([ \t]*False"
    r"|(@)[^\r\n]*?\b(?:no_grad|inference_mode)\b)[^\r\n]*$",
    re.M,
)
_DEF_LINE = re.compile(r"[ \t]*(?:async[ \t]+)?def\b")
# (From a name's start only: tried inside a long name not followed by ``(``, it was
# quadratic in the name's length; a fuzzed 170 kB line held the parent for minutes.)
_CALLED_WORD = re.compile(r"(?<![0-9A-Za-z_])([A-Za-z_][0-9A-Za-z_]*)[ \t]*\(")
_DEFINED = re.compile(r"def[ \t]+([A-Za-z_][0-9A-Za-z_]*)")  # (a literal first, the line's start checked after: fast)


def names_called_without_grad(text: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The names called in a block that runs with PyTorch's recording off (under ``with
    torch.no_grad():``, ``inference_mode()``, ``set_grad_enabled(False)``, or in a
    function decorated so): those called bare (``evaluate(...)``) and those called as an
    attribute (``model.infer(...)``, ``utils.evaluate(...)``). Read from the text by
    indentation (a cheap upper bound: another module's call by that name may enter a
    function without grad)."""
    if "no_grad" not in text and "inference_mode" not in text and "set_grad_enabled" not in text:
        return frozenset(), frozenset()
    bare: Set[str] = set()
    attr: Set[str] = set()
    lines = text.splitlines()
    starts = {}
    offset = 0
    for i, line in enumerate(lines):
        starts[offset] = i
        offset += len(line) + 1
    for m in _OFF_OPENER.finditer("\n".join(lines)):
        first = starts.get(m.start())
        if first is None:
            continue
        indent = len(m.group(1).expandtabs())
        header = m.group(2) is not None  # (a decorator: its other decorators and ``def`` follow)
        for line in lines[first + 1:]:
            body = line.lstrip()
            if not body or body.startswith("#"):
                continue
            depth = len(line[: len(line) - len(body)].expandtabs())
            if depth <= indent:
                if header and (body.startswith("@") or _DEF_LINE.match(body)):
                    header = not _DEF_LINE.match(body)
                    continue
                break
            for c in _CALLED_WORD.finditer(body):
                (attr if c.start() > 0 and body[c.start() - 1] == "." else bare).add(c.group(1))
    return frozenset(bare), frozenset(attr)


def names_called(text: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The names ``text`` calls anywhere (a superset: strings and comments count too),
    bare (``evaluate(...)``) and as an attribute (``utils.evaluate(...)``)."""
    bare: Set[str] = set()
    attr: Set[str] = set()
    for c in _CALLED_WORD.finditer(text):
        (attr if c.start() > 0 and text[c.start() - 1] == "." else bare).add(c.group(1))
    return frozenset(bare), frozenset(attr)


def defined_names(text: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The names of the functions a module's text defines at its top level, and of the
    others (methods, nested functions)."""
    if "def" not in text:
        return frozenset(), frozenset()
    top: Set[str] = set()
    inner: Set[str] = set()
    for m in _DEFINED.finditer(text):
        at = m.start()
        if at and text[at - 1] not in " \t\n":
            continue
        start = text.rfind("\n", 0, at) + 1
        head = text[start:at]
        if head.strip(" \t") in ("", "async"):
            (inner if head[:1] in (" ", "\t") else top).add(m.group(1))
    return frozenset(top), frozenset(inner)


_INPLACE_WRITE = r"[-+*/]=|\]\s*=[^=]|\bout\s*="


def text_may_anchor(text: str, frameworks: Iterable[str], inference_functions: Tuple[str, ...]) -> bool:
    """Whether ``text``, in a file that may import ``frameworks``, may hold an anchor."""
    if "#" in text:
        text = _COMMENT_LINE.sub(r"\1", text)
    if (("grad_req" in text or (("grad" in text or "data" in text) and _GRAD_OR_DATA.search(text)))
            and _may_backprop(text)):  # (the gradient buffer's forms anchor only there: ``_anchor_lines``)
        return True
    for fw in frameworks:  # grad-mode scopes and switches, in any use
        for word, pattern in _WORDS_BY_FRAMEWORK[fw].items():
            if word in text:
                for m in _rx(pattern).finditer(text):
                    end = m.end()
                    if _starts_a_word(text, m.start()) and (end == len(text) or text[end] not in _IDENTIFIER_CHARS):
                        return True
    for word, pattern in _CALLS.items():  # calls (not definitions) of the API's names
        if word in text:
            for m in _rx(pattern).finditer(text):
                at = m.start()
                # (A method's name called bare passes too, though the plan reads it as
                # nothing: fixtures/projects/vsepp_wrapper_val_start's train.py lost its
                # SL207 when it did not. Why: ``project.contexts`` computes what the
                # program tells a file only for a file this gate lets through, on the
                # assumption that a file with no anchor of its own has no finding. That
                # train.py has one only through another module's training step and mode
                # switches (``model.train_emb``, ``encode_data``); it passed this gate by
                # its bare ``train(...)``, a word of ``_CALLED``.)
                if _starts_a_word(text, at) and not text.endswith(("def ", "class "), max(0, at - 6), at):
                    return True
    if "requires_grad" in text:
        for m in _rx(_LEAF_KEYWORD).finditer(text):
            if _starts_a_word(text, m.start()):
                return True
    if "volatile" in text and _rx(r"volatile\s*=\s*(?:True|1)\b").search(text):
        return True  # ``Variable(x, volatile=True)`` (SL103)
    if not text.isascii() and _rx(_NOT_ASCII_CALL).search(text):
        return True
    if "mxnet" in frameworks and "forward" in text and _rx(_INPLACE_WRITE).search(text):
        return True  # (an in-place write a Gluon Block's forward may hold: ``_block_writes``)
    lowered = text.lower()
    if any(part in lowered and _rx(_LOSS_CALLS[part]).search(lowered) for part in _LOSS_PARTS):
        return True
    # Last, as it may parse: an inference-named function that may call a model (no name
    # is put in eval mode here: ``.eval(``/``.train(`` would have passed above).
    return "def" in text and _an_inference_def_may_anchor(text, tuple(inference_functions))


def _an_inference_def_may_anchor(text: str, inference_functions: Tuple[str, ...]) -> bool:
    """Whether an inference-named function of ``text`` may anchor (``_anchor_lines``, in a
    file where nothing is put in eval mode: ``_may_call_a_model``). Each ``def`` the
    pattern finds is parsed alone, with its decorators (``_def_text``); where that is not
    the whole function (a line of its body's strings or brackets less indented than the
    ``def`` ends it early, and what is left does not parse), or the match is not a ``def``
    that starts a line, it may anchor. Torch's tree has ~80 files that name a function
    ``eval*``/``generate*``/``valid*`` and nothing else: parsing each whole costs more
    than the rest of their check."""
    inference = F.name_matcher(inference_functions)
    budget = 2 * len(text)  # (functions nested in such functions are read again: bounded)
    defined: Optional[Set[str]] = None  # the names the text's ``def``s give
    for m in _inference_defs(inference_functions).finditer(text):
        snippet = _def_text(text, m.start())
        if snippet is None:
            return True
        budget -= len(snippet)
        if budget < 0:
            return True
        try:
            tree = ast.parse(snippet)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return True
        defs = [node for node in ast.walk(tree) if type(node) in _FUNCS and (not node.name.isascii() or inference(node.name))]
        if not defs or any(_may_call_a_model(node) for node in defs):
            return True
        # One that calls a function of the file (which may call a model: the plan asks)
        if defined is None:
            defined = set(_DEF_NAME.findall(text))
        for node in defs:
            called = _called_names(node)
            if not defined.isdisjoint(called) or not all(n.isascii() for n in called):
                return True
    return False


# A ``def``'s name, with what may stand between (a continued line); read as ``\w`` (a
# name that is not ASCII is compared as ``ast`` reads it: ``_an_inference_def_may_anchor``)
_DEF_NAME = re.compile(r"\bdef[ \t\f\\\r\n]+(\w+)")


def _def_text(text: str, at: int) -> Optional[str]:
    """The text of the function whose ``def`` is at ``at``, from its first decorator to
    the line before the first one (not blank, not only a comment) no more indented than
    the ``def``, with the ``def``'s indentation taken off each line; None when the
    ``def`` does not start its line (``async`` aside) or tabs indent it. Reads only the
    function's lines and the ones above it that may be its decorators."""
    start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
    before = text[start:at]
    indent = before[:len(before) - len(before.lstrip(" \t\f"))]
    if before[len(indent):].strip() not in ("", "async") or "\t" in indent or "\f" in indent:
        return None
    body: List[str] = []
    for m in _LINE.finditer(text, start):
        line = m.group().rstrip("\r\n")
        stripped = line.lstrip(" \t\f")
        if not body:
            body.append(line[len(indent):])
        elif not stripped or stripped.startswith("#"):
            body.append("")
        elif "\t" in line[:len(line) - len(stripped)] or "\f" in line[:len(line) - len(stripped)]:
            return None  # (CPython counts tabs to stops of 8 and starts again after a form feed)
        elif line.startswith(indent) and len(line) - len(stripped) > len(indent):
            body.append(line[len(indent):])
        else:
            break
    # Decorators: ``@`` lines at the ``def``'s indentation above it, with what a decorator
    # spreads over more lines (more indented, or closing brackets). Anything else at
    # that indentation ends the search: a decorator above it is another statement's.
    above: List[str] = []
    first = 0  # lines of ``above`` (nearest first) down to the topmost decorator
    end = start
    while end > 0:
        end -= 2 if text.startswith("\r\n", end - 2) else 1  # (past the line's end)
        begin = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
        line = text[begin:end]
        end = begin
        above.append(line)
        stripped = line.lstrip(" \t\f")
        if not stripped or stripped.startswith("#"):
            continue
        if not line.startswith(indent):
            break
        deeper = len(line) - len(stripped) > len(indent)
        if stripped.startswith("@") and not deeper:
            first = len(above)
        elif not deeper and not stripped.startswith((")", "]", "}")):
            break
    head = ["" if not s.lstrip(" \t\f") or s.lstrip(" \t\f").startswith("#") else s[len(indent):]
            for s in reversed(above[:first])]
    return "\n".join(head + body) + "\n"


# Methods after which ``flow.Analyzer._call`` binds their receiver anew (``xs.append(v)``,
# ``w.requires_grad_()``)
_KEEPS_RECEIVER = frozenset({"append", "extend", "insert"}) | F.MAKE_LEAF_METHODS


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _may_call_a_model(fdef: ast.AST) -> bool:
    """Whether ``roles.is_model_call`` may hold for a call in ``fdef`` in a file where no
    name is put in eval mode: the callee reads as a model (``model(x)``,
    ``self.encoder(x)``, ``self(x)``, ``net.forward(x)``) or is a name the function's
    walk may bind to a value (a parameter, an assignment target, a receiver the flow
    rebinds), which may hold a model. A superset: calls in nested functions count too."""
    a = fdef.args
    names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
    callees = []
    for node in ast.walk(fdef):
        t = type(node)
        if t is ast.Call:
            callees.append(_dotted(node.func))
            if type(node.func) is ast.Attribute and node.func.attr in _KEEPS_RECEIVER:
                names.add(_dotted(node.func.value))
        elif (t is ast.Name or t is ast.Attribute) and type(node.ctx) is not ast.Load:
            names.add(_dotted(node))
    for callee in callees:
        if callee is None:
            continue
        if callee in names or not callee.isascii():
            return True
        if callee.endswith((".forward", ".hybrid_forward")):
            callee = callee.rsplit(".", 1)[0]
        parts = callee.split(".")
        if callee == "self" or ((len(parts) == 1 or (len(parts) == 2 and parts[0] == "self"))
                                and F.MODEL_NAME.search(parts[-1])):
            return True
    return False


def _constant_in(node: ast.AST, values: tuple) -> bool:
    return type(node) is ast.Constant and any(node.value == v for v in values)


# --- units -----------------------------------------------------------------------------
class _Unit:
    __slots__ = ("index", "kind", "nodes", "first", "last", "cls", "name", "words")

    def __init__(self, index: int, kind: str, nodes: List[ast.AST], first: int, last: int,
                 cls: Optional[int] = None, name: Optional[str] = None):
        self.index = index
        self.kind = kind  # "stmt" | "def" | "class" (a class header) | "method"
        self.nodes = nodes  # every node of the file is under exactly one unit's nodes
        self.first, self.last = first, last  # lines it spans (a class: the whole class)
        self.cls = cls  # a method's header unit
        self.name = name
        self.words: Set[str] = set()  # of its text


def _start(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None) or ()
    return min([node.lineno] + [d.lineno for d in decorators])


def _units(tree: ast.Module, lines: List[str]) -> List[_Unit]:
    units: List[_Unit] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            header = _Unit(len(units), "class", [], _start(stmt), stmt.end_lineno, name=stmt.name)
            units.append(header)
            rest = []
            for b in stmt.body:
                if isinstance(b, _FUNCS):
                    units.append(_Unit(len(units), "method", [b], _start(b), b.end_lineno, header.index, b.name))
                else:
                    rest.append(b)
            header.nodes = [*stmt.decorator_list, *stmt.bases, *stmt.keywords, *rest]
            # Its text: the class line(s) and the body statements that are not methods.
            body_start = _start(stmt.body[0])
            parts = lines[header.first - 1:body_start - 1] or [lines[header.first - 1]]
            parts += [line for b in rest for line in lines[_start(b) - 1:b.end_lineno]]
            header.words = _words("".join(parts))
        elif isinstance(stmt, _FUNCS):
            units.append(_Unit(len(units), "def", [stmt], _start(stmt), stmt.end_lineno, name=stmt.name))
        else:
            units.append(_Unit(len(units), "stmt", [stmt], _start(stmt), stmt.end_lineno))
    for u in units:
        if u.kind != "class":
            u.words = _words("".join(lines[u.first - 1:u.last]))
    return units


def _walk(nodes: Iterable[ast.AST]) -> Iterable[ast.AST]:
    for n in nodes:
        yield from ast.walk(n)


# The node types the plan looks at; the tree is walked once for all of them.
_INDEXED = frozenset({ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.keyword, ast.NamedExpr, ast.Assign, ast.Global,
                      *_FUNCS, *_IMPORTS})
# Fields that never hold a node with one of those under it (names, operators, contexts).
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "kind", "type_comment",
                          "type_ignores", "level", "module", "conversion", "is_async", "simple"})
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {ast.Constant: ()}
_AST = ast.AST


def _index(nodes: Iterable[ast.AST]) -> Dict[type, List[ast.AST]]:
    """The nodes under ``nodes`` of the ``_INDEXED`` types, by type: one walk, cheaper
    than ``ast.walk``'s generators, which cost more than the plan's own work."""
    found: Dict[type, List[ast.AST]] = {t: [] for t in _INDEXED}
    fields_of = _CHILD_FIELDS
    todo = list(nodes)
    pop, push, extend, bucket_of = todo.pop, todo.append, todo.extend, found.get
    while todo:
        node = pop()
        t = type(node)
        fields = fields_of.get(t)
        if fields is None:
            if not isinstance(node, _AST):  # (a list's None or name, pushed unfiltered)
                continue
            fields = fields_of[t] = tuple(f for f in t._fields if f not in _LEAF_FIELDS)
        bucket = bucket_of(t)
        if bucket is not None:
            bucket.append(node)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(value)
            elif value is not None:
                push(value)
    return found


def _module_scope(stmt: ast.AST) -> Iterable[ast.AST]:
    """The nodes of a module-level statement that the module walk evaluates: not in the
    body of a function or lambda (their decorators and defaults are), in class bodies."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        t = type(node)
        if node is None or t is str:  # (in a list: ``{**d}``'s key, ``case C(a=x)``'s name)
            continue
        yield node
        if t in _FUNCS or t is ast.Lambda:
            args = node.args
            todo.extend(getattr(node, "decorator_list", ()))
            todo.extend(d for d in (*args.defaults, *args.kw_defaults) if d is not None)
        elif t is ast.ClassDef:  # (the module walk walks a class body, not a function's)
            todo.extend((*node.decorator_list, *node.bases, *node.keywords, *node.body))
        else:
            # ``ast.iter_child_nodes`` without its generators, and without the operator and
            # context nodes (``ast.Load``, ``ast.Add``: nothing the plan reads of them).
            fields = _SCOPE_FIELDS.get(t)
            if fields is None:
                fields = _SCOPE_FIELDS[t] = tuple(f for f in t._fields if f not in ("ctx", "op", "ops"))
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    todo.extend(value)
                elif isinstance(value, _AST):
                    todo.append(value)


_SCOPE_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _root_name(node: ast.AST) -> Optional[str]:
    while type(node) in (ast.Attribute, ast.Subscript):
        node = node.value
    return node.id if type(node) is ast.Name else None


def _bound_names(node: ast.AST) -> Iterable[str]:
    """Names whose value in the analysis' environment ``node`` changes."""
    t = type(node)
    if t in _FUNCS or t is ast.ClassDef:
        yield node.name
    elif t is ast.Name and type(node.ctx) is not ast.Load:
        yield node.id
    elif t in (ast.Attribute, ast.Subscript) and type(node.ctx) is not ast.Load:
        root = _root_name(node)
        if root:
            yield root
    elif t is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _KEEPS_RECEIVER:
        root = _root_name(node.func.value)
        if root:
            yield root
    elif t in _IMPORTS:
        for alias in node.names:
            if alias.name != "*":
                yield alias.asname or alias.name.split(".", 1)[0]
    elif t in _NAMED_BINDERS and node.name:
        yield node.name
    elif t is _MATCH_MAPPING and node.rest:
        yield node.rest


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _imports(body: List[ast.stmt]) -> List[ast.AST]:
    """The import statements in any scope (statements only: much less to walk)."""
    out: List[ast.AST] = []
    todo = list(body)
    bodies_of = _BODIES_OF
    while todo:
        node = todo.pop()
        t = type(node)
        if t in _IMPORTS:
            out.append(node)
            continue
        names = bodies_of.get(t)
        if names is None:
            names = bodies_of[t] = tuple(name for name in _BODIES if name in t._fields)
        for name in names:  # (none for most statements)
            block = getattr(node, name)
            if block:
                todo.extend(block)
    return out


_BODIES_OF: Dict[type, Tuple[str, ...]] = {}


# --- whole-file facts ---------------------------------------------------------------------
def _frameworks(imports: Iterable[ast.AST]) -> Set[str]:
    """The frameworks that ``names.Names`` finds imported in any scope."""
    found = set()
    for node in imports:
        if type(node) is ast.Import:
            qnames = [alias.name for alias in node.names]
        elif node.level == 0 and node.module is not None:
            qnames = [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
        else:
            continue
        found.update(fw for fw in map(F.framework_of, qnames) if fw)
    return found


def _counts(found: Dict[type, List[ast.AST]]) -> Tuple[Counter, ...]:
    """Name references, direct calls by name, attribute references, and method calls the
    analysis may resolve (``self.m()``, ``cls.m()``, ``obj.m()`` on what a class-named
    call made: ``obj = Trainer(...)``, ``self.obj = Trainer(...)``, ``Trainer().m()``),
    in the nodes ``_index`` found. A method referenced otherwise escapes."""
    instances: Set[str] = set()  # names (``x``, ``self.x``) bound to a class-named call
    for node in found[ast.Assign]:
        v = node.value
        if type(v) is ast.Call and type(v.func) is ast.Name and v.func.id[:1].isupper():
            for t in node.targets:
                if type(t) is ast.Name:
                    instances.add(t.id)
                elif type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self":
                    instances.add("self." + t.attr)
    name_calls, self_calls = [], []
    for node in found[ast.Call]:
        f = node.func
        t = type(f)
        if t is ast.Name:
            name_calls.append(f.id)
        elif t is ast.Attribute:
            r = f.value
            tr = type(r)
            if tr is ast.Name:
                resolvable = r.id in ("self", "cls") or r.id in instances
            elif tr is ast.Attribute:
                resolvable = type(r.value) is ast.Name and r.value.id == "self" and "self." + r.attr in instances
            else:
                resolvable = tr is ast.Call and type(r.func) is ast.Name and r.func.id[:1].isupper()
            if resolvable:
                self_calls.append(f.attr)
    return (Counter(map(_ID, found[ast.Name])), Counter(name_calls), Counter(map(_ATTR, found[ast.Attribute])),
            Counter(self_calls))


_ID, _ATTR = operator.attrgetter("id"), operator.attrgetter("attr")


def _count(full: Tuple[Counter, ...], names: Set[str], out: Tuple[Counter, ...]) -> None:
    """Add to ``out`` the counts in ``full`` (``_counts``) of ``names``."""
    for counts, into in zip(full, out):
        for name in names:
            n = counts.get(name)
            if n:
                into[name] += n


# (first line of a long module-level function or class, lines right after each statement
# of its body ends where the next starts on a later line)
Cuts = Tuple[Tuple[int, Tuple[int, ...]], ...]
LONG_STATEMENT = 3000  # lines


def starts_of(body: Iterable[ast.stmt]) -> Tuple[int, ...]:
    """The lines where these statements start (their decorators included)."""
    return tuple(_start(n) for n in body)


def inner_cuts(body: Iterable[ast.stmt]) -> Cuts:
    """Where the bodies of the module-level functions and classes of over
    ``LONG_STATEMENT`` lines may be cut for parsing in pieces (``engine.parse``)."""
    out = []
    for stmt in body:
        if type(stmt) in _FUNCS or type(stmt) is ast.ClassDef:
            if stmt.end_lineno - stmt.lineno > LONG_STATEMENT:
                inside = stmt.body
                out.append((_start(stmt), tuple(
                    a.end_lineno + 1 for a, b in zip(inside, inside[1:]) if _start(b) > a.end_lineno)))
    return tuple(out)


def whole_of(tree: ast.Module) -> Whole:
    """``Whole`` of a file analysed in full."""
    found = _index(tree.body)
    return Whole(frozenset(_frameworks(_imports(tree.body))), *(dict(c) for c in _counts(found)), walrus=bool(found[ast.NamedExpr]),
                 backprop=_backprop(found))


def _block_writes(found: Dict[type, List[ast.AST]]) -> Set[int]:
    """The in-place writes (``out += x``, ``y[:] = v``, ``out=y``) in a ``forward`` or
    ``hybrid_forward`` of an MXNet file: a Gluon Block's forward records when it trains
    (``flow``: its entry; SL304), wherever its ``record()`` is."""
    lines: Set[int] = set()
    for fn in found[ast.FunctionDef]:
        if fn.name not in ("forward", "hybrid_forward"):
            continue
        for node in ast.walk(fn):
            t = type(node)
            if t is ast.AugAssign or (t is ast.Subscript and type(node.ctx) is ast.Store) or (
                    t is ast.keyword and node.arg == "out"):
                lines.add(node.lineno)
    return lines


def _backprop(found: Dict[type, List[ast.AST]]) -> bool:
    """``Whole.backprop`` of the nodes ``_index`` found: something may backpropagate. A
    superset of what the analysis takes for a backward pass (``flow``: any
    ``x.backward(...)``, and ``F.BACKWARD_FUNCS`` however reached): the attribute
    ``backward`` anywhere; ``grad``/``backward`` imported from an ``autograd`` module (under
    any name);
    ``grad`` read from a name or attribute spelled ``autograd`` or imported as it
    (``import torch.autograd as ag``); a call of ``x.grad(...)`` or of a bare ``grad``/
    ``backward``. Not the ``grad = p.grad`` of every optimizer."""
    autograd = {"autograd"}
    for node in (*found[ast.Import], *found[ast.ImportFrom]):
        for alias in node.names:
            last = _last(alias.name)
            if type(node) is ast.ImportFrom and last in ("backward", "grad", "*") and _last(node.module or "") == "autograd":
                return True  # (``from torch.autograd import grad as g``; ``*`` binds them too)
            if last == "autograd" and alias.asname:
                autograd.add(alias.asname)
    for node in found[ast.Attribute]:
        a = node.attr
        if a == "backward" or (a == "grad" and type(node.value) in (ast.Name, ast.Attribute) and _ATTR_OR_ID(node.value) in autograd):
            return True
    for node in found[ast.Call]:
        f = node.func
        if (type(f) is ast.Name and f.id in ("backward", "grad")) or (type(f) is ast.Attribute and f.attr == "grad"):
            return True
    return False


def _ATTR_OR_ID(node) -> str:
    return node.id if type(node) is ast.Name else node.attr


def whole_of_source(code: str) -> Optional[Whole]:
    try:
        return whole_of(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def split_lines(text: str) -> List[str]:
    """Lines with their endings, counted as ``ast`` and LibCST count them (``\\r\\n``,
    ``\\r`` and ``\\n`` end a line; ``str.splitlines`` splits on more)."""
    return _LINE.findall(text)


# --- the plan -------------------------------------------------------------------------------
def plan(source: str, inference_functions: Sequence[str], tree: Optional[ast.Module] = None) -> Optional[Plan]:
    """What to parse. None when ``ast`` cannot parse the file: parse all of it.
    ``tree``: ``ast.parse(source)``, when the caller has it."""
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    lines = split_lines(source)
    total = len(lines)

    # Imports (any scope: the frameworks), then what anchors the analysis: most files
    # that pass the text gate stop here.
    imports = _imports(tree.body)
    frameworks = frozenset(_frameworks(imports))
    if not frameworks:
        return Plan(None, Whole(frameworks), 0, total)
    found = _index(tree.body)
    # local name -> the last part of what it names (``import a.b`` binds ``a``)
    imported: Dict[str, Set[str]] = defaultdict(set)  # (imports in any scope)
    for node in imports:
        for alias in node.names:
            plain = alias.asname is None and type(node) is ast.Import  # ``import a.b`` binds ``a``
            imported[alias.asname or alias.name.split(".", 1)[0]].add(alias.name.split(".", 1)[0] if plain else _last(alias.name))
    scope_names = frozenset().union(*(_SCOPE_NAMES[fw] for fw in frameworks))
    backprop = _backprop(found)
    anchor_lines = _anchor_lines(found, imported, scope_names, inference_functions, backprop)
    if "mxnet" in frameworks:
        anchor_lines |= _block_writes(found)
    if not anchor_lines:
        return Plan(None, Whole(frameworks), 0, total)

    units = _units(tree, lines)
    n = len(units)
    owner = [0] * (total + 2)  # the innermost unit of each line (a class's methods are in it)
    for u in units:
        owner[u.first:u.last + 1] = [u.index] * (u.last - u.first + 1)
    # What each unit calls by name, and as ``self.m()``/``cls.m()``: the calls
    # ``flow.Analyzer._local_target`` resolves (a name only referenced resolves to none).
    called: Dict[int, Set[str]] = defaultdict(set)
    self_called: Dict[int, Set[str]] = defaultdict(set)
    for node in found[ast.Call]:
        f = node.func
        if type(f) is ast.Name:
            called[owner[node.lineno]].add(f.id)
        elif type(f) is ast.Attribute:
            self_called[owner[node.lineno]].add(f.attr)
    anchors = {owner[line] for line in anchor_lines}

    # Module scope: names that must resolve alike, what binds them, what may stop the walk.
    module_imported: Set[str] = set()
    defines: Dict[str, List[int]] = defaultdict(list)  # def/class names at module scope
    binds: Dict[str, List[int]] = defaultdict(list)  # other module-scope names -> stmt units
    methods: Dict[str, List[int]] = defaultdict(list)
    always: Set[int] = set()
    for u in units:
        if u.kind in ("def", "class"):
            defines[u.name].append(u.index)
            if u.kind == "class":
                for node in (node for part in u.nodes for node in _module_scope(part)):
                    if type(node) is ast.Raise:
                        always.add(u.index)  # a raise in the class body may stop the module's walk
                    elif type(node) in _FUNCS:  # a method defined in an ``if``/``try`` of the body
                        methods[node.name].append(u.index)
        elif u.kind == "method":
            methods[u.name].append(u.index)
        else:
            for node in _module_scope(u.nodes[0]):
                t = type(node)
                if t in _IMPORTS:  # (binds no value the walk tracks: flow passes over it)
                    always.add(u.index)
                    module_imported.update(_bound_names(node))
                    continue
                if t is ast.Raise:
                    always.add(u.index)  # may stop the module's walk
                for name in _bound_names(node):
                    (defines if t in _FUNCS or t is ast.ClassDef else binds)[name].append(u.index)
    for name in module_imported:  # a name both imported and bound resolves to nothing
        always.update(binds.get(name, ()))
        always.update(defines.get(name, ()))
    for name in F.CONVERSION_BUILTINS:  # bound at module level, ``float(x)`` is no conversion anywhere
        always.update(binds.get(name, ()))  # (nor, by a method, in its class: ``names.Names.builtin``)
        always.update(j for j in methods.get(name, ()) if units[j].kind == "method")

    counts = (Counter(), Counter(), Counter(), Counter())
    full: Optional[Tuple[Counter, ...]] = None
    fnames = {u.name for u in units if u.kind in ("def", "method")}
    if fnames:
        full = _counts(found)
        _count(full, fnames, counts)
    escaped = _escaped(units, *counts)
    partners = _line_partners(units)
    changed, handing = _changes_and_hand_overs(found, owner, units, escaped, defines, methods)
    needs = _needs(units, defines, binds, methods, lines, escaped, called, self_called, partners, changed, handing)
    # Imports and the like stay for what they bind, not for what they call: whatever
    # depends on them is in the closure already.
    kept = _closure(anchors, needs) | always
    # (what shares a line with what is always kept stays too, with what it needs)
    kept |= _closure([j for i in always for j in partners.get(i, ()) if j not in kept], needs)
    kept = {i for i in kept if i < n}  # (not the hubs)
    text, kept_lines = _blank(lines, units, kept) if len(kept) < n else (source, total)
    if kept_lines >= WHOLE_SHARE * total:
        # Parsing the rest costs less than what a slice may cost later: its fixes are
        # made again from the whole file (``engine.lint_fired``).
        kept, text, kept_lines = set(range(n)), source, total

    # How the kept functions are referenced, counted wherever their names occur.
    fnames = {node.name for t in _FUNCS for node in found[t] if owner[node.lineno] in kept} - fnames
    if fnames:
        _count(full if full is not None else _counts(found), fnames, counts)
    walrus = any(owner[node.lineno] in kept for node in found[ast.NamedExpr])  # (in what is parsed)
    whole = Whole(frameworks, *(dict(c) for c in counts), walrus=walrus, backprop=backprop)
    starts = tuple(u.first for u in units if u.kind != "method")
    body = tuple(tree.body) if len(kept) == n else _kept_body(tree, units, kept, lines)
    return Plan(text, whole, kept_lines, total, starts, body, lines, inner_cuts(body) if total > LONG_STATEMENT else ())


def _kept_body(tree: ast.Module, units: List[_Unit], kept: Set[int], lines: List[str]) -> Tuple[ast.stmt, ...]:
    """``Plan.body``: the statements of the kept units, as ``_blank`` leaves them."""
    out: List[ast.stmt] = []
    following = iter(units)
    for stmt in tree.body:
        unit = next(following)
        if type(stmt) is not ast.ClassDef:
            if unit.index in kept:
                out.append(stmt)
            continue
        body: List[ast.stmt] = []
        dropped: Optional[_Unit] = None
        for b in stmt.body:
            if type(b) in _FUNCS:
                method = next(following)
                if method.index in kept:
                    body.append(b)
                elif dropped is None:
                    dropped = method
            else:
                body.append(b)
        if unit.index in kept:
            if not body:  # (``_blank``'s ``pass``, where the first method left out was)
                indent = len(_indentation(lines[dropped.first - 1]))
                body = [ast.Pass(lineno=dropped.first, col_offset=indent, end_lineno=dropped.first, end_col_offset=indent + 4)]
            cls = copy.copy(stmt)
            cls.body = body
            out.append(cls)
    return tuple(out)


def _blank(lines: List[str], units: List[_Unit], kept: Set[int]) -> Tuple[str, int]:
    """The text with every line of what is not kept emptied (its newline stays), and the
    number of lines kept. A kept class left without a body gets a ``pass``."""
    blank = [False] * (len(lines) + 2)
    placeholders: Dict[int, str] = {}
    has_body = {u.cls for u in units if u.kind == "method" and u.index in kept}
    has_body.update(u.index for u in units if u.kind == "class" and _has_statements(u))
    for u in units:
        if u.index in kept or (u.kind == "method" and u.cls not in kept):
            continue
        if u.kind == "method" and u.cls not in has_body:
            has_body.add(u.cls)
            line = lines[u.first - 1]
            placeholders[u.first] = _indentation(line) + "pass" + _newline(line)
        for number in range(u.first, u.last + 1):
            blank[number] = True
    out = []
    kept_lines = 0
    for number, line in enumerate(lines, 1):
        if number in placeholders:
            out.append(placeholders[number])
        elif blank[number]:
            out.append(_newline(line))
        else:
            out.append(line)
            kept_lines += 1
    return "".join(out), kept_lines


def _escaped(units: List[_Unit], name_refs: Counter, name_calls: Counter, attr_refs: Counter,
             self_calls: Counter) -> Set[int]:
    """The module-level functions and methods that ``flow.Analyzer._find_escapes`` will
    find referenced other than by a direct call (by the same counts): their entry state
    and parameters are unknown whatever their call sites, so they do not need them."""
    counts = (name_refs, name_calls, attr_refs, self_calls)
    return {u.index for u in units if u.kind in ("def", "method") and escapes(u.name, u.kind == "method", *counts)}


def _needs(units: List[_Unit], defines: Dict[str, List[int]], binds: Dict[str, List[int]],
           methods: Dict[str, List[int]], lines: List[str], escaped: Set[int],
           called: Dict[int, Set[str]], self_called: Dict[int, Set[str]],
           partners: Dict[int, Set[int]], changed: Dict[int, Set[str]],
           handing: Dict[str, Set[int]]) -> List[Set[int]]:
    """For each unit, the units it needs when it is kept (see the module docstring),
    followed by hubs (see below; the closure's hubs are no units). ``called``/
    ``self_called``: the names each unit calls, and calls as ``self.m()``/``cls.m()``;
    ``partners``: ``_line_partners``; ``changed``, ``handing``: ``_changes_and_hand_overs``."""
    n = len(units)
    needs: List[Set[int]] = [set() for _ in range(n)]
    # Units that change a name's value in the module walk. Functions, classes and methods
    # bind their names to values the analysis knows nothing about, with or without them:
    # not binders (what their bodies and decorators bind is) ...
    binders: Dict[str, List[int]] = defaultdict(list, {name: list(js) for name, js in binds.items()})
    reads: Dict[int, Set[str]] = {}  # the words of what runs in the module walk
    free_reads: Dict[int, Set[str]] = {}
    for u in units:
        if u.kind == "class":
            reads[u.index] = u.words
            for node in _walk(u.nodes):
                if type(node) not in _FUNCS and type(node) is not ast.ClassDef and type(node) not in _IMPORTS:
                    for name in _bound_names(node):
                        binders[name].append(u.index)
        elif u.kind in ("def", "method"):  # its decorators run in the module walk
            reads[u.index] = _decorator_words(u.nodes[0], lines)
            for node in _walk(u.nodes[0].decorator_list):  # (``@(w := ...).hook``)
                for name in _bound_names(node):
                    binders[name].append(u.index)
        else:
            reads[u.index] = u.words
    for u in units:  # ... unless they rebind a name something else binds
        if u.kind in ("def", "class", "method") and u.name in binders:
            binders[u.name].append(u.index)
    # A function's body runs in the module walk where it is called or handed to a runner
    # (``_changes_and_hand_overs``): the module-level names it reads (``flow``'s free
    # names) hold the values they have there, and what it does to them (``opt.step()``,
    # ``h.detach_()``, ``net.fc.bias.data = ...``) is done there. An escaped one gets
    # none of those values.
    called_names = set().union(*called.values()) if called else set()
    method_calls = {"forward", "hybrid_forward", "__call__"}.union(*self_called.values())  # (``net(x)``)
    for u in units:
        if u.kind in ("def", "method") and (u.name in handing or (u.index not in escaped and u.name in (
                called_names if u.kind == "def" else method_calls))):
            free = u.words & binders.keys()
            if free:
                free_reads[u.index] = free
                changes = changed.get(u.index)
                if changes and not changes.isdisjoint(free):
                    reads[u.index] = reads[u.index] | (changes & free)
    # Every "needs" below relates all units of one set to all of another (the readers of a
    # name and its binders, say): such a relation goes through a *hub*, an extra node
    # (index >= n) that the first set needs and that needs the second, so that it costs
    # the sum of their sizes, not the product (8,000 ``x = 1`` were 64M pairs). A path
    # from unit to unit through hubs exists exactly when a path of pairs did: the closure
    # restricted to units is the same (``_closure``'s caller drops the hubs).
    hubs: Dict[tuple, int] = {}

    def hub(key: tuple, targets: Iterable[int] = ()) -> int:
        h = hubs.get(key)
        if h is None:
            h = hubs[key] = len(needs)
            needs.append(set(targets))
        return h

    def fed(key: tuple, sources: Iterable[int]) -> int:
        """The hub ``key``, needed by every unit of ``sources`` (made once)."""
        h = hubs.get(key)
        if h is None:
            h = hubs[key] = len(needs)
            needs.append(set())
            for j in sources:
                needs[j].add(h)
        return h

    # Where instances of a class are made (and, through the module walk, called): a
    # ``forward`` gets its entry state and arguments from ``net(x)``.
    namers: Dict[str, List[int]] = defaultdict(list)
    classes = {u.name for u in units if u.kind == "class"}
    for u in units:
        if u.kind != "class":
            for word in u.words & classes:
                namers[word].append(u.index)
    # What ``__init__`` stores on ``self`` (its first parameter), by class: what a method
    # reading ``self.x`` reads (``self.proj = nn.Linear(...)``: a model's layer; ``self.loss_fn
    # = nn.MSELoss()``: a loss), whatever the method is called (``forward_loss``, ``encode``).
    init_stores: Dict[int, List[Tuple[int, Set[str]]]] = defaultdict(list)
    for j in methods.get("__init__", ()):
        init = units[j]
        if init.kind != "method":
            continue
        a = init.nodes[0].args
        first = (a.posonlyargs + a.args)[:1]
        if first:
            me = first[0].arg
            stored = {node.attr for node in _walk(init.nodes) if type(node) is ast.Attribute
                      and type(node.ctx) is not ast.Load and type(node.value) is ast.Name and node.value.id == me}
            if stored:
                init_stores[init.cls].append((j, stored))
    for u in units:
        i = u.index
        if u.kind == "method":
            needs[i].add(u.cls)
            needs[i].update(j for j, stored in init_stores.get(u.cls, ()) if j != i and not stored.isdisjoint(u.words))
            if u.name in ("forward", "hybrid_forward"):
                if i not in escaped:
                    needs[i].add(hub(("instances", units[u.cls].name), namers.get(units[u.cls].name, ())))
                # and what makes (and calls) an instance runs it: ``net(x)`` is a call of
                # ``forward``, as ``helper(x)`` is of ``helper`` (escaped or not: what the
                # call hands back is its return, ``Facts.left_returned``)
                needs[fed(("forward-of", units[u.cls].name), namers.get(units[u.cls].name, ()))].add(i)
                # (and what ``self.x`` is in it: what ``__init__`` puts there)
                needs[i].update(j for j in methods.get("__init__", ()) if units[j].cls == u.cls)
        # What is analysed needs the functions it calls and the classes it names, and a
        # function its call sites. (A call in a decorator is one: the module walk makes
        # it, with the values it passes.) A module-level function only through its
        # calls: referenced, it is a value the analysis knows nothing of, defined or not
        # (and it escapes: it needs no call sites). (``defines`` and ``calls`` hold
        # names as ``ast`` reads them, NFKC-normalised; words hold both spellings.)
        calls = called.get(i, ())
        for word in u.words:
            js = defines.get(word)
            if not js:
                continue
            # any unit naming it -> its classes and statements; those statements -> it
            needs[i].add(hub(("named", word), (j for j in js if units[j].kind != "def")))
            needs[fed(("names", word), (j for j in js if units[j].kind not in ("def", "class")))].add(i)
            if word in calls:  # a call site -> its functions; those not escaped -> it
                needs[i].add(hub(("called", word), (j for j in js if units[j].kind == "def")))
                needs[fed(("calls", word), (j for j in js if units[j].kind == "def" and j not in escaped))].add(i)
        for word in reads[i]:  # the module walk: what binds a name, before or after
            js = binders.get(word)
            if js:
                needs[i].add(hub(("read", word), js))
                needs[fed(("bound", word), js)].add(i)  # what follows a binding at module level sees its value
        for word in free_reads.get(i, ()):  # (one way: what reads a name only reads it)
            needs[i].add(hub(("read", word), binders[word]))
        for m in self_called.get(i, ()):
            js = methods.get(m)
            if js:
                needs[i].add(hub(("self", m), js))
                needs[fed(("selfs", m), (j for j in js if j not in escaped))].add(i)
    # A module-level function handed to a call as an argument escapes by the counts, but
    # the flow follows it into a local runner that only calls it (``flow.Analyzer.
    # _note_handed``: ``run(step)`` with ``def run(fn): return fn()``): the units that
    # hand it over to a function or method of this file are its call sites, and they
    # need the runner (what they call).
    # A module-level function handed to a call as an argument escapes by the counts, but
    # the flow follows it into a local runner that only calls it (``flow.Analyzer.
    # _note_handed``: ``run(step)`` with ``def run(fn): return fn()``): the units that
    # hand it over are its call sites, and they need the runner (what they call).
    for name, hands in handing.items():
        for j in defines[name]:
            if j in escaped and units[j].kind == "def":
                needs[j].update(h for h in hands if h != j)
    for u in units:
        if u.kind == "class":  # a class needs the classes derived from it (overrides)
            cls_bases = [node for node in u.nodes if isinstance(node, (ast.expr, ast.keyword))]
            for node in _walk(cls_bases):
                if type(node) is ast.Name:
                    for j in defines.get(node.id, ()):
                        needs[j].add(u.index)
    for i, js in partners.items():
        needs[i].update(js)
    return needs


# Methods whose call changes what the analysis knows of their receiver (its train/eval
# mode, its gradient buffers, its leaves, its items).
_CHANGES_RECEIVER = _KEEPS_RECEIVER | {"step", "zero_grad", "zero_", "fill_", "detach_", "eval", "train", "backward"}


def _changes_and_hand_overs(found: Dict[type, List[ast.AST]], owner: List[int], units: List[_Unit],
                            escaped: Set[int], defines: Dict[str, List[int]], methods: Dict[str, List[int]],
                            ) -> Tuple[Dict[int, Set[str]], Dict[str, Set[int]]]:
    """From the plan's index (``owner``: the unit of each line): for each unit, the
    names whose value its code may change for the analysis (roots of attribute and item
    stores, of calls of ``_CHANGES_RECEIVER`` methods; names declared ``global``); and
    for each module-level function that escapes, the units that hand it, as an argument
    named as it is, to a call of a function or method of this file (a runner the flow
    may follow, ``flow.Analyzer._note_handed``)."""
    changed: Dict[int, Set[str]] = defaultdict(set)
    for node in found[ast.Call]:
        f = node.func
        if type(f) is ast.Attribute and f.attr in _CHANGES_RECEIVER:
            root = _root_name(f.value)
            if root:
                changed[owner[node.lineno]].add(root)
    for t in (ast.Attribute, ast.Subscript):
        for node in found[t]:
            if type(node.ctx) is not ast.Load:
                root = _root_name(node)
                if root:
                    changed[owner[node.lineno]].add(root)
    for node in found[ast.Global]:
        changed[owner[node.lineno]].update(node.names)
    handing: Dict[str, Set[int]] = defaultdict(set)
    escaped_defs = {units[j].name for j in escaped if units[j].kind == "def"}
    if escaped_defs:
        runners = {name for name, js in defines.items() if any(units[j].kind == "def" for j in js)}
        for node in found[ast.Call]:
            f = node.func
            if (type(f) is ast.Name and f.id in runners) or (type(f) is ast.Attribute and f.attr in methods):
                for a in (*node.args, *(k.value for k in node.keywords)):
                    if type(a) is ast.Name and a.id in escaped_defs:
                        handing[a.id].add(owner[node.lineno])
    return changed, handing


def _line_partners(units: List[_Unit]) -> Dict[int, Set[int]]:
    """Simple statements that share a line (``x = 0; import torch``), each with the
    first one on the line and it with them: a line is kept or blanked whole."""
    partners: Dict[int, Set[int]] = defaultdict(set)
    owner: Dict[int, int] = {}
    for u in units:
        if u.kind == "stmt":
            for line in (u.first, u.last):
                j = owner.setdefault(line, u.index)
                if j != u.index:
                    partners[j].add(u.index)
                    partners[u.index].add(j)
    return partners


def _closure(start: Iterable[int], needs: List[Set[int]]) -> Set[int]:
    kept: Set[int] = set()
    todo = list(start)
    while todo:
        i = todo.pop()
        if i not in kept:
            kept.add(i)
            todo.extend(needs[i] - kept)
    return kept


def _decorator_words(fdef: ast.AST, lines: List[str]) -> Set[str]:
    return _words("".join(line for d in fdef.decorator_list for line in lines[d.lineno - 1:d.end_lineno]))


def _words(text: str) -> Set[str]:
    words = set(_WORD.findall(text))
    if not text.isascii():
        words.update(unicodedata.normalize("NFKC", w) for w in list(words) if not w.isascii())
    return words


def _has_statements(header: _Unit) -> bool:
    return any(isinstance(node, ast.stmt) for node in header.nodes)


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _newline(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]
