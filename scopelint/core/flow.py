"""Flow-sensitive analysis of one module: the recording state at every call, the
state every local value was computed in, and the facts rules read.

Each function is walked statement by statement (assignments, unpacking, ``if``,
loops, ``try``, ``with``); a function's entry state comes from its call sites in the
same file when they all agree, from its decorator, or is unknown.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from scopelint.core import api
from scopelint.core import frameworks as F
from scopelint.core import roles
from scopelint.core.facts import ENTRY_GRADS, BackwardFact, CallFact, Facts, FunctionInfo, GradEffects, MutationFact, Returns, ScopeFact
from scopelint.core.callgraph import CallGraph, outermost
from scopelint.core.arguments import CALL_METHODS, requires_grad_off, FWD_ARG, FWD_KW, FWD_SHAPE, argument_for, call_arg, param_default, bind, bound_params, method_params, spelled_at_call, INSTANCE_CALL  # noqa: F401 (re-exported)
from scopelint.core.interfile import NO_CONTEXT, Context
from scopelint.core.names import Imports, Names, dotted, module_chain_base as _module_chain_base
from scopelint.core.slicing import Whole, whole_of_source
from scopelint.core.syntax import finds, is_main_guard, is_nested_scope, is_subclass, iter_children, literal_bool, statements, walk
from scopelint.core.summaries import attaches_grad, calls_surely, detached_free_names, detaches_in_place, freeze_effects, freezing_loop, frozen_at, frozen_by_constructor
from scopelint.core.state import (
    DATA,
    FORWARD,
    UNKNOWN_RESULT,
    UNKNOWN,
    Mode,
    Origin,
    State,
    Switch,
    Template,
    Value,
    PENDING,
    computed_value,
    joined_tags,
    leaf_value,
    module_state,
    opaque_value,
    unknown_entry_state,
)

# Methods that take a value out of the graph (SL206's business; never "OFF" here).
LEAVING_METHODS = {"detach", "detach_", "item", "tolist", "numpy", "asnumpy", "asscalar", "cpu_numpy"}
# Methods that read a tensor's shape or layout: a number, no graph (as ``.shape``).
SHAPE_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "get_device", "is_contiguous"})
# Method calls on a receiver that run a model rather than tensor arithmetic.
MODEL_METHODS = {"forward", "__call__", "hybrid_forward", "generate", "predict"}
# Methods of the frameworks' other objects that no tensor has (``api.method`` knows
# none of them): MXNet's symbolic API (``sym.bind(...)`` / ``simple_bind`` make an
# Executor, whose ``forward``/``backward`` run its own bound graph, no autograd). What
# they return is no tensor of the recording model.
NO_TENSOR_METHODS = frozenset({"bind", "simple_bind", "get_internals", "get_children", "infer_shape", "list_arguments"})
# What calling an instance runs, in this order of lookup.
# A module's own methods that never call its forward (an instance is not handed on), and
# those of them that return the module itself.
RETURNS_SELF = F.RETURNS_SELF
MODULE_METHODS = RETURNS_SELF | frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "state_dict", "load_state_dict", "zero_grad", "register_buffer", "register_parameter",
    "add_module", "register_module", "extra_repr", "collect_params", "initialize", "hybridize", "save_parameters",
    "load_parameters", "cast", "register_child", "reset_parameters", "init_weights", "get_submodule", "get_parameter",
})
# Calls that take an instance without calling it.
HARMLESS_CALLS = frozenset({"print", "len", "isinstance", "issubclass", "type", "id", "str", "repr", "hasattr", "callable", "super",
                            "format", "vars", "dir", "hash"})
PART = frozenset({"part"})  # tag: one element of an unpacked value
# Tag: a Python list, tuple, set or generator (a literal, a comprehension, ``tuple(...)`` /
# ``list(...)`` of one, what ``.append`` filled). Its parents are its items (a parent
# that is a container stands for its own items; a comprehension's element expression
# stands for every item), so what an item is travels through it: iterating yields the
# items' own values, and a container whose items all left the graph has left it.
CONTAINER = frozenset({"container"})
# Builtins that make a container of the items of their one argument.
_REPACKING = {"tuple", "list", "sorted", "reversed", "set"}
CONST = frozenset({"const"})
VOLATILE = frozenset({"volatile"})
TUPLE_RESULT = frozenset({"tuple-result"})  # tag: the elements of a framework call's tuple, in order  # tag: ``Variable(x, volatile=True)``
EVAL_MODE = frozenset({"eval-mode"})  # tag: a module ``.eval()`` returned (``Net().eval()``)
# tag: an instance of a model class whose constructor turns its parameters'
# ``requires_grad`` off (``summaries.frozen_by_constructor``: pytorch-fid's InceptionV3)
FROZEN_PARAMS = frozenset({"frozen-params"})
# Tag: a ``torch.distributions`` object; its ``sample()`` carries no graph, its
# ``log_prob()``/``rsample()`` the graph of its parameters (``core.api``).
DISTRIBUTION = frozenset({"distribution"})
# Python's builtins that make Python values (no graph whatever they are given), and those
# that do arithmetic on their arguments' items (``sum(losses)``).
_PYTHON_VALUE_BUILTINS = frozenset({"len", "range", "str", "repr", "isinstance", "issubclass", "hasattr", "callable", "id",
                                    "hash", "format", "print", "type", "vars", "dir", "open", "input", "chr", "ord", "bin",
                                    "hex", "oct", "divmod", "all", "any"})
_ARITHMETIC_BUILTINS = frozenset({"sum", "min", "max", "abs", "pow", "round"})
# Python's builtins that hand back what they are given, regrouped (``enumerate(words)``,
# ``zip(xs, ys)``): a graph only where an argument has one; none is made here.
_REGROUPING_BUILTINS = frozenset({"enumerate", "zip", "iter", "next", "reversed", "sorted", "list", "tuple", "set",
                                  "frozenset", "filter"})
# Containers of the standard library (what they are handed, they hold).
_CONTAINER_CLASSES = frozenset({"collections.defaultdict", "collections.OrderedDict", "collections.deque", "collections.Counter"})
# Methods of Python containers that hand back what was put in (``d.get("loss")``).
_CONTAINER_METHODS = frozenset({"get", "pop", "values", "items", "copy", "popitem", "popleft", "setdefault", "__getitem__",
                                "append", "extend", "insert", "update", "clear", "keys", "index", "count", "remove"})
DETACHED = frozenset({"left-graph", "detached"})  # tags: detached in place, on purpose
FLAG_TRUTH = frozenset({"truthy", "falsy"})  # a flag's truth, known after ``if flag: return``
SCOPE = frozenset({"scope"})  # a recording scope, or the class or factory that makes one
UNKNOWN_SITE = unknown_entry_state()  # a call site that may call the method with any state
# ... and one that runs with PyTorch's recording off (``x.m()`` on something unknown inside
# ``torch.no_grad()``): still no state known, but no guess of PyTorch's default either
# (the method is called by name with recording off, as ``Program.called_off`` says of
# another module's calls: ``called-elsewhere``)
UNKNOWN_SITE_TORCH_OFF = State(Switch(Mode.UNKNOWN, Origin("called-elsewhere")), UNKNOWN_SITE.mxnet, UNKNOWN_SITE.mx_train)
UNBOUND = "*"  # in a call site's argument values: its parameters' are not known (``f(*args)``)
FREE_KEY = "\0free:"  # ... and the values a callback handed to it had for its free names


def _free_key(callback: "FunctionInfo", name: str) -> str:
    return f"{FREE_KEY}{id(callback.node)}:{name}"


# ... and the arguments a runner's ``*args``/``**kwargs`` collect where it is called
# (``run(step, loss)`` with ``def run(fn, *args): return fn(*args)``): each one, and
# their shape (how many positional, which keywords), so that a call ``fn(*args)`` in
# the runner knows its callback's arguments where every site agrees on the shape (keys:
# ``arguments.FWD_ARG``, ``FWD_KW``, ``FWD_SHAPE``).


def _star_names(info: "FunctionInfo") -> Tuple[Optional[str], Optional[str]]:
    """The names of ``info``'s ``*args`` and ``**kwargs`` parameters (None: none)."""
    p = info.node.params
    star = getattr(getattr(p.star_arg, "name", None), "value", None)
    kwstar = getattr(getattr(p.star_kwarg, "name", None), "value", None)
    return star, kwstar


# Keywords that name the tensors of backward()/grad() functions.
BACKWARD_KEYWORDS = ("tensors", "outputs", "heads")


class _Env:
    """Values of names, which models are in eval mode, and the gradient buffers.

    ``grads`` is None (unknown), ("computed",) after a backward, or
    ("zeroed", <zero_grad call>, <a backward came before it>) after zeroing.
    """

    __slots__ = ("vals", "in_eval", "maybe_eval", "grads", "in_train", "frozen")

    def __init__(self, vals=None, in_eval: FrozenSet[str] = frozenset(), maybe_eval=None, grads=None, in_train: FrozenSet[str] = frozenset(),
                 frozen: FrozenSet[str] = frozenset()):
        self.vals: Dict[str, Value] = vals if vals is not None else {}
        self.in_eval = in_eval
        self.maybe_eval: Dict[str, cst.CSTNode] = maybe_eval if maybe_eval is not None else {}
        self.grads: Optional[tuple] = grads
        # Names put in train mode (``model.train()``, or a function that does) on every
        # path to here, and not in eval mode since: a function's ``FunctionInfo.sets_train``.
        self.in_train = in_train
        # Models whose parameters may not require grad here (on some path):
        # ``G.requires_grad_(False)``, ``for p in G.parameters(): p.requires_grad = False``,
        # or a local function that does so to what it is handed (``requires_grad(G, False)``).
        self.frozen = frozen

    def copy(self) -> "_Env":
        return _Env(dict(self.vals), self.in_eval, dict(self.maybe_eval), self.grads, self.in_train, self.frozen)


def _join_values(a: Value, b: Value) -> Value:
    if a is b:
        return a
    if CONTAINER <= a.tags and CONTAINER <= b.tags:  # one container or the other: the items of both
        return container_value(None, (a, b), None)
    for x, other in ((a, b), (b, a)):
        if _is_literal(other) and not _is_literal(x):
            # ``loss if labels is not None else None``: where it is a tensor, it is ``x``;
            # ``total = 0`` then ``total += loss`` over a loop that may not run: a Python
            # constant holds no graph and was recorded in no state, so where the value
            # may hold one, it is ``x``'s (``total.backward()`` says it is no number)
            return Value(None, dict(x.rec), (x, other), x.inference, True, x.tags - CONST)
    rec = {fw: a.rec[fw].join(b.rec[fw]) for fw in F.FRAMEWORKS}
    return Value(None, rec, (a, b), a.inference and b.inference, True, joined_tags(a, b))


LAST_APPENDED = frozenset({"last-appended"})  # tag: a list whose last item is its last parent (``append``)
BLOCK_INPUT = frozenset({"block-input"})  # tag: the prediction a Gluon loss's forward is handed


def _last_name(func: cst.BaseExpression) -> Optional[str]:
    return func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None


def _is_none(v: Value) -> bool:
    return type(v.node) is cst.Name and v.node.value == "None" and "const" in v.tags and not v.parents


def _is_literal(v: Value) -> bool:
    """``None``, ``0``, ``0.0``, ``-1``: a Python constant written out."""
    node = v.node
    if type(node) is cst.UnaryOperation:
        node = node.expression
    return "const" in v.tags and not v.parents and (_is_none(v) or type(node) in (cst.Integer, cst.Float))


def _join_env(a: Optional[_Env], b: Optional[_Env]) -> Optional[_Env]:
    if a is None:
        return b.copy() if b is not None else None
    if b is None:
        return a.copy()
    vals = dict(a.vals)
    for k, v in b.vals.items():
        vals[k] = _join_values(vals[k], v) if k in vals else v
    maybe = dict(b.maybe_eval)
    maybe.update(a.maybe_eval)
    return _Env(vals, a.in_eval & b.in_eval, maybe, _join_grads(a.grads, b.grads), a.in_train & b.in_train,
                a.frozen | b.frozen)


def _join_grads(a: Optional[tuple], b: Optional[tuple]) -> Optional[tuple]:
    """The gradient buffers after one path or the other: the same status, or -- zeroed
    after a backward on one path, computed on the other (``if step % k == 0:
    opt.zero_grad()`` between backward and step) -- ``("zeroed-some", <call>, True)``;
    otherwise unknown."""
    if a == b:
        return a
    for x, y in ((a, b), (b, a)):
        if x is not None and y == ("computed",) and x[0] in ("zeroed", "zeroed-some") and x[2] is True:
            return ("zeroed-some", x[1], True)
        if x is not None and y == ENTRY_GRADS and x[0] in ("zeroed", "zeroed-some") and x[2] == "entry":
            # a helper that zeroes on some paths (``if step % k == 0: opt.zero_grad()``):
            # what its callers had, zeroed on those paths (``_grads_at``)
            return ("zeroed-some", x[1], "entry")
    return None


SUPER_FANOUT = 16  # more methods than this of one name: a ``super()`` call is narrowed (``CallGraph.super_target``)


def _is_super(expr: cst.BaseExpression) -> bool:
    """``super()`` (or ``super(C, self)``)."""
    return type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "super"


class _CallsOf:
    """The call facts of several walks, looked up by call id (``dict.get``) without
    merging them: a call belongs to one unit, so the last walk holding it answers, as
    the merged dict's would."""

    __slots__ = ("walks",)

    def __init__(self, walks: List[Dict[int, CallFact]]):
        self.walks = walks

    def get(self, cid: int, default=None):
        found = default
        for calls in self.walks:
            fact = calls.get(cid)
            if fact is not None:
                found = fact
        return found


class _Flow:
    """Where the walk stands: values and recording state, or None when unreachable."""

    __slots__ = ("env", "state")

    def __init__(self, env: Optional[_Env], state: Optional[State]):
        self.env = env
        self.state = state

    @staticmethod
    def join(flows: Sequence["_Flow"]) -> "_Flow":
        live = [f for f in flows if f.env is not None]
        if not live:
            return _Flow(None, None)
        env, state = live[0].env.copy(), live[0].state
        for f in live[1:]:
            env = _join_env(env, f.env)
            state = state.join(f.state)
        return _Flow(env, state)


def _after_backward(grads: Optional[tuple]):
    """For ``("zeroed", node, flag)``: whether a backward came before the zeroing (True,
    False), or whatever came before the function was called ("entry")."""
    if grads == ENTRY_GRADS:
        return "entry"
    return bool(grads and grads[0] == "computed")


def _grads_at(grads: Optional[tuple], before: Optional[tuple], call: cst.Call) -> Optional[tuple]:
    """A callee's gradient-buffer status (relative to its start) at its ``call``, where
    they were ``before``. Zeroed after a backward of the caller's: at the call."""
    if grads == ENTRY_GRADS:
        return before
    if grads is None or grads[0] not in ("zeroed", "zeroed-some") or grads[2] != "entry":
        return grads
    if grads[0] == "zeroed-some":
        # zeroed on some of the callee's paths: after a backward, the step that follows
        # uses zero gradients on those; otherwise what was there, if it was zero already
        if _after_backward(before) is True:
            return ("zeroed-some", call, True)
        return before if before is not None and before[0] == "zeroed" else None
    return ("zeroed", call, _after_backward(before))


def _detached(call: cst.Call, value: Value, state: State) -> Value:
    """What ``value`` is after ``call`` detached it in place (``h.detach_()``, or a call of
    a function that does: ``DETACHED``)."""
    return Value(call, {fw: UNKNOWN for fw in F.FRAMEWORKS}, (value,), False, False, DETACHED, state)


def _outlives(info: FunctionInfo, name: str) -> bool:
    """``name`` (``model``, ``self.enc``) names something the caller can see after a call
    of ``info``: rooted at a parameter or at a name ``info`` does not bind (a global, an
    enclosing function's), not at one of its locals (``net = Net(); net.enc``)."""
    root = name.partition(".")[0]
    return root not in info.scope.bound or root in info.param_names


def _called_off_here(sites: Optional[Dict[int, State]]) -> bool:
    """Every call of a function this file has (some at least) runs with PyTorch's recording
    off (``outer.validation_step(...)`` in a ``no_grad`` block, on an object the analysis
    does not know): as for a function called by name from another module's no-grad block
    (``Program.called_off``), callers not seen get no guess of PyTorch's default."""
    return bool(sites) and all(
        s.torch.mode is Mode.OFF or (s.torch.mode is Mode.UNKNOWN and s.torch.origin is not None and s.torch.origin.kind == "called-elsewhere")
        for s in sites.values())


def _lightning_no_grad_hook(info: FunctionInfo) -> bool:
    """A LightningModule's ``validation_step`` / ``test_step`` / ``predict_step``."""
    return info.name in F.LIGHTNING_NO_GRAD_HOOKS and info.cls is not None and (
        any(b in F.LIGHTNING_MODULES for b in info.framework_bases) or info.cls.name.value == "LightningModule")


# What makes a Gluon Block ready to run: its parameters initialized or loaded.
_RUNS_BLOCKS = frozenset({"initialize", "load_parameters", "load_params"})


def _modes_set_by_flags(call: cst.Call, target: FunctionInfo) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """What a mode helper switches at this call, where a flag it is handed as a literal
    picks the branch (``def net_mode(self, train): if train: self.net.train() else:
    self.net.eval()`` called as ``self.net_mode(train=False)``; ``model.train(mode)``):
    the names (in ``target``'s spelling) it puts in train mode, and in eval mode, on
    every path that returns. Only a body of such switches, branches on those flags and
    guards that raise; anything else: nothing (the summary of every path decides)."""
    flags = {}
    params = bound_params(call, target)
    bound = bind(call, params)
    if bound is None:
        return (), ()
    for name in params:
        arg = bound.get(name)
        given = arg.value if arg is not None else param_default(target, name)  # (``net_mode()``: its default)
        value = literal_bool(given) if given is not None else None
        if value is not None:
            flags[name] = value
    if not flags or type(target.node.body) is not cst.IndentedBlock:
        return (), ()
    train: List[str] = []
    evals: List[str] = []
    if not _run_switches(target.node.body.body, flags, train, evals):
        return (), ()
    return tuple(k for k in train if k not in evals), tuple(k for k in evals if k not in train)


def _flag_of(test, flags: Dict[str, bool]) -> Optional[bool]:
    """``train`` / ``not train`` where ``train`` is a flag of ``flags``: its value."""
    if type(test) is cst.Name:
        return flags.get(test.value)
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = _flag_of(test.expression, flags)
        return None if inner is None else not inner
    return None


