"""Values as the frameworks define them (RULES.md, "Values and gradient paths"; issue 39):
each case a small program and the findings it must give -- a value that carries no graph
is no path, a value stored somewhere is what was stored, unknown code carries nothing by
assumption. Each pair differs in the one construct the case is about."""

from __future__ import annotations

import textwrap

import pytest

from scopelint.engine import lint_source


def findings(code: str):
    result = lint_source(textwrap.dedent(code), "case.py")
    assert not result.errors, result.errors
    return sorted((f.start[0], f.code) for f in result.findings)


POLICY = """
    import torch
    from torch.distributions import Categorical

    policy = torch.nn.Linear(4, 2)
    opt = torch.optim.Adam(policy.parameters())
    states = torch.randn(5, 4)
    for step in range(3):
        prob = torch.softmax(policy(torch.randn(4)), -1)
        a = {action}
        idx = torch.tensor([[a]] * 5)
        loss = -torch.log(torch.softmax(policy(states), -1).gather(1, idx)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize("action", [
    "Categorical(prob).sample().numpy()",     # a sample: no graph
    "prob.argmax().numpy()",                  # an integer tensor: no graph
    "int(prob.argmax().item())",
])
def test_an_index_or_a_sample_is_no_gradient_path(action):
    assert findings(POLICY.format(action=action)) == []


def test_a_conversion_on_the_path_is_still_found():
    code = """
        import torch

        policy = torch.nn.Linear(4, 2)
        opt = torch.optim.Adam(policy.parameters())
        for step in range(3):
            prob = torch.softmax(policy(torch.randn(5, 4)), -1)
            p = torch.tensor(prob.detach().numpy(), dtype=torch.float32)
            loss = -torch.log(p.gather(1, torch.zeros(5, 1, dtype=torch.long))).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    assert findings(code) == [(8, "SL206")]


def test_option_keywords_and_constants_are_no_graph():
    code = """
        import torch

        model = torch.nn.Linear(3, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        weights = torch.tensor([1.0, 2.0], dtype=torch.float32, device="cpu")
        for step in range(3):
            out = model(torch.randn(4, 3))
            loss = torch.nn.functional.cross_entropy(out, torch.zeros(4, dtype=torch.long), weight=weights)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    assert findings(code) == []


def test_what_unknown_code_returns_is_no_path():
    code = """
        import gym
        import torch

        env = gym.make("CartPole-v1")
        policy = torch.nn.Linear(4, 2)
        opt = torch.optim.Adam(policy.parameters())
        obs = torch.zeros(4)
        for step in range(3):
            logits = policy(obs)
            action = logits.argmax()
            nxt, reward, done, info = env.step(action.numpy())
            obs = torch.as_tensor(nxt, dtype=torch.float32)
            loss = -torch.log_softmax(policy(obs), -1)[0] * reward
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    assert findings(code) == []


