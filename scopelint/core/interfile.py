"""What one module of a program tells the others: the summaries of its functions and
its model classes (``Exports``), and what a module is told of the modules it imports
(``Context``). Both are plain, hashable data (no syntax nodes): they cross process
boundaries, go into cache keys, and name where in the other file a summary comes from.

The core knows nothing of files: a module is a dotted name, a place is the text
``where`` the project layer (``scopelint.project``) gives it. The analysis of one
module (``flow.Analyzer``) reads a ``Context`` and is summarised by ``exports_of``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Mapping, Optional, Sequence, Tuple

if TYPE_CHECKING:  # (not imported before an analysis runs: the project layer reads this
    # module in runs that parse nothing, and the state model imports LibCST)
    from scopelint.core.facts import FunctionInfo, Returns


@dataclass(frozen=True)
class Summary:
    """A module-level function of another module, as its callers see it."""

    name: str  # as defined (``evaluate``)
    where: str  # ``utils.py:12``: where it is defined, for messages
    params: Tuple[str, ...]  # positional parameters, in order
    left: bool = False  # everything it returns has left the graph
    # (framework, "on"/"off", origin kind, api): the recording state every returned value
    # was made in, where the function itself set it (its decorator, a ``with``, a setter).
    rec: Tuple[Tuple[str, str, str, str], ...] = ()
    inference: bool = False  # it returns inference tensors
    passes: Optional[str] = None  # the parameter it hands back as it came in
    leaves_eval: Tuple[str, ...] = ()  # names (its own spelling) it leaves in eval mode
    # It is a training step (a backward in it) that trains these (its spelling) in the
    # mode its caller left them in: it does not call their ``train()``.
    trains: Tuple[str, ...] = ()
    # It runs these (its spelling, rooted at its parameters) as models while recording and
    # has no backward and no ``train()``/``eval()`` of them: a loss helper
    # (``anneal_dsm_score_estimation(score, ...)``) whose caller backpropagates its result
    # trains them in the mode the caller left them in.
    forwards: Tuple[str, ...] = ()
    # A method of a module-level class (``VSE.val_start``: ``params`` start with ``self``),
    # called through an instance whose class the caller knows (``model = VSE(opt)``): its
    # names rooted at ``self`` are the receiver's (``model.img_enc``). Only its mode
    # effects (``leaves_eval``, ``sets_train``, ``trains``) are exported.
    method: bool = False
    sets_train: Tuple[str, ...] = ()  # names (its spelling) it puts in train mode on every path
    # Methods it calls on its parameters whose class it does not know (``model.val_start()``
    # in ``encode_data(model, ...)``), in order: (receiver, its spelling; method name). A
    # caller that knows the receiver's class applies their mode effects at the call.
    defers: Tuple[Tuple[str, str], ...] = ()
    # The grad mode it sets itself and leaves so on every exit (a global setter not
    # restored): (part of the state, ``torch``/``mxnet``/``mx_train``; "on"/"off"; api).
    # Its caller goes on in that state (``Returns.exit``).
    exit: Tuple[Tuple[str, str, str], ...] = ()
    # Its parameters it detaches in place wherever it runs to its end (``h.detach_()``,
    # ``for s in h: s.detach_()``: ``summaries.detaches_in_place``).
    detaches: Tuple[str, ...] = ()
    # Its optimizer ``step()``/``zero_grad()`` calls on what it is handed, in order
    # (``GradEffects.calls``): (method, receiver rooted at a parameter, the gradient
    # buffers before it: ``GRADS``' words); and the buffers as it leaves them.
    grad_calls: Tuple[Tuple[str, str, str], ...] = ()
    grad_exit: str = "entry"

    @property
    def trivial(self) -> bool:
        return not (self.left or self.rec or self.inference or self.passes or self.leaves_eval or self.trains or self.forwards
                    or self.sets_train or self.defers or self.exit or self.detaches or self.grad_calls or self.grad_exit != "entry")

    @property
    def spelled(self) -> str:
        """For messages: ```evaluate` (utils.py:12)``."""
        return f"`{self.name}` ({self.where})"

    def arguments(self, call, names: Sequence[str]) -> set:
        """``names`` (rooted at its parameters) as the ``call`` (a ``cst.Call``) spells them
        (``arguments.spelled_at_call``; a name rooted at no parameter is left out)."""
        from scopelint.core.arguments import SELF_NAMES, spelled_at_call

        params = self.params[1:] if self.method and self.params and self.params[0] in SELF_NAMES else self.params
        out = set()
        for name in names:
            if not self.method and name.partition(".")[0] not in params:
                continue
            spelled = spelled_at_call(call, self.params, self.method, name)
            if spelled is not None:
                out.add(spelled)
        return out

    def related(self, what: str) -> Tuple[str, str]:
        """A related location for a finding (SARIF ``relatedLocations``)."""
        return (self.where, f"`{self.name}` {what}")

    def returns(self) -> "Returns":
        from scopelint.core.facts import Returns
        from scopelint.core.state import Mode, Origin, Switch

        rec = tuple(
            (fw, Switch(Mode.ON if mode == "on" else Mode.OFF, Origin(kind, None, api, self)))
            for fw, mode, kind, api in self.rec
        )
        exit = tuple((part, Switch(Mode.ON if mode == "on" else Mode.OFF, Origin("setter", None, api, Exited(self))))
                     for part, mode, api in self.exit)
        return Returns(self.left, rec, self.inference, self.passes, exit=exit)

    def grad_effects(self):
        """Its ``GradEffects`` as its own module's walk found them (no call nodes: the
        caller's call stands for them)."""
        from scopelint.core.facts import GradEffects

        return GradEffects(_GRADS_OF[self.grad_exit], tuple((m, r, _GRADS_OF[g], None) for m, r, g in self.grad_calls))


