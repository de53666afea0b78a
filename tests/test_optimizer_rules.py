"""SL208 and SL211 where the state is known and where it is not (unknown means silence)."""

from __future__ import annotations

import textwrap

import pytest

from scopelint.engine import lint_source


def codes(src: str, code: str):
    result = lint_source(textwrap.dedent(src), "t.py")
    assert not result.errors
    return [f.start[0] for f in result.findings if f.code == code]


COPY_LOOP = """
    import copy
    import torch
    from torch import nn

    policy = nn.Linear(4, 2)
    opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    target = copy.deepcopy(policy)
    {setup}
    for step in range(3):
        opt.zero_grad()
        loss = {loss}
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize("setup, loss, flagged", [
    ("", "target(torch.randn(2, 4)).sum()", True),
    ("", "target(torch.randn(2, 4)).sum() + policy(torch.randn(2, 4)).detach().sum()", True),
    ("", "target(torch.randn(2, 4)).sum() + policy(torch.randn(2, 4)).sum()", False),
    # through a function: what it reaches is not known
    ("def f(x):\n        return policy(x)", "f(target(torch.randn(2, 4))).sum()", False),
    # a wrapper holds the owner's parameters
    ("wrapped = nn.Sequential(policy)", "target(wrapped(torch.randn(2, 4))).sum()", False),
    # the copy's layer is the owner's
    ("target.weight = policy.weight", "target(torch.randn(2, 4)).sum()", False),
    # every parameter taken one by one: whose, unknown
    ("", "target(torch.randn(2, 4)).sum() + sum((p ** 2).sum() for p in policy.parameters())", False),
])
def test_sl208_needs_the_loss_known_to_miss_the_owner(setup, loss, flagged):
    src = COPY_LOOP.replace("{setup}", setup).replace("{loss}", loss)
    assert bool(codes(src, "SL208")) == flagged


def test_sl208_silent_when_data_comes_from_a_name_nobody_knows():
    src = """
        import copy
        import torch

        def train(policy, batch):
            opt = torch.optim.SGD(policy.parameters(), lr=0.1)
            target = copy.deepcopy(policy)
            for step in range(3):
                opt.zero_grad()
                loss = target(batch).sum()
                loss.backward()
                opt.step()
    """
    assert codes(src, "SL208") == []


TRAINER_LOOP = """
    from mxnet import autograd, gluon, nd

    net = gluon.nn.Dense(1, in_units=2)
    net.initialize()
    for epoch in range(3):
        trainer = gluon.Trainer(net.collect_params(), {args})
        with autograd.record():
            l = net(nd.ones((4, 2))).sum()
        l.backward()
        trainer.step(4)
