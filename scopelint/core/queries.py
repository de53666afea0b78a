"""Questions rules ask of the facts, answered once here so rules stay short."""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional

import libcst as cst

from scopelint.core import api
from scopelint.core import frameworks as F
from scopelint.core.arguments import CALL_METHODS, spelled_at_call
from scopelint.core.flow import CONTAINER, FROZEN_PARAMS, LEAVING_METHODS, Facts, FunctionInfo, carried_tag
from scopelint.core.interfile import NO_CONTEXT, Context, Summary
from scopelint.core.names import RETURNS_MODULE, dotted
from scopelint.core.roles import is_class_name, is_model_call, made_model, model_called
from scopelint.core.syntax import block_path, finds, is_nested_scope, literal_bool, walk
from scopelint.core.state import DATA_TAGS, FORWARD, UNKNOWN_RESULT, Mode, Origin, State, Switch, Value

_SPELLING = {
    "torch.no_grad": "torch.no_grad()",
    "torch.enable_grad": "torch.enable_grad()",
    "torch.inference_mode": "torch.inference_mode()",
    "torch.set_grad_enabled": "torch.set_grad_enabled(False)",
    "torch.autograd.set_grad_enabled": "torch.autograd.set_grad_enabled(False)",
    "mxnet.autograd.pause": "autograd.pause()",
    "mxnet.autograd.record": "autograd.record()",
    "mxnet.autograd.set_recording": "autograd.set_recording(False)",
}


def spell(api: Optional[str]) -> str:
    return _SPELLING.get(api or "", f"{api}()")


def describe_origin(origin: Origin) -> str:
    """Where recording was switched off, in words for a message."""
    api = spell(origin.api)
    if origin.where is not None and getattr(origin.where, "exit", False):
        return f"after a call of {origin.where.spelled}, which leaves `{api}` in effect"
    if origin.kind == "entry" and origin.where is not None:  # its calls in other modules (``interfile.Callers``)
        return f"in a function that is only called where recording is off ({origin.where.spelled})"
    if origin.where is not None:  # in a function of another module of the program
        how = {"with": f"inside `{api}`", "decorator": f"decorated with `@{api}`", "setter": f"after `{api}`"}
        return f"by {origin.where.spelled}, {how.get(origin.kind, 'with recording off')}"
    if origin.kind == "with":
        return f"inside `{api}`"
    if origin.kind == "decorator":
        return f"in a function decorated with `@{api}`"
    if origin.kind == "setter":
        return f"after `{api}`"
    if origin.kind == "entry":
        return "in a function that is only called where recording is off"
    if origin.kind == "default":
        return "outside every `autograd.record()`"
    return "while recording was off"


def carried_off(value: Value, frameworks: Iterable[str]) -> Optional[Origin]:
    """The switch (``Origin`` kind "carried") a loop's previous iteration left PyTorch's
    recording off by, where ``value`` was computed at the head of that loop's later
    iterations: from the second iteration on it has no graph. None otherwise (and for
    MXNet, whose head states are never so)."""
    fws = list(frameworks)
    if fws != [F.TORCH]:
        return None
    sw = value.rec[F.TORCH]
    return sw.origin if sw.mode is Mode.UNKNOWN and sw.origin is not None and sw.origin.kind == "carried" else None


def untracked_by(value: Value, frameworks: Iterable[str]) -> Optional[Origin]:
    """The origin of OFF if ``value`` was computed with recording off in every framework
    the call may belong to; None when it may carry a graph or nobody knows."""
    origin = None
    fws = list(frameworks)
    if not fws:
        return None
    for fw in fws:
        sw = value.rec[fw]
        if not sw.off or sw.origin is None:
            return None
        origin = origin or sw.origin
    return origin


def decorates(origin: Origin, func: Optional[FunctionInfo]) -> bool:
    """``origin`` is the recording-scope decorator of ``func`` itself (not of a callee
    whose returned value reached here)."""
    return origin.kind == "decorator" and func is not None and func.decorator is not None and func.decorator[1] is origin.node


def decorated_caller(facts: Facts, origin: Origin, func: Optional[FunctionInfo], frameworks: Iterable[str] = (),
                     depth: int = 4) -> Optional[FunctionInfo]:
    """The function ``origin`` decorates when that is ``func`` itself or calls it, directly
    or through up to ``depth`` calls of this file's functions (a training step decorated
    with ``@torch.no_grad()`` that hands its loss to ``backprop(loss)``): the backward in
    ``func`` runs under that decorator. An ``origin`` that is ``func``'s entry (a value
    ``func`` computes itself) stands for the switch every call of it is made under
    (``off_at_every_call``). None otherwise."""
    if origin.kind == "entry" and func is not None:
        found = off_at_every_call(facts, func, frameworks)
        if found is not None and found[0].origin is not None:
            origin = found[0].origin
    if origin.kind != "decorator" or func is None:
        return None
    if decorates(origin, func):
        return func
    decorated = next((f for f in facts.functions if f.decorator is not None and f.decorator[1] is origin.node), None)
    if decorated is None:
        return None
    seen, layer = {id(decorated)}, [decorated]
    for _ in range(depth):
        following = []
        for f in layer:
            for c in facts.calls_in(f):
                target = c.target
                if target is func:
                    return decorated
                if target is not None and id(target) not in seen:
                    seen.add(id(target))
                    following.append(target)
        layer = following
    return None


def recorded_in(value: Value, frameworks: Iterable[str]) -> bool:
    """The value was computed while every candidate framework recorded."""
    fws = list(frameworks)
    return bool(fws) and all(value.rec[fw].on for fw in fws)


def explicit_off(state: State, frameworks: Iterable[str]) -> Optional[Switch]:
    """The explicit OFF switch at a point (a ``with``, decorator or setter), if any."""
    fws = list(frameworks)
    found = None
    for fw in fws:
        sw = state.recording(fw)
        if not (sw.off and sw.origin is not None and sw.origin.explicit):
            return None
        found = found or sw
    return found


def off_at_every_call(facts: Facts, func: Optional[FunctionInfo], frameworks: Iterable[str], depth: int = 3):
    """When ``func`` is entered with recording off only because every call of it in this
    file stands in an explicit OFF scope (directly, or in a function entered so, up to
    ``depth`` calls out): that scope's switch and the call, else None. (Its entry must
    say so: callers not seen, a runner, an escape leave it unknown.)"""
    fws = list(frameworks)
    if func is None or not fws or depth <= 0:
        return None
    for fw in fws:
        sw = func.entry.recording(fw)
        if not (sw.off and sw.origin is not None and sw.origin.kind == "entry" and sw.origin.api):
            return None
    sites = facts.sites_of(func)
    if not sites:
        return None
    found = None
    for c in sites:
        off = explicit_off(c.state, fws)
        if off is not None:
            found = found or (off, c)
            continue
        outer = off_at_every_call(facts, c.func, fws, depth - 1) if c.func is not func else None
        if outer is None:
            return None
        found = found or outer
    return found


def backward_functions(facts: Facts) -> frozenset:
    """ids of the functions that backpropagate: call backward/grad themselves, or call a
    function that does (of this module, or another module's training step), or define
    one (a closure handed to ``optimizer.step``)."""
    return facts.memo("backward_functions", _backward_functions)


def _backward_functions(facts: Facts) -> frozenset:
    # (Once per file, and up the callers from each function that trains, each edge
    # once: a pass over every edge until nothing changed cost a chain of n functions
    # n passes, n**2, and every rule asking again paid it again. Issue 44.)
    trains = {id(b.func) for b in facts.backwards if b.func is not None}
    for c in facts.calls:
        if c.func is not None and c.external is not None and getattr(c.external, "trains", ()):
            trains.add(id(c.func))
    callers_of: Dict[int, List[int]] = {}
    for c in facts.calls:
        if c.func is not None and c.target is not None:
            callers_of.setdefault(id(c.target), []).append(id(c.func))
    for f in facts.functions:
        if f.parent is not None:
            callers_of.setdefault(id(f), []).append(id(f.parent))
    todo = list(trains)
    while todo:
        for caller in callers_of.get(todo.pop(), ()):
            if caller not in trains:
                trains.add(caller)
                todo.append(caller)
    return frozenset(trains)


def _callers_all_here(facts: Facts, func: FunctionInfo) -> bool:
    """Nothing says ``func`` has callers outside this file: no other module near it calls
    its name (``Context.called_elsewhere``, ``called_off``), and the file reaches no
    function by a name it computes (``getattr(self, "_" + kind)``, ``globals()[name]``,
    ``getattr(sys.modules[__name__], name)``), which could be any of its functions."""
    program = facts.program
    if func.name in getattr(program, "called_elsewhere", ()) or func.name in getattr(program, "called_off", ()):
        return False
    return not _dynamic_dispatch(facts)


def _dynamic_dispatch(facts: Facts) -> bool:
    return facts.memo("dynamic_dispatch", _reaches_by_computed_name)


def _reaches_by_computed_name(facts: Facts) -> bool:
    for c in facts.calls:
        name = c.callee if c.method is None else None
        if name in ("getattr", "globals", "locals", "vars"):
            args = c.node.args
            if name == "getattr" and len(args) >= 2 and type(args[1].value) is cst.SimpleString:
                continue  # ``getattr(obj, "name")``: that name, as written
            return True
    return False


def known_sites(facts: Facts, func: Optional[FunctionInfo]) -> Optional[list]:
    """Every call that may run ``func``, when all of them are known: its sites (the
    walk saw every call of it: ``callers_known``; no other module can call it, as the
    file is not imported or ``func`` is nested, and none near it calls its name:
    ``_callers_all_here``), with every call by its name, which on an object the flow
    does not know may run it (``Facts.calls_named``). None when not known, or never
    called. The question "who runs this?" of the queries that follow a function out
    to its callers (``run_only_from``, ``only_called_where``, ``returned_to_no_backward``)."""
    if func is None or func.opaque or not func.callers_known:
        return None
    if func.parent is None and getattr(facts.program, "imported", False):
        return None
    if not _callers_all_here(facts, func):
        return None
    sites = facts.sites_of(func)
    if not sites:
        return None
    return sites + [c for c in facts.calls_named(func.name) if c.target is not func]


def run_only_from(facts: Facts, roots: dict, excluded: set, depth: int = 4) -> dict:
    """Functions of this file that run only as part of ``roots`` (by id: the root
    function each stands for): every call of them in the file is made in a root or in a
    function run so (up to ``depth`` calls out: a helper of a helper, the callback a
    runner calls), with their callers all known (none escapes; no other module imports
    the file, whose code could call them too), and none of them is in ``excluded`` (ids)
    or opaque. By id: the root it runs from. The roots themselves are included."""
    found = dict(roots)
    for _ in range(depth):
        added = False
        for f in facts.functions:
            if id(f) in found or id(f) in excluded:
                continue
            sites = known_sites(facts, f)
            if sites is not None and all(c.func is not None and c.func is not f and id(c.func) in found for c in sites):
                found[id(f)] = found[id(sites[0].func)]
                added = True
        if not added:
            break
    return found


def module_trains(facts: Facts, trains: Optional[set] = None) -> bool:
    """Module-level code backpropagates: a backward call of its own, or a call of a
    function that backpropagates (``backward_functions``: a helper, a runner handed a
    training closure, a ``Trainer.fit``, another module's training step)."""
    if any(b.func is None for b in facts.backwards):
        return True
    if trains is None:
        trains = backward_functions(facts)
    return any(c.func is None and ((c.target is not None and id(c.target) in trains)
                                   or (c.external is not None and getattr(c.external, "trains", ())))
               for c in facts.calls)


def _graph_names_in(node: cst.CSTNode):
    """Names in an expression whose graph may survive it (not ``x.asnumpy()``, ``x.item()``)."""

    def converted(n: cst.CSTNode) -> bool:
        f = n.func if type(n) is cst.Call else None
        return type(f) is cst.Attribute and f.attr.value in LEAVING_METHODS and type(f.value) is cst.Name

    if converted(node):  # (``walk`` never prunes below its root)
        return [m.value for a in node.args for m in walk(a) if isinstance(m, cst.Name)]
    found = []
    for n in walk(node, converted):
        if type(n) is cst.Name:
            found.append(n.value)
        elif converted(n):  # only its arguments still count
            found.extend(m.value for a in n.args for m in walk(a) if isinstance(m, cst.Name))
    return found


def _written_names(target: cst.BaseExpression, names: set) -> bool:
    """Adds the names a target binds; False when it stores into something else."""
    if type(target) is cst.Name:
        names.add(target.value)
        return True
    if type(target) in (cst.Tuple, cst.List):
        return all(_written_names(el.value, names) for el in target.elements)
    return False  # attribute or subscript: stored somewhere else


