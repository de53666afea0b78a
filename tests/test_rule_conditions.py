"""Rules at the catalog's full definition (issue 41), on the shapes the real fixed bugs
of benchmarks/history's dev half took (each reduced to a few lines of our own)."""

from __future__ import annotations

import textwrap

from scopelint.engine import lint_source


def found(code):
    result = lint_source(code, "t.py")
    assert not result.errors
    return [(f.start[0], f.code) for f in result.findings]


# gentaiscool/end2end-asr-pytorch's Trainer.train: a library's epoch function (no caller in
# its file) that trains, then validates after ``model.eval()`` with recording on.
EPOCH = textwrap.dedent("""
    import torch

    def train(model, opt, crit, train_loader, valid_loader, epochs):
        for epoch in range(epochs):
            model.train()
            for x, y in train_loader:
                opt.zero_grad()
                loss = crit(model(x), y)
                loss.backward()
                opt.step()
            model.eval()
            total = 0.0
            for x, y in valid_loader:
                total += crit(model(x), y).item()
""")


def test_sl103_eval_forward_in_a_training_function_nobody_here_calls():
    assert found(EPOCH) == [(15, "SL103")]
    fixed = EPOCH.replace("        for x, y in valid_loader:\n            total +=",
                          "        with torch.no_grad():\n            for x, y in valid_loader:\n                total +=")
    assert fixed != EPOCH and found(fixed) == []
    # trained in eval mode (BatchNorm frozen on purpose): backpropagated, SL207's question
    frozen_bn = EPOCH.replace("model.train()", "model.eval()").replace(
        "total += crit(model(x), y).item()", "crit(model(x), y).backward()")
    assert "SL103" not in {code for _, code in found(frozen_bn)}


# kymatio's examples: an SGD with momentum rebuilt every k epochs to lower the rate.
PERIODIC = textwrap.dedent("""
    import torch

    def train(model, loader, optimizer):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()

    def main(model, loader, start):
        for epoch in range(start, 90):
            if TEST:
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            train(model, loader, optimizer)
""")


def test_sl211_an_optimizer_rebuilt_under_a_periodic_test():
    for test in ("epoch % 20 == 0", "epoch in (30, 60)", "epoch >= 10", "True"):
        assert found(PERIODIC.replace("TEST", test)) == [(13, "SL211")], test
    # built once, or when something outside says so: no finding
    for test in ("epoch == start", "optimizer is None", "not started", "reset"):
        assert found(PERIODIC.replace("TEST", test)) == [], test


def test_sl203_a_helper_that_zeroes_on_some_paths():
    code = textwrap.dedent("""
        import torch

        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def reset(o, step):
            if step % 4 == 0:
                o.zero_grad(set_to_none=True)

        for step in range(10):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            reset(opt, step)
            opt.step()
    """)
    assert found(code) == [(14, "SL203")]
    # called before the forward pass: a zeroing for the next step, fine
    moved = code.replace("    loss = model(torch.randn(8, 4)).pow(2).mean()\n    loss.backward()\n    reset(opt, step)\n",
                         "    reset(opt, step)\n    loss = model(torch.randn(8, 4)).pow(2).mean()\n    loss.backward()\n")
    assert moved != code and found(moved) == []


# gluon-cv's / imgclsmob's model zoo before their fixes: ``out += residual`` in a
# HybridBlock nothing in the file calls; its trainer's ``record()`` is elsewhere.
RESIDUAL = textwrap.dedent("""
    from mxnet import gluon

    class Unit(gluon.nn.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.body = gluon.nn.Dense(4)

        def hybrid_forward(self, F, x):
            out = F.relu(self.body(x))
            out += x
            return out
""")


def test_sl304_in_a_gluon_block_forward_nothing_here_calls():
    assert found(RESIDUAL) == [(11, "SL304")]
    assert found(RESIDUAL.replace("out += x", "out = out + x")) == []
    # a fresh array (not of the graph) written in place is fine
    fresh = RESIDUAL.replace("out += x", "mask = F.zeros_like(x)\n        mask[:] = 1")
    assert found(fresh) == []
    # no Block: a plain class's forward is not entered recording
    assert found(RESIDUAL.replace("(gluon.nn.HybridBlock)", "")) == []


def test_sl304_a_gluon_loss_writes_into_its_prediction():
    # apache/mxnet's PoissonNLLLoss before its fix: ``loss += stirling_factor``
    code = textwrap.dedent("""
        from mxnet import gluon

        class L2(gluon.loss.Loss):
            def __init__(self):
                super().__init__(None, 0)

            def hybrid_forward(self, F, pred, label):
                loss = F.square(pred - label)
                loss += 1e-3
                return F.mean(loss, axis=self._batch_axis, exclude=True)
    """)
    assert found(code) == [(10, "SL304")]
    assert found(code.replace("loss += 1e-3", "loss = loss + 1e-3")) == []



def test_sl103_private_names_are_not_inference_by_default():
    # VITA-Group/DeblurGANv2's ``Trainer._validate`` is inference code, but matching
    # private names by default cried wolf on transformers' ``_validate_parallel_plan`` and
    # on gluonts' ``_validate`` hooks a base class runs under no_grad: opt in by pattern.
    code = textwrap.dedent("""
        import torch

        class Trainer:
            def __init__(self, net, crit, val_data):
                self.net, self.crit, self.val_data = net, crit, val_data

            def _validate(self):
                total = 0.0
                for x, y in self.val_data:
                    total += self.crit(self.net(x), y).item()
                return total
    """)
    assert found(code) == []
    assert found(code.replace("def _validate", "def validate")) == [(11, "SL103")]

def test_sl201_the_last_item_read_back_is_the_last_appended():
    # rballester/tntorch's optimize(): ``losses.append(loss)`` then
    # ``losses[-1].backward()`` backpropagates the last loss, not a joint one
    code = textwrap.dedent("""
        import torch

        def optimize(params, loss_function, steps):
            opt = torch.optim.Adam(params)
            losses = []
            for _ in range(steps):
                opt.zero_grad()
                loss = loss_function(*params)
                losses.append(loss)
                losses[-1].backward()
                opt.step()
            print(len(losses))
    """)
    assert found(code) == [(10, "SL201")]
    assert found(code.replace("losses.append(loss)", "losses.append(loss.item())").replace(
        "losses[-1].backward()", "loss.backward()")) == []
    # the list itself summed and backpropagated: a deliberate joint loss
    joint = code.replace("losses[-1].backward()", "torch.stack(losses).sum().backward()")
    assert found(joint) == []


def test_sl304_not_in_a_block_made_to_predict():
    # gluonts' ``...PredictionNetwork`` beside its ``...TrainingNetwork``: never trained
    assert found(RESIDUAL.replace("class Unit(", "class UnitPredictionNetwork(")) == []
