"""Every fixture, both ways: bad ones yield exactly their `# expect:` findings, good
ones yield nothing. The corpus itself must hold enough of each per rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures_util import FIXTURES, all_fixtures, expected_findings, is_bad
from scopelint.engine import lint_source
from scopelint.rules import ALL_RULES

FIXTURE_FILES = all_fixtures()


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_findings(path):
    expected = expected_findings(path)
    if is_bad(path):
        assert expected, "a bad fixture must mark its findings with `# expect: SLxxx`"
        assert any(code == path.parent.name for _, code in expected), "a bad fixture must show its own rule"
    else:
        assert path.name.startswith("good_"), "fixtures are named bad_*.py or good_*.py"
        assert not expected, "a good fixture has no `# expect:` marker"
    result = lint_source(path.read_text(encoding="utf-8"), str(path))
    assert not result.errors
    found = {(f.start[0], f.code) for f in result.findings}
    assert found == expected, "\n".join(
        [f"missing: line {r} {c}" for r, c in sorted(expected - found)]
        + [f"unexpected: line {r} {c}: {f.message}" for f in result.findings for r, c in [(f.start[0], f.code)] if (r, c) not in expected]
    )


@pytest.mark.parametrize("code", sorted(c for c in ALL_RULES if c != "SL001"))  # (SL001: tests/test_noqa.py)
def test_each_rule_has_enough_fixtures(code):
    folder = FIXTURES / code
    bad = sorted(folder.glob("bad_*.py"))
    good = sorted(folder.glob("good_*.py"))
    assert len(bad) >= 4, f"{code}: {len(bad)} bad fixtures"
    assert len(good) >= 4, f"{code}: {len(good)} good fixtures"


def test_text_gate_does_not_change_findings():
    """The pre-parse gate only skips work: on every fixture and demo file, findings
    are the same with it on and off, and it lets every file with a finding through."""
    from dataclasses import replace

    from fixtures_util import ROOT
    from scopelint.engine import Settings, might_fire

    on, off = Settings(), replace(Settings(), gate=False)
    paths = FIXTURE_FILES + sorted((ROOT / "demo").glob("*.py"))
    for path in paths:
        text = path.read_text(encoding="utf-8")
        with_gate = [(f.start, f.code) for f in lint_source(text, str(path), on).findings]
        without = [(f.start, f.code) for f in lint_source(text, str(path), off).findings]
        assert with_gate == without, path
    assert not might_fire("import torch\nx = torch.ones(3)\nprint(x.sum())\n", on)
    assert might_fire("import torch\ndef predict_all(m, x):\n    return m(x)\n", on)
    # ``record`` and ``pause`` as whole words only
    assert not might_fire("import mxnet\nx.recorded = x.pauses\n", on)
    assert might_fire("import mxnet\nwith mx.autograd.record():\n    pass\n", on)
    assert might_fire("import mxnet as mx\npause()", on)


IMPORT_FORMS = [
    "import torch\n",
    "import os, torch.nn as nn\n",
    "import os as o,mxnet\n",
    "from torch import nn\n",
    "from  mxnet.gluon import nn\n",
    "x = 1; import torch\n",
    "if True: from torch import no_grad\n",
    "try:import mxnet\nexcept ImportError: pass\n",
    "def f():\n\timport torch\n",
    "class A:\n    from torch import nn\n",
    "\fimport torch\n",
    "x = 1\rimport torch\r",
    "x = 1\r\nimport torch\r\n",
    "import os, \\\n    torch\n",
    "from \\\n    torch import nn\n",
    "from torch import (\n    nn,\n)\n",
]


@pytest.mark.parametrize("form", IMPORT_FORMS)
def test_the_text_gate_sees_every_form_of_a_framework_import(form):
    """A file is skipped unread only when it has no absolute import of a framework:
    the text check must let every way of writing one through."""
    import ast

    from scopelint.core.slicing import _frameworks, _imports, imported_frameworks
    from scopelint.engine import Settings, might_fire

    code = form + "loss.backward()\n"
    imported = _frameworks(_imports(ast.parse(code).body))
    assert imported, "the sample imports a framework"
    assert imported <= imported_frameworks(code)
    assert might_fire(code, Settings())


def test_the_text_gate_skips_a_framework_package_s_own_relative_imports():
    from scopelint.engine import Settings, might_fire

    internal = '"""Parameters of mxnet blocks."""\nfrom .. import autograd\nfrom .parameter import Parameter\n\n\ndef f(x):\n    with autograd.record():\n        return x\n'
    assert not might_fire(internal, Settings())
    assert might_fire(internal.replace("from .. import autograd", "from mxnet import autograd"), Settings())


def test_the_text_gate_agrees_with_the_parser_on_every_fixture_and_our_own_code():
    """Whatever framework ``ast`` finds imported, the text check finds too."""
    import ast

    import scopelint
    from scopelint.core.slicing import _frameworks, _imports, imported_frameworks

    own = sorted(Path(scopelint.__file__).parent.rglob("*.py"))
    for path in FIXTURE_FILES + own:
        text = path.read_text(encoding="utf-8")
        assert _frameworks(_imports(ast.parse(text).body)) <= imported_frameworks(text), path


def _anchor_forms():
    from scopelint.core import frameworks as F
    from scopelint.core import slicing

    functions = {q.rsplit(".", 1)[-1]: q for q in (*F.BACKWARD_FUNCS, *F.PARAMETER_CLASSES) if q.startswith("torch.")}
    # (a function as the analysis knows it: by its import, ``torch.autograd.grad``)
    forms = [f"{functions.get(name, 'x')}.{name}()" if name not in functions else f"{functions[name]}(a)"
             for name in sorted(slicing._CALLED)]
    forms += [f"{'torch' if fw == F.TORCH else 'mxnet.autograd'}.{name}" for fw, names in slicing._SCOPE_NAMES.items()
              for name in sorted(names)]
    forms += ["torch.zeros(3, requires_grad=True)", "x . eval ()", "model.parameters ()", "(model.  # all\n     eval())",
              "def predict(model, x):\n    return model(x)", "torch.zeros(3, requires_grad = (1.0))", "(x.backward)()",
              "(x.backward  # later\n    )()", "(model.\n     # {x}\n     eval)()", "from torch.autograd import grad as g\n    g(a, b)", "y = a.ñame(b)",
              "from torch.nn.functional import mse_loss as m\n    y = m(a, b)", "def \\\n  predict(model, x):\n    return model(x)"]
    # The gradient buffer's forms matter to SL202/SL203 only, which need a backward call.
    forms += [f"{form}\n    loss.backward()" for form in ("net.initialize(grad_req='add')", "p.grad.zero_()", "p.grad = None")]
    forms += ["p.grad = None\n    (grad)(a, b)"]  # (a bare ``grad`` called: ``_backprop``, read in text too)
    # ... and where something else backpropagates (SL209's ``.data`` writes, a ``.grad``
    # store: alone, in a file nothing backpropagates in, they anchor nothing)
    forms += [f"{form}\n    torch.autograd.backward([loss])" for form in (
        "p.data = a", "p.data[:] = a", "p.data.copy_(a)", "p.data += a", "p . grad = None", "p.grad.zero_()",
        "(p.  # the buffer\n     data) = a")]
    # Loss calls, as roles.is_loss_call reads a name (any case, any part of it; not a
    # class's spelling: ``nn.MSELoss()`` makes an object).
    forms += [f"y = F.{name}(a, b)" for name in ("cross_entropy", "nll_loss", "MSE", "l1_loss", "BCE_with_logits",
                                                  "kl_div", "hinge_embedding", "HUBER", "ctc_loss", "crit", "criterion")]
    return forms


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("form", _anchor_forms())
def test_whatever_the_plan_anchors_on_passes_the_text_gate(form, newline):
    """The text gate is a superset of the plan's anchors (the gradient buffer's with
    the backward call they need): a file the plan would keep something of is never
    skipped unread, whatever ends its lines."""
    from scopelint.core import slicing
    from scopelint.engine import Settings, might_fire

    code = f"import torch, mxnet\nimport torch.nn.functional as F\nfrom torch import nn\n\n\ndef f(x, net, p, model, a, b, loss):\n    {form}\n" \
        if not form.startswith("def ") else f"import torch\n\n\n{form}\n"
    code = code.replace("\n", newline)
    assert slicing.plan(code, Settings().inference_functions).source is not None, "an anchor"
    assert might_fire(code, Settings())


@pytest.mark.parametrize("code, anchors", [
    ("def evaluate_guards(code, scope):\n    return helper(code) + len(scope)\n", False),  # torch's many codegen helpers
    ("def evaluate(model, x):\n    return model(x)\n", True),
    ("class A:\n    def predict(self, x):\n        y = self.prep(x)\n\n# a comment at column 0\n        return self.net(y)\n", True),
    ("class A:\n    async def infer(self, x):\n        return self.backbone(x)\n", True),
    ("def validate(x, fn):\n    out = []\n    for f in fn:\n        out.append(f(x))\n    return out\n", True),
    ("@g(1)\ndef evaluate(x):\n    return x\n", True),  # a decorator called ``g``: may be a model
    ("@g(\n    1,\n)\n@staticmethod\ndef evaluate(x):\n    return x\n", True),
    ("@other\ndef run(x):\n    return x\n\n\ndef evaluate(x):\n    return len(x)\n", False),
    ("def outer(net):\n    def evaluate(x):\n        return net(x)\n    return evaluate\n", True),  # ``net``: a model's name
    ("def outer(a):\n    def evaluate(x):\n        return helper(x)\n    return evaluate\n", False),
    # a comment with a brace, a form feed in the indentation (found in review: both cut
    # the function short, and what was left parsed)
    ("def evaluate(model, loader):\n    outs = []\n    # returns {name: tensor}\n    for x in loader:\n"
     "        outs.append(model(x))\n    return outs\n", True),
    ("class R:\n    def evaluate(self, model, loader):\n        outs = []\n\f        for x in loader:\n"
     "            outs.append(model(x))\n        return outs\n", True),
])
def test_an_inference_named_function_passes_the_text_gate_where_the_plan_anchors_it(code, anchors):
    """The text gate reads an inference-named function alone (``slicing._def_text``) and
    asks what the plan asks of it: whether it may call a model."""
    from scopelint.core import slicing
    from scopelint.engine import Settings, might_fire

    for text in ("import torch\n\n\n" + code, ("import torch\n\n\n" + code).replace("\n", "\r\n")):
        assert (slicing.plan(text, Settings().inference_functions).source is not None) is anchors
        assert might_fire(text, Settings()) is anchors


@pytest.mark.parametrize("code", [
    # a string's line less indented than the function ends the text early: it does not parse
    'def generate_code(x):\n    src = """\nline\n"""\n    return model(src)\n',
    "def evaluate(a,\nmodel):\n    return model(a)\n",  # parameters less indented than the ``def``
    "class A:\n    def predict(self, x):\n        y = 1\n\t\treturn self.model(x)\n",  # a tab where spaces were
    'x = """def evaluate(m):\n    return 1\n"""\n',  # a ``def`` in a string, not at a line's start
])
def test_an_inference_named_function_the_text_gate_cannot_read_alone_passes_it(code):
    from scopelint.engine import Settings, might_fire

    assert might_fire("import torch\n\n\n" + code, Settings())


def test_a_function_with_type_parameters_passes_the_text_gate():
    """``def predict[T](...)`` (Python 3.12): the plan anchors on it where ``ast`` reads
    it; the text gate, read before, lets it through on any Python."""
    from scopelint.engine import Settings, might_fire

    assert might_fire("import torch\n\n\ndef predict[T](model: T, x):\n    return model(x)\n", Settings())


@pytest.mark.parametrize("code", [
    "import torch\n\n\nclass Twice(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, g):\n        return 2 * g\n",
    "import torch\nx = torch.zeros(3, requires_grad=False)\nif x.requires_grad:\n    print(x.grad)\n",
    "import torch\nevent = torch.cuda.Event()\nevent.record()  # an MXNet scope's name, in a torch file\n",
    "import torch\n\n\nclass Parameter(object):\n    def train(self, steps):\n        return steps\n",
    # API names in comments only (a whole line of comment: ``# loss.backward()``)
    "import torch\n\n# call loss.backward() after this, under torch.no_grad() if need be\nx = torch.ones(2)\n",
    "import torch\n\n\ndef f(p):\n    # p.data = p.data * 2 would leave the graph; model.eval() here\n    return p * 2\n",
    # the gradient buffer's forms where nothing may backpropagate (an optimizer's step)
    "import torch\n\n\ndef step(ps, lr):\n    for p in ps:\n        p.data -= lr * p.grad.data\n        p.grad = None\n",
    "import mxnet\nnet.initialize(grad_req='add')\nnet.collect_params().setattr('grad_req', 'add')\n",
])
def test_the_text_gate_skips_what_has_no_anchor_in_the_form_the_plan_reads(code):
    """Definitions named like the API, ``requires_grad=False`` or read, another
    framework's scope names: no anchor, and the file is skipped before ``ast`` parses
    it."""
    from scopelint.core import slicing
    from scopelint.engine import Settings, might_fire

    assert slicing.plan(code, Settings().inference_functions).source is None
    assert not might_fire(code, Settings())


def test_a_loss_not_spelled_loss_is_accumulated_alike_with_the_gate_on_and_off():
    from dataclasses import replace

    from scopelint.engine import Settings

    code = (
        "import torch\nimport torch.nn.functional as F\n\nmodel = torch.nn.Linear(3, 2)\ntotal = 0\n"
        "for i in range(3):\n    x = torch.randn(4, 3)\n    y = torch.randint(0, 2, (4,))\n"
        "    total += F.cross_entropy(model(x), y)\n"
    )
    on = [f.code for f in lint_source(code, "t.py", Settings()).findings]
    assert on == [f.code for f in lint_source(code, "t.py", replace(Settings(), gate=False)).findings] == ["SL201"]


@pytest.mark.parametrize("write", ["dst.bias.data = src(z)", "dst.bias.data[:] = src(z)", "dst.bias.data.copy_(src(z))"])
def test_a_data_write_the_gate_would_not_reach_otherwise_is_kept(write):
    """A ``.data`` write (SL209) anchors its unit: here nothing else needs the function
    that holds it, nor the call that gives its parameters their values."""
    from dataclasses import replace

    from scopelint.engine import Settings

    filler = "".join(f"\n\ndef filler{i}(a):\n    return a + {i}\n" for i in range(40))
    code = (
        "import torch\nfrom torch import nn\n\n\ndef tie(dst, src, z):\n    " + write + "\n\n\n"
        "bias_net, head = nn.Linear(3, 5), nn.Linear(10, 5)\ntie(head, bias_net, torch.randn(3))\n"
        "print(bias_net.weight.grad)\nw = torch.zeros(3, requires_grad=True)\n(w * 2).sum().backward()\n" + filler
    )
    on = [(f.start, f.code) for f in lint_source(code, "t.py", Settings()).findings]
    off = [(f.start, f.code) for f in lint_source(code, "t.py", replace(Settings(), gate=False)).findings]
    assert on == off == [((6, 5), "SL209")]
