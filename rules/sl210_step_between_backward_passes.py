from typing import Optional

import libcst as cst

from scopelint.core.arguments import call_arg
from scopelint.core.syntax import literal_bool
from scopelint.core.frameworks import TORCH
from scopelint.core.names import dotted
from scopelint.core.queries import optimized, optimized_by_name, origins
from scopelint.core.roles import is_model_call, is_optimizer_step, is_plain_optimizer_name, is_scaler_step, optimizer_named_for, spelled
from scopelint.core.syntax import is_nested_scope, runs_once, walk
from scopelint.fixkit import block_of, module_fix, quiet, statement_of
from scopelint.rule import NodeFix, Report, Rule


class StepBetweenBackwardPasses(Rule):
    code = "SL210"
    name = "step-between-backward-passes"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "`opt.step()` runs between two backward passes through one forward: the second backward finds its saved weights changed in place."
    help = "Call both backwards before the steps, or recompute the forward pass after `opt.step()` for the second loss."
    why = """
        `a.backward(retain_graph=True)` keeps the graph for a second backward, but
        `opt.step()` then updates in place the parameters that graph saved (a weight
        is saved to compute the gradient of its input). When `b.backward()` goes
        through that part of the graph, PyTorch (>= 1.5) raises `RuntimeError: one of
        the variables needed for gradient computation has been modified by an inplace
        operation`. The classic case is a GAN whose discriminator and generator losses
        share one forward pass, or an actor-critic with a shared trunk. The two backward
        passes may also be one call in successive iterations of a loop, through a
        forward pass made once before the loop: the step in the loop runs between them.
    """
    bad = """
        import torch
        from torch import nn

        G, D = nn.Linear(2, 4), nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        optD = torch.optim.SGD(D.parameters(), lr=0.1)
        optG = torch.optim.SGD(G.parameters(), lr=0.1)
        out = D(G(torch.randn(5, 2)))
        lossD, lossG = out.mean(), -out.mean()
        lossD.backward(retain_graph=True)
        optD.step()
        lossG.backward()
        optG.step()
    """
    good = """
        import torch
        from torch import nn

        G, D = nn.Linear(2, 4), nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        optD = torch.optim.SGD(D.parameters(), lr=0.1)
        optG = torch.optim.SGD(G.parameters(), lr=0.1)
        fake = G(torch.randn(5, 2))
        lossD = D(fake.detach()).mean()
        lossD.backward()
        optD.step()
        lossG = -D(fake).mean()
        lossG.backward()
        optG.step()
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        reported = set()
        backwards = sorted(facts.backwards, key=lambda b: b.seq)
        for i, first in enumerate(backwards):
            if first.api != "backward" or not _retains_graph(first.node):
                continue
            steps = [c for c in facts.calls_in(first.func, effects=True) if is_optimizer_step(c) and c.seq > first.seq]
            for second, site in _second_backwards(facts, backwards, i):
                shared = _shared_forwards(facts, first, second, _made_before(first, site) if site is not None else None)
                own = not shared  # (the second backward's own forward, not the first's)
                if not shared and site is None:
                    # (or a forward pass of the second backward's own graph, made before the
                    # first and saving its model's weights: an SAC update's ``pi_loss`` through
                    # ``Q_net1(s, policy_action)``, stepped by ``Q1_optimizer`` in between --
                    # the second backward finds those weights changed all the same)
                    shared = [call for call, _ in _forwards(facts, second, _made_before(first, None)).values()]
                if not shared:
                    continue
                for step in steps:
                    if id(step.node) in reported or _iteration(facts, step.loops) != _iteration(facts, first.loops):
                        continue
                    if site is None and step.seq >= second.seq:
                        continue
                    # (the second backward in a caller, after the call: the helper's step
                    # after its backward, each run on every path through the helper)
                    if site is not None and not _on_every_path(first.func, first.node, step.node):
                        continue
                    forward = _stepped_forward(facts, step, shared, ordered=site is None)
                    if forward is None:
                        continue
                    model = forward.callee
                    reported.add(id(step.node))
                    if own:
                        # (no fix: stepping after the second backward would add its
                        # gradients to the ones this step applies)
                        yield Report(
                            step.node,
                            f"{spelled(step)} updates `{model}` in place before a later backward pass through a forward pass of it "
                            "made earlier: that backward raises (a variable needed for gradient computation was modified by an "
                            "inplace operation); recompute that forward pass after the step",
                            None, ((second.node, "the backward pass that finds the weights changed"),),
                        )
                        continue
                    fix = move_after(ctx, step.node, second.node, "Step after the second backward pass")
                    yield Report(
                        step.node,
                        f"{spelled(step)} updates `{model}` in place between two backward passes through its forward pass: "
                        "the second backward raises (a variable needed for gradient computation was modified by an inplace operation)",
                        fix,
                    )
            # The loop form: one backward per iteration through a forward made before the
            # loop, with a step in the loop: the step runs between two of them.
            if not first.loops:
                continue
            loop = first.loops[-1]
            if runs_once(loop):
                continue
            kept = _kept_across(facts, first, loop)
            if not kept:
                continue
            for step in facts.calls_in(first.func, effects=True):
                if not is_optimizer_step(step) or loop not in step.loops or id(step.node) in reported:
                    continue
                forward = _stepped_forward(facts, step, kept)
                if forward is None:
                    continue
                reported.add(id(step.node))
                model = forward.callee
                fix = recompute_in_loop(ctx, forward.node, loop)
                yield Report(
                    step.node,
                    f"{spelled(step)} updates `{model}` in place between the backward passes of successive iterations "
                    "through one forward pass made before the loop: the second iteration's backward raises (a variable "
                    "needed for gradient computation was modified by an inplace operation)",
                    fix,
                )


def _retains_graph(node: cst.Call) -> bool:
    """``backward(retain_graph=True)``, or ``retain_variables=True``, its name before
    PyTorch 0.4 (still in tutorials and old repositories)."""
    arg = call_arg(node, 1, "retain_graph") or call_arg(node, None, "retain_variables")
    return arg is not None and literal_bool(arg.value) is True


def _second_backwards(facts, backwards, i):
    """The backward passes that may follow ``backwards[i]`` through its forward passes, with
    the call they follow: those after it in its function, in the same loops (None); and,
    where it is in a function of this file, those after a call of that function in the
    caller, in the loops of the call (a helper that backpropagates and steps one loss, and
    returns the other: that call)."""
    first = backwards[i]
    out = [(b, None) for b in backwards[i + 1:] if b.func is first.func and _iteration(facts, b.loops) == _iteration(facts, first.loops)]
    if first.func is not None:
        for site in facts.sites_of(first.func):
            if site.func is not first.func:
                out += [(b, site) for b in backwards if b.func is site.func and _iteration(facts, b.loops) == _iteration(facts, site.loops)
                        and b.seq > site.seq and _through(b, site)]
    return out


def _on_every_path(func, *nodes) -> bool:
    """Each of ``nodes`` is in a statement of ``func``'s own body (not under an ``if``, a
    loop, a ``try``...), and no ``return`` comes before the last of them."""
    body = func.node.body
    stmts = list(body.body) if type(body) is cst.IndentedBlock else []
    places = []
    for node in nodes:
        at = next((k for k, st in enumerate(stmts) if type(st) is cst.SimpleStatementLine
                   and any(n is node for n in walk(st))), None)
        if at is None:
            return False
        places.append(at)
    return not any(type(n) is cst.Return for st in stmts[:max(places)] for n in walk(st, is_nested_scope))


def _iteration(facts, loops) -> tuple:
    """``loops`` without the innermost ones known to run their body (``Facts.entered_loops``:
    ``for l in losses: l.backward(...)`` over a list written out): two facts whose loops
    are the same so run, in order, in one iteration of the loops around them."""
    loops = tuple(loops)
    while loops and id(loops[-1]) in facts.entered_loops:
        loops = loops[:-1]
    return loops


def _through(b, site) -> bool:
    """The backward ``b`` goes through what the call ``site`` returned (the callee's values,
    made again at that call: ``Returns.template``)."""
    return any(v.node is site.node for value in b.values for v in value.ancestors(_no_graph))


def _made_before(first, site):
    """Whether a forward pass was made before the backward ``first`` ran: before it in its
    function, or, when ``first`` is followed from a call ``site``, before that call in
    the caller (sequence numbers order the facts of one function only)."""
    if site is None:
        return lambda call: call.seq < first.seq
    return lambda call: (call.func is first.func and call.seq < first.seq) or (call.func is site.func and call.seq < site.seq)


def _shared_forwards(facts, first, second, before=None):
    """Recorded forward passes of known models that both backward passes go through, and
    that save the model's weights for backward: its input carries a graph (the weights
    are needed for the input's gradient), or it stacks parametrised layers. A forward
    whose result is unpacked (``logits, value = model(x)``) and that the two reach only
    through different elements may share nothing the step changes: not counted."""
    # (past a call, the callee's values are made again for the caller: the same forward
    # pass is the same node there)
    # (and only through values that are the same on every path: a forward made again in a
    # loop of the helper is another graph)
    across = before is not None
    key = (lambda v: id(v.node)) if across else id
    before = before or _made_before(first, None)
    a, b = _forwards(facts, first, before, definite=across, key=key), _forwards(facts, second, before, definite=across, key=key)
    shared = []
    for key, (call, parts) in a.items():
        if key not in b:
            continue
        other = b[key][1]
        if parts is not None and other is not None and not parts & other:
            continue
        shared.append(call)
    return shared


def _no_graph(v) -> bool:
    return "left-graph" in v.tags or "const" in v.tags or v.rec[TORCH].off


def _forwards(facts, b, before, definite: bool = False, key=id) -> dict:
    """The forward passes (made before: ``before(call)``) that the backward ``b`` goes through
    and that save their model's weights: id of the value -> (its call, the ids of the
    unpacked elements it is reached through, or None). ``definite``: only through values
    that are the same on every path (not a join of branches or of loop iterations)."""
    stop = (lambda v: _no_graph(v) or v.node is None) if definite else _no_graph
    seen = {}
    for value in b.values:
        for v in value.ancestors(stop):
            seen[id(v)] = v
    out = {}
    for v in seen.values():
        if _no_graph(v) or type(v.node) is not cst.Call:
            continue
        call = facts.call_of(v.node)
        if call is None or not is_model_call(call) or not call.state.torch.probably_on or not before(call):
            continue
        if not _saves_weights(facts, call):
            continue
        entries = [w for w in seen.values() if any(p is v for p in w.parents)]
        parts = None if not entries or any("part" not in w.tags for w in entries) else {id(w) for w in entries}
        out[key(v)] = (call, parts)
    return out


def _kept_across(facts, b, loop) -> list:
    """The forward passes the backward ``b`` (in ``loop``) goes through that were made
    before the loop, not again in it: every iteration's backward walks the same saved
    tensors (``out = net(x)`` once, ``out.pow(2).mean().backward(retain_graph=True)`` per
    iteration), through values that are the same in every iteration (not one the loop
    rebinds: ``out = net(x)`` again at the end of the body)."""
    inside = {id(n) for n in walk(loop)}
    return [call for call, _ in _forwards(facts, b, _made_before(b, None), definite=True).values() if id(call.node) not in inside]


_LAYERS = ("Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "Embedding", "LSTM", "GRU", "RNN", "MultiheadAttention")


def _saves_weights(facts, call) -> bool:
    """The forward pass keeps the model's weights for backward: an input computed from a
    tensor that requires grad (a leaf, another recorded forward pass), or a model of two
    or more parametrised layers (``nn.Sequential(nn.Linear(...), ..., nn.Linear(...))``)."""
    for arg in call.args:
        for v in arg.ancestors(lambda x: "left-graph" in x.tags or x.rec[TORCH].off):
            if "left-graph" in v.tags or v.rec[TORCH].off:
                continue
            if "leaf" in v.tags:
                return True
            inner = facts.call_of(v.node) if type(v.node) is cst.Call else None
            if inner is not None and inner is not call and is_model_call(inner) and inner.state.torch.probably_on:
                return True
    made = call.callee_value.node if call.callee_value is not None else None
    if type(made) is not cst.Call:
        return False
    name = (dotted(made.func) or "").rsplit(".", 1)[-1]
    # (A model class of the file may hold one layer or several: unknown, so silent.)
    return name == "Sequential" and len([a for a in made.args if _is_layer(a.value)]) >= 2


def _is_layer(node) -> bool:
    return type(node) is cst.Call and (dotted(node.func) or "").rsplit(".", 1)[-1] in _LAYERS


def _stepped_forward(facts, step, shared, ordered: bool = True):
    """The shared forward pass (its CallFact) whose model's parameters ``step``'s optimizer
    holds. (``ordered``: one made before the step, by the order of the step's function;
    otherwise every shared one was made before the first backward, so before the step.)"""
    opt = step.args[0] if is_scaler_step(step) and step.args else step.receiver
    if opt is None or not origins(opt):
        return None
    _, models = optimized(facts, opt)
    # (an optimizer kept on the object: the models named in its constructor, in the class)
    if step.via is not None:  # (a local function's step, at its call)
        receiver = (step.callee or "")[: -len(".step")]
    elif is_scaler_step(step) and step.node.args:
        receiver = dotted(step.node.args[0].value)
    else:
        receiver = dotted(step.node.func.value)
    names = optimized_by_name(facts, step.func, receiver)
    for call in shared:
        if ordered and call.seq >= step.seq:
            continue
        if call.callee_value is not None and origins(call.callee_value) & models:
            return call
        if call.callee in names:
            return call
    return _named_forward(facts, step, shared, ordered) if not models and not names else None


def _named_forward(facts, step, shared, ordered: bool):
    """A fragment's optimizer, defined off-screen (a hole: ``optimizerD.step()`` in a
    pasted loop): the shared forward pass of the model it is named for (``netD``), or,
    where the text calls one model only and the optimizer's name says nothing else
    (``optimizer``, ``opt``), of that model."""
    name = dotted(step.node.func.value) if type(step.node.func) is cst.Attribute else None
    scope = step.func.scope if step.func is not None else facts.names.root
    if name is None or "." in name or not facts.names.hole(name, scope):
        return None
    before = [c for c in shared if not (ordered and c.seq >= step.seq) and c.callee and "." not in c.callee]
    named = [c for c in before if optimizer_named_for(name, c.callee)]
    if named:
        return named[0]
    models = {c.callee for c in facts.calls if is_model_call(c)}
    if len(models) == 1 and is_plain_optimizer_name(name):  # (``actor_optimizer`` may hold an off-screen head)
        return next((c for c in before if c.callee in models), None)
    return None


# --- the fix ----------------------------------------------------------------------------
@quiet
def move_after(ctx, step: cst.CSTNode, later: cst.CSTNode, message: str) -> Optional[NodeFix]:
    """The statement holding ``step`` moved to just after the one holding ``later``,
    when both stand in one block."""
    module = ctx.facts.module
    a, b = statement_of(module, step), statement_of(module, later)
    if a is None or b is None or not isinstance(a, cst.SimpleStatementLine) or len(a.body) != 1:
        return None
    where_a, where_b = block_of(module, a), block_of(module, b)
    if where_a is None or where_b is None or where_a[0] is not where_b[0] or where_a[1] >= where_b[1]:
        return None
    moved = a.with_changes(leading_lines=())
    return module_fix(module, {id(a): cst.RemovalSentinel.REMOVE, id(b): cst.FlattenSentinel([b, moved])}, message)


@quiet
def recompute_in_loop(ctx, forward: cst.CSTNode, loop) -> Optional[NodeFix]:
    """The statement that makes the forward pass (``out = net(x)``, just one assignment to
    names, in the block that holds the loop, before it) repeated first thing in the loop:
    every iteration backpropagates a graph of its own."""
    module = ctx.facts.module
    stmt = statement_of(module, forward)
    if stmt is None or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    assign = stmt.body[0]
    if not isinstance(assign, cst.Assign) or not all(isinstance(t.target, cst.Name) for t in assign.targets):
        return None
    where, there = block_of(module, stmt), block_of(module, loop)
    if where is None or there is None or where[0] is not there[0] or where[1] >= there[1]:
        return None
    if not isinstance(loop.body, cst.IndentedBlock) or not loop.body.body:
        return None
    again = stmt.with_changes(leading_lines=())
    body = loop.body.with_changes(body=[again, *loop.body.body])
    return module_fix(module, {id(loop.body): body}, "Recompute the forward pass in each iteration")


RULE = StepBetweenBackwardPasses
