"""Rules at the catalog's full definition (issue 41), on the shapes the real fixed bugs
of benchmarks/history's dev half took (each reduced to a few lines of our own)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

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


# --- a review's counterexamples (each was a false alarm of this change before its fix) ----
def test_review_counterexamples_stay_silent():
    cases = {
        # SL103: the eval-mode forward is stored and a loss helper backpropagates it
        "stored": """
            import torch

            class Trainer:
                def compute_loss(self, targets):
                    return torch.nn.functional.mse_loss(self.outputs, targets)

                def step(self, images, targets):
                    self.model.eval()
                    self.outputs = self.model(images)
                    loss = self.compute_loss(targets)
                    loss.backward()
        """,
        # SL304: a helper method of the Block makes a fresh mask
        "method_mask": """
            from mxnet import gluon, nd

            class Head(gluon.Block):
                def _make_mask(self, n):
                    return nd.zeros((n, 4))

                def forward(self, x):
                    mask = self._make_mask(x.shape[0])
                    mask[:, 0] = 1
                    return x * mask
        """,
        # SL304: the forward asks whether it records
        "asks": """
            from mxnet import autograd, gluon

            class Head(gluon.Block):
                def __init__(self):
                    super().__init__()
                    self.dense = gluon.nn.Dense(4)

                def forward(self, x):
                    out = self.dense(x)
                    if not autograd.is_recording():
                        out *= 0.5
                    return out
        """,
        # SL203: a helper drops a non-finite batch's gradients on purpose
        "nonfinite": """
            import torch

            def drop_nonfinite(optimizer, model):
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                if not torch.isfinite(norm):
                    optimizer.zero_grad(set_to_none=True)

            def train(model, loader, optimizer, criterion):
                for x, y in loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    drop_nonfinite(optimizer, model)
                    optimizer.step()
        """,
        # SL203: a helper that steps, then zeroes, when an accumulation is due
        "steps_itself": """
            import torch

            def step_if_due(optimizer, i, k):
                if (i + 1) % k == 0:
                    optimizer.step()
                    optimizer.zero_grad()

            def train(model, loader, optimizer, criterion, k=4):
                optimizer.zero_grad()
                for i, (x, y) in enumerate(loader):
                    (criterion(model(x), y) / k).backward()
                    step_if_due(optimizer, i, k)
                    if i == len(loader) - 1 and (i + 1) % k != 0:
                        optimizer.step()
                        optimizer.zero_grad()
        """,
        # SL211: a progressive-growing stage adds parameters, then a new optimizer
        "grows": """
            import torch

            def fit(model, data):
                for epoch in range(9):
                    if epoch % 3 == 0:
                        model.grow()
                        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
                    for x, y in data:
                        optimizer.zero_grad()
                        torch.nn.functional.mse_loss(model(x), y).backward()
                        optimizer.step()
        """,
        # a hole that is no target: a distillation loss's student output
        "distill": """
            with torch.no_grad():
                teacher_out = teacher(x)
            criterion(teacher_out, student_out).backward()
        """,
        # a program of another autograd library (imports, never names torch)
        "tinygrad": """
            from tinygrad import Tensor, nn

            def evaluate(model, batches):
                return [model(x).numpy() for x in batches]

            def train(model, opt, batches):
                for x, y in batches:
                    opt.zero_grad()
                    loss = (model(x) - y).square().mean()
                    loss.backward()
                    opt.step()
        """,
    }
    for name, code in cases.items():
        assert found(textwrap.dedent(code)) == [], name


def test_sl211_a_mode_test_rebuilds_every_time_it_holds():
    code = textwrap.dedent("""
        import torch

        def fit(model, data, mode):
            for epoch in range(9):
                if mode == "finetune":
                    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
                for x, y in data:
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
    """)
    assert found(code) == [(7, "SL211")]


def test_a_fragment_fix_writes_no_framework_name_the_post_never_uses():
    post = textwrap.dedent("""
        def evaluate(model, loader):
            model.eval()
            return [model(x) for x in loader]

        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """)
    result = lint_source(post, "post.py")
    assert [(f.start[0], f.code) for f in result.findings] == [(4, "SL103")]
    assert all(f.fix is None for f in result.findings)


def _sl206_fixes(code):
    result = lint_source(textwrap.dedent(code), "t.py")
    assert not result.errors
    return [(f.start[0], f.fix.message if f.fix else None) for f in result.findings if f.code == "SL206"]


def test_sl206_fix_undoes_a_typed_constructor_around_numpy():
    # graykode/nlp-tutorial's shape: ``torch.FloatTensor(logits.data.numpy() / T)`` in a forward
    code = """
        import torch
        net = torch.nn.Linear(3, 2)
        x, y = torch.randn(4, 3), torch.randint(0, 2, (4,))
        logits = torch.FloatTensor(net(x).data.numpy() / 2.0)
        loss = torch.nn.functional.cross_entropy(logits, y)
        loss.backward()
    """
    fixes = _sl206_fixes(code)
    assert len(fixes) == 1 and fixes[0][1] is not None and "(net(x) / 2.0).float()" in fixes[0][1]


def test_sl206_offers_no_fix_that_leaves_a_numpy_call_on_a_graph_value():
    # undoing ``.data`` alone would leave ``net(x).numpy()``: an error, not a fix
    code = """
        import torch
        import numpy as np
        net = torch.nn.Linear(3, 2)
        x, y = torch.randn(4, 3), torch.randint(0, 2, (4,))
        logits = torch.stack(list(map(torch.from_numpy, [net(x).data.numpy()])))[0]
        loss = torch.nn.functional.cross_entropy(logits, y)
        loss.backward()
    """
    fixes = _sl206_fixes(code)
    assert fixes and [fix for _, fix in fixes] == [None] * len(fixes)


SUBMODULE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(3, 3)
            self.out = nn.Linear(3, 2)

        def forward(self, x):
            return self.out(self.enc(x))

        def embed(self, x):
            return self.enc(x)

    def report(data):
        model = Net()
        model.eval()
        {switch}
        for x in data:
            print(model.{call}(x))

    report([torch.randn(4, 3)])
""")


