"""The ast gate (scopelint.core.slicing): LibCST sees only the units where a rule can
fire and what their analysis depends on, blanked in place; findings stay identical."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from dataclasses import replace

import pytest

from fixtures_util import all_fixtures
from scopelint.core import slicing
from scopelint import engine
from scopelint.engine import Settings, lint_source

ON, OFF = Settings(), replace(Settings(), gate=False)


def _plan(src: str) -> slicing.Plan:
    return slicing.plan(textwrap.dedent(src), ON.inference_functions)


def _kept(plan: slicing.Plan, source: str, text: str) -> bool:
    """The line of ``source`` that reads ``text`` is kept as it was."""
    lines, sliced = source.splitlines(), plan.source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == text.strip())
    return sliced[start] == lines[start]


def _findings(text: str, settings: Settings):
    return [(f.code, f.start, f.end, f.message, f.fix) for f in lint_source(text, "t.py", settings).findings]


SAMPLE = textwrap.dedent(
    """\
    import torch
    import json


    def load(path):
        with open(path) as f:
            return json.load(f)


    class Report:
        kind = "text"

        def render(self, rows):
            return "\\n".join(map(str, rows))

        def save(self, path):
            pass


    def fit(model, opt, loader):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()


    def main():
        fit(torch.nn.Linear(2, 1), None, [])


    main()
    """
)


def test_plan_keeps_the_anchor_its_callers_and_imports_and_blanks_the_rest():
    plan = _plan(SAMPLE)
    assert plan.sliced and plan.source is not None
    assert len(plan.source.splitlines()) == len(SAMPLE.splitlines())  # every line keeps its number
    for kept in ("import torch", "import json", "def fit(model, opt, loader):", "            loss.backward()",
                 "def main():", "main()"):
        assert _kept(plan, SAMPLE, kept), kept
    for gone in ("def load(path):", "class Report:", "        def render(self, rows):"):
        assert not _kept(plan, SAMPLE, gone), gone
    ast.parse(plan.source)  # still a program


def test_no_anchor_means_nothing_to_parse():
    plan = _plan("import torch\n\ndef f(x):\n    return torch.relu(x) + 1\n")
    assert plan is not None and plan.source is None
    # words in strings and comments do not make anchors; identifiers do
    assert _plan('import torch\n\ndef f(x):\n    "call loss.backward() first"  # requires_grad\n    return x\n').source is None
    assert _plan("import torch\n\ndef f(x):\n    x.backward()\n").source is not None


@pytest.mark.parametrize("line, anchors", [
    ("w = torch.zeros(3, requires_grad=True)", True),
    ("w = torch.zeros(3, requires_grad=1)", True),
    ("w = torch.zeros(3, requires_grad=flag)", False),  # not a leaf the analysis knows
    ("w = torch.zeros(3, requires_grad=False)", False),
    ("w.requires_grad = True", True),  # a leaf from here on
    ("w.requires_grad = flag", False),
    ("w.requires_grad = False", False),
    ("net.initialize(grad_req='add')", True),
    ("net.initialize(grad_req='write')", False),
    ("net.collect_params().setattr('grad_req', 'add')", True),
    ("setattr(obj, 'grad_req', 'add')", False),  # the builtin: SL202 reads the method
    ("setattr(module, name, value)", False),
    ("p.grad.zero_()", True),
    ("buffer.zero_()", False),  # zeroes a tensor, not a gradient
    ("zero_(p)", False),  # a plain function named so (once an AttributeError in the plan)
    ("setattr('grad_req', 'add')", False),
    # methods the analysis reads as methods only (``CallFact.method``)
    ("net.eval()", True),
    ("return eval(code, {}, {})", False),  # the builtin (torch's symbolic_shapes.py)
    ("train(obj, flag)", False),  # a function named so
    ("return parameters(net)", False),
    ("zero_grad(net)", False),
    ("requires_grad_(w)", False),
    ("net.zero_grad()", True),
    ("return net.parameters()", True),
    ("w.requires_grad_()", True),
    # loss calls as ``roles.is_loss_call`` reads them: a CamelCase name constructs an object
    ("return criterion(net, w)", True),
    ("return F.mse_loss(net, w)", True),
    ("return BCE(net, w)", True),  # a constant's spelling, not a class's
    ("return ir.RandomSeeds(flag)", False),  # "mSe" in a class name (torch's _inductor/lowering.py)
    ("return nn.MSELoss()", False),
    ("handler = ExtractConstantsHandler(w)", False),  # "ctC"
])
def test_keywords_and_calls_anchor_only_in_the_form_the_analysis_reads(line, anchors):
    # (in a file that backpropagates somewhere: the gradient buffer's forms are read
    # only by rules of a backward pass)
    src = (f"import torch\n\n\ndef f(net, obj, module, name, value, flag, p, buffer, w):\n    {line}\n\n\n"
           "def g(net, obj, module, name, value, flag, p, buffer, w):\n    return 1\n\n\nloss = 0\nloss.backward\n")
    plan = _plan(src)
    assert (plan.source is not None and _kept(plan, src, f"    {line}")) == anchors


@pytest.mark.parametrize("line", [
    "net.initialize(grad_req='add')",
    "net.collect_params().setattr('grad_req', 'add')",
    "p.grad.zero_()",
    "p.grad = None",
    "p.grad_req = 'add'",
    "p.data = w * 2",
    "p.data[0] = w",
    "p.data.copy_(w)",
    "self.h = self.rnn(x, self.h)",  # state kept on the object (SL204)
])
def test_what_only_rules_of_a_backward_pass_read_anchors_only_where_something_backpropagates(line):
    src = f"import torch\n\n\ndef f(self, net, p, w, x):\n    {line}\n"
    assert _plan(src).source is None
    for backward in ("loss.backward()", "torch.autograd.grad(y, x)", "G(y, x)", "ag.grad(y, x)", "f = ag.grad", "autograd.backward([y])"):
        with_backward = (f"import torch\nfrom torch.autograd import grad as G\nimport torch.autograd as ag\n\n\n"
                         f"def f(self, net, p, w, x):\n    {line}\n\n\ndef step(loss, x, y):\n    {backward}\n")
        plan = _plan(with_backward)
        assert plan.whole.backprop, backward
        assert plan.source is not None and _kept(plan, plan.source, f"    {line}"), backward


@pytest.mark.parametrize("source, backprop", [
    ("import torch\nloss.backward()\n", True),
    ("import torch\nfrom torch.autograd import grad as dx\n", True),  # whatever it is called as
    ("import torch\nfrom torch.autograd import *\nf = grad\n", True),
    ("import torch\nimport torch.autograd as A\nf = A.grad\n", True),
    ("from mxnet import autograd as ag\nag.backward([y])\n", True),
    ("import torch\ng = p.grad\nif p.grad is not None:\n    p.grad.add_(1)\n", False),  # an optimizer's reads
    ("import torch\nfrom utils import *\ng = grad\n", False),
])
def test_backprop_is_a_superset_of_the_backward_calls_the_analysis_reads(source, backprop):
    assert slicing.whole_of(ast.parse(source)).backprop is backprop


def test_every_fixture_with_a_backward_call_backpropagates_for_the_gate():
    """``Whole.backprop`` is what the gate reads to drop what only rules of a backward
    pass need: it must hold wherever the analysis finds a backward call."""
    from scopelint.core.flow import Analyzer

    checked = 0
    import libcst as cst

    for path in all_fixtures():
        source = path.read_text(encoding="utf-8")
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError:
            continue
        facts = Analyzer(module).run()
        if facts.backwards:
            checked += 1
            assert slicing.whole_of(ast.parse(source)).backprop, path
    assert checked > 300


@pytest.mark.parametrize("line, anchors", [
    ("return G(y, x)", True),  # autograd.grad, imported under another name, called
    ("return bw([y])", True),  # autograd.backward, imported under another name
    ("return ev(x)", False),  # a method's name, imported as a function: nothing the analysis reads
    ("return Loss(x)", True),  # a loss function imported under a class's spelling: what it names
    ("return mse(x)", True),  # a class imported under a loss's spelling: a local binding may shadow it
    ("return isinstance(x, Parameter)", False),  # named, not called: not a leaf
    ("return P(x)", True),
    ("return ng", True),  # a grad-mode scope counts in any use
])
def test_imported_api_names_anchor_as_the_analysis_reads_them(line, anchors):
    src = ("import torch\nfrom torch.autograd import grad as G\nfrom torch.nn import Parameter, Parameter as P\n"
           "from torch.autograd import backward as bw\nfrom tools import eval as ev\n"
           "from torch.nn.functional import mse_loss as Loss\nfrom ops import RandomSeeds as mse\n"
           f"from torch import no_grad as ng\n\n\ndef f(x, y):\n    {line}\n")
    assert (_plan(src).source is not None) == anchors


@pytest.mark.parametrize("body, anchors", [
    ("return len(x) + helper(x)", False),  # calls nothing that can hold a model
    ("return model(x)", True),  # named as a model
    ("return self.encoder(x)", True),
    ("return self(x)", True),
    ("return net.forward(x)", True),
    ("return self.helper(x)", False),
    ("return fn(x)", True),  # a parameter: its callers may pass a model
    ("m = build()\n    return m(x)", True),  # a name the walk binds
    ("self.h = build()\n    return self.h(x)", True),
    ("out = []\n    for f in fs:\n        out.append(f(x))\n    return out", True),
])
def test_an_inference_named_function_anchors_when_it_may_call_a_model(body, anchors):
    src = f"import torch\n\n\ndef generate_code(self, x, fn, fs):\n    {body}\n"
    assert (_plan(src).source is not None) == anchors
    # Where some name is put in eval mode, any callee may be a model in eval mode.
    moded = src + "\n\ndef other(m):\n    m.eval()\n"
    assert _kept(_plan(moded), moded, "def generate_code(self, x, fn, fs):")


def test_a_method_keeps_its_class_and_a_pass_replaces_dropped_methods():
    src = textwrap.dedent(
        """\
        import torch


        class Trainer:
            def helper(self):
                return 1

            def step(self, loss):
                loss.backward()


        class Empty:
            def a(self):
                return 2
        """
    )
    plan = _plan(src)
    assert _kept(plan, src, "class Trainer:") and _kept(plan, src, "            def step(self, loss):")
    assert not _kept(plan, src, "            def helper(self):")
    assert not _kept(plan, src, "class Empty:")
    ast.parse(plan.source)

    only_header = textwrap.dedent(
        """\
        import torch


        class Net(torch.nn.Module):
            def other(self):
                return 1


        def train(net: "Net", x):
            Net()
            net(x).sum().backward()
        """
    )
    plan = _plan(only_header)
    assert _kept(plan, only_header, "class Net(torch.nn.Module):")
    assert not _kept(plan, only_header, "            def other(self):")
    assert "    pass" in plan.source.splitlines()
    ast.parse(plan.source)


def test_a_method_reading_what_init_stores_keeps_init():
    """What ``self.x`` is in any method (not only ``forward``) is what ``__init__`` put
    there: the refactoring-invariance variant SL201/bad_unpacked_loss_accumulated/helper
    lost its finding when ``nn.CrossEntropyLoss()`` stopped anchoring ``__init__``."""
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 3)
                self.loss_function = nn.CrossEntropyLoss()

            def forward_loss(self, batch):
                x, y = batch
                return self.loss_function(self.proj(x), y), len(y)


        class Other(nn.Module):
            def __init__(self):
                super().__init__()
                self.size = 3

            def describe(self):
                return "other"


        def report(rows):
            out = []
            for row in rows:
                name, value = row
                if value is None:
                    continue
                out.append(f"{name}: {value}")
            header = "report"
            footer = "end"
            return "\\n".join([header, *out, footer])


        model = Tagger()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        running = 0.0


        def add(loss, running):
            running += loss
            return running


        for batch in [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]:
            optimizer.zero_grad()
            loss, count = model.forward_loss(batch)
            running = add(loss, running)
            loss.backward()
            optimizer.step()
        """)
    plan = _plan(src)
    assert plan.sliced
    assert _kept(plan, src, "        self.proj = nn.Linear(4, 3)")
    assert not _kept(plan, src, '    header = "report"')
    assert [f[0] for f in _findings(src, ON)] == [f[0] for f in _findings(src, OFF)] == ["SL201"]


