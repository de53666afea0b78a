from typing import Optional

import libcst as cst

from scopelint.core import frameworks as F
from scopelint.core.queries import backpropagated_nodes, backward_functions, chosen_by_caller, module_trains, constructs_a_class_of_the_file, names_escaping_block, returned_to_no_backward, used_by_unknown_method, run_only_from, switches_own_recording, records_nothing, own_layers_run, input_requires_grad
from scopelint.core.roles import is_model_call, is_unit_test, made_loss, matches_any, model_called, model_framework
from scopelint.core.flow import VOLATILE
from scopelint.core.state import Mode
from scopelint.core.syntax import is_nested_scope, parents, walk
from scopelint.fixkit import (
    code_of, localized, module_fix, quiet, scope_of, sibling, spell_or_import, statement_of, wrap,
)
from scopelint.rule import NodeFix, Report, Rule


class RecordingDuringInference(Rule):
    code = "SL103"
    name = "recording-during-inference"
    severity = "warning"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "A forward pass in inference code runs with recording on."
    help = "PyTorch: wrap the forward pass in `with torch.no_grad():` (or decorate the function with `@torch.inference_mode()`). MXNet: drop the `autograd.record()` around prediction."
    why = """
        Recording during prediction builds a graph that is never used: memory and time
        are wasted, and outputs keep `grad_fn` references that hold activations alive.
        In MXNet `autograd.record()` also sets `train_mode=True`, so Dropout and
        BatchNorm behave as in training and the predictions themselves change.
        PyTorch-Lightning's `validation_step`/`test_step`/`predict_step` already run
        without grad and are not flagged, nor are unit tests (a `test*` function that
        asserts: it runs once, checks shapes, and frees what it recorded). At module level (scripts, notebook cells) a
        forward pass after `model.eval()` whose result no backward uses is reported.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)

        def predict(batch):
            model.eval()
            return model(batch)
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)

        @torch.no_grad()
        def predict(batch):
            model.eval()
            return model(batch)
    """

    def check(self, ctx):
        facts = ctx.facts
        if F.TORCH in facts.frameworks:
            yield from self._torch(ctx)
        if F.MXNET in facts.frameworks:
            yield from self._mxnet(ctx)

    def _torch(self, ctx):
        facts = ctx.facts
        # A function that backpropagates itself trains; one that calls a training step
        # (through a helper) is no inference code by its name, but a forward pass it makes
        # after ``model.eval()`` still is (an epoch's evaluation after its training).
        trains = backward_functions(facts)
        backprops = {id(b.func) for b in facts.backwards if b.func is not None}
        backpropagated = None
        fed_backward: set = set()
        reported: set = set()
        deferred: list = []  # (function, methods walked, report): a model's method called (``model.sample(z)``)

        def lightning_hook(func) -> bool:
            # A hook of a LightningModule (or of Lightning's own class: its default
            # ``predict_step``), which the Trainer runs without grad.
            return func.name in F.LIGHTNING_NO_GRAD_HOOKS and (
                any(b in F.LIGHTNING_MODULES for b in func.framework_bases)
                or (func.cls is not None and func.cls.name.value == "LightningModule"))

        # Inference code by its name, and the helpers, methods and callbacks it alone runs.
        inference = run_only_from(facts, {
            id(f): f for f in facts.functions
            if matches_any(f.name, ctx.inference_functions) and id(f) not in trains and not f.opaque
            and f.name not in getattr(facts.program, "fed_backward", ())  # (another file trains on its result)
            and not lightning_hook(f) and not is_unit_test(f, facts)},
            # (not through a forward pass: the model's own code is no inference code)
            trains | backprops | {id(c.target) for c in facts.calls if c.target is not None and is_model_call(c)})
        for func in facts.functions:
            if func.opaque or is_unit_test(func, facts):
                continue
            # (a function that backpropagates itself is judged per forward pass: one made
            # after ``model.eval()`` whose result no backward uses is inference code there
            # too -- validation inside the epoch function)
            trains_here = id(func) in backprops
            by_name = id(func) in inference and not trains_here
            for call in facts.calls_in(func):
                sw = call.state.torch
                default_on = sw.mode == Mode.UNKNOWN and sw.origin is not None and sw.origin.kind == "unknown-entry"
                # (where a function that backpropagates is entered, recording is on: its
                # backward needs it; what it runs after ``model.eval()`` is judged below)
                walked = None if is_model_call(call) else _in_eval_layers(own_layers_run(facts, call), call)
                method_of_model = walked[0] if walked is not None else None
                if not (sw.on or (default_on and (not trains_here or _evaluation_loop(facts, call)))) \
                        or not (is_model_call(call) or (method_of_model is not None and method_of_model in call.in_eval)) \
                        or constructs_a_class_of_the_file(facts, call) or not _torch_model(call) or input_requires_grad(call):
                    continue
                if switches_own_recording(facts, call) or records_nothing(facts, call):
                    continue  # (its forward decides, per path; a frozen model on data records nothing)
                if not by_name and ((method_of_model or model_called(call)) not in call.in_eval or lightning_hook(func)):
                    continue
                # (a forward pass that is backpropagated, here, by a helper, or in a
                # function whose result some caller backpropagates, is no inference, by
                # name or in eval mode: an attack, a probe, or training in eval mode --
                # SL207's question)
                if backpropagated is None:
                    backpropagated = backpropagated_nodes(facts, past_detach=False)
                    fed_backward = {id(c.target) for c in facts.calls if c.target is not None and id(c.node) in backpropagated}
                if id(call.node) in backpropagated or id(func) in fed_backward:
                    continue
                root = inference.get(id(func))
                why = (f"`{func.name}` is inference code" if root is func else f"`{func.name}` runs only in inference code (`{root.name}`)"
                       ) if by_name else f"`{method_of_model or model_called(call)}` is in eval mode"
                report = Report(call.node, f"model called with autograd recording on, but {why}: no `torch.no_grad()` around it", recording_during_inference_torch(ctx, call))
                if walked is not None:
                    deferred.append((func, walked[1], report))  # (reported where the method's own forward is not)
                    continue
                yield report
                reported.add(id(func))
                break
        for func, methods, report in deferred:
            if id(func) not in reported and not (methods & reported):
                reported.add(id(func))
                yield report
        yield from self._torch_module_level(ctx, reported)
        yield from self._torch_volatile(ctx, reported)

    def _torch_volatile(self, ctx, reported):
        """A forward pass on ``Variable(x, volatile=True)``: written to predict without a
        graph, but ``volatile`` does nothing since PyTorch 0.4 and recording is on (the
        first such call per function, where no other finding of this code is)."""
        facts = ctx.facts
        backpropagated = None
        for call in facts.calls:
            if id(call.func) in reported or not call.state.torch.on or not is_model_call(call) or switches_own_recording(facts, call) \
                    or records_nothing(facts, call) or not _torch_model(call):
                continue
            if not any(VOLATILE <= v.tags for a in call.args for v in a.ancestors()):
                continue
            if backpropagated is None:
                backpropagated = backpropagated_nodes(facts, past_detach=False)
            if id(call.node) in backpropagated:
                continue
            reported.add(id(call.func))
            yield Report(call.node, "model called with autograd recording on: its input is a `Variable(..., volatile=True)`, "
                                    "which does nothing since PyTorch 0.4: no `torch.no_grad()` around it",
                         recording_during_inference_torch(ctx, call))

    def _torch_module_level(self, ctx, in_functions):
        """Scripts and notebook cells: after ``model.eval()`` at module level, a forward
        pass with recording on whose result no backward ever uses (the first one per
        model: the fix wraps it, and the reader sees the rest)."""
        facts = ctx.facts
        backpropagated = None
        reported = set()
        for call in facts.calls:
            walked = None if is_model_call(call) else _in_eval_layers(own_layers_run(facts, call), call)
            model = model_called(call) if walked is None else walked[0]
            if call.func is not None or not call.state.torch.on or model is None or model in reported \
                    or (walked is not None and walked[1] & in_functions):
                continue  # (a model's method whose own forward pass is reported in it)
            if model not in call.in_eval or switches_own_recording(facts, call) or records_nothing(facts, call) \
                    or not _torch_model(call) or input_requires_grad(call):
                continue
            if backpropagated is None:
                backpropagated = backpropagated_nodes(facts, past_detach=False)
            if id(call.node) in backpropagated:
                continue  # (trained in eval mode: SL207's question)
            reported.add(model)
            yield Report(call.node, f"model called with autograd recording on after `{model}.eval()`: no `torch.no_grad()` around it", recording_during_inference_torch(ctx, call))

    def _mxnet(self, ctx):
        facts = ctx.facts
        trains = backward_functions(facts)
        has_module_backward = module_trains(facts, trains)
        reported = set()
        for report in self._mxnet_blocks(ctx, trains, has_module_backward):
            reported.add(id(report.node))
            yield report
        yield from self._mxnet_forwards(ctx, trains, has_module_backward, reported)

    def _mxnet_forwards(self, ctx, trains, has_module_backward, reported):
        """Per forward pass (RULES.md, SL103): inside a ``record()`` block that trains, a
        forward pass whose result no backward uses -- an evaluation helper called there,
        a metric's prediction -- records a graph and runs in training mode."""
        facts = ctx.facts
        scopes = {id(s.item): s for s in facts.scopes if s.api == "mxnet.autograd.record" and s.called}
        backpropagated = fed = None
        done = set()
        def trains_in(scope) -> bool:
            return (scope.func is None and has_module_backward) or (scope.func is not None and id(scope.func) in trains)

        for call in facts.calls:
            if call.state.mx_train.off:
                continue  # (in ``predict_mode()``: no Dropout; recorded on purpose, or a waste, not wrong)
            found = _record_blocks(facts, scopes, call.state, call.func) if is_model_call(call) else None
            if not found or any(id(s.item.item) in reported for s in found):
                continue
            if not all(trains_in(s) for s in found):
                continue  # (a block that does not train: the whole block's finding, or none)
            scope = found[0]
            if call.func is not None and (call.func.in_model_class or call.func.name in ("forward", "hybrid_forward")):
                continue  # (a layer run by a model's own forward: part of that forward pass)
            if backpropagated is None:
                backpropagated = backpropagated_nodes(facts)
                fed = {id(c.target) for c in facts.calls if c.target is not None and id(c.node) in backpropagated}
            if id(call.node) in backpropagated or (call.func is not None and id(call.func) in fed):
                continue
            if call.func is not None and call.func is not scope.func and not returned_to_no_backward(facts, call.func.node, call.func):
                continue  # (a helper whose result a caller may backpropagate)
            if _handed_on(facts, call):
                continue  # (stored into an object, handed to code the flow does not follow: a use not seen)
            key = id(call.func) if call.func is not scope.func else id(call.node)
            if key in done:
                continue
            done.add(key)
            where = f" (in `{call.func.name}`, called inside it)" if call.func is not None and call.func is not scope.func else ""
            yield Report(call.node, "forward pass inside `autograd.record()` whose result is never backpropagated" + where
                         + ": it records a graph and runs in training mode (Dropout/BatchNorm)", pause_around(ctx, call))

    def _mxnet_blocks(self, ctx, trains, has_module_backward):
        facts = ctx.facts
        for scope in facts.scopes:
            if scope.api != "mxnet.autograd.record" or not scope.called:
                continue
            if (scope.func is None and has_module_backward) or (scope.func is not None and id(scope.func) in trains):
                continue
            if is_unit_test(scope.func, facts):
                continue  # (a test that records to check training-mode behaviour, apache/mxnet's ``test_lstm_clip``)
            inside = [c for c in facts.calls if c.state.mxnet.origin is not None and c.state.mxnet.origin.node is scope.item]
            if not any(is_model_call(c) for c in inside):
                continue
            if chosen_by_caller(scope.with_node, scope.func):
                continue
            if names_escaping_block(scope.with_node, scope.func) and not returned_to_no_backward(facts, scope.with_node, scope.func):
                continue  # (a caller may backpropagate it)
            if used_by_unknown_method(facts, scope.item, F.MXNET):
                continue  # (``l.backword()``: a use nobody here knows)
            yield Report(
                scope.item.item,
                "`autograd.record()` around a forward pass that is never backpropagated: it records a graph and turns on training mode (Dropout/BatchNorm)",
                recording_during_inference_mxnet(ctx, scope),
            )


