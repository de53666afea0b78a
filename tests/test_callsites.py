"""The call-site scan (``scopelint.core.callsites``): the recording state and the loops
another module's calls of a program's functions run in, read from the caller's text."""

from __future__ import annotations

import textwrap

from scopelint.core.callsites import OFF, ON, call_states, names_fed_backward

CALLER = """
    import torch
    import engine
    from engine import step as st
    from mxnet import autograd

    st(1)
    def f():
        with torch.no_grad():
            engine.step(2)
        st(3)

    @torch.no_grad()
    def g():
        engine.step(4)

    with torch.enable_grad():
        with ctx:
            st(5)
        st(6)
    with autograd.record():
        engine.step(7)
    for batch in range(3):
        with torch.set_grad_enabled(False):
            st(8)
    with torch.set_grad_enabled(flag):
        st(9)
    run = lambda: st(10)
"""
NAMES = {("st",): "step", ("engine", "step"): "step"}


def scan(text, names=NAMES, classes=None):
    return call_states(textwrap.dedent(text), names, classes)


def test_each_call_gets_the_state_its_text_decides():
    calls = {line: (torch, mx, loop) for line, torch, mx, loop, _ in scan(CALLER)["step"]}
    assert calls[7] == ((ON, None), (OFF, None, OFF), False)  # module level: each framework's default
    assert calls[10] == ((OFF, "torch.no_grad"), None, False)  # in a function: only what its text sets
    assert calls[11] == (None, None, False)  # a function's own body: its callers decide
    assert calls[15] == ((OFF, "torch.no_grad"), None, False)  # a decorated function
    assert calls[19] == (None, None, False)  # ``with ctx:``: anything
    assert calls[20] == ((ON, "torch.enable_grad"), (OFF, None, OFF), False)
    assert calls[22] == ((ON, None), (ON, "mxnet.autograd.record", ON), False)
    assert calls[25] == ((OFF, "torch.set_grad_enabled"), (OFF, None, OFF), True)  # and a loop runs it
    assert calls[27] == (None, (OFF, None, OFF), False)  # a flag nobody reads here
    assert calls[28] == (None, None, False)  # a lambda runs later


def test_a_use_other_than_a_call_or_another_spelling_means_callers_unseen():
    assert scan(CALLER + "\ncallbacks = [st]\n")["step"] is None  # handed on
    assert scan(CALLER + "\nimport pkg.engine\npkg.engine.step(0)\n")["step"] is None  # a spelling not followed
    assert scan(CALLER + "\ndef st(x):\n    pass\n")["step"] is None  # the name rebound
    assert scan("def broken(:\n") == {"step": None}


def test_a_global_switch_makes_module_level_code_unknown():
    calls = scan("import torch\nfrom engine import step as st\ntorch.set_grad_enabled(False)\nst(1)\n")["step"]
    assert calls == [(4, None, None, False, ())]


def test_method_calls_on_an_instance_of_an_imported_class():
    text = """
        from trainer import Trainer
        t = Trainer(1)
        for x in range(3):
            t.step(x)
        t.report()
        t = object()
        t.step(0)
    """
    found = scan(text, {}, {("Trainer",): "Trainer"})
    assert found == {"Trainer.step": [(5, (ON, None), (OFF, None, OFF), True, ())], "Trainer.report": [(6, (ON, None), (OFF, None, OFF), False, ())]}


def test_mxnet_training_flag_of_each_scope():
    text = """
        from mxnet import autograd
        from engine import step
        with autograd.train_mode():
            step(1)
        with autograd.record(train_mode=False):
            step(2)
        with autograd.pause(True):
            step(3)
        with autograd.predict_mode():
            step(4)
    """
    calls = {line: mx for line, _, mx, _, _ in scan(text, {("step",): "step"})["step"]}
    assert calls == {5: (OFF, None, ON), 7: (ON, "mxnet.autograd.record", OFF), 9: (OFF, "mxnet.autograd.pause", ON),
                     11: (OFF, None, OFF)}


