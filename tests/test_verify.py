"""The runtime verifier: counterfactual fixes, the harness, the oracles, the CLI.

Fixture tests glob the fixtures of the rules in VERIFIED: each bad fixture's own findings must
get the verdict RULES.md predicts ("Runtime verdicts"); a fixture may state another
with a `# verdict: ...` header line. They run the programs, so they need torch/mxnet.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fixtures_util import FIXTURES, expected_verdict, frameworks_of
from scopelint.engine import lint_source
from scopelint.fix import apply_edits
from scopelint.runner import FileResult
from scopelint.runtime_check import harness, oracle
from scopelint.runtime_check.verify import verify
from scopelint.rules import ALL_RULES

HAS = {fw: importlib.util.find_spec(fw) is not None for fw in ("torch", "mxnet")}
TIMEOUT = 180.0  # per run; generous because test machines are shared

# The rules that supply a counterfactual (all SL1xx; of the rest, those listed here).
VERIFIED = (
    "SL1*", "SL201", "SL202", "SL203", "SL204", "SL205", "SL206", "SL207", "SL208", "SL209", "SL210", "SL211",
    "SL301", "SL302", "SL303", "SL304",
)
BAD = sorted(p for pattern in VERIFIED for p in FIXTURES.glob(f"{pattern}/bad_*.py"))
GOOD = sorted(p for pattern in VERIFIED for p in FIXTURES.glob(f"{pattern}/good_*.py"))


def _ids(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def _needs(fws):
    missing = [fw for fw in sorted(fws) if not HAS.get(fw)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")


def _result(path: Path, source: str = None) -> FileResult:
    source = path.read_text(encoding="utf-8") if source is None else source
    lint = lint_source(source, str(path))
    assert not lint.errors, lint.errors
    return FileResult(str(path), str(path), lint.findings, source=source)


# --- fixtures, run --------------------------------------------------------------------------
@pytest.mark.frameworks
@pytest.mark.parametrize("path", BAD, ids=_ids)
def test_bad_fixture_verdict(path):
    _needs(frameworks_of(path))
    res = _result(path)
    own = [f for f in res.findings if f.code == path.parent.name]
    if not own:
        pytest.skip(f"the linter reports no {path.parent.name} here (test_fixtures covers that)")
    verify([res], "cpu", TIMEOUT, jobs=2)
    want = expected_verdict(path)
    for f in own:
        assert f.runtime is not None and set(f.runtime) == {"verdict", "detail", "device"}
        assert f.runtime["device"] == "cpu"
        assert f.runtime["verdict"] == want, f"line {f.start[0]}: {f.runtime['verdict']}: {f.runtime['detail']}"
        assert f.runtime["detail"]
        if want == oracle.REFUTED:
            assert "harmless here" in f.runtime["detail"]
    for f in res.findings:  # other rules' findings still get a verdict
        assert f.runtime is not None and f.runtime["verdict"] in oracle.VERDICTS


@pytest.mark.parametrize("path", GOOD, ids=_ids)
def test_good_fixture_has_nothing_to_verify(path):
    res = _result(path)
    assert [(f.start[0], f.code) for f in res.findings] == []
    calls = []
    verify([res], "cpu", TIMEOUT, jobs=1, runner=lambda *a: calls.append(a))
    assert calls == []


# --- GPU placement mapped to the CPU ---------------------------------------------------------
MX_GPU = """\
import mxnet as mx
from mxnet import autograd, nd

ctx = mx.gpu(0)
x = nd.array([1.0, 2.0], ctx=ctx)
x.attach_grad()
with autograd.record():
    y = x * x
with autograd.pause():
    z = y[0] * x[1]
z.backward()
print(x.grad)
"""

TORCH_CUDA = """\
import torch

model = torch.nn.Linear(3, 1).cuda()
x = torch.randn(4, 3, device="cuda")
with torch.no_grad():
    loss = model(x).pow(2).mean()