def test_sl103_a_submodule_of_a_model_in_eval_mode_is_in_eval_mode():
    # ``eval()`` switches the submodules too (pcyin/pytorch_nmt's NMT.sample, round 14)
    assert found(SUBMODULE.format(switch="pass", call="enc")) == [(22, "SL103")]
    # a method of the model runs its submodules in eval mode: reported inside it
    assert found(SUBMODULE.format(switch="pass", call="embed")) == [(15, "SL103")]


def test_sl103_a_submodule_switched_back_to_train_is_not_in_eval_mode():
    assert found(SUBMODULE.format(switch="model.enc.train()", call="enc")) == []
    # (nor is the model's own method, taken for a submodule)
    assert found(SUBMODULE.format(switch="model.enc.train()", call="embed")) == []


FLAG_HELPER = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def set_mode(model, training):
        model.train(training)

    def evaluate(model, data):
        set_mode(model, False)
        with torch.no_grad():
            scores = [model(x).sum().item() for x in data]
        {restore}
        return scores

    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [torch.randn(2, 3)]
    for epoch in range(2):
        for x in data:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        evaluate(model, data)
""")


def test_sl207_a_mode_helper_by_its_literal_flag():
    # Beta-VAE's ``net_mode(train)`` (round 15), as ``model.train(flag)``: the flag handed
    # as a literal says which mode the helper leaves
    assert found(FLAG_HELPER.format(restore="set_mode(model, True)")) == []
    assert found(FLAG_HELPER.format(restore="pass")) == [(23, "SL207")]


METHOD_HELPER = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Solver:
        def __init__(self):
            self.enc = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
            self.dec = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
            self.opt = torch.optim.SGD(list(self.enc.parameters()) + list(self.dec.parameters()), lr=0.1)

        def net_mode(self, train):
        {body}

        def validate(self, x):
            self.net_mode(train=False)
            with torch.no_grad():
                score = self.dec(self.enc(x)).sum().item()
            {restore}
            return score

        def fit(self, data):
            for epoch in range(2):
                for x in data:
                    self.opt.zero_grad()
                    self.dec(self.enc(x)).sum().backward()
                    self.opt.step()
                self.validate(data[0])

    Solver().fit([torch.randn(2, 3)])
""")