def mode_switch(call: cst.Call, flags: Optional[Dict[str, bool]] = None) -> Optional[Tuple[Optional[str], Optional[bool]]]:
    """``x.eval()`` / ``x.train()`` / ``x.train(flag)``: the module's key (``model`` of
    ``model.to(device).train()``; None where it has no name) and its mode: True for
    training, False for eval, None where the flag is unknown (a flag of ``flags``, a mode
    helper's parameter bound to a literal, is known). None: not a mode switch."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in ("eval", "train"):
        return None
    if func.attr.value == "eval":
        if call.args:
            return None
        mode: Optional[bool] = False
    elif not call.args:
        mode = True
    else:
        mode = literal_bool(call.args[0].value)
        if mode is None and flags:
            mode = _flag_of(call.args[0].value, flags)
    return (dotted(func.value) or _module_chain_base(func.value), mode)


def _switch_of(stmt, flags: Dict[str, bool]) -> Optional[Tuple[str, bool]]:
    """``x.train()``/``x.eval()``/``x.train(flag)`` as a (small) statement: its key and mode."""
    if type(stmt) is not cst.Expr or type(stmt.value) is not cst.Call:
        return None
    found = mode_switch(stmt.value, flags)
    return found if found is not None and found[0] is not None and found[1] is not None else None


def _is_noop(stmt) -> bool:
    """``pass`` or a string as a statement (a docstring)."""
    return type(stmt) is cst.Pass or (type(stmt) is cst.Expr and type(stmt.value) in (cst.SimpleString, cst.ConcatenatedString))


def _run_switches(body, flags: Dict[str, bool], train: List[str], evals: List[str]) -> bool:
    """``_modes_set_by_flags`` over the statements ``body``: False where one is not of
    the kinds it reads."""
    for stmt in body:
        if type(stmt) is cst.SimpleStatementLine:  # (its small statements, as a one-line suite's)
            if not _run_switches(stmt.body, flags, train, evals):
                return False
            continue
        if _is_noop(stmt):
            continue  # a docstring, ``pass``
        found = _switch_of(stmt, flags)
        if found is not None:
            (train if found[1] else evals).append(found[0])
            continue
        if type(stmt) is not cst.If:
            return False
        branch = _flag_of(stmt.test, flags)
        if branch is None:
            # (a guard that raises, ``if not isinstance(train, bool): raise ...``)
            if stmt.orelse is None and all(type(x) is cst.Raise or (type(x) is cst.SimpleStatementLine and type(x.body[0]) is cst.Raise)
                                           for x in stmt.body.body):
                continue
            return False
        chosen = stmt.body.body if branch else (stmt.orelse.body.body if type(stmt.orelse) is cst.Else else
                                                [stmt.orelse] if stmt.orelse is not None else [])
        if not _run_switches(chosen, flags, train, evals):
            return False
    return True


def _part_in_train(fact: CallFact, key: str) -> bool:
    """At ``fact``, a submodule of ``key`` was put back in training mode (``model.eval()``
    then ``model.encoder.train()``): the callee cannot take all of ``key`` for in eval
    mode (it reads ``encoder`` as in eval mode with it)."""
    return any(k.startswith(key + ".") for k in fact.in_train)


def _params_in_eval(fact: CallFact, target: FunctionInfo) -> Set[str]:
    """At the call ``fact`` of ``target``: the names of ``target`` in eval mode as it
    starts (see ``Analyzer._entry_eval``)."""
    call = fact.node
    params = bound_params(call, target)
    on_self = False
    if len(params) < len(target.param_names) and type(call.func) is cst.Attribute:
        on_self = type(call.func.value) is cst.Name and call.func.value.value == "self" and (
            fact.func is not None and fact.func.cls is target.cls)
    out: Set[str] = set()
    if on_self:
        out.update(k for k in fact.in_eval if k.startswith("self."))
    elif len(params) < len(target.param_names) and type(call.func) is cst.Attribute and target.cls is not None:
        # ``model.eval()`` then ``model.sample(src)``: the method's own object (its first
        # parameter) is in eval mode as it starts, and so is what it holds
        # (the object: ``model`` of ``model.sample(src)``; of ``model.block(x)``, a call of
        # ``Block.forward``, ``model.block``)
        recv = dotted(call.func.value) if call.func.attr.value == target.name else dotted(call.func)
        me = target.param_names[0]
        if recv is not None and recv in fact.in_eval and not _part_in_train(fact, recv):
            out.add(me)
        if recv is not None:
            out.update(me + k[len(recv):] for k in fact.in_eval if k.startswith(recv + "."))
    position = 0
    for arg in call.args:
        if arg.star:
            break
        if arg.keyword is not None:
            name = arg.keyword.value
        elif position < len(params):
            name = params[position]
            position += 1
        else:
            break
        key = dotted(arg.value)
        if key is None or name not in target.param_names:
            continue
        if key in fact.in_eval and not _part_in_train(fact, key):
            out.add(name)
        # (``helper(self, x)`` after ``self.model.eval()``: ``self.model`` of the helper)
        out.update(name + k[len(key):] for k in fact.in_eval if k.startswith(key + "."))
    return out


class _Walk:
    """One unit's walk (the module's or a function's) and what it read.

    A walk reads its entry state, its parameter values, the summaries of the local
    functions it calls and the frameworks imported so far; it makes facts, the states
    and argument values at its calls of local functions, its summary, and a run of
    sequence numbers. When all it read is as before, a later round replays it rather
    than walking again: the facts are kept with their sequence numbers moved to where
    this round's counter stands, and every value made by the walk is copied, in terms
    of this round's parameter values -- so each round's values are new objects, as
    they are when everything is walked again (rules compare values by identity).
    """

    __slots__ = (
        "calls", "backwards", "scopes", "mutations", "sites", "site_args", "summary",
        "returns", "seq_start", "seq_count", "entry", "entry_eval", "params", "reads", "frameworks",
        "effects", "grad_effects", "pending", "entered",
    )

    def __init__(self, info: Optional[FunctionInfo], seq_start: int, frameworks: int):
        self.calls: Dict[int, CallFact] = {}
        self.backwards: Dict[int, BackwardFact] = {}
        self.scopes: Dict[int, ScopeFact] = {}
        self.mutations: Dict[int, MutationFact] = {}
        self.effects: Dict[Tuple[int, int], CallFact] = {}  # (``Facts.effects``; by call, then place in its callee's list)
        self.grad_effects = GradEffects()
        self.sites: Dict[int, Dict[int, State]] = defaultdict(dict)
        self.site_args: Dict[int, Dict[int, Optional[Dict[str, Value]]]] = defaultdict(dict)
        self.summary: Tuple[FrozenSet[str], ...] = (frozenset(), frozenset(), frozenset())  # (leaves_eval, sets_train, sets_eval)
        self.returns = Returns()
        self.seq_start = seq_start
        self.seq_count = 0
        self.entry = info.entry if info is not None else None
        self.entry_eval = info.entry_eval if info is not None else frozenset()
        self.params: Dict[str, Value] = info.params if info is not None else {}
        self.reads: tuple = ()
        self.frameworks = frameworks
        self.pending = False  # it met a call of a local function not walked yet
        self.entered: Dict[int, cst.CSTNode] = {}  # its loops known to run their body (``Facts.entered_loops``)

    def replay(self, seq_start: int, mapping: Dict[int, Value], params: Dict[str, Value]) -> None:
        """Make this walk the one a walk starting at ``seq_start`` with ``params`` would
        make: ``mapping`` takes the old parameter values (and their ancestors) to the new."""
        delta = seq_start - self.seq_start
        if not self._shares_values() and all(k == id(v) for k, v in mapping.items()):
            # The same parameter values, and no value of this walk in another's hands
            # (only its calls' arguments are: ``site_args``): its values stay its own,
            # new to this round as copies would be. Only the numbers move.
            for facts in (self.calls, self.backwards, self.mutations):
                for f in facts.values():
                    f.seq += delta
            for f in self.effects.values():
                f.seq += delta
            self.seq_start = seq_start
            self.params = params
            return
        made: List[Value] = []  # old values copied: kept alive while ``mapping`` holds their ids

        def copy(v: Optional[Value]) -> Optional[Value]:
            if v is None:
                return None
            new = mapping.get(id(v))
            if new is not None:
                return new
            todo = [v]
            fresh = len(made)
            while todo:
                old = todo.pop()
                if id(old) in mapping:
                    continue
                new = object.__new__(Value)
                new.__dict__.update(old.__dict__)
                mapping[id(old)] = new
                made.append(old)
                todo.extend(old.parents)
            for old in made[fresh:]:
                if old.parents:
                    mapping[id(old)].parents = tuple([mapping[id(p)] for p in old.parents])
            return mapping[id(v)]

        for c in self.calls.values():
            if c.receiver is not None:
                c.receiver = copy(c.receiver)
            if c.args:
                c.args = tuple([copy(a) for a in c.args])
            if c.callee_value is not None:
                c.callee_value = copy(c.callee_value)
            c.seq += delta
        for c in self.effects.values():
            if c.receiver is not None:
                c.receiver = copy(c.receiver)
            c.seq += delta
        for b in self.backwards.values():
            b.values = tuple([copy(v) for v in b.values])
            b.seq += delta
        for m in self.mutations.values():
            m.before = copy(m.before)
            m.value = copy(m.value)
            m.seq += delta
        for by_call in self.site_args.values():
            for call, args in by_call.items():
                if args is not None:
                    by_call[call] = {name: copy(v) for name, v in args.items()}
        self.seq_start = seq_start
        self.params = params


    def renumber(self, seq_start: int) -> None:
        """Move this walk's sequence numbers to start at ``seq_start``."""
        delta = seq_start - self.seq_start
        if delta:
            for facts in (self.calls, self.backwards, self.mutations, self.effects):
                for f in facts.values():
                    f.seq += delta
            self.seq_start = seq_start

    def _shares_values(self) -> bool:
        """Some call of this walk hands values to a local function (its parameters
        next round)."""
        return any(args is not None for by_call in self.site_args.values() for args in by_call.values())


def _same_shape(old: Dict[str, Value], new: Dict[str, Value]) -> Optional[Dict[int, Value]]:
    """When the values of ``new`` are those of ``old`` made again -- the same fields,
    parents of the same shape, shared where theirs are shared -- the map from each old
    value and ancestor (by id) to its counterpart; None otherwise."""
    if list(old) != list(new):
        return None
    forward: Dict[int, Value] = {}
    backward: Dict[int, Value] = {}
    todo = list(zip(old.values(), new.values()))
    while todo:
        a, b = todo.pop()
        seen = forward.get(id(a))
        if seen is not None:
            if seen is not b:
                return None
            continue
        if id(b) in backward:
            return None
        if a is not b and (
            a.node is not b.node
            or a.inference != b.inference
            or a.pure != b.pure
            or a.tags != b.tags
            or a.rec != b.rec
            or a.state != b.state
            or len(a.parents) != len(b.parents)
        ):
            return None
        forward[id(a)] = b
        backward[id(b)] = a
        if a.parents:
            todo.extend(zip(a.parents, b.parents))
    return forward


# Each loop's body is walked twice (the second pass sees what the first carried round),
# but a loop inside another loop's first pass only once: that pass is provisional, the
# outer loop's second pass walks the inner loop again, twice. Without that, n nested
# loops cost 2**n walks (18 nested ``for`` loops took 20 s and 800 MB, 25 never ended:
# issue 24's battery); with it, ~n**2/2. Loops nested deeper than this are walked once.
TWO_PASS_LOOP_DEPTH = 6


def _loop_depth(stmt, memo: Dict[int, int]) -> int:
    """How deep loops nest in ``stmt`` (a loop: 1 when it holds none), not counting
    nested functions and classes (their own walks); kept in ``memo`` by id."""
    found = memo.get(id(stmt))
    if found is not None:
        return found
    inner = 0
    todo = list(iter_children(stmt))
    while todo:
        n = todo.pop()
        t = type(n)
        if t is cst.For or t is cst.While:
            inner = max(inner, _loop_depth(n, memo))
        elif t is not cst.FunctionDef and t is not cst.ClassDef and _may_hold_loops(t):
            todo.extend(iter_children(n))
    memo[id(stmt)] = inner + 1
    return inner + 1


_HOLDS_NO_LOOPS: Dict[type, bool] = {}  # (``_may_hold_loops``, by type)


def _may_hold_loops(t: type) -> bool:
    """Whether a node of type ``t`` may hold a loop statement: not an expression (a
    lambda too) nor a line of small statements (``_loop_depth`` need not walk them)."""
    no = _HOLDS_NO_LOOPS.get(t)
    if no is None:
        no = _HOLDS_NO_LOOPS[t] = issubclass(t, (cst.BaseExpression, cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.BaseSmallStatement))
    return not no

_CONSTANTS = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString})
_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp})


def _non_empty_literal(v: Value) -> bool:
    """``v`` is a list or tuple written out with at least one item (none starred), as
    made: a ``for`` over it runs its body at least once."""
    node = v.node
    return (type(node) in (cst.List, cst.Tuple) and CONTAINER <= v.tags and bool(node.elements)
            and not any(type(e) is cst.StarredElement for e in node.elements))


def _bound_arguments(call: cst.Call, params: Sequence[str], args: Sequence[Value]) -> Optional[Dict[str, Value]]:
    """The value a call passes for each of the callee's ``params`` it sets (``self``/
    ``cls`` skipped on a method call); None when a ``*args``/``**kwargs`` hides which."""
    bound = bind(call, method_params(call, params))
    if bound is None:
        return None
    value_of = {id(a): v for a, v in zip(call.args, args)}
    return {name: value_of[id(a)] for name, a in bound.items() if id(a) in value_of}


def _constant_defaults(info: FunctionInfo) -> Dict[str, Value]:
    """The parameters of ``info`` whose default is a constant (``delta=1.0``), with it:
    their value at a call that does not pass them."""
    out = {}
    p = info.node.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        d = param.default
        if d is not None and (type(d) in _CONSTANTS or (type(d) is cst.Name and d.value in ("True", "False", "None"))):
            out[param.name.value] = opaque_value(d, CONST)
    return out