def test_callers_are_kept_because_they_give_the_entry_state():
    src = textwrap.dedent(
        """\
        import torch

        def update(params):
            for p in params:
                p -= 0.1 * p.grad

        def run(params):
            update(params)

        def unrelated():
            return 3

        run([torch.zeros(3, requires_grad=True)])
        """
    )
    plan = _plan(src)
    assert _kept(plan, src, "        def run(params):") and _kept(plan, src, "        run([torch.zeros(3, requires_grad=True)])")
    assert not _kept(plan, src, "        def unrelated():")
    assert _findings(src, ON) == _findings(src, OFF)


def test_a_function_that_escapes_does_not_need_its_callers():
    """Referenced other than by a call (a callback, a table), or called implicitly (a
    dunder method), a function's entry state and parameters are unknown whatever its call
    sites: they are not kept for it."""
    src = textwrap.dedent(
        """\
        import torch

        def helper(x):
            with torch.no_grad():
                return x * 2

        HANDLERS = [helper]

        def unrelated_caller(y):
            return helper(y) + 1

        class Table:
            def __call__(self, x):
                with torch.no_grad():
                    return x

            def unrelated_method(self, x):
                return self.__call__(x)
        """
    )
    plan = _plan(src)
    assert _kept(plan, src, "                return x * 2") and _kept(plan, src, "                    return x")
    for gone in ("        HANDLERS = [helper]", "        def unrelated_caller(y):", "            def unrelated_method(self, x):"):
        assert not _kept(plan, src, gone), gone
    assert _findings(src, ON) == _findings(src, OFF)
    # Called only directly, the same function needs its callers again.
    called = src.replace("HANDLERS = [helper]", "HANDLERS = [helper(1)]")
    assert _kept(_plan(called), called, "        def unrelated_caller(y):")