def test_a_call_on_the_line_of_its_import_is_read():
    # (review: the scan's early exit read ``from lib import evaluate; evaluate(m)`` as a
    # text naming ``evaluate`` on import lines only)
    assert call_states("from lib import evaluate; evaluate(m)\n", {("evaluate",): "evaluate"}) == {
        "evaluate": [(1, (ON, None), (OFF, None, OFF), False, ())]}
    assert call_states("import lib; lib.evaluate(m)\n", {("lib", "evaluate"): "evaluate"})["evaluate"]
    # named on its import line alone: neither called nor used
    assert call_states("from lib import evaluate\nx = 1\n", {("evaluate",): "evaluate"}) == {}


def test_the_arguments_a_call_hands_in_eval_mode():
    # guoyang9/NCF's main.py: ``model.eval()`` then ``evaluate.metrics(model, loader, k)``
    text = """
        import evaluate
        model.eval()
        evaluate.metrics(model, loader, k=model)
        for epoch in range(3):
            model.train()
            evaluate.metrics(model, loader)
            if epoch:
                model.eval()
            evaluate.metrics(model, loader)
            net.eval()
            evaluate.metrics(net, model=net)
            net = build()
            evaluate.metrics(net)
        def f(m):
            m.eval()
            evaluate.metrics(m)
    """
    calls = {line: ev for line, _, _, _, ev in scan(text, {("evaluate", "metrics"): "metrics"})["metrics"]}
    assert calls == {4: ("0", "k"), 7: (), 10: (), 12: ("0", "model"), 14: (), 17: ("0",)}


def fed(text: str, *wanted: str):
    return names_fed_backward(textwrap.dedent(text), frozenset(wanted))


def test_a_call_whose_result_reaches_a_backward_is_fed():
    # Through a tuple target and arithmetic (an RL agent's update, Popular-RL-Algorithms' shape).
    assert fed("""
        def update(self, state):
            new_action, log_prob = self.policy_net.evaluate(state)
            loss = (log_prob - self.q(state, new_action)).mean()
            loss.backward()
        """, "evaluate", "predict") == {"evaluate"}
    # Inline, under a scaler, and in MXNet's autograd.backward of a list.
    assert fed("""
        scaler.scale(crit(model.infer(x), y)).backward()
        """, "infer") == {"infer"}
    assert fed("""
        def step(xs):
            losses = []
            for x in xs:
                losses.append(loss_fn(net.evaluate(x)))
            autograd.backward(losses)
        """, "evaluate") == {"evaluate"}


def test_a_self_attribute_carries_a_result_between_methods_of_a_class():
    text = """
        class Agent:
            def act(self, s):
                action, logp = self.policy.evaluate(s)
                self.saved.append(logp)
                return action
            def finish(self):
                loss = -torch.stack(self.saved).sum()
                loss.backward()
        """
    assert fed(text, "evaluate") == {"evaluate"}
    # Local names of two methods are not one: ``out`` of ``act`` is not ``finish``'s.
    assert fed("""
        class Agent:
            def act(self, s):
                out = self.policy.evaluate(s)
                return out.argmax()
            def finish(self, out):
                out.backward()
        """, "evaluate") == set()


def test_a_result_only_read_returned_or_used_apart_from_the_loss_is_not_fed():
    assert fed("""
        def main():
            for x, y in loader:
                loss = crit(model(x), y)
                loss.backward()
                opt.step()
            acc = evaluate(model, val_loader)
            print(acc)
        """, "evaluate") == set()
    assert fed("""
        def rollout(s):
            return policy.evaluate(s)
        loss.backward()
        """, "evaluate") == set()
    # Named only on an import line, or not at all: nothing is parsed.
    assert fed("from common.nets import evaluate\nloss.backward()\n", "evaluate") == set()
    assert fed("x = evaluate(1)\n", "evaluate") == set()
