import libcst as cst

from scopelint.core.arguments import bound_params, forward_params, parameter_of
from scopelint.core.arguments import call_arg
from scopelint.core.flow import carried_tag
from scopelint.core.syntax import literal_bool
from scopelint.core.frameworks import MXNET
from scopelint.core.queries import backwards_in_loop, backwards_run_in_loop, detached_by_model_of_program, detaches_param, forward_of, forwarded_params, graph_path, recorded, state_kept_on_self
from scopelint.core.roles import is_model_call
from scopelint.fixkit import code_of, detach_expression, detached, detached_state, localized, module_fix, quiet, statement_of
from scopelint.rule import Report, Rule


# Recurrent modules whose state is one tensor (an LSTM's is a pair).
SINGLE_STATE = {f"ctor:torch.nn.{m}" for m in ("RNN", "GRU", "RNNCell", "GRUCell")}


class HiddenStateNotDetached(Rule):
    code = "SL204"
    name = "hidden-state-not-detached"
    severity = "error"
    fixable = "unsafe"
    frameworks = ("torch", "mxnet")
    summary = "A recurrent state returned by a forward pass is fed into the next iteration's forward without `.detach()`."
    help = "Detach the state at the start of each iteration: `hidden = hidden.detach()` (or `repackage_hidden(hidden)`)."
    why = """
        The hidden state carries the graph of the iteration that produced it. Fed into
        the next forward, each step's graph links to all previous ones: PyTorch raises
        `RuntimeError: Trying to backward through the graph a second time` (the
        earlier part was freed by the previous backward); MXNet, when the backward
        keeps the graph (`retain_graph=True`), backpropagates through the whole history,
        ever slower, with gradients that are not truncated BPTT's (without it MXNet
        frees the history at each backward, so the carried state acts as detached and
        nothing is reported). The same holds for a state a
        module keeps on itself (`out, self.hidden = self.lstm(x, self.hidden)` in
        `forward`) when each training step calls it and nothing detaches or resets it.
    """
    bad = """
        import torch

        rnn = torch.nn.RNN(3, 5)
        opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
        hidden = torch.zeros(1, 2, 5)
        for step in range(3):
            opt.zero_grad()
            out, hidden = rnn(torch.randn(4, 2, 3), hidden)
            out.pow(2).mean().backward()
            opt.step()
    """
    good = """
        import torch

        rnn = torch.nn.RNN(3, 5)
        opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
        hidden = torch.zeros(1, 2, 5)
        for step in range(3):
            opt.zero_grad()
            hidden = hidden.detach()
            out, hidden = rnn(torch.randn(4, 2, 3), hidden)
            out.pow(2).mean().backward()
            opt.step()
    """

    def check(self, ctx):
        facts = ctx.facts
        for call in facts.calls:
            model = is_model_call(call)
            # (a model call in a step called once per iteration: its caller's loops too,
            # where the step itself backpropagates)
            loops = call.caller_loops + call.loops if model else call.loops
            if not loops:
                continue
            # (or a local function that runs the forward pass on some of its arguments)
            forwards = forwarded_params(facts, call.target) if not model else frozenset()
            if not model and not forwards:
                continue
            # A loop that backpropagates each iteration, and so must cut what it carries.
            training = [loop for loop in call.loops if _keeps_history(backwards_in_loop(facts, loop))]
            if model and call.caller_loops and call.func is not None:
                training = [loop for loop in call.caller_loops if _keeps_history(
                    [b for b in backwards_run_in_loop(facts, loop) if b.func is call.func])] + training
            carried = [i for i, arg in enumerate(call.args) if any(self._carries_graph(arg, loop, facts) for loop in training)]
            if not model:
                carried = [i for i in carried if parameter_of(call.node, bound_params(call.node, call.target), i) in forwards]
            forward = forward_of(facts, call) if carried and model else None
            if forward is not None:  # (a model that detaches the state it is handed)
                carried = [i for i in carried if not detaches_param(forward, parameter_of(call.node, forward_params(forward), i), facts)]
            elif carried and model:  # (... of a class of another module of the program)
                carried = [i for i in carried if not detached_by_model_of_program(facts, call, i)]
            if carried:
                expr = call.node.args[carried[0]].value
                single = any(t in call.callee_value.tags for t in SINGLE_STATE) if call.callee_value else False
                each = True if facts.frameworks == {MXNET} else (False if single else "either")
                fix = _detach_fix(ctx, call.node, expr, each)
                yield Report(call.node, "the state fed into this forward pass comes from the previous iteration's forward and is not detached", fix)
        for call, i, key in state_kept_on_self(facts):
            if not _keeps_history(facts.backwards):
                continue
            expr = call.node.args[i].value
            single = any(t in call.callee_value.tags for t in SINGLE_STATE) if call.callee_value else False
            each = True if facts.frameworks == {MXNET} else (False if single else "either")
            yield Report(call.node, f"the state `{key}` fed into this forward pass was stored by the previous call's forward and is not detached", _detach_fix(ctx, call.node, expr, each))

    @staticmethod
    def _carries_graph(arg, loop, facts) -> bool:
        def stop(v):  # a detach, a conversion, or any call that is not plain arithmetic
            return "left-graph" in v.tags or not v.pure

        tag = carried_tag(loop)
        for v in graph_path(arg, stop):
            if tag not in v.tags:
                continue
            for w in graph_path(v.parents[-1], stop):
                producer = facts.call_of(w.node)
                if producer is not None and is_model_call(producer) and any(recorded(w, fw) for fw in facts.frameworks):
                    return True
        return False