def _in_eval_layers(walked, call):
    """``queries.own_layers_run``'s answer where some layer it runs is still in eval mode at
    the call (``model.eval(); model.enc.train(); model.embed(x)``: ``model.enc`` trains)."""
    if walked is None or walked[0] not in call.in_eval or all(layer in call.in_train for layer in walked[2]):
        return None
    return walked


def _evaluation_loop(facts, call) -> bool:
    """In a function that backpropagates, entered where nobody here says: a forward pass
    of a model in eval mode inside a loop that runs no backward (the epoch function's
    validation loop), whose result is not stored or handed on (``self.outputs = ...``
    read by a loss helper trains)."""
    if model_called(call) not in call.in_eval or not call.loops or _stored(facts, call):
        return False
    loop = call.loops[-1]
    return not any(loop in b.loops for b in facts.backwards)


_SHOWN = frozenset({"print", "len", "str", "repr", "format", "isinstance", "type", "float", "int", "bool"})


def _stored(facts, call) -> bool:
    """The forward pass's result is assigned to an attribute or an entry (``self.outputs
    = self.model(images)``): a later reader (a loss helper) may backpropagate it."""
    table = parents(call.func.node if call.func is not None else facts.module)
    up = table.get(id(call.node))
    return type(up) is cst.Assign and any(type(t.target) in (cst.Attribute, cst.Subscript) for t in up.targets)


