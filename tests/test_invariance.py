"""Issue 18: refactoring invariance (benchmarks/invariance.py). The generator threads
names as Python scopes them (checked here on small programs, run before and after), every
variant of the corpus compiles and carries its fixture's markers, the static results match
the baseline as the ecosystem check's do (a variant recorded invariant that no longer is
fails; a newly invariant one is reported), and a fixed sample of variants, run, behaves
like its original."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import warnings
from collections import Counter
from pathlib import Path

import pytest

from fixtures_util import FIXTURES, expected_findings

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "invariance.py"


def _load():
    spec = importlib.util.spec_from_file_location("invariance", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["invariance"] = mod
    spec.loader.exec_module(mod)
    return mod


inv = _load()


# --- the generator on small programs ------------------------------------------------------------

def _marked(text: str):
    """The text without its ``# R`` markers, and the marked lines (the region's anchors)."""
    lines = text.splitlines()
    return "\n".join(l.replace("  # R", "") for l in lines) + "\n", [i for i, l in enumerate(lines, 1) if l.endswith("  # R")]


def _refactor(text: str, kind: str):
    """The variant of ``text`` (its ``# R`` lines the region), or the NotApplicable."""
    code, lines = _marked(text)
    program = inv.Program(code)
    regions = inv.regions_of(program, lines)
    assert len(regions) == 1, regions
    try:
        return inv.refactor_region(program, regions[0], kind, 0)
    except inv.NotApplicable as e:
        return e