def _keeps_history(backwards) -> bool:
    """Some of these backward passes leaves the carried state's history in place for the
    next iteration: PyTorch's (the next backward through it raises), or MXNet's with
    ``retain_graph=True``. MXNet's backward otherwise frees the history it went through:
    the next iteration's backward stops at the carried state, which then acts as a
    detached one (measured: the gradients equal truncated BPTT's, d2l's MXNet RNN loop)."""
    for b in backwards:
        if b.frameworks != {MXNET}:
            if b.frameworks:
                return True
            continue
        retain = call_arg(b.node, None, "retain_graph")
        if retain is None and b.api == "backward":
            retain = call_arg(b.node, 1, "retain_graph")  # ``loss.backward(out_grad, retain_graph)``
        if retain is not None and literal_bool(retain.value) is True:
            return True
    return False


MESSAGE = "Detach the state carried from the previous iteration"


def _detach_fix(ctx, call: cst.Call, expr: cst.BaseExpression, each):
    """Where the forward rebinds the state it was given (``out, h = rnn(x, h)``), detach
    it right after: ``h = h.detach()`` (an LSTM's ``(h, c)`` each, MXNet's list of states
    each). A forward's state is never None, so this holds for a state that starts as
    None (``rnn(x, None)`` makes zeros), and the first iteration still reaches a learned
    initial state. Otherwise the state is detached where it is passed, None kept."""
    after = _detach_after(ctx, call, expr, each)
    if after is not None:
        return after
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return localized(expr, _guarded(expr, _detached_form(expr, each)), MESSAGE)
    return detach_expression(expr, MESSAGE, each=each)


def _detached_form(expr, each):
    if each == "either":
        return detached_state(expr)
    if each is True:
        item = cst.Name("s")
        return cst.ListComp(elt=detached(item), for_in=cst.CompFor(target=item, iter=expr))
    return detached(expr)


def _guarded(expr, form):
    """``(None if expr is None else form)``."""
    test = cst.Comparison(left=expr, comparisons=[cst.ComparisonTarget(operator=cst.Is(), comparator=cst.Name("None"))])
    return cst.IfExp(test=test, body=cst.Name("None"), orelse=form, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


@quiet
def _detach_after(ctx, call: cst.Call, expr: cst.BaseExpression, each):
    names = (cst.Name, cst.Attribute)
    pair = isinstance(expr, cst.Tuple) and expr.elements and all(isinstance(el.value, names) for el in expr.elements)
    if not isinstance(expr, names) and not pair:
        return None
    module = ctx.facts.module
    stmt = statement_of(module, call)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    assign = stmt.body[0]
    if not isinstance(assign, cst.Assign) or assign.value is not call:
        return None
    name = code_of(expr)
    targets = []
    for t in assign.targets:
        node = t.target
        targets += [el.value for el in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
    if not any(code_of(t) == name for t in targets):
        return None
    if pair:  # out, (h, c) = lstm(x, (h, c)): h, c = h.detach(), c.detach()
        bare = expr.with_changes(lpar=[], rpar=[])
        value = bare.with_changes(elements=[el.with_changes(value=detached(el.value)) for el in bare.elements])
        line = cst.SimpleStatementLine([cst.Assign(targets=[cst.AssignTarget(target=bare)], value=value)])
        return module_fix(module, {id(stmt): cst.FlattenSentinel([stmt, line])}, MESSAGE)
    form = _detached_form(expr, each)
    if each == "either" and isinstance(form, cst.IfExp):
        form = form.with_changes(lpar=[], rpar=[])
    line = cst.SimpleStatementLine([cst.Assign(targets=[cst.AssignTarget(target=expr)], value=form)])
    return module_fix(module, {id(stmt): cst.FlattenSentinel([stmt, line])}, MESSAGE)


RULE = HiddenStateNotDetached
