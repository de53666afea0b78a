"""Fragments as people paste them (issue 41; docs/model.md, "Fragments"): a text that uses a
framework without importing it is read as importing it, and its undefined names by their
roles; where the reading would be a guess, nothing is read."""

from __future__ import annotations

import textwrap

from scopelint.engine import fragment_imports, lint_source

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
    assert all(f.fix is None for f in raw)  # (no fix: the imports read into it are not the user's)


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