def names_escaping_block(block: cst.CSTNode, func: Optional[FunctionInfo]) -> bool:
    """Values made in ``block`` may leave it: returned, yielded or stored elsewhere."""
    assigned: set = set()
    for n in walk(block, is_nested_scope):
        if type(n) in (cst.Return, cst.Yield):
            return True
        if type(n) in (cst.AssignTarget, cst.AugAssign) and not _written_names(n.target, assigned):
            return True
    if func is None:
        return False
    returned = set()
    for n in walk(func.node, is_nested_scope):
        if type(n) in (cst.Return, cst.Yield) and n.value is not None:
            returned.update(_graph_names_in(n.value))
    return bool(assigned & returned)


def used_by_unknown_method(facts: Facts, scope_item: cst.CSTNode, fw: str) -> bool:
    """A value computed inside the scope whose item is ``scope_item`` is the object of a
    method the framework does not define, called as a statement, for its effect alone
    (``l.backword()``, ``out.apply_gradients()`` of a model returning its own object):
    code nobody here knows uses it, and may backpropagate it (unknown means silence).
    (A method whose result is used, ``y_hat.as_in_ctx(ctx).argmax()``, computes a value:
    the API model does not list every NDArray method.)"""
    for c in facts.calls:
        if not c.statement or c.method is None or c.receiver is None or c.target is not None or c.external is not None:
            continue
        if api.method(c.method, (fw,)) is not None or c.method in CALL_METHODS or CONTAINER <= c.receiver.tags:
            continue  # (``outputs.append(out)``: a Python list's method)
        for v in c.receiver.ancestors(lambda v: CONTAINER <= v.tags):
            sw = v.rec.get(fw) if v.state is not None else None
            if v.state is not None and sw is not None and sw.origin is not None and sw.origin.node is scope_item:
                return True
    return False


def chosen_by_caller(block: cst.CSTNode, func: Optional[FunctionInfo]) -> bool:
    """``block`` (a scope's ``with``) runs only under an ``if`` whose test reads a
    parameter of ``func`` or the recording state itself (gluon-cv's thread workers:
    ``if is_recording: with autograd.record(is_training): ...``): whether it records is
    the caller's choice, handed on, not a prediction recorded by mistake."""
    if func is None:
        return False
    params = set(func.param_names)
    for b, i in block_path(func.node.body, block):
        stmt = b[i]
        if type(stmt) is cst.If and stmt is not block:
            for n in walk(stmt.test):
                if (type(n) is cst.Name and n.value in params) or (
                        type(n) is cst.Call and (dotted(n.func) or "").rsplit(".", 1)[-1] in ("is_recording", "is_training")):
                    return True
    return False


# Calls that read the current global state, so it can be put back later.
STATE_READERS = {"torch.is_grad_enabled", "mxnet.autograd.is_recording", "mxnet.autograd.is_training"}


def is_restore(call, facts: Facts) -> bool:
    """A setter call that puts back a saved state: inside a ``finally:``, or with an
    argument saved from ``is_grad_enabled()``/``is_recording()`` or an earlier setter."""
    func = call.func
    if func is None:
        return False
    for block, index in block_path(func.node.body, call.node):
        stmt = block[index]
        if type(stmt) in (cst.Try, cst.TryStar) and stmt.finalbody is not None:
            if finds(stmt.finalbody, lambda n: n is call.node):
                return True
    family = F.SETTERS.get(call.qname)

    def switch(o) -> bool:
        # (``set_grad_enabled(True)``: PyTorch's default put back, never a switch; a
        # setter after it that turns recording off restores nothing -- RULES.md, SL106)
        return not (family == (F.TORCH, "recording") and o.node.args and literal_bool(o.node.args[0].value) is True)

    if any(F.SETTERS.get(o.qname) == family and o.seq < call.seq and switch(o) for o in facts.calls_in(func) if o.statement):
        return True  # an earlier switch in this function is what gets reported
    if not call.node.args or type(call.node.args[0].value) is not cst.Name:
        return False
    saved = call.node.args[0].value.value
    for other in facts.calls_in(func):
        if other.qname in STATE_READERS or other.qname in F.SETTERS:
            if other.node is call.node:
                continue
            for v in _assigned_names_of(func.node, other.node):
                if v == saved:
                    return True
    return False


def _assigned_names_of(func_node: cst.FunctionDef, call_node: cst.Call):
    """Names bound by ``name = <call_node>`` statements in the function."""
    return [
        t.target.value
        for n in walk(func_node)
        if type(n) is cst.Assign and n.value is call_node
        for t in n.targets
        if type(t.target) is cst.Name
    ]


# --- training-loop questions ----------------------------------------------------------
def recorded(value: Value, fw: str) -> bool:
    """The value was computed while ``fw`` recorded (or, in a function whose entry
    nobody fixed, while nothing turned recording off)."""
    sw = value.rec[fw]
    if fw == F.MXNET:
        return sw.on
    return sw.probably_on


def recording(state: State, fw: str) -> bool:
    sw = state.recording(fw)
    return sw.on if fw == F.MXNET else sw.probably_on


def trained_models(facts: Facts, step: FunctionInfo) -> set:
    """The models a training step (a function with a backward) runs while recording,
    without putting them in train mode itself: it trains them in the mode its caller
    left them in. (One that calls their ``eval()`` itself sets their mode itself too: that
    is ``SL207``'s "trained in eval mode", whatever its caller left.)"""
    return _models_run(facts, step, 2)


def _models_run(facts: Facts, func: FunctionInfo, depth: int) -> set:
    """``trained_models`` of ``func``: its model calls while recording, and (``depth``
    levels down) those of the methods of its class it calls on ``self`` while recording
    (vsepp's ``train_emb`` runs its encoders in ``self.forward_emb(...)``), but those it
    (or that method) puts in train or eval mode itself."""
    calls = facts.calls_in(func)
    first: dict = {}  # model -> the order of its first forward pass here
    for c in calls:
        if is_model_call(c) and c.callee and recording(c.state, F.TORCH):
            m = c.callee[: -len(".forward")] if c.callee.endswith(".forward") else c.callee
            first.setdefault(m, c.seq)
    models = set(first)
    if depth and func.cls is not None:
        for c in calls:
            t = c.target
            if t is not None and t is not func and t.cls is func.cls and (c.callee or "").startswith("self.") and recording(c.state, F.TORCH):
                models |= {m for m in _models_run(facts, t, depth - 1) if m.startswith("self.")}
    restored = {c.callee.rsplit(".", 1)[0] for c in calls if c.method in ("train", "eval") and c.callee}
    return models - restored - {m for m, seq in _modes_set_by_callees(calls) if seq < first.get(m, -1)}


def _modes_set_by_callees(calls) -> set:
    """(name, the call's order) for the names whose train/eval mode the functions these
    calls run set (their ``sets_train`` / ``leaves_eval`` summaries, spelled through each
    call's arguments: ``_set_train(self)`` with ``def _set_train(t): t.model.train()``
    sets ``self.model``)."""
    from scopelint.core.arguments import spelled_at_call

    out = set()
    for c in calls:
        t, ext = c.target, c.external
        if t is not None and (t.sets_train or t.leaves_eval):
            method_call = t.cls is not None
            params, names = t.param_names, t.sets_train | t.leaves_eval
            if method_call and not (type(c.node.func) is cst.Attribute and c.node.func.attr.value == t.name):
                # ``net(x)``: the instance's ``forward``, its arguments after ``self`` (its own
                # ``self.x`` is no name of the caller's)
                names = {n for n in names if params and n.partition(".")[0] != params[0]}
                params = params[1:]
        elif ext is not None and (ext.sets_train or ext.leaves_eval):
            params, names, method_call = ext.params, set(ext.sets_train) | set(ext.leaves_eval), ext.method
        else:
            continue
        for n in names:
            spelled = spelled_at_call(c.node, params, method_call, n)
            if spelled is not None:
                out.add((spelled, c.seq))
    return out


def forwarded_models(facts: Facts, func: FunctionInfo) -> set:
    """What a function without a backward runs as a model while recording, rooted at its
    parameters, when it calls no ``train()``/``eval()`` of them: a loss helper
    (ncsn's ``anneal_dsm_score_estimation(scorenet, ...)`` runs ``scorenet``). Its caller
    backpropagating the result trains them in the mode the caller left them in."""
    if any(b.func is func for b in facts.backwards):
        return set()
    params = set(func.param_names)
    calls = facts.calls_in(func)
    # A parameter it calls (``scorenet(x)``, ``net.forward(x)``), where recording is not
    # off: whether it is a model, the caller knows (it put it in eval mode).
    models = {c.callee[: -len(".forward")] if c.method == "forward" else c.callee for c in calls
              if c.qname is None and c.callee and c.state.recording(F.TORCH).mode is not Mode.OFF
              and (c.callee in params or (c.method == "forward" and c.callee.count(".") == 1 and c.callee.partition(".")[0] in params))}
    return models - {c.callee.rsplit(".", 1)[0] for c in calls if c.method in ("train", "eval") and c.callee}


def deferred_method_calls(facts: Facts, func: FunctionInfo) -> tuple:
    """(parameter, method name) of each call, in order, of a method on a parameter of
    ``func`` whose class this module does not know (``model.val_start()`` in
    ``encode_data(model, ...)``): a caller that knows the argument's class applies that
    method's mode effects (``interfile.Summary.defers``)."""
    params = set(func.param_names) - _rebound_in(func)
    if not params:
        return ()
    # Only calls that run wherever the function runs to its end (statements of its own
    # body, not under an ``if``, a loop or a ``try``), as ``sets_train`` is on every path.
    body = func.node.body
    unconditional = {id(small.value) for stmt in (body.body if type(body) is cst.IndentedBlock else ())
                     if type(stmt) is cst.SimpleStatementLine for small in stmt.body if type(small) is cst.Expr}
    out = []
    for c in facts.calls_in(func):
        if c.target is not None or c.external is not None or c.qname is not None or not c.method or c.method in ("eval", "train"):
            continue
        if id(c.node) in unconditional and type(c.node.func) is cst.Attribute and type(c.node.func.value) is cst.Name \
                and c.node.func.value.value in params:
            out.append((c.node.func.value.value, c.method))
    return tuple(out)


def _rebound_in(func: FunctionInfo) -> set:
    """The names ``func``'s own body binds (not in nested functions or classes): a
    parameter among them may not hold what the caller handed it."""
    out = set()
    for n in walk(func.node.body, is_nested_scope):
        t = type(n)
        target = None
        if t in (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr):
            target = n.target
        elif t is cst.WithItem and n.asname is not None:
            target = n.asname.name
        elif t is cst.Del:
            target = n.target
        if target is not None:
            out.update(x.value for x in walk(target) if type(x) is cst.Name)
    return out


def helper_forwards(facts: Facts, call) -> tuple:
    """What the function a call runs (of this file: module level, or of another module:
    its summary) runs as models, in its own spelling (``forwarded_models``)."""
    if call.external is not None:
        return tuple(getattr(call.external, "forwards", ()))
    target = call.target
    if target is not None and target.parent is None and (target.cls is None or _stateless_forward(target)):
        return tuple(sorted(forwarded_models(facts, target)))
    return ()


def _stateless_forward(func: FunctionInfo) -> bool:
    """The ``forward`` of a module that holds nothing (``FunctionInfo.stateless``): calling
    the module is calling a function of its arguments (a loss module that runs the model
    it is handed)."""
    return func.cls is not None and func.stateless and func.name in CALL_METHODS


def models_handed_to_helper(facts: Facts, call) -> list:
    """(the caller's spelling, its value) of each model the helper a call runs runs
    (``helper_forwards``), as the call's arguments name them."""
    names = helper_forwards(facts, call)
    if not names:
        return []
    target = call.target
    helper = call.external if call.external is not None else Summary(
        target.name, "", tuple(target.param_names), method=_stateless_forward(target))
    out = []
    for name in sorted(helper.arguments(call.node, names)):
        value = next((v for a, v in zip(call.node.args, call.args) if dotted(a.value) == name.partition(".")[0]), None)
        out.append((name, value if "." not in name else None))
    return out


def trained_models_as_called(facts: Facts, call) -> set:
    """``trained_models`` of the training step of this file a call runs, as the caller
    names them: a module-level step's parameters through the call's arguments
    (``train_epoch(model, loader, opt)`` trains ``model`` where the step calls it ``net``,
    as ``Summary.arguments`` maps a step of another module); other names as they are."""
    step = call.target
    models = trained_models(facts, step)
    if step.parent is not None:
        return models
    if step.cls is not None:  # a method: ``self.enc`` of ``model.train_emb(x)`` is ``model.enc``
        from scopelint.core.arguments import spelled_at_call

        spelled = (spelled_at_call(call.node, step.param_names, True, m) for m in models)
        return {m for m in spelled if m is not None}
    params = set(step.param_names)
    rooted = {m for m in models if m.partition(".")[0] in params}
    return (models - rooted) | Summary(step.name, "", tuple(step.param_names)).arguments(call.node, sorted(rooted))


def backwards_in_loop(facts: Facts, loop: cst.CSTNode):
    """The backward calls inside ``loop`` (an index by loop kept on ``facts``: one scan,
    by identity, not LibCST's structural ``==`` per pair)."""
    return list(facts.memo("backwards_by_loop", lambda f: _by_loop(f.backwards, False)).get(id(loop), ()))