"""


@pytest.mark.parametrize("args, flagged", [
    ('"adam", {"learning_rate": 1e-3}', True),
    ('"sgd", {"learning_rate": 0.1, "momentum": 0.9}', True),
    ('"sgd", {"learning_rate": 0.1}', False),  # plain SGD keeps no state
    ('"sgd", opts', False),  # a dict the rule cannot read
])
def test_sl211_trainer_state(args, flagged):
    src = TRAINER_LOOP.replace("{args}", args)
    assert bool(codes(src.replace("net.initialize()", "net.initialize()\n    opts = {}"), "SL211")) == flagged


@pytest.mark.parametrize("loop_head, extra, flagged", [
    ("for epoch in range(3):", "", True),
    ("for epoch in range(1):", "", False),
    ("for stage in stages:", "", False),
    ("for epoch in range(3):", "model.reset_parameters()", False),
    ("for epoch in range(3):", "model = nn.Linear(3, 1)", False),
])
def test_sl211_model_must_persist_across_training_iterations(loop_head, extra, flagged):
    src = f"""
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        stages = [1, 2]
        {loop_head}
            {extra}
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            opt.zero_grad()
            model(torch.randn(4, 3)).sum().backward()
            opt.step()
    """
    assert bool(codes(src, "SL211")) == flagged


def test_sl211_self_model_rebuilt_by_another_method_is_silent():
    src = """
        import torch
        from torch import nn

        class Runner:
            def __init__(self):
                self.model = nn.Linear(3, 1)

            def reset(self):
                self.model = nn.Linear(3, 1)

            def fit(self):
                for epoch in range(3):
                    self.reset()
                    opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
                    opt.zero_grad()
                    self.model(torch.randn(4, 3)).sum().backward()
                    opt.step()
    """
    assert codes(src, "SL211") == []
    kept = src.replace("self.model = nn.Linear(3, 1)\n\n            def fit", "pass\n\n            def fit")
    kept = kept.replace("self.reset()", "print(epoch)")
    assert kept != src and codes(kept, "SL211") == [15]


@pytest.mark.parametrize("params, extra, flagged", [
    ("list(enc.parameters()) + list(head.parameters())", "", True),
    ("[*enc.parameters(), *head.parameters()]", "", True),
    ("itertools.chain(enc.parameters(), head.parameters())", "", True),
    ('[{"params": enc.parameters()}, {"params": head.parameters(), "lr": 1e-2}]', "", True),
    # one of the models is built in the iteration: a fresh run
    ("list(enc.parameters()) + list(head.parameters())", "head = nn.Linear(8, 1)", False),
    ('[{"params": enc.parameters()}, {"params": head.parameters()}]', "head = nn.Linear(8, 1)", False),
    # a part the rule cannot read: silent
    ("list(enc.parameters()) + extra", "", False),
    ("list(enc.parameters()) + [p for p in head.parameters() if p.requires_grad]", "", False),
    ('[{"params": enc.parameters()}, {"lr": 1e-2}]', "", False),
])
def test_sl211_optimizer_over_several_models(params, extra, flagged):
    src = f"""
        import itertools
        import torch
        from torch import nn

        enc, head = nn.Linear(3, 8), nn.Linear(8, 1)
        extra = [torch.zeros(1, requires_grad=True)]
        for epoch in range(3):
            {extra}
            opt = torch.optim.Adam({params}, lr=1e-3)
            opt.zero_grad()
            head(enc(torch.randn(4, 3))).sum().backward()
            opt.step()
    """
    assert bool(codes(src, "SL211")) == flagged


@pytest.mark.parametrize("loss, flagged", [
    ("loss_fn(net(X), y)", True),  # only the rebuilt network: the trainer's weights get nothing
    ("loss_fn(old(X), y)", False),  # the network the trainer was made over
    ("loss_fn(net(X), y) + loss_fn(old(X), y)", False),  # both: its weights get gradients
])
def test_sl208_a_step_in_a_function_called_in_the_loop_of_the_backward(loss, flagged):
    """The step is in a helper the training loop calls after its backward (issue 18's
    helper, method, forward and closure refactorings of
    ``bad_mxnet_net_rebuilt_after_trainer``): the backwards of that loop are the step's."""
    src = f"""
        from mxnet import autograd, gluon, nd

        old = gluon.nn.Dense(1, in_units=2)
        old.initialize()
        trainer = gluon.Trainer(old.collect_params(), "sgd", {{"learning_rate": 0.05}})
        loss_fn = gluon.loss.L2Loss()
        net = gluon.nn.Dense(1, in_units=2)
        net.initialize()
        X = nd.random.normal(shape=(20, 2))
        y = X.sum(axis=1, keepdims=True)


        def update(trainer):
            trainer.step(20)


        for epoch in range(3):
            with autograd.record():
                l = {loss}
            l.backward()
            update(trainer)
        """
    assert codes(src, "SL208") == ([15] if flagged else [])


@pytest.mark.parametrize("step", ["opt.step(); opt.zero_grad()", "meta_step()"])
def test_sl208_gradients_set_by_a_helper_called_in_the_loop(step):
    """First-order MAML: a helper moves the adapted copy's gradients onto the model
    (``p.grad = q.grad.clone()``), so the step does move the model (found in review:
    only the loop and the step's own function were looked at for such writes)."""
    src = f"""
        import copy
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(8, 3)


        def copy_grads(src, dst):
            for p, q in zip(dst.parameters(), src.parameters()):
                p.grad = q.grad.clone()


        def meta_step():
            opt.step()
            opt.zero_grad()


        for it in range(3):
            fast = copy.deepcopy(model)
            loss = fast(x).pow(2).mean()
            loss.backward()
            COPY
            {step}
        """
    assert codes(src.replace("COPY", "copy_grads(fast, model)"), "SL208") == []
    # without the helper's writes, the step finds no gradient
    assert codes(src.replace("COPY", "pass"), "SL208") != []
