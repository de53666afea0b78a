"""Summaries of a function that its callers apply, read from its code (not from its walk):
what it freezes (``requires_grad`` set on what it is handed: ``item_freeze``,
``freeze_effects``, ``freezing_loop``) and what it detaches in place (``detaches_in_place``,
``detached_free_names``). The walk's own summaries (``Returns``, ``GradEffects``, the
train/eval effects) are computed in ``flow`` and have their types in ``facts``."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from scopelint.core.arguments import argument_for, bound_params, call_arg, param_default, spelled_at_call
from scopelint.core.facts import FunctionInfo
from scopelint.core.names import dotted
from scopelint.core.syntax import finds, literal_bool, statements, walk


def item_freeze(info: FunctionInfo, anywhere: bool = False) -> Optional[Tuple[str, Optional[cst.BaseExpression]]]:
    """``def freeze(p, flag=False): p.requires_grad = flag`` (or ``p.requires_grad_(flag)``),
    the first statement of its body that sets a parameter's ``requires_grad``: (``p``,
    ``flag``) in its spelling (None: the call's default, True). ``anywhere``: also one
    under an ``if`` or in a loop (it may set it)."""
    body = info.node.body
    params = info.param_names
    lines = [n for n in walk(body) if type(n) is cst.SimpleStatementLine] if anywhere else \
        (body.body if type(body) is cst.IndentedBlock else ())
    for line in lines:
        if type(line) is not cst.SimpleStatementLine:
            continue
        for small in line.body:
            if type(small) is cst.Assign and len(small.targets) == 1:
                t = small.targets[0].target
                if type(t) is cst.Attribute and t.attr.value == "requires_grad" and type(t.value) is cst.Name and t.value.value in params:
                    return t.value.value, small.value
            call = small.value if type(small) is cst.Expr else None
            if type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "requires_grad_" \
                    and type(call.func.value) is cst.Name and call.func.value.value in params:
                arg = call_arg(call, 0, "requires_grad")
                return call.func.value.value, arg.value if arg is not None else None
    return None


def _flag_at(call: cst.Call, target: FunctionInfo, flag: Optional[cst.BaseExpression]) -> Optional[Tuple[bool, Optional[cst.BaseExpression]]]:
    """A ``requires_grad`` flag of ``target`` (its spelling; None: True) as ``call``
    spells it: a parameter through its argument or its default, a literal as it is;
    None where the call cannot spell it (a name of the callee's own)."""
    if flag is None or literal_bool(flag) is not None:
        return True, flag
    if type(flag) is cst.Name and flag.value in target.param_names:
        given = argument_for(call, bound_params(call, target), flag.value)
        if given is not None:
            return True, given.value
        default = param_default(target, flag.value)
        return (True, default) if default is not None else None
    return None


def _handed_item_freeze(call: cst.Call, item: str, target: FunctionInfo, anywhere: bool = False) -> Optional[Tuple[bool, Optional[cst.BaseExpression]]]:
    """``freeze(p, False)`` of a loop over parameters whose item is ``p``, ``target`` the
    function it calls (``item_freeze``): (True, the flag as the call spells it)."""
    found = item_freeze(target, anywhere)
    if found is None:
        return None
    param, flag = found
    arg = argument_for(call, bound_params(call, target), param)
    if arg is None or type(arg.value) is not cst.Name or arg.value.value != item:
        return None
    return _flag_at(call, target, flag)


def freezing_loop(stmt: cst.For, resolve=None) -> List[Tuple[str, Optional[cst.BaseExpression]]]:
    """``for p in G.parameters(): p.requires_grad = flag`` (or ``p.requires_grad_(flag)``,
    or a call handing ``p`` to a function that does so: ``resolve`` maps the call to it;
    ``named_parameters()`` with ``for name, p in ...``): [(``G``, ``flag``)] (None: the
    call's default, True)."""
    it = stmt.iter
    if type(it) is not cst.Call or type(it.func) is not cst.Attribute or it.func.attr.value not in ("parameters", "named_parameters"):
        return []
    model = dotted(it.func.value)
    target = stmt.target
    if it.func.attr.value == "named_parameters" and type(target) is cst.Tuple and len(target.elements) == 2:
        target = target.elements[1].value
    if model is None or type(target) is not cst.Name:
        return []
    item = target.value
    defs = {line.name.value: line for line in statements(stmt.body) if type(line) is cst.FunctionDef}
    for line in statements(stmt.body):
        if type(line) is not cst.SimpleStatementLine:
            continue
        for small in line.body:
            if type(small) is cst.Assign and len(small.targets) == 1:
                t = small.targets[0].target
                if type(t) is cst.Attribute and t.attr.value == "requires_grad" and type(t.value) is cst.Name and t.value.value == item:
                    return [(model, small.value)]
            call = small.value if type(small) is cst.Expr else None
            if type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "requires_grad_" \
                    and type(call.func.value) is cst.Name and call.func.value.value == item:
                arg = call_arg(call, 0, "requires_grad")
                return [(model, arg.value if arg is not None else None)]
            if resolve is not None and type(call) is cst.Call:
                target = resolve(call)
                handed = _handed_item_freeze(call, item, target) if target is not None else None
                if handed is not None:
                    return [(model, handed[1])]
                closure = _closure_run(call, defs, target)
                found = _closure_item_freeze(closure, item) if closure is not None else None
                if found is not None:
                    return [(model, found)]
    return []


def _closure_run(call: cst.Call, defs: Dict[str, cst.FunctionDef], target: Optional[FunctionInfo]) -> Optional[cst.FunctionDef]:
    """The function defined in the loop's body (``defs``) that ``call``, a statement of
    it, runs: called itself with no argument (``step()``), or handed to ``target``, a
    runner of the file that calls that parameter in a statement of its body
    (``run(step)`` with ``def run(fn, *a): return fn(*a)``)."""
    if type(call.func) is cst.Name and call.func.value in defs and not call.args:
        return defs[call.func.value]
    if target is None:
        return None
    for param in target.param_names:
        arg = argument_for(call, bound_params(call, target), param)
        if arg is None or type(arg.value) is not cst.Name or arg.value.value not in defs:
            continue
        body = target.node.body
        for line in (body.body if type(body) is cst.IndentedBlock else ()):
            small = line.body[0] if type(line) is cst.SimpleStatementLine and len(line.body) == 1 else None
            run = small.value if type(small) in (cst.Expr, cst.Return) else None
            if type(run) is cst.Call and type(run.func) is cst.Name and run.func.value == param:
                return defs[arg.value.value]
    return None


def _closure_item_freeze(fdef: cst.FunctionDef, item: str) -> Optional[cst.BaseExpression]:
    """``def step(): p.requires_grad = flag`` (a statement of its body), ``p`` and the
    flag's names read from the enclosing loop's scope: the flag, as that scope spells it
    (a literal, or a name the closure neither takes nor binds)."""
    body = fdef.body
    params = {q.name.value for q in (*fdef.params.posonly_params, *fdef.params.params, *fdef.params.kwonly_params)}
    own = params | {n.value for n in walk(body) if type(n) is cst.AssignTarget for n in [n.target] if type(n) is cst.Name}
    if item in own:
        return None
    for line in (body.body if type(body) is cst.IndentedBlock else ()):
        if type(line) is not cst.SimpleStatementLine:
            continue
        for small in line.body:
            if type(small) is cst.Assign and len(small.targets) == 1:
                t = small.targets[0].target
                flag = small.value
                if type(t) is cst.Attribute and t.attr.value == "requires_grad" and type(t.value) is cst.Name and t.value.value == item \
                        and (literal_bool(flag) is not None or (type(flag) is cst.Name and flag.value not in own)):
                    return flag
    return None


def freeze_effects(info: FunctionInfo, resolve=None, depth: int = 2, cache: bool = True) -> Tuple[Tuple[str, Optional[cst.BaseExpression]], ...]:
    """What ``info`` does to its models' ``requires_grad`` wherever it runs to its end (its
    body's own statements: not under an ``if`` or a ``try``): (model, flag) in its
    spelling, in order (``def requires_grad(model, flag=True): for p in
    model.parameters(): p.requires_grad = flag``: ``(("model", flag),)``). With
    ``resolve`` (``(call, function it is in) -> the function of the file it calls``), also
    what the functions it calls so do (``depth`` levels down), spelled through the call,
    and a loop over parameters handing each to a function that sets it (``item_freeze``)."""
    found = _FREEZES.get(id(info))
    if found is not None and found[0] is info and found[2] == (resolve is not None):
        return found[1]
    out: List[Tuple[str, Optional[cst.BaseExpression]]] = []
    body = info.node.body
    here = (lambda c: resolve(c, info)) if resolve is not None else None
    for stmt in (body.body if type(body) is cst.IndentedBlock else ()):
        if type(stmt) is cst.For:
            out.extend(freezing_loop(stmt, here))
        elif type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                call = small.value if type(small) is cst.Expr else None
                if type(call) is not cst.Call:
                    continue
                if type(call.func) is cst.Attribute and call.func.attr.value == "requires_grad_":
                    model = dotted(call.func.value)
                    arg = call_arg(call, 0, "requires_grad")
                    if model is not None:
                        out.append((model, arg.value if arg is not None else None))
                elif here is not None and depth:
                    target = here(call)
                    if target is None or target is info:
                        continue
                    for name, flag in freeze_effects(target, resolve, depth - 1, False):
                        spelled = spelled_at_call(call, target.param_names, target.cls is not None, name)
                        spelled_flag = _flag_at(call, target, flag)
                        if spelled is not None and spelled_flag is not None:
                            out.append((spelled, spelled_flag[1]))
    result = tuple(out)
    if cache:
        if len(_FREEZES) > 4096:
            _FREEZES.clear()
        _FREEZES[id(info)] = (info, result, resolve is not None)
    return result


_FREEZES: Dict[int, Tuple[FunctionInfo, tuple, bool]] = {}


def detaches_in_place(info: FunctionInfo, resolve=None, depth: int = 2) -> Tuple[Tuple[str, cst.Call], ...]:
    """The parameters ``info`` detaches in place wherever it runs to its end (``p.detach_()``
    as a statement of its body, not under an ``if``): the caller's argument is detached
    after the call (``_detach(s)`` in d2l's ``for s in state: s.detach_()``): (parameter,
    its ``detach_()`` call). Also ``for s in p: s.detach_()`` (every item of ``p``), and,
    with ``resolve`` (``(call, function it is in) -> the function of the file it runs``),
    a call of a function that so detaches its argument (``depth`` levels down)."""
    body = info.node.body
    params = info.param_names
    out = []
    for line in (body.body if type(body) is cst.IndentedBlock else ()):
        if type(line) is cst.For:
            name = line.iter.value if type(line.iter) is cst.Name else None
            if name in params and type(line.target) is cst.Name and line.orelse is None:
                inner = _detaching_statement(line.body, line.target.value, info, resolve, depth)
                if inner is not None:
                    out.append((name, inner))
            continue
        for p in params:
            inner = _detaching_statement(line, p, info, resolve, depth, (cst.SimpleStatementLine,))
            if inner is not None:
                out.append((p, inner))
    return tuple(out)


def _detaching_statement(body, name: str, info: FunctionInfo, resolve, depth: int, kinds=None) -> Optional[cst.Call]:
    """The ``detach_()`` call by which a statement of ``body`` (a block, or one statement:
    ``kinds``) detaches ``name`` in place: ``name.detach_()``, or (with ``resolve``) a
    call handing ``name`` to a function that detaches that parameter (``detaches_in_place``)."""
    lines = [body] if kinds is not None else list(statements(body))
    for line in lines:
        if type(line) is not cst.SimpleStatementLine:
            continue
        for small in line.body:
            call = small.value if type(small) is cst.Expr else None
            if type(call) is not cst.Call:
                continue
            if type(call.func) is cst.Attribute and call.func.attr.value == "detach_" and not call.args \
                    and type(call.func.value) is cst.Name and call.func.value.value == name:
                return call
            if resolve is None or depth <= 0:
                continue
            target = resolve(call, info)
            if target is None or target is info:
                continue
            for p, inner in detaches_in_place(target, resolve, depth - 1):
                if spelled_at_call(call, target.param_names, target.cls is not None, p) == name:
                    return inner
    return None


def detached_free_names(info: FunctionInfo) -> Tuple[Tuple[str, cst.Call], ...]:
    """The names of its enclosing scope (not parameters, not bound in it) that ``info``
    detaches in place wherever it runs to its end (``h.detach_()`` as a statement of its
    body): a closure run where the caller's ``h`` is (``run(step)`` with ``def step():
    h.detach_()``). (name, its ``detach_()`` call)."""
    params = set(info.param_names)
    bound = info.scope.bound
    out = []
    for call in _statement_calls(info):
        if type(call.func) is cst.Attribute and call.func.attr.value == "detach_" and not call.args \
                and type(call.func.value) is cst.Name and call.func.value.value not in params and call.func.value.value not in bound:
            out.append((call.func.value.value, call))
    return tuple(out)


def _statement_calls(info: FunctionInfo, surely: bool = False):
    """The calls that are whole statements of ``info``'s body (not under an ``if``, not
    in a loop): what runs wherever it runs to its end. ``surely``: only those before
    any statement that may leave the body early (an ``if a.grad is not None: return``),
    so that they run wherever it runs at all."""
    body = info.node.body
    for line in (body.body if type(body) is cst.IndentedBlock else ()):
        if type(line) is cst.SimpleStatementLine:
            for small in line.body:
                if type(small) is cst.Expr and type(small.value) is cst.Call:
                    yield small.value
                elif surely and type(small) in (cst.Return, cst.Raise):
                    return
        elif surely and finds(line, lambda n: type(n) in (cst.Return, cst.Raise)):
            return


def calls_surely(info: FunctionInfo, param: str) -> bool:
    """``info`` calls its parameter ``param`` wherever it runs (``return fn(*args)``, or
    ``fn()`` as a statement before anything that may leave early): a runner that always
    runs the callback it is handed."""
    body = info.node.body
    for line in (body.body if type(body) is cst.IndentedBlock else ()):
        if type(line) is cst.SimpleStatementLine:
            for small in line.body:
                value = small.value if type(small) in (cst.Expr, cst.Return) else None
                if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == param:
                    return True
                if type(small) in (cst.Return, cst.Raise):
                    return False
        elif finds(line, lambda n: type(n) in (cst.Return, cst.Raise)):
            return False
    return False


def attaches_grad(info: FunctionInfo, resolve=None, depth: int = 2) -> Tuple[Tuple[str, cst.Call], ...]:
    """The names ``info`` makes MXNet leaves of wherever it runs to its end
    (``x.attach_grad()`` as a statement of its body, not under an ``if``): its parameters
    (the caller's argument is a new leaf after the call) and the names of its enclosing
    scope it does not bind (a closure's or a module-level function's free names). With
    ``resolve`` (as ``detaches_in_place``), also through a statement calling a function
    of the file that so attaches (``depth`` levels down). (name, its ``attach_grad()``
    call)."""
    bound = info.scope.bound
    params = set(info.param_names) - _rebound(info.node.body)  # (``w = w - lr * w.grad``: its own ``w``)
    out = []
    for call in _statement_calls(info, surely=True):
        if type(call.func) is cst.Attribute and call.func.attr.value == "attach_grad" \
                and type(call.func.value) is cst.Name and (call.func.value.value in params or call.func.value.value not in bound):
            out.append((call.func.value.value, call))
        elif resolve is not None and depth > 0:
            target = resolve(call, info)
            if target is None or target is info:
                continue
            for name, inner in attaches_grad(target, resolve, depth - 1):
                if name in target.param_names:
                    name = spelled_at_call(call, target.param_names, target.cls is not None, name)
                elif name in bound:  # (the callee's free name is not this one)
                    continue
                if name is not None and "." not in name and (name in params or name not in bound):
                    out.append((name, inner))
    return tuple(out)


def _rebound(body: cst.CSTNode) -> set:
    """The plain names that a statement of ``body`` (nested functions too: a superset)
    binds again: assignment, loop and ``with`` targets, ``:=``."""
    out = set()
    for n in walk(body):
        t = type(n)
        target = (n.target if t in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)
                  else n.name if t is cst.AsName else None)
        todo = [target] if target is not None else []
        while todo:
            x = todo.pop()
            if type(x) is cst.Name:
                out.add(x.value)
            elif type(x) in (cst.Tuple, cst.List):
                todo.extend(e.value for e in x.elements)
            elif type(x) is cst.StarredElement:
                todo.append(x.value)
    return out


def frozen_by_constructor(init: FunctionInfo) -> Optional[Tuple[str, int]]:
    """What a class's ``__init__`` (``init``) does to its own parameters wherever it runs
    to its end: ``("", -1)`` it turns every one's ``requires_grad`` off (``for p in
    self.parameters(): p.requires_grad = False``, ``self.requires_grad_(False)``);
    ``(param, position)``: it sets them to its parameter ``param`` (at ``position`` after
    ``self``), whose default is ``False`` (pytorch-fid's ``InceptionV3(...,
    requires_grad=False)``, a perceptual loss's VGG): frozen unless the call passes a true
    one; None: nothing known."""
    flags = [flag for model, flag in freeze_effects(init) if model == "self"]
    if not flags or flags[-1] is None:
        return None
    flag = flags[-1]
    if literal_bool(flag) is False:
        return ("", -1)
    if type(flag) is not cst.Name:
        return None
    params = init.param_names[1:]
    if flag.value not in params:
        return None
    default = param_default(init, flag.value)
    if default is None or literal_bool(default) is not False:
        return None
    return (flag.value, params.index(flag.value))


def frozen_at(call: cst.Call, frozen: Optional[Tuple[str, int]]) -> bool:
    """The construction ``call`` of a class whose constructor does ``frozen``
    (``frozen_by_constructor``) makes an instance whose parameters all have
    ``requires_grad`` off."""
    if frozen is None:
        return False
    param, position = frozen
    if not param:
        return True
    if any(a.star for a in call.args):
        return False
    arg = call_arg(call, position if position >= 0 else None, param)
    return arg is None or literal_bool(arg.value) is False