def _by_loop(facts_, callers: bool) -> dict:
    index: dict = {}
    for b in facts_:
        for node in {id(n): n for n in (b.caller_loops + b.loops if callers else b.loops)}.values():
            index.setdefault(id(node), []).append(b)
    return index


def spelled_in_loop(facts: Facts, func: Optional[FunctionInfo], name: str, loop: cst.CSTNode, through: Optional[list] = None):
    """``name`` of ``func`` (rooted at a parameter, ``self`` or a global) as the calls
    that run ``func`` once per iteration of ``loop`` (its facts' ``caller_loops``) spell
    it: through each call's arguments (``arguments.spelled_at_call``), up the callers
    until the call stands in ``loop`` (``make_opt(model)`` in the loop: ``model``). A list,
    one per call; None where a call does not name it or a caller is not seen.
    ``through``: gets each function on the way with its spelling of the name (``func``'s
    first), whose body runs in every iteration too."""
    frontier = [(func, name)]
    out = []
    for _ in range(5):
        later = []
        for f, n in frontier:
            root = n.split(".", 1)[0]
            if f is None or (root not in f.param_names and root in f.scope.bound and root not in f.scope.globals):
                return None  # (a local of the function: made again at every call)
            if through is not None:
                through.append((f, n))
            sites = [c for c in facts.sites_of(f) if c.func is not f]
            if not sites:
                return None
            for c in sites:
                spelled = spelled_at_call(c.node, f.param_names, f.cls is not None and f.parent is None, n)
                if spelled is None:
                    return None
                if any(l is loop for l in c.loops):
                    out.append(spelled)
                else:
                    later.append((c.func, spelled))
        if not later:
            return out
        frontier = later
    return None


def backwards_run_in_loop(facts: Facts, loop: cst.CSTNode):
    """The backward calls that run in ``loop``: inside it, or in a function called there
    once per iteration (``caller_loops``: ``train_epoch`` called by ``fit``'s loop)."""
    return list(facts.memo("backwards_run_by_loop", lambda f: _by_loop(f.backwards, True)).get(id(loop), ()))


def backpropagated(facts: Facts, value: Value) -> bool:
    """Some backward call's value was computed from ``value``."""
    # (One walk of the backward values' ancestors per file, kept: a set rebuilt per
    # question was quadratic, e.g. 1,000 training loops each asking of its total.)
    return id(value) in facts.memo("backpropagated_values", lambda f: frozenset(
        id(v) for b in f.backwards for bv in b.values for v in bv.ancestors()))


def backpropagated_nodes(facts: Facts, past_detach: bool = True) -> frozenset:
    """The ids of the expressions whose values some backward call's value was computed
    from (``id(call.node) in ...``: the result of that call is backpropagated).

    ``past_detach=False``: not past a value detached on purpose (``.detach()``,
    ``.data``): a PyTorch encoder's detached features fed to another model's loss, of
    either framework, are not backpropagated into the encoder. (A conversion such as
    ``.asnumpy()`` inside ``record()`` is no such cut: the code meant to backpropagate
    through it, and SL206 says it cannot.)"""
    if past_detach:
        return facts.memo("backpropagated_nodes", lambda f: frozenset(
            id(v.node) for b in f.backwards for bv in b.values for v in bv.ancestors()))
    return facts.memo("backpropagated_nodes_to_detach", lambda f: frozenset(
        id(v.node) for b in f.backwards for bv in b.values for v in bv.ancestors(stop=_detached)))


def input_requires_grad(call) -> bool:
    """A forward pass fed a tensor the code made require grad (``img.requires_grad =
    True``, ``x.requires_grad_()``, ``torch.zeros(..., requires_grad=True)``; not a
    parameter): gradients with respect to its input are wanted -- a saliency map, an
    attack, a Sobolev or Jacobian term computed later, maybe by another file's loss --
    so it is no inference, whatever mode its model is in."""
    for a in call.args:
        for n, v in enumerate(a.ancestors(stop=_detached)):
            if n > 64:
                break
            if _detached(v):
                continue  # (``model(z.detach())``: no gradient reaches ``z``)
            if made_to_require_grad(v):
                return True
    return False


def made_to_require_grad(v: Value) -> bool:
    """A tensor the code made require grad that is no parameter: ``x.requires_grad =
    True``, ``torch.zeros(..., requires_grad=True)`` (an attack's perturbation, an input
    whose gradient is wanted), not ``nn.Parameter(...)`` nor a model's weight."""
    return "leaf" in v.tags and "param" not in v.tags and not any(t.startswith("ctor:") and "Parameter" in t for t in v.tags)


def _detached(v) -> bool:
    if "left-graph" not in v.tags:
        return False
    node = v.node
    if type(node) is cst.Call:
        node = node.func
        return type(node) is cst.Attribute and node.attr.value in ("detach", "detach_")
    return type(node) is cst.Attribute and node.attr.value == "data"


def own_layers_run(facts: Facts, call) -> Optional[tuple]:
    """``model.sample(z)``: a call of a method (not ``forward``) of a model class of this
    file that runs the model's own layers (``self.decoder(z)``, also through its other
    methods: ``sample`` -> ``self.decode`` -> ``self.decoder``) with recording as the
    call leaves it (not inside a ``no_grad`` of its own): a forward pass by another name.
    Returns the model as the call spells it (``model``), the ids of the methods walked and
    the layers reached as the call spells them (``model.decoder``), else None."""
    t = call.target
    if t is None or t.cls is None or t.parent is not None or not t.in_model_class or t.name in CALL_METHODS \
            or call.method != t.name or not call.callee or "." not in call.callee or call.callee.rsplit(".", 1)[0] == "self":
        return None  # (``self.decode(z)`` in the model's own methods: part of the call that runs them)
    model = call.callee.rsplit(".", 1)[0]
    todo, seen, layers = [t], set(), set()
    while todo:
        f = todo.pop()
        if id(f) in seen or len(seen) > 8:
            continue
        seen.add(id(f))
        for c in facts.calls_in(f):
            if c.state.torch.off or not c.callee or not c.callee.startswith("self.") or c.qname is not None:
                continue
            if c.target is not None and c.target.name in CALL_METHODS:
                if c.target.in_model_class and c.callee.count(".") == 1:
                    layers.add(model + c.callee[4:])  # ``self.decoder(z)``: a layer of its own, of a class of this file
            elif c.target is not None:
                if c.target.cls is t.cls and c.method == c.target.name:
                    todo.append(c.target)  # another method of the class
            elif c.callee.count(".") == 1 and c.method is not None:
                layers.add(model + c.callee[4:])  # ``self.decoder(z)``: a layer of its own
    return (model, frozenset(seen), frozenset(layers)) if layers else None


def records_nothing(facts: Facts, call) -> bool:
    """The forward pass ``call`` records no graph (PyTorch): its model is an instance of a
    class whose constructor froze every parameter (``FROZEN_PARAMS``: an FID extractor, a
    perceptual loss's VGG; through joins over branches and call sites, and calls that
    return the module: ``.to(device)``, ``.eval()``) and none of its arguments holds a
    graph. (Recording on, such a pass makes no graph: no ``no_grad()`` is missing.)"""
    return frozen_model(call.callee_value) and not any(holds_graph(facts, a, "torch") for a in call.args)


def frozen_model(v: Optional[Value]) -> bool:
    """``v`` is made, on every way it can be, by a constructor that froze its parameters
    (``records_nothing``)."""
    todo, seen, found = [v] if v is not None else [], set(), False
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if len(seen) > 64:
            return False
        if FROZEN_PARAMS <= x.tags:
            found = True
        elif x.node is None and x.parents:
            todo.extend(x.parents)  # joined over branches or call sites
        elif type(x.node) is cst.Call and type(x.node.func) is cst.Attribute and x.node.func.attr.value in RETURNS_MODULE \
                and x.node.func.attr.value != "requires_grad_" and x.parents:
            todo.append(x.parents[0])  # ``InceptionV3(...).to(device)``: the module itself
        else:
            return False
    return found


def feeds_another_backward(facts: Facts, node, b) -> bool:
    """The value of the expression ``node`` is on the graph path of a backward call other
    than ``b`` (SL205: the discriminator's output also feeds the generator's own loss)."""
    paths = facts.memo("backward_paths", lambda f: {id(other): frozenset(
        id(v.node) for bv in other.values for v in graph_path(bv, lambda v: False)) for other in f.backwards})
    return any(other is not b and id(node) in paths[id(other)] for other in facts.backwards)


def trains(facts: Facts, b) -> bool:
    """A backward that may train (RULES.md, SL207): its gradients may reach parameters
    an optimizer steps. Not a gradient taken only with respect to inputs made to require
    grad (``autograd.grad(loss, [x_adv])``: an adversarial example, a saliency map) that
    no optimizer holds."""
    if b.inputs is None or not b.inputs:
        return True
    held = optimized(facts)[0]
    for v in b.inputs:
        if not made_to_require_grad(v):
            return True
        if type(v.node) is not cst.Call or id(v.node) in held:
            return True
    return False


def steps_inputs_only(facts: Facts, step) -> bool:
    """``step`` (an optimizer step's CallFact) steps an optimizer built here over tensors
    made to require grad that are no model's parameters (``optim.SGD([delta])`` of an
    attack's perturbation): it trains no model."""
    ctor = optimizer_constructor(facts, step.receiver) if step.receiver is not None else None
    if ctor is None or not ctor.args:
        return False
    held = ctor.args[0]
    items = [p for p in held.parents] if type(held.node) in (cst.List, cst.Tuple) else []
    if not items:
        return False
    return all(made_to_require_grad(v) and type(v.node) is cst.Call for v in items)


def trained_nodes(facts: Facts) -> set:
    """The ids of the expressions a backward that may train (``trains``) sends gradients
    to: along gradient paths (``gradient_path``), not past a detach or a conversion, not
    into a model's input (an adversarial example's own forward passes are not trained
    by the loss on it)."""
    return facts.memo("trained_nodes", lambda f: {
        id(v.node) for b in f.backwards if trains(f, b) for bv in b.values
        for v in gradient_path(bv, lambda v: "left-graph" in v.tags)})


def zeroes_grads(call) -> bool:
    """``opt.zero_grad()``, ``model.zero_grad()``, ``p.grad.zero_()``."""
    if call.qname is not None:
        return False
    return call.method == "zero_grad" or (call.method == "zero_" and (call.callee or "").endswith(".grad.zero_"))


def sets_grad_req_add(call) -> bool:
    """``net.initialize(grad_req="add")``, ``params.setattr("grad_req", "add")``: MXNet
    then adds into the gradient buffers instead of overwriting them."""
    node = call.node
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "grad_req":
            return _string(arg.value) == "add"
    return call.method == "setattr" and len(node.args) == 2 and (_string(node.args[0].value), _string(node.args[1].value)) == ("grad_req", "add")


def grad_req_add(facts: Facts) -> bool:
    """Somewhere MXNet is told to add into the gradient buffers: ``grad_req="add"``,
    ``params.setattr("grad_req", "add")``, ``p.grad_req = "add"`` (gluon-cv's form)."""
    return any(sets_grad_req_add(c) for c in facts.calls) or any(
        m.kind == "grad-req" and _string(m.node.value) == "add" for m in facts.mutations
    )


def loops_around(facts: Facts, fact) -> tuple:
    """The loops a fact runs in: its own and, for a function called in loops (a
    training step ``train_step(...)`` called once per batch), those of its call sites,
    through up to three calls; outermost first."""
    loops = tuple(fact.loops)
    func, depth, seen = fact.func, 0, set()
    frontier = [func] if func is not None else []
    while frontier and depth < 3:
        depth += 1
        nxt = []
        for f in frontier:
            if id(f) in seen:
                continue
            seen.add(id(f))
            for c in facts.sites_of(f):
                loops = tuple(l for l in c.loops if l not in loops) + loops
                if c.func is not None:
                    nxt.append(c.func)
        frontier = nxt
    return loops


def called_in_loop_elsewhere(facts: Facts, func: Optional[FunctionInfo]) -> Optional[str]:
    """Where a loop of another module of the run calls ``func`` (a module-level function,
    or a method of a module-level class called on an instance there: ``trainer.step(x)``
    once per batch), if one does (``Context.looped``): it runs many times, though no loop
    of this file shows it."""
    if func is None or func.parent is not None or facts.program is None:
        return None
    name = func.name if func.cls is None else f"{func.cls.name.value}.{func.name}"
    return facts.program.called_in_loop(name)


def switches_own_recording(facts: Facts, call) -> bool:
    """The model ``call`` runs switches the recording state itself on some path of its
    ``forward`` (a ``with torch.no_grad():`` or ``autograd.pause()`` there, or such a
    decorator: SPADE's ``forward(data, mode="inference")``): whether the call records is
    decided inside, per path. Its class is of this file (``forward_of``) or a model class
    of another module of the program that its module found so (``Context.switches_recording``)."""
    forward = forward_of(facts, call)
    if forward is not None:
        return forward.decorator is not None or any(s.func is forward for s in facts.scopes)
    value = call.callee_value
    program = facts.program
    if value is None or program is None:
        return False
    return any(t.startswith("ctor:") and program.switches_recording(t[5:]) for t in value.tags)