@dataclass(frozen=True)
class Callers:
    """The ``Origin.where`` of a function's entry state that its calls in other modules
    give (``Context.entered``): ``where`` the first of them is, for messages."""

    name: str
    where: str  # ``main.py:9``
    mode: str  # "on" / "off"
    api: str  # what set it there ("" : the framework's default)
    framework: str = "torch"

    @property
    def spelled(self) -> str:
        if self.api:
            how = f"inside `{self.api}()`"
        else:
            how = "at module level" + (", outside every `autograd.record()`" if self.framework == "mxnet" else "")
        return f"{self.where}, {how}"

    def related(self, what: str) -> Tuple[str, str]:
        how = f"inside `{self.api}()`" if self.api else "where recording is " + self.mode
        return (self.where, f"calls `{self.name}` {how}")


@dataclass(frozen=True)
class Exited:
    """The ``Origin.where`` of a grad mode another module's function set and left on
    returning (``Summary.exit``): its caller goes on in it (for messages)."""

    summary: Summary
    exit = True

    @property
    def spelled(self) -> str:
        return self.summary.spelled

    def related(self, what: str) -> Tuple[str, str]:
        return self.summary.related(what)


# The gradient buffers' status (``flow._Env.grads``, relative to the function's start)
# in words a summary can carry: as found ("entry"), computed by a backward, zeroed by
# the function itself before any backward of its own, or not known ("").
GRADS = {("entry",): "entry", ("computed",): "computed"}
_GRADS_OF = {"entry": ("entry",), "computed": ("computed",), "zeroed": ("zeroed", None, "entry"), "": None}


def grads_word(grads: Optional[tuple]) -> str:
    if grads is not None and len(grads) == 3 and grads[0] == "zeroed" and grads[2] == "entry":
        return "zeroed"
    return GRADS.get(grads, "") if grads is not None else ""