@pytest.mark.parametrize("body", [
    # one-line suites, two switches on one line, a guard that raises on one line
    "    if not isinstance(train, bool): raise ValueError(train)\n"
    "        if train: self.enc.train(); self.dec.train()\n"
    "        else: self.enc.eval(); self.dec.eval()",
    # the flag handed on, a docstring, a chain that returns the module
    "    \"\"\"Switch both nets.\"\"\"\n"
    "        self.enc.to('cpu').train(train)\n"
    "        self.dec.train(mode=train)",
])
def test_sl207_mode_helper_spellings_by_the_literal_flag(body):
    assert found(METHOD_HELPER.format(body=body, restore="self.net_mode(train=True)")) == []
    assert [c for _, c in found(METHOD_HELPER.format(body=body, restore="pass"))] == ["SL207"]


def test_sl103_only_layers_are_submodules_a_model_switches():
    # a loss (or a metric, a tokenizer, a function) set in ``__init__`` is no layer:
    # ``model.criterion(out, y)`` after ``model.eval()`` on a no_grad prediction is silent
    code = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
                self.criterion = nn.CrossEntropyLoss()

            def forward(self, x):
                return self.body(x)

        def run(model, x, y):
            model.eval()
            with torch.no_grad():
                out = model(x)
            {last}

        run(Net(), torch.randn(2, 4), torch.tensor([0, 1]))
    """)
    assert found(code.format(last="return model.criterion(out, y).item()")) == []
    assert found(code.format(last="return model.body(x)")) == [(18, "SL103")]


def test_sl201_a_total_rebuilt_each_step_from_its_own_last_value_is_carried():
    code = textwrap.dedent("""
        import torch
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        running = 0.0
        for step in range(100):
            loss = model(torch.randn(2, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step < 10:
                running = running * 0.9
            else:
                running = {fresh}
            running += 0.02 * loss
    """)
    assert found(code.format(fresh="running * 0.98")) == [(15, "SL201")]
    assert found(code.format(fresh="0.0").replace("running * 0.9", "0.0")) == []


GUARDED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Solver:
        def __init__(self, emb):
            self.model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1))
            self.emb_decoder = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1)) if emb else None
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.data = [torch.randn(2, 3)]

        def exec(self):
            for step in range(4):
                for x in self.data:
                    loss = self.model(x).sum()
                    if self.emb_decoder is not None:
                        loss = loss + self.emb_decoder(x).sum()
                    self.opt.zero_grad()
                    loss.backward()
                    self.opt.step()
                    self.validate()

        def validate(self):
            self.model.eval()
            if self.emb_decoder is not None:
                self.emb_decoder.eval()
            with torch.no_grad():
                for x in self.data:
                    print(self.model(x).sum().item())
            self.model.train()
            if self.emb_decoder is not None:
                {restore}

    Solver(True).exec()
""")


def test_sl207_mode_switches_under_the_same_none_guard_go_together():
    # End-to-end-ASR-Pytorch's optional embedding decoder (round 15): ``if m is not None:``
    # around its ``eval()`` and, later, around its ``train()``: where ``m`` is None it has
    # no mode to leave
    assert found(GUARDED.format(restore="self.emb_decoder.train()")) == []
    assert found(GUARDED.format(restore="pass")) == [(21, "SL207")]


RECORDED_LOSS = textwrap.dedent("""
    from mxnet import autograd, gluon, nd

    net = gluon.nn.Dense(2)
    net.initialize()
    loss = gluon.loss.L2Loss()
    for step in range(2):
        x, y = nd.random.normal(shape=(4, 3)), nd.random.normal(shape=(4, 2))
        with autograd.record():
            l = loss(net(x), y)
        {use}
""")


def test_sl103_mxnet_a_method_the_framework_does_not_define_is_a_use_not_seen():
    # a record() block whose loss only a known NDArray method reads is a prediction
    # recorded; one read by a method MXNet does not define (a misspelled ``backword()``
    # in a tutorial copy of d2l's NiN, round 16; a model's own result object) is code
    # nobody here knows: silence
    assert [c for _, c in found(RECORDED_LOSS.format(use="print(l.mean().asscalar())"))] == ["SL103"]
    assert found(RECORDED_LOSS.format(use="l.backword()")) == []
    assert found(RECORDED_LOSS.format(use="l.backward()")) == []


GUARDED_EVAL = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def report(model, data):
        {guard}
            model.eval()
        return [model(x).argmax(1).tolist() for x in data]

    report(nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5)), [torch.randn(2, 3)])