def detached_by_model_of_program(facts: Facts, call, index: int) -> bool:
    """``call`` runs a model class of another module of the program whose ``forward``
    detaches the parameter that argument ``index`` sets (``Context.detached_by_forward``:
    ``if h is not None: h = h.detach()``), as ``detaches_param`` asks of this file's."""
    from scopelint.core.arguments import parameter_of

    value = call.callee_value
    program = facts.program
    if value is None or program is None:
        return False
    for t in value.tags:
        if t.startswith("ctor:"):
            found = program.detached_by_forward(t[5:])
            if found is not None:
                params, cut = found
                return parameter_of(call.node, list(params), index) in cut
    return False


def forward_of(facts: Facts, call) -> Optional[FunctionInfo]:
    """The function a model call runs: a local function it names, or the ``forward``
    (``hybrid_forward``) of the class of the file whose instance it calls."""
    if call.target is not None:
        return call.target
    value = call.callee_value
    classes = {t[9:] for t in getattr(value, "tags", ()) if t.startswith("instance:")}
    if len(classes) != 1 or call.method not in (None, "forward", "hybrid_forward"):
        return None
    (name,) = classes
    found = [f for f in facts.functions if f.cls is not None and f.parent is None and f.cls.name.value == name
             and f.name in ("forward", "hybrid_forward")]
    return found[0] if len(found) == 1 else None


def state_kept_on_self(facts: Facts) -> list:
    """Recurrent state kept on the object across calls: in a method, a model call is
    handed ``self.a`` and its result is stored back into ``self.a`` (``out, self.hidden =
    self.lstm(x, self.hidden)``), with recording on and no detach on the way; the method
    is run once per iteration of a loop that backpropagates each iteration; and nothing
    else writes or detaches ``.a`` (a reset between steps). Each as (the call, the index
    of the argument, ``"self.a"``)."""
    found, writes = [], None
    for c in facts.calls:
        func = c.func
        if func is None or func.cls is None or func.parent is not None or c.qname is not None:
            continue
        for i, arg in enumerate(c.node.args):
            key = dotted(arg.value)
            if key is None or not key.startswith("self.") or key.count(".") != 1 or i >= len(c.args):
                continue
            if any("left-graph" in v.tags for v in c.args[i].ancestors()) or not any(recorded(c.args[i], fw) for fw in facts.frameworks):
                continue
            if not is_model_call(c):
                continue
            if writes is None:
                writes = _attribute_writes(facts)
            attr = key[5:]
            init = {id(f.node) for f in facts.functions if f.name == "__init__" and f.cls is func.cls}
            mine = [w for w in writes.get(attr, ()) if w[1] not in init]
            # Stored back by the call's own statement, and written nowhere else.
            if not any(stored is c.node and where == id(func.node) for stored, where in mine):
                continue
            if any(stored is not c.node for stored, _ in mine) or not _run_per_backward(facts, func):
                continue
            found.append((c, i, key))
    return found


def _attribute_writes(facts: Facts) -> dict:
    """attr -> [(what is written there: the assigned value, or the node of an in-place
    ``X.attr.detach_()`` or a ``del``; the id of the outermost function it is in)]: the
    writes to ``X.attr`` anywhere in the module."""
    out: dict = {}
    _visit_attribute_writes(facts.module, None, out)
    return out


def _visit_attribute_writes(node, where, out: dict) -> None:
    # (a module function: a recursive closure is a reference cycle holding the tree)
    for n in walk(node, is_nested_scope):
        if n is not node and type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            _visit_attribute_writes(n, where if where is not None or type(n) is not cst.FunctionDef else id(n), out)
            continue
        t = type(n)
        if t in (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del):
            targets = [tg.target for tg in n.targets] if t is cst.Assign else [n.target]
            for tg in targets:
                for a in walk(tg):
                    if type(a) is cst.Attribute:
                        out.setdefault(a.attr.value, []).append((n.value if t is cst.Assign else n, where))
        elif t is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in ("detach_", "zero_", "fill_") \
                and type(n.func.value) is cst.Attribute:
            out.setdefault(n.func.value.attr.value, []).append((n, where))


def _run_per_backward(facts: Facts, func: FunctionInfo) -> bool:
    """``func`` (a method; ``forward`` also through ``model(x)``) runs in a loop that
    backpropagates each iteration."""
    for c in facts.calls:
        if c.target is not func and forward_of(facts, c) is not func:
            continue
        if any(backwards_in_loop(facts, loop) for loop in loops_around(facts, c)):
            return True
    return False


def forwarded_params(facts: Facts, func: Optional[FunctionInfo]) -> FrozenSet[str]:
    """The parameters of ``func`` that reach, with their graph (no detach, conversion or
    unknown call on the way), the input of a recorded model call whose output ``func``
    returns (its ``Returns.template``): a helper that runs the forward pass on what it
    is handed, ``def step(lstm, x, h): out, h = lstm(x, h); return out, h``."""
    template = func.returns.template if func is not None else None
    if template is None:
        return frozenset()
    slots = template.slots
    found = set()

    def stop(v):
        return "left-graph" in v.tags or id(v) in slots

    for w in template.root.ancestors(lambda v: id(v) in slots):
        fact = facts.call_of(w.node) if type(w.node) is cst.Call else None
        if fact is None or not is_model_call(fact) or not any(recorded(w, fw) for fw in facts.frameworks):
            continue
        for p in w.parents:
            for v in p.ancestors(lambda v: stop(v) or not v.pure):
                if id(v) in slots:
                    found.add(slots[id(v)])
    return frozenset(found)


def detaches_param(func: FunctionInfo, name: Optional[str], facts: Optional[Facts] = None) -> bool:
    """The function cuts the graph of its parameter ``name`` itself (``h =
    h.detach()``, ``h.detach_()``, ``h = tuple(s.detach() for s in h)``, or, with
    ``facts``, ``h = _cut(h)`` where everything ``_cut`` returns has left the graph): a
    model that detaches the state it is handed (``arguments.forward_params``: ``self``
    not counted)."""
    if name is None or name not in func.param_names:
        return False
    for n in walk(func.node.body):
        t = type(n)
        if t is cst.Assign and any(type(tg.target) is cst.Name and tg.target.value == name for tg in n.targets):
            if any(type(c) is cst.Call and ((type(c.func) is cst.Attribute and c.func.attr.value in ("detach", "detach_")) or (
                    facts is not None and _returns_left(facts.call_of(c)))) for c in walk(n.value)):
                return True
        elif t is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "detach_" and dotted(n.func.value) == name:
            return True
    return False


def _returns_left(fact) -> bool:
    """A call of a function of the file everything of whose return has left the graph."""
    target = getattr(fact, "target", None)
    return target is not None and target.returns.left


def _string(expr) -> Optional[str]:
    return expr.evaluated_value if type(expr) is cst.SimpleString else None


def graph_path(value: Value, stop) -> Iterable[Value]:
    """``value`` and its ancestors, not looking past values where ``stop(v)`` holds
    (those are yielded, their parents are not)."""
    return value.ancestors(stop, holders=False)


def gradient_path(value: Value, stop) -> Iterable[Value]:
    """``graph_path`` along gradient paths only (RULES.md, "Values and gradient paths"):
    not into the inputs of a forward pass (``net(x_adv)``: the gradient the loss sends
    goes to the model's parameters; an adversarial input built from ``autograd.grad``
    is no path) unless that input is a forward pass's output itself, as the flow already
    leaves out indices, samples, options and what unknown code returns (``core.api``)."""
    seen = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        yield v
        if stop(v) or UNKNOWN_RESULT <= v.tags:
            continue
        if FORWARD <= v.tags:
            # into a forward pass that made this one's value (a helper returning
            # ``model(x)``; ``decoder(encoder(x))``: the encoder is trained too), not
            # into a plain input
            stack.extend(p for p in v.parents if FORWARD <= p.tags)
            continue
        stack.extend(v.parents[:-1] if v.held else v.parents)


def written_name(node: cst.CSTNode) -> Optional[str]:
    """The dotted name a write goes to: ``x += ...``, ``x = ...``, ``x.append(...)``."""
    if type(node) is cst.AugAssign:
        return dotted(node.target)
    if type(node) is cst.Assign:
        return dotted(node.targets[0].target)
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        return dotted(node.func.value)
    return None


def returns_derived(func: FunctionInfo, name: Optional[str]) -> bool:
    """``func`` returns or yields ``name`` or a name computed from it
    (``loss = torch.div(acc, n); total = loss * 2; return total``): the names assigned
    from expressions that mention it, to a fixpoint, in the function's own scope."""
    if name is None:
        return True
    derived = {name}
    assigns = []
    for n in walk(func.node, is_nested_scope):
        if type(n) is cst.Assign:
            assigns.append(([_stored_in(t.target) for t in n.targets] + _tuple_names(n.targets), n.value))
        elif type(n) in (cst.AugAssign, cst.AnnAssign) and n.value is not None:
            assigns.append(([_stored_in(n.target)], n.value))
        elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in _FILLING and n.args:
            assigns.append(([dotted(n.func.value)], n))  # ``parts.append(x)``: parts holds x
    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            new = [t for t in targets if t is not None and t not in derived]
            if new and _mentions_any(value, derived):
                derived.update(new)
                changed = True
    return finds(
        func.node,
        lambda n: type(n) in (cst.Return, cst.Yield) and n.value is not None and _mentions_any(n.value, derived),
    )


_FILLING = ("append", "extend", "insert", "update", "add", "setdefault")


def _stored_in(target: cst.BaseExpression) -> Optional[str]:
    """The name a write stores into: ``x``, ``self.x``, the ``d`` of ``d["k"]``."""
    while type(target) is cst.Subscript:
        target = target.value
    return dotted(target)


def _tuple_names(targets) -> list:
    out = []
    for t in targets:
        if type(t.target) in (cst.Tuple, cst.List):
            out.extend(dotted(el.value) for el in t.target.elements)
    return out


def _mentions_any(expr: cst.CSTNode, names: set) -> bool:
    return finds(expr, lambda n: type(n) in (cst.Name, cst.Attribute) and dotted(n) in names)


def returns_backpropagated(facts: Facts, func: Optional[FunctionInfo]) -> bool:
    """``func`` calls ``loss.backward()`` and returns ``loss`` as it is (a training step
    ``train_step(batch)`` handing its loss back): what its callers get still holds that
    step's graph."""
    if func is None or func.returns.left:
        return False
    names = {
        dotted(b.node.func.value)
        for b in facts.backwards
        if b.func is func and b.api == "backward" and type(b.node.func) is cst.Attribute
    }
    names.discard(None)
    return bool(names) and any(
        type(n) is cst.Return and n.value is not None and dotted(n.value) in names
        for n in walk(func.node.body, is_nested_scope)
    )


def outlives_call(func: Optional[FunctionInfo], key: Optional[str], before: Optional[Value]) -> bool:
    """A write in ``func`` to ``key`` whose target outlives the call: an attribute of
    ``self`` (``self.running_loss += loss``) or a name the function declares ``global``
    / ``nonlocal``, not made afresh earlier in the same call (``self.total = 0.0``)."""
    if func is None or not key:
        return False
    root = key.split(".", 1)[0]
    params = func.param_names
    on_self = "." in key and bool(params) and root == params[0] and func.cls is not None
    if not on_self and not any(
        type(n) in (cst.Global, cst.Nonlocal) and any(item.name.value == root for item in n.names)
        for n in walk(func.node.body, is_nested_scope)
    ):
        return False
    v = before
    while v is not None and type(v.node) in (cst.Subscript, cst.Attribute) and v.parents:
        v = v.parents[0]
    if v is not None and v.node is not None and type(v.node) not in (cst.Name, cst.Attribute):
        if finds(func.node, lambda n: n is v.node):
            return False  # ``self.total = 0.0`` earlier in this call
    return True


def _callers_in_loop(facts: Facts, func: FunctionInfo, loop: cst.CSTNode) -> list:
    """The functions between ``func`` and the calls of it (or of its callers) that stand
    in ``loop``: those that run in every iteration with it (up to three calls)."""
    out, seen, frontier = [], set(), [func]
    for _ in range(3):
        later = []
        for f in frontier:
            for c in facts.sites_of(f):
                if c.func is None or id(c.func) in seen or any(l is loop for l in c.loops):
                    continue
                seen.add(id(c.func))
                out.append(c.func)
                later.append(c.func)
        frontier = later
    return out


