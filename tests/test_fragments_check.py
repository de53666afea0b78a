"""Fragments as people paste them (issue 41; docs/model.md, "Fragments"): a text that uses a
framework without importing it is read as importing it, and its undefined names by their
roles; where the reading would be a guess, nothing is read."""

from __future__ import annotations

import textwrap

from scopelint.core.fragments import fragment_imports
from scopelint.engine import lint_source

NO_GRAD_LOSS = """
    model.train()
    for x, y in loader:
        with torch.no_grad():
            out = model(x)
        loss = criterion(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def findings(code):
    result = lint_source(textwrap.dedent(code), "snippet.py")
    assert not result.errors
    return [(f.start[0], f.code) for f in result.findings], result.findings


def test_a_torch_fragment_without_imports():
    found, raw = findings(NO_GRAD_LOSS)
    assert found == [(8, "SL101")]
    assert all(e.end[0] <= 10 for f in raw if f.fix for e in f.fix.edits)  # (fixes edit the user's lines only)


def test_its_correct_twin_is_silent():
    assert findings(NO_GRAD_LOSS.replace("with torch.no_grad():", "if True:"))[0] == []


def test_an_mxnet_fragment_without_imports():
    code = """
        for data, label in train_data:
            with autograd.record():
                output = net(data)
                loss = loss_fn(output, label)
            loss.backward()
            trainer.step(data.shape[0])
            with autograd.record():
                pred = net(val_x)
            print(nd.argmax(pred, axis=1))
    """
    assert findings(code)[0] == [(9, "SL103")]


def test_what_is_read_and_what_is_not():
    assert fragment_imports("with torch.no_grad():\n    y = model(x)\n") == "\nimport torch\n"
    assert fragment_imports("import torch\nwith torch.no_grad():\n    y = model(x)\n") == ""  # (it imports)
    assert fragment_imports("torch = load()\nwith torch.no_grad():\n    y = 1\n") == ""  # (it binds torch)
    assert fragment_imports("a = torch.ones(1)\nb = nd.ones(1)\n") == ""  # (both frameworks: no guess)
    assert "import torch.nn as nn" in fragment_imports("net = nn.Linear(2, 2)\nx = torch.ones(1)\n")
    assert fragment_imports("def f(nn, torch):\n    return nn(torch)\n") == ""  # (parameters)


# A forum post's shortest form (issue 41's own example): the batch and the target are
# never defined; a loss's target is data, so the loss made from a no_grad output has no graph.
NO_GRAD_OUTPUT = """
    with torch.no_grad():
        out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
"""


def test_a_hole_in_a_loss_target_position_is_data():
    assert findings(NO_GRAD_OUTPUT)[0] == [(5, "SL101")]
    assert findings("import torch" + textwrap.dedent(NO_GRAD_OUTPUT))[0] == [(5, "SL101")]  # (imports or not)
    assert findings(NO_GRAD_OUTPUT.replace("with torch.no_grad():", "if True:"))[0] == []


def test_only_holes_in_target_positions_are_read_as_data():
    # the prediction is the hole: whatever made it off-screen may carry a graph
    assert findings("import torch\nloss = criterion(outputs, labels)\nloss.backward()\n")[0] == []
    # ``y`` is bound somewhere (a comprehension, another function, a star import): no hole
    bound = "import torch\nys = [y for y in range(3)]\n" + textwrap.dedent(NO_GRAD_OUTPUT)
    assert findings(bound)[0] == []
    elsewhere = "import torch\ndef f(y):\n    return y\n" + textwrap.dedent(NO_GRAD_OUTPUT)
    assert findings(elsewhere)[0] == []
    star = "import torch\nfrom helpers import *\n" + textwrap.dedent(NO_GRAD_OUTPUT)
    assert findings(star)[0] == []


# The running-total FAQ as it is pasted: no import, no framework name, only PyTorch's loop.
RUNNING_TOTAL = """
    total_loss = 0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