@dataclass(frozen=True)
class Exports:
    """What a module defines that other modules' analyses use."""

    functions: Tuple[Tuple[str, Summary], ...] = ()  # non-trivial ones only
    model_classes: Tuple[str, ...] = ()  # classes that are nn.Module / gluon Block subclasses
    frameworks: Tuple[str, ...] = ()
    # Of its model classes: the framework classes each derives from (Lightning's hooks
    # run without grad), where known.
    class_bases: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    # Of its model classes: those known to have no layer whose forward pass depends on
    # train/eval mode (``queries.mode_free_class``): ``eval()`` changes nothing in their
    # instances. A class not named here may be anything.
    mode_free: Tuple[str, ...] = ()
    # Its module-level functions that build no layer and compute nothing that depends
    # on the mode (``queries.mode_free_function``: stylegan2's ``upfirdn2d``): a model
    # class of another module that calls one can still be mode-free.
    mode_free_functions: Tuple[str, ...] = ()
    # Of its model classes: those whose ``forward`` switches the recording state itself
    # on some path (``callsites.forwards_switching_recording``): a call of an instance
    # is not known to record.
    switching: Tuple[str, ...] = ()
    # Of its model classes: those whose ``forward`` detaches a state it is handed
    # (``callsites.forwards_detaching``): (class, its parameters after ``self``, those).
    detaching: Tuple[Tuple[str, Tuple[str, ...], Tuple[str, ...]], ...] = ()
    # Of its model classes: those whose constructor turns their parameters'
    # ``requires_grad`` off (``summaries.frozen_by_constructor``): (class, the parameter
    # that decides, its position after ``self``; "" and -1: always).
    frozen: Tuple[Tuple[str, str, int], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.functions or self.model_classes or self.mode_free_functions)

    def to_json(self) -> dict:
        return {"functions": [[n, _summary_json(s)] for n, s in self.functions],
                "model_classes": list(self.model_classes), "frameworks": list(self.frameworks),
                "class_bases": [[n, list(b)] for n, b in self.class_bases], "mode_free": list(self.mode_free),
                "mode_free_functions": list(self.mode_free_functions), "switching": list(self.switching),
                "detaching": [[c, list(p), list(d)] for c, p, d in self.detaching],
                "frozen": [list(f) for f in self.frozen]}

    @classmethod
    def from_json(cls, d: dict) -> "Exports":
        functions = tuple((n, Summary(s["name"], s["where"], tuple(s["params"]), s["left"], tuple(tuple(r) for r in s["rec"]),
                                      s["inference"], s["passes"], tuple(s["leaves_eval"]), tuple(s["trains"]), tuple(s["forwards"]),
                                      s["method"], tuple(s["sets_train"]), tuple(tuple(d) for d in s["defers"]),
                                      tuple(tuple(e) for e in s.get("exit", ())), tuple(s.get("detaches", ())),
                                      tuple(tuple(g) for g in s.get("grad_calls", ())), s.get("grad_exit", "entry")))
                     for n, s in d["functions"])
        return cls(functions, tuple(d["model_classes"]), tuple(d["frameworks"]), tuple((n, tuple(b)) for n, b in d["class_bases"]),
                   tuple(d["mode_free"]), tuple(d["mode_free_functions"]), tuple(d.get("switching", ())),
                   tuple((c, tuple(p), tuple(x)) for c, p, x in d.get("detaching", ())),
                   tuple((c, p, int(i)) for c, p, i in d.get("frozen", ())))


def _summary_json(s: Summary) -> dict:
    return {"name": s.name, "where": s.where, "params": list(s.params), "left": s.left, "rec": [list(r) for r in s.rec],
            "inference": s.inference, "passes": s.passes, "leaves_eval": list(s.leaves_eval), "trains": list(s.trains),
            "forwards": list(s.forwards), "method": s.method, "sets_train": list(s.sets_train), "defers": [list(d) for d in s.defers],
            "exit": [list(e) for e in s.exit], "detaches": list(s.detaches), "grad_calls": [list(g) for g in s.grad_calls],
            "grad_exit": s.grad_exit}


