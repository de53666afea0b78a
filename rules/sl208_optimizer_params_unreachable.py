from typing import Optional

import libcst as cst

from scopelint.core.names import dotted
from scopelint.core.queries import (
    backward_functions,
    backwards_run_in_loop,
    grafted_from,
    graph_sources,
    is_deepcopy_of,
    is_rebuilt_like,
    optimizer_owner,
    shares_parameters,
    stepped_optimizer,
)
from scopelint.core.roles import is_optimizer_step, spelled
from scopelint.core.syntax import walk
from scopelint.fixkit import block_of, module_fix, quiet, statement_of
from scopelint.rule import NodeFix, Report, Rule


class OptimizerParamsUnreachable(Rule):
    code = "SL208"
    name = "optimizer-params-unreachable"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("torch", "mxnet")
    summary = "The optimizer steps a model the loss never reaches: the loss goes through a copy of it."
    help = "Build the optimizer over the parameters of the model the loss is computed with (or compute the loss with the model the optimizer owns)."
    why = """
        `opt = SGD(model.parameters())` owns `model`'s parameters. When the loss that is
        backpropagated reaches `model` only through a copy (`copy.deepcopy(model)`, a
        second instance of the same class loaded with its weights, or `model` rebuilt
        after the optimizer was made) or through values taken out of the graph, backward
        fills the copy's gradients and `opt.step()` finds none: the weights it owns never
        move. PyTorch raises nothing; Gluon's `Trainer.step` raises on the stale
        gradients. A DQN target network copied with `deepcopy` is fine as long as the
        loss also goes through the online network the optimizer owns.
    """
    bad = """
        import copy
        import torch

        policy = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(policy.parameters(), lr=0.1)
        target = copy.deepcopy(policy)
        for step in range(10):
            opt.zero_grad()
            loss = target(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            opt.step()
    """
    good = """
        import copy
        import torch

        policy = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(policy.parameters(), lr=0.1)
        target = copy.deepcopy(policy)
        for step in range(10):
            opt.zero_grad()
            s = torch.randn(8, 4)
            with torch.no_grad():
                goal = target(s).max(dim=1).values
            loss = (policy(s).max(dim=1).values - goal).pow(2).mean()
            loss.backward()
            opt.step()
    """

    def check(self, ctx):
        facts = ctx.facts
        reported = set()
        for step in [*facts.calls, *facts.effects]:
            # (in a loop, or in a function run once per iteration of one: ``train_epoch``
            # called in ``fit``'s loop)
            loops = step.loops or step.caller_loops
            if not loops or not is_optimizer_step(step):
                continue
            ctor = stepped_optimizer(facts, step)
            owned = optimizer_owner(facts, ctor) if ctor is not None else None
            if owned is None or id(ctor.node) in reported or _grows(facts, ctor):
                continue
            loop = loops[-1]
            copy_fact = self._only_through_copy(facts, step, loop, owned[1])
            if copy_fact is None:
                continue
            reported.add(id(ctor.node))
            owner = dotted(owned[0].node.func.value)
            obj = _object_spelling(copy_fact[0])
            kind = "a copy" if copy_fact[1] else "another instance"
            how = f"{kind} of it" if obj == owner else f"`{obj}`, {kind} of it"
            fix = optimizer_over(ctx, ctor, owned[0], copy_fact[0], step)
            yield Report(
                step.node,
                f"{spelled(step)} updates the parameters of `{owner}`, but the loss backpropagated in this loop reaches "
                f"`{owner}` only through {how}: the step finds no gradient and the weights never move",
                fix,
            )

    @staticmethod
    def _only_through_copy(facts, step, loop, owner):
        """(the call of a copy of ``owner`` that the loop's backpropagated values go
        through, whether it is a deepcopy), when they are known to go through no part of
        ``owner`` itself."""
        # (the step's own function's, or, where the loop is a caller's, any in that loop:
        # ``l.backward(); train_step(trainer)``)
        backwards = [b for b in backwards_run_in_loop(facts, loop) if b.func is step.func or loop not in step.loops]
        if not backwards or _writes_gradients(loop) or _calls_gradient_writer(facts, loop) \
                or _calls_backward_elsewhere(facts, step, loop):
            return None
        if not step.loops and step.func is not None and _writes_gradients(step.func.node):  # (the loop is a caller's)
            return None
        through = None
        for b in backwards:
            fws = b.frameworks & facts.frameworks
            if len(fws) != 1:
                return None
            found = graph_sources(facts, b.values, next(iter(fws)))
            if found is None:
                return None
            seen, objects = found
            if id(owner) in seen:
                return None
            for fact, obj in objects:
                if is_deepcopy_of(facts, obj, owner) or is_rebuilt_like(facts, obj, owner):
                    if grafted_from(facts, obj, owner):
                        return None
                    through = through or (fact, is_deepcopy_of(facts, obj, owner))
                elif shares_parameters(facts, obj, owner):
                    return None
        return through


def _grows(facts, ctor) -> bool:
    """``opt.add_param_group(...)``: the optimizer owns more than the model it was made over."""
    grown = facts.memo("sl208_grown", lambda f: frozenset(
        id(c.receiver.node) for c in f.calls if c.method == "add_param_group" and getattr(c.receiver, "node", None) is not None))
    return id(ctor.node) in grown


