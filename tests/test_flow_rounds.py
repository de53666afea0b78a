"""Analyzer.run replays a unit's walk from an earlier round when nothing the walk
reads has changed (flow._Walk). The facts must be exactly those of walking every
unit again every round (``Analyzer.REUSE_WALKS = False``): the same facts in the same
order, the same states and sequence numbers, and values of the same shape, shared
alike (rules compare values by identity, across functions too)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from fixtures_util import ROOT, all_fixtures
from scopelint.core import flow
from scopelint.core.flow import Analyzer, Facts

FILES = all_fixtures() + sorted((ROOT / "demo").glob("*.py"))


def signature(facts: Facts) -> list:
    """All the facts say, with values numbered in the order first seen: two analyses
    of one module have the same signature iff their facts are the same up to which
    objects hold them (nodes are compared by identity)."""
    labels = {}
    table = []
    index = {id(f): i for i, f in enumerate(facts.functions)}

    def label(v):
        if v is None:
            return None
        if id(v) not in labels:
            todo = [v]
            while todo:
                x = todo.pop()
                if id(x) in labels:
                    continue
                labels[id(x)] = len(table)
                table.append(x)
                todo.extend(reversed(x.parents))
        return labels[id(v)]

    def func(f):
        return None if f is None else index[id(f)]

    def ids(nodes):
        return tuple(id(n) for n in nodes)

    out = [("frameworks", tuple(sorted(facts.frameworks)))]
    for c in facts.calls:
        out.append((
            "call", id(c.node), c.qname, c.callee, c.method, c.state, func(c.func), label(c.receiver),
            tuple(label(a) for a in c.args), c.statement, tuple(c.in_eval),
            tuple((k, id(n)) for k, n in c.maybe_eval.items()), ids(c.loops), c.grads, func(c.target),
            label(c.callee_value), c.seq,
        ))
    for b in facts.backwards:
        out.append((
            "backward", id(b.node), b.api, tuple(label(v) for v in b.values), b.state, func(b.func),
            tuple(sorted(b.frameworks)), ids(b.loops), b.seq,
        ))
    for s in facts.scopes:
        out.append(("scope", id(s.item), id(s.with_node), s.api, s.called, s.before, s.inside, func(s.func)))
    for m in facts.mutations:
        out.append((
            "mutation", id(m.node), m.kind, m.key, label(m.before), label(m.value), m.state, func(m.func),
            ids(m.loops), m.seq,
        ))
    for e in facts.effects:
        out.append(("effect", id(e.node), e.callee, e.state, func(e.func), label(e.receiver), ids(e.loops), e.grads,
                    func(e.via), id(e.inner), e.seq))
    for f in facts.functions:
        out.append((
            "function", f.name, f.entry, tuple(f.leaves_eval), tuple((k, label(v)) for k, v in f.params.items()),
            f.returns_left,
        ))
    for v in table:  # grows while read: every ancestor gets its row
        out.append((
            "value", None if v.node is None else id(v.node), tuple(v.rec.items()),
            tuple(labels[id(p)] for p in v.parents), v.inference, v.pure, v.tags, v.state, tuple(sorted(vars(v))),
        ))
    return out


def analyse(module: cst.Module, reuse: bool, eager: bool = True) -> Facts:
    analyzer = Analyzer(module)
    analyzer.REUSE_WALKS = reuse
    analyzer.EAGER_INPUTS = eager
    return analyzer.run()


def assert_same_facts(module: cst.Module) -> None:
    for eager in (False, True):  # (in the file's order, and callers first: ``EAGER_INPUTS``)
        walked = signature(analyse(module, False, eager))
        replayed = signature(analyse(module, True, eager))
        assert len(replayed) == len(walked)
        for a, b in zip(replayed, walked):
            assert a == b
        assert replayed == walked


@pytest.fixture
def replays(monkeypatch):
    """(seq moved by, with parameter values) for every walk replayed."""
    seen = []
    replay = flow._Walk.replay

    def spy(walk, seq_start, mapping, params):
        seen.append((seq_start - walk.seq_start, bool(params)))
        return replay(walk, seq_start, mapping, params)

    monkeypatch.setattr(flow._Walk, "replay", spy)
    return seen


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_replayed_walks_give_the_facts_of_walking_again(path):
    assert_same_facts(cst.parse_module(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_callers_first_with_their_inputs_gives_the_findings_of_the_file_order(path, monkeypatch):
    """``Analyzer.EAGER_INPUTS``: functions walked after their callers, with the inputs
    those walks give them, then numbered in the file's order. The states, summaries and
    sequence numbers are those of walking in the file's order, and so are the findings.
    (The values a callee's parameters hold are the caller's of the same round, not
    copies from the round before: fewer objects, the same facts about them.)"""
    from scopelint.engine import Settings, lint_source

    text = path.read_text(encoding="utf-8")
    module = cst.parse_module(text)
    runs = {}
    for eager in (False, True):
        facts = analyse(module, True, eager=eager)
        runs[eager] = (
            [(id(c.node), c.state, c.seq, c.grads, c.in_eval) for c in facts.calls],
            [(id(b.node), b.state, b.seq) for b in facts.backwards],
            [(id(m.node), m.kind, m.state, m.seq) for m in facts.mutations],
            [(f.name, f.entry, f.entry_eval, f.leaves_eval, sorted(f.params), f.returns, f.grad_effects) for f in facts.functions],
        )
        monkeypatch.setattr(Analyzer, "EAGER_INPUTS", eager)
        runs[eager, "findings"] = [(f.code, f.start, f.end, f.message, f.fix) for f in lint_source(text, str(path), Settings()).findings]
    assert runs[True] == runs[False]
    assert runs[True, "findings"] == runs[False, "findings"]


def test_walks_are_replayed(replays):
    for path in FILES:
        analyse(cst.parse_module(path.read_text(encoding="utf-8")), True)
    assert len(replays) > 100
    assert any(with_params for _, with_params in replays)


def test_replayed_walk_takes_its_sequence_numbers_from_this_round(replays):
    # Round 2 walks ``step`` with a leaf for ``w``: rebinding it is one more fact than
    # in round 1, so ``later`` (replayed) starts one number later.
    src = """
        import torch

        def step(w):
            w = w - 0.1 * w.grad
            return w

        def later():
            x = torch.ones(2)
            x.add_(1)
            x.backward()

        w = torch.zeros(2, requires_grad=True)
        step(w)
    """
    module = cst.parse_module(textwrap.dedent(src))
    assert_same_facts(module)
    replays.clear()
    facts = analyse(module, True, eager=False)  # (callers first, ``step`` has its inputs in round 1)
    assert any(moved for moved, _ in replays)
    seqs = [f.seq for f in (*facts.calls, *facts.backwards, *facts.mutations)]
    assert len(seqs) == len(set(seqs))


def test_replayed_values_are_new_objects_each_round():
    # The module's walk is replayed in round 2; ``train`` is walked again with values
    # the module made in round 1. Copied, the module's facts do not share them.
    src = """
        import torch

        def scale(x):
            return x * 2

        def train(x):
            y = scale(x)
            y.sum().backward()

        train(torch.ones(2, requires_grad=True))
    """
    assert_same_facts(cst.parse_module(textwrap.dedent(src)))


def test_chain_of_calls_runs_every_round():
    # Each round the entry state moves one call further down the chain; ``other`` and
    # ``helper`` read nothing that changes and are replayed.
    src = """
        import torch
        from mxnet import autograd, nd

        def a(x):
            return b(x + 1)

        def b(x):
            with torch.no_grad():
                y = c(x)
            return y

        def c(x):
            return d(x) * 2

        def d(x):
            x.add_(1)
            return x.sum()

        def helper(net, x):
            net.eval()
            return net(x)

        def other(net):
            z = nd.ones(2)
            z.attach_grad()
            with autograd.record():
                out = helper(net, z)
            out.backward()
            w = z
            w = w * 2
            total = 0
            for i in range(3):
                total += out
            return total

        a(torch.ones(2, requires_grad=True))
    """
    assert_same_facts(cst.parse_module(textwrap.dedent(src)))


def test_parameter_values_of_another_shape_are_walked_again():
    # ``inner`` enters in the state ``outer`` sets, whatever ``outer``'s entry is; its
    # parameter has the same name every round, but holds a value that left the graph
    # only from round 3 on (round 2 walked ``outer`` with the module's argument).
    # ``first``/``second``/``third`` take the rounds that far.
    src = """
        import torch
        from mxnet import autograd

        def first(x):
            return second(x)

        def second(x):
            return third(x)

        def third(x):
            return x * 2

        def outer(x):
            with torch.no_grad(), autograd.pause():
                y = inner(x)
            return y

        def inner(x):
            x.sum()
            return x

        first(torch.ones(2))
        outer(torch.ones(2).item())
    """
    module = cst.parse_module(textwrap.dedent(src))
    assert_same_facts(module)
    inner = next(f for f in analyse(module, True).functions if f.name == "inner")
    assert inner.returns_left
