from typing import Optional, Set

import libcst as cst

from scopelint.core.names import dotted
from scopelint.core.queries import optimizer_owners, spelled_in_loop, stepped_optimizer
from scopelint.core.roles import is_data_iterable, is_optimizer_step
from scopelint.core.syntax import enclosing_if_tests, parents, runs_once, walk
from scopelint.fixkit import block_of, module_fix, quiet, statement_of
from scopelint.rule import NodeFix, Report, Rule


class OptimizerRecreatedInLoop(Rule):
    code = "SL211"
    name = "optimizer-recreated-in-loop"
    severity = "warning"
    fixable = "unsafe"
    frameworks = ("torch", "mxnet")
    summary = "An optimizer is built inside the training loop over a model that persists: its state restarts every iteration."
    help = "Build the optimizer once, before the loop (change the learning rate through `param_groups` or a scheduler)."
    why = """
        `torch.optim.Adam(model.parameters())` / `gluon.Trainer(net.collect_params(), ...)`
        inside the loop makes a new optimizer each iteration: Adam's moment estimates,
        SGD's momentum buffers, the step count and any learning-rate schedule start from
        zero every time, while the model carries on. Training still runs, just worse
        (Adam's first steps are its largest). Not flagged when the model is built (or
        re-initialised) in the same iteration -- a hyper-parameter search, k-fold
        cross-validation -- nor when the optimizer keeps no state (plain SGD).
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        for step in range(10):
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            opt.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            opt.step()
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(10):
            opt.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            opt.step()
    """

    def check(self, ctx):
        facts = ctx.facts
        steps = {}
        for step in facts.calls:
            if is_optimizer_step(step):
                ctor = stepped_optimizer(facts, step)
                if ctor is not None:
                    steps.setdefault(id(ctor.node), []).append(step)
        for ctor in facts.calls:
            # (built in the loop, or by a function run once per iteration of it: its
            # ``caller_loops``, ``opt = make_opt(model)`` in the loop)
            loops = ctor.loops or ctor.caller_loops
            if not loops or id(ctor.node) not in steps or not _keeps_state(ctor):
                continue
            owned = optimizer_owners(facts, ctor)
            if owned is None:
                continue
            loop = loops[-1]
            if not _steps_in(facts, steps[id(ctor.node)], loop) or runs_once(loop) or not _steps_of_training(loop):
                continue
            if ctor.loops and _guarded_once(facts.module, ctor.node, loop):
                continue  # (``if epoch == start:``, ``if opt is None:``: built once, or when a flag says)
            # Every model it is built over persists (one rebuilt in the iteration: a fresh run).
            spelled = []
            for params, owner in owned:
                name = dotted(params.node.func.value)
                names = [name] if ctor.loops else _spelled_in(facts, ctor, owner, name, loop)
                if not names or not all(_persists(facts, owner, n, loop) for n in names):
                    break
                if names[0] not in spelled:
                    spelled.append(names[0])
            else:
                if ctor.loops and any(_model_changed_before(facts.module, ctor.node, loop, n) for n in spelled):
                    continue  # (``model.grow()`` then a new optimizer: over the parameters it now has)
                fix = hoist(ctx, ctor, loop)
                over = " and ".join(f"`{n}`" for n in spelled)
                which = "which persists" if len(spelled) == 1 else "which persist"
                yield Report(
                    ctor.node,
                    f"optimizer built inside the loop over {over}, {which} across iterations: "
                    "its momentum/adaptive state and step count restart every iteration",
                    fix,
                )


def _guarded_once(module, node, loop) -> bool:
    """``node`` sits, inside ``loop``, under an ``if`` that may hold once only or when
    something outside says so: the loop's variable equal to something (``epoch ==
    start``), an identity (``opt is None``), a bare flag or its negation. Any other test
    (``epoch % 20 == 0``, ``epoch in milestones``, ``epoch > 10``, ``mode == "finetune"``,
    ``!=``) may hold again and again: the optimizer is rebuilt each time."""
    targets = {n.value for n in walk(loop.target) if type(n) is cst.Name} if type(loop) is cst.For else set()
    return any(_holds_once(test, targets) for test in enclosing_if_tests(module, node, stop=loop))


_SAME_PARAMETERS = frozenset({"train", "eval", "to", "cuda", "cpu", "float", "half", "double", "zero_grad", "parameters",
                              "named_parameters", "state_dict", "load_state_dict", "requires_grad_", "modules", "children"})


