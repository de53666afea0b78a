"""The facts the flow analysis records and the rules read: functions, calls, backward
calls, grad-mode scopes and writes (``flow`` makes them; ``roles`` and the rules query them)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from scopelint.core.names import Names, Scope
from scopelint.core.state import State, Switch, Template, Value, unknown_entry_state


@dataclass(frozen=True)
class Returns:
    """A function's summary of what it returns, applied where it is called (computed by
    its walk, to a fixpoint over the call graph with the other summaries)."""

    left: bool = False  # everything it returns has left the graph (``.item()``, ``.detach()``...)
    # Per framework, the recording state every returned value was made in, where the
    # function itself set it (a ``with``, a setter or its decorator): true at every call.
    rec: Tuple[Tuple[str, Switch], ...] = ()
    inference: bool = False  # every returned value is an inference tensor
    passes: Optional[str] = None  # the parameter every ``return`` hands back as it came in
    # The returned value in terms of the parameters (``state.Template``), made again at
    # each call with its arguments: the caller's values linked to the callee's by value.
    template: Optional[Template] = None
    # The parameters whose object the function grows in place (``losses.append(loss)``:
    # the caller's list holds it afterwards), each with what it then holds in terms of
    # the parameters (a ``Template``), made again at each call for the name it hands.
    grown: Tuple[Tuple[str, Template], ...] = ()
    # Some returned value may hold a recording scope, or the class or factory that makes
    # one (``nullcontext if with_grad else torch.no_grad``): ``with f(x)():`` is opaque.
    scope: bool = False
    # The parts of the recording state (``torch``, ``mxnet``, ``mx_train``) it sets itself
    # and leaves so on every exit (a global setter, ``stack.enter_context(no_grad())``):
    # where it returns, its caller goes on in that state.
    exit: Tuple[Tuple[str, Switch], ...] = ()


# The gradient buffers as a function finds them when it starts (``flow._Env.grads``): a
# summary relative to this is what its callers apply (``GradEffects``).
ENTRY_GRADS = ("entry",)


@dataclass(frozen=True)
class GradEffects:
    """What a function does to gradient buffers, as its callers see it (computed by its
    walk, applied at its calls like ``Returns``). ``exit``: the buffers' status when it
    returns (``flow._Env.grads``, ``ENTRY_GRADS`` when unchanged, None when unknown).
    ``calls``: its optimizer ``step()`` and ``zero_grad()`` calls (its callees' too), in
    order, as (method, receiver spelled from its parameters, ``self`` or a global, the
    buffers' status before it, the call node)."""

    exit: Optional[tuple] = ENTRY_GRADS
    calls: Tuple[Tuple[str, str, Optional[tuple], cst.Call], ...] = ()


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef
    name: str
    cls: Optional[cst.ClassDef]
    parent: Optional["FunctionInfo"]
    scope: Scope
    class_bases: Tuple[str, ...] = ()
    # The framework classes its class derives from (``torch.nn.Module``, Lightning's),
    # directly or through the program's own classes.
    framework_bases: Tuple[str, ...] = ()
    # (canonical api, decorator node) of a recording-scope decorator, if any.
    decorator: Optional[Tuple[str, cst.Decorator]] = None
    opaque: bool = False  # unknown decorator: its entry state cannot be derived
    entry: State = field(default_factory=unknown_entry_state)
    called_in: State = field(default_factory=unknown_entry_state)  # the call sites' state, before its decorator
    # Summary: names (in the function's own spelling) left in eval mode on some exit.
    leaves_eval: FrozenSet[str] = frozenset()
    # Summary: names (its spelling) it puts in train mode on every path to its exits.
    sets_train: FrozenSet[str] = frozenset()
    # Summary: names of ``leaves_eval`` it leaves in eval mode on every path to its exits.
    sets_eval: FrozenSet[str] = frozenset()
    # Names in eval mode when it starts, at every call site: its parameters handed a
    # model in eval mode, and, for a method called on ``self``, the caller's ``self.x``.
    entry_eval: FrozenSet[str] = frozenset()
    # Values of parameters, joined over every call site (when all sites are known).
    params: Dict[str, Value] = field(default_factory=dict)
    returns: Returns = Returns()  # summary: what it returns
    grad_effects: GradEffects = GradEffects()  # summary: what it does to gradient buffers
    in_model_class: bool = False  # a method of an nn.Module / gluon Block subclass
    # A method whose code never reads its instance (no ``self`` in its body, nested
    # functions included): calling it, or the instance it is the ``forward`` of, is
    # calling a function of its arguments (a stateless module: no parameters, no
    # submodules, no state of its own).
    stateless: bool = False
    # Every call of it is one this file's walk sees (it escapes nowhere, is called, and
    # not only by itself): its callers are all known (``Analyzer._entry``).
    callers_known: bool = False

    @property
    def returns_left(self) -> bool:
        return self.returns.left

    @property
    def param_names(self) -> List[str]:
        p = self.node.params
        return [x.name.value for x in (*p.posonly_params, *p.params)]

    @property
    def qualname(self) -> str:
        prefix = self.parent.qualname + "." if self.parent else ""
        if self.cls is not None and self.parent is None:
            prefix = self.cls.name.value + "."
        return prefix + self.name


@dataclass(eq=False)
class CallFact:
    node: cst.Call
    qname: Optional[str]  # canonical name when the callee is an imported API
    callee: Optional[str]  # dotted spelling of the callee (``self.model``)
    method: Optional[str]  # attribute name for ``x.m(...)``
    state: State
    func: Optional[FunctionInfo]
    receiver: Optional[Value]
    args: Tuple[Value, ...]
    statement: bool  # the whole statement is this call (possibly assigned)
    in_eval: FrozenSet[str]  # names put in .eval() on every path to here
    maybe_eval: Dict[str, cst.CSTNode]  # names in eval mode on some path -> what put them there
    loops: Tuple[cst.CSTNode, ...]  # enclosing loops in this function, outermost first
    grads: Optional[tuple]  # gradient-buffer status before the call (see _Env.grads)
    target: Optional["FunctionInfo"] = None  # the local function it calls
    callee_value: Optional[Value] = None  # what the flow knows of the callee (``model``)
    seq: int = 0  # order of evaluation within a walk
    external: Optional[object] = None  # the function of another module it calls (``interfile.Summary``)
    # An effect of a function at its call (``Facts.effects``): ``node`` is the call of
    # ``via`` (a ``FunctionInfo`` of this file, or another module's ``interfile.Summary``:
    # both have a ``name``), ``inner`` the optimizer call in it (or in what it calls; None
    # in another module).
    via: Optional[object] = None
    inner: Optional[cst.Call] = None
    # Models whose parameters may not require grad at the call (``_Env.frozen``).
    frozen: FrozenSet[str] = frozenset()
    # Names put back in training mode on every path to here (``_Env.in_train``).
    in_train: FrozenSet[str] = frozenset()
    # The loops its function runs in, outermost first: those around every call of it, all
    # seen (``train_epoch`` called in ``fit``'s loop; see ``flow.Analyzer._loops_of_callers``).
    caller_loops: Tuple[cst.CSTNode, ...] = ()


@dataclass(eq=False)
class BackwardFact:
    node: cst.Call
    api: str  # "backward" (method) or a canonical function name
    values: Tuple[Value, ...]
    state: State
    func: Optional[FunctionInfo]
    frameworks: FrozenSet[str]
    loops: Tuple[cst.CSTNode, ...] = ()
    seq: int = 0
    caller_loops: Tuple[cst.CSTNode, ...] = ()  # (see ``CallFact.caller_loops``)
    # The tensors gradients are taken with respect to, where the call names them
    # (``autograd.grad(loss, [x_adv])``, ``backward(inputs=[w])``); None: every leaf.
    inputs: Optional[Tuple[Value, ...]] = None

    @property
    def differentiates(self) -> bool:
        """``torch.autograd.grad(..., create_graph=True)``: a derivative that is itself part
        of the graph (a gradient penalty, a monotonicity term), not a training step's
        backward."""
        if self.api != "torch.autograd.grad":
            return False
        for arg in self.node.args:
            if arg.keyword is not None and arg.keyword.value == "create_graph":
                return type(arg.value) is cst.Name and arg.value.value == "True"
        return False


@dataclass(eq=False)
class ScopeFact:
    item: cst.WithItem
    with_node: cst.With
    api: str
    called: bool
    before: State
    inside: State
    func: Optional[FunctionInfo]


@dataclass(eq=False)
class MutationFact:
    """A write to an existing value: ``x += ...``, ``x[...] = ...``, ``x.add_(...)``, ``x.data = ...``,
    ``f(..., out=x)``, ``x.attach_grad()``, or rebinding a leaf (``w = w - ...``)."""

    node: cst.CSTNode
    kind: str  # "augassign" | "subscript" | "inplace" | "out" | "attach" | "rebind" | "data" (``p.data = v``) | "grad-none" | "grad-req" (``p.grad_req = v``)
    key: Optional[str]  # dotted name written to
    before: Value  # the value it held
    value: Optional[Value]  # what is written / combined in
    state: State
    func: Optional[FunctionInfo]
    loops: Tuple[cst.CSTNode, ...]
    seq: int = 0  # order of evaluation within a walk
    caller_loops: Tuple[cst.CSTNode, ...] = ()  # (see ``CallFact.caller_loops``)


@dataclass
class Facts:
    module: cst.Module
    names: Names
    frameworks: FrozenSet[str]
    functions: List[FunctionInfo]
    calls: List[CallFact]
    backwards: List[BackwardFact]
    scopes: List[ScopeFact]
    mutations: List[MutationFact] = field(default_factory=list)
    # What the other modules of the program told the analysis (a ``core.interfile.Context``;
    # None: nothing. Not imported here: ``interfile`` reads ``Returns`` from this module.)
    program: Optional[object] = None
    # Optimizer ``step()``/``zero_grad()`` done by a local function, as calls at each of
    # its calls (``CallFact.via``): ``opt.step()`` in ``update(opt)`` is a step of the
    # caller's optimizer where ``update`` is called, in the caller's loops and order.
    effects: List[CallFact] = field(default_factory=list)
    # Loops known to run their body at least once (ids): a ``for`` over a list or tuple
    # written out with items (``for l in [loss_d, loss_g]:``, through a name bound to one).
    entered_loops: FrozenSet[int] = frozenset()
    # By local function (id): what it returns where all of it has left the graph
    # (``Returns.left``: ``return torch.tensor(out.item())``), as its walk made it, for
    # a rule that follows a conversion from a call into the function.
    left_returned: Dict[int, tuple] = field(default_factory=dict)

    def __post_init__(self):
        self._call_by_node = {id(c.node): c for c in self.calls}
        self._calls_by_func: Dict[int, List[CallFact]] = defaultdict(list)  # (in order)
        for c in self.calls:
            self._calls_by_func[id(c.func)].append(c)

    def memo(self, key: str, compute):
        """``compute(self)``, computed once: an index a query keeps of these facts."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = compute(self)
        return cache[key]

    def sites_of(self, func: Optional[FunctionInfo]) -> List[CallFact]:
        """The calls of ``func`` the walk resolved to it (``CallFact.target``), in order."""
        by_target = self.__dict__.get("_sites_by_target")
        if by_target is None:
            by_target = self.__dict__["_sites_by_target"] = defaultdict(list)
            for c in self.calls:
                if c.target is not None:
                    by_target[id(c.target)].append(c)
        return by_target.get(id(func), []) if func is not None else []

    def calls_named(self, name: str) -> List[CallFact]:
        """Every call of a function or method spelled ``name`` (``name(...)``,
        ``o.name(...)``), whatever it resolves to: one on an object the flow does not
        know may run any function of that name."""
        by_name = self.__dict__.get("_calls_by_name")
        if by_name is None:
            by_name = self.__dict__["_calls_by_name"] = defaultdict(list)
            for c in self.calls:
                spelled = c.method or c.callee
                if spelled is not None:
                    by_name[spelled].append(c)
        return by_name.get(name, [])

    def call_of(self, node: Optional[cst.CSTNode]) -> Optional[CallFact]:
        return self._call_by_node.get(id(node)) if node is not None else None

    def calls_in(self, func: Optional[FunctionInfo], effects: bool = False) -> List[CallFact]:
        """The calls in ``func``, in order; ``effects``: with the optimizer calls of the
        local functions it calls, at their calls (``Facts.effects``)."""
        found = list(self._calls_by_func.get(id(func), ()))
        if effects:
            found.extend(e for e in self.effects if e.func is func)
            found.sort(key=lambda c: c.seq)
        return found

    def effects_at(self, node: Optional[cst.CSTNode]) -> List[CallFact]:
        """The optimizer calls a call of a local function makes (``Facts.effects``)."""
        return [e for e in self.effects if e.node is node] if node is not None else []