@dataclass(frozen=True)
class Context:
    """What one module is told of the program around it (``Settings.project``)."""

    package: Optional[str] = None  # the package it belongs to (relative imports)
    # By canonical dotted name (``pkg.utils.evaluate``): functions of other modules.
    functions: Tuple[Tuple[str, Summary], ...] = ()
    model_classes: Tuple[str, ...] = ()  # dotted names of other modules' model classes
    # ``from M import *`` of a module of the program: M and the names it binds.
    stars: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    # The framework the project says the module's code is for, when it imports none.
    framework: Optional[str] = None
    class_bases: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()  # see ``Exports``, by dotted name
    # Names of its functions and methods that another module of the run calls where
    # PyTorch records nothing (``with torch.no_grad(): model.infer(x)``), matched by name:
    # such a function is no longer guessed to be entered with recording on.
    called_off: Tuple[str, ...] = ()
    # Names of its functions and methods that another module near it calls at all (by
    # name, with grad or without): their callers are not all in this file.
    called_elsewhere: Tuple[str, ...] = ()
    # Of its inference-named functions and methods (by name): those whose result another
    # module near it, or one importing it, may backpropagate (``callsites.
    # names_fed_backward``: ``new_action = self.policy.evaluate(s)`` ... ``loss.backward()``
    # in an RL agent's update): no inference code, whatever their name.
    fed_backward: Tuple[str, ...] = ()
    # Another module of the program imports it: its classes are made and called there too
    # (a ``net(x)`` of this file is not every call of their ``forward``).
    imported: bool = False
    # Of ``model_classes``: those their module knows to be mode-free (see ``Exports``).
    mode_free: Tuple[str, ...] = ()
    # By dotted name: functions of other modules that their module knows to be mode-free.
    mode_free_functions: Tuple[str, ...] = ()
    # Of its module-level functions that other modules of the run call: the recording
    # state each is entered in there, where every call agrees (``callsites.call_states``,
    # joined by the project layer): (name, framework or "mx_train" for MXNet's training
    # flag, "on"/"off", the API that set it or "" for the framework's default, where the
    # first such call is). Its own calls join in.
    entered: Tuple[Tuple[str, str, str, str, str], ...] = ()
    # Of those functions: the arguments (positions as digits, keywords by name) that every
    # call of another module hands a name it put in eval mode (``model.eval();
    # evaluate.metrics(model, loader)``), with where the first such call is.
    entered_eval: Tuple[Tuple[str, Tuple[str, ...], str], ...] = ()
    # Of its module-level functions and its module-level classes' methods
    # (``Trainer.step``): those a loop of another module of the run calls, with where
    # the first such call is: a method called once per batch there runs many times.
    looped: Tuple[Tuple[str, str], ...] = ()
    # Of ``model_classes``: those whose ``forward`` switches recording itself (``Exports``).
    switching: Tuple[str, ...] = ()
    # Of ``model_classes``: (class, forward's parameters, those it detaches) (``Exports``).
    detaching: Tuple[Tuple[str, Tuple[str, ...], Tuple[str, ...]], ...] = ()
    # ``from M import *`` of a module of the program: M and the framework modules and
    # names it binds with its own imports, (local name, dotted) (``Program.star_aliases``).
    star_aliases: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = ()
    # Of ``model_classes``: (class, parameter, position) of those whose constructor freezes
    # their parameters (``Exports.frozen``).
    frozen: Tuple[Tuple[str, str, int], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "_functions", dict(self.functions))
        object.__setattr__(self, "_models", frozenset(self.model_classes))
        object.__setattr__(self, "_bases", dict(self.class_bases))
        object.__setattr__(self, "_mode_free", frozenset(self.mode_free) & frozenset(self.model_classes))
        object.__setattr__(self, "_mode_free_functions", frozenset(self.mode_free_functions))
        entered: Dict[str, Dict[str, Callers]] = {}
        for name, fw, mode, api, where in self.entered:
            entered.setdefault(name, {})[fw] = Callers(name, where, mode, api, fw)
        object.__setattr__(self, "_entered", entered)
        object.__setattr__(self, "_looped", dict(self.looped))

    @property
    def needs_whole(self) -> bool:
        """What it tells may reach past the gate's anchors (a call of another module's
        function, one of its model classes, the framework of a file that imports none,
        instances of its classes made elsewhere): the file is analysed whole. (Callers
        without grad only make the analysis say less: the gate's slice holds what they
        bear on. Told only those or that it is imported, a file gets no package either:
        its names resolve as when it is linted alone.)"""
        return bool(self.functions or self.model_classes or self.stars or self.star_aliases or self.framework or self.class_bases or self.imported
                    or self.entered or self.looped or self.entered_eval)

    def eval_by_callers(self, name: str) -> Tuple[str, ...]:
        """The arguments of the module-level function ``name`` that every call of other
        modules hands in eval mode (see ``entered_eval``)."""
        return next((args for n, args, _ in self.entered_eval if n == name), ())

    def entered_by_callers(self, name: str) -> Mapping[str, "Callers"]:
        """By framework: the state other modules' calls enter the module-level function
        ``name`` in, where they all agree (see ``entered``)."""
        return self._entered.get(name, {})  # type: ignore[attr-defined]

    def called_in_loop(self, name: str) -> Optional[str]:
        """Where a loop of another module calls the function or method ``name``
        (``Trainer.step``), if one does (see ``looped``)."""
        return self._looped.get(name)  # type: ignore[attr-defined]

    def framework_bases(self, qname: Optional[str]) -> Tuple[str, ...]:
        return self._bases.get(qname, ()) if qname is not None else ()  # type: ignore[attr-defined]

    def function(self, qname: Optional[str]) -> Optional[Summary]:
        return self._functions.get(qname) if qname is not None else None  # type: ignore[attr-defined]

    def is_model_class(self, qname: Optional[str]) -> bool:
        return qname is not None and qname in self._models  # type: ignore[attr-defined]

    def is_mode_free(self, qname: Optional[str]) -> bool:
        """``qname`` is a model class of another module that has no train/eval-sensitive
        layer: known there, never guessed here."""
        return qname is not None and qname in self._mode_free  # type: ignore[attr-defined]

    def switches_recording(self, qname: Optional[str]) -> bool:
        """``qname`` is a model class of another module whose ``forward`` switches the
        recording state itself on some path (see ``Exports.switching``)."""
        return qname is not None and qname in self.switching

    def detached_by_forward(self, qname: Optional[str]) -> Optional[Tuple[Tuple[str, ...], Tuple[str, ...]]]:
        """(its ``forward``'s parameters after ``self``, those it detaches) of the model
        class ``qname`` of another module, where its ``forward`` detaches a state."""
        for name, params, cut in self.detaching:
            if name == qname:
                return params, cut
        return None

    def is_mode_free_function(self, qname: Optional[str]) -> bool:
        """``qname`` is a module-level function of another module that builds no layer and
        computes nothing that depends on the mode: known there, never guessed here."""
        return qname is not None and qname in self._mode_free_functions  # type: ignore[attr-defined]

    def frozen_by_constructor(self, qname: Optional[str]) -> Optional[Tuple[str, int]]:
        """``summaries.frozen_by_constructor`` of the model class ``qname`` of another
        module (None: nothing known)."""
        for name, param, position in self.frozen:
            if name == qname:
                return (param, position)
        return None

    @property
    def star_names(self) -> Mapping[str, Tuple[str, ...]]:
        return dict(self.stars)

    @property
    def star_bindings(self) -> Mapping[str, Tuple[Tuple[str, str], ...]]:
        return dict(self.star_aliases)


