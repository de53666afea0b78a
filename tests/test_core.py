"""The analysis core: name resolution, recording state, flow, entry states."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from scopelint.core.flow import Analyzer
from scopelint.core.names import Names
from scopelint.core.state import Mode
from scopelint.engine import lint_source


def findings(src: str, select=None):
    result = lint_source(textwrap.dedent(src), "t.py")
    assert not result.errors
    return sorted((f.start[0], f.code) for f in result.findings if select is None or f.code in select)


# --- the examples the core issue names -------------------------------------------
def test_mxnet_backward_on_value_made_in_pause():
    src = """
        from mxnet import autograd, nd
        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
        with autograd.pause():
            z = y[0] * x[1]
        z.backward()
    """
    assert (9, "SL101") in findings(src)


def test_mxnet_backward_inside_pause_around_training_loop():
    src = """
        from mxnet import autograd, gluon, nd
        net = gluon.nn.Dense(1)
        loss_fn = gluon.loss.L2Loss()
        def train(data):
            with autograd.pause():
                for x, y in data:
                    with autograd.record():
                        loss = loss_fn(net(x), y)
                    loss.backward()
    """
    assert findings(src) == [(10, "SL102")]


def test_mxnet_predict_called_only_at_module_level_has_redundant_pause():
    src = """
        from mxnet import autograd, gluon, nd
        net = gluon.nn.Dense(1)
        def predict(net, x):
            with autograd.pause():
                return net(x)
        print(predict(net, nd.ones((1, 2))))
    """
    assert findings(src) == [(5, "SL104")]


def test_mxnet_predict_with_unknown_callers_is_silent():
    src = """
        from mxnet import autograd
        def predict(net, x):
            with autograd.pause():
                return net(x)
    """
    assert findings(src) == []


def test_torch_no_grad_without_call():
    assert findings("import torch\nwith torch.no_grad:\n    pass\n") == [(2, "SL107")]


# --- import styles and look-alikes -------------------------------------------------
@pytest.mark.parametrize(
    "imports, spelled",
    [
        ("import torch", "torch.no_grad"),
        ("import torch as T", "T.no_grad"),
        ("from torch import no_grad", "no_grad"),
        ("from torch import no_grad as ng", "ng"),
        ("import torch.autograd", "torch.autograd.no_grad"),
        ("from torch.autograd import grad_mode", "grad_mode.no_grad"),
        ("from torch.autograd.grad_mode import no_grad", "no_grad"),
    ],
)
def test_torch_import_styles_resolve(imports, spelled):
    module = cst.parse_module(f"{imports}\nwith {spelled}():\n    pass\n")
    names = Names(module)
    with_node = module.body[1]
    assert names.qualify(with_node.items[0].item.func, names.root) == "torch.no_grad"


@pytest.mark.parametrize(
    "imports, spelled",
    [
        ("import mxnet as mx", "mx.autograd.record"),
        ("import mxnet", "mxnet.autograd.record"),
        ("import mxnet.autograd", "mxnet.autograd.record"),
        ("from mxnet import autograd", "autograd.record"),
        ("from mxnet import autograd as ag", "ag.record"),
        ("from mxnet.autograd import record", "record"),
    ],
)
def test_mxnet_import_styles_resolve(imports, spelled):
    module = cst.parse_module(f"{imports}\nwith {spelled}():\n    pass\n")
    names = Names(module)
    assert names.qualify(module.body[1].items[0].item.func, names.root) == "mxnet.autograd.record"


def test_local_lookalikes_are_not_the_framework():
    src = """
        from mxnet import autograd
        from torch import no_grad
        class Net:
            def pause(self):
                return open("x")
            def run(self):
                with self.pause():
                    pass
        def f(no_grad):
            with no_grad:
                pass
        def g():
            record = autograd.record
            pause = lambda: None
            with pause:
                pass
    """
    assert findings(src) == []


def test_module_level_rebinding_makes_an_import_ambiguous():
    src = """
        import torch
        from torch import no_grad
        def no_grad():
            return torch.enable_grad()
        with torch.no_grad():
            with no_grad():
                pass
    """
    assert findings(src) == []


# --- flow ------------------------------------------------------------------------------
def test_value_state_flows_through_unpacking_and_branches():
    src = """
        import torch
        model = torch.nn.Linear(2, 2)
        x = torch.ones(1, 2)
        with torch.no_grad():
            a, b = model(x), model(x)
        if x.sum() > 0:
            c = a
        else:
            c = b * 2
        c.sum().backward()
    """
    assert findings(src) == [(11, "SL101")]


def _function(src: str, name: str):
    """The analysed function ``name`` of ``src`` (with the summary its walk made)."""
    facts = Analyzer(cst.parse_module(src)).run()
    return next(f for f in facts.functions if f.qualname == name)


@pytest.mark.parametrize("body, left", [
    ("return tuple(v.detach() for v in h)", True),
    ("return [v.detach() for v in h]", True),
    ("return (h[0].detach(), h[1].detach())", True),
    ("out = []\nfor v in h:\n    out.append(v.item())\nreturn out", True),
    ("return tuple(v for v in h)", False),
    ("return (h[0].detach(), h[1])", False),
    ("return [model(v) for v in h]", False),
])
def test_containers_whose_items_all_left_the_graph_left_it(body, left):
    src = "import torch\nmodel = torch.nn.Linear(2, 2)\ndef repack(h):\n" + textwrap.indent(body, "    ") + "\n"
    assert _function(src, "repack").returns_left is left


def test_iterating_a_list_of_values_yields_the_items_own_state():
    # The Gluon multi-device idiom: losses recorded in a list, backpropagated in a loop.
    recorded = """
        from mxnet import autograd, gluon
        net = gluon.nn.Dense(1)
        loss_fn = gluon.loss.L2Loss()
        def step(xs, ys):
            with autograd.record():
                losses = [loss_fn(net(x), y) for x, y in zip(xs, ys)]
            for l in losses:
                l.backward()
    """
    assert findings(recorded) == []
    paused = recorded.replace("autograd.record()", "autograd.pause()")
    assert findings(paused) == [(9, "SL101")]


def test_methods_called_through_an_instance_get_the_call_sites_state():
    src = """
        import torch
        class Probe(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.head = torch.nn.Linear(2, 2)
            @torch.no_grad()
            def logits(self, x):
                return self.head(x)
        model = Probe()
        loss = model.logits(torch.randn(3, 2)).sum()
        loss.backward()
    """
    assert findings(src) == [(12, "SL101")]  # the method's summary: what it returns has no graph
    # ``other.logits(...)`` on something unknown may call it too: nothing known any more.
    unknown = src.replace("model = Probe()", "model = make()")
    assert findings(unknown) == []


def test_an_unresolved_call_under_no_grad_gives_its_method_no_default_guess():
    """``m.predict(x)`` inside ``torch.no_grad()`` on something the flow cannot tell the
    class of (a checkpoint loader's result, moved with ``.to(device)``, bound to a name
    an instance was bound to before: the method does not escape): it may call the
    file's method ``predict``, with recording off. Its entry stays unknown, and SL103
    does not guess PyTorch's default (on) for it: the one call seen runs it without grad
    (dgl's graphsage/lightning example: ``SAGE.load_from_checkpoint(...)``)."""
    src = """
        import torch
        from lightning import LightningModule

        class Scorer(LightningModule):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Linear(4, 4)
                self.drop = torch.nn.Dropout(0.1)

            def forward(self, x):
                return self.drop(self.body(x))

            def predict(self, rows):
                out = []
                for r in rows:
                    out.append(self.drop(self.body(r)))
                return out

        scorer = Scorer()
        scorer = Scorer.restore("ckpt").to("cpu")
        CALL
    """
    under = src.replace("CALL", "with torch.no_grad():\n            scores = scorer.predict([torch.randn(4)])")
    assert findings(under) == []
    entry = _function(textwrap.dedent(under), "Scorer.predict").entry.torch
    assert (entry.mode.value, entry.origin.kind) == ("unknown", "called-elsewhere")
    # Called the same way with recording on: the default guess stands (SL103).
    bare = src.replace("CALL", "scores = scorer.predict([torch.randn(4)])\n"
                               "        with torch.no_grad():\n"
                               "            scorer.body.weight.zero_()")
    assert findings(bare) == [(17, "SL103")]  # (the forward pass in `predict`)
    entry = _function(textwrap.dedent(bare), "Scorer.predict").entry.torch
    assert (entry.mode.value, entry.origin.kind) == ("unknown", "unknown-entry")


def test_an_unresolved_call_of_a_method_name_makes_its_entry_unknown():
    src = """
        import torch
        class Runner:
            def step(self, x):
                return x.sum()
        r = Runner()
        with torch.no_grad():
            y = r.step(torch.randn(2, requires_grad=True))
        OTHER
    """
    def entry(text):
        return _function(textwrap.dedent(text), "Runner.step").entry.torch.mode.value

    assert entry(src.replace("OTHER", "")) == "off"
    assert entry(src.replace("OTHER", "anything.step(1)")) == "unknown"


def test_branch_that_may_record_makes_the_value_unknown():
    src = """
        import torch
        model = torch.nn.Linear(2, 2)
        def f(x, train):
            if train:
                y = model(x)
            else:
                with torch.no_grad():
                    y = model(x)
            y.sum().backward()
    """
    assert findings(src) == []


def test_unknown_set_grad_enabled_is_silent():
    src = """
        import torch
        model = torch.nn.Linear(2, 2)
        def step(x, phase):
            with torch.set_grad_enabled(phase == "train"):
                y = model(x)
            y.sum().backward()
    """
    assert findings(src) == []


def test_loop_carried_value_from_no_grad():
    src = """
        import torch
        model = torch.nn.Linear(2, 2)
        y = None
        for i in range(3):
            if y is not None:
                y.sum().backward()
            with torch.no_grad():
                y = model(torch.ones(1, 2))
    """
    # The first pass holds None, which the guard keeps out; every later pass holds the
    # no_grad result of the pass before, and backward() raises on it: a known state.
    assert (7, "SL101") in findings(src)


def test_loop_carried_value_unknown_on_one_path_is_silent():
    src = """
        import torch
        model = torch.nn.Linear(2, 2)
        y = make_start()
        for i in range(3):
            y.sum().backward()
            with torch.no_grad():
                y = model(torch.ones(1, 2))
    """
    assert (6, "SL101") not in findings(src)  # first pass: what unknown code returned


def test_entry_state_from_agreeing_call_sites():
    src = """
        import torch
        model = torch.nn.Linear(2, 2)
        def helper(x):
            return model(x)
        with torch.no_grad():
            out = helper(torch.ones(1, 2))
        out.sum().backward()
    """
    module = cst.parse_module(textwrap.dedent(src))
    facts = Analyzer(module).run()
    helper = next(f for f in facts.functions if f.name == "helper")
    assert helper.entry.torch.off
    assert findings(src) == [(8, "SL101")]


def test_entry_state_unknown_when_callers_disagree():
    src = """
        import torch
        def helper(x):
            with torch.no_grad():
                return x * 2
        with torch.no_grad():
            helper(torch.ones(1))
        helper(torch.ones(1))
    """
    module = cst.parse_module(textwrap.dedent(src))
    facts = Analyzer(module).run()
    helper = next(f for f in facts.functions if f.name == "helper")
    assert helper.entry.torch.mode.value == "unknown"
    assert findings(src) == []


def test_a_function_called_only_by_itself_has_unknown_entry():
    """transformers' ``dequantize_higgs``: its only call in the file is its own recursive
    call, under its own ``no_grad``; the first call comes from elsewhere (another module),
    so its entry is unknown and the ``no_grad`` is not reported redundant (SL104)."""
    src = """
        import torch
        def dequantize(model):
            with torch.no_grad():
                for child in model.children():
                    child.weight.mul_(0.5)
                    dequantize(child)
                return model
    """
    module = cst.parse_module(textwrap.dedent(src))
    facts = Analyzer(module).run()
    helper = next(f for f in facts.functions if f.name == "dequantize")
    assert helper.entry.torch.mode.value == "unknown"
    assert findings(src) == []
    # With an outside caller that agrees, its entry is that caller's (and both calls run off).
    called = src.rstrip(" ") + "        with torch.no_grad():\n            dequantize(torch.nn.Linear(2, 2))\n"
    assert findings(called) == [(4, "SL104")]


def test_a_flag_whose_branch_left_is_known_after_it():
    """``if not training: return`` (or ``if training: ...; return``): below it the flag's
    truth is known, and a branch it rules out is never walked (gluonts' second
    ``if is_train:``); rebinding the flag, or a join with a path that does not know it,
    forgets it."""
    src = """
        import torch
        def run(model, x, training):
            if not training:
                return model(x)
            with torch.no_grad():
                out = model(x)
            if not training:
                out.sum().backward()
            {rebind}
            if not training:
                out.sum().backward()
    """
    assert findings(src.format(rebind="pass")) == []
    assert findings(src.format(rebind="training = x is None")) == [(12, "SL101")]


def test_function_passed_as_callback_has_unknown_entry():
    src = """
        import torch
        def helper(x):
            with torch.no_grad():
                return x * 2
        with torch.no_grad():
            helper(torch.ones(1))
        callbacks = [helper]
    """
    assert findings(src) == []


def test_decorator_sets_entry_and_sl105_replaces_sl101():
    src = """
        import torch
        model = torch.nn.Linear(2, 2)
        @torch.no_grad()
        def train_step(x):
            loss = model(x).sum()
            loss.backward()
    """
    assert findings(src) == [(7, "SL105")]


def test_linter_never_imports_the_frameworks():
    import subprocess
    import sys

    code = (
        "import sys; import scopelint.cli, scopelint.engine; "
        "from scopelint.engine import lint_source; "
        "lint_source('import torch\\nwith torch.no_grad:\\n    pass\\n', 'x.py'); "
        "print('torch' in sys.modules, 'mxnet' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


def test_linting_a_file_leaves_no_reference_cycles():
    """What one file's analysis builds is freed as soon as it is dropped: a cycle would
    keep the whole LibCST tree alive until a collection (batches collect per file)."""
    import gc

    from fixtures_util import all_fixtures
    from scopelint.engine import Settings, lint_source

    nested = "import torch\n\n\ndef outer(model, x):\n    def inner(y):\n        return model(y)\n\n    return inner(x)\n"
    texts = [nested] + [p.read_text(encoding="utf-8") for p in all_fixtures()[::3]]
    for text in texts:
        lint_source(text, "t.py", Settings())  # imports and caches settle first
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds lands in gc.garbage
    try:
        for text in texts:
            lint_source(text, "t.py", Settings())
        gc.collect()
        # (a few small cycles of library closures are not ours: ast.literal_eval's,
        # LibCST's parse_expression's)
        ours = [o for o in gc.garbage if type(o).__module__.split(".")[0] in ("scopelint", "rules")]
        # a recursive closure of ours (a cycle through its cell) holds whatever it saw
        ours += [o for o in gc.garbage if type(o).__name__ == "function"
                 and (o.__module__ or "").split(".")[0] in ("scopelint", "rules")]
        assert not ours
        assert not [o for o in gc.garbage if isinstance(o, cst.Module)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


_BINDING_SAMPLE = textwrap.dedent(
    """\
    import torch as T, mxnet.autograd
    from torch import no_grad as ng
    from . import sibling
    from os import *
    a, (b, *c) = d = 1
    e: int = 2
    f: int
    g += 1
    global h
    for i, j in []:
        with open(x) as k, ctx() as (l, m):
            pass
    else:
        try:
            import json
        except (ValueError, TypeError) as n:
            o = 1
        else:
            p = 2
        finally:
            q = 3
    while False:
        if r := 0:
            pass
        elif s:
            t = 1
        else:
            u = [v for v in w if (y := v)]
    match z:
        case [aa, *bb]:
            cc = 1
    if 1: dd = 1; ee = 2
    def ff(gg, *hh, ii=1, **jj):
        kk = lambda ll: (mm := ll)
    class nn_(oo):
        pp = 1
    async def qq():
        async for rr in ss():
            async with tt() as uu:
                vv = 1
    """
)


def _binding_sources():
    from pathlib import Path

    import scopelint
    from fixtures_util import all_fixtures

    return [_BINDING_SAMPLE.replace("(mm := ll)", "ll").replace("r := 0", "r").replace("(y := v)", "v"),
            *(p.read_text(encoding="utf-8") for p in all_fixtures()),
            *(p.read_text(encoding="utf-8") for p in sorted(Path(scopelint.__file__).parent.rglob("*.py")))]


def test_bindings_from_statements_alone_are_those_of_the_full_walk():
    """Without ``:=`` in the code, collecting a scope's bindings from its statements
    alone finds what walking every node finds, in every scope."""
    from scopelint.core.syntax import walk

    for source in _binding_sources():
        if ":=" in source:
            continue
        module = cst.parse_module(source)
        full, fast = Names(module), Names(module, walrus=False)
        for node in walk(module):
            if isinstance(node, (cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                a, b = full.scope_of(node, None), fast.scope_of(node, None)
                assert (a.bound, a.imports, a.globals) == (b.bound, b.imports, b.globals), type(node).__name__
    module = cst.parse_module(_BINDING_SAMPLE)  # with ``:=``: the analysis walks every node
    root = Names(module, walrus=Analyzer(module).whole.walrus).root
    assert {"r", "a", "b", "c", "d", "g", "i", "k", "l", "n", "o", "p", "q", "t", "u", "ff", "nn_", "qq", "dd", "ee", "sibling"} <= root.bound
    assert root.imports == {"T": "torch", "mxnet": "mxnet", "ng": "torch.no_grad", "json": "json"}
    assert "v" not in root.bound and root.globals == {"h"}


def test_a_call_returns_what_the_callee_computed_from_its_arguments():
    """``Returns.template``: the value of ``score(net, x)`` is made, at each call, of what
    ``score`` computed from that call's arguments: a rule walking the backward's graph
    reaches the model call inside ``score`` and the caller's own ``x``, and each call's
    copy is in that call's recording state (the no-grad one off, the other on)."""
    src = textwrap.dedent("""
        import torch
        net = torch.nn.Linear(2, 2)

        def score(model, x):
            return model(x).sum()

        x = torch.randn(3, 2)
        with torch.no_grad():
            a = score(net, x)
        b = score(net, x)
        b.backward()
        a.backward()
    """)
    facts = Analyzer(cst.parse_module(src)).run()
    inner = next(c for c in facts.calls if c.callee == "model")
    first, second = sorted(facts.backwards, key=lambda b: b.seq)
    for b, mode in ((first, Mode.ON), (second, Mode.OFF)):
        path = list(b.values[0].ancestors())
        made = [v for v in path if v.node is inner.node]
        assert made and all(v.rec["torch"].mode is mode for v in made)
        assert any(type(v.node) is cst.Call and getattr(v.node.func, "attr", None) is not None and v.node.func.attr.value == "randn"
                   for v in path)
    assert findings(src) == [(13, "SL101")]


def test_arithmetic_on_numbers_taken_out_of_the_graph_is_no_graph_across_a_loop():
    """A running total of ``.item()`` values, started at 0.0, is a number in every
    iteration (``number``), not a value recorded because its last iteration is unknown."""
    src = textwrap.dedent("""
        import torch
        net = torch.nn.Linear(2, 1)
        total = 0.0
        for _ in range(3):
            loss = net(torch.randn(4, 2)).sum()
            total = total + loss.item()
        total.backward()
    """)
    facts = Analyzer(cst.parse_module(src)).run()
    (b,) = facts.backwards
    assert "number" in b.values[0].tags and b.values[0].rec["torch"].mode is Mode.UNKNOWN


@pytest.mark.parametrize("freeze, frozen", [
    ("for p in G.parameters():\n    p.requires_grad = False", True),
    ("for name, p in G.named_parameters():\n    p.requires_grad_(False)", True),
    ("G.requires_grad_(False)", True),
    ("set_grad(G, False)", True),
    ("set_grad(G, flag=False)", True),
    ("set_grad(G)", False),  # the helper's default: on
    ("set_grad(G, False)\nset_grad(G, True)", False),
    ("set_grad(D, False)", False),
    ("if cond:\n    set_grad(G, False)", True),  # may be frozen: a finding needs it not to be
    ("set_grad(G, cond)", True),  # not known
    ("for p in G.parameters():\n    print(p)", False),
])
def test_models_whose_parameters_may_not_require_grad(freeze, frozen):
    src = (
        "import torch\nG = torch.nn.Linear(2, 2)\nD = torch.nn.Linear(2, 1)\ncond = True\n"
        "def set_grad(model, flag=True):\n    for p in model.parameters():\n        p.requires_grad = flag\n"
        + freeze + "\nfake = G(torch.randn(3, 2))\n"
    )
    facts = Analyzer(cst.parse_module(src)).run()
    call = next(c for c in facts.calls if c.callee == "G" and c.func is None)
    assert ("G" in call.frozen) is frozen


# --- issue 18: the analysis follows `net(x)` into a module's forward ----------------
def test_a_module_whose_forward_reads_nothing_of_itself_is_a_function_of_its_arguments():
    """``FunctionInfo.stateless``: ``net(x)`` on a module whose ``forward`` never names
    ``self`` (no parameters, no submodules) is no forward pass of its own (SL103 would
    call it one in ``evaluate``); what its forward runs is seen inside it, in the call's
    state. (The SL107 fixture ``good_torch_no_grad_called`` with its statements moved
    into such a module: the invariance benchmark's ``forward`` refactoring.)"""
    src = """
        import torch
        import torch.nn as nn
        model = torch.nn.Linear(4, 2)

        class Step(nn.Module):
            def forward(self, x):
                with torch.no_grad():
                    return model(x).argmax(dim=1)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)

        def evaluate(x):
            step = Step()
            return step(x)

        def predict(x):
            net = Net()
            return net(x)
    """
    facts = Analyzer(cst.parse_module(textwrap.dedent(src))).run()
    by_name = {f.qualname: f for f in facts.functions}
    assert by_name["Step.forward"].stateless and not by_name["Net.forward"].stateless
    assert findings(src, {"SL103"}) == [(25, "SL103")]


def test_eval_mode_crosses_into_forward_through_the_instance_call():
    """``net(batch, model)`` binds ``forward(self, batch, model)``'s parameters after
    ``self`` (``flow.bound_params``): ``model`` in eval mode at the call is so in
    ``forward`` (SL103 there), as it is for a helper."""
    src = """
        import torch
        import torch.nn as nn

        class Step(nn.Module):
            def forward(self, batch, model):
                return model(batch)

        def predict(model, batch):
            model.eval()
            net = Step()
            return net(batch, model).softmax(dim=-1)

        model = torch.nn.Linear(4, 3)
        print(predict(model, torch.randn(5, 4)).requires_grad)
    """
    assert findings(src, {"SL103"}) == [(7, "SL103")]


def test_the_gate_keeps_the_forward_an_instance_call_runs():
    """The gate's slice keeps ``forward`` (and ``__init__``, what its ``self.x`` is)
    where the code that makes and calls the instance is kept: the slice's findings are
    the whole file's."""
    src = textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Embed(nn.Module):
            def forward(self, encoder, x):
                return F.normalize(encoder(x), dim=1)

        def neighbours(encoder, x):
            encoder.eval()
            net = Embed()
            return net(encoder, x)

        encoder = torch.nn.Linear(5, 4)
        print(neighbours(encoder, torch.randn(3, 5)).requires_grad)
    """)
    from scopelint.engine import Settings

    gated = lint_source(src, "t.py", Settings())
    whole = lint_source(src, "t.py", Settings(gate=False))
    assert [(f.start[0], f.code) for f in gated.findings] == [(f.start[0], f.code) for f in whole.findings] == [(8, "SL103")]


def test_a_list_grown_by_a_callee_holds_what_it_put_there():
    """``Returns.grown``: ``add(losses, loss)`` appends to the caller's list; after the
    call the caller's ``losses`` holds the loss (linked by value), directly, two calls
    deep, and for a closure handed to a runner that appends to a free name."""
    src = textwrap.dedent("""
        import torch
        net = torch.nn.Linear(2, 1)

        def add(losses, loss):
            losses.append(loss)

        def add_twice(losses, loss):
            add(losses, loss)
            add(losses, loss * 2)

        def run(fn, *args):
            return fn(*args)

        x = torch.randn(3, 2)
        a = []
        add_twice(a, net(x).sum())
        b = []
        out = net(x).mean()
        def step():
            b.append(out)
        run(step)
        torch.autograd.backward(a + b)
    """)
    facts = Analyzer(cst.parse_module(src)).run()
    (bw,) = facts.backwards
    net_calls = {id(c.node) for c in facts.calls if c.callee == "net"}
    reached = {id(v.node) for v in bw.values[0].ancestors()} if len(bw.values) == 1 else {
        id(v.node) for value in bw.values for v in value.ancestors()}
    assert net_calls <= reached
    by_name = {f.qualname: f for f in facts.functions}
    assert [n for n, _ in by_name["add"].returns.grown] == ["losses"]
    assert [n for n, _ in by_name["add_twice"].returns.grown] == ["losses"]


def test_a_rebound_parameter_is_not_grown():
    """``losses = losses + [loss]`` makes a new list: the caller's is unchanged."""
    src = textwrap.dedent("""
        import torch

        def add(losses, loss):
            losses = losses + [loss]
            return None

        a = []
        add(a, torch.randn(2, requires_grad=True).sum())
    """)
    facts = Analyzer(cst.parse_module(src)).run()
    assert next(f for f in facts.functions if f.name == "add").returns.grown == ()


def test_a_number_handed_through_a_module_and_back_stays_a_number():
    """A Python float total handed to a Block's ``forward`` and returned: the template's
    arithmetic is done again on the call's values (``Template.instantiate``), so the
    first round's guess (an unknown parameter, recorded inside ``record()``) does not
    justify itself around the loop (SL304 on ``+=`` would). (The SL304 fixture
    ``good_metric_asscalar_in_record``'s accumulation moved into a Block.)"""
    src = """
        import mxnet as mx
        from mxnet import autograd as ag, gluon, nd

        net = gluon.nn.Sequential()
        net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dense(1))
        net.initialize(mx.init.Normal(0.1))
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
        loss_fn = gluon.loss.L2Loss()
        X = nd.random.normal(shape=(32, 4))
        y = X.sum(axis=1, keepdims=True)

        class Tally(gluon.Block):
            def forward(self, l, total):
                total += l.sum().asscalar()
                return total

        for epoch in range(2):
            total = 0.0
            for i in range(0, 32, 8):
                Xb, yb = X[i:i + 8], y[i:i + 8]
                with ag.record():
                    l = loss_fn(net(Xb), yb)
                    tally = Tally()
                    total = tally(l, total)
                l.backward()
                trainer.step(8)
            print(total / 32)
    """
    from scopelint.engine import Settings

    for settings in (Settings(), Settings(gate=False)):  # (the whole file too, not only the gate's slice)
        assert lint_source(textwrap.dedent(src), "t.py", settings).findings == []


def test_a_forward_that_reaches_the_instance_through_super_or_gluon_parameters_is_not_stateless():
    # ``super().forward(x)`` never names ``self``, nor does a HybridBlock's
    # ``hybrid_forward(self, F, x, weight)``: both run what the instance holds.
    torch_src = """
        import torch
        from torch import nn
        class Head(nn.Dropout):
            def forward(self, x):
                return super().forward(x) * 2.0
        def predict(net, x):
            return net(x)
        net = Head(0.5)
        print(predict(net, torch.randn(3, 4)))
    """
    assert findings(torch_src) == [(8, "SL103")]
    mx_src = """
        from mxnet import autograd, gluon, nd
        class Scale(gluon.HybridBlock):
            def __init__(self, **kwargs):
                super(Scale, self).__init__(**kwargs)
                self.weight = self.params.get("weight", shape=(4,))
            def hybrid_forward(self, F, x, weight):
                return F.broadcast_mul(x, weight)
        net = Scale()
        net.initialize()
        with autograd.record():
            out = net(nd.ones((2, 4)))
        print(out.asnumpy())
    """
    assert findings(mx_src) == [(11, "SL103")]


def test_a_rebound_model_is_neither_frozen_nor_in_train_mode_any_more():
    src = """
        import torch
        from torch import nn
        G = nn.Linear(2, 2)
        for p in G.parameters():
            p.requires_grad = False
        G = nn.Linear(2, 2)
        fake = G(torch.randn(3, 2))
    """
    facts = Analyzer(cst.parse_module(textwrap.dedent(src))).run()
    (call,) = [c for c in facts.calls if c.callee == "G"]
    assert "G" not in call.frozen


def test_a_functions_mode_effects_on_its_own_locals_are_not_told_to_its_callers():
    src = """
        import torch
        net = torch.nn.Dropout(0.5)
        class Pair:
            def __init__(self):
                self.body = torch.nn.Dropout(0.5)
        def helper(model):
            net = Pair()
            net.eval()
            net.body.eval()  # (a local's attribute: was told as ``net.body``)
            model.eval()
    """
    info = _function(textwrap.dedent(src), "helper")
    assert info.leaves_eval == frozenset({"model"})


def test_sl304_a_backward_in_a_function_called_in_the_loop_runs_in_the_loop():
    """SL304's "written again each iteration into an array of the graph" needs a loop
    with no backward in it. A step function called once per iteration backpropagates
    in that loop: a write in it of a value made in it is the step's own (issue 18's
    variants of ``good_mxnet_lists_floats_and_paused_arrays_in_record``, found once the
    gate kept the module-level ``graphs`` the step reads)."""
    text = textwrap.dedent("""\
        import random

        from mxnet import autograd, gluon, nd


        class Graph:
            def __init__(self, n):
                self.edata = {"w": nd.ones((n, 1))}


        def step(x):
            with autograd.record():
                g = random.choice(graphs)
                g.edata["feat"] = head(x)
                loss = (g.edata["feat"] ** 2).mean()
            BACKWARD
            trainer.step(3)


        head = gluon.nn.Dense(1)
        head.initialize()
        trainer = gluon.Trainer(head.collect_params(), "sgd", {"learning_rate": 0.05})
        graphs = [Graph(3), Graph(3)]
        for _ in range(3):
            step(nd.random.normal(shape=(3, 5)))
        """)
    assert [f.code for f in lint_source(text.replace("BACKWARD", "loss.backward()"), "t.py").findings] == []
    # no backward anywhere in the loop: the array written each iteration is the graph's
    found = lint_source(text.replace("BACKWARD", "pass"), "t.py").findings
    assert [(f.code, f.start[0]) for f in found] == [("SL304", 14)]


@pytest.mark.parametrize("helper, call, found", [
    # the helper attaches what it is handed: the recorded use came first
    ("def track(a):\n    a.attach_grad()\n", "track(x)", [("SL303", 5)]),
    # through a method that hands it on to another (issue 18's trainer refactoring)
    ("class T:\n    def fit(self, a):\n        self.epoch(a)\n\n    def epoch(self, a):\n        a.attach_grad()\n",
     "T().fit(x)", [("SL303", 9)]),
    # a closure's free name
    ("def track():\n    x.attach_grad()\n", "track()", [("SL303", 5)]),
    # its own ``a``, rebound before the attach: the caller's array is not touched
    ("def track(a):\n    a = a * 1\n    a.attach_grad()\n    return a\n", "track(x)", []),
    # under an ``if``: it may not attach (unknown, silent)
    ("def track(a, on):\n    if on:\n        a.attach_grad()\n", "track(x, True)", []),
])
def test_sl303_an_attach_in_a_called_function_happens_at_the_call(helper, call, found):
    """``attach_grad()`` in a function of the file, on what the caller holds, makes the
    caller's array a new leaf at the call: a recorded use before it is not connected
    (``summaries.attaches_grad``, applied by the flow at the call)."""
    text = "from mxnet import autograd, nd\n\n\n" + helper + textwrap.dedent(f"""\


        x = nd.array([1.0, 2.0])
        with autograd.record():
            y = (x * x).sum()
            {call}
        y.backward()
        """)
    lines = text.splitlines()
    got = [(f.code, f.start[0]) for f in lint_source(text, "t.py").findings]
    assert got == found, (got, lines)  # (rows of the whole text: the helper's attach)


@pytest.mark.parametrize("pred, found", [
    ("model(x)", [("SL206", 14)]),  # the number is taken out of the model's output
    ("x.sum(dim=1, keepdim=True)", []),  # out of data: no gradient was there to stop
])
def test_sl206_a_number_returned_from_the_free_names_a_helper_reads(pred, found):
    """A function that returns ``.item()`` of the module's names it reads (no
    parameters): what it returned is made of those names' values at the call, as of
    its arguments (issue 18's closure variants of ``bad_torch_tensor_of_item``)."""
    text = textwrap.dedent(f"""\
        import torch
        from torch import nn

        model = nn.Linear(5, 1)
        x = torch.randn(32, 5)
        y = x.sum(dim=1, keepdim=True)


        def step():
            return ((pred - y) ** 2).mean().item()


        pred = {pred}
        mse = step()
        loss = torch.tensor(mse, requires_grad=True).sqrt()
        loss.backward()
        """)
    assert [(f.code, f.start[0]) for f in lint_source(text, "t.py").findings] == found


@pytest.mark.parametrize("helper, call", [
    # it may return before the attach (found in review: ``ensure_grad``)
    ("def track(a):\n    if a.grad is not None:\n        return\n    a.attach_grad()\n", "track(x)"),
    # a runner that calls the callback only under a condition (found in review)
    ("def track():\n    x.attach_grad()\n\n\ndef every(fn, n):\n    if n % 1000 == 0:\n        return fn()\n", "every(track, 3)"),
])
def test_sl303_an_attach_that_may_not_run_at_the_call_is_silent(helper, call):
    """Across a call, SL303 needs the attach to run wherever the call runs: not after an
    early ``return``, not in a callback a runner may not call (unknown means silence)."""
    text = "from mxnet import autograd, nd\n\n\n" + helper + textwrap.dedent(f"""\


        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = (x * x).sum()
            {call}
        y.backward()
        """)
    assert [f.code for f in lint_source(text, "t.py").findings] == []
    # the same runner calling it wherever it runs: found
    if "every" in call:
        surely = text.replace("    if n % 1000 == 0:\n        return fn()\n", "    return fn()\n")
        assert [f.code for f in lint_source(surely, "t.py").findings] == ["SL303"]


def test_parameter_defaulting_to_a_function_is_no_model():
    # fastai's LMLearner.predict(..., decoder=decode_spec_tokens): a text function handed
    # in, whose name only reads like a model's
    src = """
        import torch

        def decode_tokens(tokens):
            return [t.upper() for t in tokens]

        def predict(model, text, decoder=decode_tokens, encoder=lambda s: s.split()):
            model.eval()
            return " ".join(decoder(encoder(text)))

        def predict_with_model(text, decoder=None):
            return decoder(text)
    """
    found = findings(src)
    assert (9, "SL103") not in found
    assert (12, "SL103") in found  # no default to read: a model by its name, as before
