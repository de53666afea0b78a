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
