"""`--output-format sarif` and `--output-format github`.

The SARIF schema in tests/data/sarif-schema-2.1.0.json is the OASIS SARIF 2.1.0 JSON
schema ($id https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/
sarif-schema-2.1.0.json), vendored unchanged from the sdist of the PyPI package
`sarif-pydantic` 0.6.2, which ships it at its root.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from scopelint import __version__
from scopelint.finding import Finding
from scopelint.output import github_line
from scopelint.rules import ALL_RULES
from test_cli import CLEAN, MX_BAD, TORCH_BAD, run, run_process, write

jsonschema = pytest.importorskip("jsonschema")

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
NOTEBOOK = {
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": ["import torch\n", "with torch.no_grad:\n", "    pass\n"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$id"].endswith("sarif-schema-2.1.0.json") and "2.1.0" in schema["title"]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def sarif(args, cwd, monkeypatch, capsys, stdin=None):
    rc, out, err = run(["check", "--output-format", "sarif", *args], cwd, monkeypatch, capsys, stdin=stdin)
    return rc, json.loads(out), err


def assert_valid(validator, log):
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def apply_replacements(text: str, replacements) -> str:
    lines = text.splitlines(True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(row, col):
        return starts[row - 1] + col - 1

    for rep in sorted(replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                      reverse=True):
        reg = rep["deletedRegion"]
        a, b = offset(reg["startLine"], reg["startColumn"]), offset(reg["endLine"], reg["endColumn"])
        text = text[:a] + rep["insertedContent"]["text"] + text[b:]
    return text


# --- SARIF ----------------------------------------------------------------------------------
@pytest.fixture
def project(tmp_path):
    return write(tmp_path, {
        "a.py": TORCH_BAD,
        "my dir/b.py": MX_BAD,
        "syntax.py": "import torch\ndef f(:\n",
        "clean.py": CLEAN,
        "n.ipynb": json.dumps(NOTEBOOK),
    })


def test_sarif_validates_and_describes_every_rule(project, monkeypatch, capsys, validator):
    rc, log, err = sarif([], project, monkeypatch, capsys)
    assert rc == 1 and err == ""
    assert_valid(validator, log)
    assert log["version"] == "2.1.0" and log["$schema"].startswith("https://")
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "scopelint" and driver["version"] == __version__
    # Issue 43: no documentation address is set in a checkout, so no invented informationUri
    # and no file:// helpUri (dead once uploaded); each rule's page is in help.markdown.
    assert "informationUri" not in driver
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(ALL_RULES) <= set(rules)
    for code, rule in ALL_RULES.items():
        desc = rules[code]
        assert desc["name"] == rule.name
        assert desc["shortDescription"]["text"] and desc["fullDescription"]["text"]
        assert "helpUri" not in desc and desc["help"]["markdown"] == rule.documentation()
        expected = {"error": "error", "warning": "warning", "info": "note"}[rule.severity]
        assert desc["defaultConfiguration"]["level"] == expected
    assert len(rules) == len(driver["rules"])  # ids unique


def test_sarif_links_each_rule_to_the_configured_site(project, monkeypatch, capsys, validator):
    """With a documentation address (``docs-url``; SCOPELINT_DOCS_URL wins over it), each
    rule's helpUri is its page on the site and informationUri the site (ruff's SARIF links
    rules to docs.astral.sh/ruff/rules/...)."""
    (project / "pyproject.toml").write_text('[tool.scopelint]\ndocs-url = "https://docs.example.org/scopelint/"\n')
    monkeypatch.delenv("SCOPELINT_DOCS_URL", raising=False)
    rc, log, _ = sarif([], project, monkeypatch, capsys)
    assert_valid(validator, log)
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.org/scopelint/"
    rules = {r["id"]: r for r in driver["rules"]}
    assert rules["SL107"]["helpUri"] == "https://docs.example.org/scopelint/rules/SL107/"
    monkeypatch.setenv("SCOPELINT_DOCS_URL", "https://elsewhere.example.org/{code}.html")
    rc, log, _ = sarif([], project, monkeypatch, capsys)
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["SL104"]["helpUri"] == "https://elsewhere.example.org/SL104.html"


def test_sarif_results(project, monkeypatch, capsys, validator):
    rc, log, _ = sarif([], project, monkeypatch, capsys)
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    results = run_["results"]
    by_uri = {}
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["message"]["text"]
        loc = r["locations"][0]["physicalLocation"]
        by_uri[(loc["artifactLocation"]["uri"], r["ruleId"])] = (r, loc)
    assert set(by_uri) == {("a.py", "SL107"), ("my%20dir/b.py", "SL104"), ("syntax.py", "SL000"), ("n.ipynb", "SL107")}
    r, loc = by_uri["a.py", "SL107"]
    assert r["level"] == "error"
    assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert loc["region"] == {"startLine": 2, "startColumn": 6, "endLine": 2, "endColumn": 19}
    r, loc = by_uri["my%20dir/b.py", "SL104"]
    assert r["level"] == "note"  # info -> note
    r, loc = by_uri["syntax.py", "SL000"]
    assert r["level"] == "error" and loc["region"]["startLine"] == 2 and loc["region"]["startColumn"] == 7
    srcroot = run_["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert srcroot.startswith("file://") and srcroot.endswith("/")
    assert srcroot == Path(os.getcwd()).as_uri() + "/"


def test_sarif_fixes_replace_the_right_text(project, monkeypatch, capsys, validator):
    rc, log, _ = sarif(["a.py"], project, monkeypatch, capsys)
    (result,) = log["runs"][0]["results"]
    (fix,) = result["fixes"]
    assert fix["description"]["text"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "a.py"
    assert apply_replacements(TORCH_BAD, change["replacements"]) == CLEAN


def test_sarif_without_fixes_has_no_fixes_key(tmp_path, monkeypatch, capsys, validator):
    write(tmp_path, {"s.py": "import torch\ndef f(:\n"})
    rc, log, _ = sarif([], tmp_path, monkeypatch, capsys)
    (result,) = log["runs"][0]["results"]
    assert "fixes" not in result


def test_sarif_clean_project(tmp_path, monkeypatch, capsys, validator):
    write(tmp_path, {"ok.py": CLEAN})
    rc, log, _ = sarif([], tmp_path, monkeypatch, capsys)
    assert rc == 0
    assert_valid(validator, log)
    assert log["runs"][0]["results"] == []
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) >= len(ALL_RULES)


def test_sarif_file_outside_the_cwd_gets_an_absolute_uri(tmp_path, monkeypatch, capsys, validator):
    write(tmp_path, {"outside/a.py": TORCH_BAD, "cwd/.keep": ""})
    rc, log, _ = sarif([str(tmp_path / "outside" / "a.py")], tmp_path / "cwd", monkeypatch, capsys)
    assert_valid(validator, log)
    loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": (tmp_path / "outside" / "a.py").as_uri()}


def test_sarif_stdin_and_severity_override(tmp_path, monkeypatch, capsys, validator):
    write(tmp_path, {"pyproject.toml": '[tool.scopelint.severity]\nSL107 = "warning"\n'})
    rc, log, _ = sarif(["-", "--stdin-filename", "pkg/m.py"], tmp_path, monkeypatch, capsys, stdin=TORCH_BAD.encode())
    assert_valid(validator, log)
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "pkg/m.py", "uriBaseId": "%SRCROOT%"}


def test_sarif_reports_internal_errors_as_notifications(tmp_path, monkeypatch, capsys, validator):
    write(tmp_path, {"mx.py": MX_BAD, "a.py": TORCH_BAD})
    monkeypatch.setattr(ALL_RULES["SL104"], "check", lambda self, ctx: 1 / 0)
    rc, log, err = sarif(["--jobs", "1"], tmp_path, monkeypatch, capsys)
    assert rc == 2 and "mx.py" in err
    assert_valid(validator, log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert any("mx.py" in n["message"]["text"] for n in invocation["toolExecutionNotifications"])
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["SL107"]


def test_sarif_end_to_end(project, validator):
    proc = run_process(["check", "--output-format", "sarif", "--jobs", "2"], project)
    assert proc.returncode == 1
    assert_valid(validator, json.loads(proc.stdout))


# --- GitHub workflow commands ----------------------------------------------------------------------
def test_github_format(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "sub/b.py": MX_BAD, "c.py": TORCH_BAD,
                     "pyproject.toml": '[tool.scopelint.per-file-ignores]\n"c.py" = []\n[tool.scopelint.severity]\n'})
    rc, out, err = run(["check", "--output-format", "github"], tmp_path, monkeypatch, capsys)
    assert rc == 1 and err == ""
    lines = out.splitlines()
    msg107 = next(r for r in ALL_RULES.values() if r.code == "SL107")
    assert lines[0].startswith("::error file=a.py,line=2,col=6,endLine=2,endColumn=19,title=SL107::")
    assert lines[-1].startswith("::notice file=sub/b.py,line=2,col=6,endLine=2,endColumn=22,title=SL104::")
    assert len(lines) == 3 and all(line.startswith("::") for line in lines)  # no summary line
    assert msg107.code in lines[0]


def test_github_warning_level(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "pyproject.toml": '[tool.scopelint.severity]\nSL107 = "warning"\n'})
    rc, out, _ = run(["check", "--output-format", "github"], tmp_path, monkeypatch, capsys)
    assert out.startswith("::warning file=a.py,line=2,col=6,")


def test_github_escaping():
    f = Finding("SL101", "100% wrong\r\nsee: a, b", "error", "x", (3, 4), (3, 9))
    line = github_line(f, "dir,1/a:b%.py")
    assert line == "::error file=dir%2C1/a%3Ab%25.py,line=3,col=4,endLine=3,endColumn=9,title=SL101::100%25 wrong%0D%0Asee: a, b"
    assert "\n" not in line and "\r" not in line
    info = Finding("SL104", "m", "info", "x", (1, 1), (1, 1))
    assert github_line(info, "a.py").startswith("::notice ")
    warn = Finding("SL102", "m", "warning", "x", (1, 1), (1, 1))
    assert github_line(warn, "a.py").startswith("::warning ")


def test_github_notebook_cell_is_named(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"n.ipynb": json.dumps(NOTEBOOK)})  # one line of JSON
    rc, out, _ = run(["check", "--output-format", "github"], tmp_path, monkeypatch, capsys)
    col = json.dumps(NOTEBOOK).index("torch.no_grad:") + 1
    assert out.startswith(f"::error file=n.ipynb,line=1,col={col},endLine=1,endColumn={col + len('torch.no_grad')},")
    assert "::cell 1: " in out


# --- notebooks in CI formats: the .ipynb file's own lines, as ruff reports them ----------------
NB_CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n", "\n", "Some text.\n"]},
    {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
     "source": ["import torch\n", "model = torch.nn.Linear(3, 1)\n"]},
    {"cell_type": "code", "metadata": {}, "execution_count": 2, "outputs": [],
     "source": ["x = 'caf\u00e9 \\t'\n", "with torch.no_grad:\n", "    out = model(torch.ones(2, 3))\n"]},
]


@pytest.fixture(params=[1, None], ids=["indented", "one-line"])
def notebook_project(request, tmp_path):
    text = json.dumps({"cells": NB_CELLS, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=request.param,
                      ensure_ascii=True) + "\n"
    write(tmp_path, {"nb.ipynb": text})
    return tmp_path, text


def _span(text: str, region: dict) -> str:
    lines = text.split("\n")
    assert region["startLine"] == region["endLine"]
    return lines[region["startLine"] - 1][region["startColumn"] - 1 : region["endColumn"] - 1]


@pytest.mark.parametrize("cached", [False, True])
def test_sarif_notebook_region_is_the_ipynb_line(notebook_project, monkeypatch, capsys, validator, cached):
    root, text = notebook_project
    args = [] if cached else ["--no-cache"]
    if cached:  # a second run reads the findings from the cache
        sarif(args, root, monkeypatch, capsys)
    rc, log, _ = sarif(args, root, monkeypatch, capsys)
    assert_valid(validator, log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "SL107" and result["message"]["text"].startswith("cell 3: ")
    (location,) = result["locations"]
    region = location["physicalLocation"]["region"]
    assert _span(text, region) == "torch.no_grad"
    assert region["startLine"] == text.split("\n").index(next(l for l in text.split("\n") if "with torch.no_grad:" in l)) + 1
    assert location["properties"] == {"cell": 3, "cellRegion": {"startLine": 2, "startColumn": 6, "endLine": 2, "endColumn": 19}}
    # The fix comes along, as an edit of the .ipynb text: the same file `--fix` writes.
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    fixed = apply_replacements(text, change["replacements"])
    rc, _, _ = run(["check", "--no-cache", "--fix"], root, monkeypatch, capsys)
    assert fixed == (root / "nb.ipynb").read_text(encoding="utf-8") != text
    assert "with torch.no_grad():" in json.loads(fixed)["cells"][2]["source"][1]


def test_github_notebook_annotation_is_on_the_ipynb_line(notebook_project, monkeypatch, capsys):
    root, text = notebook_project
    rc, out, _ = run(["check", "--no-cache", "--output-format", "github"], root, monkeypatch, capsys)
    m = re.match(r"::error file=nb\.ipynb,line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+),title=SL107::cell 3: ", out)
    assert m, out
    line, col, end_line, end_col = map(int, m.groups())
    assert _span(text, {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col}) == "torch.no_grad"


def test_json_and_text_keep_the_cell_and_the_line_in_it(notebook_project, monkeypatch, capsys):
    root, _ = notebook_project
    rc, out, _ = run(["check", "--no-cache", "--output-format", "json"], root, monkeypatch, capsys)
    (item,) = json.loads(out)
    assert item["cell"] == 3 and item["location"] == {"row": 2, "column": 6} and item["end_location"] == {"row": 2, "column": 19}
    assert item["fix"]["edits"][0]["location"] == {"row": 2, "column": 6}
    rc, out, _ = run(["check", "--no-cache", "--output-format", "concise"], root, monkeypatch, capsys)
    assert out.startswith("nb.ipynb:cell 3:2:6: SL107 ")