loss.backward()
print(model.weight.grad)
"""


def _write(tmp_path, name, text) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


@pytest.mark.frameworks
@pytest.mark.parametrize("name,text,fw,mapped", [
    ("mx_gpu.py", MX_GPU, "mxnet", "mx.gpu(0) -> mx.cpu()"),
    ("torch_cuda.py", TORCH_CUDA, "torch", "-> CPU"),
], ids=["mxnet-gpu", "torch-cuda"])
def test_gpu_placement_runs_on_cpu(tmp_path, name, text, fw, mapped):
    _needs({fw})
    res = _result(_write(tmp_path, name, text))
    sl101 = [f for f in res.findings if f.code == "SL101"]
    assert sl101
    verify([res], "cpu", TIMEOUT, jobs=2)
    rt = sl101[0].runtime
    assert rt["verdict"] == oracle.CONFIRMED_ERROR, rt
    assert "no GPU here" in rt["detail"] and mapped in rt["detail"]


def test_cuda_device_without_gpu_is_inconclusive(tmp_path):
    if harness.cuda_present():
        pytest.skip("a GPU is present")
    res = _result(_write(tmp_path, "p.py", TORCH_CUDA))
    calls = []
    verify([res], "cuda", TIMEOUT, jobs=1, runner=lambda *a: calls.append(a))
    assert calls == []
    assert all(f.runtime == {"verdict": "inconclusive", "detail": "no CUDA device", "device": "cuda"} for f in res.findings)


def test_device_all_reports_both_verdicts_even_when_they_agree():
    from scopelint.runtime_check.verify import _combine

    same = _combine([("cpu", oracle.CONFIRMED_ERROR, "RuntimeError", 1.0), ("cuda", oracle.CONFIRMED_ERROR, "RuntimeError", 1.0)])
    assert same["verdict"] == oracle.CONFIRMED_ERROR and same["device"] == "cpu"
    assert "cuda: confirmed:error (RuntimeError)" in same["detail"]
    differ = _combine([("cpu", oracle.INCONCLUSIVE, "timeout", 1.0), ("cuda", oracle.CONFIRMED_GRADS, "grads", 1.0)])
    assert differ["device"] == "cuda" and "cpu: inconclusive (timeout)" in differ["detail"]


@pytest.mark.parametrize("path", [p for p in BAD if p.parent.name in ("SL101", "SL201", "SL203")
                                  and "mxnet" not in p.read_text(encoding="utf-8")][:6], ids=_ids)
def test_cuda_runs_on_the_gpu_and_agrees_with_cpu(path):
    """--device all on a machine with a GPU: the same verdict on both devices, each
    reported. Skipped (not faked) where there is no CUDA device."""
    if not HAS.get("torch") or not harness.cuda_present():
        pytest.skip("needs torch and a CUDA device")
    res = _result(path)
    verify([res], "all", TIMEOUT, jobs=1)
    own = [f for f in res.findings if f.code == path.parent.name]
    assert own
    for f in own:
        rt = f.runtime
        other = "cuda" if rt["device"] == "cpu" else "cpu"
        assert rt["verdict"] == expected_verdict(path), rt
        assert f"{other}: {rt['verdict']} (" in rt["detail"], rt  # both devices, one verdict


# --- programs that misbehave ------------------------------------------------------------------
# SL107 makes the original fail at once; the fixed program then misbehaves.
MISBEHAVING = {
    "loops": "while True:\n        pass",
    "allocates": "blocks = []\n    while True:\n        blocks.append(bytearray(64 << 20))",
    "sys_exit": "import sys\n    sys.exit(3)",
    "os_exit": "import os\n    os._exit(4)",
}
WHY = {
    "loops": "did not finish within",
    "allocates": "ran out of memory",
    "sys_exit": "stops itself with sys.exit(3)",
    "os_exit": "stops itself with os._exit(4)",
}


def _misbehaving(kind: str) -> str:
    return f"import torch\n\nwith torch.no_grad:\n    {MISBEHAVING[kind]}\n"


@pytest.mark.frameworks
def test_misbehaving_programs_are_inconclusive_and_the_run_goes_on(tmp_path):
    _needs({"torch"})
    timeout = 45.0
    results = []
    for kind in MISBEHAVING:
        res = _result(_write(tmp_path, f"{kind}.py", _misbehaving(kind)))
        assert [f.code for f in res.findings] == ["SL107"], res.findings
        results.append(res)
    ok = FIXTURES / "SL107" / "bad_torch_no_grad_evaluate.py"
    if ok.exists():
        results.append(_result(ok))
    start = time.monotonic()
    verify(results, "cpu", timeout, jobs=2)
    elapsed = time.monotonic() - start
    for kind, res in zip(MISBEHAVING, results):
        rt = res.findings[0].runtime
        assert rt["verdict"] == oracle.INCONCLUSIVE, (kind, rt)
        assert WHY[kind] in rt["detail"], (kind, rt)
        assert "as written it raises TypeError" in rt["detail"]
    if len(results) > len(MISBEHAVING):
        assert all(f.runtime["verdict"] == oracle.CONFIRMED_ERROR for f in results[-1].findings if f.code == "SL107")
    # The looping run is killed at the timeout; nothing hangs.
    assert elapsed < 4 * timeout


def test_fixed_variants_skipped_when_the_original_is_not_self_contained(tmp_path):
    source = "import torch\nimport helpers\n\nwith torch.no_grad:\n    pass\nwith torch.enable_grad:\n    pass\n"
    res = _result(_write(tmp_path, "p.py", source))
    assert len(res.findings) == 2
    calls = []

    def runner(text, filename, fws, device, timeout):
        calls.append(text)
        exc = {"type": "ModuleNotFoundError", "message": "No module named 'helpers'", "line": 2}
        return harness.RunResult("ran", trace=_trace(status="exception", exception=exc))

    verify([res], "cpu", 10, jobs=2, runner=runner)
    assert calls == [source]  # only the original ran
    for f in res.findings:
        assert f.runtime["verdict"] == oracle.INCONCLUSIVE
        assert f.runtime["detail"] == "not self-contained: ModuleNotFoundError: No module named 'helpers' at line 2"


def test_not_self_contained_is_inconclusive():
    a = harness.RunResult("ran", trace=_trace(status="exception", exception={"type": "ModuleNotFoundError", "message": "No module named 'helpers'", "line": 3}))
    b = harness.RunResult("ran", trace=_trace(status="exception", exception={"type": "ModuleNotFoundError", "message": "No module named 'helpers'", "line": 3}))
    verdict, detail = oracle.compare(a, b)
    assert verdict == oracle.INCONCLUSIVE and detail.startswith("not self-contained") and "helpers" in detail


# --- oneDNN refusing an operation (some processors) -------------------------------------------
ONEDNN_MESSAGE = "could not create a primitive descriptor for the LSTM forward propagation primitive."
NOT_LEAF = {"type": "RuntimeError", "message": "element 0 of tensors does not require grad", "line": 4, "onednn": False}


def test_onednn_errors_are_recognised_narrowly():
    from scopelint.runtime_check import _child

    assert _child.is_onednn_error("RuntimeError", _child.FORCED_ONEDNN_MESSAGE)
    assert _child.is_onednn_error("RuntimeError", "could not execute a primitive")
    assert _child.is_onednn_error("MXNetError", "[12:00:00] src/operator/nn/mkldnn/mkldnn_base.cc: oneDNN failed: DNNL_VERBOSE=1")
    for name, text in (
        ("RuntimeError", "Trying to backward through the graph a second time"),
        ("RuntimeError", "element 0 of tensors does not require grad and does not have a grad_fn"),
        ("RuntimeError", "could not create a tensor from the list"),  # not oneDNN's primitive texts
        ("RuntimeError", "expected to_mkldnn input to be a float tensor"),
        ("ValueError", ONEDNN_MESSAGE),  # not a framework error
    ):
        assert not _child.is_onednn_error(name, text), text
    refused = {"type": "RuntimeError", "message": ONEDNN_MESSAGE, "line": 9, "onednn": True}
    assert harness.onednn_failure(harness.RunResult("ran", trace=_trace(status="exception", exception=refused))) == f"RuntimeError: {ONEDNN_MESSAGE}"
    assert harness.onednn_failure(harness.RunResult("ran", trace=_trace(status="exception", exception=NOT_LEAF))) is None
    off = harness.RunResult("ran", trace=_trace(status="exception", exception=refused), onednn=False)
    assert harness.onednn_failure(off) is None  # already off: nothing more to try
    assert harness.child_env("cpu", onednn=False)["MXNET_MKLDNN_ENABLED"] == "0"
    assert harness.child_env("cpu").get("MXNET_MKLDNN_ENABLED") == os.environ.get("MXNET_MKLDNN_ENABLED")  # on: as the user has it


TWO_FINDINGS = "import torch\n\nwith torch.no_grad:\n    pass\nwith torch.enable_grad:\n    pass\n"


def _fake_runner(calls, refuses):
    """A runner that records (variant, onednn) and answers as oneDNN would when
    ``refuses(variant, onednn)``; otherwise the original raises and the fixes run."""

    def runner(text, filename, fws, device, timeout, onednn=True, **kw):
        variant = "original" if text == TWO_FINDINGS else "fixed"
        calls.append((variant, onednn))
        if refuses(variant, onednn):
            exc = {"type": "RuntimeError", "message": ONEDNN_MESSAGE, "line": 3, "onednn": True}
            return harness.RunResult("ran", trace=_trace(status="exception", exception=exc), onednn=onednn)
        if variant == "original":
            return harness.RunResult("ran", trace=_trace(status="exception", exception=NOT_LEAF), onednn=onednn)
        return harness.RunResult("ran", trace=_trace(), onednn=onednn)

    return runner


def _verified(tmp_path, runner):
    res = _result(_write(tmp_path, "p.py", TWO_FINDINGS))
    assert len(res.findings) == 2
    verify([res], "cpu", 10, jobs=2, runner=runner)
    return res.findings


def test_onednn_refusing_the_original_reruns_every_variant_with_onednn_off(tmp_path):
    calls = []
    findings = _verified(tmp_path, _fake_runner(calls, lambda variant, onednn: onednn))
    assert calls[:2] == [("original", True), ("original", False)]
    assert sorted(calls[2:]) == [("fixed", False), ("fixed", False)]  # no fixed variant ran with oneDNN on
    for f in findings:
        assert f.runtime["verdict"] == oracle.CONFIRMED_ERROR, f.runtime
        assert f.runtime["detail"].startswith("raises RuntimeError: element 0 of tensors does not require grad at line 4")
        assert f.runtime["detail"].endswith(
            f" [oneDNN off for both variants (torch.backends.mkldnn.enabled = False): with it on, the program as written raised RuntimeError: {ONEDNN_MESSAGE}]"
        )


def test_onednn_refusing_a_fixed_variant_reruns_the_original_too(tmp_path):
    # With oneDNN on the original runs to completion and a fix is refused; with it off
    # the original raises. A verdict that compared the oneDNN-on original with a
    # oneDNN-off fix would not be confirmed:error.
    def runner(text, filename, fws, device, timeout, onednn=True, **kw):
        calls.append(("original" if text == TWO_FINDINGS else "fixed", onednn))
        if text == TWO_FINDINGS and onednn:
            return harness.RunResult("ran", trace=_trace())
        return inner(text, filename, fws, device, timeout, onednn)

    calls = []
    inner = _fake_runner([], lambda variant, onednn: variant == "fixed" and onednn)
    findings = _verified(tmp_path, runner)
    assert calls[0] == ("original", True)
    assert calls.count(("original", False)) == 1 and calls.count(("original", True)) == 1
    after = calls[calls.index(("original", False)):]
    assert sorted(after[1:]) == [("fixed", False), ("fixed", False)]
    for f in findings:
        assert f.runtime["verdict"] == oracle.CONFIRMED_ERROR, f.runtime
        assert "with it on, a fixed variant raised RuntimeError: could not create a primitive descriptor" in f.runtime["detail"]


def test_onednn_refusing_with_onednn_off_too_falls_back_once(tmp_path):
    calls = []
    findings = _verified(tmp_path, _fake_runner(calls, lambda variant, onednn: True))
    assert calls[:2] == [("original", True), ("original", False)]
    assert sorted(calls[2:]) == [("fixed", False), ("fixed", False)]
    for f in findings:
        assert f.runtime["verdict"] == oracle.INCONCLUSIVE
        assert f.runtime["detail"].startswith(f"both variants fail the same way: RuntimeError: {ONEDNN_MESSAGE}")
        assert "[oneDNN off for both variants" in f.runtime["detail"]


@pytest.mark.frameworks
def test_forced_onednn_refusal_gives_the_verdict_of_a_normal_run(monkeypatch):
    """The internal hook makes torch's LSTM raise oneDNN's error while oneDNN is on, so
    the fallback runs on every machine; its verdict is the one a normal run gives."""
    from scopelint.runtime_check._child import FORCE_ONEDNN_ENV

    _needs({"torch"})
    path = FIXTURES / "SL204" / "bad_lstm_tuple_state.py"  # a float32 LSTM, which oneDNN runs on most CPUs
    normal = _result(path)
    verify([normal], "cpu", TIMEOUT, jobs=2)
    monkeypatch.setenv(FORCE_ONEDNN_ENV, "1")
    forced = _result(path)
    verify([forced], "cpu", TIMEOUT, jobs=2)
    note = re.compile(r" \[oneDNN off for both variants \(torch\.backends\.mkldnn\.enabled = False\): with it on, the program as written raised RuntimeError: [^\]]*\]")
    assert [f.code for f in forced.findings] == [f.code for f in normal.findings] == ["SL204"]
    a, b = normal.findings[0].runtime, forced.findings[0].runtime
    assert b["verdict"] == a["verdict"] == expected_verdict(path), (a, b)
    assert note.search(b["detail"]) and ONEDNN_MESSAGE in b["detail"], b
    assert note.sub("", b["detail"]) == note.sub("", a["detail"])


# --- oracles on synthetic traces (no frameworks) --------------------------------------------------
def _trace(**kw):
    t = {
        "status": "ok", "exception": None, "exit": None, "frameworks": ["torch"], "missing": [], "device_map": [], "no_cuda": False,
        "backward": [], "grad": [], "steps": [], "outputs": [],
        "counts": {"backward": 0, "grad": 0, "steps": 0, "outputs": 0, "outputs_recorded": 0},
        "graph": {"tensors_with_grad_fn": 0, "numel": 0}, "rss_start_kb": 100_000, "rss_peak_kb": 110_000,
    }
    t.update(kw)
    return t


def _ok(stdout="", **kw):
    return harness.RunResult("ran", trace=_trace(**kw), stdout=stdout)


def test_oracle_order_and_texts():
    err = _trace(status="exception", exception={"type": "RuntimeError", "message": "element 0 of tensors does not require grad", "line": 9})
    v, d = oracle.compare(harness.RunResult("ran", trace=err), _ok(), "fix it")
    assert v == oracle.CONFIRMED_ERROR and "RuntimeError" in d and "line 9" in d
    v, d = oracle.compare(harness.RunResult("ran", trace=err), harness.RunResult("ran", trace=err))
    assert v == oracle.INCONCLUSIVE and "both variants fail the same way" in d

    g = {"shape": [3], "sum": 1.0, "abs": 2.0}
    ev = lambda s: [{"api": "Tensor.backward", "line": 4, "grads": [s]}]  # noqa: E731
    counts = {"backward": 1, "grad": 0, "steps": 0, "outputs": 0, "outputs_recorded": 0}
    v, d = oracle.compare(_ok(backward=ev(g), counts=counts), _ok(backward=ev(dict(g, sum=1.5)), counts=counts))
    assert v == oracle.CONFIRMED_GRADS and "line 4" in d
    v, d = oracle.compare(_ok(backward=ev(g), counts=counts), _ok(backward=ev(dict(g, sum=1.0 + 1e-9)), counts=counts))
    assert v == oracle.REFUTED and "harmless here" in d

    out = lambda s, rec: [{"what": "Linear", "line": 7, "recorded": rec, "values": [s]}]  # noqa: E731
    c1 = dict(counts, backward=0, outputs=1, outputs_recorded=1)
    c0 = dict(counts, backward=0, outputs=1, outputs_recorded=0)
    v, d = oracle.compare(_ok(outputs=out(g, True), counts=c1), _ok(outputs=out(dict(g, abs=3.0), False), counts=c0))
    assert v == oracle.CONFIRMED_OUTPUTS
    v, d = oracle.compare(
        _ok("tensor([1.], grad_fn=<AddBackward0>)\nrequires grad: True\n", outputs=out(g, True), counts=c1),
        _ok("tensor([1.])\nrequires grad: False\n", outputs=out(g, False), counts=c0),
    )
    assert v == oracle.CONFIRMED_GRAPH and "1 of 1 forward passes recorded a graph" in d
    v, d = oracle.compare(_ok("loss 0.5000001\n"), _ok("loss 0.5\n"))
    assert v == oracle.REFUTED
    v, d = oracle.compare(_ok("acc 0.5\n"), _ok("acc 0.75\n"))
    assert v == oracle.CONFIRMED_OUTPUTS and "printed line 1" in d


def test_oracle_failures():
    ok = _ok()
    assert oracle.compare(harness.RunResult("timeout", timeout=5), ok)[1].startswith("the program as written did not finish within 5s")
    v, d = oracle.compare(ok, harness.RunResult("crashed", returncode=-9))
    assert v == oracle.INCONCLUSIVE and "SIGKILL" in d
    v, d = oracle.compare(ok, _ok(missing=["mxnet"]))
    assert v == oracle.INCONCLUSIVE and "mxnet is not installed" in d
    v, d = oracle.compare(ok, _ok(no_cuda=True))
    assert (v, d) == (oracle.INCONCLUSIVE, "no CUDA device")
    v, d = oracle.compare(ok, _ok(status="exit", exit={"how": "sys.exit", "code": 0, "line": 3}))
    assert v == oracle.REFUTED  # a clean exit(0) is a normal end
    oom = _ok(status="memory", exception={"type": "MemoryError", "message": "", "line": 8})
    assert not oracle.original_decides(oom)
    v, d = oracle.compare(oom, ok)
    assert v == oracle.CONFIRMED_GRAPH and "ran out of memory" in d and "with the fix it completes" in d


# --- counterfactuals (no frameworks) ----------------------------------------------------------
def _fixed(source: str, code: str) -> str:
    findings = [f for f in lint_source(textwrap.dedent(source), "x.py").findings if f.code == code]
    assert findings and findings[0].fix is not None, findings
    text, n = apply_edits(textwrap.dedent(source), findings[:1], True)
    assert n == 1
    compile(text, "x.py", "exec")
    assert not [f for f in lint_source(text, "x.py").findings if f.code == code and f.start == findings[0].start]
    return text


def test_counterfactual_sl101_flips_the_scope():
    text = _fixed("""
        import torch as T
        m = T.nn.Linear(2, 1)
        with T.no_grad():
            loss = m(T.ones(1, 2)).sum()
        loss.backward()
    """, "SL101")
    assert "with T.enable_grad():" in text


def test_counterfactual_sl101_mxnet_outside_record_wraps():
    text = _fixed("""
        from mxnet import autograd, nd
        x = nd.ones(2)
        x.attach_grad()
        y = x * 2
        y.backward()
    """, "SL101")
    assert "with autograd.record(train_mode=False):\n    y = x * 2\n" in text


def test_counterfactual_sl102_moves_backward_out():
    text = _fixed("""
        import torch
        w = torch.ones(2, requires_grad=True)
        loss = (w * 2).sum()
        with torch.no_grad():
            loss.backward()
            w -= 0.1 * w.grad
    """, "SL102")
    assert "\nloss.backward()\nwith torch.no_grad():\n    w -= 0.1 * w.grad\n" in text


def test_counterfactual_sl105_drops_decorator_and_sl106_scopes():
    text = _fixed("""
        import torch
        model = torch.nn.Linear(3, 1)

        @torch.no_grad()
        def train_step(x):
            loss = model(x).sum()
            loss.backward()
    """, "SL105")
    assert "@torch.no_grad()" not in text and "def train_step(x):" in text
    text = _fixed("""
        import torch
        model = torch.nn.Linear(3, 1)

        def evaluate(x):
            model.eval()
            torch.set_grad_enabled(False)  # leak
            return model(x).mean().item()
    """, "SL106")
    assert "    with torch.set_grad_enabled(False):  # leak\n        return model(x).mean().item()\n" in text


def test_counterfactual_adds_import_when_no_spelling_exists():
    text = _fixed("""
        from torch import nn
        model = nn.Linear(3, 1)

        def predict(x):
            model.eval()
            return model(x)
    """, "SL103")
    assert "import torch\n" in text and "with torch.no_grad():\n        return model(x)" in text


def test_counterfactual_sl202_zeroes_the_stepped_optimizer():
    text = _fixed("""
        import torch
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        for step in range(3):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    """, "SL202")
    assert "    opt.zero_grad()\n    scaler.scale(loss).backward()\n" in text


def test_counterfactual_sl202_mxnet_zeroes_the_trainers_parameters():
    # A Gluon Trainer has no zero_grad() in MXNet 1.x; the parameters it was given have.
    text = _fixed("""
        from mxnet import autograd, gluon, nd
        net = gluon.nn.Dense(1, in_units=2)
        net.initialize()
        net.collect_params().setattr("grad_req", "add")
        trainer = gluon.Trainer(net.collect_params(), "sgd")
        for i in range(3):
            with autograd.record():
                loss = net(nd.ones((1, 2))).sum()
            loss.backward()
            trainer.step(1)
    """, "SL202")
    assert "    net.collect_params().zero_grad()\n    loss.backward()\n" in text


def test_counterfactual_sl206_undoes_the_round_trip():
    text = _fixed("""
        import numpy as np
        from mxnet import autograd, nd
        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
            z = nd.array(np.exp(y.asnumpy()) + 1) * x
        z.backward()
    """, "SL206")
    assert "    z = (nd.exp(y) + 1) * x\n" in text
    text = _fixed("""
        import torch
        model = torch.nn.Linear(3, 2)
        out = model(torch.randn(4, 3))
        parts = [out[:, 0].mean(), out[:, 1].mean()]
        loss = torch.tensor(parts).sum()
        loss.backward()
    """, "SL206")
    assert "loss = torch.stack(parts).sum()\n" in text
    text = _fixed("""
        from mxnet import autograd, nd
        x = nd.array([1.0, 2.0])
        x.attach_grad()
        with autograd.record():
            a, b = (x * x).sum(), (x * 3).sum()
            z = nd.array([a.asscalar(), b.asscalar()]) * x
        z.backward()
    """, "SL206")
    assert "    z = nd.concat(*[a, b], dim=0) * x\n" in text  # MXNet sums have shape (1,)


HUBER = """
    import numpy as np
    import torch

    def huber_np(pred, target):
        err = np.abs(pred - target)
        return np.where(err < 1.0, 0.5 * err ** 2, err - 0.5).mean()

    model = torch.nn.Linear(3, 1)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    loss = torch.from_numpy(np.asarray(huber_np(model(x).detach().numpy(), y.numpy())))
    loss.backward()