"""


def test_a_fragment_naming_no_framework_but_pytorchs_loop():
    assert fragment_imports(textwrap.dedent(RUNNING_TOTAL)) == "\nimport torch\n"
    assert findings(RUNNING_TOTAL)[0] == [(8, "SL201")]
    assert findings(RUNNING_TOTAL.replace("+= loss", "+= loss.item()"))[0] == []
    # Gluon's loop (a Trainer stepped with a batch size, zeroing through collect_params) is not read so
    gluon = RUNNING_TOTAL.replace("optimizer.step()", "trainer.step(x.shape[0])")
    assert fragment_imports(textwrap.dedent(gluon)) == ""
    assert fragment_imports("for x in xs:\n    loss = f(x)\n    loss.backward()\n") == ""  # (no optimizer: no guess)


def test_a_framework_module_bound_by_a_star_import():
    # TCN's char_cnn_test.py (first contact round 9): ``import torch.nn as nn`` binds only
    # ``nn``; ``torch`` comes from ``from utils import *`` (whose module imports torch).
    code = """
        import torch.nn as nn
        from utils import *

        model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))


        def evaluate(data):
            model.eval()
            total = 0.0
            with torch.no_grad():
                for x in data:
                    total += model(x).sum().item()
            return total
    """
    assert fragment_imports(textwrap.dedent(code)) == "\nimport torch\n"
    assert findings(code)[0] == []
    # the same without the ``no_grad`` block is still the finding it was
    assert findings(code.replace("with torch.no_grad():", "if True:"))[0] == [(13, "SL103")]


def test_an_unresolved_call_spelled_as_a_recording_scope_is_unknown():
    # ENAS's ``with self._get_no_grad_ctx_mgr():`` (first contact round 8), a backend
    # object's ``no_grad()``: the state inside is not known, so nothing is claimed.
    code = """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))


        def evaluate(data, backend):
            model.eval()
            with backend.no_grad():
                return [model(x) for x in data]
    """
    assert findings(code)[0] == []
    assert findings(code.replace("backend.no_grad()", "backend.timer()"))[0] == [(11, "SL103")]


GAN_STEP = """
    for real, _ in dataloader:
        fake = netG(torch.randn(real.size(0), 16))
        d_fake = netD(fake)
        d_loss = criterion(netD(real), ones) + criterion(d_fake, zeros)
        g_loss = criterion(d_fake, ones)
        optimizerD.zero_grad()
        d_loss.backward(retain_graph=True)
        optimizerD.step()
        optimizerG.zero_grad()
        g_loss.backward()
        optimizerG.step()