def _handed_on(facts, call) -> bool:
    """The forward pass's result (or the name bound to it) is stored into an attribute
    or an entry (``g.edata["feat"] = head(x)``) or handed to a call that is no tensor
    operation (``pool.query(out)``, ``loss_fn(g)``): a later use the flow may not see."""
    unit = call.func.node if call.func is not None else facts.module
    table = parents(unit)
    names = set()
    node = call.node
    while True:
        up = table.get(id(node))
        if up is None:
            break
        if type(up) is cst.Arg:
            outer = table.get(id(up))
            fact = facts.call_of(outer) if type(outer) is cst.Call else None
            if fact is None or not (fact.qname and F.framework_of(fact.qname)):
                return True
        if type(up) is cst.Assign:
            for t in up.targets:
                if type(t.target) in (cst.Attribute, cst.Subscript):
                    return True
                names |= {n.value for n in walk(t.target) if type(n) is cst.Name}
            break
        if isinstance(up, cst.BaseSmallStatement) or isinstance(up, cst.BaseCompoundStatement):
            break
        node = up
    if not names:
        return False
    grown = True
    while grown:  # (names of what a loss object computes from them, followed too)
        grown = False
        for n in walk(unit, is_nested_scope):
            if type(n) is cst.Call and n is not call.node:
                fact = facts.call_of(n)
                if fact is not None and fact.qname and F.framework_of(fact.qname):
                    continue
                if type(n.func) is cst.Name and n.func.value in _SHOWN:
                    continue  # (``print(pred)``: shown, not kept)
                if any(type(a.value) is cst.Name and a.value.value in names for a in n.args):
                    up = table.get(id(n))
                    if fact is not None and fact.callee_value is not None and made_loss(fact.callee_value) and type(up) is cst.Assign \
                            and all(type(t.target) is cst.Name for t in up.targets):
                        # ``L = loss(output, label)`` of a framework loss object: a tensor
                        # operation; what it makes is followed
                        new = {t.target.value for t in up.targets} - names
                        if new:
                            names |= new
                            grown = True
                        continue
                    return True
            elif type(n) is cst.Assign and any(type(t.target) in (cst.Attribute, cst.Subscript) for t in n.targets) \
                    and type(n.value) is cst.Name and n.value.value in names:
                return True
    return False