class Analyzer:
    MAX_ROUNDS = 6
    MAX_ROUNDS_UNLINKED = 4  # (in a file nothing backpropagates in: see ``_link_returns``)
    # Walk callers before callees, and a function whose callers (by name, in this file)
    # were all walked in this round with the inputs those walks give it (False: every
    # function with its inputs of the last round, in the file's order; the results are the
    # same, tests compare the two). Most functions then have their inputs in round 1.
    EAGER_INPUTS = True
    # Replay a unit's previous walk when nothing it reads changed (False: walk every
    # unit every round; the results are the same, tests compare the two).
    REUSE_WALKS = True

    def __init__(self, module: cst.Module, names: Optional[Names] = None, whole: Optional[Whole] = None,
                 program: Optional[Context] = None):
        """``whole``: facts of the whole file when ``module`` is a slice of it
        (``slicing.plan``); computed from ``module`` otherwise. ``program``: what the
        other modules of the program tell this one (``core.interfile``)."""
        self.module = module
        self.context = program or NO_CONTEXT
        self._hole_values: Dict[str, Value] = {}  # (``_lookup``: a hole is one value wherever read)
        # What each local function returned on its last walk where all of it left the graph
        # (``Returns.left``): ``Facts.left_returned``.
        self._left_returned: Dict[int, Tuple[Value, ...]] = {}
        self.whole = whole if whole is not None else whole_of_source(module.code)
        imports = Imports(program.package, program.star_names, program.star_bindings) if program is not None else None
        self.names = names or Names(module, walrus=self.whole is None or self.whole.walrus, program=imports)
        if self.whole is not None:
            self.names.frameworks.update(self.whole.frameworks)
        if self.context.framework is not None and not self.names.frameworks:
            self.names.frameworks.add(self.context.framework)  # the project says which
        # Every proper prefix of a dotted name ever bound (``a`` and ``a.b`` for ``a.b.c``):
        # rebinding a name that is none of them has no ``name.attr`` values to forget
        # (``_bind_name`` scanned every value for each binding: quadratic in a module of
        # thousands of definitions).
        self._dotted_prefixes: Set[str] = set()
        # Values returned by local functions are linked to their callers by value
        # (``Returns.template``) where something is backpropagated: that is what the
        # rules following those links are about, and library code without a backward
        # keeps the cheaper summaries (fewer rounds to a fixpoint).
        self._link_returns = self.whole is None or self.whole.backprop
        # The module's functions, classes and methods, and the calls between them by name.
        self.graph = CallGraph(module, self.names, self.whole, self.context)
        self._loop_depths: Dict[int, int] = {}  # (``_loop_depth``)
        self._runs_blocks: Optional[bool] = None  # (``_runs_its_blocks``, computed once where asked)
        # Calls of a function from its own body (recursion): they cannot be how it is
        # first entered. Kept across rounds (a replayed walk makes the same calls).
        self._self_calls: Set[int] = set()
        self._site_caller: Dict[int, Optional[FunctionInfo]] = {}  # call id -> the function it is in
        # Classes of this file whose instances reach code the flow does not follow (handed
        # to an unknown call, stored in an object or container, returned): their ``net(x)``
        # may be called where no site is seen. Only grows (kept across rounds).
        self._escaped_classes: Set[str] = set()
        if self.context.imported:
            self._escaped_classes.update(self.graph.classes)
        self._classes_not_escaped: Set[str] = set(self.graph.classes) - self._escaped_classes
        # Callbacks: a function handed to a local function (a runner) whose parameter is
        # only ever called there. By function id: the argument nodes it was handed as.
        # (The values its free names had where it was handed travel with the runner's
        # arguments: ``_free_key``.)
        self._handed: Dict[int, Set[int]] = defaultdict(set)
        self._blind: Set[int] = set()  # (``_note_blind``)
        self._only_called_of: Dict[Tuple[int, str], bool] = {}
        # Functions whose callers are unknown: referenced other than by a direct call, and
        # the ``forward`` of a class whose instances escape (grows over the rounds).
        self._escapes: Set[int] = set(self.graph.escapes)

    # --- driver -------------------------------------------------------------------
    def run(self) -> Facts:
        for info in self.graph.functions:
            info.entry = self._entry(info, None)
        # One walk per unit (the module, then each function), kept between rounds.
        self._walks: Dict[int, _Walk] = {}
        units: List[Optional[FunctionInfo]] = [None, *self.graph.functions]
        callers = self.graph.static_callers() if self.EAGER_INPUTS else {}
        order = self.graph.callers_first(units, callers) if callers else units
        # The units that called each function in the last round: where no scan by name
        # knows its callers (``forward``, called as ``net(x)``), these were.
        seen_calling: Dict[int, Set[int]] = {}
        pending: Set[int] = set()  # functions given arguments by a walk that met a function not walked yet
        walked_once: Set[int] = set()  # (``_note_blind``)
        # (links by value take a round per level of calls to settle)
        for _ in range(self.MAX_ROUNDS if self._link_returns else self.MAX_ROUNDS_UNLINKED):
            self._reset()
            walked: Set[int] = set()
            for info in order:
                if info is None:
                    pass
                elif callers.get(id(info)) is not None:
                    if callers[id(info)] <= walked:
                        self._take_inputs(info, callers[id(info)])
                elif self.EAGER_INPUTS and seen_calling.get(id(info)) and seen_calling[id(info)] <= walked:
                    self._take_inputs(info, seen_calling[id(info)])
                if info is not None:
                    self._note_blind(info, walked_once)
                self._walk_unit(info)
                walked.add(id(info))
            # (a walk that met a function not walked yet is made again with its summary,
            # and so are the functions it called, with the arguments it then gives them)
            changed = any(self._walks[id(info)].pending for info in units)
            tainted, pending = pending, {t for info in units if self._walks[id(info)].pending for t in self._walks[id(info)].site_args}
            seen_calling = {
                fid: {id(self._site_caller[cid]) for cid in sites}
                for fid, sites in self._sites.items() if all(cid in self._site_caller for cid in sites)
            }
            for name in self._escaped_classes:
                for method in CALL_METHODS:  # (each: ``fit`` may call ``self.forward`` itself)
                    found = self.graph.method_of(name, method)
                    if found is not None:
                        self._escapes.add(id(found))
            for fid, handed in self._handed.items():
                info = self.graph.by_id[fid]
                if fid in self._escapes and info.cls is None and len(handed) >= self.graph.value_references(info):
                    self._escapes.discard(fid)  # (every reference hands it to a runner that calls it)
            calls_by_id = {cid: fact for info in units for cid, fact in self._walks[id(info)].calls.items()}
            for info in self.graph.functions:
                entry = self._entry(info, self._sites.get(id(info)))
                entry_eval = self._entry_eval(info, calls_by_id)
                summary = self._summaries.get(id(info), frozenset())
                sets_train = self._train_summaries.get(id(info), frozenset())
                sets_eval = self._eval_summaries.get(id(info), frozenset())
                params = self._param_values(info)
                returns = self._returns_of.get(id(info), Returns())
                grad_effects = self._grad_effects_of.get(id(info), GradEffects())
                if (
                    entry != info.entry
                    or entry_eval != info.entry_eval
                    or summary != info.leaves_eval
                    or sets_train != info.sets_train
                    or sets_eval != info.sets_eval
                    or params.keys() != info.params.keys()
                    # (what a function grows in place is its parameter's own object, of
                    # that value's node and recording: a summary made from the values of
                    # a round before is made again with this round's; otherwise walking in
                    # the file's order stops one round short of walking callers first)
                    or ((id(info) in tainted or returns.grown) and _same_shape(info.params, params) is None)
                    or returns != info.returns
                    or grad_effects != info.grad_effects
                ):
                    changed = True
                info.entry, info.entry_eval, info.leaves_eval, info.params, info.returns = entry, entry_eval, summary, params, returns
                info.grad_effects = grad_effects
                info.sets_train = sets_train
                info.sets_eval = sets_eval
            if not changed:
                break
        if order is not units:  # (the facts numbered as walking the file in order numbers them)
            at = 0
            for info in units:
                self._walks[id(info)].renumber(at)
                at += self._walks[id(info)].seq_count
        calls: Dict[int, CallFact] = {}
        backwards: Dict[int, BackwardFact] = {}
        scopes: Dict[int, ScopeFact] = {}
        mutations: Dict[int, MutationFact] = {}
        effects: List[CallFact] = []
        entered: Set[int] = set()
        for info in units:
            walk = self._walks[id(info)]
            effects.extend(walk.effects.values())
            entered.update(walk.entered)
            calls.update(walk.calls)
            backwards.update(walk.backwards)
            scopes.update(walk.scopes)
            mutations.update(walk.mutations)
        self._loops_of_callers(calls, backwards, mutations)
        if F.MXNET in self.names.frameworks:
            _drop_symbolic_module_backwards(calls, backwards)
        return Facts(
            self.module,
            self.names,
            frozenset(self.names.frameworks),
            self.graph.functions,
            list(calls.values()),
            list(backwards.values()),
            list(scopes.values()),
            list(mutations.values()),
            self.context,
            effects,
            frozenset(entered),
            dict(self._left_returned),
        )

    def _loops_of_callers(self, calls: Dict[int, CallFact], backwards: Dict[int, BackwardFact],
                          mutations: Dict[int, MutationFact]) -> None:
        """A function whose every call (all seen) stands in the same loops runs once per
        iteration of them (``train_epoch(...)`` called by ``fit``'s loop, a callback its
        runner calls there): its facts' ``caller_loops``. After the fixpoint, once: one
        pass over the calls, one per fact."""
        by_target: Dict[int, List[CallFact]] = defaultdict(list)
        for fact in calls.values():
            if fact.target is not None and fact.func is not fact.target:
                by_target[id(fact.target)].append(fact)
        if not by_target:
            return
        memo: Dict[int, Tuple[cst.CSTNode, ...]] = {}
        funcs = {id(f.func): f.func for table in (calls, backwards, mutations) for f in table.values() if f.func is not None}
        outer = {fid: self._caller_loops(func, 0, memo, by_target, calls) for fid, func in funcs.items()}
        for table in (calls, backwards, mutations):
            for fact in table.values():
                loops = outer.get(id(fact.func)) if fact.func is not None else None
                if loops:
                    fact.caller_loops = loops

    def _caller_loops(self, info: Optional[FunctionInfo], depth: int, memo, by_target, calls) -> Tuple[cst.CSTNode, ...]:
        """``_loops_of_callers``: the loops around every call of ``info`` (theirs too)."""
        if info is None or depth > 4:
            return ()
        found = memo.get(id(info))
        if found is not None:
            return found
        memo[id(info)] = ()  # (a cycle: no loops)
        sites = self._sites.get(id(info))
        facts = by_target.get(id(info), ())
        out: Tuple[cst.CSTNode, ...] = ()
        # (not a model's ``forward``: a model call is a unit of its own to the rules; a
        # module that holds nothing is a function of its arguments: ``roles.is_model_call``)
        if (not info.opaque and id(info) not in self._escapes and sites and facts and (info.name not in CALL_METHODS or info.stateless)
                and len(facts) == len(sites) and all(cid in calls for cid in sites)):
            first = self._caller_loops(facts[0].func, depth + 1, memo, by_target, calls) + facts[0].loops
            if first and all(len(l) == len(first) and all(a is b for a, b in zip(l, first))
                             for l in (self._caller_loops(f.func, depth + 1, memo, by_target, calls) + f.loops for f in facts[1:])):
                out = first
        memo[id(info)] = out
        return out

    def _note_blind(self, info: FunctionInfo, walked_once: Set[int]) -> None:
        """Before walking ``info``: walked first with no argument values (its callers not
        known by name, not walked yet: ``net(x)`` calling ``forward``), what it returns is
        made of parameters nobody knows, and a caller's loop carrying it back in would
        keep that guess for good (``total = net(x, total)``). Its calls are then pending
        (``_call``), as before its first walk, until its next walk (with its callers'
        arguments where they were seen): at most once per function."""
        if id(info) in walked_once:
            self._blind.discard(id(info))
            return
        walked_once.add(id(info))
        if not info.params and self._link_returns and len(info.param_names) > (1 if info.cls is not None else 0):
            self._blind.add(id(info))

    def _take_inputs(self, info: FunctionInfo, callers: Set[int]) -> None:
        """Before walking ``info`` in a round where every unit that may call it has been
        walked: its entry state, names in eval mode and parameter values from those walks
        (what the end of the round would give it)."""
        # (Looked up per call site of ``info`` in its callers' walks, not copied whole:
        # the module's walk holds every call of a script, and a copy per function made
        # a script of n functions cost n**2. Issue 44.)
        calls_by_id = _CallsOf([self._walks[u].calls for u in callers]) if callers else {}
        info.entry = self._entry(info, self._sites.get(id(info)))
        info.entry_eval = self._entry_eval(info, calls_by_id)
        info.params = self._param_values(info)

    def _reset(self) -> None:
        self._sites: Dict[int, Dict[int, State]] = defaultdict(dict)
        self._summaries: Dict[int, FrozenSet[str]] = {}
        self._train_summaries: Dict[int, FrozenSet[str]] = {}
        self._eval_summaries: Dict[int, FrozenSet[str]] = {}
        self._site_args: Dict[int, Dict[int, Optional[Dict[str, Value]]]] = defaultdict(dict)
        self._returns_of: Dict[int, Returns] = {}
        self._grad_effects_of: Dict[int, GradEffects] = {}
        self._seq = 0

    def _walk_unit(self, info: Optional[FunctionInfo]) -> None:
        """Walk the module (``info`` None) or a function, or, when what the walk reads
        is as it was at the unit's last walk, replay that walk: see ``_Walk``."""
        walk = self._walks.get(id(info))
        mapping = self._replayable(walk, info) if walk is not None and self.REUSE_WALKS else None
        if mapping is None:
            walk = self._walks[id(info)] = self._walk = _Walk(info, self._seq, len(self.names.frameworks))
            # The walk writes its facts and its calls' sites into its own tables.
            self._calls, self._backwards, self._scopes, self._mutations = (
                walk.calls, walk.backwards, walk.scopes, walk.mutations,
            )
            self._effects, self._entered = walk.effects, walk.entered
            all_sites, all_site_args = self._sites, self._site_args
            self._sites, self._site_args, self._reads = walk.sites, walk.site_args, {}
            try:
                if info is None:
                    self._walk_module()
                else:
                    self._walk_function(info)
            finally:
                self._sites, self._site_args = all_sites, all_site_args
            walk.seq_count = self._seq - walk.seq_start
            walk.reads = tuple((t, (tuple(t.leaves_eval), tuple(t.sets_train), tuple(t.sets_eval)), t.returns, t.grad_effects) for t in self._reads.values())
            if info is not None:
                walk.summary = (self._summaries[id(info)], self._train_summaries[id(info)], self._eval_summaries[id(info)])
                walk.returns = self._returns_of[id(info)]
                walk.grad_effects = self._grad_effects_of[id(info)]
        else:
            walk.replay(self._seq, mapping, info.params if info is not None else {})
            self._seq += walk.seq_count
            if info is not None:
                (self._summaries[id(info)], self._train_summaries[id(info)], self._eval_summaries[id(info)]), self._returns_of[id(info)] = walk.summary, walk.returns
                self._grad_effects_of[id(info)] = walk.grad_effects
        for target, sites in walk.sites.items():
            self._sites[target].update(sites)
        for target, args in walk.site_args.items():
            self._site_args[target].update(args)

    def _replayable(self, walk: "_Walk", info: Optional[FunctionInfo]) -> Optional[Dict[int, Value]]:
        """When a walk of ``info`` now would make what ``walk`` made (the same entry
        state, parameter values of the same shape, the same summaries of the functions
        it calls): how its parameter values map to theirs now. None otherwise."""
        if walk.frameworks != len(self.names.frameworks) or walk.pending:
            return None
        for target, leaves_eval, returns, grad_effects in walk.reads:
            if target.returns != returns or (tuple(target.leaves_eval), tuple(target.sets_train), tuple(target.sets_eval)) != leaves_eval or target.grad_effects != grad_effects:
                return None
        if info is None:
            return {}
        if info.entry != walk.entry or info.entry_eval != walk.entry_eval:
            return None
        return _same_shape(walk.params, info.params)

    def _entry_eval(self, info: FunctionInfo, calls_by_id: Dict[int, CallFact]) -> FrozenSet[str]:
        """The names in eval mode at every call of ``info`` (``FunctionInfo.entry_eval``):
        a parameter whose argument is, at each site, a name put in eval mode there; for
        a method called as ``self.m(...)`` from its own class, the ``self.x`` in eval
        mode there too. Empty where a caller is not seen."""
        sites = self._sites.get(id(info))
        if info.opaque or id(info) in self._escapes:
            return frozenset()
        # (and the parameters that other modules' calls all hand in eval mode:
        # ``Context.entered_eval``)
        elsewhere = self._eval_by_callers(info)
        if not sites:
            return elsewhere
        common: Optional[Set[str]] = set(elsewhere) if elsewhere else None
        for cid in sites:
            fact = calls_by_id.get(cid)
            if fact is None or not fact.in_eval:
                return frozenset()
            here = _params_in_eval(fact, info) | self._free_in_eval(fact, info)
            common = here if common is None else common & here
            if not common:
                return frozenset()
        return frozenset(common or ())

    def _sites_outside_record(self, sites: Optional[Dict[int, State]]) -> bool:
        """The forward's calls seen here (besides those its instances' escape hides) are
        not known to record (a demo function's ``net(x)``, nobody calling the demo), and
        none is in a function that returns a value (``build(ctx)``, which runs one dummy
        forward to fix the shapes and returns the Block to be trained)."""
        if not sites or any(s.mxnet.on for s in sites.values()):
            return False
        for c in sites:
            caller = self._site_caller.get(c)
            if caller is not None and any(type(n) is cst.Return and n.value is not None for n in walk(caller.node.body, is_nested_scope)):
                return False
        return True

    def _runs_its_blocks(self) -> bool:
        """The module's own top-level code (not under ``if __name__ == "__main__":``)
        initializes a Gluon Block or loads its parameters (``net.initialize()``,
        ``net.load_parameters(f)``): a script that runs its Blocks. (Not code in
        functions or under the main guard: a library's model file runs its smoke test
        there, as osmr/imgclsmob's do.)"""
        if self._runs_blocks is None:
            self._runs_blocks = any(
                type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in _RUNS_BLOCKS
                for stmt in self.module.body
                if type(stmt) not in (cst.FunctionDef, cst.ClassDef) and not is_main_guard(stmt)
                for n in walk(stmt, is_nested_scope))
        return self._runs_blocks

    def _eval_by_callers(self, info: FunctionInfo) -> FrozenSet[str]:
        """The parameters of the module-level function ``info`` that every call of
        another module hands a name in eval mode (``Context.entered_eval``)."""
        if info.parent is not None or info.cls is not None:
            return frozenset()
        out = set()
        for slot in self.context.eval_by_callers(info.name):
            if slot.isdigit():
                if int(slot) < len(info.param_names):
                    out.add(info.param_names[int(slot)])
            elif slot in info.param_names:
                out.add(slot)
        return frozenset(out)

    def _free_in_eval(self, fact: CallFact, info: FunctionInfo) -> Set[str]:
        """At the call ``fact`` of ``info``: its free names in eval mode as it starts (a
        nested function called where its enclosing scope's ``model`` is in eval mode),
        and, at a call of a runner, those of the callbacks handed to it, under their
        ``_free_key`` (what the runner's call of the callback hands back to it)."""
        if not fact.in_eval:
            return set()
        out: Set[str] = set()
        own = _free_key(info, "")
        scope = fact.func.scope if fact.func is not None else self.names.root
        free = self.graph.free_names(info)
        for k in fact.in_eval:
            if k.startswith(own):
                out.add(k[len(own):])  # (handed back by the runner)
            else:
                root = k.partition(".")[0]
                if root in free and scope.binder(root) is not None and scope.binder(root) is info.scope.binder(root):
                    out.add(k)
        for arg, value in zip(fact.node.args, fact.args):
            callback = self.graph.by_node.get(id(value.node)) if type(arg.value) is cst.Name and not arg.star else None
            if callback is None or id(arg.value) not in self._handed[id(callback)]:
                continue
            free = self.graph.free_names(callback)
            for k in fact.in_eval:
                root = k.partition(".")[0]
                if root in free and scope.binder(root) is not None and scope.binder(root) is callback.scope.binder(root):
                    out.add(_free_key(callback, k))
        return out

    def _param_values(self, info: FunctionInfo) -> Dict[str, Value]:
        """Each parameter's value joined over all call sites, when every site is known."""
        sites = self._site_args.get(id(info))
        if not sites and not info.opaque and roles.is_gluon_forward(info) and roles.is_loss_class(info):
            # A Gluon loss's forward that nothing here calls: it is handed the model's
            # prediction, which its training call records (``BLOCK_INPUT``; SL304).
            first = [p for p in info.node.params.params[1:] if p.name.value != "F"][:1]
            return {p.name.value: opaque_value(p, BLOCK_INPUT) for p in first}
        if info.opaque or id(info) in self._escapes or not sites:
            return {}
        out: Dict[str, Value] = {}
        # Its free names (``loss`` of the enclosing scope or the module, read when it
        # runs): their values where it is called, or where it was handed to a runner.
        params = set(info.param_names)
        extra = {k for a in sites.values() if a is not None for k in a if k not in params and k != UNBOUND}
        for name in sorted(extra):
            values = [a.get(name) if a is not None else None for a in sites.values()]
            if all(v is not None for v in values):
                joined = values[0]
                for v in values[1:]:
                    joined = _join_values(joined, v)
                out[name] = joined
        if any(a is None or UNBOUND in a for a in sites.values()):
            return out
        defaults = _constant_defaults(info)
        for name in info.param_names:
            values = [a.get(name, defaults.get(name)) for a in sites.values()]
            if all(v is not None for v in values):
                joined = values[0]
                for v in values[1:]:
                    joined = _join_values(joined, v)
                out[name] = joined
        return out

    def _record_site_args(self, call: cst.Call, target: FunctionInfo, args: Tuple[Value, ...]) -> None:
        self._site_args[id(target)][id(call)] = _bound_arguments(call, target.param_names, args)

    def _entry(self, info: FunctionInfo, sites: Optional[Dict[int, State]]) -> State:
        info.callers_known = False
        if info.opaque:
            state = unknown_entry_state("opaque")
        elif id(info) in self._escapes or not sites or all(c in self._self_calls for c in sites):
            # (Called only by itself: first entered from elsewhere. Called by name from
            # another module's no-grad block: PyTorch's default is no guess.)
            # (Lightning's evaluation hooks: the Trainer runs them without grad. A closure
            # handed away, returned or passed to a call not followed: its runner decides.)
            elsewhere = (info.name in self.context.called_off or _lightning_no_grad_hook(info)
                         or (info.parent is not None and info.cls is None) or _called_off_here(sites))
            state = unknown_entry_state("called-elsewhere" if elsewhere else "unknown-entry")
            if not elsewhere and roles.is_gluon_forward(info) and (
                    self.whole is None or self.whole.backprop or self.context.imported
                    or not (self._runs_its_blocks() or self._sites_outside_record(sites))):
                # A Gluon Block's (or Loss's) forward that nothing here calls: Blocks exist to
                # be trained, and their training forward runs inside ``record()`` (their
                # callers' file, the library's users). Recording is on when it matters for
                # what is written in place there (SL304); the training flag stays unknown.
                # (Not in a script that trains nothing, that no other module imports and whose
                # own module-level code initializes its Blocks to run them: a book's demo
                # Block run on a batch, d2l's FancyMLP, is never recorded. A library's
                # model file, which runs nothing itself, keeps the assumption.)
                state = dataclasses.replace(state, mxnet=Switch(Mode.ON, Origin("block-entry")))
        else:
            info.callers_known = True
            states = list(sites.values())
            joined = states[0]
            for s in states[1:]:
                joined = joined.join(s)

            # Called only by a module's own ``forward`` that nobody here calls (detectron2's
            # ``if not self.training: return self.inference(x)``): the grad mode is that of
            # callers not seen, no guess.
            by_forward = all(
                (f := self._site_caller.get(c)) is not None and f.name in ("forward", "hybrid_forward") and f.in_model_class
                and f.entry.torch.origin is not None and f.entry.torch.origin.kind in ("unknown-entry", "called-elsewhere")
                for c in sites
            )

            # Called only where the grad mode is that of callers not seen, no guess either
            # (``eval_step`` called by Lightning's ``validation_step`` and ``test_step``).
            from_elsewhere = all(
                s.torch.mode is not Mode.UNKNOWN or (s.torch.origin is not None and s.torch.origin.kind == "called-elsewhere")
                for s in states
            ) and any(s.torch.mode is Mode.UNKNOWN for s in states)

            def derive(sw: Switch) -> Switch:
                if sw.mode == Mode.UNKNOWN:
                    return Switch(Mode.UNKNOWN, Origin("called-elsewhere" if by_forward or from_elsewhere else "unknown-entry"))
                return Switch(sw.mode, Origin("entry", None, sw.origin.api if sw.origin else None))

            torch = derive(joined.torch)
            if torch.mode is not Mode.OFF and info.name in self.context.called_off:
                torch = Switch(Mode.UNKNOWN, Origin("called-elsewhere"))  # (and off, elsewhere)
            state = State(torch, derive(joined.mxnet), derive(joined.mx_train))
        if info.parent is None and info.cls is None and not info.opaque and id(info) not in self._escapes:
            state = self._entered_by_callers(info, state, info.callers_known)
        info.called_in = state
        if info.decorator is not None:
            api, dec = info.decorator
            call = dec.decorator if type(dec.decorator) is cst.Call else None
            state = _apply_scope(state, api, call, Origin("decorator", dec, api))
        return state

    def _entered_by_callers(self, info: FunctionInfo, state: State, here: bool) -> State:
        """``state`` with the entry state other modules' calls of ``info`` agree on
        (``Context.entered``): joined with its calls ``here``, else as they give it."""
        for fw, callers in self.context.entered_by_callers(info.name).items():
            mode = Mode.ON if callers.mode == "on" else Mode.OFF
            if fw == F.TORCH and mode is Mode.ON and info.name in self.context.called_off:
                continue  # (another file calls that name without grad)
            sw = Switch(mode, Origin("entry", None, callers.api or None, callers))
            if fw == "mx_train":  # (MXNet's training flag)
                state = dataclasses.replace(state, mx_train=state.mx_train.join(sw) if here else sw)
                continue
            mine = state.recording(fw)
            state = state.with_recording(fw, mine.join(sw) if here else sw)
        return state

    # --- walking --------------------------------------------------------------------
    def _walk_module(self) -> None:
        self.func: Optional[FunctionInfo] = None
        self.scope = self.names.root
        self.flow = _Flow(_Env(), module_state())
        self._loops: List[List[_Flow]] = []
        self._loop_nodes: List[cst.CSTNode] = []
        self._provisional = 0  # enclosing loops in their first (provisional) pass
        self._returns: List[_Flow] = []
        self._returned = []
        self._block(self.module.body)

    def _walk_function(self, info: FunctionInfo) -> None:
        self.func = info
        self.scope = info.scope
        self.flow = _Flow(_Env(dict(info.params), info.entry_eval, grads=ENTRY_GRADS), info.entry)
        self._loops = []
        self._loop_nodes = []
        self._provisional = 0
        self._returns = []
        self._returned: List[Value] = []
        self._passed: Set[Optional[str]] = set()
        self._applied_exits: Set[int] = set()  # (the origins' nodes of its callees' ``Returns.exit`` applied here)
        self._block(info.node.body)
        exits = [f.env for f in self._returns + [self.flow] if f.env is not None]
        returns = self._returns_summary(info, exits)
        if returns.left:
            self._left_returned[id(info)] = tuple(self._returned)
        else:
            self._left_returned.pop(id(info), None)
        left_set = _exit_switches(info, [f.state for f in self._returns + [self.flow] if f.env is not None], self._applied_exits)
        self._returns_of[id(info)] = dataclasses.replace(returns, exit=left_set) if left_set else returns
        self._grad_effects_of[id(info)] = self._grad_effects_summary(info, exits)
        left = set()
        for env in exits:
            left.update(k for k in env.maybe_eval if _outlives(info, k))
        self._summaries[id(info)] = frozenset(left)
        trained = frozenset.intersection(*(env.in_train for env in exits)) if exits else frozenset()
        self._train_summaries[id(info)] = frozenset(
            k for k in trained if k not in left and _outlives(info, k))
        # (what it put in eval mode itself and is so on every exit)
        self._eval_summaries[id(info)] = frozenset(left.intersection(*(env.in_eval for env in exits))) if exits else frozenset()

    def _grad_effects_summary(self, info: FunctionInfo, exits: List[_Env]) -> GradEffects:
        """``FunctionInfo.grad_effects`` of the walk just made of ``info``."""
        statuses = {env.grads for env in exits}
        exit = statuses.pop() if len(statuses) == 1 else (ENTRY_GRADS if not statuses else None)
        calls = []
        steps = False
        for fact in sorted([*self._calls.values(), *self._effects.values()], key=lambda c: c.seq):
            if fact.func is not info or fact.qname is not None or fact.method not in ("step", "zero_grad"):
                continue
            if fact.via is None and fact.node.args and not (fact.method == "zero_grad" and all(a.keyword is not None for a in fact.node.args)):
                continue  # (``scaler.step(opt)``, a closure: not followed; ``zero_grad(set_to_none=True)`` is a zeroing)
            receiver = (fact.callee or "")[: -len(fact.method) - 1]
            if receiver and "(" not in receiver:
                calls.append((fact.method, receiver, fact.grads, fact.inner or fact.node))
                steps = steps or fact.method == "step"
        if steps and exit is not None and exit[0] == "zeroed-some":
            exit = None  # (it steps, then zeroes, on some paths: a step of its own, not one it robs)
        return GradEffects(exit, tuple(calls))

    def _callback_effects_at(self, call: cst.Call, runner: FunctionInfo, args) -> None:
        """At a call of ``runner`` with nothing of its own done to gradient buffers: the
        optimizer calls of the callbacks handed to it that it only calls (``_note_handed``:
        ``run(step)`` with ``def step(): opt.zero_grad()``), spelled through their free
        names (``_spelled_at``), in the order they are handed."""
        if runner.grad_effects.calls or runner.grad_effects.exit != ENTRY_GRADS:
            return
        at = 0
        for arg, value in zip(call.args, args):
            info = self.graph.by_node.get(id(value.node)) if type(arg.value) is cst.Name and not arg.star else None
            if info is not None and id(arg.value) in self._handed.get(id(info), ()) and info.grad_effects.calls:
                self._effects_at(call, info, info.grad_effects, self._spelling(call, info, info.param_names), self.flow.env.grads, at)
                at += len(info.grad_effects.calls)

    def _effects_at(self, call: cst.Call, via, effects: GradEffects, spell, before: Optional[tuple], at: int = 0) -> None:
        """At a call of ``via`` (a function of this file, or another module's ``Summary``),
        whose ``effects`` they are: its optimizer calls (``Facts.effects``), their receivers
        as ``spell`` spells them at the call, and the gradient buffers as it leaves them.
        (``at``: the index of its first one among those of the call.)"""
        env = self.flow.env
        for i, (method, receiver, grads, inner) in enumerate(effects.calls, at):
            key = spell(receiver)
            if key is None:
                continue
            self._seq += 1
            fact = CallFact(
                call, None, f"{key}.{method}", method, self.flow.state, self.func, env.vals.get(key), (), True,
                env.in_eval, dict(env.maybe_eval), tuple(self._loop_nodes), _grads_at(grads, before, call), None, None, self._seq,
            )
            fact.via, fact.inner = via, inner
            self._effects[id(call), i] = fact
        if effects.exit != ENTRY_GRADS:
            env.grads = _grads_at(effects.exit, before, call)

    def _spelling(self, call: cst.Call, target: FunctionInfo, params: Sequence[str]):
        return lambda name: self._spelled_at(call, target, params, name)

    def _spelled_at(self, call: cst.Call, target: FunctionInfo, params: Sequence[str], name: str) -> Optional[str]:
        """``name`` (``opt``, ``self.optimizer``, a global) of ``target`` as this call of
        it spells it (``optimizer``, ``trainer.optimizer``); None when it is the callee's
        own (a local, an expression)."""
        root, dot, rest = name.partition(".")
        if root in target.param_names:
            if target.cls is not None and root == target.param_names[0] and (
                    root not in params or (type(call.func) is cst.Attribute and root in ("self", "cls"))):
                func = call.func  # ``self``: what the method is called on
                spelled = dotted(func.value) if type(func) is cst.Attribute else dotted(func)
            else:
                arg = argument_for(call, params, root)
                spelled = dotted(arg.value) if arg is not None else None
        elif root not in target.scope.bound and self.scope.binder(root) is not None and self.scope.binder(root) is target.scope.binder(root):
            spelled = root  # (a module global both see)
        else:
            return None
        return None if spelled is None else spelled + dot + rest

    def _passed_param(self, expr: cst.BaseExpression) -> Optional[str]:
        """The parameter ``return expr`` hands back as it came in, if it is one."""
        info = self.func
        if type(expr) is not cst.Name or expr.value not in info.param_names:
            return None
        return expr.value if self.flow.env.vals.get(expr.value) is info.params.get(expr.value) else None

    def _returns_summary(self, info: FunctionInfo, exits: Sequence[_Env] = ()) -> Returns:
        returned = self._returned
        grown = self._grown(info, exits)
        if not returned:
            return Returns(grown=grown)
        # (a number computed from numbers taken out, ``loss(...).item() / 2``, has left too)
        left = all("left-graph" in v.tags or "const" in v.tags or "number" in v.tags for v in returned)
        rec = []
        for fw in F.FRAMEWORKS:
            switches = {v.rec[fw] for v in returned}
            if len(switches) == 1:
                sw = next(iter(switches))
                origin = sw.origin
                if sw.mode is not Mode.UNKNOWN and origin is not None and origin.kind in ("with", "setter", "decorator", "leaf") and (
                    origin.node is not None and finds(info.node, lambda n: n is origin.node)
                ):
                    rec.append((fw, sw))
        passes = next(iter(self._passed)) if len(self._passed) == 1 else None
        # (``return nullcontext if grad else torch.no_grad``: the caller's ``with ctx():``)
        scope = any("scope" in a.tags for v in returned for a in v.ancestors(_past_scopes))
        return Returns(left, tuple(rec), all(v.inference for v in returned), passes, self._template(info, returned), grown, scope)

    def _grown(self, info: FunctionInfo, exits: Sequence[_Env]) -> Tuple[Tuple[str, Template], ...]:
        """``Returns.grown``: the parameters whose object every exit left grown in place
        (``p.append(x)``: the same object, holding more; not a rebinding such as ``p = p
        + [x]``, which the caller does not see), each with a template of what it holds."""
        if not self._link_returns or not exits:
            return ()
        slots = {id(v): name for name, v in info.params.items()}
        out = []
        for name, entry in info.params.items():
            if name in ("self", "cls", UNBOUND) or entry is None:
                continue
            values = [env.vals.get(name) for env in exits]
            if all(v is entry for v in values):
                continue
            if not all(v is entry or _grown_from(v, entry) for v in values):
                continue
            root = values[0]
            for v in values[1:]:
                root = _join_values(root, v)
            template = Template.of(root, slots, info.entry)
            if template is not None:
                out.append((name, template))
        return tuple(out)

    def _template(self, info: FunctionInfo, returned: List[Value]) -> Optional[Template]:
        """What ``info`` returns in terms of its parameters' values (``Returns.template``)."""
        # (its parameters, and the free names and callbacks' free names its call sites
        # hand it: ``_free_values``, ``_note_handed``)
        slots = {id(v): name for name, v in info.params.items() if name != UNBOUND and v is not None}
        if not slots or not self._link_returns:
            return None
        root = returned[0]
        for v in returned[1:]:
            root = _join_values(root, v)
        return Template.of(root, slots, info.entry)

    def _block(self, body) -> None:
        for stmt in statements(body):
            if self.flow.env is None:
                return
            self._stmt(stmt)

    def _branch(self, body, start: _Flow) -> _Flow:
        self.flow = _Flow(start.env.copy() if start.env is not None else None, start.state)
        if body is not None:
            self._block(body)
        return self.flow

    def _stmt(self, stmt: cst.CSTNode) -> None:
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if self.flow.env is None:
                    return
                self._small(small)
        elif type(stmt) is cst.If:
            self._ev(stmt.test)
            start = self.flow
            flag = self._flag_test(stmt.test)
            known = None
            if flag is not None:
                value = start.env.vals.get(flag[0])
                known = None if value is None else (True if "truthy" in value.tags else False if "falsy" in value.tags else None)
            unreachable = _Flow(None, None)
            # A flag tested before, whose branch left (``if is_train: ...; return``), is known
            # here: the branch it rules out is not walked (gluonts' second ``if is_train:``).
            a = self._branch(stmt.body, start) if known is None or known is flag[1] else unreachable
            if stmt.orelse is None:
                b = start if known is None or known is not flag[1] else unreachable
            else:
                b = self._branch(stmt.orelse, start) if known is None or known is not flag[1] else unreachable
            if flag is not None and known is None:
                a, b = self._knowing(a, flag[0], flag[1]), self._knowing(b, flag[0], not flag[1])
            none = _none_test(stmt.test)
            if none is not None:  # (where ``x is None`` holds and nothing rebound it, ``x`` is None: no graph)
                key, body_none = none
                if body_none:
                    a = _modes_as(_none_where(a, start, key), b, key)
                else:
                    b = _modes_as(_none_where(b, start, key), a, key)
            module = _module_test(stmt.test)
            if module is not None:  # (``if hasattr(model, "eval"): model.eval()``: no module, no mode)
                key, body_module = module
                if body_module:
                    b = _modes_as(b, a, key)
                else:
                    a = _modes_as(a, b, key)
            self.flow = _Flow.join([a, b])
        elif type(stmt) is cst.Else:
            self._block(stmt.body)
        elif type(stmt) in (cst.For, cst.While):
            self._loop(stmt)
        elif type(stmt) in (cst.Try, cst.TryStar):
            self._try(stmt)
        elif type(stmt) is cst.With:
            self._with(stmt)
        elif type(stmt) is cst.FunctionDef:
            for dec in stmt.decorators:
                self._ev(dec.decorator)
            self._bind_name(stmt.name.value, opaque_value(stmt))
        elif type(stmt) is cst.ClassDef:
            outer = self.scope
            self.scope = self.names.scope_of(stmt, outer)
            self._block(stmt.body)
            self.scope = outer
            if self.flow.env is not None:
                self._bind_name(stmt.name.value, opaque_value(stmt))
        elif type(stmt) is cst.Match:
            self._ev(stmt.subject)
            start = self.flow
            flows = [start] + [self._branch(case.body, start) for case in stmt.cases]
            self.flow = _Flow.join(flows)

    def _flag_test(self, test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
        """``if flag:`` / ``if not flag:`` on a local name of a function (no global,
        which a call could change): the name, and the truth under which the body runs."""
        sense = True
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, sense = test.expression, False
        if type(test) is not cst.Name or self.func is None:
            return None
        if test.value not in self.func.scope.bound and not self._enclosing_local(test.value):
            return None
        return test.value, sense

    def _enclosing_local(self, name: str) -> bool:
        """``name``, read by a nested function, is a local of a function enclosing it
        (no global: a call could change it); what it holds here is what it held where the
        nested function was called or handed to its runner (``_free_values``)."""
        if self.func.parent is None or name in self.func.scope.globals:
            return False
        binder = self.scope.binder(name)
        return binder is not None and type(binder.node) is cst.FunctionDef

    def _knowing(self, flow: _Flow, name: str, truth: bool) -> _Flow:
        """``flow`` where ``name`` is known ``truth``y (a tag on a value derived from the
        one it holds; joining with a flow that does not know it forgets it)."""
        env = flow.env
        if env is None:
            return flow
        truth_tag = "truthy" if truth else "falsy"
        v = env.vals.get(name)
        if v is None:  # (a parameter nobody knows)
            env.vals[name] = opaque_value(None, frozenset({truth_tag}))
        else:
            env.vals[name] = Value(v.node, v.rec, (v,), v.inference, True, (v.tags - FLAG_TRUTH) | {truth_tag}, v.state)
        return flow

    def _small(self, small: cst.BaseSmallStatement) -> None:
        if type(small) is cst.Expr:
            self._ev(small.value, statement=True)
            self._apply_setter(small.value)
        elif type(small) is cst.Assign:
            value = self._ev(small.value, statement=True)
            for target in small.targets:
                self._note_assignment(small, target.target, value)
                self._bind(target.target, value)
            self._apply_setter(small.value)
        elif type(small) is cst.AnnAssign:
            if small.value is not None:
                self._bind(small.target, self._ev(small.value, statement=True))
        elif type(small) is cst.AugAssign:
            old = self._ev(small.target)
            new = self._ev(small.value)
            self._mutation(small, "augassign", dotted(small.target), old, new)
            if "leaf" not in old.tags:  # on a leaf the write is in place: it stays that leaf
                self._bind(small.target, computed_value(small, self.flow.state, [old, new], True))
        elif type(small) is cst.Return:
            if small.value is not None:
                returned = self._ev(small.value)
                self._instances_escape(returned)
                self._returned.append(returned)
                if self.func is not None:
                    self._passed.add(self._passed_param(small.value))
            self._returns.append(self.flow)
            self.flow = _Flow(None, None)
        elif type(small) is cst.Raise:
            if small.exc is not None:
                self._ev(small.exc)
            self.flow = _Flow(None, None)
        elif type(small) in (cst.Break, cst.Continue):
            if self._loops:
                self._loops[-1].append(self.flow)
            self.flow = _Flow(None, None)
        elif type(small) is cst.Assert:
            self._ev(small.test)
        elif type(small) in (cst.Import, cst.ImportFrom):
            pass
        elif type(small) is cst.Del:
            pass

    def _loop(self, stmt) -> None:
        if type(stmt) is cst.For:
            iterable = self._ev(stmt.iter)
        else:
            self._ev(stmt.test)
        before = self.flow
        self._loops.append([])
        self._loop_nodes.append(stmt)
        current = before
        # A nest of loops deeper than TWO_PASS_LOOP_DEPTH is walked once, all of it (as a
        # provisional pass walks what it holds): linear in its lines however deep.
        deep = len(self._loop_nodes) - 1 + _loop_depth(stmt, self._loop_depths) > TWO_PASS_LOOP_DEPTH
        passes = 2 if not deep and not self._provisional else 1
        for i in range(passes):  # the second pass sees values carried from the previous iteration
            if type(stmt) is cst.For:
                self.flow = _Flow(current.env.copy(), current.state)
                self._bind(stmt.target, self._loop_item(stmt, iterable))
                start = self.flow
            else:
                start = current
            provisional = i + 1 < passes or deep
            self._provisional += provisional
            try:
                end = self._branch(stmt.body, start)
            finally:
                self._provisional -= provisional
            if i + 1 < passes:  # (after the last pass, the head's carried values are not read)
                current = _carried(stmt, before, end, _Flow.join([before, end] + self._loops[-1]))
                if not self._loops[-1]:
                    current = _carried_mode(before, end, current)
        self._loop_nodes.pop()
        breaks = self._loops.pop()
        # (over a literal list or tuple with items, the body runs at least once: ``losses
        # = [a, b]`` then ``for l in losses: l.backward()`` backpropagates)
        entered = type(stmt) is cst.For and _non_empty_literal(iterable)
        exit_flow = end if entered else _Flow.join([before, end])
        if entered and not self._provisional:
            self._entered[id(stmt)] = stmt
        if stmt.orelse is not None:
            exit_flow = self._branch(stmt.orelse, exit_flow)
        # (``exit_flow`` alone is a new flow already: not copied again)
        self.flow = _Flow.join([exit_flow] + breaks) if breaks or stmt.orelse is not None else exit_flow
        if type(stmt) is cst.For and not breaks and self.flow.env is not None:
            self._detached_items(stmt)
            self._attached_items(stmt)
        if type(stmt) is cst.For and self.flow.env is not None:
            for name, flag in freezing_loop(stmt, lambda c: getattr(self._calls.get(id(c)), "target", None)):
                self._freeze(name, literal_bool(flag) if flag is not None else True)

    def _detached_items(self, stmt: cst.For) -> None:
        """``for s in state: s.detach_()``: every item of ``state`` is detached in place
        (d2l's ``train_epoch_ch8``), so ``state`` holds no graph after the loop, however
        many items it has (the loop's body always detaches its item, and never breaks)."""
        name = dotted(stmt.iter)
        if name is None or type(stmt.target) is not cst.Name or stmt.orelse is not None:
            return
        item = stmt.target.value
        for line in statements(stmt.body):
            if type(line) is not cst.SimpleStatementLine:
                continue
            for small in line.body:
                call = small.value if type(small) is cst.Expr else None
                fact = self._calls.get(id(call)) if type(call) is cst.Call else None
                target = fact.target if fact is not None else None
                params = target.param_names if target is not None else ()
                if target is not None and target.cls is not None and fact.callee_value is not None and type(call.func) is not cst.Attribute:
                    params = params[1:]  # (``net(x)``: its ``forward``)
                inner = next((node for spelled, node in self._detached_at(call, target, params, fact.args)  # ``_detach(s)``: its ``s.detach_()``
                              if spelled == item), None) if target is not None else None
                if inner is not None or (type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "detach_"
                                         and type(call.func.value) is cst.Name and call.func.value.value == item and not call.args):
                    old = self.flow.env.vals.get(name)
                    if old is not None:
                        self._bind_name(name, _detached(inner if inner is not None else call, old, self.flow.state))
                    return

    def _attached_items(self, stmt: cst.For) -> None:
        """``for p in [img, w]: p.attach_grad()`` (``requires_grad_()``): each name the
        literal list holds is a leaf after the loop, as after ``img.attach_grad()`` (the
        loop variable is an alias of each in turn)."""
        names = _literal_names(stmt.iter)
        env = self.flow.env
        elements = [el.value for el in stmt.iter.elements] if names else []
        if not names and dotted(stmt.iter) is not None and dotted(stmt.iter) in env.vals:
            # ``params = [w, b]; for p in params: ...``: the names that hold its items
            items = {id(v) for v in container_items(env.vals[dotted(stmt.iter)])}
            names = tuple(k for k, v in env.vals.items() if id(v) in items and "." not in k)
        if not names or type(stmt.target) is not cst.Name or stmt.orelse is not None:
            return
        item = stmt.target.value
        for line in statements(stmt.body):
            if type(line) is not cst.SimpleStatementLine:
                continue
            for small in line.body:
                call = small.value if type(small) is cst.Expr else None
                if type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value in F.MAKE_LEAF_METHODS \
                        and type(call.func.value) is cst.Name and call.func.value.value == item and not requires_grad_off(call):
                    fw = F.TORCH if call.func.attr.value == "requires_grad_" else F.MXNET
                    for i, name in enumerate(names):
                        old = env.vals.get(name)
                        if fw == F.MXNET and old is not None and i < len(elements):
                            # (each array attached, as ``w.attach_grad()`` there: SL303 compares
                            # what it held with its earlier uses)
                            self._mutation(elements[i], "attach", name, old, None, inner=call)
                        self._bind_name(name, leaf_value(call, fw))
                    return

    def _loop_item(self, stmt: cst.For, iterable: Value) -> Value:
        """The loop variable: parameters of a model, or leaves of a list of leaves, stay leaves."""
        it = stmt.iter
        if type(it) is cst.Call and type(it.func) is cst.Attribute and it.func.attr.value in ("parameters", "named_parameters"):
            target = stmt.target
            env = self.flow.env
            # (of a model whose ``requires_grad`` was switched off, or may have been --
            # ``toggle_grad(model_tgt, False)`` before an EMA update -- a parameter that
            # may not require grad: no leaf of a graph that anything knows of)
            frozen = env is not None and dotted(it.func.value) in env.frozen

            def param(node):
                return opaque_value(node, frozenset({"param"})) if frozen else leaf_value(node, F.TORCH, frozenset({"param"}))

            if it.func.attr.value == "named_parameters" and type(target) in (cst.Tuple, cst.List) and len(target.elements) == 2:
                # ``for name, p in m.named_parameters()``: a string and a parameter
                name = opaque_value(target.elements[0].value, CONST)
                p = param(target.elements[1].value)
                return Value(target, dict(p.rec), (name, p), False, True, frozenset())
            return param(stmt.target)
        if iterable.parents and all("leaf" in p.tags for p in iterable.parents):
            return leaf_value(stmt.target, None, frozenset({"param"}))
        zipped = self._zipped(stmt, iterable)
        if zipped is not None:
            return zipped
        return self._item_of(stmt.iter, iterable, stmt.target)

    def _item_of(self, it: cst.BaseExpression, iterable: Value, target: cst.CSTNode) -> Value:
        """One item of ``iterable`` (spelled ``it``), bound to ``target``: of an
        inference container or tensor, an inference tensor too."""
        if "const" in iterable.tags and not CONTAINER <= iterable.tags:
            return opaque_value(target, CONST)  # ``for step in range(n)``: a number
        items = container_items(iterable)
        if items:  # a list of values: each iteration holds one of them
            item = items[0]
            for other in items[1:]:
                item = _join_values(item, other)
            if type(iterable.node) is cst.Call:
                # (of what a call returned, read out of it: the call stays its def-use parent)
                return read_from(target, item, iterable)
            return item
        # Items of a data loader: data, not graphs.
        tags = frozenset({"loop-item"}) if roles.is_data_iterable(it) else frozenset()
        item = computed_value(target, self.flow.state, [iterable], True, tags)
        item.inference = item.inference or iterable.inference
        return item

    def _zipped(self, stmt: cst.For, iterable: Value) -> Optional[Value]:
        """``for x, t in zip(xs, ts)``: each target name holds an item of its own
        iterable (a tuple of them, which ``_bind`` unpacks element-wise)."""
        it, target = stmt.iter, stmt.target
        if type(it) is not cst.Call or type(target) not in (cst.Tuple, cst.List) or self.names.builtin(it.func, self.scope) != "zip":
            return None
        if len(target.elements) != len(it.args) or len(iterable.parents) != len(it.args):
            return None
        if any(a.keyword is not None or a.star for a in it.args) or any(type(el) is cst.StarredElement for el in target.elements):
            return None
        parts = [self._item_of(a.value, p, el.value) for a, p, el in zip(it.args, iterable.parents, target.elements)]
        return Value(target, _joined_rec(parts), tuple(parts), all(p.inference for p in parts), True, frozenset(), self.flow.state)

    def _try(self, stmt) -> None:
        before = self.flow
        body_end = self._branch(stmt.body, before)
        handler_start = _Flow.join([before, body_end])
        flows = [self._branch(h.body, handler_start) for h in stmt.handlers]
        if stmt.orelse is not None:
            body_end = self._branch(stmt.orelse, body_end)
        flows.append(body_end)
        joined = _Flow.join(flows)
        if stmt.finalbody is not None:
            start = joined if joined.env is not None else handler_start
            final = self._branch(stmt.finalbody, start)
            self.flow = final if joined.env is not None else _Flow(None, None)
        else:
            self.flow = joined

    def _with(self, stmt: cst.With) -> None:
        outer_state = self.flow.state
        for item in stmt.items:
            value = self._ev(item.item)
            expr = item.item
            called = type(expr) is cst.Call
            q = self.names.qualify(expr.func if called else expr, self.scope)
            before = self.flow.state
            if q in F.SCOPES:
                # Uncalled (SL107), it raises; the body is read as its author meant it.
                inside = _apply_scope(before, q, expr if called else None, Origin("with", item, q))
                self._scopes[id(item)] = ScopeFact(item, stmt, q, called, before, inside, self.func)
                self.flow.state = inside
            elif (not called and any("scope" in v.tags for v in value.ancestors())) or (
                called and q is None and (F.spelled_as_scope(_last_name(expr.func)) or any("scope" in v.tags for v in self._lookup(expr.func).ancestors()))
            ):
                # ``with scope:`` where ``scope`` may hold a recording scope, or ``with ctx():``
                # where ``ctx`` may be one (``nullcontext if grad else torch.no_grad``), or a
                # call we cannot resolve spelled as one (``torch.no_grad()`` where ``torch``
                # came from somewhere unseen, ``self._get_no_grad_ctx_mgr()``): anything goes.
                opaque = Switch(Mode.UNKNOWN, Origin("opaque"))
                self.flow.state = State(opaque, opaque, opaque)
            if item.asname is not None:
                self._bind(item.asname.name, value)
        self._block(stmt.body)
        if self.flow.env is not None:
            self.flow.state = outer_state

    # --- bindings ----------------------------------------------------------------------
    def _bind(self, target: cst.BaseExpression, value: Value) -> None:
        if self.flow.env is None:
            return
        if type(target) in (cst.Tuple, cst.List):
            elements = target.elements
            made = value.node
            holder = None
            if type(made) is cst.Call and len(value.parents) == 1 and CONTAINER <= value.tags:
                inner = value.parents[0]  # ``a, b = f(...)`` where ``f`` returns ``x, y`` (``Returns.template``)
                if type(inner.node) in (cst.Tuple, cst.List):
                    holder, value, made = value, inner, inner.node
            if TUPLE_RESULT <= value.tags and len(value.parents) == len(elements) and \
                    not any(type(el) is cst.StarredElement for el in elements):
                for el, part in zip(elements, value.parents):  # ``values, indices = x.topk(k)``
                    self._bind(el.value, read_from(part.node or el.value, part, holder) if holder is not None else part)
                return
            if (
                type(made) in (cst.Tuple, cst.List)
                and len(made.elements) == len(elements) == len(value.parents)
                and not any(type(el) is cst.StarredElement for el in (*elements, *made.elements))
            ):  # ``a, b = x, y``: each name gets its own element's value
                for el, part in zip(elements, value.parents):
                    # (of a call's result, read out of it: the call stays its def-use parent)
                    self._bind(el.value, read_from(part.node or el.value, part, holder) if holder is not None else part)
                return
            stars = [i for i, el in enumerate(elements) if type(el) is cst.StarredElement]
            if (
                type(made) in (cst.Tuple, cst.List) and len(stars) == 1 and len(made.elements) == len(value.parents) >= len(elements) - 1
                and not any(type(el) is cst.StarredElement for el in made.elements)
            ):  # ``loss, *_, avg = a, b, c, d``: the names before and after the star get theirs
                at, parts = stars[0], value.parents
                after = len(elements) - at - 1
                middle = parts[at:len(parts) - after]
                for i, el in enumerate(elements):
                    if i == at:
                        self._bind(el.value, container_value(el.value, list(middle), self.flow.state))
                        continue
                    part = parts[i] if i < at else parts[len(parts) - (len(elements) - i)]
                    self._bind(el.value, read_from(part.node or el.value, part, holder) if holder is not None else part)
                return
            # One element of something unpacked: derived from the whole, but which part
            # carries what is unknown ("part": rules must not equate two parts).
            tags = value.tags | PART
            for el in elements:
                part = Value(el.value, dict(value.rec), (value,), value.inference, True, tags)
                self._bind(el.value, part)
            return
        if type(target) is cst.StarredElement:
            self._bind(target.value, value)
            return
        if type(target) in (cst.Attribute, cst.Subscript):
            self._instances_escape(value)  # (stored in an object)
        key = dotted(target)
        if key is not None:
            env = self.flow.env
            if env is not None and (key in env.maybe_eval or key in env.in_eval or key in env.frozen or key in env.in_train):
                # A new object (``model = make_model()`` each fold) is in train mode, its
                # parameters require grad; ``model = model.to(device)`` or a wrapper of it
                # is the same module.
                old = env.vals.get(key)
                if old is None or not any(v is old for v in value.ancestors()):
                    env.in_eval = env.in_eval - {key}
                    env.maybe_eval.pop(key, None)
                    env.frozen = frozenset(f for f in env.frozen if f != key and not f.startswith(key + "."))
                    env.in_train = env.in_train - {key}
            if EVAL_MODE <= value.tags and env is not None and not (key in env.in_eval or key in env.maybe_eval):
                env.in_eval = env.in_eval | {key}  # (``m = Net().eval()``: not seen as ``m.eval()``)
                env.maybe_eval[key] = value.node
                env.in_train = env.in_train - {key}
            self._bind_name(key, value)
        elif type(target) is cst.Subscript:
            self._ev(target)
            self._store_item(target, value)

    def _note_assignment(self, node: cst.Assign, target: cst.BaseExpression, value: Value) -> None:
        """Writes that rules care about: ``x[...] = v``, ``p.grad = None``, rebinding a leaf."""
        env = self.flow.env
        if env is None:
            return
        if type(target) is cst.Subscript:
            base = self._ev(target.value)
            if len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index and \
                    type(target.slice[0].slice.value) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
                # ``output['hm'] = v``: an entry of a mapping (no tensor or NDArray takes a
                # string index), whatever the flow knew of ``output``: a container.
                base = container_value(base.node, (base,), self.flow.state)
            self._mutation(node, "subscript", dotted(target.value), base, value)
            return
        key = dotted(target)
        if key is None:
            return
        if type(target) is cst.Attribute and target.attr.value == "data":
            # ``p.data = v``: a write autograd does not see (SL209)
            self._mutation(node, "data", key, self._ev(target.value), value)
            return
        if type(target) is cst.Attribute and target.attr.value == "grad_req":
            # ``p.grad_req = "add"``: MXNet then adds into the gradient buffers (SL202)
            self._mutation(node, "grad-req", key, self._ev(target.value), value)
            return
        if type(target) is cst.Attribute and target.attr.value == "requires_grad":
            # ``x.requires_grad = True``: ``x`` is a leaf that requires grad from here on,
            # as after ``x.requires_grad_()`` (setting it on a non-leaf raises).
            if literal_bool(node.value) is True:
                self._make_leaf(target)
            return
        if key.endswith(".grad") and type(node.value) is cst.Name and node.value.value == "None":
            env.grads = ("zeroed", node, _after_backward(env.grads))
            self._mutation(node, "grad-none", key, self._lookup(target), None)
            return
        old = env.vals.get(key)
        if old is None:
            return
        if "leaf" in old.tags and old in value.ancestors():
            self._mutation(node, "rebind", key, old, value)
        elif type(node.value) is cst.BinaryOperation and key in (dotted(node.value.left), dotted(node.value.right)):
            added = [p for p in value.parents if p is not old]
            self._mutation(node, "accumulate", key, old, added[0] if len(added) == 1 else None)

    def _make_leaf(self, target: cst.Attribute) -> None:
        """``x.requires_grad = True`` binds ``x`` to a leaf of PyTorch's, when ``x`` may be
        a tensor: not a model or another object (on an ``nn.Module`` the attribute is a
        plain one), nor already a leaf (a parameter stays what the flow knows of it)."""
        owner = dotted(target.value)
        env = self.flow.env
        if owner is None or env is None:
            return
        old = env.vals.get(owner)
        if old is None and "." in owner:
            return  # ``self.fc.requires_grad = True``: a module's attribute as often as a tensor
        if old is not None:
            if "leaf" in old.tags or "model" in old.tags or (PART <= old.tags and "data" not in old.tags) or CONTAINER <= old.tags:
                return  # (a part of a batch of data, ``img, y = batch``, is a tensor)
            if any(t.startswith("instance:") or (t.startswith("ctor:") and roles.is_class_name(t.rsplit(".", 1)[-1]))
                   for t in old.tags):
                return
        self._bind_name(owner, leaf_value(target, F.TORCH))

    def _mutation(self, node, kind: str, key: Optional[str], before: Value, value: Optional[Value],
                  inner: Optional[cst.CSTNode] = None) -> None:
        """``inner``: the callee's statement that makes the mutation at the call ``node``
        (the fact's node; one per call and statement)."""
        self._seq += 1
        fid = id(node) if inner is None else (id(node), id(inner))
        previous = self._mutations.get(fid)
        if previous is not None and previous.kind == "rebind" and kind != "rebind":
            return  # the first iteration rebinds the leaf; later ones see what it became
        self._mutations[fid] = MutationFact(
            inner if inner is not None else node, kind, key, before, value, self.flow.state, self.func, tuple(self._loop_nodes), self._seq
        )

    def _bind_name(self, key: str, value: Value) -> None:
        vals = self.flow.env.vals
        vals[key] = value
        if "." in key:
            parts = key.split(".")
            self._dotted_prefixes.update(".".join(parts[:i]) for i in range(1, len(parts)))
        if key not in self._dotted_prefixes:
            return  # (no value of ``key.attr`` was ever bound)
        prefix = key + "."
        for k in [k for k in vals if k.startswith(prefix)]:
            del vals[k]

    def _lookup(self, node: cst.BaseExpression, base: Optional[Value] = None) -> Value:
        """``node``'s value (``base``: the value of the object of ``o.x``, if known)."""
        key = dotted(node)
        if key is not None and self.flow.env is not None and key in self.flow.env.vals:
            return self.flow.env.vals[key]
        if type(node) is cst.Name and self.func is not None and key in self.graph.module_constants \
                and self.scope.binder(key) is self.names.root:
            return opaque_value(node, CONST)  # a module's ``alpha = 0.5``, read in a function
        if type(node) is cst.Name and self.names.hole(key, self.scope):
            # A fragment's name defined off-screen (``img`` of a pasted saliency map): one
            # value wherever it is read, as a defined name would be.
            value = self._hole_values.get(key)
            if value is None:
                value = self._hole_values[key] = opaque_value(node, frozenset())
            return value
        return opaque_value(node, self._attribute_tags(node, base))

    def _handed_self(self, node: cst.Name) -> Value:
        """``self`` handed to a call, in a method of a class of this module (or in a
        function nested in one): an instance of that class (or of a subclass), so that
        the callee reads ``outer.net`` of ``helper.run(self, x)`` as the class's
        ``self.net``. (Only where handed on: the method's own ``self.x`` reads as before.)"""
        value = self._lookup(node)
        tags = self.graph.self_tags(self.func)
        return dataclasses.replace(value, tags=value.tags | tags) if tags and dotted(node) not in (self.flow.env.vals if self.flow.env else ()) else value

    def _attribute_tags(self, node: cst.BaseExpression, base: Optional[Value] = None) -> frozenset:
        """For ``self.x`` in a method: what every ``self.x = C(...)`` of its class makes
        (``ctor:torch.nn.CrossEntropyLoss``; ``model`` for a model class of this file);
        for ``o.x`` where ``base``, the value of ``o``, is an instance of one class of this
        module: the same of that class."""
        if type(node) is not cst.Attribute:
            return frozenset()
        cls = None
        if type(node.value) is cst.Name and node.value.value == "self" and self.func is not None:
            cls = outermost(self.func).cls
        elif base is not None:
            classes = {t[9:] for t in base.tags if t.startswith("instance:")}
            if len(classes) == 1:
                cls = self.graph.classes.get(classes.pop(), (None,))[0]
        return self.graph.attribute_tags(cls, node.attr.value) if cls is not None else frozenset()

    # --- expressions ------------------------------------------------------------------
    def _ev(self, e: cst.BaseExpression, statement: bool = False) -> Value:
        # Dispatch on the exact type: LibCST's node classes are ABCs, whose isinstance
        # checks are slow, and none of these has subclasses.
        state = self.flow.state
        if state is None:
            return opaque_value(e)
        t = type(e)
        if t in _CONSTANTS or (t is cst.Name and e.value in ("True", "False", "None")):
            return opaque_value(e, CONST)
        if t is cst.Name:
            if e.value in F.SCOPE_LAST_NAMES and self.names.qualify(e, self.scope) in F.SCOPES:
                return opaque_value(e, SCOPE)  # ``no_grad`` itself, not called: a scope to be
            return self._lookup(e)
        if t is cst.Attribute:
            key = dotted(e)
            if key is not None and key in self.flow.env.vals:
                return self.flow.env.vals[key]
            if e.attr.value in F.SCOPE_LAST_NAMES and self.names.qualify(e, self.scope) in F.SCOPES:
                return opaque_value(e, SCOPE)  # ``ctx = nullcontext if grad else torch.no_grad``
            if key is not None and type(e.value) in (cst.Name, cst.Attribute):
                qualified = self.names.qualify(e, self.scope)  # (an imported module's attribute, however spelled)
                if api.is_constant(qualified) or (qualified or "").startswith(("numpy.", "math.")):
                    return opaque_value(e, CONST)  # ``torch.float32``, ``torch.pi``, ``np.float32``, ``math.pi``
            base = self._ev(e.value)
            if e.attr.value == "data":  # leaves the graph, still derived from ``base``
                return Value(e, {fw: UNKNOWN for fw in F.FRAMEWORKS}, (base,), False, False, frozenset({"left-graph", "attr:data"}), state)
            if e.attr.value in ("grad", "shape", "dtype", "device", "requires_grad", "context", "ctx") or (
                    api.attribute(e.attr.value, self.names.frameworks or F.FRAMEWORKS) == api.PYTHON and "model" not in base.tags):
                return opaque_value(e, frozenset({"attr:" + e.attr.value}))  # (``x.ndim``, ``x.is_cuda``: Python values)
            if any(t.startswith("instance:") for t in base.tags):
                field = entry(base, "." + e.attr.value)
                if field is not None:
                    return read_from(e, field, base)  # ``out.loss`` of ``out = Output(loss=l, ...)``
            tags = self._attribute_tags(e, base)
            if "leaf" in tags:
                return leaf_value(e, None, tags)
            if _layer_parameter(base, e.attr.value):
                return leaf_value(e, F.TORCH, tags | {"param"})  # ``model.emb.weight``: a parameter of an ``nn`` layer
            if "model" in base.tags or any(t.startswith("instance:") for t in base.tags):
                return opaque_value(e, tags)  # a field of a module or object (``model.rewards``): not its output
            made = computed_value(e, state, [base], True, tags)
            if base.inference and api.attribute(e.attr.value, self.names.frameworks or F.FRAMEWORKS) == api.VIEW:
                made.inference = True  # ``w.T`` of an inference tensor is one too
            return made
        if t is cst.Call:
            return self._call(e, statement)
        if t is cst.BinaryOperation:
            left, right = self._ev(e.left), self._ev(e.right)
            if "const" in left.tags and "const" in right.tags and not (CONTAINER <= left.tags or CONTAINER <= right.tags):
                return opaque_value(e, CONST)  # ``T ** 2``, ``1 - 0.5``: a Python number
            if type(e.operator) in (cst.Multiply, cst.Add) and (CONTAINER <= left.tags or CONTAINER <= right.tags) and (
                    type(e.left) in (cst.List, cst.Tuple) or type(e.right) in (cst.List, cst.Tuple)
                    or (type(e.operator) is cst.Add and CONTAINER <= left.tags and CONTAINER <= right.tags)):
                # ``[None] * n``, ``a + [b]``, ``losses_a + losses_b``: a list of the items
                # of its list operands
                return container_value(e, [v for v in (left, right) if CONTAINER <= v.tags], state)
            return _untracked_arithmetic(computed_value(e, state, [left, right], True), (left, right))
        if t is cst.UnaryOperation:
            operand = self._ev(e.expression)
            if "const" in operand.tags:
                return opaque_value(e, CONST)
            return _untracked_arithmetic(computed_value(e, state, [operand], True), (operand,))
        if t is cst.Subscript:
            base = self._ev(e.value)
            for el in e.slice:
                self._ev_children(el)
            stored = self._stored_item(e, base)
            entry_key = _entry_key(e)
            if entry_key is not None and self.flow.env is not None and entry_key in self.flow.env.vals:
                stored = self.flow.env.vals[entry_key]  # (what ``x.d["k"] = v`` wrote here)
            elif stored is None and self.flow.env is not None:
                stored = _variable_entry(e, self.flow.env.vals)  # (what ``hidden[i] = h`` wrote, ``i`` unchanged)
            if stored is not None:
                return read_from(e, stored, base)  # ``out["loss"]`` of ``out = {"loss": l}``, ``pair[0]`` of ``pair = (a, b)``
            if CONTAINER <= base.tags and "const" in base.tags:
                return opaque_value(e, CONST)  # an item of a list of numbers
            if self._maybe_tuple_item(e, base):
                # ``ot[0]`` of what an unknown callee returned (a loss helper handed in,
                # gluon-face's ``LGMLoss``): maybe a tuple's item, made where the call was
                return Value(e, dict(base.rec), (base,), base.inference, True, frozenset(), base.state)
            item = computed_value(e, state, [base], True)
            item.inference = item.inference or base.inference  # an item or view of inference tensors
            return item
        if t is cst.Tuple or t is cst.List:
            parts = [self._ev(el.value) for el in e.elements]
            if any(type(el) is cst.StarredElement for el in e.elements):
                return Value(e, _joined_rec(parts), tuple(parts), False, True)  # items unknown
            return container_value(e, parts, state)
        if t is cst.Dict:
            parts = []
            for el in e.elements:
                if type(el) is cst.DictElement:
                    key = _constant_key(el.key)
                    self._ev(el.key)
                    item = self._ev(el.value)
                    parts.append(keyed(key, item) if key is not None else item)
                else:  # ``**other``
                    parts.append(self._ev(el.value))
            return container_value(e, parts, state)
        if t is cst.IfExp:
            self._ev(e.test)
            start = self._mark()
            body = self._ev(e.body)
            after_body = self._mark()
            self._restore(start)
            orelse = self._ev(e.orelse)
            self._join_marks(after_body)
            return _join_values(body, orelse)
        if t is cst.BooleanOperation:
            left = self._ev(e.left)
            start = self._mark()  # (the right side may not run: ``ok and start_inference()``)
            right = self._ev(e.right)
            self._join_marks(start)
            return _join_values(left, right)
        if t is cst.Comparison:
            operands = [self._ev(e.left)] + [self._ev(c.comparator) for c in e.comparisons]
            # (a comparison makes booleans: no graph, whatever it compares; what it read
            # stays its def-use parents)
            return Value(e, {F.TORCH: state.torch, F.MXNET: state.mxnet}, tuple(operands), False, True, DATA, state)
        if t is cst.NamedExpr:
            value = self._ev(e.value)
            self._bind(e.target, value)
            return value
        if t is cst.Lambda:
            return opaque_value(e)
        if t in _COMPREHENSIONS:
            return container_value(e, self._comprehension(e), state)
        self._ev_children(e)
        return opaque_value(e)

    def _maybe_tuple_item(self, e: cst.Subscript, base: Value) -> bool:
        """``base[<int>]`` where ``base`` is what a callee nobody here knows returned (a
        parameter, a function of another package, a model of a class of another package):
        it may be a tuple (a loss that returns ``(loss, extra)``), whose item was made
        where the call ran, not where it is read. Not a framework op or layer's result,
        nor a function of this file or the program (their returns are known). A value of
        no node of its own (items of containers joined: ``for ot in outs``) may be either."""
        if len(e.slice) != 1 or type(e.slice[0].slice) is not cst.Index:
            return False
        index = e.slice[0].slice.value
        if type(index) is cst.UnaryOperation and type(index.operator) is cst.Minus:
            index = index.expression
        if type(index) is not cst.Integer:
            return False
        if base.node is None:  # (items of containers joined, ``for ot in outs``: what each was is not known)
            return bool(base.parents)
        return type(base.node) is cst.Call and self._maybe_tuple_call(base.node)

    def _maybe_tuple_call(self, call: cst.Call) -> bool:
        """``call``'s callee is one whose result may be a tuple: see ``_maybe_tuple_item``."""
        fact = self._calls.get(id(call))
        if fact is None or fact.target is not None or fact.external is not None:
            return False
        if fact.qname is not None and (F.framework_of(fact.qname) is not None or self.context.is_model_class(fact.qname)):
            return False
        value = fact.callee_value
        if value is not None:
            classes = [t[9:] for t in value.tags if t.startswith("instance:")]
            if classes:  # a model of this file: a tuple where its forward returns one
                return len(classes) == 1 and self._returns_tuple(classes[0])
        return value is None or not any(
            t == "model" or (t.startswith("ctor:") and F.framework_of(t[5:]) is not None) for t in value.tags)

    def _returns_tuple(self, cls: str) -> bool:
        """Every ``return`` of the ``forward`` (``hybrid_forward``) of this file's class
        ``cls`` returns a tuple written out (``return loss, logits``)."""
        for name in ("forward", "hybrid_forward"):
            found = self.graph.method_of(cls, name)
            if found is not None:
                returns = [n for n in walk(found.node.body, is_nested_scope) if type(n) is cst.Return]
                return bool(returns) and all(type(r.value) is cst.Tuple for r in returns)
        return False

    def _store_item(self, target: cst.Subscript, value: Value) -> None:
        """``d[k] = v``, ``losses[i] = loss`` on a container: it holds ``v`` too (under
        ``k`` where ``k`` is a constant), as ``append`` makes a list hold what it is given."""
        key = dotted(target.value)
        env = self.flow.env
        index = target.slice[0].slice.value if len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index else None
        name = _constant_key(index) if index is not None else None
        if key is not None and name is not None and env is not None:
            # ``g.edata["feat"] = h`` on any object: that entry holds ``h`` from here on
            # (until ``g.edata`` is rebound), whatever else is known of the object
            self._bind_name(f"{key}.[{name}]", value)
        if key is not None and env is not None:
            # ``hidden[i] = h``: ``hidden[i]`` holds ``h`` while ``i`` and ``hidden`` keep their
            # values and nothing else is stored into ``hidden`` (another key may be ``i``)
            prefix = f"{key}.[="
            for k in [k for k in env.vals if k.startswith(prefix)]:
                del env.vals[k]
        old = env.vals.get(key) if key is not None and env is not None else None
        if old is not None and CONTAINER <= old.tags:
            part = keyed(name, value) if name is not None else value
            self._bind_name(key, container_value(old.node, (old, part), self.flow.state))
        elif old is not None and DATA <= old.tags and not CONST <= value.tags \
                and any(t.startswith("ctor:") and F.is_data_factory(t[5:]) for t in old.tags):
            # ``outputs = torch.zeros(n, ...)`` then ``outputs[t] = decoder(x)``: the tensor
            # written into is the written value's function from here on (an index put,
            # differentiable in what is written), no longer fresh data.
            self._bind_name(key, computed_value(target, self.flow.state, (old, value), True, old.tags - DATA))
        var = index.value if type(index) is cst.Name else None
        if key is not None and env is not None and var is not None and var in env.vals:
            self._bind_name(f"{key}.[={var}]", value)
            self._bind_name(f"{key}.[={var}]@", env.vals[var])

    def _stored_item(self, e: cst.Subscript, base: Value) -> Optional[Value]:
        """``base[k]`` where ``base`` is known to hold a value under the constant ``k``:
        a dict's entry (``keyed``), an item of a tuple or list written out."""
        if len(e.slice) != 1 or type(e.slice[0].slice) is not cst.Index:
            return None
        index = e.slice[0].slice.value
        if not CONTAINER <= base.tags and not any(t.startswith("instance:") for t in base.tags):
            return None
        key = _constant_key(index)
        found = entry(base, key) if key is not None else None
        if found is not None:
            return found
        if LAST_APPENDED <= base.tags and type(index) is cst.UnaryOperation and type(index.operator) is cst.Minus \
                and type(index.expression) is cst.Integer and index.expression.value == "1" and base.parents:
            return base.parents[-1]  # ``losses.append(loss)`` then ``losses[-1]``: ``loss``
        if type(index) is cst.Integer and TUPLE_RESULT <= base.tags and int(index.value, 0) < len(base.parents):
            return base.parents[int(index.value, 0)]  # ``x.topk(k)[1]``
        if type(index) is cst.Integer and type(base.node) not in (cst.Tuple, cst.List) and len(base.parents) == 1 \
                and type(base.parents[0].node) is cst.Tuple and CONTAINER <= base.parents[0].tags:
            base = base.parents[0]  # ``ot = net(x)`` of a forward that returns ``a, b``: the tuple it made
        if type(index) is cst.Integer and type(base.node) in (cst.Tuple, cst.List) and CONTAINER <= base.tags:
            elements = base.node.elements
            n = int(index.value, 0)
            if n < len(elements) == len(base.parents) and not any(type(el) is cst.StarredElement for el in elements):
                return base.parents[n]
        return None

    # What a call in an expression that may not run leaves (``Returns.exit``, gradient
    # buffers): joined with the other way.
    def _mark(self) -> tuple:
        env = self.flow.env
        return (self.flow.state, env.grads if env is not None else None)

    def _restore(self, mark: tuple) -> None:
        self.flow.state = mark[0]
        if self.flow.env is not None:
            self.flow.env.grads = mark[1]

    def _join_marks(self, other: tuple) -> None:
        state, grads = other
        if self.flow.state is not None and state is not None and self.flow.state != state:
            self.flow.state = self.flow.state.join(state)
        env = self.flow.env
        if env is not None and env.grads != grads:
            env.grads = None

    def _comprehension(self, e) -> List[Value]:
        """The items of a comprehension: the value of its element expression(s). Its loop
        variables hold items of their iterables, as a ``for`` loop's do (``[r - b for r
        in rewards]``: each ``r`` is derived from ``rewards``, not a name nobody knows);
        bound only inside it."""
        vals = self.flow.env.vals
        saved: Dict[str, Value] = {}
        bound: Set[str] = set()
        parents: List[Value] = []
        for_in = e.for_in
        while for_in is not None:
            iterable = self._ev(for_in.iter)
            for n in walk(for_in.target):
                if type(n) is cst.Name:
                    key = n.value
                    bound.add(key)
                    for k in [k for k in vals if k == key or k.startswith(key + ".")]:
                        saved.setdefault(k, vals[k])
            self._bind(for_in.target, self._loop_item(for_in, iterable))
            for cond in for_in.ifs:
                self._ev(cond.test)
            for_in = for_in.inner_for_in
        parts = (e.key, e.value) if type(e) is cst.DictComp else (e.elt,)
        parents.extend(self._ev(x) for x in parts)
        for k in [k for k in vals if k.split(".", 1)[0] in bound]:
            del vals[k]
        vals.update(saved)
        return parents

    def _ev_children(self, node: cst.CSTNode) -> List[Value]:
        out = []
        for child in iter_children(node):
            t = type(child)
            if t is cst.Lambda:
                continue
            if is_subclass(t, cst.BaseExpression):
                out.append(self._ev(child))
            else:
                out.extend(self._ev_children(child))
        return out

    def _call(self, call: cst.Call, statement: bool) -> Value:
        func = call.func
        qname = self.names.qualify(func, self.scope)
        method = func.attr.value if type(func) is cst.Attribute else None
        receiver = None
        made_here = None  # the callee, when the call makes it: ``nn.MSELoss()(out, y)``
        if qname is None:
            if type(func) is cst.Attribute:
                receiver = self._ev(func.value)
            elif type(func) is not cst.Name:
                made_here = self._ev(func)
        args = tuple([self._handed_self(a.value) if type(a.value) is cst.Name and a.value.value == "self" else self._ev(a.value)
                      for a in call.args])
        state = self.flow.state
        env = self.flow.env
        if len(args) > 1 and F.is_loss_name((qname or dotted(func) or "").rsplit(".", 1)[-1]):
            args = self._targets_of_fragment(call, args, state)
        callee_value = self._lookup(func, receiver) if qname is None and dotted(func) is not None else None
        if made_here is not None and type(func) is cst.Call and roles.made_loss(made_here):
            callee_value = made_here
        target = self.graph.local_target(func, self.func, self.scope) or self._instance_method(func, receiver)
        params = target.param_names if target is not None else ()
        through_runner = False
        if target is None and callee_value is not None:
            # ``net(x)`` on an instance of a class of this file: its ``forward``.
            target = self._called_instance(callee_value)
            params = target.param_names[1:] if target is not None else ()
            # ``fn(...)`` where ``fn`` holds a function of this file handed to a runner.
            handed = self.graph.by_node.get(id(callee_value.node)) if target is None else None
            if handed is not None and handed.cls is None:
                target, params, through_runner = handed, handed.param_names, True
        if target is None:
            self._note_escapes(func, qname, method, receiver, args)
        external = self.context.function(qname) if target is None and not F.framework_of(qname) else None
        if external is None and target is None and qname is None and type(func) is cst.Attribute and self.context.functions:
            external = self._program_method(receiver, func.attr.value)  # ``model.val_start()``, ``model = VSE(opt)``
        loops = tuple(self._loop_nodes)
        self._seq += 1
        in_eval = env.in_eval
        if in_eval and (target is None or target.name in CALL_METHODS) and self._submodule_in_eval(func, receiver, env):
            in_eval = in_eval | {dotted(func)}
        fact = CallFact(
            call, qname, dotted(func), method, state, self.func, receiver, args, statement,
            in_eval, dict(env.maybe_eval), loops, env.grads, target, callee_value, self._seq,
        )
        fact.external = external
        fact.frozen = env.frozen
        fact.in_train = env.in_train
        self._calls[id(call)] = fact
        if target is not None:
            if target is self.func:
                self._self_calls.add(id(call))
            self._site_caller[id(call)] = self.func
            self._reads[id(target)] = target
            self._sites[id(target)][id(call)] = state
            bound = _bound_arguments(call, params, args)
            if bound is None and through_runner:
                bound = self._forwarded(call, args, target)
            extra = {**self._free_values(target, through_runner), **self._note_handed(call, target, args)}
            if extra:
                bound = {**(bound if bound is not None else {UNBOUND: None}), **extra}
            self._site_args[id(target)][id(call)] = bound
            flagged_train, flagged_eval = _modes_set_by_flags(call, target)
            self._leave_in_eval(call, params, target.cls is not None,
                                tuple(n for n in target.leaves_eval if n not in flagged_train) + flagged_eval,
                                tuple(target.sets_train) + flagged_train, tuple(target.sets_eval) + flagged_eval)
            if target.returns.exit and target is not self.func and self.flow.state is not None:
                self.flow.state = dataclasses.replace(self.flow.state, **dict(target.returns.exit))  # its grad mode on exit
                if self.func is not None:
                    self._applied_exits.update(id(sw.origin.node) for _, sw in target.returns.exit)
            if not through_runner:
                self._freezes_at(call, target)
                for spelled, inner in self._detached_at(call, target, params, args):  # ``_detach(h)``: ``h.detach_()`` in it
                    old = env.vals.get(spelled) if env is not None else None
                    if old is not None:
                        self._bind_name(spelled, _detached(inner, old, self.flow.state))
            if target is not self.func and env is not None and F.MXNET in self.names.frameworks:
                self._attached_at(call, target, params, args, through_runner)
            if target is not self.func and not through_runner and env is not None:
                self._effects_at(call, target, target.grad_effects, self._spelling(call, target, params), env.grads)
                self._callback_effects_at(call, target, args)
            if target is not self.func and env is not None and target.returns.grown and id(target) in self._walks:
                self._grown_at(call, target, params, bound, through_runner, state)
        elif external is not None:
            self._leave_in_eval(call, external.params, external.method, external.leaves_eval, external.sets_train)
            self._external_effects_at(call, external)
            bound = _bound_arguments(call, external.params, args) if external.defers else None
            for recv, name in external.defers:  # its methods called on an argument whose class is known here
                spelled = spelled_at_call(call, external.params, external.method, recv)
                done = self._program_method(bound.get(recv), name) if spelled is not None and bound else None
                if done is not None:
                    self._mode_effects(call, [spelled + n[4:] for n in done.leaves_eval if n.startswith("self.")],
                                       [spelled + n[4:] for n in done.sets_train if n.startswith("self.")])
        elif type(func) is cst.Attribute:
            # ``x.m()`` on something unknown may call any method ``m`` of this file's classes.
            site = UNKNOWN_SITE_TORCH_OFF if state.torch.off else UNKNOWN_SITE
            candidates = self.graph.methods_by_name.get(func.attr.value, ())
            if len(candidates) > SUPER_FANOUT and _is_super(func.value):
                # ``super().m()``: only the next ``m`` up a chain of this file's classes
                # can run, not every ``m`` of the file (a chain of n classes each calling
                # ``super().forward`` gave n**2 sites; issue 44). Still an unknown site.
                narrowed = self.graph.super_target(self.func, func.attr.value)
                if narrowed is not None:
                    candidates = narrowed
            for candidate in candidates:
                self._sites[id(candidate)][id(call)] = site
                self._site_args[id(candidate)][id(call)] = None
        if target is None and external is None and qname is None and callee_value is not None and env is not None and self.context.functions:
            # ``model(x)`` on an instance of another module's class: what its ``forward``
            # does to optimizers and gradient buffers (``self.zero_grad()`` in it), as a
            # local class's forward does at its call.
            forward = self._program_method(callee_value, "forward")
            if forward is not None and (forward.grad_calls or forward.grad_exit != "entry"):
                self._effects_at(call, forward, forward.grad_effects(),
                                 lambda name: spelled_at_call(call, forward.params, INSTANCE_CALL, name), env.grads)
        for override in self.graph.overrides(func, self.func):
            self._sites[id(override)][id(call)] = state

        # backward entry points
        if qname is None and method == "backward" and receiver is not None and F.MXNET in self.names.frameworks and \
                roles.is_symbolic_module(func.value, receiver, self.func.node if self.func is not None else self.module):
            pass  # ``mod.backward()`` of MXNet's symbolic Module: its executor's, no autograd
        elif qname is None and method == "backward" and receiver is not None:
            values = (receiver,)
            if call.args and roles.is_accelerator(fact):
                values = (args[0],)
            self._seq += 1
            fact_b = self._backwards[id(call)] = BackwardFact(
                call, "backward", values, state, self.func, frozenset(self.names.frameworks), loops, self._seq
            )
            fact_b.inputs = self._gradient_inputs(call, args, None)
            env.grads = ("computed",)
        elif qname in F.BACKWARD_FUNCS:
            self._record_backward_function(call, qname, args, state)
            create_graph = call_arg(call, None, "create_graph")
            if create_graph is None or literal_bool(create_graph.value) is not True:
                # Gradients, not a graph (unless create_graph=True).
                return Value(call, {fw: UNKNOWN for fw in F.FRAMEWORKS}, args, False, False, frozenset({"left-graph", "gradient"}), state)

        # effects on names and buffers
        recv_key = dotted(func.value) if type(func) is cst.Attribute else None
        if method == "requires_grad_" and recv_key is not None and qname is None:
            arg = call_arg(call, 0, "requires_grad")
            self._freeze(recv_key, literal_bool(arg.value) if arg is not None else True)
        switch = mode_switch(call)
        if switch is not None:
            recv_key = switch[0]  # (``model.to(device).train()``: ``model``)
        if qname is None and method is not None:
            if method == "zero_grad" or (method == "zero_" and (recv_key or "").endswith(".grad")):
                env.grads = ("zeroed", call, _after_backward(env.grads))
            elif recv_key is not None and method in F.MAKE_LEAF_METHODS and not requires_grad_off(call):
                fw = F.TORCH if method == "requires_grad_" else F.MXNET
                if method == "attach_grad":
                    self._mutation(call, "attach", recv_key, receiver, None)
                self._bind_name(recv_key, leaf_value(call, fw))
            elif recv_key is not None and switch is not None:
                flag = switch[1]
                if flag is False:
                    env.in_eval = env.in_eval | {recv_key}
                    env.maybe_eval[recv_key] = call
                    env.in_train = env.in_train - {recv_key}
                else:
                    env.in_eval = env.in_eval - {recv_key}
                    env.maybe_eval.pop(recv_key, None)
                    if flag is True:
                        env.in_train = env.in_train | {recv_key}
            elif method in ("append", "extend", "insert") and recv_key is not None and receiver is not None:
                # The container now holds what was put in: keep the def-use link.
                if CONTAINER <= receiver.tags and method == "append":
                    grown = container_value(receiver.node, (receiver,) + args[:1], state)
                    # (its ``[-1]`` is what was appended last: ``losses[-1].backward()``)
                    self._bind_name(recv_key, dataclasses.replace(grown, tags=grown.tags | LAST_APPENDED) if args else grown)
                else:
                    self._bind_name(recv_key, Value(receiver.node, dict(receiver.rec), (receiver,) + args, False, True, receiver.tags - CONTAINER))
            elif method == "detach_" and recv_key is not None and receiver is not None and not call.args:
                # ``h.detach_()``: ``h`` itself leaves the graph (what it was computed from
                # stays in the graph, as with ``h = h.detach()``)
                self._bind_name(recv_key, _detached(call, receiver, self.flow.state))
            elif method.endswith("_") and not method.startswith("_") and receiver is not None and method not in F.MAKE_LEAF_METHODS:
                self._mutation(call, "inplace", recv_key, receiver, args[0] if args else None)
        if method == "enter_context" and receiver is not None and len(call.args) == 1 and type(call.args[0].value) is cst.Call:
            entered = call.args[0].value  # ``stack.enter_context(torch.no_grad())`` in ``with ExitStack() as stack:``
            api = self.names.qualify(entered.func, self.scope)
            unit = self.func.node if self.func is not None else self.module
            if api in F.SCOPES and (roles.entered_exit_stack(receiver, call, unit) or (
                    # a stack the function is handed (``_enter(stack)``): what it enters lasts
                    # past its return (``Returns.exit``), until the caller's ``with`` ends
                    self.func is not None and roles.handed_exit_stack(receiver, unit))):
                self.flow.state = _apply_scope(self.flow.state, api, entered, Origin("with", call, api))
        out = call_arg(call, None, "out")
        if out is not None:
            self._mutation(call, "out", dotted(out.value), self._lookup(out.value), None)

        # the value it produces
        if method in SHAPE_METHODS and receiver is not None and qname is None:
            return opaque_value(call, frozenset({"attr:" + method}))  # ``out.size(0)``: a number, as ``out.shape``
        tags = frozenset({"ctor:" + qname}) if qname is not None else frozenset()
        if qname in F.SCOPES:
            tags = tags | {"scope"}
        if self.context.is_model_class(qname):
            tags = tags | {"model"}  # a model class of another module of the program
        if type(func) is cst.Name and self.scope.resolve_name(func.value) is None:
            if func.value in self.graph.model_classes:
                tags = frozenset({"model"})
            if func.value in self.graph.classes:
                tags = tags | {"instance:" + func.value}
        if self._constructs_frozen(call, func, qname):
            tags = tags | FROZEN_PARAMS
        rg = call_arg(call, None, "requires_grad")
        if qname is not None and rg is not None and literal_bool(rg.value) is True:
            leaf = leaf_value(call, F.framework_of(qname), tags)
            if F.is_conversion(qname):  # a fresh leaf made of values taken out of a graph
                leaf.parents, leaf.tags = args, leaf.tags | {"left-graph"}
            return leaf
        if qname in F.PARAMETER_CLASSES and not (rg is not None and literal_bool(rg.value) is False):
            return leaf_value(call, F.framework_of(qname), tags)
        if method in F.MAKE_LEAF_METHODS and receiver is not None and not requires_grad_off(call):
            return leaf_value(call, F.TORCH if method == "requires_grad_" else F.MXNET)
        if len(args) == 1 and not call.args[0].star and CONTAINER <= args[0].tags and self.names.builtin(func, self.scope) in _REPACKING:
            return container_value(call, container_items(args[0]), state)  # ``tuple(v.detach() for v in h)``
        if (method in LEAVING_METHODS and receiver is not None) or F.is_conversion(qname, self.names.builtin(func, self.scope)):
            parents = (receiver,) if receiver is not None else args
            return Value(call, {fw: UNKNOWN for fw in F.FRAMEWORKS}, parents, False, False, frozenset({"left-graph"}), state)
        if callee_value is not None and roles.made_loss(callee_value):
            return computed_value(call, state, args, True)  # ``criterion(out, y)``: a function of its arguments
        if target is None and external is None and qname is None and type(func) is cst.Name and roles.is_loss_call(fact) \
                and not roles.is_model_call(fact) and callee_value is not None and not callee_value.parents:
            # ``criterion(out, y)`` where ``criterion`` is a name nothing here binds (a
            # parameter, a fragment's): a loss by its name, a function of its arguments
            return computed_value(call, state, args, True)
        if target is not None and self._link_returns and (id(target) not in self._walks or id(target) in self._blind):
            self._walk.pending = True  # (walked again once ``target`` has a summary)
            return Value(call, {fw: UNKNOWN for fw in F.FRAMEWORKS}, (), False, False, PENDING, state)
        if target is not None:  # a local function or method: its summary
            inference = target.decorator is not None and target.decorator[0] == "torch.inference_mode"
            made = self._returned_by(call, params, target.returns, inference, args, state, tags, bound)
            if made is not None:
                return made
        if external is not None:  # a function of another module of the program: its summary
            made = self._returned_by(call, external.params, external.returns(), False, args, state, tags)
            if made is not None:
                return made
        if receiver is not None:
            pure = method not in MODEL_METHODS and not roles.is_model_call(fact)
            if method in RETURNS_SELF:  # ``net = net.to(device)``: the same module
                tags = tags | {t for t in receiver.tags if t.startswith("instance:") or t in ("model", "eval-mode")}
                if switch is not None and switch[1] is False:
                    tags = tags | EVAL_MODE  # ``encoder = EncoderCNN(...).eval()``: the name holds a model in eval mode
                elif switch is not None:
                    tags = tags - EVAL_MODE
            if pure and qname is None:
                made = self._method_value(call, method, receiver, args, state, tags)
                if made is not None:
                    return made
            return computed_value(call, state, (receiver,) + args, pure, tags if pure else tags | FORWARD)
        if qname is not None and F.framework_of(qname):
            return self._framework_value(call, qname, args, state, tags)
        builtin = self.names.builtin(func, self.scope) if qname is None else None
        if (builtin in ("dict", "list", "set", "tuple") or qname in _CONTAINER_CLASSES) and not call.args:
            return container_value(call, (), state)  # ``defaultdict(list)``, ``dict()``: an empty container
        if qname in _CONTAINER_CLASSES:
            return container_value(call, (), state)  # ``defaultdict(list)``, ``deque(maxlen=n)``
        if builtin == "dict":
            parts = [keyed(a.keyword.value, v) if a.keyword is not None else v for a, v in zip(call.args, args)]
            return container_value(call, parts, state)  # ``dict(loss=l)``
        if builtin in _PYTHON_VALUE_BUILTINS:
            return opaque_value(call, CONST)  # ``len(losses)``, ``range(n)``: Python values, no graph
        if builtin in _ARITHMETIC_BUILTINS or builtin in _REGROUPING_BUILTINS:
            return computed_value(call, state, args, True, tags)  # ``sum(losses)``: arithmetic on the items
        if qname is not None and not F.is_model_constructor(qname) and not roles.made_loss(Value(call, {}, (), tags=tags)):
            return _unknown_result(call, state, args, tags)  # a library we do not model (``env.step``, ``np.random.choice``)
        if roles.is_model_call(fact):
            tags = tags | FORWARD
        made = computed_value(call, state, args, False, tags)
        fields = self.graph.fields(func.value) if type(func) is cst.Name and any(t.startswith("instance:") for t in tags) else None
        if fields:
            bound = _bound_arguments(call, [p for p, _ in fields], args)
            if bound:  # ``Output(loss=l, logits=z)``: its fields hold what it is handed
                made.parents = tuple(keyed("." + f, bound[p]) for p, f in fields if f is not None and p in bound)
        return made

    def _targets_of_fragment(self, call: cst.Call, args: Tuple[Value, ...], state: State) -> Tuple[Value, ...]:
        """``criterion(out, y)`` where ``y`` is a hole (``Names.hole``: defined off-screen,
        in a fragment): a loss's target is data, as in every training loop that defines
        it (``for x, y in loader``). Only the targets: the first argument, the prediction,
        stays what it is (unknown, for a hole)."""
        out = list(args)
        for i, name in roles.target_arguments(call):
            if self.names.hole(name.value, self.scope) and (self.flow.env is None or name.value not in self.flow.env.vals):
                out[i] = no_graph_value(name, state)
        return tuple(out)

    def _framework_value(self, call: cst.Call, qname: str, args, state: State, tags: frozenset) -> Value:
        """What a framework function returns, as the API model says (``core.api``): a
        constant, fresh data, a tensor that carries no graph (``argmax``, a sample), or
        one computed from its differentiable arguments only (not from ``gather``'s index,
        nor from ``dtype=``/``device=`` options)."""
        if qname == "torch.autograd.Variable":
            volatile = call_arg(call, None, "volatile")
            made = computed_value(call, state, self._option_free(call, args)[:1], True, tags)
            if volatile is not None and literal_bool(volatile.value) is True:
                # ``Variable(x, volatile=True)``: a no-op since PyTorch 0.4 (recording stays
                # on), written to predict without a graph (RULES.md, SL103)
                made.tags = made.tags | VOLATILE
            return made
        if api.is_constant(qname):
            return opaque_value(call, CONST)  # ``torch.device("cuda")``, ``mx.cpu()``
        if api.distribution(qname) is not None:
            return computed_value(call, state, self._option_free(call, args), True, tags | DISTRIBUTION)
        op = api.function(qname)
        if op is not None and op.flags:
            op = op.at_call(_true_keywords(call))
        if op is None or not op.known:
            if F.is_data_factory(qname):  # ``torch.randn(...)``, ``nd.zeros(...)``: data, no graph
                tags = tags | DATA
            return computed_value(call, state, self._option_free(call, args), True, tags)
        kind = op.kind
        if kind == api.PYTHON:
            return opaque_value(call, CONST)
        if kind in (api.FACTORY, api.NO_GRAPH):
            return no_graph_value(call, state, tags)
        if isinstance(op.result, tuple):
            return self._tuple_result(call, op, self._differentiable(call, op, None, args), state, tags)
        made = computed_value(call, state, self._differentiable(call, op, None, args), True, tags)
        if op.view and args and args[0].inference:
            made.inference = True  # ``torch.t(w)`` of an inference tensor is one too
        return made

    def _method_value(self, call: cst.Call, method: str, receiver: Value, args, state: State, tags: frozenset) -> Optional[Value]:
        """What ``receiver.method(...)`` returns where the receiver is no model: a
        distribution's sample (no graph) or log-probability (its parameters' graph), a
        ``Tensor``/``NDArray`` method as the API model says, a Python container's item as
        before (None: the caller computes it so), and otherwise what code we do not model
        returns: nothing known (``env.step(a)``, ``tokenizer.encode(s)``)."""
        if DISTRIBUTION <= receiver.tags:
            kind = api.distribution_method(method)
            if kind == api.NO_GRAPH:
                return no_graph_value(call, state, tags)  # ``Categorical(logits).sample()``
            return computed_value(call, state, (receiver,), True, tags) if kind == api.GRAPH else None
        if method in _CONTAINER_METHODS or CONTAINER <= receiver.tags:
            return None
        op = api.method(method, self.names.frameworks or F.FRAMEWORKS)
        if op is not None and op.flags:
            op = op.at_call(_true_keywords(call))
        if op is None:
            if roles.made_model(receiver) or any(t.startswith("instance:") or (t.startswith("ctor:") and F.framework_of(t[5:]))
                                                 for t in receiver.tags):
                # a method of a model, of an object of this file's classes, or of one the
                # frameworks made (``scaler.scale(loss)``): what it computes is its own
                return None
            if method in NO_TENSOR_METHODS:  # no tensor: nothing recorded or not says anything of it
                return Value(call, {fw: UNKNOWN for fw in F.FRAMEWORKS}, (receiver,) + tuple(args), False, False,
                             tags | UNKNOWN_RESULT, state)
            if not (UNKNOWN_RESULT <= receiver.tags or _object_of_other_code(receiver)):
                return None  # (``self.m(x)``, ``opt.m(x)`` of a parameter: nothing known either way)
            return _unknown_result(call, state, (receiver,) + tuple(args), tags)
        if not op.known:
            return None
        kind = op.kind
        if kind == api.PYTHON:
            return opaque_value(call, CONST | {"attr:" + method})  # ``out.size(0)``, ``x.dim()``: a Python value
        if kind in (api.FACTORY, api.NO_GRAPH):
            return no_graph_value(call, state, tags)  # ``out.argmax(1)``, ``(pred == y)``, ``x.long()``
        if kind != api.GRAPH:
            return None
        if isinstance(op.result, tuple):
            return self._tuple_result(call, op, self._differentiable(call, op, receiver, args), state, tags)
        made = computed_value(call, state, self._differentiable(call, op, receiver, args), True, tags)
        if op.view and receiver.inference:
            made.inference = True  # ``w.t()`` of an inference tensor is one too
        return made

    @staticmethod
    def _tuple_result(call: cst.Call, op, parents, state: State, tags: frozenset) -> Value:
        """A call that returns a tuple whose elements the API model tells apart
        (``values, indices = x.topk(k)``, ``sample, logp = nd.sample_multinomial(p,
        get_prob=True)``): a tuple of those elements (``TUPLE_RESULT``: unpacked and
        indexed element by element)."""
        parts = []
        for kind in op.result:
            if kind == api.GRAPH:
                parts.append(computed_value(call, state, parents, True, tags))
            elif kind == api.PYTHON:
                parts.append(opaque_value(call, CONST))
            else:
                parts.append(no_graph_value(call, state, tags))
        made = container_value(call, parts, state)
        made.tags = made.tags | TUPLE_RESULT
        return made

    @staticmethod
    def _option_free(call: cst.Call, args) -> Tuple[Value, ...]:
        """The arguments of a framework call but its keyword options (``dtype=``)."""
        return tuple([v for a, v in zip(call.args, args) if a.keyword is None or a.keyword.value not in api.OPTION_KEYWORDS])

    @staticmethod
    def _differentiable(call: cst.Call, op, receiver: Optional[Value], args) -> Tuple[Value, ...]:
        """The values a call's result is differentiable in (the API model's ``diff``):
        the receiver (``self``), positional and keyword arguments; ``*args``/``**kw``
        count, as nobody knows where they land."""
        out = [receiver] if receiver is not None and "self" in (op.diff or ()) else []
        position = 0
        for a, v in zip(call.args, args):
            if a.star:
                out.append(v)
                continue
            if a.keyword is not None:
                if op.differentiable(None, a.keyword.value):
                    out.append(v)
                continue
            if op.differentiable(position, None):
                out.append(v)
            position += 1
        return tuple(out)

    def _external_effects_at(self, call: cst.Call, external) -> None:
        """At a call of another module's function (its ``interfile.Summary``), what a local
        function's summaries do at its calls: the grad mode it leaves, what it detaches in
        place of what it is handed, its optimizer calls and the gradient buffers."""
        if external.exit and self.flow.state is not None:
            self.flow.state = dataclasses.replace(self.flow.state, **dict(external.returns().exit))
        env = self.flow.env
        if env is None:
            return
        for p in external.detaches:
            spelled = spelled_at_call(call, external.params, external.method, p)
            old = env.vals.get(spelled) if spelled is not None else None
            if old is not None:
                self._bind_name(spelled, _detached(call, old, self.flow.state))
        if external.grad_calls or external.grad_exit != "entry":
            self._effects_at(call, external, external.grad_effects(),
                             lambda name: spelled_at_call(call, external.params, external.method, name), env.grads)

    def _grown_at(self, call: cst.Call, target: FunctionInfo, params, bound, through_runner: bool, state: State) -> None:
        """After a call of a function that grows objects it is handed (``Returns.grown``),
        the names this call hands them as hold what it put there: an argument's name, a
        free name the callee reads (called here, or by the runner this call is of), and
        what a runner this call hands a callback to grows of its free names."""
        if bound is None:
            return
        vals = self.flow.env.vals
        for name, template in target.returns.grown:
            if name in params:
                arg = argument_for(call, params, name)
                key = dotted(arg.value) if arg is not None else None
            elif name.startswith(FREE_KEY):  # (a callback's free name, grown by the runner it is handed to)
                key = name.rsplit(":", 1)[1]
            else:  # (a free name of the callee)
                key = _free_key(target, name) if through_runner else name
            was = bound.get(name)
            if key is None or was is None or vals.get(key) is not was:
                continue
            made = template.instantiate(bound, state)
            if made is not None:  # (the same object as handed: its node, grown by the call)
                self._bind_name(key, Value(was.node, dict(made.rec), (was, made), made.inference, True, made.tags, state))

    def _returned_by(self, call: cst.Call, params, returns: Returns, inference: bool, args, state: State, tags,
                     handed: Optional[Dict[str, Value]] = None) -> Optional[Value]:
        """What a call of a function with these ``params`` returns, by its summary
        ``returns`` (None: nothing known). ``inference``: it runs in inference mode."""
        if returns.scope:  # it may return a recording scope (or what makes one)
            return Value(call, {fw: UNKNOWN for fw in F.FRAMEWORKS}, args, False, False, tags | SCOPE, state)
        if returns.template is not None and not returns.left:
            bound = handed if handed is not None else _bound_arguments(call, params, args)
            if bound is not None:
                made = returns.template.instantiate(bound, state)
                if made is not None:
                    if any(made is a for a in args):
                        return made  # (a parameter handed back as it came in)
                    # The call's own value (its node is the call's), made of what the
                    # callee made of the arguments.
                    return Value(call, dict(made.rec), (made,), made.inference, True, made.tags, state)
        if returns.passes is not None:
            passed = (_bound_arguments(call, params, args) or {}).get(returns.passes)
            if passed is not None:
                return passed
        if returns.left:
            # (made of its arguments and of the free names it read where it is called:
            # ``return ((pred - y) ** 2).mean().item()`` of the module's ``pred``)
            free = tuple(v for k, v in (handed or {}).items()
                         if v is not None and k != UNBOUND and k not in params and not any(v is a for a in args))
            return Value(call, {fw: UNKNOWN for fw in F.FRAMEWORKS}, tuple(args) + free, False, False, frozenset({"left-graph"}), state)
        inference = returns.inference or inference
        if not returns.rec and not inference:
            return None
        made = computed_value(call, state, args, False, tags)
        made.rec.update(returns.rec)
        made.inference = inference  # returned from a function that runs in inference mode
        return made

    def _freeze(self, name: str, flag: Optional[bool]) -> None:
        """``name``'s parameters now require grad (``flag`` True), or may not (False, or
        not known): ``_Env.frozen``."""
        env = self.flow.env
        if env is None:
            return
        env.frozen = env.frozen - {name} if flag is True else env.frozen | {name}

    def _freezes_at(self, call: cst.Call, target: FunctionInfo) -> None:
        """At a call of ``target``: what it does to the ``requires_grad`` of the models
        it is handed (``freeze_effects``), spelled as the call spells them, its flag
        the call's argument (or the parameter's default)."""
        effects = freeze_effects(target, self._target_in, cache=id(target) in self._walks)
        if not effects:
            return
        method = target.cls is not None
        for name, flag in effects:
            spelled = spelled_at_call(call, target.param_names, method, name)
            if spelled is None:
                continue
            value: Optional[bool] = True
            if type(flag) is cst.Name and flag.value in target.param_names:
                arg = argument_for(call, bound_params(call, target), flag.value)
                if arg is not None:
                    value = literal_bool(arg.value)
                else:
                    default = param_default(target, flag.value)
                    value = literal_bool(default) if default is not None else None
            elif flag is not None:
                value = literal_bool(flag)
            self._freeze(spelled, value)

    def _leave_in_eval(self, call: cst.Call, params: Sequence[str], method: bool, leaves_eval, sets_train=(), sets_eval=()) -> None:
        """After a call to a function with these ``params`` (``method``: of a class), the
        models it left in eval mode (``leaves_eval``, in its spelling) are so here, those
        of them it leaves in eval mode on every path (``sets_eval``) are so on every path
        here, and those it put in train mode on every path (``sets_train``) are in train mode."""
        spell = [spelled_at_call(call, params, method, n) for n in leaves_eval]
        self._mode_effects(call, [n for n in spell if n is not None],
                           [n for n in (spelled_at_call(call, params, method, n) for n in sets_train) if n is not None],
                           [n for n in (spelled_at_call(call, params, method, n) for n in sets_eval) if n is not None])

    def _mode_effects(self, call: cst.Call, leaves_eval, sets_train, sets_eval=()) -> None:
        """A call puts these names (the caller's spelling) in train mode on every path
        (``sets_train``), then leaves these in eval mode on some path (``leaves_eval``),
        those of them in ``sets_eval`` on every path."""
        env = self.flow.env
        if env is None:
            return
        for name in sets_train:
            env.in_eval = env.in_eval - {name}
            env.maybe_eval.pop(name, None)
            env.in_train = env.in_train | {name}
        for name in leaves_eval:
            env.maybe_eval[name] = call
            env.in_train = env.in_train - {name}
        for name in sets_eval:
            if name in env.maybe_eval:
                env.in_eval = env.in_eval | {name}

    def _constructs_frozen(self, call: cst.Call, func: cst.BaseExpression, qname: Optional[str]) -> bool:
        """``call`` makes an instance of a model class (of this file, or of another module
        of the program) whose constructor turns every parameter's ``requires_grad`` off."""
        if type(func) is cst.Name and self.scope.resolve_name(func.value) is None and func.value in self.graph.model_classes:
            init = self.graph.method_of(func.value, "__init__")
            return init is not None and frozen_at(call, frozen_by_constructor(init))
        return qname is not None and frozen_at(call, self.context.frozen_by_constructor(qname))

    def _program_method(self, receiver: Optional[Value], name: str):
        """The summary (``interfile.Summary``, a method) of method ``name`` of the class of
        another module of the program that ``receiver`` is an instance of (made by
        ``VSE(opt)`` of ``from model import VSE``; through joins of such values), when
        the flow knows that class and that module exports the method. None otherwise."""
        classes = set()
        todo, seen = [receiver] if receiver is not None else [], set()
        while todo:
            v = todo.pop()
            if id(v) in seen or len(seen) > 50:
                return None
            seen.add(id(v))
            found = {t[5:] for t in v.tags if t.startswith("ctor:")}
            if found:
                classes |= found
            elif v.node is None and v.parents:
                todo.extend(v.parents)  # joined over branches or call sites
            else:
                return None  # made some other way: unknown
        if len(classes) != 1:
            return None
        summary = self.context.function(f"{classes.pop()}.{name}")
        return summary if summary is not None and summary.method else None

    def _record_backward_function(self, call: cst.Call, qname: str, args, state: State) -> None:
        arg = call_arg(call, 0, None)
        for kw in BACKWARD_KEYWORDS:
            arg = arg or call_arg(call, None, kw)
        if arg is None:
            return
        index = list(call.args).index(arg)
        value = args[index]
        values = tuple(_heads(value))
        self._seq += 1
        fact = self._backwards[id(call)] = BackwardFact(
            call, qname, tuple(values), state, self.func, frozenset({F.BACKWARD_FUNCS[qname]}), tuple(self._loop_nodes), self._seq
        )
        fact.inputs = self._gradient_inputs(call, args, 1 if qname.endswith(".grad") else None)
        self.flow.env.grads = ("computed",)

    @staticmethod
    def _gradient_inputs(call: cst.Call, args, position: Optional[int]) -> Optional[Tuple[Value, ...]]:
        """The values of the ``inputs`` (``variables`` in MXNet) a gradient is taken
        with respect to, where the call names them; None where it does not."""
        arg = call_arg(call, position, "inputs") or call_arg(call, position, "variables")
        if arg is None or arg.star:
            return None
        value = args[list(call.args).index(arg)]
        if type(arg.value) in (cst.List, cst.Tuple):
            return tuple(value.parents)
        return (value,)

    def _instance_method(self, func: cst.BaseExpression, receiver: Optional[Value]) -> Optional[FunctionInfo]:
        """``obj.m`` where ``obj`` is known to be an instance of a class of this file."""
        if type(func) is not cst.Attribute or receiver is None:
            return None
        classes = {t[9:] for t in receiver.tags if t.startswith("instance:")}
        if len(classes) != 1:
            return None
        return self.graph.method_of(next(iter(classes)), func.attr.value)

    def _submodule_in_eval(self, func: cst.BaseExpression, receiver: Optional[Value], env: "_Env") -> bool:
        """``model.encoder(x)`` after ``model.eval()`` (or ``self.lstm(h)`` in a method
        entered with its object in eval mode): ``eval()`` switches a module's submodules
        too. Only where ``encoder`` is known to be no method: the object is an instance
        of a class of this file (``self`` in its own method) of which it is none."""
        if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
            return False
        key, attr = func.value.value, func.attr.value
        callee = f"{key}.{attr}"
        if key not in env.in_eval or callee in env.in_eval or callee in env.in_train or callee in env.maybe_eval:
            return False
        own = self.func
        if own is not None and own.cls is not None and list(own.param_names[:1]) == [key]:
            classes = {own.cls.name.value}
        else:
            classes = _instance_classes(receiver, items=False) if receiver is not None else set()
        if len(classes) != 1:
            return False
        name = classes.pop()
        if name not in self.graph.classes or self.graph.method_of(name, attr) is not None:
            return False
        # (an attribute its ``__init__`` sets to a layer: a framework layer that is no
        # loss, or an instance of a model class of this file -- not a loss, a metric, a
        # tokenizer or a function, whatever calls them)
        stored = self.graph.init_value(name, attr)
        return stored is not None and self._makes_a_layer(*stored)

    def _makes_a_layer(self, expr: cst.BaseExpression, where: FunctionInfo) -> bool:
        """``nn.Linear(...)``, ``nn.Sequential(...)``, ``Encoder(...)`` of a model class of
        this file: a module whose mode ``eval()`` switches."""
        if type(expr) is not cst.Call:
            return False
        qname = self.names.qualify(expr.func, where.scope)
        if qname is not None:
            found = api.layer(qname)
            return found is not None and not found.get("loss")
        callee = dotted(expr.func)
        return callee is not None and callee in self.graph.model_classes

    def _called_instance(self, callee: Value) -> Optional[FunctionInfo]:
        """The method a call of ``callee`` runs when it is an instance of a class of this
        file (``net(x)``: ``forward``, ``hybrid_forward`` or ``__call__``)."""
        classes = _instance_classes(callee, items=False)
        if len(classes) != 1:
            return None
        return self.graph.called_method(classes.pop())

    def _detached_at(self, call: cst.Call, target: FunctionInfo, params, args) -> List[Tuple[str, cst.Call]]:
        """What a call of ``target`` (a function of this file, not through a runner)
        detaches in place, spelled in the caller: the arguments it hands to parameters
        that ``target`` detaches (``detaches_in_place``), the caller's names that
        ``target``, or a callback handed to it that it only calls, detaches as free names
        (``detached_free_names``: ``run(step)`` with ``def step(): h.detach_()``)."""
        out = []
        for p, inner in detaches_in_place(target, self._target_in):
            spelled = spelled_at_call(call, params, target.cls is not None, p)
            if spelled is not None:
                out.append((spelled, inner))
        callbacks = [target] if target is not self.func else []
        callbacks += [info for _, info in self._callbacks_handed(call, args)]
        for info in callbacks:
            for name, inner in detached_free_names(info):
                if self.scope.binder(name) is not None and self.scope.binder(name) is info.scope.binder(name):
                    out.append((name, inner))
        return out

    def _callbacks_handed(self, call: cst.Call, args) -> List[Tuple[cst.Arg, FunctionInfo]]:
        """The functions of this file ``call`` hands to its runner as callbacks the runner
        only calls (``_note_handed``), with their arguments (``args``: their values)."""
        out = []
        for arg, value in zip(call.args, args):
            info = self.graph.by_node.get(id(value.node)) if type(arg.value) is cst.Name and not arg.star else None
            if info is not None and id(arg.value) in self._handed.get(id(info), ()):
                out.append((arg, info))
        return out

    def _attached_at(self, call: cst.Call, target: FunctionInfo, params, args, through_runner: bool) -> None:
        """A call of ``target`` (a function of this file), or of a runner handed a
        callback that it only calls, that runs ``x.attach_grad()`` on what the caller
        holds (``attaches_grad``: a parameter's argument, a free name the caller sees):
        the attach happens here, on the caller's value, which is a new leaf after it."""
        env = self.flow.env
        found = []
        if not through_runner:
            for name, inner in attaches_grad(target, self._target_in):
                if name in target.param_names:
                    spelled = spelled_at_call(call, params, target.cls is not None, name)
                elif self.scope.binder(name) is not None and self.scope.binder(name) is target.scope.binder(name):
                    spelled = name
                else:
                    continue
                if spelled is not None:
                    found.append((spelled, inner))
        for arg, info in self._callbacks_handed(call, args):  # (to a runner that always calls it)
            if info is not target and any(calls_surely(target, p) for p in params if argument_for(call, params, p) is arg):
                for name, inner in attaches_grad(info, self._target_in):
                    if name not in info.param_names and self.scope.binder(name) is not None \
                            and self.scope.binder(name) is info.scope.binder(name):
                        found.append((name, inner))
        for spelled, inner in found:
            old = env.vals.get(spelled)
            if old is not None:
                self._mutation(call, "attach", spelled, old, None, inner)
                self._bind_name(spelled, leaf_value(inner, F.MXNET))

    def _free_values(self, target: FunctionInfo, through_runner: bool) -> Dict[str, Value]:
        """At a call of ``target``: what its free names hold. Called directly, the
        caller's values (a nested function called in its enclosing one, a module-level
        function called at module level); run by a runner, the values where it was handed
        over (joined over where it was)."""
        env = self.flow.env
        if env is None:
            return {}
        names = self.graph.free_names(target)
        if not names:
            return {}
        if through_runner:  # (the runner's parameters carry them: ``_note_handed``)
            keys = {n: _free_key(target, n) for n in names}
            return {n: env.vals[k] for n, k in keys.items() if k in env.vals}
        return {n: env.vals[n] for n in names if n in env.vals and self.scope.binder(n) is not None
                and self.scope.binder(n) is target.scope.binder(n)}

    def _note_handed(self, call: cst.Call, runner: FunctionInfo, args) -> Dict[str, Value]:
        """Functions of this file handed to ``runner`` as an argument its body only calls
        (``run(step, loss)`` with ``def run(fn, *a): return fn(*a)``): callbacks whose
        calls there are their call sites. What their free names hold here is handed to
        the runner with them (extra argument values, ``_free_key``)."""
        env = self.flow.env
        extra: Dict[str, Value] = {}
        params = list(runner.param_names)
        if runner.cls is not None and params and params[0] in ("self", "cls") and type(call.func) is cst.Attribute:
            params = params[1:]
        position = 0
        handed = False
        for arg, value in zip(call.args, args):
            if arg.star:
                return extra
            name = arg.keyword.value if arg.keyword is not None else (params[position] if position < len(params) else None)
            if arg.keyword is None:
                position += 1
            info = self.graph.by_node.get(id(value.node)) if type(arg.value) is cst.Name else None
            if info is None or info.cls is not None or name is None or not self._only_called(runner, name):
                continue
            handed = True
            self._handed[id(info)].add(id(arg.value))
            if env is not None:
                for n in self.graph.free_names(info):
                    if n in env.vals and self.scope.binder(n) is not None and self.scope.binder(n) is info.scope.binder(n):
                        extra[_free_key(info, n)] = env.vals[n]
        if handed:
            extra.update(self._collected(call, runner, params, args))
        return extra

    def _collected(self, call: cst.Call, runner: FunctionInfo, params: Sequence[str], args) -> Dict[str, Value]:
        """What ``runner``'s ``*args``/``**kwargs`` collect at ``call`` (``params``: the
        positional parameters its arguments bind), as extra argument values
        (``FWD_ARG``...) with their shape; nothing where it has no such parameter to
        collect them."""
        star, kwstar = _star_names(runner)
        if star is None and kwstar is None:
            return {}
        p = runner.node.params
        named = set(params) | {q.name.value for q in p.kwonly_params}
        positional: List[Value] = []
        keywords: Dict[str, Value] = {}
        for arg, value in zip(call.args, args):
            if arg.keyword is None:
                positional.append(value)
            elif arg.keyword.value not in named:
                keywords[arg.keyword.value] = value
        over = positional[len(params):]
        if (over and star is None) or (keywords and kwstar is None):
            return {}
        out = {f"{FWD_ARG}{i}": v for i, v in enumerate(over)}
        out.update({FWD_KW + k: v for k, v in keywords.items()})
        out[f"{FWD_SHAPE}{len(over)}:{','.join(sorted(keywords))}"] = opaque_value(call, CONST)
        return out

    def _forwarded(self, call: cst.Call, args, callback: FunctionInfo) -> Optional[Dict[str, Value]]:
        """In a runner, a call of a callback it was handed that forwards the runner's own
        ``*args``/``**kwargs`` (``fn(*args)``, ``fn(x, *args, **kwargs)``): the callback's
        argument values, from what those collected at every site of the runner (one
        shape at all of them), or None where that is not known."""
        runner = self.func
        env = self.flow.env
        if runner is None or env is None or not self._forwards_stars(runner):
            return None
        star, kwstar = _star_names(runner)
        shapes = [k for k in runner.params if k.startswith(FWD_SHAPE)]
        if len(shapes) != 1:
            return None
        count, _, kws = shapes[0][len(FWD_SHAPE):].partition(":")
        positional: List[Value] = []
        keywords: Dict[str, Value] = {}
        for arg, value in zip(call.args, args):
            if arg.star == "*" and type(arg.value) is cst.Name and arg.value.value == star:
                for i in range(int(count)):
                    v = env.vals.get(f"{FWD_ARG}{i}")
                    if v is None:
                        return None
                    positional.append(v)
            elif arg.star == "**" and type(arg.value) is cst.Name and arg.value.value == kwstar:
                for k in kws.split(",") if kws else ():
                    v = env.vals.get(FWD_KW + k)
                    if v is None or k in keywords:
                        return None
                    keywords[k] = v
            elif arg.star:
                return None
            elif arg.keyword is not None:
                if arg.keyword.value in keywords:
                    return None
                keywords[arg.keyword.value] = value
            else:
                positional.append(value)
        names = callback.param_names
        if len(positional) > len(names):
            return None
        bound = dict(zip(names, positional))
        for k, v in keywords.items():
            if k in bound:
                return None
            bound[k] = v
        return bound

    def _forwards_stars(self, runner: FunctionInfo) -> bool:
        """``runner``'s ``*args``/``**kwargs`` are never rebound and only ever handed on
        whole (``fn(*args, **kwargs)``)."""
        key = (id(runner), "\0stars")
        found = self._only_called_of.get(key)
        if found is None:
            names = {n for n in _star_names(runner) if n is not None}
            spread = set()
            for n in walk(runner.node.body):
                if type(n) is cst.Arg and n.star and type(n.value) is cst.Name and n.value.value in names:
                    spread.add(id(n.value))
            found = not any(type(n) is cst.Name and n.value in names and id(n) not in spread for n in walk(runner.node.body))
            self._only_called_of[key] = found
        return found

    def _only_called(self, runner: FunctionInfo, param: str) -> bool:
        """``param`` of ``runner`` is never rebound and only ever called there."""
        key = (id(runner), param)
        found = self._only_called_of.get(key)
        if found is None:
            callees = set()
            found = True
            for n in walk(runner.node.body):
                if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == param:
                    callees.add(id(n.func))
                elif type(n) is cst.Comparison and type(n.left) is cst.Name and n.left.value == param and all(
                        type(c.operator) in (cst.Is, cst.IsNot) and type(c.comparator) is cst.Name and c.comparator.value == "None"
                        for c in n.comparisons):
                    callees.add(id(n.left))  # ``if closure is not None: closure()``: a guard, no hand-over
                elif type(n) is cst.If and type(n.test) is cst.Name and n.test.value == param:
                    callees.add(id(n.test))  # ``if callback: callback()``
            for n in walk(runner.node.body):
                if type(n) is cst.Name and n.value == param and id(n) not in callees:
                    found = False
                    break
            self._only_called_of[key] = found
        return found

    def _note_escapes(self, func, qname: Optional[str], method: Optional[str], receiver: Optional[Value], args) -> None:
        """An unresolved call handed an instance of a class of this file (or a method the
        flow does not know called on one) may call it where no site is seen."""
        if qname is not None and qname in HARMLESS_CALLS:
            return
        if type(func) is cst.Name and self.names.builtin(func, self.scope) in HARMLESS_CALLS:
            return
        for a in args:
            self._instances_escape(a)
        if receiver is not None and method not in MODULE_METHODS:
            self._instances_escape(receiver, items=False)

    def _instances_escape(self, value: Value, items: bool = True) -> None:
        """Instances of classes of this file in ``value`` (``items``: or in the container
        it is) reach code the flow does not follow (``_escaped_classes``). Once every class
        has, there is nothing to look for."""
        if self._classes_not_escaped:
            found = _instance_classes(value, items)
            if found:
                self._escaped_classes |= found
                self._classes_not_escaped -= found

    def _target_in(self, call: cst.Call, info: FunctionInfo) -> Optional[FunctionInfo]:
        """The function of this file that ``call``, in the body of ``info``, runs: as its
        walk (the last one) found it, else by its name (``_function_in``)."""
        walk = self._walks.get(id(info))
        fact = walk.calls.get(id(call)) if walk is not None else None
        if fact is not None:
            return fact.target
        return self.graph.function_in(info, call.func)

    def _apply_setter(self, expr: cst.BaseExpression) -> None:
        if type(expr) is not cst.Call or self.flow.state is None:
            return
        q = self.names.qualify(expr.func, self.scope)
        if q not in F.SETTERS:
            return
        fw, what = F.SETTERS[q]
        arg = call_arg(expr, 0, "mode" if fw == F.TORCH else ("is_recording" if what == "recording" else "train_mode"))
        flag = literal_bool(arg.value) if arg is not None else None
        origin = Origin("setter", expr, q)
        sw = Switch(Mode.UNKNOWN, Origin("opaque")) if flag is None else Switch(Mode.ON if flag else Mode.OFF, origin)
        state = self.flow.state
        if what == "training":
            self.flow.state = State(state.torch, state.mxnet, sw)
        else:
            self.flow.state = state.with_recording(fw, sw)


def _drop_symbolic_module_backwards(calls: Dict[int, CallFact], backwards: Dict[int, BackwardFact]) -> None:
    """``m.backward()`` where ``m``'s value is, anywhere in the file, the receiver of what
    only an MXNet symbolic module has (``roles.module_only_call``): its executor's
    backward pass, no autograd (as ``roles.is_symbolic_module`` finds by name in one
    unit; this follows the value: a module handed to a helper, or put in a list and
    backpropagated in a loop). After the fixpoint, once: one pass over the calls."""
    modules = {id(c.receiver) for c in calls.values()
               if c.receiver is not None and c.method is not None and c.receiver.node is not None
               and type(c.node.func) is cst.Attribute and roles.module_only_call(c.node)}
    if not modules:
        return
    for key in [k for k, b in backwards.items()
                if b.api == "backward" and len(b.values) == 1 and id(b.values[0]) in modules
                and type(b.node.func) is cst.Attribute]:
        del backwards[key]


def _exit_switches(info: FunctionInfo, states: Sequence[State], applied: Set[int] = frozenset()) -> Tuple[Tuple[str, Switch], ...]:
    """``Returns.exit``: the parts of the recording state (``torch``, ``mxnet``,
    ``mx_train``) that ``info`` itself sets and leaves so on every exit (a global setter,
    ``stack.enter_context(torch.no_grad())`` on a stack it is handed): its callers go on in
    that state."""
    if not states:
        return ()
    out = []
    for part in ("torch", "mxnet", "mx_train"):
        if part == "torch" and info.decorator is not None:
            continue  # (a recording-scope decorator restores the mode on return)
        switches = {getattr(st, part) for st in states}
        if len(switches) != 1:
            continue
        sw = next(iter(switches))
        origin = sw.origin
        if sw.mode is Mode.UNKNOWN or origin is None or origin.kind not in ("setter", "with") or origin.node is None:
            continue
        if type(origin.node) is not cst.Call or (id(origin.node) not in applied and not finds(info.node.body, lambda n: n is origin.node)):
            continue  # (a ``with`` item ends in the function; an ``enter_context`` call lasts; a callee's, applied at its call)
        out.append((part, sw))
    return tuple(out) if out and not _exit_not_left(info) else ()


def _exit_not_left(info: FunctionInfo) -> bool:
    """Whether what ``info``'s walk ends in may not be the state its callers go on in: a
    generator or coroutine (calling it runs none of its body), or a ``try`` whose
    ``finally`` (or ``except``) sets a grad mode (it may restore what the body set)."""
    node = info.node
    if node.asynchronous is not None:
        return True
    for n in walk(node.body, is_nested_scope):
        t = type(n)
        if t is cst.Yield:
            return True
        if t is cst.Try and any(type(c) is cst.Call and type(c.func) in (cst.Attribute, cst.Name)
                                and (dotted(c.func) or "").rsplit(".", 1)[-1] in _MODE_SETTERS
                                for part in ([n.finalbody] if n.finalbody is not None else []) + list(n.handlers)
                                for c in walk(part)):
            return True
    return False


_MODE_SETTERS = frozenset(q.rsplit(".", 1)[-1] for q in F.SETTERS)


def _past_scopes(v: Value) -> bool:
    """Below a value a recording scope could not come from: a tensor computed, data, a
    graph left (``ancestors``' ``stop`` for ``Returns.scope``)."""
    if "scope" in v.tags or (v.node is None and v.parents):
        return False  # (a join, ``record() if train else nullcontext()``: each side is looked at)
    return "left-graph" in v.tags or (type(v.node) is cst.Call and bool(v.parents)) or any(
        sw.mode is not Mode.UNKNOWN for sw in v.rec.values())


def _joined_rec(values: Sequence[Value]) -> Dict[str, Switch]:
    rec = dict(values[0].rec)
    for v in values[1:]:
        rec = {fw: rec[fw].join(v.rec[fw]) for fw in F.FRAMEWORKS}
    return rec


def _grown_from(v: Optional[Value], entry: Value) -> bool:
    """``v`` is ``entry``'s object grown in place (``append``/``extend``/``insert``: a
    value of the same node with ``entry`` under it, through such growths only)."""
    todo, seen = [v], set()
    while todo:
        v = todo.pop()
        if v is entry or id(v) in seen:
            continue
        seen.add(id(v))
        if v is None or not v.parents or len(seen) > 64:
            return False
        if v.node is None and v.state is None:
            todo.extend(v.parents)  # (a join: of paths that each grew it, or left it as it was)
        elif v.node is v.parents[0].node:
            todo.append(v.parents[0])  # (grown: what it was, and what was put in)
        else:
            return False
    return True


def no_graph_value(node: cst.CSTNode, state: State, tags: frozenset = frozenset()) -> Value:
    """A tensor that carries no graph whatever it was made of (``argmax``, a comparison,
    ``x.long()``, a sample, fresh data): data, as a factory's."""
    return Value(node, {F.TORCH: state.torch, F.MXNET: state.mxnet}, (), _in_inference_mode(state), True, tags | DATA, state)


def _in_inference_mode(state: State) -> bool:
    """Made inside ``torch.inference_mode()``: an inference tensor (SL108)."""
    o = state.torch.origin
    return state.torch.mode is Mode.OFF and o is not None and o.api == "torch.inference_mode"


def _unknown_result(node: cst.CSTNode, state: State, parents: Sequence[Value] = (), tags: frozenset = frozenset()) -> Value:
    """What code we do not model returns: not known to carry a graph (RULES.md, "Values
    and gradient paths"), nor a path to one (``queries.gradient_path`` and
    ``holds_graph`` stop there); made while recording is off, it carries none there
    (whatever it ran, nothing recorded). What it was handed stays its def-use parents:
    whether a value is *used* by a backward (SL103, SL207) still reads through it."""
    rec = {F.TORCH: state.torch if state.torch.off else UNKNOWN, F.MXNET: state.mxnet if state.mxnet.off else UNKNOWN}
    return Value(node, rec, tuple(parents), _in_inference_mode(state), False, tags | UNKNOWN_RESULT, state)


def _layer_parameter(base: Value, attr: str) -> bool:
    """``attr`` of ``base`` is a parameter: ``base`` was made by a framework layer class
    whose code makes ``attr`` a ``Parameter`` (the API model's ``params``)."""
    for t in base.tags:
        if t.startswith("ctor:torch."):
            layer = api.layer(t[5:])
            if layer is not None and attr in layer.get("params", ()):
                return True
    return False


def _object_of_other_code(v: Value) -> bool:
    """Made by code we do not model: a constructor of another package (``gym.make(...)``,
    ``Tokenizer(...)``; ``ctor:`` of no framework and no model class), not a tensor."""
    return any(t.startswith("ctor:") and F.framework_of(t[5:]) is None for t in v.tags) and "model" not in v.tags


def _true_keywords(call: cst.Call) -> Set[str]:
    """The keyword arguments a call sets to a literal ``True``."""
    return {a.keyword.value for a in call.args if a.keyword is not None and literal_bool(a.value) is True}


def _literal_names(expr) -> Tuple[str, ...]:
    """The dotted names a literal list or tuple holds, when it holds names alone."""
    if type(expr) not in (cst.List, cst.Tuple) or not expr.elements:
        return ()
    names = tuple(dotted(el.value) for el in expr.elements if type(el) is cst.Element)
    return names if len(names) == len(expr.elements) and all(names) else ()


def _variable_entry(e: cst.Subscript, vals: Dict[str, Value]) -> Optional[Value]:
    """What ``x[i] = v`` stored, read back as ``x[i]`` while ``i`` holds the value it held
    then (``_store_item``); None otherwise."""
    if len(e.slice) != 1 or type(e.slice[0].slice) is not cst.Index or type(e.slice[0].slice.value) is not cst.Name:
        return None
    base = dotted(e.value)
    if base is None:
        return None
    var = e.slice[0].slice.value.value
    key = f"{base}.[={var}]"
    at = vals.get(key + "@")
    return vals.get(key) if at is not None and at is vals.get(var) else None


def _entry_key(e: cst.Subscript) -> Optional[str]:
    """The name under which ``x.d["k"]`` (a constant key of a dotted base) is bound."""
    if len(e.slice) != 1 or type(e.slice[0].slice) is not cst.Index:
        return None
    base, name = dotted(e.value), _constant_key(e.slice[0].slice.value)
    return f"{base}.[{name}]" if base is not None and name is not None else None


def _constant_key(expr) -> Optional[str]:
    """The key a constant subscript or dict key names (``"loss"``; an integer's digits)."""
    t = type(expr)
    if t is cst.SimpleString:
        try:
            return str(expr.evaluated_value)
        except Exception:
            return None
    if t is cst.Integer:
        return "#" + expr.value
    return None


def read_from(node: cst.CSTNode, item: Value, holder: Value) -> Value:
    """``item``, read out of ``holder`` at ``node`` (``out["loss"]``, ``out.loss``): the
    value stored, with ``holder`` as a last parent for def-use alone (``Value.held``: whether a
    call's result is used by a backward reads through the entry; a gradient path does
    not go into the other entries). A container item is handed back as it is."""
    if CONTAINER <= item.tags:
        return item
    # (the holder stands for where it was read, not for all it holds: its node alone)
    mark = Value(holder.node, {fw: UNKNOWN for fw in F.FRAMEWORKS}, (), False, True, DATA, holder.state)  # (no source of anything)
    made = Value(node, dict(item.rec), (item, mark), item.inference, item.pure, item.tags, item.state)
    made.held = True
    return made


def keyed(key: str, item: Value) -> Value:
    """An entry of a container or a field of an object: ``item`` stored under ``key``
    (``"loss"`` of a dict, ``".loss"`` of an object's field). A one-item container
    itself, so that what reads a container's items reads it as ``item``."""
    return Value(item.node, dict(item.rec), (item,), item.inference, True, CONTAINER | {"key:" + key}, item.state)


def entry(value: Value, key: str, depth: int = 6) -> Optional[Value]:
    """What ``value`` (a container, an object) holds under ``key`` (``keyed``): the
    value stored last on every path there (joined over branches), None when unknown."""
    tag = "key:" + key
    found: List[Value] = []
    todo = [(value, 0)]
    seen = set()
    while todo:
        v, d = todo.pop()
        if id(v) in seen or d > depth:
            continue
        seen.add(id(v))
        for p in reversed(v.parents):
            if tag in p.tags:
                found.append(p.parents[0])
                break  # (the newest entry of this container; older ones are below it)
            if (CONTAINER <= p.tags and not any(t.startswith("key:") for t in p.tags)) or (
                    p.tags & v.tags and any(t.startswith("instance:") for t in p.tags & v.tags)):
                todo.append((p, d + 1))  # (a container it holds; the object a call returned, as made)
    if not found:
        return None
    out = found[0]
    for other in found[1:]:
        out = _join_values(out, other)
    return out


def container_value(node: Optional[cst.CSTNode], parts: Sequence[Value], state: State) -> Value:
    """A Python container of ``parts`` (see ``CONTAINER``; a part that is a container
    stands for its items): recorded as its items are; a constant when they all are;
    when every item left the graph (or is a constant), it has left it too."""
    made = Value(node, {fw: UNKNOWN for fw in F.FRAMEWORKS}, tuple(parts), False, True, CONTAINER, state)
    items = container_items(made)
    if not items:
        made.pure = False
        return made
    made.rec = _joined_rec(items)
    made.inference = all(v.inference for v in items)
    if all("const" in v.tags for v in items):  # ``(batch, 3)``: a constant
        made.tags = CONTAINER | CONST
    elif all("left-graph" in v.tags or "const" in v.tags for v in items):
        made.tags = CONTAINER | {"left-graph"}
    return made


def _instance_classes(v: Value, items: bool = True) -> Set[str]:
    """The classes of this file ``v`` is an instance of (``items``: or a container of)."""
    found = {t[9:] for t in v.tags if t.startswith("instance:")}
    if items and CONTAINER <= v.tags:
        for item in container_items(v):
            found |= {t[9:] for t in item.tags if t.startswith("instance:")}
    return found


_WRITTEN_CONTAINERS = (cst.List, cst.Tuple, cst.BinaryOperation, cst.ListComp, cst.GeneratorExp)


def _heads(v: Value) -> List[Value]:
    """The values a backward of ``v`` differentiates: the items of a list or tuple
    written out, of a comprehension, of a concatenation of such (``losses_a +
    losses_b``), flattened; ``v`` itself otherwise (a container joined over branches
    is one value: which items it holds depends on the path)."""
    if not CONTAINER <= v.tags or type(v.node) not in _WRITTEN_CONTAINERS:
        return [v]
    if type(v.node) in (cst.List, cst.Tuple) and any(type(el) is cst.StarredElement for el in v.node.elements):
        return [v]
    out: List[Value] = []
    for p in v.parents:
        out.extend(_heads(p) if CONTAINER <= p.tags else [p])
    return out


def container_items(v: Value) -> List[Value]:
    """The items of a container value (those of nested or joined containers flattened);
    [] when ``v`` is not known to be a container."""
    if not CONTAINER <= v.tags:
        return []
    out: List[Value] = []
    todo = list(reversed(v.parents))
    seen = set()
    while todo:
        p = todo.pop()
        if id(p) in seen:
            continue
        seen.add(id(p))
        if CONTAINER <= p.tags:
            todo.extend(reversed(p.parents))
        else:
            out.append(p)
    return out


def carried_tag(loop: cst.CSTNode) -> str:
    return f"carried@{id(loop)}"


def _carried(loop: cst.CSTNode, before: _Flow, end: _Flow, joined: _Flow) -> _Flow:
    """At a loop head, values the previous iteration changed are marked ``carried``
    (and with the loop that carried them)."""
    if joined.env is None or end.env is None:
        return joined
    old = before.env.vals if before.env is not None else {}
    for key, new in end.env.vals.items():
        prev = old.get(key)
        if prev is new:
            continue
        merged = joined.env.vals.get(key, new)
        parents = (prev, new) if prev is not None else (new,)
        tags = (joined_tags(prev, new) if prev is not None else new.tags) | {"carried", carried_tag(loop)}
        joined.env.vals[key] = Value(None, dict(merged.rec), parents, merged.inference, True, tags)
    return joined


def _untracked_arithmetic(value: Value, operands: Sequence[Value]) -> Value:
    """Arithmetic whose operands carry no graph in a framework (made with its recording
    off, or numbers) carries none there either, wherever it runs: ``test_loss / n`` after
    the ``no_grad`` block that summed ``test_loss`` (udacity's validation loop)."""
    for fw, sw in list(value.rec.items()):
        if sw.off:
            continue
        offs = [_off_in(o, fw) for o in operands]
        if all(o is not None for o in offs) and any(o is not True for o in offs):
            value.rec[fw] = next(o for o in offs if o is not True)
    return value


def _off_in(value: Value, fw: str, depth: int = 3):
    """How ``value`` carries no graph in ``fw``: the scope or switch it was made under
    with recording off (explicitly: ``no_grad()``, ``pause()``), True for a number, or (a join of such: ``total = 0`` then ``total +=``
    under ``no_grad``) its parts'; None when it may carry one."""
    sw = value.rec[fw]
    if sw.off and sw.origin is not None and sw.origin.explicit and "leaf" not in value.tags:
        return sw  # (under ``no_grad()``/``pause()``: not data made where nothing records yet, a leaf to be)
    if "const" in value.tags:
        return True
    if sw.mode is not Mode.UNKNOWN or value.node is not None or not value.parents or depth <= 0:
        return None
    parts = [_off_in(p, fw, depth - 1) for p in value.parents]
    if any(p is None for p in parts):
        return None
    return next((p for p in parts if p is not True), True)


def _none_test(test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
    """``x is None`` / ``x is not None`` on a dotted name: (the name, whether the body runs
    where it is None)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    c = test.comparisons[0]
    key = dotted(test.left)
    if key is None or type(c.comparator) is not cst.Name or c.comparator.value != "None" or type(c.operator) not in (cst.Is, cst.IsNot):
        return None
    return key, type(c.operator) is cst.Is


_MODULE_BASES = ("Module", "Block", "HybridBlock")


def _module_test(test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
    """``hasattr(x, "eval")`` / ``hasattr(x, "train")`` / ``isinstance(x, nn.Module)``
    (or their ``not``) on a dotted name: (the name, whether the body runs where ``x`` is a
    module). Where it is none, it has no mode (``_modes_as``): the branch that switches
    it decides its mode."""
    sense = True
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, sense = test.expression, False
    if type(test) is not cst.Call or type(test.func) is not cst.Name or len(test.args) != 2:
        return None
    key = dotted(test.args[0].value)
    what = test.args[1].value
    if key is None:
        return None
    if test.func.value == "hasattr" and type(what) is cst.SimpleString and what.evaluated_value in ("eval", "train"):
        return key, sense
    if test.func.value == "isinstance" and (dotted(what) or "").rsplit(".", 1)[-1] in _MODULE_BASES:
        return key, sense
    return None


def _none_where(flow: _Flow, start: _Flow, key: str) -> _Flow:
    """``flow`` (a branch taken where ``key`` is None) with ``key`` bound to None, where the
    branch left it as it found it at ``start``."""
    if flow.env is None or start.env is None or flow.env.vals.get(key) is not start.env.vals.get(key):
        return flow
    out = _Flow(flow.env.copy(), flow.state)
    out.env.vals[key] = opaque_value(None, CONST)
    return out


def _modes_as(flow: _Flow, other: _Flow, key: str) -> _Flow:
    """``flow`` (a branch taken where ``key`` is None) with ``key``'s mode (and its
    parts') as ``other`` leaves it: where there is no module, it has no mode to differ
    (``if self.aux is not None: self.aux.eval()`` then, later, the same test around its
    ``train()``: the two switches go together)."""
    if flow.env is None or other.env is None:
        return flow
    env, src = flow.env, other.env

    def mine(k: str) -> bool:
        return k == key or k.startswith(key + ".")

    if {k for k in env.in_eval if mine(k)} == {k for k in src.in_eval if mine(k)} and \
            {k for k in env.in_train if mine(k)} == {k for k in src.in_train if mine(k)} and \
            {k for k in env.maybe_eval if mine(k)} == {k for k in src.maybe_eval if mine(k)}:
        return flow
    out = _Flow(env.copy(), flow.state)
    e = out.env
    e.in_eval = frozenset({k for k in e.in_eval if not mine(k)} | {k for k in src.in_eval if mine(k)})
    e.in_train = frozenset({k for k in e.in_train if not mine(k)} | {k for k in src.in_train if mine(k)})
    for k in [k for k in e.maybe_eval if mine(k)]:
        del e.maybe_eval[k]
    e.maybe_eval.update({k: v for k, v in src.maybe_eval.items() if mine(k)})
    return out


def _carried_mode(before: _Flow, end: _Flow, head: _Flow) -> _Flow:
    """A loop whose body leaves PyTorch's recording off by a global switch (its own
    ``set_grad_enabled(False)``, or a call that leaves one in effect) that it entered
    with recording on runs every later iteration with recording off: the head's state,
    unknown as the join of the two, keeps where the switch is (``Origin`` kind
    "carried", ``queries.carried_off``). Only SL101 reads it: from the second iteration
    on, a backward on what the body computes before any switch has no graph."""
    if head.state is None or before.state is None or end.state is None:
        return head
    first, last = before.state.torch, end.state.torch
    if not first.on or not last.off or last.origin is None or last.origin.kind != "setter" or head.state.torch.mode is not Mode.UNKNOWN:
        return head
    o = last.origin
    return _Flow(head.env, dataclasses.replace(head.state, torch=Switch(Mode.UNKNOWN, Origin("carried", o.node, o.api, o.where))))


def _apply_scope(state: State, api: str, call: Optional[cst.Call], origin: Origin) -> State:
    """The state inside ``with <api>(...)`` or a function decorated with it."""
    fw, effect = F.SCOPES[api]

    def switch(flag: Optional[bool]) -> Switch:
        if flag is None:
            return Switch(Mode.UNKNOWN, Origin("opaque"))
        return Switch(Mode.ON if flag else Mode.OFF, origin)

    def arg_flag(index: int, keyword: str, default: Optional[bool]) -> Optional[bool]:
        arg = call_arg(call, index, keyword) if call is not None else None
        return default if arg is None else literal_bool(arg.value)

    if effect == "off" and api == "torch.inference_mode":
        mode = arg_flag(0, "mode", True)
        return state.with_recording(fw, switch(None if mode is None else not mode))
    if effect in ("on", "off") and fw == F.TORCH:
        return state.with_recording(fw, switch(effect == "on"))
    if effect == "arg":
        return state.with_recording(fw, switch(arg_flag(0, F.SCOPE_ARG_KEYWORD[api], None)))
    if effect == "on":  # mxnet record(train_mode=True)
        return State(state.torch, switch(True), switch(arg_flag(0, "train_mode", True)))
    if effect == "off":  # mxnet pause(train_mode=False)
        return State(state.torch, switch(False), switch(arg_flag(0, "train_mode", False)))
    return State(state.torch, state.mxnet, switch(effect == "train"))