""")


@pytest.mark.parametrize("guard", ['if hasattr(model, "eval"):', "if isinstance(model, nn.Module):"])
def test_sl103_an_eval_switch_behind_a_module_test_is_the_models_mode(guard):
    # LukasHedegaard/pytorch-benchmark's ``if hasattr(model, "eval"): model.eval()``
    # (history dev): where ``model`` is no module it has no mode, so after the guard a
    # module is in eval mode
    assert found(GUARDED_EVAL.format(guard=guard)) == [(8, "SL103")]
    # (not so behind a test that says nothing of what ``model`` is)
    assert found(GUARDED_EVAL.format(guard="if len(data) > 1:")) == []


DUMMY_PASS = textwrap.dedent("""
    from mxnet import autograd, gluon, nd

    def train(net, batches):
        trainer = gluon.Trainer(net.collect_params(), "sgd", {{"learning_rate": 0.1}})
        loss = gluon.loss.L2Loss()
        with autograd.record():
            output = net(nd.zeros((1, 3)))
            L = loss(output, nd.zeros((1, 2)))
        {use}
        for x, y in batches:
            with autograd.record():
                output = net(x)
                L = loss(output, y)
            L.backward()
            trainer.step(x.shape[0])

    net = gluon.nn.Dense(2)
    net.initialize()
    train(net, [(nd.ones((4, 3)), nd.ones((4, 2)))])
""")


def test_sl103_mxnet_a_dummy_pass_recorded_in_a_training_function():
    # hpi-xnor/BMXNet-v2-examples' dummy forward that initialises binary layers (history
    # dev): recorded, its loss computed by a Gluon loss object and never backpropagated,
    # in a function that trains afterwards
    assert found(DUMMY_PASS.format(use="pass")) == [(8, "SL103")]
    # (what the loss object makes handed to code nobody here knows: a use not seen)
    assert found(DUMMY_PASS.format(use="report(L)")) == []


RELOCATED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(3, 2)

        def evaluate(self, state):
            mean = self.body(state)
            return torch.tanh(mean), mean.pow(2).sum()

    class Trainer:
        def __init__(self, cuda):
            self.policy = Policy()
            if cuda:
                self.policy = self.policy.{move}
            self.opt = torch.optim.Adam(self.policy.parameters())

        def update(self, state):
            action, penalty = self.policy.evaluate(state)
            loss = -action.mean() + penalty
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

    Trainer(False).update(torch.randn(4, 3))
""")


@pytest.mark.parametrize("move", ["cuda()", "to('cuda').float()"])
def test_sl103_a_field_moved_to_a_device_is_the_same_module(move):
    # Popular-RL-Algorithms' ``self.policy_net = self.policy_net.cuda()`` (round 12): the
    # field still holds the Policy, whose inference-named ``evaluate`` the trainer
    # backpropagates: no inference code
    assert found(RELOCATED.format(move=move)) == []


REBUILT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def train(model, data, optimizer):
        for x, y in data:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()

    def main(wide):
        {build}
        data = [(torch.randn(4, 3), torch.randn(4, 1))]
        drops, lr = [2, 4], 0.1
        for epoch in range(6):
            if {test}:
                optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
                lr *= 0.2
            train(model, data, optimizer)

    main(False)