NO_CONTEXT = Context()


def may_export(text: str, has_context: bool) -> bool:
    """Whether a module's text may hold anything its exports carry (a cheap look before
    analysing it whole): a grad-mode scope or switch, ``eval()``, a backward (a training
    step trains in its caller's mode), a value taken out of the graph (or detached in
    place), gradients zeroed (``zero_grad()``), a model base
    class, or (``has_context``) a use of the program's other modules' functions or
    classes."""
    return has_context or _EXPORT_WORDS.search(text) is not None


def _export_words():
    import re

    from scopelint.core import frameworks as F

    scopes = sorted({q.rsplit(".", 1)[1] for q in (*F.SCOPES, *F.SETTERS)})
    bases = sorted({q.rsplit(".", 1)[1] for q in F.MODEL_BASE_CLASSES})
    methods = ("eval", "train", "backward", "item", "detach", "detach_", "zero_grad", "numpy", "tolist", "asnumpy", "asscalar")
    return re.compile(
        r"\b(?:" + "|".join(scopes) + r")\b"
        r"|\.[ \t]*(?:" + "|".join(methods) + r")[ \t]*\("
        r"|^[ \t]*class[ \t]+\w+[ \t]*\([^)]*\b(?:" + "|".join(bases) + r")\b",
        re.M,
    )


_EXPORT_WORDS = _export_words()


def calls_a_parameter(text: str) -> bool:
    """Whether a module-level function of ``text`` calls one of its parameters
    (``scores = scorenet(x)``, ``net.forward(x)``): it may run a model it is handed
    (``Summary.forwards``).
    A text that does not parse: no."""
    import ast

    if "def " not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
            for n in ast.walk(node):
                if isinstance(n, ast.Call):
                    f = n.func
                    if isinstance(f, ast.Attribute) and f.attr == "forward":  # ``net.forward(x)``
                        f = f.value
                    if isinstance(f, ast.Name) and f.id in params:
                        return True
    return False