def _calls_in_loop(facts, loop) -> list:
    """The calls that stand in ``loop`` (indexed once per file: asked per step)."""
    def index(f):
        out: dict = {}
        for c in f.calls:
            for n in {id(n): n for n in c.loops}:
                out.setdefault(n, []).append(c)
        return out

    return facts.memo("sl208_calls_by_loop", index).get(id(loop), [])


def _calls_by(facts, func) -> list:
    def index(f):
        out: dict = {}
        for c in f.calls:
            out.setdefault(id(c.func), []).append(c)
        return out

    return facts.memo("sl208_calls_by_func", index).get(id(func), [])


def _object_spelling(fact) -> Optional[str]:
    callee = fact.callee or ""
    if fact.method in ("forward", "hybrid_forward", "__call__"):
        callee = callee.rsplit(".", 1)[0]
    return callee


def _writes_gradients(loop: cst.CSTNode) -> bool:
    """The loop sets gradients by hand (``p.grad = g``, ``p.grad.copy_(g)``,
    ``p.grad()[:] = g``): first-order MAML, Reptile, gradients moved between copies."""
    for n in walk(loop):
        target = None
        if type(n) in (cst.AssignTarget, cst.AugAssign):
            target = n.target
        elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value.endswith("_") \
                and n.func.attr.value != "zero_":
            target = n.func.value
        while type(target) in (cst.Subscript, cst.Call):
            target = target.value if type(target) is cst.Subscript else target.func
        if type(target) is cst.Attribute and target.attr.value in ("grad", "_grad"):
            return True
    return False


def _calls_gradient_writer(facts, loop, depth: int = 3) -> bool:
    """A function of the file called in the loop (or by one, ``depth`` levels down) sets
    gradients by hand (``copy_grads(fast, model)`` with ``p.grad = q.grad.clone()``)."""
    frontier = [c.target for c in _calls_in_loop(facts, loop) if c.target is not None]
    seen = set()
    while frontier and depth > 0:
        depth -= 1
        nxt = []
        for f in frontier:
            if id(f) in seen:
                continue
            seen.add(id(f))
            if _writes_gradients(f.node):
                return True
            nxt.extend(c.target for c in _calls_by(facts, f) if c.target is not None)
        frontier = nxt
    return False


def _calls_backward_elsewhere(facts, step, loop) -> bool:
    """A local function called in the loop runs a backward of its own (or through what it
    calls: a runner handed a closure that backpropagates, ``backward_functions``)."""
    with_backward = backward_functions(facts)
    return any(c.target is not None and id(c.target) in with_backward for c in _calls_in_loop(facts, loop) if c.func is step.func)


# --- the fix ----------------------------------------------------------------------------
@quiet
def optimizer_over(ctx, ctor, params_fact, copy_fact, step) -> Optional[NodeFix]:
    """The optimizer made over the copy the loss goes through: ``X.parameters()`` becomes
    ``C.parameters()``, and the statement moves down to just before the loop when ``C``
    is bound after it (nothing in between may use the optimizer)."""
    module = ctx.facts.module
    spelled = _object_spelling(copy_fact)
    if not step.loops:
        return None  # (the loop is a caller's: the optimizer is made elsewhere)
    if not spelled or dotted(cst.parse_expression(spelled)) != spelled:
        return None
    made = statement_of(module, ctor.node)
    loop = statement_of(module, step.loops[0])
    obj = copy_fact.callee_value if copy_fact.method not in ("forward", "hybrid_forward", "__call__") else copy_fact.receiver
    bound = statement_of(module, obj.node) if obj is not None and obj.node is not None else None
    if made is None or loop is None or bound is None or type(made) is not cst.SimpleStatementLine:
        return None
    where, where_loop, where_bound = block_of(module, made), block_of(module, loop), block_of(module, bound)
    if where is None or where_loop is None or where_bound is None:
        return None
    block, i = where
    if where_loop[0] is not block or where_bound[0] is not block or not (i < where_loop[1] and where_bound[1] < where_loop[1]):
        return None
    new_params = params_fact.node.with_changes(func=params_fact.node.func.with_changes(value=cst.parse_expression(spelled)))
    new_made = made.visit(_ReplaceNode(params_fact.node, new_params))
    message = f"Build the optimizer over `{spelled}`, the model the loss is computed with"
    if where_bound[1] < i:
        return module_fix(module, {id(made): new_made}, message)
    # ``C`` is bound after the optimizer: make the optimizer just before the loop.
    name = _assigned_name(made)
    if name is None:
        return None
    for stmt in block.body[i + 1:where_loop[1]]:
        if any(type(n) in (cst.Name, cst.Attribute) and dotted(n) == name for n in walk(stmt)):
            return None
    moved = new_made.with_changes(leading_lines=loop.leading_lines)
    return module_fix(
        module,
        {id(made): cst.RemovalSentinel.REMOVE, id(loop): cst.FlattenSentinel([moved, loop.with_changes(leading_lines=())])},
        message,
    )


def _assigned_name(stmt: cst.SimpleStatementLine) -> Optional[str]:
    small = stmt.body[0] if len(stmt.body) == 1 else None
    if type(small) is cst.Assign and len(small.targets) == 1:
        return dotted(small.targets[0].target)
    return None


class _ReplaceNode(cst.CSTTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def on_leave(self, original_node, updated_node):
        return self.new if original_node is self.old else updated_node


RULE = OptimizerParamsUnreachable