def kept_across_calls(facts: Facts, func: Optional[FunctionInfo], key: Optional[str], before: Optional[Value], loops) -> bool:
    """A write in ``func`` to ``key`` whose object its callers keep across the iterations
    of ``loops`` (those its calls run in: ``loops_around``): a parameter's or a free
    name's (a closure's) object that the flow saw made outside ``func`` and before those
    loops (``losses = []`` before the loop, ``log(loss, losses)`` in it). An object the
    flow does not know (a name, an attribute, a join of several): not known, False."""
    if func is None or not key or not loops:
        return False
    root = key.split(".", 1)[0]
    params = func.param_names
    if func.cls is not None and params and root == params[0]:
        return False  # (``self``'s: ``outlives_call``)
    if root not in params and (root in func.scope.bound or root in func.scope.globals):
        return False  # (a local of the call; a global: ``outlives_call``)
    v = before
    while v is not None and type(v.node) in (cst.Subscript, cst.Attribute) and v.parents:
        v = v.parents[0]
    node = v.node if v is not None else None
    if v is not None and node is None and "carried" in v.tags and v.parents:
        # Carried around a loop: the same object on every path, grown in place (``Value``s
        # of ``Returns.grown`` keep the object's node), or not known.
        nodes = {id(p.node): p.node for p in v.parents}
        node = v.parents[0].node if len(nodes) == 1 else None
    if node is None or type(node) in (cst.Name, cst.Attribute):
        return False
    # Made before the loops -- or before the innermost one that backpropagates in each
    # iteration: ``losses = []`` at the top of each epoch, appended to once per batch
    # step, keeps the epoch's graphs (one made per step, for the step's joint loss, is
    # no accumulation across steps).
    training = [loop for loop in loops if backwards_run_in_loop(facts, loop)]
    if finds(func.node, lambda n: n is node) or any(finds(loop, lambda n: n is node) for loop in (training[-1:] or loops)):
        return False
    # Nor made by a caller on the way that runs in the loops itself (``logs = []`` in a
    # ``train_epoch`` called per iteration): only where the innermost loop stands.
    return not any(finds(f.node, lambda n: n is node) for f in _callers_in_loop(facts, func, loops[-1]))


def backpropagated_by_callers(facts: Facts, func: Optional[FunctionInfo], _seen: Optional[set] = None) -> bool:
    """What ``func`` returns may be backpropagated where it is called: some call site's
    result is, or is returned by its own function to callers that backpropagate it
    (``forward`` returning ``joint_loss(...)``), or a call site is not known (the
    function is called from elsewhere, or from nowhere in the file): unknown means yes."""
    if func is None:
        return True
    seen = _seen if _seen is not None else set()
    if id(func) in seen:
        return False
    seen.add(id(func))
    sites = facts.sites_of(func)
    entry = func.called_in.torch
    if not sites or (entry.origin is not None and entry.origin.kind in ("unknown-entry", "called-elsewhere", "opaque")):
        return True
    used = backpropagated_nodes(facts)
    for c in sites:
        if id(c.node) in used:
            return True
        if c.func is not None and _returned_as_is(c) and backpropagated_by_callers(facts, c.func, seen):
            return True
    return False


def only_called_where(facts: Facts, func: Optional[FunctionInfo], at, depth: int = 3) -> bool:
    """Every call of ``func`` in the file satisfies ``at(call)``, or stands in a function
    of which the same holds (up to ``depth`` calls out): a helper that an evaluation loop
    alone runs. Its calls must all be known (``callers_known``, no other module imports
    the file, no call by its name that resolves elsewhere)."""
    sites = known_sites(facts, func) if depth > 0 else None
    if sites is None:
        return False
    return all(c.func is not func and (at(c) or only_called_where(facts, c.func, at, depth - 1)) for c in sites)


def returned_to_no_backward(facts: Facts, block: cst.CSTNode, func: Optional[FunctionInfo]) -> bool:
    """What ``block`` (a scope's ``with``) makes leaves ``func`` only by being returned
    (no ``yield``, nothing stored into an object or container), and no caller
    backpropagates what ``func`` returns: every call of it is known (``callers_known``,
    no other module imports the file, no call by its name that resolves elsewhere) and
    none's result reaches a backward call, here or returned on
    (``backpropagated_by_callers``)."""
    sites = known_sites(facts, func)
    if sites is None or any(c.target is not func for c in sites):
        return False  # (a call by its name that may run it, or another function so named)
    for n in walk(block, is_nested_scope):
        if type(n) is cst.Yield:
            return False
        if type(n) in (cst.AssignTarget, cst.AugAssign) and not _written_names(n.target, set()):
            return False
    for n in walk(func.node, is_nested_scope):
        if type(n) is cst.Yield:
            return False
    return not backpropagated_by_callers(facts, func)


def _returned_as_is(call) -> bool:
    """``return f(...)``: the call's result is what its function returns."""
    for n in walk(call.func.node.body, is_nested_scope):
        if type(n) is cst.Return and n.value is call.node:
            return True
    return False


def made_this_iteration(v: Value, loop: cst.CSTNode) -> bool:
    """``v`` (or the container it is read from: the ``d`` of ``d[k]``, the ``o`` of
    ``o.x``) was made in ``loop``'s body in the current iteration, not kept from the
    previous one (``loss = a; loss += b`` in one step): the flow's ``carried`` tag is
    absent and its expression is a construction inside the loop, not a read of a name
    the flow does not know."""
    root = v
    while type(root.node) in (cst.Subscript, cst.Attribute) and root.parents:
        root = root.parents[0]
    if carried_tag(loop) in root.tags:
        return False
    if root.node is None and len(root.parents) == 2:
        # one value or the other, by the branch taken (``total = 0`` then, under an
        # ``if``, ``total += aux``): made this iteration when both are
        return all(made_this_iteration(p, loop) for p in root.parents)
    if root.node is None or type(root.node) in (cst.Name, cst.Attribute):
        return False
    if _of_carried_arithmetic(root, carried_tag(loop)):
        return False  # (``running = running * 0.9``: made here, of what the last iteration left)
    return finds(loop, lambda n: n is root.node)


def _of_carried_arithmetic(v: Value, tag: str) -> bool:
    """``v`` is arithmetic on a value the loop carries (its operands, through arithmetic
    and joins only: not what a call made of it)."""
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if tag in x.tags:
            return True
        if x.node is None or type(x.node) in (cst.BinaryOperation, cst.UnaryOperation):
            stack.extend(x.parents)
    return False


def is_object(v: Value) -> bool:
    """Made by a constructor outside the frameworks (``Task(...)``,
    ``DistStatusReporter(...)``, a ``ctor:`` of another package): an object, no array --
    nor is what its methods return a graph as far as the flow can tell."""
    if any(t.startswith("ctor:") and F.framework_of(t[5:]) is None for t in v.tags):
        return True
    node = v.node
    if type(node) is cst.Call and "model" not in v.tags and not any(t.startswith("ctor:") for t in v.tags):
        return is_class_name((dotted(node.func) or "").rsplit(".", 1)[-1])
    return False


def may_carry_graph(v: Value, fw: str, unknown: bool = True) -> bool:
    """``v`` is a source of gradient: a leaf, a recorded model/function call, or
    (``unknown``) a name the flow knows nothing about (a parameter, a global). Asked
    whether a value *is* in a graph (a finding rests on it), pass ``unknown=False``: an
    unknown value never carries a graph by assumption (RULES.md)."""
    if "const" in v.tags:
        return False
    if "leaf" in v.tags:
        return "left-graph" not in v.tags
    if FORWARD <= v.tags and "left-graph" not in v.tags:
        return recorded(v, fw)  # a forward pass's output: the model's parameters (a local model's, too)
    if type(v.node) is cst.Call and not v.pure and "left-graph" not in v.tags:
        return recorded(v, fw) and (unknown or not is_object(v))  # (an environment, a config: no graph)
    if unknown and not v.parents and type(v.node) in (cst.Name, cst.Attribute) and not v.rec[fw].off:
        return not any(t.startswith("attr:") for t in v.tags)
    return False




_GRADIENT_NORMS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_by_global_norm"})


def gradient_norm(v: Value) -> bool:
    """``torch.nn.utils.clip_grad_norm_(model.parameters(), c)``, ``optimizer.clip_grad_norm(c)``:
    a norm of the ``.grad`` buffers, no graph (what its arguments are made of does not matter)."""
    node = v.node
    if type(node) is not cst.Call:
        return False
    name = node.func.attr.value if type(node.func) is cst.Attribute else node.func.value if type(node.func) is cst.Name else None
    return name in _GRADIENT_NORMS


def holds_graph(facts: Facts, value: Value, fw: str) -> bool:
    """``value`` may carry a graph of ``fw``: something it is computed from is a leaf or
    the output of a recorded call of a model or of a function the flow cannot see into --
    not data (a loader's items, moved with ``.to(device)``), not values taken out of the
    graph, not objects (a parsed config), not names nobody knows, not what Python's
    builtins (``enumerate(it)``) make of such."""
    for v in value.ancestors(lambda v: _no_graph_here(v, fw), holders=False):
        if _no_graph_here(v, fw):
            continue
        if "leaf" in v.tags:
            return True
        node = v.node
        if type(node) is cst.Call and not v.pure and recorded(v, fw):
            fact = facts.call_of(node)
            if fact is None or not plain_builtin(facts, fact):
                return True
    return False


def _receiver_only(method: str, fw: str) -> bool:
    """A tensor method differentiable in its receiver alone (``to``, ``view``,
    ``type_as``; the API model): what it returns carries what the receiver carries."""
    op = api.method(method, (fw,))
    return op is not None and op.known and op.diff == frozenset({"self"})


def _no_graph_here(v: Value, fw: str) -> bool:
    tags = v.tags
    if "left-graph" in tags or "const" in tags or DATA_TAGS & tags or is_object(v) or gradient_norm(v) or UNKNOWN_RESULT <= tags:
        return True
    if any(t.startswith("attr:") for t in tags):
        return True
    node = v.node
    if type(node) is cst.Call and type(node.func) is cst.Attribute and v.parents and "leaf" not in tags \
            and _receiver_only(node.func.attr.value, fw):
        return _no_graph_here(v.parents[0], fw)  # ``labels.to(device)``: the receiver decides
    return False


# --- optimizers, models and the tensors that require grad (SL209, SL210) ----------------
def origins(v: Optional[Value], depth: int = 4) -> set:
    """ids of the expressions that made ``v``: its own node, or, for a value joined
    over branches or call sites (no node), its parents' -- the same whatever walk or
    round made the value object (rules compare values of different walks so)."""
    if v is None:
        return set()
    if v.node is not None:
        return {id(v.node)}
    if depth == 0:
        return set()
    out = set()
    for p in v.parents:
        out |= origins(p, depth - 1)
    return out


def optimized(facts: Facts, opt: Optional[Value] = None):
    """What optimizers hold: (the ids of the expressions that made the tensors they are
    given, the ids of those that made the models whose ``.parameters()`` they are given).
    ``opt``: only the optimizer that value holds (its constructor seen by the flow);
    None: every optimizer constructed in the file."""
    if opt is not None:
        made = origins(opt)
        ctors = [c for c in facts.calls if F.is_optimizer_constructor(c.qname) and id(c.node) in made]
    else:
        ctors = [c for c in facts.calls if F.is_optimizer_constructor(c.qname)]
    tensors, models = set(), set()
    for ctor in ctors:
        for arg in ctor.args:
            for v in arg.ancestors():
                if v.node is not None:
                    tensors.add(id(v.node))
                c = facts.call_of(v.node) if type(v.node) is cst.Call else None
                if c is not None and c.method in ("parameters", "named_parameters") and c.receiver is not None:
                    models |= origins(c.receiver)
                    base = c.receiver
                    while type(base.node) is cst.Attribute and base.parents:  # ``net.head.parameters()``
                        base = base.parents[0]
                        models |= origins(base)
    return tensors, models


def names_bound_to(facts: Facts, node: cst.CSTNode) -> set:
    """The dotted names ``name = <node>`` binds (``node`` an expression; for
    ``w.requires_grad_()``, also ``w``)."""
    return set(facts.names.assigned()[0].get(id(node), ()))


def grad_read(facts: Facts, names: set, prefix: bool = False) -> bool:
    """``<name>.grad`` is read somewhere (``prefix``: also ``<name>.x.grad``); not
    ``<name>.grad = None`` nor ``<name>.grad.zero_()``."""
    if not names:
        return False
    grads = facts.names.assigned()[1]
    if names & grads:
        return True
    return prefix and any(g.startswith(m + ".") for g in grads for m in names)


def wanted_as_leaf(facts: Facts, names: set) -> bool:
    """Something expects the tensor bound to ``names`` to be a leaf that gets a gradient:
    its ``.grad`` is read (an attribute ``self.a`` also as ``model.a.grad``: an object's
    field is read through other names), or an optimizer is given it."""
    if not names:
        return False
    if grad_read(facts, names):
        return True
    attrs = {n.rpartition(".")[2] for n in names if "." in n}
    if attrs and any(g.rpartition(".")[2] in attrs for g in facts.names.assigned()[1]):
        return True
    for c in facts.calls:
        if F.is_optimizer_constructor(c.qname) and any(
            dotted(n) in names or (type(n) is cst.Attribute and n.attr.value in attrs)
            for a in c.node.args for n in walk(a.value)
        ):
            return True
    return False