def _model_changed_before(module, node, loop, name: str) -> bool:
    """In the iteration, before the optimizer is built, a method of ``name`` is called that
    may change which parameters it has (``model.grow()``, ``model.add_stage()``): the new
    optimizer is over new parameters (progressive growing)."""
    table = parents(module)
    up = table.get(id(node))
    while up is not None and up is not loop:
        for stmt in getattr(up, "body", ()) if type(getattr(up, "body", None)) in (list, tuple) else ():
            if stmt is node or any(n is node for n in walk(stmt)):
                break
            for n in walk(stmt):
                if type(n) is cst.Call and type(n.func) is cst.Attribute and dotted(n.func.value) == name \
                        and n.func.attr.value not in _SAME_PARAMETERS:
                    return True
        up = table.get(id(up))
    return False


def _holds_once(test, loop_vars) -> bool:
    t = type(test)
    if t in (cst.Name, cst.Attribute):
        return not (t is cst.Name and test.value == "True")  # (a flag: its owner says when)
    if t is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = test.expression
        return not any(type(n) is cst.BinaryOperation and type(n.operator) is cst.Modulo for n in walk(inner))
    if t is cst.Comparison:
        ops = {type(c.operator) for c in test.comparisons}
        if ops & {cst.Is, cst.IsNot}:
            return True
        if ops == {cst.Equal} and type(test.left) is not cst.BinaryOperation:
            names = {n.value for n in walk(test) if type(n) is cst.Name}
            return bool(names & loop_vars)  # (``epoch == start``: one iteration)
        return False
    if t is cst.BooleanOperation:
        # (``a and b`` holds at most when either does; ``a or b`` whenever either does:
        # kymatio's ``epoch in drops or epoch == 0`` holds at every drop)
        if type(test.operator) is cst.Or:
            return _holds_once(test.left, loop_vars) and _holds_once(test.right, loop_vars)
        return _holds_once(test.left, loop_vars) or _holds_once(test.right, loop_vars)
    if t is cst.Call:
        return True  # (``if needs_reset(model):``: its code says when)
    return False


def _spelled_in(facts, ctor, owner, name: Optional[str], loop):
    """``name`` (the callee's spelling of a model) as the calls in ``loop`` of the function
    that builds the optimizer spell it (the caller's own names: ``_persists`` reads the
    loop)."""
    if name is None:
        return None
    through = []
    names = spelled_in_loop(facts, ctor.func, name, loop, through)
    # (the functions on the way run in every iteration: one that re-initialises the
    # model or binds it anew starts a fresh run)
    if names and all(_persists(facts, owner, n, f.node) for f, n in through):
        return names
    return None


def _steps_in(facts, steps, loop) -> bool:
    """The optimizer steps in ``loop``: there, or in a local function called there that
    was handed the optimizer (``train_epoch(model, loader, optimizer)``), or one run once
    per iteration of it (``caller_loops``)."""
    if any(any(l is loop for l in s.loops + s.caller_loops) for s in steps):
        return True
    funcs = {id(s.func) for s in steps if s.func is not None}
    return any(c.target is not None and id(c.target) in funcs and loop in c.loops for c in facts.calls)


def _keeps_state(ctor) -> bool:
    """Plain SGD (no momentum) keeps nothing between steps: rebuilding it changes nothing."""
    node = ctor.node
    if ctor.qname == "torch.optim.SGD":
        return any(a.keyword is not None and a.keyword.value == "momentum" and not _zero(a.value) for a in node.args) \
            or len([a for a in node.args if a.keyword is None]) > 2
    if ctor.qname == "mxnet.gluon.Trainer":
        positional = [a for a in node.args if a.keyword is None]
        name = _arg(node, 1, "optimizer", positional)
        params = _arg(node, 2, "optimizer_params", positional)
        if type(name) is cst.SimpleString and name.evaluated_value.lower() == "sgd":
            if type(params) is not cst.Dict:
                return False  # a dict the rule cannot read: whether it holds a momentum, unknown
            keys = {el.key.evaluated_value for el in params.elements if type(el) is cst.DictElement and type(el.key) is cst.SimpleString}
            return bool(keys & {"momentum", "lr_scheduler"}) or len(keys) != len(params.elements)
    return True


def _arg(node: cst.Call, index: int, keyword: str, positional):
    for a in node.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    return positional[index].value if index < len(positional) else None


def _zero(expr) -> bool:
    return type(expr) in (cst.Integer, cst.Float) and float(expr.value) == 0


