"""The recording-state model: what each framework records at a program point, and
the state every value was computed in."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Dict, Optional, Tuple

import libcst as cst

from scopelint.core.frameworks import MODULE_DEFAULT_RECORDING, MXNET, TORCH


class Mode(enum.Enum):
    ON = "on"
    OFF = "off"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Origin:
    """What set a switch. ``kind`` is one of:

    with / decorator / setter -- explicit, in the code being read;
    default                   -- the framework's module-level default;
    entry                     -- derived from the call sites of the function;
    unknown-entry             -- a function entry nobody agreed on (PyTorch's global
                                 default is then the best guess, used by SL103 only);
    called-elsewhere          -- a function entry unknown here, that another module of
                                 the run calls (by name) with recording off, or a call
                                 here on something unknown (``x.m()`` in ``no_grad``)
                                 may be of, recording off: no guess;
    opaque                    -- an unknown decorator or expression decides;
    carried                   -- (mode UNKNOWN) a loop's head: the first iteration
                                 records, every later one runs with recording off,
                                 left so by the global switch ``node`` at the end
                                 of the previous iteration.
    """

    kind: str
    node: Optional[cst.CSTNode] = None
    api: Optional[str] = None
    # Set by a function of another module of the program (``core.interfile.Summary``:
    # its name and where it is, for messages); ``node`` is then None.
    where: Optional[object] = None

    @property
    def explicit(self) -> bool:
        return self.kind in ("with", "decorator", "setter")


@dataclass(frozen=True)
class Switch:
    mode: Mode
    origin: Optional[Origin] = None

    def join(self, other: "Switch") -> "Switch":
        if self == other:
            return self
        if self.mode == other.mode and self.mode != Mode.UNKNOWN:
            return self
        return UNKNOWN

    @property
    def on(self) -> bool:
        return self.mode == Mode.ON

    @property
    def off(self) -> bool:
        return self.mode == Mode.OFF

    @property
    def probably_on(self) -> bool:
        """ON, or a function entry nobody agreed on (PyTorch's global default is ON)."""
        return self.on or (self.mode == Mode.UNKNOWN and self.origin is not None and self.origin.kind == "unknown-entry")


UNKNOWN = Switch(Mode.UNKNOWN)


@dataclass(frozen=True)
class State:
    """Recording per framework, plus MXNet's training flag (Dropout/BatchNorm)."""

    torch: Switch
    mxnet: Switch
    mx_train: Switch

    def recording(self, fw: str) -> Switch:
        return self.torch if fw == TORCH else self.mxnet

    def with_recording(self, fw: str, switch: Switch) -> "State":
        return replace(self, torch=switch) if fw == TORCH else replace(self, mxnet=switch)

    def join(self, other: Optional["State"]) -> "State":
        if other is None or other == self:
            return self
        return State(
            self.torch.join(other.torch), self.mxnet.join(other.mxnet), self.mx_train.join(other.mx_train)
        )


def module_state() -> State:
    default = Origin("default")

    def sw(on: bool) -> Switch:
        return Switch(Mode.ON if on else Mode.OFF, default)

    return State(sw(MODULE_DEFAULT_RECORDING[TORCH]), sw(MODULE_DEFAULT_RECORDING[MXNET]), sw(False))


def unknown_entry_state(kind: str = "unknown-entry") -> State:
    sw = Switch(Mode.UNKNOWN, Origin(kind))
    return State(sw, sw, sw)


@dataclass(eq=False)
class Value:
    """A value in the flow: the expression that made it, the recording state each
    framework was in for it, and the values it was computed from (def-use)."""

    node: Optional[cst.CSTNode]
    rec: Dict[str, Switch]
    parents: Tuple["Value", ...] = ()
    # Made inside torch.inference_mode(): an inference tensor.
    inference: bool = False
    # Computed only from its parents by tensor arithmetic (no unknown callee).
    pure: bool = True
    tags: frozenset = field(default_factory=frozenset)
    state: Optional[State] = None  # where it was computed, when it was
    # Read out of a container or an object (``flow.read_from``): the last parent is where
    # it was read, for def-use alone (``ancestors(holders=False)`` leaves it out).
    held: bool = False

    def ancestors(self, stop=None, holders: bool = True):
        """This value and every value it was computed from, each once; below a value
        for which ``stop(v)`` holds nothing is visited (that value itself is).
        ``holders``: also the containers and objects values were read out of (``held``:
        def-use, not computation)."""
        seen = set()
        stack = [self]
        while stack:
            v = stack.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            yield v
            if stop is None or not stop(v):
                stack.extend(v.parents if holders or not v.held else v.parents[:-1])


def opaque_value(node: Optional[cst.CSTNode] = None, tags: frozenset = frozenset()) -> Value:
    """A value we know nothing about (a parameter, a global, a literal)."""
    return Value(node, {TORCH: UNKNOWN, MXNET: UNKNOWN}, (), False, False, tags)


DATA = frozenset({"data"})  # tag: a fresh tensor of data (a factory's), or computed from data alone
DATA_TAGS = frozenset({"data", "loop-item"})  # what carries no graph: data, a data loader's items
# tag: the output of a forward pass (``net(x)``): its gradient path ends at the model's
# parameters, not at its inputs (``queries.gradient_path``)
FORWARD = frozenset({"forward"})
# tag: what code we do not model returns (``env.step(a)``): not known to carry a graph,
# no gradient path; its parents are what it was handed (def-use only)
UNKNOWN_RESULT = frozenset({"unknown-result"})
# tag: arithmetic on numbers taken out of the graph (``total + loss.item()``), or a join
# of those and constants (a running total over a loop): no graph, whatever the scope.
NUMBER = frozenset({"number"})
NUMBER_TAGS = frozenset({"number", "left-graph"})
# tag: what a local function not walked yet returns (a first round's walk of its caller,
# made again once it is): nothing, so far -- no part of what is computed from it.
PENDING = frozenset({"pending"})
_NO_PART = frozenset({"const", "pending"})
_NUMBERISH = frozenset({"number", "left-graph", "const", "pending"})


def joined_tags(a: "Value", b: "Value") -> frozenset:
    """The tags of a value that is ``a`` or ``b``: those both have, and ``number`` when
    each is a number, a value out of the graph or a constant."""
    tags = a.tags & b.tags
    if _NUMBERISH & a.tags and _NUMBERISH & b.tags and not (_NO_PART & tags):
        tags = tags | NUMBER
    return tags


def computed_value(
    node: cst.CSTNode, state: State, parents, pure: bool, tags: frozenset = frozenset()
) -> Value:
    """The value of a computation at ``state`` from ``parents``.

    Computed while a framework is OFF, it carries no graph there. Computed while ON,
    it is recorded, unless it is plain arithmetic on values that carry no graph (then
    it has none) or on numbers taken out of the graph (then nobody knows).
    """
    parents = tuple([p for p in parents if p is not None and not (_NO_PART & p.tags)])
    # Data (a fresh tensor, a batch from a loader) has no graph to pass on: only the
    # other parents decide whether arithmetic records; on data alone it is data.
    graphs = tuple([p for p in parents if not (DATA_TAGS & p.tags)])
    if pure and parents and not graphs:
        tags = tags | DATA
    rec = {}
    for fw in _FRAMEWORKS:
        sw = state.torch if fw is TORCH else state.mxnet
        if not pure or sw.mode is Mode.OFF:
            rec[fw] = sw  # a call records what it does (a model holds parameters)
            continue
        if not graphs:
            rec[fw] = sw
            continue
        # One pass over the parents: arithmetic on a recorded value is recorded; on
        # values without graph it has none; on numbers taken out of the graph, unknown.
        capable = False
        all_off = all_off_or_left = only_defaults = True
        for p in graphs:
            psw = p.rec[fw]
            if psw.mode is Mode.ON or "leaf" in p.tags or _unknown_entry(psw):
                capable = True
                break
            if psw.mode is not Mode.OFF:
                all_off = False
                if not (NUMBER_TAGS & p.tags):
                    all_off_or_left = False
            if psw.origin is None or not _not_recording(psw.origin):
                only_defaults = False
        if capable:
            rec[fw] = sw
        elif all_off and not (sw.mode is Mode.ON and only_defaults):
            # (Arrays made outside any scope and used inside record() are MXNet's
            # ordinary inputs, not that; so are those of a caller outside any scope.)
            rec[fw] = graphs[0].rec[fw]
        elif all_off_or_left:
            rec[fw] = UNKNOWN
            if pure and all(NUMBER_TAGS & p.tags for p in graphs):
                tags = tags | NUMBER  # (arithmetic on numbers taken out: a number)
        else:
            rec[fw] = sw
    inference = state.torch.mode is Mode.OFF and state.torch.origin is not None and state.torch.origin.api == "torch.inference_mode"
    return Value(node, rec, parents, inference, pure, tags, state)


def _not_recording(origin: Origin) -> bool:
    """OFF only because nothing switched recording on: the module default, or a function
    entered only from there (no ``pause()``/``no_grad()`` anywhere on the way)."""
    return origin.kind == "default" or (origin.kind == "entry" and origin.api is None)


def _unknown_entry(sw: Switch) -> bool:
    return sw.mode is Mode.UNKNOWN and sw.origin is not None and sw.origin.kind == "unknown-entry"


_FRAMEWORKS = (TORCH, MXNET)
_FIXED = frozenset({"leaf", "left-graph"})  # values whose recording no call's state changes


def leaf_value(node: cst.CSTNode, fw: Optional[str], tags: frozenset = frozenset()) -> Value:
    """A tensor that requires grad by construction (``requires_grad=True``, a Parameter,
    ``attach_grad()``): tracked whatever the scope."""
    on = Switch(Mode.ON, Origin("leaf", node))
    rec = {f: (on if fw in (None, f) else UNKNOWN) for f in (TORCH, MXNET)}
    return Value(node, rec, (), False, False, tags | {"leaf"})


class Template:
    """What a function returns, in terms of its parameters (``facts.Returns.template``):
    the returned value and the values it was computed from inside the function, down to
    the parameters' values (``slots``: id -> parameter name). At each call it is made
    again with that call's arguments in the slots (``instantiate``), so the caller's
    values are linked to what the callee computed from them, by value: a rule walking a
    graph from the caller goes through the callee's model calls, detaches and
    conversions, and back to the caller's own values. Compared by ``shape`` (a
    structural description), so that the fixpoint over summaries and the replay of walks
    see a change of what the function computes, not of the objects that hold it."""

    __slots__ = ("root", "slots", "shape", "entry")

    # More values than this under the returned one: no template (the call's result is
    # then what the other fields of the summary say).
    LIMIT = 256

    def __init__(self, root: Value, slots: Dict[int, str], shape: tuple, entry: Optional[State] = None):
        self.root, self.slots, self.shape, self.entry = root, slots, shape, entry

    def __eq__(self, other) -> bool:
        return type(other) is Template and other.shape == self.shape

    def __hash__(self) -> int:
        return len(self.shape)

    @staticmethod
    def of(root: Value, slots: Dict[int, str], entry: Optional[State] = None) -> Optional["Template"]:
        """The template of ``root`` (None: too large, or no parameter reaches it).
        ``entry``: the state the function was walked from (its call sites')."""
        order: list = []
        index: Dict[int, int] = {}
        stack = [root]
        reaches = False
        while stack:
            v = stack.pop()
            if id(v) in index:
                continue
            if id(v) in slots:
                reaches = True
                continue
            index[id(v)] = len(order)
            order.append(v)
            if len(order) > Template.LIMIT:
                return None
            stack.extend(v.parents)
        if not reaches:
            return None
        shape = tuple(
            (
                v.node, v.tags, tuple(sorted(v.rec.items())), v.pure, v.inference, v.state,
                tuple([slots[id(p)] if id(p) in slots else index[id(p)] for p in v.parents]),
            )
            for v in order
        )
        return Template(root, dict(slots), shape + ((entry,),), entry)

    def instantiate(self, bound: Dict[str, Value], state: Optional[State] = None) -> Optional[Value]:
        """The returned value made again with ``bound``'s values (by parameter name) in
        the slots; None when a parameter that reaches it is not bound. ``state``: the
        call's; what the function computed in the state it was entered in (its call
        sites' joined, not a decorator's) is computed in this call's state here."""
        slots = self.slots
        entry = self.entry
        swap = None
        if state is not None and entry is not None and state != entry:
            def derived(sw: Switch) -> bool:
                return sw.origin is None or sw.origin.kind in ("entry", "unknown-entry", "called-elsewhere")
            swap = {fw: state.recording(fw) for fw in _FRAMEWORKS if derived(entry.recording(fw))}
            inner = State(
                swap.get(TORCH, entry.torch), swap.get(MXNET, entry.mxnet),
                state.mx_train if derived(entry.mx_train) else entry.mx_train,
            )
        made: Dict[int, Value] = {}
        order: list = []
        stack = [self.root]
        while stack:
            v = stack.pop()
            if id(v) in made:
                continue
            if id(v) in slots:
                arg = bound.get(slots[id(v)])
                if arg is None:
                    return None
                made[id(v)] = arg
                continue
            new = object.__new__(Value)
            new.__dict__.update(v.__dict__)
            new.rec = dict(v.rec)
            if swap and v.state == entry and not (v.tags & _FIXED):
                new.state = inner
                for fw, sw in swap.items():
                    if v.rec[fw] == entry.recording(fw):
                        new.rec[fw] = sw
            made[id(v)] = new
            order.append(v)
            stack.extend(v.parents)
        for v in order:
            if v.parents:
                made[id(v)].parents = tuple([made[id(p)] for p in v.parents])
        if swap:
            # Arithmetic the callee did in the state it was entered in is done again in
            # this call's, on this call's values: recorded as ``computed_value`` says of
            # them (a Python number handed in and back stays a number; the callee's walk
            # saw the parameter's joined value, which may be this call's own result).
            done: set = set()
            for v in reversed(order):
                self._redo(v, made, entry, inner, done, slots)
        return made[id(self.root)]

    @staticmethod
    def _redo(v: Value, made: Dict[int, Value], entry: State, inner: State, done: set, slots: Dict[int, str]) -> None:
        """``v``'s copy (its parents' first) computed again in ``inner`` (``instantiate``)."""
        stack = [(v, False)]
        while stack:
            w, ready = stack.pop()
            new = made.get(id(w))
            if new is None or id(new) in done:
                continue
            if not ready:
                stack.append((w, True))
                stack.extend((p, False) for p in w.parents if id(made.get(id(p))) not in done)
                continue
            done.add(id(new))
            if id(w) not in slots and w.pure and w.parents and w.state == entry and not (w.tags & _FIXED) and w.node is not None:
                again = computed_value(w.node, inner, new.parents, True)
                new.rec = again.rec
                if NUMBER <= again.tags:
                    new.tags = new.tags | NUMBER