"""


def test_counterfactual_sl206_ports_a_numpy_helper_called_once():
    text = _fixed(HUBER, "SL206")
    assert "    err = torch.abs(pred - target)\n    return torch.where(err < 1.0," in text
    assert "loss = huber_np(model(x), y)\n" in text


@pytest.mark.parametrize("change", [
    ("loss.backward()\n", "loss.backward()\nprint(huber_np(np.ones(2), np.zeros(2)))\n"),  # used elsewhere too
    ("np.abs(pred - target)", "np.dot(pred - target, 1.0)"),  # no framework twin
    ("loss = torch.from_numpy(np.asarray(huber_np(model(x).detach().numpy(), y.numpy())))",
     "losses = [model(x).sum().item() for _ in range(2)]\nloss = torch.tensor(losses, requires_grad=True).mean()"),  # not the helper: items taken out elsewhere
], ids=["called-twice", "no-twin", "list-of-items"])
def test_counterfactual_sl206_none_without_a_minimal_edit(change):
    source = textwrap.dedent(HUBER).replace(*change)
    assert source != textwrap.dedent(HUBER)
    found = [f for f in lint_source(source, "x.py").findings if f.code == "SL206"]
    assert found and all(f.fix is None for f in found)


def test_counterfactual_sl302_requires_grad_last():
    text = _fixed("""
        import torch
        w = torch.randn(3, requires_grad=True) * 0.01
        loss = (w * 2).sum()
        loss.backward()
        print(w.grad)
    """, "SL302")
    assert "w = (torch.randn(3) * 0.01).requires_grad_()\n" in text
    text = _fixed("""
        import torch
        x = torch.randn(5, requires_grad=True, dtype=torch.float32).double()
        x.sum().backward()
        print(x.grad)
    """, "SL302")
    assert "x = torch.randn(5, dtype=torch.float32).double().requires_grad_()\n" in text


def test_counterfactual_sl303_moves_attach_before_the_first_use():
    text = _fixed("""
        from mxnet import autograd, nd
        x = nd.array([1.0, 2.0])
        with autograd.record():
            y = x * x
            z = y * x
        # too late
        x.attach_grad()
        z.backward()
    """, "SL303")
    assert text.endswith("with autograd.record():\n    x.attach_grad()\n    y = x * x\n    z = y * x\n# too late\nz.backward()\n")


def _no_sl207(text: str) -> bool:
    return not [f for f in lint_source(text, "x.py").findings if f.code == "SL207"]


def test_counterfactual_sl207_train_goes_after_the_evaluation():
    # The eval() in the epoch loop: train() at the top of the epoch (before the training
    # loop), never right after eval() (that would evaluate in train mode).
    source = (FIXTURES / "SL207" / "bad_torch_inline_eval_in_epoch.py").read_text(encoding="utf-8")
    text = _fixed(source, "SL207")
    lines = [line.strip() for line in text.splitlines()]
    ev = lines.index("model.eval()  # expect: SL207")
    assert lines[ev + 1] == "with T.no_grad():" and "model.train()" not in lines[ev:]
    top = lines.index("for epoch in range(3):") + 1
    assert lines[top] == "model.train()" and lines[top + 1].startswith("for step, (x, y) in enumerate(")
    assert _no_sl207(text) and apply_edits(text, lint_source(text, "x.py").findings, True)[1] == 0  # a second fix: no-op
    # An evaluation every other step inside the training loop: train() before that loop's
    # training forward (the next step), not at the top of the epoch.
    text = _fixed("""
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.5), torch.nn.Linear(3, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        val_loader = [torch.randn(4, 3)]
        for epoch in range(2):
            for step in range(4):
                opt.zero_grad()
                model(torch.randn(4, 3)).pow(2).mean().backward()
                opt.step()
                if step % 2 == 0:
                    model.eval()
                    with torch.no_grad():
                        for x in val_loader:
                            print(model(x).mean().item())
    """, "SL207")
    assert "        opt.zero_grad()\n        model.train()\n        model(torch.randn(4, 3))" in text, text
    assert "            model.eval()\n            with torch.no_grad():" in text and _no_sl207(text)
    # An evaluation helper that leaves the model in eval mode: train() before the next
    # training forward in the loop that calls it; the helper still evaluates in eval mode.
    rule = ALL_RULES["SL207"]
    text = _fixed(rule.bad, "SL207")
    assert "    model.eval()\n    with torch.no_grad():" in text
    assert "    opt.zero_grad()\n    model.train()\n    model(torch.randn(4, 3)).pow(2).mean().backward()" in text, text
    assert _no_sl207(text)


# --- CLI and imports ----------------------------------------------------------------------------
def test_importing_the_verifier_imports_no_framework():
    code = "import sys, scopelint.cli, scopelint.runtime_check.verify, scopelint.runtime_check.cli; print('torch' in sys.modules or 'mxnet' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


@pytest.mark.frameworks
def test_cli_check_verify_json_and_verify_text(tmp_path, capsys):
    _needs({"torch"})
    from scopelint.cli import main

    prog = _write(tmp_path, "p.py", TORCH_CUDA.replace(".cuda()", "").replace(', device="cuda"', ""))
    rc = main(["check", "--verify", "--output-format", "json", "--verify-timeout", str(TIMEOUT), str(prog)])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1
    sl101 = [d for d in data if d["code"] == "SL101"]
    assert sl101 and sl101[0]["runtime"]["verdict"] == "confirmed:error" and sl101[0]["runtime"]["device"] == "cpu"
    assert "verified" not in sl101[0]["message"]

    rc = main(["verify", "--verify-timeout", str(TIMEOUT), str(prog)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "= verified: confirmed:error on cpu: raises RuntimeError" in out
    rc = main(["check", str(prog)])  # no --verify: nothing runs
    assert "verified" not in capsys.readouterr().out


# --- evidence located: random streams realigned, gradients matched by name ---------------------
SL207_LOOP = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)]
val_loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]

for epoch in range(3):
    for x, y in train_loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    with torch.no_grad():
        total = 0.0
        for x, y in val_loader:
            total += nn.functional.mse_loss(model(x), y).item()
    print(f"epoch {epoch}: val {total / len(val_loader):.4f}")
"""


@pytest.mark.frameworks
def test_rng_drift_is_not_read_as_a_later_gradient_difference(tmp_path):
    # The evaluation (Dropout active, no eval()) draws random numbers the fixed program
    # does not: unrealigned, every later dropout mask differs and the first backward of
    # epoch 1 "differs". Realigned around the flagged statement, the evidence is the
    # evaluation's own outputs, at its line.
    _needs({"torch"})
    res = _result(_write(tmp_path, "loop.py", SL207_LOOP))
    [f] = [f for f in res.findings if f.code == "SL207"]
    assert f.start[0] == 19
    verify([res], "cpu", TIMEOUT, jobs=2)
    assert f.runtime["verdict"] == oracle.CONFIRMED_OUTPUTS, f.runtime
    assert "(line 19)" in f.runtime["detail"] and "max |Δ|" in f.runtime["detail"], f.runtime
    assert "backward" not in f.runtime["detail"] and "step" not in f.runtime["detail"]


def test_realign_regions_follow_the_fix():
    from scopelint.runtime_check import verify as v

    source = SL207_LOOP
    res = lint_source(source, "loop.py")
    [f] = [f for f in res.findings if f.code == "SL207"]
    fixed, why = v._counterfactual(source, f)
    assert why is None
    ops = v._opcodes(source, fixed)
    region = v._region(ast.parse(source), f, ops)
    assert region == (19, 19)  # the flagged statement (the eval()/train() put around its loop add no line to it)
    image = v._image(region, ops)
    lines = fixed.splitlines()
    assert lines[image[0] - 1].strip().startswith("total +=") and lines[image[1] - 1].strip() == "model.train()"
    assert v._line_map(ops)[image[0]] == 19
    # a fix that rewrites the statement's neighbours grows the region over them; lines
    # inserted next to it belong to its image
    ops = v._opcodes("a\nb\nc\nd\n", "a\nB\nc\nx\ny\nd\n")
    assert v._image((3, 3), ops) == (3, 5) and v._image((2, 2), ops) == (2, 2)


def test_gradients_are_matched_by_name_not_position():
    g = lambda s: {"shape": [2], "sum": s, "abs": abs(s), "head": [s / 2, s / 2]}  # noqa: E731
    counts = {"backward": 1, "grad": 0, "steps": 0, "outputs": 0, "outputs_recorded": 0}
    a = [{"api": "Tensor.backward", "line": 7, "seq": 0, "grads": [g(1.0), g(2.0)], "names": ["model.0.weight", "model.0.bias"]}]
    b = [{"api": "Tensor.backward", "line": 7, "seq": 0, "grads": [g(2.0), g(1.0)], "names": ["model.0.bias", "model.0.weight"]}]
    v, d = oracle.compare(_ok(backward=a, counts=counts), _ok(backward=b, counts=counts))
    assert v == oracle.REFUTED, d  # the same gradients, seen in another graph order
    b[0]["grads"][1] = g(1.62)
    v, d = oracle.compare(_ok(backward=a, counts=counts), _ok(backward=b, counts=counts))
    assert v == oracle.CONFIRMED_GRADS and d.startswith("gradients differ at backward call #1 (line 7): ")
    assert "`model.0.weight`: max |Δ| 0.31" in d and "1 of 2 differ" in d, d


def test_the_first_difference_in_program_order_decides():
    s = lambda x: {"shape": [1], "sum": x, "abs": abs(x), "head": [x]}  # noqa: E731
    counts = {"backward": 1, "grad": 0, "steps": 0, "outputs": 1, "outputs_recorded": 0}
    out_a = [{"what": "Linear", "line": 5, "seq": 0, "recorded": False, "values": [s(1.0)]}]
    out_b = [{"what": "Linear", "line": 5, "seq": 0, "recorded": False, "values": [s(2.0)]}]
    bw_a = [{"api": "Tensor.backward", "line": 9, "seq": 1, "grads": [s(1.0)], "names": ["w"]}]
    bw_b = [{"api": "Tensor.backward", "line": 9, "seq": 1, "grads": [s(3.0)], "names": ["w"]}]
    v, d = oracle.compare(_ok(outputs=out_a, backward=bw_a, counts=counts), _ok(outputs=out_b, backward=bw_b, counts=counts))
    assert v == oracle.CONFIRMED_OUTPUTS and "line 5" in d, d
    out_b[0]["seq"], bw_b[0]["seq"], out_a[0]["seq"], bw_a[0]["seq"] = 1, 0, 1, 0
    v, d = oracle.compare(_ok(outputs=out_a, backward=bw_a, counts=counts), _ok(outputs=out_b, backward=bw_b, counts=counts))
    assert v == oracle.CONFIRMED_GRADS and "line 9" in d and "`w`: max |Δ| 2" in d, d


# --- check --fix --unsafe-fixes --verify: verified autofix -------------------------------------
@pytest.mark.frameworks
def test_fix_verify_applies_only_confirmed_unsafe_fixes(tmp_path, capsys, monkeypatch):
    _needs({"torch", "mxnet"})
    import ast as _ast
    import shutil

    from scopelint.cli import main
    from scopelint.runtime_check import cli as rcli

    picked = [FIXTURES / "SL204" / "bad_rnn_tbptt_hidden.py", FIXTURES / "SL102" / "bad_mxnet_backward_in_pause.py",
              FIXTURES / "SL207" / "bad_torch_no_grad_without_eval.py"]
    for p in picked:
        shutil.copy(p, tmp_path / p.name)
    before = {p.name: (tmp_path / p.name).read_text() for p in picked}
    seen = []
    real_init = rcli.VerifiedFixes.__init__

    def init(self, *a, **kw):
        real_init(self, *a, **kw)
        seen.append(self)

    monkeypatch.setattr(rcli.VerifiedFixes, "__init__", init)
    args = ["check", "--preview", "--fix", "--unsafe-fixes", "--verify", "--no-cache", "--jobs", "2", "--verify-timeout", str(TIMEOUT), str(tmp_path)]
    main(args)
    out = capsys.readouterr().out
    after = {name: (tmp_path / name).read_text() for name in before}
    [vf] = seen
    confirmed = {Path(f).name for f, code, row, verdict in vf.verdicts if verdict.startswith("confirmed:")}
    unconfirmed = {Path(f).name for f, code, row, verdict in vf.verdicts if not verdict.startswith("confirmed:")}
    changed = {name for name in before if after[name] != before[name]}
    assert changed and changed <= confirmed, (changed, vf.verdicts)
    assert "bad_mxnet_backward_in_pause.py" in unconfirmed - confirmed and "bad_mxnet_backward_in_pause.py" not in changed
    assert "fix not applied: the verifier did not confirm the finding (refuted)" in out, out
    for text in after.values():
        _ast.parse(text)
    main(args)  # a second run changes nothing
    capsys.readouterr()
    assert {name: (tmp_path / name).read_text() for name in before} == after


@pytest.mark.frameworks
def test_fix_verify_sl207_inline_eval_fixed_program_trains_in_train_mode(tmp_path, capsys):
    # The verified fix of an eval() left in the epoch loop: confirmed, applied, and the
    # fixed program runs and never trains in eval mode; a second run is a no-op.
    _needs({"torch"})
    import shutil

    from scopelint.cli import main

    src = FIXTURES / "SL207" / "bad_torch_inline_eval_in_epoch.py"
    target = tmp_path / src.name
    shutil.copy(src, target)
    before = target.read_text(encoding="utf-8")
    args = ["check", "--preview", "--fix", "--unsafe-fixes", "--verify", "--no-cache", "--verify-timeout", str(TIMEOUT), str(target)]
    main(args)
    out = capsys.readouterr().out
    fixed = target.read_text(encoding="utf-8")
    assert fixed != before and "fix not applied" not in out, out
    env = dict(os.environ, **{"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"})
    as_written = subprocess.run([sys.executable, str(src)], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    ran = subprocess.run([sys.executable, str(target)], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert as_written.returncode == 0 and as_written.stdout.strip().endswith("training in eval mode: True"), as_written.stderr
    assert ran.returncode == 0 and ran.stdout.strip().endswith("training in eval mode: False"), ran.stderr
    # the evaluation itself still runs in eval mode: same validation losses in epoch 0
    assert as_written.stdout.splitlines()[0] == ran.stdout.splitlines()[0]
    main(args)
    capsys.readouterr()
    assert target.read_text(encoding="utf-8") == fixed


def test_gpu_check_says_when_there_is_no_gpu():
    if harness.cuda_present():
        pytest.skip("a GPU is here: benchmarks/gpu_check.sh is the check")
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, str(root / "benchmarks" / "gpu_check.py")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no CUDA device" in proc.stderr, proc.stderr