def _torch_model(call) -> bool:
    """Not known to be another framework's model: a Gluon block called in a file that
    imports torch too records nothing outside ``autograd.record()``."""
    return model_framework(call) in (None, F.TORCH)


# --- the fix ----------------------------------------------------------------------------
@quiet
def recording_during_inference_torch(ctx, call) -> Optional[NodeFix]:
    """SL103 (PyTorch): ``with torch.no_grad():`` around the statement with the model call
    (or ``@torch.no_grad()`` on the function when the call is in a compound statement)."""
    module = ctx.facts.module
    scope = scope_of(ctx, call.func)
    api, imports = spell_or_import(ctx, scope, "torch.no_grad")
    if api is None:
        return None
    scope_expr = cst.Call(func=api)
    stmt = statement_of(module, call.node)
    if isinstance(stmt, cst.SimpleStatementLine):
        return module_fix(module, {id(stmt): wrap([stmt], scope_expr)}, f"Run the forward pass inside `with {code_of(scope_expr)}:`", imports)
    if call.func is None:
        return None
    fdef = call.func.node
    new = fdef.with_changes(decorators=[cst.Decorator(scope_expr)] + list(fdef.decorators))
    return module_fix(module, {id(fdef): new}, f"Decorate `{call.func.name}` with `@{code_of(scope_expr)}`", imports)