def test_a_function_only_named_is_not_needed_where_it_is_named():
    """The analysis resolves a function of the file only where it is called (by name, or
    as ``self.m()``); named other than by a call it is a value nobody knows: kept code
    that only names it does not need it, code that calls it does."""
    src = textwrap.dedent(
        """\
        import torch

        def log_step(loss):
            print("step", loss)

        def make_model():
            return torch.nn.Linear(3, 1)

        def train(x):
            model = make_model()
            with torch.no_grad():
                loss = model(x).pow(2).mean()
            loss.backward()
            return log_step

        class Trainer:
            def fit(self, x):
                hook = self.report
                loss = self.model(x).mean()
                loss.backward()
                self.step()

            def report(self):
                print("report")

            def step(self):
                print("step")
        """
    )
    plan = _plan(src)
    for kept in ("return torch.nn.Linear(3, 1)", 'print("step")'):
        assert _kept(plan, src, kept), kept
    for gone in ('print("step", loss)', 'print("report")'):
        assert not _kept(plan, src, gone), gone
    assert [f[0] for f in _findings(src, ON)] == ["SL101"] and _findings(src, ON) == _findings(src, OFF)
    # Called, the same function is needed.
    called = src.replace("return log_step\n", "return log_step(loss)\n")
    assert _kept(_plan(called), called, 'print("step", loss)')


def test_a_module_level_binding_of_a_conversion_builtin_is_kept():
    """``float = ...`` at module level makes ``float(x)`` in any function no conversion
    (``names.Names.builtin``): it is kept for the functions that call ``float``."""
    src = textwrap.dedent(
        """\
        import torch
        float = lambda t: t * 1
        unrelated = 3

        def step(w):
            loss = (w * 2).sum()
            v = float(loss)
            v.backward()
        """
    )
    plan = _plan(src)
    assert _kept(plan, src, "float = lambda t: t * 1") and not _kept(plan, src, "unrelated = 3")
    assert _findings(src, ON) == _findings(src, OFF) == []