"""


def test_optimizers_defined_off_screen_step_the_network_named_for_them():
    # PyTorch-forum GAN threads ("modified by an inplace operation" after 1.5): optimizerD,
    # a hole, holds netD's parameters by its name; it steps between two backwards through
    # netD's forward (runtime_check/fragments/*_post_gan_step_between_backwards.py).
    assert (9, "SL210") in findings(GAN_STEP)[0]
    # a name that says nothing of which network it holds, with two networks: silent
    assert all(c != "SL210" for _, c in findings(GAN_STEP.replace("optimizerD", "optimizer"))[0])
    # named for the other network, whose forward the two share nothing of the step's model
    swapped = GAN_STEP.replace("netG(", "gen(").replace("optimizerD", "opt_gen")
    assert all(c != "SL210" for _, c in findings(swapped)[0])
    # one model only: a plainly named optimizer is its optimizer
    actor = """
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        for x, ret in loader:
            out = model(x)
            critic_loss = ((out[:, 0] - ret) ** 2).mean()
            actor_loss = -(out[:, 1] * ret).mean()
            optimizer.zero_grad()
            critic_loss.backward(retain_graph=True)
            optimizer.step()
            actor_loss.backward()
    """
    assert (9, "SL210") in findings(actor)[0]
    assert findings(actor.replace("nn.ReLU(), ", "").replace("nn.Linear(8, 2)", "nn.Tanh()"))[0] == []  # (one layer: unknown)


def test_a_hole_is_one_value_wherever_it_is_read_and_autograd_record_is_mxnets():
    # discuss.mxnet.io saliency threads: ``img`` comes from an earlier cell. Read twice,
    # it is one value (the forward's input is what attach_grad() replaces), and a text
    # whose only framework name is ``autograd`` opening ``record()`` is MXNet's.
    code = """
        with autograd.record():
            out = net(img)
            score = out[0, label]
        img.attach_grad()
        score.backward()
    """
    assert fragment_imports(textwrap.dedent(code)) == "\nfrom mxnet import autograd\n"
    assert findings(code)[0] == [(5, "SL303")]
    assert findings(code.replace("net(img)", "net(other)"))[0] == []  # (another input: no use of img)
    # torch.autograd has no record(): ``autograd.grad(...)`` alone is not read as MXNet
    assert fragment_imports("g = autograd.grad(loss, [x])\n") == ""


def test_a_number_added_to_the_loss_alone_is_a_lost_term():
    # A penalty taken out with asscalar() and wrapped back: added to the loss, it is a
    # constant of it (fixtures/SL206/*_penalty_term_asscalar.py). As a coefficient of a
    # graph value (a baseline), or inside a nonlinear term with the output (a target),
    # it is on purpose.
    code = """
        for data, label in train_data:
            with autograd.record():
                out = net(data)
                penalty = nd.array([out.abs().mean().asscalar()])
                loss = loss_fn(out, label).mean() + 0.01 * penalty
            loss.backward()
            trainer.step(data.shape[0])
    """
    assert findings(code)[0] == [(5, "SL206")]
    coefficient = code.replace("+ 0.01 * penalty", "* penalty")
    assert findings(coefficient)[0] == []
    target = code.replace("loss_fn(out, label).mean() + 0.01 * penalty", "((out - penalty) ** 2).mean()")
    assert findings(target)[0] == []


def test_a_number_handed_to_a_function_is_no_lost_term():
    # WGAN-GP's shape (first contact round 10, pytorch-wgan, a false alarm of the summand
    # reading before it was narrowed): the penalty is computed from ``real.data`` and
    # ``fake.data`` by a function that runs the critic on their interpolation: the inputs'
    # values shape what the critic returns; no constant is added to the loss.
    code = """
        import torch
        from torch import autograd


        def gradient_penalty(D, real, fake):
            eta = torch.rand(real.size(0), 1)
            x = (eta * real + (1 - eta) * fake).requires_grad_(True)
            grads = autograd.grad(D(x).sum(), x, create_graph=True)[0]
            return ((grads.norm(2, dim=1) - 1) ** 2).mean() * 10


        def critic_step(D, G, opt, real, z):
            fake = G(z)
            d_loss = D(fake.detach()).mean() - D(real).mean()
            gp = gradient_penalty(D, real.data, fake.data)
            (d_loss + gp).backward()
            opt.step()
    """
    assert [c for _, c in findings(code)[0]] == []


def test_review_counterexamples_of_the_lost_term_and_named_optimizers():
    # (a reviewer's programs against 35de1c4..7eb8fe3) A detached value added to the loss is
    # no lost term by this reading: the value trick ``loss - loss.detach() + c``, a teacher's
    # loss trained by its own backward, a logged auxiliary total; nor is a running baseline
    # from an earlier iteration.
    trick = """
        import torch
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            shown = loss - loss.detach() + loss.detach().clamp(min=0)
            opt.zero_grad()
            shown.backward()
            opt.step()
    """
    assert findings(trick)[0] == []
    baseline = """
        import torch
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        baseline = 0.0
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            centered = loss - baseline
            baseline = 0.9 * baseline + 0.1 * loss.item()
            opt.zero_grad()
            centered.backward()
            opt.step()
    """
    assert findings(baseline)[0] == []
    # An off-screen optimizer named for a role (``actor_optimizer``) may hold a head the
    # text never shows: with one model on screen, only a plainly named one is its own.
    roles = """
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        for obs, ret in loader:
            out = model(obs)
            actor_loss = -(out[:, 0] * ret).mean()
            critic_loss = ((ret - out[:, 1]) ** 2).mean()
            actor_optimizer.zero_grad()
            actor_loss.backward(retain_graph=True)
            actor_optimizer.step()
            critic_loss.backward()
    """
    assert findings(roles)[0] == []
    assert (11, "SL210") in findings(roles.replace("actor_optimizer", "optimizer"))[0]
