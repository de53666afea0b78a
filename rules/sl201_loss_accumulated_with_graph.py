import libcst as cst

from scopelint.core.frameworks import TORCH
from scopelint.core.flow import CONTAINER, carried_tag
from scopelint.core.names import dotted
from scopelint.core.queries import (
    backpropagated, backpropagated_by_callers, called_in_loop_elsewhere, gradient_norm, graph_path, holds_graph, loops_around, made_this_iteration, outlives_call, kept_across_calls,
    recorded, returns_backpropagated, returns_derived, written_name,
)
from scopelint.core.roles import is_loss_call, is_model_call, made_loss
from scopelint.core.state import DATA_TAGS, UNKNOWN_RESULT
from scopelint.fixkit import detach_expression
from scopelint.rule import Report, Rule


# Expressions that build Python containers or generators, not a loss tensor.
NOT_TENSORS = (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp, cst.Dict, cst.Set, cst.Lambda)


def _local_of(func, key) -> bool:
    """``key`` is a plain local name of ``func`` (bound in it, no parameter, not declared
    ``global``/``nonlocal``): what it holds dies with the call, unless returned."""
    if func is None or not key or "." in key or key in func.param_names or outlives_call(func, key, None):
        return False
    return key in func.scope.bound and not returns_derived(func, key)


def _runs_code_per_item(facts, loop) -> bool:
    """The loop runs a backward, a forward pass, or code that may run one: a function of
    the program, or one nobody here knows (a parameter, ``loss_function(*params)``) --
    not framework ops, methods of the values it reads, nor a loss object's call."""
    if any(loop in b.loops for b in facts.backwards):
        return True
    for c in facts.calls:
        if loop not in c.loops:
            continue
        if is_model_call(c) or c.target is not None or c.external is not None:
            return True
        if c.method is None and c.qname is None and c.callee not in _PLAIN_CALLS \
                and not (c.callee_value is not None and made_loss(c.callee_value)):
            return True
    return False


_PLAIN_CALLS = frozenset({"len", "range", "zip", "enumerate", "float", "int", "abs", "min", "max", "sum", "print",
                          "list", "tuple", "dict", "isinstance", "round", "reversed", "sorted"})


def _reset_elsewhere(facts, func, key) -> bool:
    """Another method of ``func``'s class empties or rebinds ``key`` (``self.losses.clear()``,
    ``self.total = 0``): how often it does is not known (each step, as torch's pipelining
    schedules do, or each epoch), so the accumulation is not known to outlive a step."""
    owner = func
    while owner.parent is not None:
        owner = owner.parent
    attr = key.split(".", 1)[1] if "." in key else None
    if owner.cls is None or attr is None:
        return False
    for c in facts.calls:
        f = c.func
        while f is not None and f.parent is not None:
            f = f.parent
        if f is None or f is owner or f.cls is not owner.cls or f.name == "__init__":
            continue
        if c.method == "clear" and (c.callee or "").split(".", 1)[-1] == attr + ".clear":
            return True
    for m in facts.mutations:
        f = m.func
        while f is not None and f.parent is not None:
            f = f.parent
        if f is not None and f is not owner and f.cls is owner.cls and f.name != "__init__" and m.key and m.key.split(".", 1)[-1] == attr and m.kind == "rebind":
            return True
    return False


def _constant_index(node) -> bool:
    """``d["k"] = v`` / ``xs[0] = v``: a write under a key written out, the same entry
    every iteration."""
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else []
    return bool(targets) and all(
        isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index)
        and isinstance(t.slice[0].slice.value, (cst.SimpleString, cst.Integer)) for t in targets)


def _added_expression(node):
    """The expression a write accumulates: ``total += <e>``, ``total = total + <e>``, ``xs.append(<e>)``."""
    if isinstance(node, cst.AugAssign):
        return node.value
    if isinstance(node, cst.Assign) and isinstance(node.value, cst.BinaryOperation):
        target = written_name(node)
        left, right = node.value.left, node.value.right
        return right if dotted(left) == target else left
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript):
        return node.value  # ``log[step] = loss``
    if isinstance(node, cst.Call) and node.args:
        return node.args[0].value
    return None


def _not_arithmetic(v) -> bool:
    # A part of an unpacked tuple (``loss, n = step(...)``) is not its sibling part; a
    # list given to a call (``fn(reps)``) is no arithmetic on each of its items.
    return not v.pure or "loop-item" in v.tags or "part" in v.tags or "container" in v.tags or gradient_norm(v)