""")


@pytest.mark.parametrize("build", [
    "model = nn.Linear(3, 1)",
    "model = nn.Sequential(nn.Linear(3, 8), nn.Linear(8, 1)) if wide else nn.Linear(3, 1)",
])
def test_sl211_rebuilt_at_each_drop_of_a_model_built_either_way(build):
    # kymatio's cifar_small_sample (history dev): ``if epoch in drops or epoch == 0:``
    # holds at every drop, not once; the model is one of two, built before the loop
    assert [c for _, c in found(REBUILT.format(build=build, test="epoch in drops or epoch == 0"))] == ["SL211"]
    # (built once: the first epoch only, or under both tests at once)
    assert found(REBUILT.format(build=build, test="epoch == 0")) == []
    assert found(REBUILT.format(build=build, test="epoch in drops and epoch == 0")) == []


GAN_MODULE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class GAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.generator = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
            self.discriminator = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())
            self.opt_d = torch.optim.Adam(self.discriminator.parameters())
            self.criterion = nn.BCELoss()

        def d_loss(self, real, fake):
            return self.criterion(self.discriminator(real), torch.ones(4, 1)) + \\
                self.criterion(self.discriminator(fake), torch.zeros(4, 1))

        def train_step(self, real):
            fake = self.generator(torch.randn(4, 4))
            loss_d = self.d_loss(real, {fake})
            self.opt_d.zero_grad()
            loss_d.backward()
            self.opt_d.step()

    GAN().train_step(torch.randn(4, 8))
""")


def test_sl205_a_discriminator_step_helper_of_a_gan_module():
    # a helper method of a GAN that is itself an nn.Module is no layer of a forward: its
    # ``self.discriminator(fake)`` is the discriminator's call (review of session 54)
    assert [c for _, c in found(GAN_MODULE.format(fake="fake"))] == ["SL205"]
    assert found(GAN_MODULE.format(fake="fake.detach()")) == []


NP_EVALUATE = textwrap.dedent("""
    from mxnet import autograd, gluon, np, npx
    npx.set_np()

    def evaluate_accuracy(net, batches):
        correct = 0
        for X, y in batches:
            {scope}
                y_hat = net(X)
            pred = y_hat.as_in_ctx(npx.cpu()).argmax(axis=1)
            correct += (pred == y).sum()
        return correct

    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(8), gluon.nn.Dropout(0.5), gluon.nn.Dense(2))
    net.initialize()
    evaluate_accuracy(net, [(np.ones((4, 3)), np.zeros(4))])
""")


def test_sl103_mxnet_a_method_whose_result_is_used_is_no_unknown_use():
    # ``as_in_ctx`` (the numpy interface's) is missing from the API model; its result is
    # used, so it computes a value: the recorded prediction stays a finding
    assert found(NP_EVALUATE.format(scope="with autograd.record():")) == [(8, "SL103")]
    assert found(NP_EVALUATE.format(scope="if True:")) == []


ZOO_FILE = textwrap.dedent("""
    import mxnet as mx
    from mxnet.gluon import nn

    class TinyNet(nn.HybridBlock):
        def __init__(self, **kwargs):
            super(TinyNet, self).__init__(**kwargs)
            self.body = nn.Dense(4)

        def hybrid_forward(self, F, x):
            x = self.body(x)
            x *= 0.5
            return x

    def build(ctx):
        net = TinyNet()
        net.initialize(ctx=ctx)
        net(mx.nd.zeros((1, 3), ctx=ctx))
        {end}
""")


def test_sl304_a_block_built_and_returned_by_a_helper_may_be_trained():
    # a model file's ``build(ctx)`` runs one dummy forward to fix the shapes and hands
    # the Block on: its forward is still assumed to train inside record()
    # (review of session 54); a demo function that only prints is no such hand-over
    assert found(ZOO_FILE.format(end="return net")) == [(12, "SL304")]
    assert found(ZOO_FILE.format(end="print(net)")) == []


