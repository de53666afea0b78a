"""Every fixture, both ways: bad ones yield exactly their `# expect:` findings, good
ones yield nothing. The corpus itself must hold enough of each per rule."""

from __future__ import annotations

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


@pytest.mark.parametrize("code", sorted(ALL_RULES))
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
