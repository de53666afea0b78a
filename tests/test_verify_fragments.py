"""The verifier's synthesized harness (issue 23): holes found statically
(runtime_check/holes.py), filled with real objects (runtime_check/synth.py), and the
fragment corpus (runtime_check/fragments/) verified through the same sandboxed runner.

The whole corpus takes minutes (two sandboxed runs per bad fragment), so the suite runs
a fixed sample, SAMPLE below: a PyTorch snippet, a PyTorch helper function, an MXNet
snippet and an MXNet helper, with their twins. ``python benchmarks/fragments.py`` runs
all of it and prints the confirmed rate."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from scopelint.engine import lint_source
from scopelint.runner import FileResult
from scopelint.runtime_check import synth
from scopelint.runtime_check.holes import analyze
from scopelint.runtime_check.verify import verify

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import fragments as corpus  # noqa: E402  (benchmarks/fragments.py)

HAS = {fw: importlib.util.find_spec(fw) is not None for fw in ("torch", "mxnet")}
SAMPLE = ["torch_snippet_zero_grad_before_step", "torch_helper_epoch_loss", "mxnet_snippet_loss_outside_record",
          "mxnet_helper_asnumpy_loss"]


def kinds(source, function=None):
    a = analyze(source)
    return {h.name: h.kind for h in a.holes(function)}


# --- holes -------------------------------------------------------------------------------
def test_holes_of_a_forum_snippet():
    src = (
        "for epoch in range(num_epochs):\n"
        "    for i, (images, labels) in enumerate(train_loader):\n"
        "        images = images.to(device)\n"
        "        optimizer.zero_grad()\n"
        "        outputs = model(images)\n"
        "        loss = criterion(outputs, labels)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        scheduler.step()\n"
        "    print(lr)\n"
    )
    assert kinds(src) == {"num_epochs": "int", "train_loader": "loader", "device": "device", "optimizer": "optimizer",
                          "model": "model", "criterion": "loss", "scheduler": "scheduler", "lr": "float"}
    loader = [h for h in analyze(src).free if h.name == "train_loader"][0]
    assert loader.arity == 2  # enumerate(...) yields (i, (images, labels)): a batch is a pair


def test_holes_of_a_function_are_its_parameters_by_use():
    src = (
        "import torch\n"
        "def fit(net, batches, trainer, loss_fn, ctx, x, scale=2.0):\n"
        "    for data, label in batches:\n"
        "        data = data.as_in_context(ctx)\n"
        "        loss = loss_fn(net(data), label)\n"
        "        trainer.step(data.shape[0])\n"
        "    return x.shape\n"
    )
    a = analyze(src)
    assert a.free == [] and "torch" in a.frameworks
    params = {h.name: (h.kind, h.has_default) for h in a.functions[0].params}
    assert params == {"net": ("model", False), "batches": ("loader", False), "trainer": ("trainer", False),
                      "loss_fn": ("loss", False), "ctx": ("ctx", False), "x": ("tensor", False), "scale": (None, True)}
    assert not a.functions[0].called and a.functions[0].loops


def test_missing_imports_are_holes_with_their_import():
    a = analyze("x = torch.ones(2)\nlayer = nn.Linear(2, 2)\nwith autograd.record():\n    y = nd.ones(2)\n")
    got = {h.name: h.import_line for h in a.free}
    assert got == {"torch": "import torch", "nn": "import torch.nn as nn", "autograd": "from torch import autograd",
                   "nd": "from mxnet import nd"}
    assert a.frameworks == ["mxnet", "torch"]


# --- the harness -------------------------------------------------------------------------------
def test_a_whole_program_needs_no_harness():
    src = "import torch\nw = torch.ones(2, requires_grad=True)\ndef f(v):\n    return v * 2\nf(w).sum().backward()\n"
    assert synth.plan(src, [5], {"SL101"}) is None


def test_a_snippet_gets_a_harness_that_compiles_and_keeps_its_lines():
    src = (corpus.FRAGMENTS / "bad_torch_snippet_hidden_carried.py").read_text()
    h = synth.plan(src, [10], {"SL204"})
    assert isinstance(h, synth.Harness) and h.frameworks == ["torch"]
    assert "_TinyRNN" in h.prelude and "torch.nn.GRU" in h.prelude  # SL204: a recurrent stand-in
    assert "optimizer = torch.optim.SGD(model.parameters()" in h.prelude
    assert h.program(src) == src  # a snippet: nothing appended, its lines are its own
    ast.parse(h.prelude)
    ast.parse(h.text(src))
    assert sorted(h.filled) == sorted(["train_loader: loader", "optimizer: optimizer", "model: model", "criterion: loss"])


def test_an_optimizer_over_a_model_the_fragment_builds_is_made_at_its_first_use():
    # The post builds netG/netD itself and leaves the optimizers off-screen: each is made,
    # over the network named for it, when the fragment first uses it.
    src = (corpus.FRAGMENTS / "bad_torch_post_gan_step_between_backwards.py").read_text()
    assert synth.built_models(src) == ["netG", "netD"]
    h = synth.plan(src, [16], {"SL210"})
    assert isinstance(h, synth.Harness)
    assert "optimizerD = _Lazy('netD', lambda _m: torch.optim.SGD(_m.parameters()" in h.prelude
    assert "optimizerG = _Lazy('netG'," in h.prelude
    ast.parse(h.text(src))
    assert synth.built_models("criterion = nn.BCELoss()\nn = Counter()\nnet = Net()\ny = criterion(net(x), n[x])\n") == ["net"]


def test_mode_rules_get_dropout_and_batchnorm_and_functions_get_called():
    src = (corpus.FRAGMENTS / "bad_torch_helper_epoch_loss.py").read_text()
    plain = synth.plan(src, [16], {"SL201"})
    assert "Dropout" not in plain.prelude
    assert plain.epilogue == "_result = train_one_epoch(model=model, loader=loader, optimizer=optimizer, criterion=criterion)\n"
    assert plain.program(src).startswith(src) and plain.program(src).endswith(plain.epilogue)
    mode = synth.plan(src, [16], {"SL207"})
    assert "torch.nn.Dropout(0.5)" in mode.prelude and "torch.nn.BatchNorm1d(_H)" in mode.prelude


def test_mxnet_fragment_gets_gluon_objects():
    src = (corpus.FRAGMENTS / "bad_mxnet_snippet_trainer_in_loop.py").read_text()
    h = synth.plan(src, [7], {"SL211"})
    assert h.frameworks == ["mxnet"]
    assert "net = gluon.nn.HybridSequential()" in h.prelude and "loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()" in h.prelude
    assert "train_data = gluon.data.DataLoader(" in h.prelude


def test_a_hole_its_uses_do_not_explain_is_named():
    why = synth.plan("import torch\nwith torch.no_grad:\n    print(thing.frobnicate())\n", [2], {"SL107"})
    assert isinstance(why, str) and "`thing`" in why and ".frobnicate" in why


def test_an_unfillable_hole_makes_the_verdict_inconclusive_without_running(monkeypatch):
    src = "import torch\nwith torch.no_grad:\n    print(thing.frobnicate())\n"
    lint = lint_source(src, "snippet.py")
    assert [f.code for f in lint.findings] == ["SL107"]
    res = FileResult("snippet.py", None, lint.findings, source=src)

    def no_run(*args, **kwargs):
        raise AssertionError("nothing may run")

    verify([res], "cpu", 30.0, runner=no_run)
    rt = res.findings[0].runtime
    assert rt["verdict"] == "inconclusive" and "cannot fill `thing`" in rt["detail"]


# --- the corpus -------------------------------------------------------------------------------
def test_corpus_is_large_enough_and_twinned():
    bad = sorted(corpus.FRAGMENTS.glob("bad_*.py"))
    good = sorted(corpus.FRAGMENTS.glob("good_*.py"))
    assert len(bad) >= 60  # (issue 23: at least 40, a third of them MXNet; issue 41: 60, some as pasted, no import)
    assert {p.name[4:] for p in bad} == {p.name[5:] for p in good}
    assert 3 * sum(p.name.split("_")[1] == "mxnet" for p in bad) >= len(bad)
    assert {"torch", "mxnet"} <= {p.name.split("_")[1] for p in bad}
    for p in bad:
        text = p.read_text()
        assert corpus.predicted(p) and corpus.predicted(p).startswith("confirmed:"), p.name
        assert corpus.expected(p), p.name
        assert "modelled on" in text.lower(), p.name


@pytest.mark.parametrize("path", sorted(corpus.FRAGMENTS.glob("*.py")), ids=lambda p: p.name)
def test_corpus_findings(path):
    """The linter finds exactly the marked findings; the twins stay silent."""
    found = {(f.start[0], f.code) for f in lint_source(path.read_text(), str(path)).findings}
    assert found == corpus.expected(path)


@pytest.mark.frameworks
@pytest.mark.parametrize("stem", SAMPLE)
def test_sample_confirmed_with_predicted_effect(stem):
    bad, good = corpus.FRAGMENTS / f"bad_{stem}.py", corpus.FRAGMENTS / f"good_{stem}.py"
    fw = stem.split("_")[0]
    if not HAS[fw]:
        pytest.skip(f"needs {fw}")
    row = corpus.verify_one(bad)
    ok, text = corpus.judge(row)
    assert ok, text
    code, verdict, detail, harness_text = row["verdicts"][0]
    assert detail.endswith("(synthesized harness)") or "(synthesized harness)" in detail
    assert bad.read_text() in harness_text  # the verdict keeps exactly what ran
    ok, text = corpus.judge(corpus.verify_one(good))
    assert ok, text
    ok, text = corpus.run_twin(good)  # the twin draws no finding: run it in the harness itself
    assert ok, text
    assert "ran cleanly" in text and "0 backward" not in text


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_verify_stdin_snippet_with_show_harness():
    src = (corpus.FRAGMENTS / "bad_torch_snippet_backward_in_no_grad.py").read_text()
    proc = subprocess.run([sys.executable, "-m", "scopelint", "verify", "--show-harness", "--verify-timeout", "180", "-"],
                          input=src, capture_output=True, text=True, timeout=600, cwd=ROOT)
    out = proc.stdout
    assert "SL101" in out and "confirmed:error" in out and "(synthesized harness)" in out, out + proc.stderr
    assert "synthesized harness (holes:" in out and "model = torch.nn.Sequential(" in out


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_a_harness_that_misses_the_flagged_line_tries_the_next_attempt():
    """A hand-written squared error says nothing of the targets: the first harness (class
    indices) fails at the loss, before the flagged line; the next (float targets shaped
    like the output) reaches it and confirms."""
    path = corpus.FRAGMENTS / "bad_torch_snippet_handwritten_loss_total.py"
    first = synth.plan(path.read_text(), [13], {"SL201"})
    assert "torch.randint" in first.prelude  # (what the first attempt guesses)
    row = corpus.verify_one(path)
    code, verdict, detail, harness_text = row["verdicts"][0]
    assert verdict == "confirmed:graph-retained", detail
    assert "(synthesized harness, attempt 2)" in detail
    assert "_Y = torch.randn(" in harness_text and "attempt 2" in harness_text


def test_only_a_run_that_raised_before_its_flagged_lines_asks_for_another_attempt():
    from scopelint.runtime_check.harness import RunResult
    from scopelint.runtime_check.verify import _missed

    raised = {"status": "exception", "exception": {"type": "RuntimeError", "message": "shape", "line": 10}}
    assert _missed(RunResult("ran", trace=dict(raised, reached=[])), [13])
    assert not _missed(RunResult("ran", trace=dict(raised, reached=[13])), [13])  # it got there: the bug's own error
    assert not _missed(RunResult("ran", trace={"status": "ok", "reached": []}), [13])
    assert not _missed(RunResult("timeout"), [13])
    assert _missed(RunResult("ran", trace=dict(raised, reached=[], harness_failed=True)), [13])


# --- what real forum fragments showed (issue 23, the real-fragments table) ---------------------
def test_a_shadowed_builtin_used_as_data_is_a_hole():
    """`output = model(input)`: forum code rebinds `input`; the builtin is no model input."""
    got = kinds("for i in range(3):\n    output = model(input)\n    loss = criterion(output)\n")
    assert got["input"] == "tensor"
    assert "print" not in kinds("print(model(x))\n")  # a builtin it calls stays the builtin
    assert "input" not in kinds("name = input('name? ')\nprint(model(name))\n")


def test_comprehension_iterables_and_tuple_reshapes_are_read():
    a = analyze("with autograd.record():\n    outputs = [net(X) for X in data]\n")
    data = [h for h in a.free if h.name == "data"][0]
    assert data.kind == "loader" and data.arity == 1
    assert analyze("y = net(x.reshape((-1, 784)))\n").view_features == 784  # MXNet's tuple form
    assert analyze("y = net(x.view(-1, 784))\n").view_features == 784


def test_meters_dtypes_namespaces_sizes_and_one_argument_losses():
    src = (
        "def train(loader, model, criterion, optimizer):\n"
        "    for x in loader:\n"
        "        loss = criterion(model(x.type(dtype)))\n"
        "        losses.update(loss.item(), x.size(0))\n"
        "        w = torch.zeros(input_size, hidden_size)\n"
        "        if args.log_interval and args.lr:\n"
        "            print(losses.avg)\n"
    )
    a = analyze(src)
    got = {h.name: h for h in a.holes("train")}
    assert {n: got[n].kind for n in ("losses", "dtype", "args", "input_size", "hidden_size", "criterion")} == {
        "losses": "meter", "dtype": "dtype", "args": "namespace", "input_size": "int", "hidden_size": "int", "criterion": "loss"}
    assert got["args"].attrs == ["log_interval", "lr"] and got["criterion"].arity == 1
    h = synth.plan(src, [3], {"SL201"})
    assert isinstance(h, synth.Harness), h
    assert "losses = _Meter()" in h.prelude and "dtype = torch.float32" in h.prelude
    assert "args = types.SimpleNamespace(log_interval=1, lr=0.01)" in h.prelude
    assert "criterion = lambda _out: _out.float().pow(2).mean().reshape(1)" in h.prelude
    ast.parse(h.prelude)
    odd = synth.plan("def f(model, loader):\n    for x in loader:\n        model(x).sum().backward()\n        print(args.frobnicate)\n", [3], {"SL202"})
    assert isinstance(odd, str) and "`args.frobnicate`" in odd  # an attribute its name does not explain


def test_cuda_calls_get_a_cpu_stand_in_that_keeps_their_non_leaf():
    src = "x = Variable(torch.ones(10), requires_grad=True).cuda()\n(x * 2).sum().backward()\nprint(x.grad)\n"
    h = synth.plan(src, [1], {"SL302"})
    assert "from torch.autograd import Variable" in h.prelude
    assert "torch.Tensor.cuda = lambda self, *args, **kwargs: self.to(copy=True)" in h.prelude
    assert any(".cuda()" in f for f in h.filled)
    assert "Tensor.cuda" not in synth.plan("y = model(x)\ny.sum().backward()\n", [2], {"SL101"}).prelude


@pytest.mark.frameworks
@pytest.mark.skipif(not HAS["torch"], reason="needs torch")
def test_the_cuda_stand_in_copies_like_cuda():
    import torch

    prelude = "\n".join(["import torch"] + synth.CUDA_STAND_IN) + "\n"
    g = {}
    exec(prelude + "w = torch.ones(3, requires_grad=True).cuda()\nm = torch.nn.Linear(2, 2)\nsame = m.cuda() is m\n", g)
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the stand-in is not installed")
    assert not g["w"].is_leaf and g["w"].grad_fn is not None and g["same"]


def test_completing_imports_of_fragments():
    from scopelint.runtime_check.holes import MXNET_LINT_IMPORTS, TORCH_LINT_IMPORTS, completing_imports

    loop = "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
    assert completing_imports(loop) == TORCH_LINT_IMPORTS  # no framework named: the default
    assert completing_imports("with autograd.record():\n    out = net(x)\n") == MXNET_LINT_IMPORTS
    assert completing_imports("def fit(net, data, trainer):\n    for x in data:\n        trainer.step(1)\n") == MXNET_LINT_IMPORTS
    assert completing_imports("import torch\n" + loop) is None  # imports its framework
    assert completing_imports("total = 0\nfor v in values:\n    total += v\n") is None  # not a fragment
    assert completing_imports("for x in (:\n") is None


def test_verify_lints_an_import_less_fragment_with_its_imports(monkeypatch):
    """A forum post's loop without imports: `check` reads it as PyTorch's loop (issue 41,
    docs/model.md "Fragments"); `verify` lints it with the imports it lacks appended (rows
    unchanged) and verifies what that finds."""
    import argparse

    from scopelint.runtime_check import cli as rcli

    src = ("total_loss = 0\nfor x, y in train_loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
           "    loss.backward()\n    optimizer.step()\n    total_loss += loss\n")
    assert [(f.start[0], f.code) for f in lint_source(src, "post.py").findings] == [(7, "SL201")]
    res = FileResult("post.py", None, [], source=src)
    seen = {}

    def fake_verify(results, device, timeout, jobs, progress=None):
        seen["findings"] = [(f.start[0], f.code) for r in results for f in r.findings]
        for r in results:
            for f in r.findings:
                f.runtime = {"verdict": "confirmed:graph-retained", "detail": "as measured"}

    monkeypatch.setattr("scopelint.runtime_check.verify.verify", fake_verify)
    args = argparse.Namespace(verify=True, verify_timeout=30.0, device="cpu", jobs=1, output_format="json")
    rcli.run(args, [res])
    assert seen["findings"] == [(7, "SL201")]
    assert res.source == src and res.lines[(None, 7)] == "    total_loss += loss"
    rt = res.findings[0].runtime
    assert "linted with the imports it lacks: import torch" in rt["detail"] and rt["linted_with"][0] == "import torch"
    quiet = FileResult("ok.py", None, [], source=src.replace("+= loss", "+= loss.item()"))
    rcli.run(args, [quiet])
    assert quiet.findings == []
