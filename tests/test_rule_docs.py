"""Each rule documents itself, and its own bad/good examples are checked."""

from __future__ import annotations

import textwrap

import pytest

from scopelint.engine import Settings, lint_source
from scopelint.preview import is_preview
from scopelint.rules import ALL_RULES, OPT_IN

EVERY_RULE = Settings(select=tuple(ALL_RULES))  # the opt-in ones (SL001) too


@pytest.mark.parametrize("code", sorted(ALL_RULES))
def test_bad_example_is_flagged_by_its_rule(code):
    rule = ALL_RULES[code]
    found = lint_source(textwrap.dedent(rule.bad), f"{code}_bad.py", EVERY_RULE).findings
    assert code in {f.code for f in found}, [f"{f.code} {f.message}" for f in found]


@pytest.mark.parametrize("code", sorted(ALL_RULES))
def test_good_example_is_clean(code):
    rule = ALL_RULES[code]
    found = lint_source(textwrap.dedent(rule.good), f"{code}_good.py", EVERY_RULE).findings
    assert not found, [f"{f.code} {f.message}" for f in found]


@pytest.mark.parametrize("code", sorted(ALL_RULES))
def test_documentation_has_every_part(code):
    rule = ALL_RULES[code]
    doc = rule.documentation()
    for part in (rule.name, code, "## What it does", "## Why is this bad?", "## Example", "Use instead:", "## How to fix"):
        assert part in doc
    assert rule.severity in ("error", "warning", "info")
    assert rule.url() is None  # no documentation address set in a checkout: no URL (tests/test_docs.py)


@pytest.mark.parametrize("code", sorted(ALL_RULES))
def test_documented_fix_is_the_fix_findings_carry(code):
    """`fixable` (what `scopelint rule` says) is the applicability of the fixes the
    rule's findings carry over its bad fixtures, and a fixable rule fixes something."""
    from fixtures_util import FIXTURES

    rule = ALL_RULES[code]
    carried = set()
    # SL001 reads comments, not programs: no runnable fixtures (tests/test_noqa.py); its bad example.
    texts = [(p.read_text(encoding="utf-8"), str(p)) for p in sorted((FIXTURES / code).glob("bad_*.py"))]
    if code in OPT_IN:
        texts.append((textwrap.dedent(rule.bad), f"{code}_bad.py"))
    for text, name in texts:
        for f in lint_source(text, name, EVERY_RULE).findings:
            if f.code == code and f.fix is not None:
                carried.add(f.fix.applicability)
    assert carried <= {rule.fixable}, (rule.fixable, carried)
    assert bool(carried) == (rule.fixable is not None), (rule.fixable, carried)
    doc = rule.documentation()
    assert ("No automatic fix." in doc) == (rule.fixable is None)


def test_catalog_matches_the_spec():
    assert sorted(ALL_RULES) == [
        "SL001",
        "SL101", "SL102", "SL103", "SL104", "SL105", "SL106", "SL107", "SL108",
        "SL201", "SL202", "SL203", "SL204", "SL205", "SL206", "SL207", "SL208", "SL209", "SL210", "SL211",
        "SL301", "SL302", "SL303", "SL304",
    ]


def test_opt_in_rules_are_the_rules_not_in_the_default_selection():
    """The catalog names the opt-in rules without importing them; each rule says it too."""
    from scopelint.config import Resolver

    assert {code for code in ALL_RULES if not ALL_RULES[code].default} == set(OPT_IN) == {"SL001"}
    selected = Resolver().settings_for(__import__("pathlib").Path("x.py")).select
    assert "SL001" not in selected and set(Settings().select) == set(ALL_RULES) - OPT_IN
    # (what a run selects leaves the preview rules out too: docs/preview.md)
    assert set(selected) == set(ALL_RULES) - OPT_IN - {c for c in ALL_RULES if is_preview(c)}
    assert "Not selected by default" in ALL_RULES["SL001"].documentation()
