"""The rule catalog in the repository: docs/rules/ generated from the rule classes,
rule URLs that resolve to those pages, and `scopelint rule` (list, code, name, json)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from scopelint import DOCS_URL_ENV, docs_dir, docs_url
from scopelint.catalog import SyntaxErrorCode, documented, lookup
from scopelint.docgen import main as docgen_main, pages, stale
from scopelint.engine import lint_source
from scopelint.rules import ALL_RULES
from test_cli import run, run_process

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def test_docs_folder_is_the_repositorys():
    """A checkout (editable install) reads the repository's docs/; an installed package
    (the sdist's tests run against one: tests/test_release.py) its copy of the same pages."""
    here = Path(docs_dir()).resolve()
    if here != DOCS:
        assert here.parts[-2:] == ("scopelint", "docs")
        for rel in ("rules/SL101.md", "rules/index.md", "preview.md", "model.md"):
            assert (here / rel).read_text(encoding="utf-8") == (DOCS / rel).read_text(encoding="utf-8"), rel


def test_generated_pages_are_in_sync_with_the_rule_classes():
    """Fails when a rule's docs changed (or a rule came or went) without
    `python -m scopelint.docgen`."""
    assert stale(DOCS) == [], "run `python -m scopelint.docgen` and commit docs/rules/"


def test_every_code_has_a_page_and_an_index_row():
    index = (DOCS / "rules" / "index.md").read_text(encoding="utf-8")
    codes = set(documented())
    assert codes == set(ALL_RULES) | {"SL000"}
    assert {p.stem for p in (DOCS / "rules").glob("SL*.md")} == codes
    rows = re.findall(r"^\| \[(SL\d{3})\]\((SL\d{3})\.md\) \| ([a-z-]+) \|", index, re.M)
    assert [(c, c, documented()[c].name) for c in sorted(codes)] == rows
    page = (DOCS / "rules" / "SL101.md").read_text(encoding="utf-8")
    assert ALL_RULES["SL101"].documentation().strip() in page
    assert "(../model.md)" in page and (DOCS / "model.md").is_file()


def test_check_mode_reports_a_stale_page_and_write_mode_repairs_it(tmp_path, capsys):
    root = tmp_path / "docs"
    assert docgen_main(["--root", str(root)]) == 0
    assert stale(root) == []
    (root / "rules" / "SL107.md").write_text("edited by hand\n", encoding="utf-8")
    (root / "rules" / "SL999.md").write_text("a rule that is gone\n", encoding="utf-8")
    assert docgen_main(["--check", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "SL107.md" in err and "SL999.md" in err
    assert docgen_main(["--root", str(root)]) == 0
    assert stale(root) == [] and not (root / "rules" / "SL999.md").exists()
    assert (root / "rules" / "SL107.md").read_text(encoding="utf-8") == pages()["rules/SL107.md"]


def test_a_new_rule_gets_a_page(monkeypatch, tmp_path):
    """The pages come from the registry (``documented()``), not a fixed list."""
    import scopelint.docgen as docgen

    class NewRule(SyntaxErrorCode):
        code, name, summary = "SL001", "new-rule", "A rule added later."

    monkeypatch.setattr(docgen, "documented", lambda: {**documented(), "SL001": NewRule})
    assert "rules/SL001.md" in docgen.pages() and "[SL001](SL001.md)" in docgen.pages()["rules/index.md"]
    assert "rules/SL001.md" in docgen.stale(DOCS)


@pytest.mark.parametrize("code", sorted(documented()))
def test_rule_url_is_its_page_on_the_site_or_none(code, monkeypatch):
    """Issue 43: a rule's URL is its page on the documentation site (``rules/SL101/``, the
    layout ``python -m scopelint.site`` builds), never a ``file://`` path of the machine
    that ran the check; with no address configured (a checkout), there is none."""
    monkeypatch.delenv(DOCS_URL_ENV, raising=False)
    assert documented()[code].url() is None
    monkeypatch.setenv(DOCS_URL_ENV, "https://example.org/scopelint/")
    url = documented()[code].url()
    assert urlparse(url).scheme == "https" and url == f"https://example.org/scopelint/rules/{code}/"
    assert (DOCS / "rules" / f"{code}.md").is_file()  # (the page it is built from)


def test_docs_url_is_configurable(monkeypatch):
    monkeypatch.setenv(DOCS_URL_ENV, "https://example.org/scopelint/blob/main/docs/rules/{code}.md")
    assert ALL_RULES["SL101"].url() == "https://example.org/scopelint/blob/main/docs/rules/SL101.md"
    monkeypatch.setenv(DOCS_URL_ENV, "https://example.org/docs")
    assert docs_url("sl203") == "https://example.org/docs/rules/SL203/"


def test_syntax_error_code_is_documented_by_its_own_example():
    assert lookup("SL000") is SyntaxErrorCode and lookup("syntax-error") is SyntaxErrorCode
    bad = lint_source(textwrap.dedent(SyntaxErrorCode.bad), "bad.py").findings
    assert [f.code for f in bad] == ["SL000"]
    assert lint_source(textwrap.dedent(SyntaxErrorCode.good), "good.py").findings == []


# --- scopelint rule ----------------------------------------------------------------------------
def test_rule_without_a_code_lists_every_rule(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule"], tmp_path, monkeypatch, capsys)
    assert rc == 0
    lines = out.splitlines()
    assert len(lines) == len(documented())
    for line, (code, rule) in zip(lines, documented().items()):
        assert line.split()[:2] == [code, rule.name] and line.endswith(rule.summary)


def test_rule_sl000_and_lookup_by_name(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule", "SL000"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and out.startswith("# syntax-error (SL000)") and "## Why is this bad?" in out
    rc, by_name, _ = run(["rule", "backward-on-untracked-value"], tmp_path, monkeypatch, capsys)
    rc2, by_code, _ = run(["rule", "SL101"], tmp_path, monkeypatch, capsys)
    assert rc == rc2 == 0 and by_name == by_code and "(SL101)" in by_name


def test_rule_json_has_ruffs_shape(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule", "SL107", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert rc == 0
    data = json.loads(out)
    assert {"name", "code", "linter", "summary", "fix", "explanation", "preview"} <= set(data)
    assert data["code"] == "SL107" and data["name"] == "grad-context-not-called" and data["linter"] == "scopelint"
    assert data["fix"] == "Fix is always available." and data["fix_applicability"] == "safe"
    assert data["explanation"] == ALL_RULES["SL107"].documentation()
    rc, out, _ = run(["rule", "SL101", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert json.loads(out)["fix"] == "Fix is sometimes available."
    rc, out, _ = run(["rule", "SL000", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert json.loads(out)["fix"] == "Fix is not available."
    rc, out, _ = run(["rule", "--all", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and [d["code"] for d in json.loads(out)] == list(documented())


def test_rule_all_text_includes_sl000(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule", "--all"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and "# syntax-error (SL000)" in out and out.count("## What it does") == len(documented())


def test_unknown_rule_names_the_way_out(tmp_path):
    proc = run_process(["rule", "not-a-rule"], tmp_path)
    assert proc.returncode == 2 and b"unknown rule `not-a-rule`" in proc.stderr and b"scopelint rule" in proc.stderr
    proc = run_process(["rule", "grad-context-not-called", "--output-format", "json"], tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["code"] == "SL107"
