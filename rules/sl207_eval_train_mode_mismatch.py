import libcst as cst

from scopelint.core.frameworks import TORCH
from scopelint.core.names import dotted
from scopelint.core.queries import (
    backpropagated_nodes, backwards_in_loop, steps_inputs_only, trained_nodes, eval_changes_nothing, frozen_by_the_file, held_by_no_optimizer, helper_forwards,
    model_made_known, models_handed_to_helper, off_at_every_call, only_called_where, recording, trained_models_as_called, value_mode_free,
)
from scopelint.core.roles import is_held_out_data, is_model_call, is_optimizer_step, matches_any
from scopelint.fixkit import code_of, insert_call, module_fix, parents, statement_call, statement_of, walk
from scopelint.rule import Report, Rule


class EvalTrainModeMismatch(Rule):
    code = "SL207"
    name = "eval-train-mode-mismatch"
    severity = "warning"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "Evaluation runs a model still in training mode, or training resumes with the model left in eval mode."
    help = "Call `model.eval()` before evaluating and `model.train()` before the next training forward pass."
    why = """
        `no_grad()` does not switch Dropout and BatchNorm to inference behaviour;
        `model.eval()` does. Evaluating without it gives noisy, pessimistic metrics and
        updates BatchNorm statistics with validation data. The opposite mistake is
        worse: an evaluation helper that calls `model.eval()` and never
        `model.train()` again makes every later epoch train without dropout and with
        frozen BatchNorm statistics. Evaluation is recognised by what the code does:
        an inference-named function, or a `no_grad` loop over held-out data
        (`val_loader`, `test_dataloader`, ...), in a function or at module level. A
        forward pass that is backpropagated and stepped while the model is in eval
        mode on every path to it is reported too. The training forward pass may be
        run by a helper the loop calls, in the file or in a module of the project (a
        loss function handed the model: `loss = score_loss(model, x)`), or by a method of
        a plain object that holds the models (`model.train_emb(x)`), whose own methods
        switch their mode (`model.val_start()` in an evaluation helper, and no
        `model.train_start()` in the loop: vsepp), its class in the file or in a module of
        the project. A name rebound
        to a new model (`model = make_model()` each fold) starts in train mode again.
        Not reported: a model whose class (in the file, or in a module of the project it
        imports) has no layer that depends on the mode (only `Linear`, `Conv2d`,
        `Embedding`, activations..., and helper functions that build or compute
        nothing else: eval() changes nothing), and a frozen auxiliary network kept in
        eval mode on purpose that no optimizer of the file holds (a perceptual loss's
        feature extractor).
    """
    bad = """
        import torch

        model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.5), torch.nn.Linear(3, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def validate(x):
            model.eval()
            with torch.no_grad():
                return model(x).mean().item()

        for epoch in range(3):
            opt.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            opt.step()
            validate(torch.randn(4, 3))
    """
    good = """
        import torch

        model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.5), torch.nn.Linear(3, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def validate(x):
            model.eval()
            with torch.no_grad():
                return model(x).mean().item()

        for epoch in range(3):
            model.train()
            opt.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            opt.step()
            validate(torch.randn(4, 3))
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        yield from self._left_in_eval(ctx)
        yield from self._evaluated_in_train_mode(ctx)
        yield from self._trained_in_eval_mode(ctx)

    def _trained_in_eval_mode(self, ctx):
        """A forward pass that is backpropagated and stepped while the model is in eval
        mode on every path to it (``model.eval()`` and no ``model.train()`` since)."""
        facts = ctx.facts
        # (a step of an optimizer over an attack's perturbation trains no model)
        stepping = {id(c.func) for c in facts.calls if is_optimizer_step(c) and not steps_inputs_only(facts, c)}
        backpropagated = None
        reported = set()
        for call in facts.calls:
            if not call.callee or call.callee not in call.in_eval:
                continue
            # (in a step, or in what only steps run: a loss module's ``forward``, a helper)
            if id(call.func) not in stepping and not only_called_where(facts, call.func, lambda c: id(c.func) in stepping):
                continue
            if call.callee in reported or not recording(call.state, TORCH) or not is_model_call(call):
                continue
            if backpropagated is None:
                backpropagated = trained_nodes(facts)  # (not an input's gradient: an attack, a saliency map)
            if id(call.node) not in backpropagated:
                continue
            if eval_changes_nothing(facts, call) or held_by_no_optimizer(facts, call.callee_value) or frozen_by_the_file(facts, call.callee):
                continue  # no Dropout/BatchNorm to freeze; a frozen auxiliary network kept in eval() on purpose
            reported.add(call.callee)
            fix = insert_call(ctx, call.node, call.callee, "train", False, f"Put `{call.callee}` in train mode before the training forward pass")
            yield Report(call.node, f"`{call.callee}` is trained in eval mode: `{call.callee}.eval()` on every path here and no `{call.callee}.train()` since (Dropout off, BatchNorm frozen)", fix)

    def _left_in_eval(self, ctx):
        """A training forward pass (here, or in a training step called here) that runs
        after an evaluation left the model in eval mode on the previous iteration."""
        facts = ctx.facts
        reported = set()
        steps = {id(b.func) for b in facts.backwards if b.func is not None}
        for call in facts.calls:
            if not call.loops or not recording(call.state, TORCH):
                continue
            if is_model_call(call) and backwards_in_loop(facts, call.loops[-1]):
                if eval_changes_nothing(facts, call) or frozen_by_the_file(facts, call.callee):
                    continue
                models = {call.callee}
            elif call.target is not None and id(call.target) in steps:
                models = trained_models_as_called(facts, call) - _handed_mode_free(facts, call)
            elif call.external is not None and call.external.trains:  # a step of another module
                models = call.external.arguments(call.node, call.external.trains)
            elif _runs_the_training_forward(facts, call):  # a loss helper: the forward pass is in it
                models = _forwarded(facts, call)
            else:
                continue
            for name in sorted(models):
                if name not in call.maybe_eval or name in call.in_eval or frozen_by_the_file(facts, name):
                    continue
                culprit = call.maybe_eval[name]
                if _switched_by_the_training_test(facts, call, culprit, name):
                    continue  # (``if split == 'train': m.train() else: m.eval()``, and the step under that test)
                if id(culprit) not in reported:
                    reported.add(id(culprit))
                    fix = _train_fix(ctx, call, culprit, name)
                    helper = getattr(ctx.facts.call_of(culprit), "external", None)  # a function of another module
                    where = f"by {helper.spelled}" if helper is not None else "here"
                    related = (helper.related("calls `eval()` and does not call `train()`"),) if helper is not None else ()
                    yield Report(culprit, f"`{name}` is left in eval mode {where} and the training loop's next forward pass runs without `{name}.train()`", fix, related)

    def _evaluated_in_train_mode(self, ctx):
        """Evaluation code (by name) under no_grad in a file that trains and never calls eval()."""
        facts, inference_functions = ctx.facts, ctx.inference_functions
        if not facts.backwards or any(c.method == "eval" or (c.method == "train" and c.node.args) for c in facts.calls):
            return
        done = set()
        for call in facts.calls:
            sw = call.state.torch
            # (or in a helper that evaluation code alone runs, under its ``no_grad``)
            helper = not _evaluates(call, inference_functions)
            if helper and not only_called_where(facts, call.func, lambda c: _evaluates(c, inference_functions)):
                continue
            explicit = sw.off and sw.origin is not None and (
                sw.origin.explicit or off_at_every_call(facts, call.func, [TORCH]) is not None)  # (its callers' no_grad)
            if not explicit or not is_model_call(call) or (helper and not model_made_known(facts, call)):
                continue
            if _unseen_parameter(facts, call):
                continue  # (a model nobody seen hands in: its callers may have put it in eval mode)
            if eval_changes_nothing(facts, call):
                continue  # a model of this file or the program without Dropout/BatchNorm: eval() would change nothing
            key = id(call.func) if call.func is not None else id(_held_out_loop(call))
            if key not in done:
                done.add(key)
                fix = _eval_fix(ctx, call) if not helper else None  # (not in a helper: training would stay in eval)
                yield Report(call.node, f"`{call.callee}` evaluated under `no_grad` but never put in `eval()`: Dropout/BatchNorm still act as in training", fix)


def _unseen_parameter(facts, call) -> bool:
    """The model ``call`` runs is a parameter of its function, which no call of this file
    or of the program's other files runs (d2l's library ``predict(net, X)``, called from
    notebooks nobody linted): nothing says what model it is handed."""
    func = call.func
    root = (call.callee or "").split(".", 1)[0]
    if func is None or root not in func.param_names or root in func.params or func.callers_known:
        return False
    return not facts.sites_of(func) and func.name not in getattr(facts.program, "called_elsewhere", ())


def _switched_by_the_training_test(facts, call, culprit, name) -> bool:
    """The ``eval()`` is the ``else`` of an ``if T:`` whose body calls ``name.train()``,
    and every backward of the training loop runs under ``if T:`` too, with no name of
    ``T`` rebound in that loop (Sentence-VAE's ``for split in splits:`` loop): on the
    iterations that train, ``train()`` ran; the eval path is one that does not."""
    table = parents(facts.module)
    child, up = culprit, table.get(id(culprit))
    while up is not None and type(up) is not cst.If:
        child, up = up, table.get(id(up))
    if up is None or up.orelse is None or not _inside(up.orelse, culprit, table):
        return False
    trains = any(type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "train"
                 and dotted(n.func.value) == name and not n.args for n in walk(up.body))
    if not trains:
        return False
    test = code_of(up.test)
    loop = call.loops[-1]
    names = {n.value for n in walk(up.test) if type(n) is cst.Name}
    if any(type(n) in (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For) and names & _bound_names(n) for n in walk(loop)):
        return False
    backwards = backwards_in_loop(facts, loop)
    return bool(backwards) and all(
        any(type(a) is cst.If and code_of(a.test) == test and _inside(a.body, b.node, table) for a in _ancestors(b.node, table, loop))
        for b in backwards)


def _ancestors(node, table, stop):
    up = table.get(id(node))
    while up is not None and up is not stop:
        yield up
        up = table.get(id(up))


def _inside(block, node, table) -> bool:
    up = node
    while up is not None:
        if up is block:
            return True
        up = table.get(id(up))
    return False


def _bound_names(n) -> set:
    targets = [t.target for t in n.targets] if type(n) is cst.Assign else [n.target]
    return {x.value for t in targets for x in walk(t) if type(x) is cst.Name}


def _runs_the_training_forward(facts, call) -> bool:
    """A call, in a loop that backpropagates, of a function without a backward that runs
    models handed to it (``loss = anneal_dsm_score_estimation(score, X, ...)``: ncsn's
    loss helper of ``losses/dsm.py``), whose result is backpropagated."""
    if not helper_forwards(facts, call) or not backwards_in_loop(facts, call.loops[-1]):
        return False
    return id(call.node) in backpropagated_nodes(facts)


def _forwarded(facts, call) -> set:
    """The caller's names for the models the helper runs, but those of a class known to
    be mode-free, or of one no optimizer holds (a teacher kept in eval mode on purpose)."""
    return {name for name, value in models_handed_to_helper(facts, call)
            if not value_mode_free(facts, value) and not held_by_no_optimizer(facts, value)}


def _evaluates(call, inference_functions) -> bool:
    """Evaluation code: a function inference by name, or (by what it does, in a function
    or at module level) a loop over held-out data (``for x, y in val_loader:``)."""
    if call.func is not None and matches_any(call.func.name, inference_functions):
        return True
    return any(type(loop) is cst.For and is_held_out_data(loop.iter) for loop in call.loops)


def _held_out_loop(call):
    """The outermost loop over held-out data around ``call``, if any."""
    return next((loop for loop in call.loops if type(loop) is cst.For and is_held_out_data(loop.iter)), None)


def _eval_fix(ctx, call):
    """``model.eval()`` before the evaluation (the statement with the call, or the loop
    over held-out data); when that loop sits in the training loop, ``model.train()``
    after it, so that the next epoch trains in train mode again."""
    loop = _held_out_loop(call) if call.func is None or not matches_any(call.func.name, ctx.inference_functions) else None
    model = call.callee[: -len(".forward")] if call.callee and call.method == "forward" else call.callee  # (``self.forward(x)``: ``self``)
    if loop is None:
        return insert_call(ctx, call.node, model, "eval", False, f"Put `{model}` in eval mode first")
    module = ctx.facts.module
    stmt = statement_of(module, loop)
    if stmt is None or not call.callee:
        return None
    outer = call.loops[: call.loops.index(loop)]
    in_training = any(set(b.loops) & set(outer) for b in ctx.facts.backwards)
    stmts = [statement_call(model, "eval").with_changes(leading_lines=stmt.leading_lines), stmt.with_changes(leading_lines=())]
    if in_training:
        stmts.append(statement_call(model, "train"))
    return module_fix(module, {id(stmt): cst.FlattenSentinel(stmts)}, f"Put `{model}` in eval mode for the evaluation loop" + (" and back in train mode after it" if in_training else ""))


def _train_fix(ctx, call, culprit, name):
    """``name.train()`` after the evaluation, before the next training forward pass:
    before the statement of the innermost loop around both the training call and the
    ``eval()`` that holds the training call (``model.train()`` at the top of the epoch);
    directly before the training call's statement when that statement holds the
    ``eval()`` too, or when the ``eval()`` is elsewhere (in an evaluation helper)."""
    table = parents(ctx.facts.module)

    def inside(node, ancestor) -> bool:
        while node is not None and node is not ancestor:
            node = table.get(id(node))
        return node is ancestor

    target = call.node
    loop = next((lp for lp in reversed(call.loops) if inside(culprit, lp)), None)
    if loop is not None:
        stmt = call.node
        while stmt is not None and table.get(id(stmt)) is not loop.body:
            stmt = table.get(id(stmt))
        if stmt is not None and not inside(culprit, stmt):
            target = stmt
    return insert_call(ctx, target, name, "train", False, f"Put `{name}` back in train mode before the next training forward pass")


RULE = EvalTrainModeMismatch


def _handed_mode_free(facts, call) -> set:
    """The models a call of a training step hands it (as the caller spells them) that are
    known to hold no train/eval-sensitive layer (a notebook's ``model_1 =
    LinearModel(...).to(device)`` handed to ``train_step(model=model_1, ...)``): eval()
    left on them changes nothing."""
    out = set()
    for arg, value in zip(call.node.args, call.args):
        name = dotted(arg.value)
        if name is not None and value_mode_free(facts, value):
            out.add(name)
    return out