def from_gradient(facts: Facts, value: Optional[Value]) -> bool:
    """``value`` is computed from a gradient (``w - lr * w.grad``, from
    ``torch.autograd.grad(...)``): an update of a parameter, the optimizer's rule."""
    for v in value.ancestors() if value is not None else ():
        node = v.node
        if type(node) is cst.Attribute and node.attr.value == "grad":
            return True
        if type(node) is cst.Call:
            call = facts.call_of(node)
            if call is not None and call.qname in ("torch.autograd.grad", "torch.autograd.functional.vjp"):
                return True
    return False


def written_leaf(m) -> Optional[Value]:
    """The leaf that requires grad whose storage the write ``m`` (a MutationFact of kind
    "augassign", "inplace" or "subscript") lands in: the value written itself, or the
    tensor it is a view of by basic indexing (``c[:] += 1``, ``c[0] = v``,
    ``c[:2].add_(1)``, ``d = c[1:]; d += 1``). None when it is no leaf, or when the view
    may be a copy (``c[idx]`` with an index the flow cannot tell a slice or a number:
    advanced indexing copies, and a write into a copy is no write into the leaf)."""
    if m.kind not in ("augassign", "inplace", "subscript"):
        return None
    v = m.before
    if m.kind == "augassign" and type(m.node.target) is cst.Subscript:
        # ``c[i] += x`` is ``c[i] = c[i] + x``: stored into ``c`` (``before`` is ``c[i]``)
        if v.node is not m.node.target or not v.parents:
            return None
        v = v.parents[0]
    for _ in range(8):
        if v is None or "leaf" in v.tags:
            break
        if type(v.node) is not cst.Subscript or not v.parents or not _basic_index(v.node):
            return None
        v = v.parents[0]
    return v if v is not None and "leaf" in v.tags and "left-graph" not in v.tags else None


def _basic_index(node: cst.Subscript) -> bool:
    """Every index is a slice, an integer literal, ``...`` or ``None``: a view, not a copy."""
    def basic(e) -> bool:
        t = type(e)
        if t is cst.Integer or t is cst.Ellipsis or (t is cst.Name and e.value == "None"):
            return True
        if t is cst.UnaryOperation and type(e.operator) is cst.Minus:
            return type(e.expression) is cst.Integer
        return False

    for el in node.slice:
        s = el.slice
        if type(s) is cst.Slice:
            continue  # (its bounds may be names: still a slice)
        if type(s) is not cst.Index or not basic(s.value):
            return False
    return True


def wanted_as_leaf_after(facts: Facts, func: Optional[FunctionInfo], node: cst.CSTNode, loops, names: set) -> bool:
    """After ``node`` (a statement of ``func``, None: the module), in the same function or
    in a loop around ``node`` (its next iteration), the tensor bound to ``names`` is
    expected to be a leaf: its ``.grad`` is read (not ``.grad = None``, ``.grad.zero_()``),
    or an optimizer is given it. Nested functions are not looked into."""
    if not names:
        return False
    unit = func.node if func is not None else facts.module
    order = {}
    for i, n in enumerate(walk(unit, is_nested_scope)):
        order[id(n)] = i
    if id(node) not in order:
        return False
    start = max(order.get(id(n), -1) for n in walk(node, is_nested_scope))  # (after the statement, not in it)
    within = set()
    for loop in loops:
        within.update(id(n) for n in walk(loop, is_nested_scope))
    skip = set()
    for n in walk(unit, is_nested_scope):
        t = type(n)
        if t in (cst.AssignTarget, cst.AugAssign):
            skip.add(id(n.target))
        elif t is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in ("zero_", "detach_", "fill_"):
            skip.add(id(n.func.value))
    for n in walk(unit, is_nested_scope):
        if id(n) not in within and order.get(id(n), -1) <= start:
            continue
        if type(n) is cst.Attribute and n.attr.value == "grad" and id(n) not in skip and dotted(n.value) in names:
            return True
        if type(n) is cst.Call:
            c = facts.call_of(n)
            if c is not None and F.is_optimizer_constructor(c.qname) and any(
                dotted(m) in names for a in n.args for m in walk(a.value)
            ):
                return True
    return False


def optimized_by_name(facts: Facts, func: Optional[FunctionInfo], opt: Optional[str]) -> set:
    """For an optimizer kept on the object (``self.opt_d``, a method's ``func`` steps it):
    the dotted names of the models whose ``.parameters()`` its constructor, assigned to
    that attribute in a method of the same class, is given (``self.netD``)."""
    if func is None or not opt or not opt.startswith("self."):
        return set()
    owner = func
    while owner.parent is not None:
        owner = owner.parent
    if owner.cls is None:
        return set()
    out = set()
    for c in facts.calls:
        if not F.is_optimizer_constructor(c.qname) or c.func is None:
            continue
        top = c.func
        while top.parent is not None:
            top = top.parent
        if top.cls is not owner.cls or opt not in names_bound_to(facts, c.node):
            continue
        for arg in c.node.args:
            for n in walk(arg.value):
                if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in ("parameters", "named_parameters"):
                    name = dotted(n.func.value)
                    if name is not None:
                        out.add(name)
    return out


# --- optimizers and the models they own -------------------------------------------------
def optimizer_constructor(facts: Facts, value: Optional[Value]):
    """The CallFact of the ``torch.optim.X(...)`` / ``gluon.Trainer(...)`` call that made
    ``value``, when the flow saw it do so."""
    if value is not None and value.node is None and value.parents:
        # A join over branches or iterations (``if epoch % 20 == 0: opt = SGD(...)``, then
        # the optimizer of the iteration before): the one optimizer every joined value is.
        made = {id(v.node): v for v in _joined_leaves(value)}
        value = next(iter(made.values())) if len(made) == 1 else None
    node = getattr(value, "node", None)
    fact = facts.call_of(node) if type(node) is cst.Call else None
    depth = 0
    while fact is not None and fact.target is not None and len(value.parents) == 1 and depth < 4:
        # A local function's call that returns the optimizer it built (``opt =
        # make_opt(model)``, through a runner too): its value is linked to the callee's
        # (``Returns.template``).
        value = value.parents[0]
        fact = facts.call_of(value.node) if type(value.node) is cst.Call else None
        depth += 1
    return fact if fact is not None and F.is_optimizer_constructor(fact.qname) else None


def _joined_leaves(value: Value, depth: int = 0, seen=None) -> List[Value]:
    """The values with an expression of their own that a join (no node: branches, a
    loop's carried value) stands for; a cycle through the carried value adds nothing."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 8:
        return []
    seen.add(id(value))
    if value.node is not None or not value.parents:
        return [value]
    return [leaf for p in value.parents for leaf in _joined_leaves(p, depth + 1, seen)]


def stepped_optimizer(facts: Facts, step):
    """The constructor call of the optimizer ``step`` (``opt.step()``,
    ``scaler.step(opt)``) steps, or None."""
    from scopelint.core.roles import is_scaler_step

    value = step.args[0] if is_scaler_step(step) and step.args else step.receiver
    return optimizer_constructor(facts, value)


def optimizer_owner(facts: Facts, ctor):
    """For ``torch.optim.X(M.parameters(), ...)`` / ``gluon.Trainer(M.collect_params(), ...)``:
    (the ``M.parameters()`` CallFact, the value of ``M``). None for any other spelling of
    the parameters (a list, param groups, a filter, a chain of models)."""
    from scopelint.core.arguments import call_arg

    arg = call_arg(ctor.node, 0, "params")
    expr = arg.value if arg is not None else None
    if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute or expr.func.attr.value not in F.PARAMETER_METHODS:
        return None
    if expr.args or dotted(expr.func.value) is None:
        return None
    fact = facts.call_of(expr)
    if fact is None or fact.receiver is None:
        return None
    return fact, fact.receiver


def optimizer_owners(facts: Facts, ctor):
    """For an optimizer built over the whole parameters of one or more models:
    ``torch.optim.X(M.parameters())``, ``X(list(A.parameters()) + list(B.parameters()))``,
    ``X(itertools.chain(A.parameters(), B.parameters()))``, ``X([*A.parameters(), ...])``,
    param groups ``X([{"params": A.parameters(), "lr": ...}, ...])``: a list of (the
    ``M.parameters()`` CallFact, the value of ``M``), one per model, in order. None when
    any part of the argument is something else (a filter, a slice, a name the flow
    holds): every parameter the optimizer gets must be known to be some model's."""
    from scopelint.core.arguments import call_arg

    arg = call_arg(ctor.node, 0, "params")
    if arg is None:
        return None
    scope = ctor.func.scope if ctor.func is not None else facts.names.root
    out: list = []
    return out if _owner_parts(facts, scope, arg.value, out, 0) and out else None


def _owner_parts(facts: Facts, scope, expr, out: list, depth: int) -> bool:
    """Adds to ``out`` the models whose ``.parameters()`` make up ``expr`` (see
    ``optimizer_owners``); False when a part is anything else. (Module-level, not a
    closure: a recursive closure is a reference cycle that keeps the facts alive.)"""
    if depth > 8:
        return False
    t = type(expr)
    if t is cst.BinaryOperation and type(expr.operator) is cst.Add:
        return _owner_parts(facts, scope, expr.left, out, depth + 1) and _owner_parts(facts, scope, expr.right, out, depth + 1)
    if t in (cst.List, cst.Tuple):
        if not expr.elements:
            return False
        for el in expr.elements:
            if type(el) is cst.StarredElement:
                if not _owner_parts(facts, scope, el.value, out, depth + 1):
                    return False
            elif type(el.value) is cst.Dict:  # a param group: its "params"
                found = False
                for item in el.value.elements:
                    if type(item) is not cst.DictElement or type(item.key) is not cst.SimpleString:
                        return False
                    if item.key.evaluated_value == "params":
                        if found or not _owner_parts(facts, scope, item.value, out, depth + 1):
                            return False
                        found = True
                if not found:
                    return False
            else:
                return False  # a tensor listed by hand: whose, the rule would have to say
        return True
    if t is not cst.Call or any(a.keyword is not None or a.star for a in expr.args):
        return False
    if facts.names.builtin(expr.func, scope) in ("list", "tuple") and len(expr.args) == 1:
        return _owner_parts(facts, scope, expr.args[0].value, out, depth + 1)
    if expr.args and facts.names.qualify(expr.func, scope) == "itertools.chain":
        return all(_owner_parts(facts, scope, a.value, out, depth + 1) for a in expr.args)
    if type(expr.func) is not cst.Attribute or expr.func.attr.value not in F.PARAMETER_METHODS:
        return False
    if expr.args or dotted(expr.func.value) is None:
        return False
    fact = facts.call_of(expr)
    if fact is None or fact.receiver is None:
        return False
    out.append((fact, fact.receiver))
    return True


# Builtins that compute from their arguments only (``sum(losses)``).
_PLAIN_BUILTINS = {"sum", "min", "max", "abs", "float", "len", "zip", "enumerate", "list", "tuple", "range", "reversed", "sorted"}


def plain_builtin(facts: Facts, fact) -> bool:
    """The call is one of Python's builtins that compute from their arguments only
    (``sum(losses)``, ``len(x)``), not a name of the program's that shadows one."""
    return fact.callee in _PLAIN_BUILTINS and bool(
        facts.names.builtin(fact.node.func, fact.func.scope if fact.func else facts.names.root))


def called_object(fact) -> Optional[Value]:
    """The object a call runs: ``net`` in ``net(x)`` / ``net.forward(x)``, when the flow
    knows what it is (None: a function, or a name nobody knows)."""
    if fact.method in CALL_METHODS:
        obj = fact.receiver
    else:
        obj = fact.callee_value
    if obj is None or (not obj.parents and type(obj.node) is not cst.Call):
        return None
    return obj


def graph_sources(facts: Facts, values: Iterable[Value], fw: str):
    """What the gradient of ``values`` can flow into, read back through the flow: the ids
    of every value it passes and the objects whose calls it passes (``(call, object)``).
    It stops at values without a graph: constants, data, values computed with ``fw``
    not recording, values that left the graph (``.detach()``, ``.item()``). None when the
    path goes where the flow cannot follow: a name nobody knows, a call of a function
    or of an unknown object, a model's parameter taken one by one."""
    seen = set()
    objects = []
    todo = list(values)
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        tags = v.tags
        if "const" in tags or "loop-item" in tags or "left-graph" in tags or any(t.startswith("attr:") for t in tags):
            continue
        if v.rec[fw].off and "leaf" not in tags:
            continue  # computed while not recording: no graph to flow back through
        if "leaf" in tags:
            if "param" in tags:
                return None  # ``for p in model.parameters()``: whose, the flow does not say
            continue
        node = v.node
        fact = facts.call_of(node) if type(node) is cst.Call else None
        if fact is not None:
            obj = called_object(fact) if fact.qname is None else None
            if obj is not None:
                objects.append((fact, obj))
                todo.extend(fact.args)
                continue
            if fact.qname is not None or (fact.receiver is not None and fact.method is not None):
                todo.extend(v.parents)
                continue
            if plain_builtin(facts, fact):
                todo.extend(v.parents)
                continue
            return None  # a function (local or not): what it reaches, the flow does not say
        if not v.parents:
            if type(node) in (cst.Name, cst.Attribute) or node is None:
                return None  # a name nobody knows
            continue
        todo.extend(v.parents)
    return seen, objects