def exports_of(functions: Sequence["FunctionInfo"], model_classes, frameworks, lines: Mapping[str, int], filename: str,
               trains: Optional[Mapping[int, set]] = None, class_bases: Optional[Mapping[str, Tuple[str, ...]]] = None,
               mode_free=(), mode_free_functions=(), forwards: Optional[Mapping[int, set]] = None,
               defers: Optional[Mapping[int, tuple]] = None, detaches: Optional[Mapping[int, tuple]] = None,
               switching=(), detaching=(), frozen=()) -> Exports:
    """The exports of an analysed module: its module-level functions' summaries (as its
    analysis computed them) and its model classes. ``lines``: the line of each
    module-level definition, by name; ``trains``: by function id, what each training
    step trains in its caller's mode (``queries.trained_models``); ``forwards``: likewise,
    what each function without a backward runs as a model (``queries.forwarded_models``); ``mode_free``: its
    model classes that ``queries.mode_free_class`` finds mode-free; ``mode_free_functions``:
    its module-level functions that ``queries.mode_free_function`` finds so; ``detaches``:
    by function id, the parameters each detaches in place (``summaries.detaches_in_place``)."""
    out: Dict[str, Summary] = {}
    for info in functions:
        if info.parent is not None or info.opaque:
            continue
        if info.cls is not None:  # a method of a module-level class: its mode effects
            cname = info.cls.name.value
            if lines.get(cname) is None or not info.param_names or info.param_names[0] != "self" or info.decorator is not None:
                continue
            summary = _summary(info, f"{filename}:{lines.get(f'{cname}.{info.name}', lines.get(cname, 1))}",
                               (trains or {}).get(id(info), ()), ())
            summary = Summary(f"{cname}.{info.name}", summary.where, summary.params, leaves_eval=summary.leaves_eval,
                              trains=summary.trains, method=True, sets_train=summary.sets_train,
                              grad_calls=summary.grad_calls, grad_exit=summary.grad_exit)
            if not summary.trivial:
                out[f"{cname}.{info.name}"] = summary
            continue
        summary = _summary(info, f"{filename}:{lines.get(info.name, 1)}", (trains or {}).get(id(info), ()), (forwards or {}).get(id(info), ()),
                           (defers or {}).get(id(info), ()), (detaches or {}).get(id(info), ()))
        if not summary.trivial:
            out[info.name] = summary
    return Exports(tuple(sorted(out.items())), tuple(sorted(model_classes)), tuple(sorted(frameworks)), tuple(sorted((class_bases or {}).items())),
                   tuple(sorted(set(mode_free) & set(model_classes))), tuple(sorted(mode_free_functions)),
                   tuple(sorted(set(switching) & set(model_classes))), tuple(sorted(d for d in detaching if d[0] in set(model_classes))),
                   tuple(sorted(f for f in frozen if f[0] in set(model_classes))))


def _summary(info: "FunctionInfo", where: str, trains=(), forwards=(), defers=(), detaches=()) -> Summary:
    from scopelint.core.state import Mode

    r = info.returns
    rec = tuple(
        (fw, sw.mode.value, sw.origin.kind, sw.origin.api or "")
        for fw, sw in r.rec
        if sw.origin is not None and sw.mode is not Mode.UNKNOWN and sw.origin.kind in ("with", "setter", "decorator")
    )
    inference = r.inference or (info.decorator is not None and info.decorator[0] == "torch.inference_mode")
    leaves = tuple(sorted(n for n in info.leaves_eval if n.partition(".")[0] in info.param_names))
    trained = tuple(sorted(n for n in trains if n.partition(".")[0] in info.param_names))
    forwarded = tuple(sorted(n for n in forwards if n.partition(".")[0] in info.param_names))
    sets_train = tuple(sorted(n for n in info.sets_train if n.partition(".")[0] in info.param_names))
    deferred = tuple(d for d in defers if d[0].partition(".")[0] in info.param_names)
    exit = tuple((part, sw.mode.value, sw.origin.api) for part, sw in r.exit
                 if sw.origin is not None and sw.origin.api and sw.mode is not Mode.UNKNOWN)
    effects = info.grad_effects
    grad_calls = tuple((m, recv, grads_word(g)) for m, recv, g, _ in effects.calls if recv.partition(".")[0] in info.param_names)
    grad_exit = grads_word(effects.exit)
    if len(grad_calls) != len(effects.calls):  # (one on its own or a global optimizer: the caller cannot tell which)
        grad_calls, grad_exit = (), ""
    return Summary(info.name, where, tuple(info.param_names), r.left, rec, inference, r.passes, leaves, trained, forwarded,
                   sets_train=sets_train, defers=deferred, exit=exit, detaches=tuple(p for p in detaches if p in info.param_names),
                   grad_calls=grad_calls, grad_exit=grad_exit)