def _steps_of_training(loop) -> bool:
    """A loop over epochs or batches: ``while``, ``for ... in range(...)`` (through
    ``enumerate``/``tqdm``), or over a data loader. A loop over stages, models or
    configurations (``for stage in stages``) may restart the optimizer on purpose."""
    if type(loop) is cst.While:
        return True
    it = loop.iter
    while type(it) is cst.Call and (dotted(it.func) or "") in ("enumerate", "tqdm", "tqdm.tqdm", "tqdm.trange", "trange") and it.args:
        if (dotted(it.func) or "").endswith("trange"):
            return True
        it = it.args[0].value
    if type(it) is cst.Call and dotted(it.func) == "range":
        return True
    return is_data_iterable(it)


# Calls that put a model back to fresh (or other) weights: the iteration starts a new run.
_REINIT = {"reset_parameters", "_reset_parameters", "init_weights", "apply", "load_state_dict", "initialize",
           "load_parameters", "load_params", "set_params", "reset", "cast"}


def _persists(facts, owner, spelled: Optional[str], loop) -> bool:
    """The model ``owner`` (spelled ``spelled``) is the same object, with the weights of
    the last iteration, on every iteration of ``loop``: made before it, not rebound nor
    re-initialised in it."""
    if spelled is None:
        return False
    node = owner.node
    # (a join, ``model = A(...) if ... else B(...)`` before the loop, has no node: whether
    # the loop rebinds it is what the walk below reads)
    if node is not None and type(node) not in (cst.Name, cst.Attribute) and any(n is node for n in walk(loop)):
        return False  # made in the loop (a name read in it is checked below: rebound there?)
    root = spelled.split(".", 1)[0]
    for n in walk(loop):
        targets = ()
        if type(n) is cst.AssignTarget:
            targets = (n.target,)
        elif type(n) in (cst.AugAssign, cst.AnnAssign):
            targets = (n.target,)
        elif type(n) in (cst.For, cst.CompFor):
            targets = (n.target,)
        elif type(n) is cst.WithItem and n.asname is not None:
            targets = (n.asname.name,)
        for t in targets:
            for m in walk(t):
                name = dotted(m) if type(m) in (cst.Name, cst.Attribute) else None
                if name is not None and (name == spelled or name == root or spelled.startswith(name + ".")):
                    return False
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in _REINIT:
            return False
    if root in ("self", "cls"):
        # Another method may build it anew (``self.model = ...`` outside ``__init__``).
        for f in facts.functions:
            if f.name == "__init__":
                continue
            for n in walk(f.node):
                if type(n) is cst.AssignTarget and dotted(n.target) == spelled:
                    return False
    return True


# --- the fix ----------------------------------------------------------------------------
@quiet
def hoist(ctx, ctor, loop) -> Optional[NodeFix]:
    """The optimizer built once, just before the loop, when its statement is one of the
    loop body's own and reads nothing the loop binds."""
    module = ctx.facts.module
    stmt = statement_of(module, ctor.node)
    where = block_of(module, stmt) if stmt is not None else None
    if where is None or where[0] is not loop.body or type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
        return None
    if type(loop) is not cst.For and type(loop) is not cst.While:
        return None
    bound = _bound_in(loop)
    skip = set()
    for n in walk(ctor.node):
        if type(n) is cst.Attribute:
            skip.add(id(n.attr))
        elif type(n) is cst.Arg and n.keyword is not None:
            skip.add(id(n.keyword))
        elif type(n) is cst.Name and id(n) not in skip and n.value in bound:
            return None
    if statement_of(module, loop) is not loop or block_of(module, loop) is None:
        return None
    rest = [s for s in loop.body.body if s is not stmt] or [cst.SimpleStatementLine([cst.Pass()])]
    if rest and stmt.leading_lines and hasattr(rest[0], "leading_lines") and loop.body.body[0] is stmt:
        rest[0] = rest[0].with_changes(leading_lines=tuple(stmt.leading_lines) + tuple(rest[0].leading_lines))
    new_loop = loop.with_changes(body=loop.body.with_changes(body=rest), leading_lines=())
    hoisted = stmt.with_changes(leading_lines=loop.leading_lines)
    return module_fix(module, {id(loop): cst.FlattenSentinel([hoisted, new_loop])}, "Build the optimizer once, before the loop")


def _bound_in(loop) -> Set[str]:
    names: Set[str] = set()
    for n in walk(loop):
        targets = ()
        if type(n) in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor):
            targets = (n.target,)
        elif type(n) is cst.WithItem and n.asname is not None:
            targets = (n.asname.name,)
        elif type(n) is cst.NamedExpr:
            targets = (n.target,)
        for t in targets:
            names.update(m.value for m in walk(t) if type(m) is cst.Name)
    return names


RULE = OptimizerRecreatedInLoop