ADVERSARIAL = """
    import torch

    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x_nat in [torch.randn(3, 4) for _ in range(2)]:
        x = x_nat.detach().requires_grad_()
        g = torch.autograd.grad(net(x).sum(), [x])[0]
        x_adv = x.detach() + 0.1 * g.detach().sign()
        loss = {loss}
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_models_input_is_no_gradient_path():
    # the adversarial input built from ``autograd.grad`` goes into the model: no path
    assert findings(ADVERSARIAL.format(loss="net(x_adv).sum()")) == []


def test_a_conversion_next_to_the_models_input_still_counts():
    # (the same program, the loss itself converted: that is on the path)
    assert findings(ADVERSARIAL.format(loss="torch.tensor(net(x_adv).sum().item())")) == [(10, "SL206")]


ATTACK = """
    import torch

    def perturb(net, x):
        net.eval()
        x.requires_grad_()
        g = torch.autograd.grad(net(x).sum(), {inputs})[0]
        net.train()
        return (x + 0.1 * g.sign()).detach()

    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in [torch.randn(3, 4) for _ in range(2)]:
        loss = net(perturb(net, x)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_gradient_with_respect_to_inputs_is_no_training():
    assert findings(ATTACK.format(inputs="[x]")) == []


def test_a_gradient_with_respect_to_parameters_in_eval_mode_is_training():
    assert findings(ATTACK.format(inputs="list(net.parameters())")) == [(7, "SL207")]


def test_a_helper_that_records_itself_under_its_callers_no_grad():
    code = """
        import torch

        net = torch.nn.Linear(4, 2)

        def attack(net, x):
            x = x.clone().requires_grad_()
            with torch.enable_grad():
                loss = net(x).sum()
            return torch.autograd.grad(loss, [x])[0]

        net.eval()
        total = 0.0
        with torch.no_grad():
            for x in [torch.randn(3, 4) for _ in range(2)]:
                total += net(x + attack(net, x)).sum().item()
    """
    assert findings(code) == []


NO_GRAD_LOSS = """
    import torch
    from dataclasses import dataclass

    T = 4
    ALPHA = 0.5
    model = torch.nn.Linear(3, 1)

    @dataclass
    class Output:
        loss: torch.Tensor
        logits: torch.Tensor

    def forward(x):
        {scope}
            z = model(x)
        {made}

    res = forward(torch.randn(4, 3))
    {backward}
"""


@pytest.mark.parametrize("made, backward", [
    ("return z.sum() * T ** 2 * (1 - ALPHA)", "res.backward()"),          # Python numbers
    ('return {"loss": z.sum(), "logits": z}', 'res["loss"].backward()'),  # a dict entry
    ("return Output(z.sum(), z)", "res.loss.backward()"),                  # a dataclass field
    ("return (z.sum(), 3)", "res[0].backward()"),                          # a tuple item
    ("out = dict(loss=z.sum())\n        return out", 'res["loss"].backward()'),
])
def test_stored_values_are_what_was_stored(made, backward):
    bad = NO_GRAD_LOSS.format(scope="with torch.no_grad():", made=made, backward=backward)
    good = NO_GRAD_LOSS.format(scope="if True:", made=made, backward=backward)
    line = bad.splitlines().index("    " + backward) + 1
    assert findings(bad) == [(line, "SL101")]
    assert findings(good) == []


def test_old_style_super_keeps_the_instance():
    code = """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super({args}).__init__()
                self.fc = nn.Linear(3, 1)

            def forward(self, x):
                with torch.no_grad():
                    return self.fc(x)

        net = Net()
        with torch.no_grad():
            print(net(torch.randn(2, 3)))
    """
    assert findings(code.format(args="Net, self")) == findings(code.format(args="")) == [(11, "SL104")]


def test_a_guarded_callback_is_still_the_callback():
    code = """
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def run(fn=None):
            {guard}
                with torch.no_grad():
                    return fn()

        def step():
            loss = model(torch.randn(4, 3)).sum()
            loss.backward()
            return loss

        for _ in range(3):
            opt.zero_grad()
            run(step)
            opt.step()
    """
    assert findings(code.format(guard="if fn is not None:")) == findings(code.format(guard="if True:")) == [(14, "SL101")]


def test_an_alias_in_a_loop_makes_the_leaf():
    code = """
        import torch

        w = torch.randn(3)
        b = torch.randn(1)
        for p in {names}:
            p.requires_grad_()
        w = w.double()
        w.sum().backward()
        print(w.grad)
    """
    # (``p`` is ``w``, then ``b``: ``w`` is a leaf after the loop, and the rebinding
    # makes it a non-leaf whose ``.grad`` stays None)
    assert findings(code.format(names="[w, b]")) == [(8, "SL302")]
    assert findings(code.format(names="[b]")) == []


def test_a_view_of_an_inference_tensor_is_one():
    code = """
        import torch

        with torch.inference_mode():
            w = torch.randn(3, 3)
        x = torch.randn(2, 3, requires_grad=True)
        y = x @ w{view}
        y.sum().backward()
    """
    assert findings(code.format(view=".t()")) == [(7, "SL108")]
    assert findings(code.format(view=".T")) == [(7, "SL108")]
    assert findings(code.format(view=".clone()")) == []


def test_a_parameter_reached_by_attribute_path():
    code = """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 1)

            def forward(self, x):
                return self.fc(x)

        model = Net()
        for step in range(3):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            {scope}
                model.fc.weight -= 0.1 * model.fc.weight.grad
            model.fc.weight.grad = None
    """
    assert findings(code.format(scope="if True:")) == [(18, "SL301")]
    assert findings(code.format(scope="with torch.no_grad():")) == []


def test_a_model_made_in_eval_mode():
    code = """
        import torch
        from torch import nn

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.drop = nn.Dropout(0.5)

            def forward(self, x):
                return self.drop(self.fc(x))

        def main():
            encoder = Encoder(){mode}
            return encoder(torch.randn(1, 3))

        main()
    """
    assert findings(code.format(mode=".eval()")) == [(16, "SL103")]
    assert findings(code.format(mode="")) == []


def test_a_symbolic_executors_backward_is_no_autograd():
    # MXNet's symbolic API (first-contact round 2): an Executor made by ``bind`` /
    # ``simple_bind`` and a ``Module`` backpropagate their own bound graph; no
    # ``autograd.record()`` is needed, so there is nothing for SL101 to say
    assert findings("""
        import mxnet as mx

        data = mx.sym.Variable("data")
        out = mx.sym.FullyConnected(data, num_hidden=2)
        exe = out.simple_bind(mx.cpu(), data=(4, 3))
        exe.forward(is_train=True, data=mx.nd.ones((4, 3)))
        exe.backward(mx.nd.ones((4, 2)))
        mod = mx.mod.Module(out, data_names=["data"], label_names=None)
        mod.bind(data_shapes=[("data", (4, 3))])
        mod.init_params()
        mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3))]), is_train=True)
        mod.backward([mx.nd.ones((4, 2))])
        y = exe.outputs[0] * 2
        y.backward()
    """) == [(15, "SL101")]  # (an executor's output is an NDArray no record() saw)


def test_an_executor_bound_from_a_returned_symbol_is_no_tensor():
    # First contact, rounds 2 and 3 (MXNet symbolic tutorials): ``network =
    # symbols[0].bind(...)`` then ``network.backward(out)``: an Executor, not an NDArray
    # made while nothing records
    assert findings("""
        import mxnet as mx

        def capsnet():
            data = mx.sym.Variable("data")
            out = mx.sym.FullyConnected(data, num_hidden=2)
            return [mx.sym.MakeLoss(mx.sym.sum(out)), out]

        def train(ctx=mx.cpu()):
            symbols = capsnet()
            args = {"data": mx.nd.ones((4, 3)), "fullyconnected0_weight": mx.nd.ones((2, 3)),
                    "fullyconnected0_bias": mx.nd.ones((2,))}
            grads = {"fullyconnected0_weight": mx.nd.zeros((2, 3)), "fullyconnected0_bias": mx.nd.zeros((2,))}
            network = symbols[0].bind(ctx=ctx, args=args, args_grad=grads, grad_req="write")
            for i in range(2):
                out = network.forward()
                network.backward(out)
                loss = mx.nd.mean(network.outputs[0]) * 2
                loss.backward()

        train()
    """) == [(19, "SL101")]  # (the NDArray made from its output outside record() has no graph)
