"""Values the landed code misread at first contact (benchmarks/firstcontact/round10.json),
each reduced to a few lines of our own: a general capability of the core, not a pattern
of the repository it was seen in."""

from __future__ import annotations

import textwrap

from scopelint.engine import lint_source


def found(code):
    result = lint_source(textwrap.dedent(code), "t.py")
    assert not result.errors
    return [(f.start[0], f.code) for f in result.findings]


# PPO-PyTorch's shape: the agent holds ``self.policy = ActorCritic(...).to(device)``;
# ``evaluate`` is the method whose outputs the update backpropagates.
PPO = """
    import torch
    import torch.nn as nn
    from torch.distributions import Categorical

    device = torch.device("cpu")


    class ActorCritic(nn.Module):
        def __init__(self, n):
            super(ActorCritic, self).__init__()
            self.actor = nn.Sequential(nn.Linear(n, 8), nn.Tanh(), nn.Linear(8, 2), nn.Softmax(dim=-1))
            self.critic = nn.Sequential(nn.Linear(n, 8), nn.Tanh(), nn.Linear(8, 1))

        def evaluate(self, state, action):
            dist = Categorical(self.actor(state))
            return dist.log_prob(action), self.critic(state), dist.entropy()


    class Agent:
        def __init__(self, n):
            self.policy = ActorCritic(n).to(device)
            self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-3)

        def update(self, states, actions, returns):
            for _ in range(4):
                logp, values, entropy = self.policy.evaluate(states, actions)
                loss = -(logp * returns).mean() + ((values.squeeze() - returns) ** 2).mean() - 0.01 * entropy.mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
"""


def test_a_module_moved_to_a_device_is_still_its_class():
    # ``Net(...).to(device)`` (``.cuda()``, ``.train()``...) returns the module itself: the
    # method called through the attribute is the class's, and its outputs are trained.
    assert found(PPO) == []
    # the same method, called by nobody that backpropagates it, is inference code
    unused = PPO.replace("loss.backward()", "print(loss.item())").replace("self.opt.step()", "pass")
    assert found(unused) == [(16, "SL103")]


# A d2l port's ``train_pytorch_ch7``: a closure returns ``loss(...).item() / 2``, and the
# training loop appends what it returns every few steps.
CH7 = """
    import torch
    from torch import nn


    def train(optimizer_fn, features, labels, batch_size=10, num_epochs=2):
        net = nn.Sequential(nn.Linear(features.shape[-1], 1))
        loss = nn.MSELoss()
        optimizer = optimizer_fn(net.parameters())
        data_iter = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, labels), batch_size)

        def eval_loss():
            with torch.no_grad():
                return loss(net(features).view(-1), labels).item() / 2

        ls = [eval_loss()]
        for _ in range(num_epochs):
            for i, (X, y) in enumerate(data_iter):
                l = loss(net(X).view(-1), y) / 2
                optimizer.zero_grad()
                l.backward()
                optimizer.step()
                if i % 10 == 0:
                    ls.append(eval_loss())
        print(ls[-1])
"""


def test_arithmetic_on_a_number_taken_out_returns_a_number():
    # What the closure returns left the graph: appending it keeps no graph (no SL201).
    assert found(CH7) == []
    # As the port wrote it, without ``no_grad``: the evaluation records (SL103), and still
    # appends a number.
    as_written = CH7.replace("            with torch.no_grad():\n                return", "            return")
    assert found(as_written) == [(13, "SL103")]


# SAC's temperature update (first contact round 11, DRL-code-pytorch; preview SL206): the
# detached entropy term is a coefficient of ``self.log_alpha.exp()``, a leaf made in
# another method the flow does not know: no constant term, whatever it is.
SAC = """
    import torch


    class Agent:
        def __init__(self, actor, target_entropy):
            self.actor = actor
            self.target_entropy = target_entropy
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=3e-4)

        def update_alpha(self, s):
            _, log_pi = self.actor(s)
            alpha_loss = -(self.log_alpha.exp() * (log_pi + self.target_entropy).detach()).mean()
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()
"""


def test_a_detached_coefficient_of_an_unknown_value_is_no_lost_term():
    from scopelint.engine import Settings
    from scopelint.rules import ALL_RULES

    preview = Settings(select=tuple(ALL_RULES))
    result = lint_source(textwrap.dedent(SAC), "t.py", preview)
    assert not result.errors and [f.code for f in result.findings] == []
    # a number taken out of the policy's output and added alone is a constant of the loss: lost
    lost = SAC.replace("-(self.log_alpha.exp() * (log_pi + self.target_entropy).detach()).mean()",
                       "self.log_alpha.exp().mean() + (log_pi + self.target_entropy).mean().item()")
    assert [(f.start[0], f.code) for f in lint_source(textwrap.dedent(lost), "t.py", preview).findings] == [(14, "SL206")]


# A course notebook's shape (first contact round 11, mrdbourke/pytorch-deep-learning;
# preview SL207): training and testing steps are helpers the epoch loop calls with the
# model; the test step leaves it in eval(). A model of Linear/ReLU layers has nothing that
# eval() changes.
STEPS = """
    import torch
    from torch import nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 2))

        def forward(self, x):
            return self.layers(x)


    def train_step(model, loader, loss_fn, optimizer):
        for x, y in loader:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


    def test_step(model, loader, loss_fn):
        model.eval()
        with torch.inference_mode():
            return sum(loss_fn(model(x), y).item() for x, y in loader)


    def fit(train_loader, test_loader, epochs=3):
        model_1 = Model().to("cpu")
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model_1.parameters(), lr=0.1)
        for epoch in range(epochs):
            train_step(model=model_1, loader=train_loader, loss_fn=loss_fn, optimizer=optimizer)
            test_step(model=model_1, loader=test_loader, loss_fn=loss_fn)
"""


def test_eval_left_on_a_model_without_mode_layers_changes_nothing():
    from scopelint.engine import Settings
    from scopelint.rules import ALL_RULES

    preview = Settings(select=tuple(ALL_RULES))
    assert [f.code for f in lint_source(textwrap.dedent(STEPS), "t.py", preview).findings] == []
    dropout = STEPS.replace("nn.ReLU(), nn.Linear(8, 2)", "nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2)")
    assert "SL207" in [f.code for f in lint_source(textwrap.dedent(dropout), "t.py", preview).findings]