@quiet
def pause_around(ctx, call) -> Optional[NodeFix]:
    """SL103 (MXNet, one forward pass): ``with autograd.pause():`` around its statement
    (``pause()`` also leaves training mode: Dropout off, as a prediction needs)."""
    module = ctx.facts.module
    api, imports = spell_or_import(ctx, scope_of(ctx, call.func), "mxnet.autograd.pause")
    stmt = statement_of(module, call.node)
    if api is None or not isinstance(stmt, cst.SimpleStatementLine):
        return None
    scope_expr = cst.Call(func=api)
    return module_fix(module, {id(stmt): wrap([stmt], scope_expr)}, f"Predict outside the recording: `with {code_of(scope_expr)}:`", imports)


@quiet
def recording_during_inference_mxnet(ctx, scope_fact) -> Optional[NodeFix]:
    """SL103 (MXNet): drop the recording: ``autograd.record()`` -> ``autograd.pause()``."""
    call = scope_fact.item.item
    if not isinstance(call, cst.Call) or scope_fact.item.asname is not None:
        return None
    scope = scope_of(ctx, scope_fact.func)
    pause = sibling(ctx, scope, call.func, "mxnet.autograd.pause")
    if pause is None:
        return None
    new = cst.Call(func=pause)
    return localized(call, new, f"Do not record the prediction: `{code_of(call)}` -> `{code_of(new)}`")


RULE = RecordingDuringInference


def _record_blocks(facts, scopes, state, func, depth=3):
    """The ``record()`` blocks (of ``scopes``, by item) a call in this state runs in: its
    own, or, in a function entered recording, those of every call of that function.
    (A module function: a recursive closure would be a reference cycle holding the
    file's facts until a collection.)"""
    sw = state.mxnet
    if not sw.on or sw.origin is None:
        return None
    if sw.origin.node is not None:
        found = scopes.get(id(sw.origin.node))
        return [found] if found is not None else None
    if sw.origin.kind != "entry" or sw.origin.api != "mxnet.autograd.record" or func is None or not depth:
        return None
    out = []
    for site in facts.sites_of(func):
        more = _record_blocks(facts, scopes, site.state, site.func, depth - 1)
        if not more:
            return None
        out += more
    return out or None