def is_deepcopy_of(facts: Facts, obj: Value, owner: Value) -> bool:
    """``obj`` was made by ``copy.deepcopy(owner)``: other parameters, the same values."""
    fact = facts.call_of(obj.node) if type(obj.node) is cst.Call else None
    return fact is not None and fact.qname == "copy.deepcopy" and bool(fact.args) and fact.args[0] is owner


def is_rebuilt_like(facts: Facts, obj: Value, owner: Value) -> bool:
    """``obj`` and ``owner`` were made by two calls of the same model constructor with
    the same arguments, and ``owner`` is not part of ``obj`` (``net = Net()`` again;
    ``target = QNet(...)``). (Two ``nn.Linear`` layers of other sizes are two models.)"""
    a = facts.call_of(obj.node) if type(obj.node) is cst.Call else None
    b = facts.call_of(owner.node) if type(owner.node) is cst.Call else None
    if a is None or b is None or a is b:
        return False
    name_a, name_b = a.qname or a.callee, b.qname or b.callee
    made_model = "model" in obj.tags or (a.qname is not None and F.is_model_constructor(a.qname))
    if not name_a or name_a != name_b or not made_model:
        return False
    if len(a.node.args) != len(b.node.args) or not all(x.deep_equals(y) for x, y in zip(a.node.args, b.node.args)):
        return False
    return all(owner is not v for v in obj.ancestors())


def shares_parameters(facts: Facts, obj: Value, owner: Value) -> bool:
    """``obj`` may hold ``owner``'s parameters: it is ``owner``, or was made from it other
    than by ``copy.deepcopy`` (``nn.DataParallel(m)``, ``m.to(device)``)."""
    if obj is owner:
        return True
    if is_deepcopy_of(facts, obj, owner):
        return False
    return any(v is owner for v in obj.ancestors())


_COPYING_METHODS = ("load_state_dict", "load_parameters", "load_params", "set_data", "copy_")


def grafted_from(facts: Facts, obj: Value, owner: Value) -> bool:
    """Parts of ``owner`` were put into ``obj`` after it was made: ``obj.encoder = ...``
    (any attribute written), or a method of ``obj`` given something made from ``owner``
    (``net2.add(net[0])``, ``copy.add_module("head", model.head)``): they share those
    parameters. Methods that copy values (``load_state_dict``) share nothing."""
    for c in facts.calls:
        if c.receiver is obj and c.method not in _COPYING_METHODS and any(owner is v for a in c.args for v in a.ancestors()):
            return True
    spelled = {c.callee for c in facts.calls if c.callee_value is obj and c.callee}
    spelled |= {c.callee.rsplit(".", 1)[0] for c in facts.calls if c.receiver is obj and c.callee and "." in c.callee}
    if not spelled:
        return False
    for n in walk(facts.module):
        if type(n) is cst.AssignTarget and type(n.target) is cst.Attribute:
            name = dotted(n.target)
            if name is not None and any(name.startswith(s + ".") for s in spelled):
                return True
    return False


# --- train/eval mode (SL207) -------------------------------------------------------------
# PyTorch layers whose forward pass is the same in train() and eval() mode (no Dropout, no
# running statistics, no sampling). Any other layer is taken to depend on the mode.
_MODE_FUNCTIONS = ("dropout", "batch_norm", "instance_norm", "rrelu")
_MODULE_BASES = ("torch.nn.Module", "torch.nn.modules.module.Module")


def mode_free_class(facts: Facts, name: str, seen: Optional[set] = None) -> bool:
    """The model class ``name`` of this file has no layer whose forward pass depends on
    train/eval mode: its ``__init__`` (and the methods it calls on ``self``) builds only
    layers known not to (``nn.Linear``, ``nn.Conv2d``, ``nn.Embedding``, ``nn.ReLU``...,
    or such classes of the file, or model classes of the program's other modules that
    their module found so: ``Context.is_mode_free``), its ``forward`` calls no
    dropout/batch-norm function and reads no ``self.training``, and it holds no module
    handed in from outside. A module-level function of the file it calls counts by its
    body (``mode_free_function``: stylegan2's ``make_kernel``, ``fused_leaky_relu``), one
    of another module of the program as its module found it
    (``Context.is_mode_free_function``). Anything unknown (a class of another package
    or of a module of the program not known mode-free, ``torchvision.models.vgg19(...)``,
    a function handed in) is not. (Reads only the functions, names and program of
    ``facts``: the project layer asks it of an analysis it does not run,
    ``engine._summarize``.)"""
    seen = set() if seen is None else seen
    if name in seen:
        return True
    seen.add(name)
    methods = {f.name: f for f in facts.functions if f.cls is not None and f.parent is None and f.cls.name.value == name}
    init = methods.get("__init__")
    if init is None:
        return False
    bases = init.class_bases
    if not bases or not all(b in _MODULE_BASES or _program(facts).is_mode_free(b)
                            or (b in facts.names.root.bound and mode_free_class(facts, b, seen)) for b in bases):
        return False
    todo, done = ["__init__", "forward"], set()
    passed = {p for p in init.param_names[1:]}
    held_from_outside = set()
    while todo:
        m = methods.get(todo.pop())
        if m is None or m.name in done:
            continue
        done.add(m.name)
        for n in walk(m.node.body):
            t = type(n)
            if t is cst.Attribute and n.attr.value == "training" and dotted(n.value) == "self":
                return False
            if t is cst.Assign and m.name == "__init__" and type(n.value) is cst.Name and n.value.value in passed:
                held_from_outside.update(dotted(tg.target) for tg in n.targets)
            if t is not cst.Call:
                if _names_mode_function(facts, m, n):
                    return False
                continue
            callee = dotted(n.func)
            if callee is not None and callee.startswith("self.") and callee.count(".") == 1:
                if callee[5:] in methods:
                    todo.append(callee[5:])
                elif callee in held_from_outside:
                    return False  # ``self.encoder(x)``: a module handed in, of a class unknown here
                continue
            if type(n.func) is cst.Name and _submodule_of_self(m, n.func.value, held_from_outside):
                continue  # ``for conv in self.convs: x = conv(x)``: what ``__init__`` built
            if not _mode_free_call(facts, m, n, seen):
                return False
    return True


_CONTAINER_BUILTINS = frozenset({"zip", "enumerate", "reversed", "range", "len", "getattr", "list", "tuple", "iter"})


def _submodule_of_self(method: FunctionInfo, name: str, held_from_outside: set) -> bool:
    """``name``, a local of ``method`` (no parameter), is bound only from ``self``'s
    attributes (``for conv1, to_rgb in zip(self.convs, self.to_rgbs)``, ``layer =
    self.layers[i]``, ``getattr(self, f"block{i}")``), none of them a module handed in:
    calling it runs a layer that ``__init__`` built (whose classes are checked there)."""
    if method.name == "__init__" or name in method.param_names or method.scope.binder(name) is not method.scope:
        return False
    sources = []
    for n in walk(method.node.body, is_nested_scope):
        t = type(n)
        if t is cst.For and name in _target_names(n.target):
            sources.append(n.iter)
        elif t is cst.Assign and any(name in _target_names(tg.target) for tg in n.targets):
            sources.append(n.value)
        elif t in (cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.WithItem, cst.ExceptHandler) and name in _target_names(
                getattr(n, "target", None) or getattr(getattr(n, "asname", None), "name", None) or getattr(getattr(n, "name", None), "name", None)):
            return False
    if not sources:
        return False
    for expr in sources:
        selfish = False
        for x in walk(expr):
            tx = type(x)
            if tx is cst.Call and not (type(x.func) is cst.Name and x.func.value in _CONTAINER_BUILTINS):
                return False
            if tx is cst.Attribute and dotted(x) in held_from_outside:
                return False
            if tx is cst.Name and x.value == "self":
                selfish = True
            if tx in (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp):
                return False
        if not selfish:
            return False
    return True


def _target_names(target) -> set:
    if target is None:
        return set()
    t = type(target)
    if t is cst.Name:
        return {target.value}
    if t in (cst.Tuple, cst.List):
        out = set()
        for el in target.elements:
            out |= _target_names(el.value)
        return out
    if t is cst.StarredElement:
        return _target_names(target.value)
    return set()


def mode_free_function(facts: Facts, name: str, seen: Optional[set] = None) -> bool:
    """The module-level function ``name`` of this file builds no layer and computes
    nothing whose result depends on train/eval mode: every call in it (in the functions
    defined in it too) is one ``mode_free_class`` accepts (a ``torch`` function that is
    no dropout/batch norm, a mode-free layer or class, another such function), and it
    reads no ``.training`` (stylegan2's ``fused_leaky_relu``, ``upfirdn2d``,
    ``make_kernel``). A ``torch.autograd.Function`` defined in it is mode-free whatever
    its static methods run: they see no module, only tensors. A decorated function (what
    runs is what the decorator makes of it), a name bound more than once, a call of a
    parameter or of anything unknown: not."""
    seen = set() if seen is None else seen
    key = "def " + name  # (not an identifier: never a class's name)
    if key in seen:
        return True  # (recursion: decided by the rest of the bodies)
    seen.add(key)
    found = [f for f in facts.functions if f.cls is None and f.parent is None and f.name == name]
    if len(found) != 1 or found[0].node.decorators or name in _rebound_names(facts):
        return False
    return _mode_free_code(facts, found[0], seen)


def _mode_free_code(facts: Facts, func: FunctionInfo, seen: set, depth: int = 0) -> bool:
    if depth > 8:
        return False
    infos = facts.memo("infos_by_node", lambda f: {id(g.node): g for g in f.functions})
    for n in walk(func.node.body, _def_or_class):
        t = type(n)
        if t is cst.FunctionDef:
            inner = infos.get(id(n))
            if inner is None or not _mode_free_code(facts, inner, seen, depth + 1):
                return False
            continue
        if t is cst.ClassDef:
            if all(facts.names.qualify(b.value, func.scope) in _AUTOGRAD_FUNCTIONS for b in n.bases) and n.bases:
                continue  # (its static methods see tensors only)
            for m in walk(n.body, _def_or_class):
                if type(m) is cst.ClassDef or (type(m) is cst.FunctionDef and (infos.get(id(m)) is None or not _mode_free_code(facts, infos[id(m)], seen, depth + 1))):
                    return False
            continue
        if t is cst.Attribute and n.attr.value == "training":
            return False
        if t is not cst.Call:
            if _names_mode_function(facts, func, n):
                return False
            continue
        if type(n.func) is cst.Name and _local_definition(func, n.func.value):
            continue  # a function or class defined in it: its body is walked here
        if not _mode_free_call(facts, func, n, seen):
            return False
    return True


_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})


def _def_or_class(node) -> bool:
    return type(node) in (cst.FunctionDef, cst.ClassDef)


def _local_definition(func: FunctionInfo, name: str) -> bool:
    """``name``, read in ``func``, is bound by a ``def`` or ``class`` statement of a
    function (``func`` or one it is nested in) and by nothing else there."""
    scope = func.scope.binder(name)
    node = getattr(scope, "node", None)
    if type(node) is not cst.FunctionDef:
        return False
    defs = 0
    for n in walk(node.body, is_nested_scope):
        t = type(n)
        if t in (cst.FunctionDef, cst.ClassDef) and n.name.value == name:
            defs += 1
        elif t in (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For) and type(n.target) is cst.Name and n.target.value == name:
            return False
        elif t is cst.NamedExpr and type(n.target) is cst.Name and n.target.value == name:
            return False
    return defs == 1


def _rebound_names(facts: Facts) -> frozenset:
    """Names the module binds other than by one ``def`` or ``class`` (an assignment, an
    import, a second definition): which object a call of them runs is not told here."""
    found = getattr(facts, "_rebound_names", None)
    if found is None:
        counts: dict = {}
        for stmt in facts.module.body:
            if type(stmt) in (cst.FunctionDef, cst.ClassDef):
                counts[stmt.name.value] = counts.get(stmt.name.value, 0) + 1
        other = set()
        for n in walk(facts.module, is_nested_scope):  # (module level: not the functions' locals)
            t = type(n)
            if t in (cst.AssignTarget, cst.AnnAssign, cst.AugAssign) or t is cst.For or t is cst.WithItem:
                target = n.target if t is not cst.WithItem else n.asname.name if n.asname is not None else None
                if type(target) is cst.Name:
                    other.add(target.value)
            elif t in (cst.Import, cst.ImportFrom) and type(n.names) is not cst.ImportStar:
                other.update((a.asname.name.value if a.asname is not None and type(a.asname.name) is cst.Name
                              else dotted(a.name) or "").split(".", 1)[0] for a in n.names)
        found = frozenset(other | {k for k, c in counts.items() if c > 1})
        try:
            facts._rebound_names = found  # type: ignore[attr-defined]
        except AttributeError:
            pass
    return found