def _unrelated_code(text: str) -> str:
    """Code that names every function and method of ``text`` without calling it (so they
    escape in the whole file, and need none of their callers) and code that has nothing
    to do with it."""
    tree = ast.parse(text)
    methods = sorted({n.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in c.body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})
    refs = ", ".join(f"obj.{m}" for m in methods) or "obj"
    return textwrap.dedent(
        f"""

        class _UnrelatedHolder:
            size = 3

            def describe(self, obj):
                return [{refs}]

            def grow(self):
                self.size += 1
                return self.size


        def _unrelated_helper(values):
            total = 0
            for v in values:
                total += v
            return total


        _UNRELATED = _unrelated_helper([1, 2, 3])
        """
    )


FIXTURES = all_fixtures()
# Known gate inequivalences (a bug each, open in the session note): strict, so fixing one
# fails here until it is taken off the list.
GATE_LOSES = {
    # SL201's per-call reach (a method adding into ``self.x``, called in the caller's
    # loops): when the file is sliced, the finding is lost (the caller's loops are not
    # seen through the slice).
    "SL201/bad_trainer_method_running_loss.py",
}


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="known gate inequivalence")) if f"{p.parent.name}/{p.name}" in GATE_LOSES else p
    for p in FIXTURES
], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_findings_are_the_same_with_the_ast_gate_on_and_off(path, monkeypatch):
    """Each fixture with unrelated code appended: the gate really slices, and findings
    (positions, messages, fixes) are those of the whole file parsed, also when what is
    parsed is parsed in pieces (tiny pieces here)."""
    monkeypatch.setattr(engine, "CHUNK_LINES", 8)
    text = path.read_text(encoding="utf-8")
    text = text + _unrelated_code(text)
    plan = slicing.plan(text, ON.inference_functions)
    if plan.source is not None:
        assert plan.sliced, "the unrelated code should not be parsed"
        assert "_unrelated_helper(values)" not in plan.source
    assert _findings(text, ON) == _findings(text, OFF)


def test_a_file_no_rule_can_fire_in_is_checked_without_importing_libcst(tmp_path):
    """The editor and warm paths: nothing to parse, so LibCST is never imported."""
    quiet = tmp_path / "quiet.py"
    quiet.write_text("import torch\n\n\ndef f(x):\n    return torch.relu(x) + 1  # no backward here\n")
    busy = tmp_path / "busy.py"
    busy.write_text("import torch\n\n\ndef f(x):\n    with torch.no_grad:\n        return x\n")
    probe = (
        "import sys; from scopelint.cli import main; "
        "rc = main(['check', '--no-cache', '--jobs', '1', '--output-format', 'concise', sys.argv[1]]); "
        "print('RESULT', rc, 'libcst' in sys.modules)"
    )
    for path, expected in ((quiet, "RESULT 0 False"), (busy, "RESULT 1 True")):
        out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=120)
        assert expected in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("path", FIXTURES[::4], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_module_parsed_in_pieces_is_the_module(path, monkeypatch):
    import libcst as cst

    monkeypatch.setattr(engine, "CHUNK_LINES", 5)
    text = path.read_text(encoding="utf-8") + "\n\n# a comment between pieces\n\nx = 1  # trailing\n"
    starts = [min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) for n in ast.parse(text).body]
    module = engine._parse_in_pieces(text, starts)
    assert module is not None and len(module.body) == len(cst.parse_module(text).body)
    assert module.code == text


def _statement_shapes(node):
    """The statements of a LibCST tree, as (type, depth) in order: its structure, comments aside."""
    import libcst as cst

    out = []

    class Shapes(cst.CSTVisitor):
        depth = 0

        def on_visit(self, n):
            if isinstance(n, (cst.BaseCompoundStatement, cst.BaseSmallStatement)):
                out.append((type(n).__name__, self.depth))
                self.depth += 1
            return True

        def on_leave(self, n):
            if isinstance(n, (cst.BaseCompoundStatement, cst.BaseSmallStatement)):
                self.depth -= 1

    node.visit(Shapes())
    return out