def _may_hold_graph(v) -> bool:
    """A value whose graph a backward may share: not one that left the graph, not data
    (a loader's items, a factory's tensor), and not a name nobody knows (``args``, a
    config, ``batch.batch_size``'s batch: a size read from what also feeds the loss is no
    part of its graph)."""
    if "left-graph" in v.tags or DATA_TAGS & v.tags or gradient_norm(v):
        return False  # (a gradient norm: of ``.grad`` buffers, whatever its arguments)
    return bool(v.parents) or type(v.node) not in (cst.Name, cst.Attribute)


def _of_a_prediction_made_off(facts, value) -> bool:
    """``value`` holds no graph (``holds_graph``) and is computed from a forward pass made
    with recording off (``with torch.no_grad(): pred = model(x)`` then ``loss =
    criterion(pred, y)`` outside the block), and from nothing that code the flow does not
    see returned (``+ l2_penalty(model)`` of an imported helper may hold one)."""
    if holds_graph(facts, value, TORCH) or any(UNKNOWN_RESULT <= v.tags for v in value.ancestors()):
        return False
    return any(type(v.node) is cst.Call and not v.pure and v.rec[TORCH].off for v in value.ancestors())


def _container_of(expr):
    """``hist["loss"]`` -> ``hist``: the container a subscript reads an entry of."""
    while type(expr) is cst.Subscript:
        expr = expr.value
    return expr


def _kept_in(receiver, expr):
    """What keeps what ``receiver.append(v)`` appends: the receiver, or, for an entry of a
    container (``hist["loss"].append(loss)`` of a ``defaultdict(list)``), the container,
    which lives across iterations while the entry's expression is read anew in each."""
    while type(expr) is cst.Subscript and receiver.parents and receiver.node is expr:
        receiver, expr = receiver.parents[0], expr.value
    return receiver


class _Fact:
    """Where a write runs, for ``loops_around``: its function, no loop of its own."""

    loops = ()

    def __init__(self, func):
        self.func = func