def _output(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<variant>", "exec"), {"__name__": "__main__"})
    return out.getvalue()


GENERIC = ["helper", "method", "closure", "trainer"]

LOOP_CARRIED = """\
def run(xs):
    total = 0
    seen = []
    for i in range(3):
        y = xs[i] * 2
        total += y  # R
        seen.append(total)  # R
        last = [total for total in range(i)]  # R
    print(total, seen, i, last)


run([1, 2, 3])
"""

MODULE_LEVEL = """\
k = 3
data = [1, 2, 3]
scaled = [k * d for d in data]  # R
f = lambda v: v + k  # R
k = 4
print(scaled, f(1), k)
"""

METHOD_SELF = """\
class Acc:
    def __init__(self):
        self.total = 0

    def add(self, xs):
        for k in range(3):
            x = xs[k]
            self.total += x  # R
            last = x  # R
        return last


a = Acc()
print(a.add([1, 2, 3]), a.total)
"""


@pytest.mark.parametrize("kind", GENERIC)
@pytest.mark.parametrize("text", [LOOP_CARRIED, MODULE_LEVEL, METHOD_SELF], ids=["loop_carried", "module_level", "method_self"])
def test_a_variant_computes_what_its_original_computes(text, kind):
    variant = _refactor(text, kind)
    assert isinstance(variant, str), variant
    original = _marked(text)[0]
    assert variant != original
    assert _output(variant) == _output(original)


def test_reads_become_parameters_and_later_reads_results():
    variant = _refactor(LOOP_CARRIED, "helper")
    # ``total`` is read before it is bound (and carried to the next iteration), ``y``,
    # ``seen`` and ``i`` (``range(i)``) are read; the comprehension's ``total`` is its own
    assert "def _inv_helper0(i, seen, total, y):" in variant
    assert "return total, last" in variant
    assert "total, last = _inv_helper0(i, seen, total, y)" in variant
    module = _refactor(MODULE_LEVEL, "helper")
    # module variables are handed over, but not the comprehension's ``d``, the lambda's
    # ``v``, nor ``k``: the lambda reads it when it runs (after ``k = 4``), as a global
    assert "def _inv_helper0(data):" in module and "scaled, f = _inv_helper0(data)" in module
    # a closure reads what it does not bind from its scope
    assert "def _inv_step0():" in _refactor(MODULE_LEVEL, "closure")


def test_a_trainer_whose_loop_may_not_run_hands_nothing_unbound():
    # after ``for i, x in enumerate(xs)``, ``i`` is bound only if ``xs`` was not empty:
    # fit could not return it
    text = LOOP_CARRIED.replace("for i in range(3):", "for i, x in enumerate(xs):").replace("xs[i] * 2", "x * 2")
    variant = _refactor(text, "trainer")
    assert isinstance(variant, inv.NotApplicable) and "may be unbound" in str(variant)
    assert isinstance(_refactor(text, "helper"), str)


def test_a_loop_over_a_module_list_known_non_empty_runs():
    text = "batches = [(i, i + 1) for i in range(3)]\nfor step, (x, y) in enumerate(batches):\n    last = x * y  # R\nprint(last, step)\n"
    variant = _refactor(text, "trainer")
    assert isinstance(variant, str), variant
    assert _output(variant) == _output(_marked(text)[0])
    # the same list, bound twice: not known
    twice = text.replace("for step", "batches = batches[:0]\nfor step")
    assert "may be unbound" in str(_refactor(twice, "trainer"))


def test_a_trainer_without_a_loop_delegates_once():
    variant = _refactor(MODULE_LEVEL, "trainer")
    assert "return self.train_epoch(data)" in variant and "_inv_trainer0.fit(data)" in variant


def test_the_enclosing_methods_self_is_handed_over_as_outer():
    variant = _refactor(METHOD_SELF, "method")
    assert "def run(self, outer, x):" in variant and "outer.total += x" in variant
    assert "_inv_obj0.run(self, x)" in variant


@pytest.mark.parametrize("text, reason", [
    ("def f(x):\n    if x:\n        best = x  # R\n    print(best if x else 0)\n\n\nf(1)\n", None),
    ("def f(x):\n    if x:  # R\n        best = x\n    print(best if x else 0)\n\n\nf(1)\n", "may be unbound"),
    ("def f(x):\n    y = x + 1  # R\n    return y  # R\n\n\nf(1)\n", "return in region"),
    ("n = 0\n\n\ndef f(x):\n    global n\n    n = x  # R\n\n\nf(1)\n", "global"),
    ("def f():\n    x = 1\n\n    def show():\n        print(x)\n    x = 2  # R\n    show()\n\n\nf()\n", "nested function"),
    ("x = 1\n\n\ndef show():\n    print(x)\n\n\nx = 2  # R\nshow()\n", "some function reads"),
    ("def f():\n    k = 1\n    g = lambda: k  # R\n    k = 2\n    print(g())\n\n\nf()\n", "lambda"),
    ("def f(xs):\n    for x in xs:\n        if x:\n            break  # R\n\n\nf([1])\n", "break"),
    ("import torch\n\n\ndef f():\n    import torch.nn as nn  # R\n    return nn\n\n\nf()\n", "import in region"),
])
def test_what_cannot_be_moved_cleanly_is_not_generated(text, reason):
    variant = _refactor(text, "helper")
    if reason is None:
        assert isinstance(variant, str), variant
        assert _output(variant) == _output(_marked(text)[0])
    else:
        assert isinstance(variant, inv.NotApplicable) and reason in str(variant), variant


def test_the_loss_list_refactoring_keeps_the_marker_on_the_backward_call():
    code = (
        "class Loss:\n    def backward(self, g=None):\n        print('backward', g)\n\n\n"
        "loss = Loss()\nloss.backward(2)  # expect: SL101\nprint('done')\n"
    )
    variant = inv.loss_list(inv.Program(code))
    assert _output(variant) == _output(code)
    lines = variant.splitlines()
    marked = [l for l in lines if "# expect: SL101" in l]
    assert marked == ["    _inv_l1.backward(2)  # expect: SL101"]
    assert "_inv_losses1 = [loss]" in lines


# --- the corpus ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus():
    return inv.corpus()


def test_every_variant_compiles_and_carries_its_fixtures_markers(corpus):
    variants, skipped = corpus
    assert len(variants) > 1000
    kinds = Counter(v.refactoring for v in variants)
    assert set(kinds) == set(inv.REFACTORINGS), kinds
    for v in variants:
        compile(v.text, v.id, "exec")
        assert v.text != v.fixture.read_text(encoding="utf-8")
        if v.bad:
            # the markers moved with their statements: the same codes, as many
            moved = Counter(code for _, code in inv.expected_of(v.text))
            assert moved == Counter(code for _, code in expected_findings(v.fixture)), v.id
    for s in skipped:
        assert s.reason, s.id


def test_static_invariance_against_the_baseline(corpus):
    """Like the ecosystem check: a variant the baseline records invariant that no longer
    is fails (the analysis lost reach); a newly invariant one is reported (rewrite the
    baseline with ``python benchmarks/invariance.py --update``)."""
    variants, _ = corpus
    results = inv.check_static(variants)
    baseline = inv.load_baseline()
    assert baseline, "benchmarks/invariance/baseline.json is missing: run benchmarks/invariance.py --update"
    lost, gained, changed, new, gone = inv.diff_baseline(results, baseline)
    if gained or changed:
        warnings.warn(f"{len(gained)} variants newly invariant, {len(changed)} with other findings: "
                      f"run benchmarks/invariance.py --update ({(gained + changed)[:5]} ...)")
    problems = [f"lost (recorded invariant, no longer): {k}: {results[k]}" for k in lost]
    problems += [f"not in the baseline (run --update): {k}" for k in new]
    problems += [f"in the baseline, no longer generated: {k}" for k in gone]
    assert not problems, "\n".join(problems[:40])


def test_a_variant_that_loses_a_finding_is_not_invariant(corpus):
    """The comparison can fail: a bad variant whose marker is moved to a line with no
    finding, and a good one given a finding, both read as not invariant."""
    variants, _ = corpus
    bad = next(v for v in variants if v.bad and v.refactoring == "loss_list")
    good = next(v for v in variants if not v.bad and v.refactoring == "helper")
    broken = inv.Variant(bad.id + "/broken", bad.fixture, bad.refactoring, True, bad.framework,
                         bad.text + "\nx_unused = 1  # expect: SL101\n")
    noisy = inv.Variant(good.id + "/noisy", good.fixture, good.refactoring, False, good.framework,
                        good.text + "\nimport torch\nwith torch.no_grad:\n    pass\n")
    results = inv.check_static([bad, broken, noisy])
    assert not results[broken.id]["invariant"] and [r for r in results[broken.id]["expected"] if r[1] == "SL101"]
    assert not results[noisy.id]["invariant"] and any(code == "SL107" for _, code in results[noisy.id]["found"])


# --- running a fixed sample ---------------------------------------------------------------------

# One bad and one good variant per refactoring, both frameworks, chosen for their
# threading: loop-carried state, several results, a method's ``self``, a closure's
# parameters, a loss module, losses in a list.
SAMPLE = [
    "SL204/bad_lstm_tuple_state/helper/0",
    "SL201/good_trainer_item/helper/1",
    "SL304/bad_bias_augassign/method/0",
    "SL205/good_mxnet_pause_inside_record/method/1",
    "SL101/bad_torch_loss_in_no_grad/forward/0",
    "SL101/good_mxnet_block_loss_helper/forward/3",
    "SL204/bad_grucell_chunks/trainer/0",
    "SL304/good_trainer_masked_loss/trainer/1",
    "SL101/bad_mxnet_multi_device_loss_list/closure/0",
    "SL206/good_torch_detach_target/closure/0",
    "SL204/bad_rnn_tbptt_hidden/loss_module/0",
    "SL304/good_metric_asscalar_in_record/loss_module/0",
    "SL105/bad_bare_decorator_trainer/loss_list/0",
    "SL205/good_mxnet_fake_outside_record/loss_list/0",
]


def _sample_variant(vid: str):
    code, stem = vid.split("/")[:2]
    made, skipped = inv.variants_of(FIXTURES / code / f"{stem}.py")
    found = [v for v in made if v.id == vid]
    assert found, f"{vid} is no longer generated: {[s.reason for s in skipped if s.id == vid]}"
    return found[0]


def test_the_sample_spans_every_refactoring_both_ways():
    kinds = {(vid.split("/")[2], vid.split("/")[1].startswith("bad_")) for vid in SAMPLE}
    assert kinds == {(k, b) for k in inv.REFACTORINGS for b in (True, False)}


@pytest.mark.frameworks
@pytest.mark.parametrize("vid", SAMPLE)
def test_a_sampled_variant_behaves_like_its_original(vid, tmp_path):
    v = _sample_variant(vid)
    missing = [fw for fw in sorted(inv.frameworks_of(v.fixture)) if importlib.util.find_spec(fw) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    path = tmp_path / v.fixture.name
    path.write_text(v.text, encoding="utf-8")
    ok, why = inv.behaves(path, v.bad, inv.declared_effect(v.fixture) if v.bad else None, tmp_path)
    assert ok, why


def test_behaviour_is_judged_by_the_declared_effect(tmp_path):
    """The run check can fail: a good program that raises, a bad one whose effect is
    another exception or another output."""
    prog = tmp_path / "p.py"
    prog.write_text("print('grads equal: True')\nraise RuntimeError('element 0 of tensors')\n", encoding="utf-8")
    assert not inv.behaves(prog, False, None, tmp_path)[0]
    assert inv.behaves(prog, True, ("raises", "RuntimeError: element 0"), tmp_path)[0]
    assert not inv.behaves(prog, True, ("raises", "MXNetError: element 0"), tmp_path)[0]
    assert not inv.behaves(prog, True, ("prints", "grads equal: True"), tmp_path)[0]  # it printed, then raised
    prog.write_text("print('grads equal: False')\n", encoding="utf-8")
    assert inv.behaves(prog, False, None, tmp_path)[0]
    assert not inv.behaves(prog, True, ("prints", "grads equal: True"), tmp_path)[0]


def test_a_miss_is_classified_by_how_it_missed():
    assert inv.classify({"expected": [[5, "SL101"]], "found": []}) == ["lost SL101"]
    assert inv.classify({"expected": [[5, "SL108"]], "found": [[9, "SL108"]]}) == ["moved SL108"]
    assert inv.classify({"expected": [[5, "SL105"]], "found": [[5, "SL101"]]}) == ["SL105->SL101"]
    assert inv.classify({"expected": [], "found": [[3, "SL207"]]}) == ["extra SL207"]


def test_the_baseline_diff_names_lost_gained_new_and_gone():
    ok, miss = {"invariant": True}, {"invariant": False, "expected": [[3, "SL101"]], "found": []}
    baseline = {"a": ok, "b": miss, "c": ok, "d": miss, "gone": ok}
    results = {"a": miss, "b": ok, "c": ok, "d": dict(miss, found=[[4, "SL101"]]), "new": ok}
    lost, gained, changed, new, gone = inv.diff_baseline(results, baseline)
    assert (lost, gained, changed, new, gone) == (["a"], ["b"], ["d"], ["new"], ["gone"])