@pytest.mark.parametrize("path", FIXTURES[1::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_long_function_parsed_in_pieces_is_the_function(path, monkeypatch):
    """One long function or class is parsed in pieces cut where statements of its body
    end (issue 24: LibCST's parser keeps ~9 kB per line of one 100k-line function):
    the same text, the same statements, the same findings (tiny pieces here)."""
    import libcst as cst

    monkeypatch.setattr(engine, "CHUNK_LINES", 2)
    monkeypatch.setattr(slicing, "LONG_STATEMENT", 3)
    text = path.read_text(encoding="utf-8") + "\n\ndef tail(x):\n    y = x  \\\n\n    # a comment\n\n    return y\n    # after\n# the end\n"
    tree = ast.parse(text)
    inner = slicing.inner_cuts(tree.body)
    assert inner, "the appended function is long enough to be cut"
    module = engine._parse_in_pieces(text, slicing.starts_of(tree.body), dict(inner))
    assert module is not None and module.code == text
    assert _statement_shapes(module) == _statement_shapes(cst.parse_module(text))
    pieces = _findings(text, ON)
    monkeypatch.setattr(engine, "CHUNK_LINES", 10 ** 9)
    assert pieces == _findings(text, ON)


def _counting_lints(monkeypatch):
    calls = []
    real = engine._lint_trusted

    def counting(source, filename, settings=ON, tree=None):
        calls.append(settings.gate)
        return real(source, filename, settings, tree)

    monkeypatch.setattr(engine, "_lint_trusted", counting)
    return calls, counting


def test_a_fix_in_a_slice_is_made_from_the_whole_file(monkeypatch):
    """Fix builders read the whole module (its names, every mention of a helper): a file
    parsed whole is linted once; a sliced one with a fix is linted again, whole."""
    calls, counting = _counting_lints(monkeypatch)
    src = "import torch\n\n\ndef f(x):\n    with torch.no_grad:\n        return x\n"
    whole = counting(src, "t.py")
    assert calls == [True] and whole.findings[0].fix is not None
    calls.clear()
    sliced = src + _unrelated_code(src)
    assert slicing.plan(sliced, ON.inference_functions).sliced
    found = counting(sliced, "t.py")
    assert calls == [True, False]
    assert [f.fix for f in found.findings] == [f.fix for f in engine.lint_source(sliced, "t.py", OFF).findings]


def test_a_file_the_slice_would_keep_most_of_is_parsed_whole_and_linted_once(monkeypatch):
    """Slicing away less than a tenth of a file saves little and may cost a second
    pass (a fix): such a file is parsed whole, with the findings of the whole."""
    calls, counting = _counting_lints(monkeypatch)
    body = "".join(f"        y{i} = x * {i}\n" for i in range(40))
    src = f"import torch\n\n\ndef f(x):\n    with torch.no_grad:\n{body}        return x\n\n\ndef g(a):\n    return a\n"
    plan = slicing.plan(src, ON.inference_functions)
    assert plan.source == src and not plan.sliced and plan.kept_lines == plan.total_lines
    monkeypatch.setattr(slicing, "WHOLE_SHARE", 2.0)  # (always slice)
    assert slicing.plan(src, ON.inference_functions).sliced, "g alone is not needed"
    monkeypatch.setattr(slicing, "WHOLE_SHARE", 0.9)
    found = counting(src, "t.py")
    assert calls == [True] and found.findings[0].fix is not None
    assert [(f.start, f.fix) for f in found.findings] == [(f.start, f.fix) for f in engine.lint_source(src, "t.py", OFF).findings]


def test_a_fix_in_a_file_parsed_in_pieces_is_made_once(monkeypatch):
    """Pieces of the whole text make its module (they agree on indentation and newline):
    their fixes are the whole parse's."""
    monkeypatch.setattr(engine, "CHUNK_LINES", 4)
    calls, counting = _counting_lints(monkeypatch)
    src = textwrap.dedent(
        """\
        import torch

        w = torch.randn(3, requires_grad=True)
        total = 0
        for _ in range(3):
            loss = (w * w).sum()
            loss.backward()
            w.sub_(0.1 * w.grad)
            total += loss
        """
    )
    plan = slicing.plan(src, ON.inference_functions)
    assert not plan.sliced and len(plan.starts) > 1
    found = counting(src, "t.py")
    assert calls == [True] and any(f.fix is not None for f in found.findings)
    assert [(f.code, f.fix) for f in found.findings] == [(f.code, f.fix) for f in engine.lint_source(src, "t.py", OFF).findings]


def _sources_to_index():
    import scopelint

    own = sorted(Path(scopelint.__file__).parent.rglob("*.py"))
    return [*FIXTURES, *own]


def test_one_walk_finds_what_ast_walk_finds():
    """The plan's own walks (``_index``, which skips names, operators and contexts, and
    ``_imports``, statements only) find every node of the types they look for, on every
    fixture and on scopelint itself."""
    for path in _sources_to_index():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = slicing._index(tree.body)
        for t in slicing._INDEXED:
            expected = {id(n) for n in ast.walk(tree) if type(n) is t}
            assert {id(n) for n in found[t]} == expected, (path, t.__name__)
            assert len(found[t]) == len(expected)
        imports = {id(n) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
        assert {id(n) for n in slicing._imports(tree.body)} == imports, path


def test_imports_in_every_kind_of_block_are_found():
    src = textwrap.dedent(
        """\
        try:
            import a
        except ImportError:
            import b
        else:
            import c
        finally:
            import d
        match x:
            case 1:
                import e
        class K:
            def m(self):
                with ctx:
                    for i in y:
                        while z:
                            if q:
                                import f
                            else:
                                from g import h
        """
    )
    names = sorted(alias.name for node in slicing._imports(ast.parse(src).body) for alias in node.names)
    assert names == ["a", "b", "c", "d", "e", "f", "h"]


def test_parsing_skips_node_validation_and_leaves_it_on_for_everything_else():
    """Nodes the parser makes are not validated (valid by construction); a node built
    afterwards still is, and the parse is the validated parse."""
    import libcst as cst

    text = FIXTURES[0].read_text(encoding="utf-8")
    module, error = engine.parse(text, "t.py")
    assert error is None and module.code == text
    assert module.deep_equals(cst.parse_module(text))
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.CSTValidationError):
        cst.Integer("x")


GATE_CASES = sorted((Path(__file__).parent / "data" / "gate_cases").glob("*.py"))


@pytest.mark.parametrize("path", GATE_CASES, ids=lambda p: p.stem)
def test_the_gate_keeps_what_each_case_needs(path, monkeypatch):
    """Programs that once made the gate change findings (second pairs of eyes hunted
    them): a raise in a class body, a method rebinding a module name, a loss imported
    under another name, ``self.\\`` continued, non-ASCII and NFKC-normalised names (a
    function escaping by one), comments inside a call (16 lines of them between a name
    and its "("), a BOM, an import sharing its line with another statement, a call in
    a decorator, a walrus in one, a leaf made by ``w.requires_grad_()``, a method
    defined in an ``if`` of its class. Sliced however little the slice leaves out. The
    last line says what the program finds."""
    monkeypatch.setattr(slicing, "WHOLE_SHARE", 2.0)
    text = path.read_text(encoding="utf-8")
    on = _findings(text, ON)
    assert on == _findings(text, OFF)
    expected = re.search(r"# gate case, finds: (.*)\s*$", text).group(1).split()
    assert sorted({f[0] for f in on}) == ([] if expected == ["nothing"] else expected)


def test_user_inference_patterns_with_a_character_class_pass_the_text_gate():
    text = "import torch\n\n\ndef run_a(model, x):\n    return model(x)\n"
    on = replace(ON, inference_functions=("run_[ab]*",))
    found = _findings(text, on)
    assert found and found == _findings(text, replace(on, gate=False))


@pytest.mark.parametrize("text", [
    "'import torch\\n(x.parameters  ' + '#' * 4000 + '\\n)'",  # one way to match a line of '#'
    "'import torch\\n' + '# update the parameters\\n# and eval\\n' * 20000",  # not a scan per word
    "'import torch\\n' + '# A sentence.\\n' * 40000",
    "'import torch\\n' + ('x.backward\\n' + '# c\\n' * 15 + 'y\\n') * 5000",  # 31 pieces of gap, each time
    "'import torch\\n# ' + 'backward # ' * 200000",  # names inside one long comment line
    "'import torch\\nx = \"' + 'loss' * 500000 + '\"'",  # a loss name inside a long identifier run
    "'import torch\\n# ' + '的一是' * 200000",  # a long run of characters that are not ASCII
    # inference-named functions read alone: nested ones are read again (within a bound)
    "'import torch\\n' + ''.join(' ' * i + f'def evaluate{i}(x):\\n' for i in range(3000))",
    "'import torch\\n' + 'def evaluate(x):\\n    return x\\n' * 30000",
    "'import torch\\n' + ('x = a' + ' ' * 5000 + '\\\\\\n' * 20 + ' . eval(y)\\n') * 200",  # back to the dot
])
def test_the_text_gate_takes_linear_time_on_comments(text):
    """Comments may sit between a call's tokens (``model.parameters  # all``): matched
    one way only, and never scanned to the end of a long comment block (or line, or
    name) per word. (Inputs sized so that a quadratic scan runs past the timeout.)"""
    code = f"from scopelint.engine import Settings, might_fire\nmight_fire({text}, Settings())\nprint('done')\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "done" in out.stdout, out.stderr


@pytest.mark.parametrize("text", [
    "'import torch\\nwith torch.no_grad():\\n    y = ' + 'a' * 300000 + ' + 1\\n'",  # found by the battery's fuzzing
    "'import torch\\n' + ('with torch.no_grad():\\n    y = ' + 'a1' * 5000 + ' + f(x)\\n') * 30",
])
def test_names_called_without_grad_take_linear_time(text):
    """The project layer's scan of what is called with recording off
    (``slicing.names_called_without_grad``) on a long name that is not called."""
    code = f"from scopelint.core.slicing import names_called_without_grad as n\nprint(n({text}))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "frozenset()" in out.stdout or "'f'" in out.stdout, out.stderr


def test_the_walrus_flag_is_for_the_text_parsed():
    """``Whole.walrus`` says whether what LibCST parses may hold ``:=`` (then the binders
    are looked for in every expression): one in a unit left out does not count."""
    kept = textwrap.dedent(
        """\
        import torch

        def helper():
            return (z := 3)

        def train(model, opt, data):
            total = 0.0
            for x in data:
                opt.zero_grad()
                (loss := model(x).sum()).backward()
                opt.step()
                total += loss
            return total
        """
    )
    plan = _plan(kept)
    assert not _kept(plan, kept, "        def helper():") and plan.whole.walrus
    assert [f[0] for f in _findings(kept, ON)] == ["SL201"] == [f[0] for f in _findings(kept, OFF)]
    dropped = kept.replace("(loss := model(x).sum()).backward()", "loss = model(x).sum()\n        loss.backward()")
    plan = _plan(dropped)
    assert not _kept(plan, dropped, "        def helper():") and not plan.whole.walrus
    assert [f[0] for f in _findings(dropped, ON)] == ["SL201"] == [f[0] for f in _findings(dropped, OFF)]


# An inference-named function whose forward pass is in one of the file's functions that
# only it runs (``queries.run_only_from``): a helper, a method through an instance, a
# runner's callback. Written after the refactoring-invariance variants of
# fixtures/SL103/bad_torch_generate_alias.py, which lost their finding when the gate
# kept only inference functions that call a model themselves.
_REACHED = {
    "helper": """\
        def _logits(lm, tokens):
            return lm(tokens)

        def generate(lm, tokens):
            return _logits(lm, tokens).argmax(dim=-1)
        """,
    "method": """\
        class Step:
            def run(self, lm, tokens):
                return self.inner(lm, tokens)

            def inner(self, lm, tokens):
                return lm(tokens)

        def generate(lm, tokens):
            return Step().run(lm, tokens).argmax(dim=-1)
        """,
    "callback": """\
        def run(fn, *args):
            return fn(*args)

        def generate(lm, tokens):
            def step():
                return lm(tokens)
            return run(step).argmax(dim=-1)
        """,
}


@pytest.mark.parametrize("shape", sorted(_REACHED))
def test_an_inference_function_reaching_a_model_through_the_files_functions_anchors(shape):
    from scopelint.engine import might_fire

    text = "import torch\n\n\n" + textwrap.dedent(_REACHED[shape]) + "\n\nprint(generate(torch.nn.Linear(3, 4), torch.randn(2, 3)))\n"
    assert might_fire(text, ON)  # the text gate
    found = _findings(text, ON)
    assert [f[0] for f in found] == ["SL103"] and found == _findings(text, OFF)
    # What the helper calls is a method of the file, not a model: nothing reached.
    quiet = text.replace("lm(tokens)", "len(tokens)")
    assert _findings(quiet, ON) == [] == _findings(quiet, OFF)


def test_a_method_named_like_a_model_is_no_forward_pass():
    """torch/_inductor/codegen/wrapper.py: ``generate`` runs ``add_benchmark_harness``,
    which calls ``self.benchmark_compiled_module(output)``, a method of the same class,
    not a module: no SL103 there (it was one when the inference reach first went
    through helpers)."""
    text = textwrap.dedent("""\
        import torch


        class Wrapper:
            def benchmark_compiled_module(self, output):
                output.append("bench")

            def add_benchmark_harness(self, output):
                self.benchmark_compiled_module(output)

            def generate(self, output):
                self.add_benchmark_harness(output)
                return output


        print(Wrapper().generate([]), torch.ones(1))
        """)
    assert _findings(text, ON) == [] == _findings(text, OFF)


def test_a_helper_also_called_by_its_name_elsewhere_is_no_inference_code():
    """``queries.run_only_from`` and the gate's ``_names_run_only_from`` agree: a method
    that ``generate`` runs, but that a call on an object the flow does not know
    (``worker.step(...)``) may run too, is not inference code."""
    text = "import torch\n\n\n" + textwrap.dedent(_REACHED["method"]) + textwrap.dedent("""\

        def train(worker, lm, tokens):
            return worker.inner(lm, tokens).sum().backward()


        print(generate(torch.nn.Linear(3, 4), torch.randn(2, 3)))
        """)
    assert _findings(text, ON) == [] == _findings(text, OFF)
    alone = text.replace("worker.inner(lm, tokens)", "lm(tokens)")
    assert [f[0] for f in _findings(alone, ON)] == ["SL103"] and _findings(alone, ON) == _findings(alone, OFF)


def test_mxnet_record_returned_to_a_caller_that_backpropagates_is_quiet():
    """SL103 (MXNet) now flags ``autograd.record()`` in a helper whose result leaves it
    only by being returned, when no caller backpropagates it
    (``queries.returned_to_no_backward``): fixtures/SL103/bad_mxnet_score_helper_
    returns_recorded.py. Passed on through a tuple and backpropagated at module level,
    it is training, and silent; with the backward gone, it is reported."""
    from pathlib import Path

    bad = (Path(__file__).parent.parent / "fixtures/SL103/bad_mxnet_score_helper_returns_recorded.py").read_text()
    trained = bad.replace('print("ranking"', 'with autograd.record():\n    loss = (scores * 2).sum()\nloss.backward()\nprint("ranking"')
    assert _findings(trained, ON) == [] == _findings(trained, OFF)
    indexed = trained.replace("order, scores = rank(net, candidates)", "pair = rank(net, candidates)\norder, scores = pair[0], pair[1]")
    assert _findings(indexed, ON) == [] == _findings(indexed, OFF)
    assert [f[0] for f in _findings(bad, ON)] == ["SL103"] and _findings(bad, ON) == _findings(bad, OFF)


def test_sl207_reaches_a_helper_that_only_the_evaluation_loop_runs():
    """SL207's "evaluated under no_grad, never put in eval()" in a helper that only a
    loop over held-out data calls, under that loop's ``no_grad``
    (``queries.only_called_where``), when what made the model is known
    (``model_made_known``); no fix there (an ``eval()`` in the helper would leave the
    next epoch training in eval mode)."""
    text = textwrap.dedent("""\
        import torch
        from torch import nn


        def forward_batch(model, data):
            return model(data)


        def fit(model, optimizer, train_loader, test_loader):
            for data, target in train_loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(data), target).backward()
                optimizer.step()
            with torch.no_grad():
                for data, target in test_loader:
                    print(forward_batch(model, data).argmax(1).tolist())


        net = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.5), nn.Linear(8, 3))
        batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,)))]
        fit(net, torch.optim.SGD(net.parameters(), lr=0.1), batches, batches)
        """)
    found = _findings(text, ON)
    assert [(f[0], f[4]) for f in found] == [("SL207", None)] and found == _findings(text, OFF)
    assert "return model(data)" in text.splitlines()[found[0][1][0] - 1]
    # A model nothing here says the making of: no guess.
    unknown = text.replace("fit(net, torch.optim.SGD(net.parameters(), lr=0.1), batches, batches)", "fit(load(), opt, batches, batches)")
    assert _findings(unknown, ON) == [] == _findings(unknown, OFF)
    # The helper also run by the training loop: not evaluation code.
    shared = text.replace("nn.functional.cross_entropy(model(data), target)", "nn.functional.cross_entropy(forward_batch(model, data), target)")
    assert _findings(shared, ON) == [] == _findings(shared, OFF)


def test_a_loop_over_a_written_out_list_runs_its_body():
    """A ``for`` over a list or tuple written out with items runs at least once
    (``flow._non_empty_literal``): the losses backpropagated in it were, and a
    ``zero_grad()`` after it clears their gradients before the step (SL203). Over an
    iterable the flow knows nothing of, the loop may not run: no finding."""
    text = textwrap.dedent("""\
        import torch

        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            out = model(torch.randn(4, 3))
            losses = [out.pow(2).mean(), out.abs().mean()]
            for loss in losses:
                loss.backward()
            opt.zero_grad()
            opt.step()
        """)
    found = _findings(text, ON)
    assert [f[0] for f in found] == ["SL203"] and found == _findings(text, OFF)
    unknown = text.replace("losses = [out.pow(2).mean(), out.abs().mean()]", "losses = pick(out)")
    assert _findings(unknown, ON) == [] == _findings(unknown, OFF)


def test_a_function_reached_by_a_computed_name_has_callers_not_seen():
    """``getattr(self, "_" + kind)(batch)`` or ``globals()[name](...)`` may run any of
    the file's functions: none is inference code by its callers here (found in review:
    ``step`` trains through ``_forward``)."""
    text = textwrap.dedent("""\
        import torch


        class Trainer:
            def __init__(self, model):
                self.model = model

            def _forward(self, batch):
                return self.model(batch)

            def evaluate(self, batch):
                return self._forward(batch)

            def step(self, kind, batch):
                loss = getattr(self, "_" + kind)(batch).mean()
                loss.backward()


        print(Trainer(torch.nn.Linear(3, 1)).evaluate(torch.randn(2, 3)))
        """)
    assert _findings(text, ON) == [] == _findings(text, OFF)
    literal = text.replace('getattr(self, "_" + kind)(batch)', 'getattr(self, "_other")(batch)')
    assert [f[0] for f in _findings(literal, ON)] == ["SL103"] and _findings(literal, ON) == _findings(literal, OFF)


def test_a_function_handed_to_a_runner_keeps_where_it_is_handed():
    """A module-level function referenced only as an argument escapes by the counts, but
    the flow follows it into a local runner that only calls it (a callback): the gate
    keeps the statement that hands it over and the runner, or the callback's backward
    loses its entry state (found on issue 18's closure variants: SL101 and SL103 of MXNet
    fixtures were found only with the gate off)."""
    text = textwrap.dedent("""\
        from mxnet import autograd, nd

        w = nd.array([1.0, 2.0])
        w.attach_grad()
        with autograd.record():
            fit = (w * w).sum()
            with autograd.pause():
                penalty = 0.1 * (w * w).sum()


        def run(fn, *args):
            return fn(*args)


        def step():
            autograd.backward([fit, penalty])


        run(step)
        """)
    kept = slicing.plan(text, ON.inference_functions).source
    assert "run(step)" in kept and "return fn(*args)" in kept
    found = _findings(text, ON)
    assert [f[0] for f in found] == ["SL101"] and found == _findings(text, OFF)
    # handed to something that is no local function: unknown, silent either way
    elsewhere = text.replace("run(step)", "import threading\nthreading.Thread(target=step).start()")
    assert _findings(elsewhere, ON) == [] == _findings(elsewhere, OFF)


@pytest.mark.parametrize("call", ["run(step)", "step()"])
def test_a_called_function_keeps_what_binds_the_module_names_it_reads(call):
    """A function's body runs in the module walk where it is called (or handed to a
    runner): the module-level names it reads hold the values they have there. The gate
    keeps their binders, or ``bias_net`` is a name nobody knows and the ``.data`` write
    of its output is no finding (found on issue 18's closure variants: SL209 was found
    only with the gate off)."""
    text = textwrap.dedent("""\
        import torch
        from torch import nn

        bias_net = nn.Linear(3, 5)
        head = nn.Linear(10, 5)
        context = torch.randn(3)


        def run(fn):
            return fn()


        def step():
            head.bias.data = bias_net(context)


        CALL
        out = head(torch.randn(4, 10)).relu().sum()
        out.backward()
        print(bias_net.weight.grad is None)
        """).replace("CALL", call)
    kept = slicing.plan(text, ON.inference_functions).source
    assert "bias_net = nn.Linear(3, 5)" in kept and "context = torch.randn(3)" in kept
    found = _findings(text, ON)
    assert [f[0] for f in found] == ["SL209"] and found == _findings(text, OFF)


@pytest.mark.parametrize("call", ["run(step)", "step()"])
def test_a_called_function_that_changes_a_module_name_is_kept_with_its_binder(call):
    """What a called function does to a module-level name (``optimizer.step()``) is done
    where it is called: the binder of the name needs the function, and the function its
    call sites, though neither holds an anchor (issue 18's closure variant of
    ``bad_actor_critic_shared_trunk``: SL210 only with the gate off)."""
    text = textwrap.dedent("""\
        import torch
        from torch import nn

        trunk = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8))
        policy = nn.Linear(8, 2)
        value = nn.Linear(8, 1)
        optimizer = torch.optim.Adam(list(trunk.parameters()) + list(policy.parameters()) + list(value.parameters()))
        features = trunk(torch.randn(5, 4))
        critic_loss = value(features).pow(2).mean()
        actor_loss = policy(features).sum()
        optimizer.zero_grad()
        critic_loss.backward(retain_graph=True)


        def run(fn):
            return fn()


        def step():
            optimizer.step()


        CALL
        actor_loss.backward()
        optimizer.step()
        """).replace("CALL", call)
    kept = slicing.plan(text, ON.inference_functions).source
    assert "    optimizer.step()" in kept and call in kept
    found = _findings(text, ON)
    assert [f[0] for f in found] == ["SL210"] and found == _findings(text, OFF)
    # a function nobody calls (nor hands to a runner) changes nothing where it is defined
    uncalled = text.replace("\n" + call + "\n", "\n")
    assert uncalled.count("optimizer.step()") == 2
    assert "    optimizer.step()" not in slicing.plan(uncalled, ON.inference_functions).source