def test_sl304_a_loss_block_named_as_one_is_entered_recording_and_dict_entries_are_no_arrays():
    """A Gluon Block named as a loss (``CtdetLoss(gluon.Block)``, not a ``gluon.loss.Loss``)
    whose module nobody here calls: its forward is handed the model's prediction, which
    its training call records (mxnet-centernet 316b261, history dev). ``output['hm'] =``
    writes an entry of a dict (no array takes a string index): silent."""
    root = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "centernet_loss_block_in_place"
    for kind, expected in (("bad", [19, 20]), ("good", [])):
        text = (root / kind / "models" / "losses.py").read_text()
        assert [f.start[0] for f in lint_source(text, "losses.py").findings if f.code == "SL304"] == expected
    source = textwrap.dedent("""
        from mxnet import gluon, nd


        class CtdetLoss(gluon.Block):
            def forward(self, outputs, target):
                output = outputs[0]
                output["hm"] = nd.sigmoid(output["hm"])
                output[f"hm{0}"] = output["hm"]
                return ((output["hm"] - target) ** 2).mean()
    """)
    assert found(source) == []
    # (named with a word that only starts with "Loss": no loss, no recorded prediction)
    assert found(source.replace("CtdetLoss", "LossMask").replace('output["hm"] = nd.sigmoid(output["hm"])', "output[:] = 1")) == []
    assert [c for _, c in found(source.replace('output["hm"] = nd.sigmoid(output["hm"])', "output[:] = 1"))] == ["SL304"]


def test_sl103_a_model_frozen_by_its_constructor_records_nothing_on_data():
    """A model class whose ``__init__`` turns every parameter's ``requires_grad`` off
    (pytorch-fid's InceptionV3, a perceptual loss's VGG: round 18's six false findings),
    run after ``eval()`` on data: autograd records nothing, no ``no_grad()`` is missing.
    Built with ``requires_grad=True``, or fed a generator's output, it records."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn


        class Features(nn.Module):
            def __init__(self, requires_grad=False):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
                for p in self.parameters():
                    p.requires_grad = requires_grad

            def forward(self, x):
                return self.body(x)


        def features(model, batches):
            model.eval()
            return [model(torch.from_numpy(b)).numpy() for b in batches]


        def stats(batches):
            return features(Features().to("cpu"), batches)
    """)
    assert found(source) == []
    assert [c for _, c in found(source.replace("Features().to", "Features(requires_grad=True).to"))] == ["SL103"]
    assert [c for _, c in found(source.replace("requires_grad=False):", "requires_grad=True):"))] == ["SL103"]
    fed = source.replace("model(torch.from_numpy(b))", "model(gen(torch.from_numpy(b)))").replace(
        "def stats(batches):", "gen = nn.Linear(4, 4)\n\n\ndef stats(batches):")
    assert [c for _, c in found(fed)] == ["SL103"]
    assert found(source.replace("for p in self.parameters():\n            p.requires_grad = requires_grad",
                                "self.requires_grad_(False)")) == []


def test_sl103_a_method_of_the_model_that_runs_its_layers_is_a_forward_pass():
    """``model.sample(z)`` after ``model.eval()``, a method of a model class of the file
    that runs its layers (through ``self.decode`` to ``self.decoder``), recording on, its
    result never backpropagated: inference that records (round 18's noted miss). Not a
    method that runs no layer, nor one under its own ``no_grad``, nor the model's own
    ``self.decode(z)`` inside ``sample``."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn


        class VAE(nn.Module):
            def __init__(self):
                super().__init__()
                self.decoder = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))

            def forward(self, z):
                return self.decoder(z)

            def decode(self, z):
                return self.decoder(z)

            def sample(self, z):
                return self.decode(z)

            def prior(self, n):
                return torch.randn(n, 2)


        model = VAE()
        model.eval()
        points = model.sample(torch.randn(4, 2)).data.numpy()
    """)
    assert found(source) == [(26, "SL103")]
    assert found(source.replace("model.sample(torch.randn(4, 2))", "model.prior(4)")) == []
    assert found(source.replace("    def sample(self, z):", "    @torch.no_grad()\n    def sample(self, z):")) == []