class LossAccumulatedWithGraph(Rule):
    code = "SL201"
    name = "loss-accumulated-with-graph"
    severity = "warning"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "A recorded loss is accumulated across loop iterations without `.item()`/`.detach()`."
    help = "Accumulate a number: `total += loss.item()` (or `loss.detach()`); append `loss.item()`."
    why = """
        `total += loss` (or `losses.append(loss)`) keeps a reference to every
        iteration's loss tensor, and through its `grad_fn` to that iteration's whole
        graph and saved activations. Memory grows linearly with the number of steps
        until the loop ends or the process runs out of memory. The same holds when a
        per-step helper returns its backpropagated loss to a loop that keeps it, and when
        a method called once per step adds the loss to `self.total`. A joint loss that is
        itself backpropagated later (here or by the helper's caller) is deliberate and
        not flagged.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        total = 0.0
        for step in range(10):
            opt.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            opt.step()
            total += loss
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        total = 0.0
        for step in range(10):
            opt.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            opt.step()
            total += loss.item()
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        writes = [(m.node, m.before, m.value, m.loops, m.func, m.key) for m in facts.mutations if m.kind in ("augassign", "accumulate")]
        writes += [
            (c.node, _kept_in(c.receiver, c.node.func.value), c.args[0], c.loops, c.func,
             c.callee.rsplit(".", 1)[0] if c.callee and "." in c.callee else dotted(_container_of(c.node.func.value)))
            for c in facts.calls
            if c.method in ("append", "extend") and c.receiver is not None and c.args
        ]
        # ``log[step] = loss``, ``losses[i] = loss``: an entry of a dict or list kept across
        # iterations, as ``append`` keeps one (RULES.md, SL201)
        # (not under a constant key, ``loss_dict["d"] = d_loss``: each step overwrites the last)
        writes += [(m.node, m.before, m.value, m.loops, m.func, m.key) for m in facts.mutations
                   if m.kind == "subscript" and m.before is not None and CONTAINER <= m.before.tags and not _constant_index(m.node)]
        found = []
        for node, accumulator, value, loops, func, key in writes:
            if value is None or accumulator is None or not recorded(value, TORCH):
                continue
            per_call = False  # a helper called once per step, writing where the step's caller keeps it
            related = ()
            handed = False  # ... or into what its caller's loop hands it and takes back
            if not loops:
                around = loops_around(facts, _Fact(func))
                carried = [l for l in around if carried_tag(l) in accumulator.tags]
                if carried and func is not None and returns_derived(func, written_name(node)):
                    # ``total = add(total, loss)`` in a loop: ``add``'s ``total += loss``
                    # adds to what the previous iteration's call returned.
                    loops, handed = tuple(carried), True
                elif not outlives_call(func, key, accumulator) and not kept_across_calls(facts, func, key, accumulator, around):
                    continue  # (kept by the callers across their loops: ``log(loss, losses)``)
                else:
                    loops, per_call = around, True
                    elsewhere = called_in_loop_elsewhere(facts, func) if not loops else None
                    if elsewhere is not None:  # (a method that a loop of another module calls)
                        loops = (elsewhere,)
                        related = ((elsewhere, f"calls `{func.name}` in a loop"),)
                    if not loops or _reset_elsewhere(facts, func, key):
                        continue
            if isinstance(value.node, NOT_TENSORS):
                continue
            # The loss itself, or arithmetic on it -- not some function of it (metadata, logs).
            lineage = [v for v in graph_path(value, _not_arithmetic) if _may_hold_graph(v)]
            # (What a callee is handed comes from its callers' walk of the previous round:
            # the same expressions, not always the same value objects.)
            nodes = {id(w.node) for w in lineage if w.node is not None}
            same = (lambda v: id(v.node) in nodes) if handed else (lambda v: v in lineage)
            backward_in_loop = any(
                (b.func is func if per_call else loops[-1] in b.loops or (handed and b.func is func))
                and any(same(v) and holds_graph(facts, v, TORCH) for bv in b.values for v in graph_path(bv, _not_arithmetic))
                for b in _candidates(facts, func, loops, per_call, handed) if not b.differentiates  # (a derivative kept in the graph: no step)
            )
            from_loss = any(
                c is not None and (is_loss_call(c) or returns_backpropagated(facts, c.target))
                for v in lineage for c in [facts.call_of(v.node)]
            )
            if not (backward_in_loop or from_loss) or backpropagated(facts, accumulator):
                continue
            if not backward_in_loop and _of_a_prediction_made_off(facts, value):
                continue  # (a validation loss of a prediction made under ``no_grad()``: no graph)
            if not backward_in_loop and not per_call and not handed and _local_of(func, key) \
                    and not _runs_code_per_item(facts, loops[-1]):
                # (a list of one call's per-item losses -- ``value_loss.append(
                # smooth_l1_loss(v, r))`` over an episode's saved outputs -- in a loop that
                # runs no forward pass nor any function that may: no step's graph is made
                # there, and the list dies with the call)
                continue
            if handed and not backward_in_loop:
                continue  # (carried by a loop that takes no step: one step's joint loss, summed)
            if not backward_in_loop and not per_call and not handed and func is not None and returns_derived(func, written_name(node)):
                if backpropagated_by_callers(facts, func):
                    continue  # a joint loss handed to the caller (as it is or computed from)
            if not per_call and made_this_iteration(accumulator, loops[-1]):
                continue  # ``loss = a; loss += b`` inside one step: no iteration carries it
            fix = detach_expression(_added_expression(node), "Accumulate the value without its graph: `.detach()`")
            found.append((node, value, Report(node, "a recorded loss is accumulated across iterations: every step's graph stays alive", fix,
                                              related)))
        # A total kept of what another reported write accumulates (``history.append(
        # train_epoch())`` of an epoch's running loss) holds graphs only through it: one
        # bug, reported where it is made.
        made = {id(n): node for node, _, _ in found for n in (node, node.value if type(node) is cst.Assign else None) if n is not None}
        for node, value, report in found:
            if not any(made.get(id(v.node), node) is not node for v in value.ancestors() if v.node is not None):
                yield report


RULE = LossAccumulatedWithGraph


def _candidates(facts, func, loops, per_call: bool, handed: bool) -> list:
    """The backward calls that may meet ``backward_in_loop``'s condition (in the file's
    order): those of ``func``, or those in the loop ``loops[-1]`` (and of ``func`` when
    ``handed``). Indexed once per file: a scan of every backward call per accumulator
    was quadratic in a file of many training loops (issue 44)."""
    def by_func(f):
        out: dict = {}
        for i, b in enumerate(f.backwards):
            out.setdefault(id(b.func), []).append((i, b))
        return out

    def by_loop(f):
        out: dict = {}
        for i, b in enumerate(f.backwards):
            for l in {id(l) for l in b.loops}:
                out.setdefault(l, []).append((i, b))
        return out

    if per_call:
        found = facts.memo("sl201_backwards_by_func", by_func).get(id(func), [])
    else:
        found = list(facts.memo("sl201_backwards_by_loop", by_loop).get(id(loops[-1]), [])) if loops else []
        if handed:
            found = found + facts.memo("sl201_backwards_by_func", by_func).get(id(func), [])
    return [b for _, b in sorted({i: (i, b) for i, b in found}.values(), key=lambda t: t[0])]