def _names_mode_function(facts: Facts, func: FunctionInfo, node) -> bool:
    """A reference (not a call) to PyTorch's dropout/batch-norm function or layer
    (``functools.partial(F.dropout, p=0.1)``, ``norm=nn.BatchNorm2d``): what calls it
    is not known here."""
    t = type(node)
    if t is cst.Attribute:
        word = node.attr.value.lower()
    elif t is cst.Name:
        word = node.value.lower()
    else:
        return False
    if not (any(k in word for k in _MODE_FUNCTIONS) or word in _MODE_LAYER_WORDS):
        return False
    qname = facts.names.qualify(node, func.scope)
    return qname is not None and F.framework_of(qname) == F.TORCH


# Layers whose forward pass depends on the mode, as a name may reference them lowercased.
_MODE_LAYER_WORDS = frozenset({"batchnorm1d", "batchnorm2d", "batchnorm3d", "syncbatchnorm", "instancenorm1d",
                               "instancenorm2d", "instancenorm3d", "alphadropout", "featurealphadropout"})
# Modules of the standard library (and numpy) whose functions build no layer and take no
# module to copy: a call of them is mode-free (``math.sqrt``, ``random.randint``,
# ``warnings.warn``, ``np.prod``). (Not ``copy``: ``copy.deepcopy(layer)`` clones a module
# handed in, of a class unknown here.)
_MODE_FREE_LIBRARIES = frozenset({"math", "cmath", "random", "warnings", "logging", "numbers", "itertools", "functools",
                                  "operator", "collections", "typing", "abc", "os", "sys", "time", "re", "string", "numpy"})


def _mode_free_call(facts: Facts, func: FunctionInfo, node: cst.Call, seen: Optional[set] = None) -> bool:
    qname = facts.names.qualify(node.func, func.scope)
    last = (qname or dotted(node.func) or "").rsplit(".", 1)[-1]
    if qname is not None:
        program = _program(facts)
        if program.is_model_class(qname):
            return program.is_mode_free(qname)  # a model class of another module of the program
        if program.is_mode_free_function(qname):
            return True  # a function of another module of the program that its module found mode-free
        if qname.split(".", 1)[0] in _MODE_FREE_LIBRARIES:
            return not any(k in last.lower() for k in _MODE_FUNCTIONS)
        if F.framework_of(qname) != F.TORCH:
            return False  # (another package's model, a torchvision network: unknown)
        if is_class_name(last) and not qname.startswith("torch.nn.init"):
            layer = api.layer(qname)
            if layer is not None:  # (the API model: False mode-free; None a container, whose layers this code builds)
                return layer["mode"] is not True
            return qname in F.PARAMETER_CLASSES or last.endswith("Loss") or not qname.startswith("torch.nn.")
        return not any(k in last.lower() for k in _MODE_FUNCTIONS)
    if type(node.func) is cst.Name:
        if facts.names.builtin(node.func, func.scope) is not None:
            return True  # ``super()``, ``list(...)``, ``range(...)``
        name = node.func.value
        if name in facts.names.root.bound and func.scope.binder(name) is facts.names.root:
            if any(f.cls is not None and f.cls.name.value == name for f in facts.functions):
                return mode_free_class(facts, name, seen)
            if any(f.cls is None and f.parent is None and f.name == name for f in facts.functions):
                return mode_free_function(facts, name, seen if seen is not None else set())
        return False  # a function or class the file does not define: unknown
    # A method of something other than ``self`` (``self.g.num_nodes()``, ``super().__init__()``).
    return not any(k in last.lower() for k in _MODE_FUNCTIONS)


def model_class_of(facts: Facts, call) -> Optional[str]:
    """The class of this file whose instance a model call runs: ``self(...)`` /
    ``self.forward(...)`` in a method of a model class, or a value made by ``C(...)``
    (also through ``.to(device)``, ``.cuda()``, a branch that rebinds it so); or, made by
    a model class of another module of the program, that class's dotted name as this
    module spells it (``model.Net``: ``Context.model_classes``)."""
    callee = call.callee or ""
    if call.method in ("forward", "__call__"):
        callee = callee.rsplit(".", 1)[0]
    if callee == "self" and call.func is not None:
        top = call.func
        while top.parent is not None:
            top = top.parent
        return top.cls.name.value if top.cls is not None and top.in_model_class else None
    value = call.callee_value if call.method not in ("forward", "__call__") else call.receiver
    return class_of_value(facts, value)


def class_of_value(facts: Facts, value: Optional[Value]) -> Optional[str]:
    """The model class (of this file, or of another module of the program, dotted) whose
    instance ``value`` is, where the flow tells (see ``model_class_of``)."""
    found = set()
    todo, seen = [value] if value is not None else [], set()
    while todo:
        v = todo.pop()
        if id(v) in seen or len(seen) > 50:
            continue
        seen.add(id(v))
        classes = {t[9:] for t in v.tags if t.startswith("instance:")}
        if not classes:  # ``Net(...)`` of ``from model import Net``
            classes = {t[5:] for t in v.tags if t.startswith("ctor:") and _program(facts).is_model_class(t[5:])}
        if classes:
            found |= classes
            continue
        node = v.node
        if node is None:
            todo.extend(v.parents)  # joined over branches
        elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("to", "cuda", "cpu", "float", "double", "half") and v.parents:
            todo.append(v.parents[0])
        else:
            return None  # made some other way: unknown
    return found.pop() if len(found) == 1 else None


def _program(facts: Facts) -> Context:
    """What the other modules of the program told the analysis of ``facts``."""
    return facts.program if facts.program is not None else NO_CONTEXT


def eval_changes_nothing(facts: Facts, call) -> bool:
    """The model a call runs is of a class of this file with no train/eval-sensitive layer,
    or of a model class of another module of the program that its module found so:
    whether it is in ``eval()`` changes nothing."""
    name = model_class_of(facts, call)
    if name is None:
        return _mode_free_layer(facts, call)
    if _program(facts).is_model_class(name):
        return _program(facts).is_mode_free(name)
    return mode_free_class(facts, name)


def model_made_known(facts: Facts, call) -> bool:
    """What made the model a call runs is known: a class of this file or of the program,
    or a model constructor call the flow saw (``nn.Sequential(...)`` handed down to a helper):
    ``eval_changes_nothing`` then answers from knowledge, not from ignorance."""
    if model_class_of(facts, call) is not None:
        return True
    value = call.callee_value if call.method not in ("forward", "__call__") else call.receiver
    return type(getattr(value, "node", None)) is cst.Call and made_model(value)


def value_mode_free(facts: Facts, value: Optional[Value]) -> bool:
    """``value`` is a model of a class with no train/eval-sensitive layer (see
    ``eval_changes_nothing``): a model handed to a helper that runs it."""
    name = class_of_value(facts, value)
    if name is None:
        return _made_as_mode_free_layer(facts, value, facts.names.root)
    if _program(facts).is_model_class(name):
        return _program(facts).is_mode_free(name)
    return mode_free_class(facts, name)


def constructs_a_class_of_the_file(facts: Facts, call) -> bool:
    """``ResNet(BasicBlock, [2, 2, 2, 2])`` where ``ResNet`` is a class this file defines:
    a constructor, no forward pass, whatever its name says (3D-ResNets-PyTorch's
    ``generate_model``)."""
    func = call.node.func
    if type(func) is not cst.Name or call.func is None or call.func.scope.binder(func.value) is not facts.names.root:
        return False
    return func.value in _classes_with_methods(facts) and func.value not in _rebound_names(facts)


def _classes_with_methods(facts: Facts) -> frozenset:
    """The names of the file's classes that define a method (kept on ``facts``: every
    call asks)."""
    found = getattr(facts, "_classes_with_methods", None)
    if found is None:
        found = frozenset(f.cls.name.value for f in facts.functions if f.cls is not None)
        try:
            facts._classes_with_methods = found  # type: ignore[attr-defined]
        except AttributeError:
            pass
    return found


def held_by_no_optimizer(facts: Facts, value: Optional[Value]) -> bool:
    """Every optimizer of the file is built over known models' parameters, and none of them
    shares ``value``'s (a frozen feature extractor for a perceptual loss)."""
    if value is None:
        return False
    ctors = [c for c in facts.calls if F.is_optimizer_constructor(c.qname)]
    if not ctors:
        return False
    mine = _module_chain(value)
    for ctor in ctors:
        owners = optimizer_owners(facts, ctor)
        if owners is None:
            return False
        for _, owner in owners:
            theirs = _module_chain(owner)
            if not mine or not theirs or mine & theirs:
                return False
    return True


def _module_chain(value: Value) -> set:
    """ids of the expressions a module value was made through: itself, what it is a
    ``.to(device)`` / wrapper / attribute of, the branches it was joined over."""
    out, todo, seen = set(), [value], set()
    while todo:
        v = todo.pop()
        if id(v) in seen or len(seen) > 50:
            continue
        seen.add(id(v))
        if v.node is None:
            todo.extend(v.parents)
            continue
        out.add(id(v.node))
        if type(v.node) in (cst.Call, cst.Attribute) and v.parents:
            todo.append(v.parents[0])
    return out


def _mode_free_layer(facts: Facts, call) -> bool:
    """The model a call runs is one layer of PyTorch with no train/eval behaviour built
    right there (``model = nn.Linear(784, 10)``), or an ``nn.Sequential`` of such layers:
    ``eval()`` changes nothing."""
    value = call.callee_value if call.method not in ("forward", "__call__") else call.receiver
    return _made_as_mode_free_layer(facts, value, call.func.scope if call.func is not None else facts.names.root)


def _made_as_mode_free_layer(facts: Facts, value: Optional[Value], scope) -> bool:
    node = getattr(value, "node", None)
    if type(node) is not cst.Call:
        return False

    def layer(expr) -> Optional[str]:
        qname = facts.names.qualify(expr.func, scope) if type(expr) is cst.Call else None
        return qname if qname is not None and qname.startswith("torch.nn.") else None

    made = layer(node)
    if made is not None and api.canonical(made) == "torch.nn.Sequential":
        return bool(node.args) and all(not a.star and a.keyword is None and api.mode_free_layer(layer(a.value)) for a in node.args)
    return api.mode_free_layer(made)


def params_frozen_at(call) -> bool:
    """The model a call runs (``G(z)``, ``self.netG(z)``: ``CallFact.callee``) may have its
    parameters' ``requires_grad`` off there (``CallFact.frozen``: frozen by a loop, by
    ``requires_grad_(False)`` or by a local helper such as stylegan2's
    ``requires_grad(generator, False)``): its output may hold no graph into it."""
    if not call.frozen:
        return False
    callee = model_called(call)
    return bool(callee) and any(f == callee or callee.startswith(f + ".") for f in call.frozen)


def frozen_by_the_file(facts: Facts, name: Optional[str]) -> bool:
    """The file freezes parameters of the model ``name`` (``name.requires_grad_(False)``,
    or ``p.requires_grad = False`` in a loop over ``name.parameters()`` /
    ``name.named_parameters()``): a linear probe on frozen features keeps it in eval mode
    on purpose (moco-v3's and simsiam's ``main_lincls.py``, barlowtwins' ``evaluate.py``)."""
    if not name:
        return False
    found = getattr(facts, "_frozen_models", None)
    if found is None:
        found = set()
        for n in walk(facts.module):
            t = type(n)
            if t is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "requires_grad_" and n.args \
                    and type(n.args[0].value) is cst.Name and n.args[0].value.value == "False":
                target = dotted(n.func.value)
                if target:
                    found.add(target)
            elif t is cst.For and type(n.iter) is cst.Call and type(n.iter.func) is cst.Attribute \
                    and n.iter.func.attr.value in ("parameters", "named_parameters"):
                model = dotted(n.iter.func.value)
                if model and any((type(m) is cst.Assign and len(m.targets) == 1 and type(m.targets[0].target) is cst.Attribute
                                  and m.targets[0].target.attr.value == "requires_grad" and type(m.value) is cst.Name
                                  and m.value.value == "False") or (type(m) is cst.Call and _freezes_item(facts, m, n.target))
                                 for m in walk(n.body)):
                    found.add(model)
        facts._frozen_models = found
    return any(f == name or f.startswith(name + ".") for f in found)


def _freezes_item(facts: Facts, call: cst.Call, target: cst.BaseExpression) -> bool:
    """``call`` hands the item of a loop over parameters (its ``target``) to a function
    of the file that turns its ``requires_grad`` off (``summaries.item_freeze``)."""
    from scopelint.core.summaries import _handed_item_freeze
    from scopelint.core.syntax import literal_bool

    fact = facts.call_of(call)
    func = getattr(fact, "target", None)
    if func is None:
        return False
    if type(target) is cst.Tuple and len(target.elements) == 2:
        target = target.elements[1].value
    if type(target) is not cst.Name:
        return False
    handed = _handed_item_freeze(call, target.value, func, anywhere=True)
    return handed is not None and handed[1] is not None and literal_bool(handed[1]) is False
