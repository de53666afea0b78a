"""`# noqa` as ruff has it: SL001 unused-noqa (ruff's RUF100), file exemptions
(`# scopelint: noqa`), `--ignore-noqa` and `--add-noqa`."""

from __future__ import annotations

import json
import textwrap

import pytest

from test_cli import TORCH_BAD, found, run, write
from scopelint.engine import Settings, lint_source
from scopelint.fix import apply_edits
from scopelint.rules import ALL_RULES

ALL = Settings(select=tuple(ALL_RULES))


def codes_at(text, settings=ALL, name="t.py"):
    return sorted((f.start[0], f.code) for f in lint_source(text, name, settings).findings)


def sl001(text, settings=ALL):
    return [f for f in lint_source(text, "t.py", settings).findings if f.code == "SL001"]


# --- SL001 -------------------------------------------------------------------------------
def test_a_used_noqa_is_not_reported_an_unused_one_is():
    text = "import torch\nwith torch.no_grad:  # noqa: SL107\n    pass\nx = 1  # noqa: SL107\n"
    [f] = sl001(text)
    assert f.start == (4, 8) and f.end == (4, 21)
    assert f.message == "Unused `noqa` directive (unused: `SL107`)"
    assert f.fix.applicability == "safe"
    assert apply_edits(text, [f], False)[0] == "import torch\nwith torch.no_grad:  # noqa: SL107\n    pass\nx = 1\n"


@pytest.mark.parametrize("comment", ["# noqa: E501", "# noqa: F401, E731", "# noqa", "# NOQA", "# noqa: SL001, SL101"])
def test_other_tools_codes_a_bare_noqa_and_a_line_that_silences_sl001_are_never_reported(comment):
    assert sl001(f"import torch\nx = torch.ones(1)  {comment}\n") == []


def test_every_reason_ruff_gives_and_the_fix_keeps_the_rest():
    text = "import torch\nwith torch.no_grad:  # noqa: SL107, E501, SL999, SL203, SL107\n    pass\n"
    [f] = sl001(text, Settings(select=("SL001", "SL107", "SL101")))
    assert f.message == "Unused `noqa` directive (non-enabled: `SL203`; duplicated: `SL107`; unknown: `SL999`)"
    fixed = apply_edits(text, [f], False)[0]
    assert fixed == "import torch\nwith torch.no_grad:  # noqa: SL107, E501\n    pass\n"
    assert sl001(fixed, Settings(select=("SL001", "SL107", "SL101"))) == []


@pytest.mark.parametrize("line, after", [
    ("x = 1  # noqa: SL101", "x = 1"),
    ("x = 1  # noqa: SL101  # keep me", "x = 1  # keep me"),
    ("x = 1  # noqa: SL101 because", "x = 1  # because"),
    ("x = 1  # noqa:SL101,SL102", "x = 1"),
])
def test_removing_the_whole_directive(line, after):
    text = f"import torch\n{line}\ny = 2\n"
    [f] = sl001(text)
    assert apply_edits(text, [f], False)[0] == f"import torch\n{after}\ny = 2\n"


def test_an_own_line_directive_goes_with_its_line_and_crlf_stays():
    text = "import torch\r\n# noqa: SL101\r\nx = 1  # noqa: SL204\r\n"
    fixes = sl001(text)
    assert len(fixes) == 2
    assert apply_edits(text, fixes, False)[0] == "import torch\r\nx = 1\r\n"


def test_a_file_no_rule_can_fire_in_is_still_judged_and_a_string_is_no_directive():
    text = 'print("# noqa: SL101")\ns = """\n# noqa: SL101\n"""\nx = 1  # noqa: SL101\n'
    assert [f.start[0] for f in sl001(text)] == [5]


def test_a_code_turned_off_by_per_file_ignores_is_left_alone_as_ruff_does():
    text = "import torch\nx = 1  # noqa: SL101, SL107\n"
    settings = Settings(select=("SL001", "SL107"), per_file_ignored=("SL101",))
    [f] = sl001(text, settings)
    assert "`SL107`" in f.message and "SL101" not in f.message


def test_sl001_is_not_in_the_default_selection_and_fix_removes_it(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": "import torch\nx = torch.ones(1)  # noqa: SL101\n"})
    assert run(["check", "a.py"], tmp_path, monkeypatch, capsys)[0] == 0
    rc, out, _ = run(["check", "--output-format", "concise", "--extend-select", "SL001", "a.py"], tmp_path, monkeypatch, capsys)
    assert rc == 1 and found(out) == {("a.py", 2, 20, "SL001")}
    for selection in (["--select", "SL0"], ["--select", "ALL"]):
        assert run(["check", *selection, "a.py"], tmp_path, monkeypatch, capsys)[0] == 1
    rc, out, _ = run(["check", "--extend-select", "SL001", "--fix", "a.py"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and "Fixed 1 finding" in out
    assert (tmp_path / "a.py").read_text() == "import torch\nx = torch.ones(1)\n"
    rc, out, _ = run(["check", "--ignore", "SL001", "--select", "ALL", "a.py"], tmp_path, monkeypatch, capsys)
    assert rc == 0


def test_sl001_in_a_notebook_cell(tmp_path, monkeypatch, capsys):
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# title"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import torch\n", "x = torch.ones(1)  # noqa: SL101\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(tmp_path, {"n.ipynb": json.dumps(nb, indent=1)})
    rc, out, _ = run(["check", "--output-format", "json", "--extend-select", "SL001", "n.ipynb"], tmp_path, monkeypatch, capsys)
    [f] = json.loads(out)
    assert rc == 1 and f["code"] == "SL001" and f["cell"] == 2 and f["location"]["row"] == 2
    assert run(["check", "--extend-select", "SL001", "--fix", "n.ipynb"], tmp_path, monkeypatch, capsys)[0] == 0
    cell = json.loads((tmp_path / "n.ipynb").read_text())["cells"][1]
    assert "".join(cell["source"]) == "import torch\nx = torch.ones(1)\n"


# --- file exemptions ---------------------------------------------------------------------------
BOTH = "import torch\nfrom mxnet import autograd\nwith torch.no_grad:\n    pass\nwith autograd.pause():\n    pass\n"


@pytest.mark.parametrize("head, remaining", [
    ("# scopelint: noqa\n", []),
    ("# scopelint: noqa: SL107\n", ["SL104"]),
    ("# scopelint: noqa: SL104, SL107\n", []),
    ("#scopelint:noqa:SL104\n", ["SL107"]),
    ('x = "# scopelint: noqa"\n', ["SL104", "SL107"]),  # not a comment of its own line
    ("# scopelint: noqa-ish\n", ["SL104", "SL107"]),
])
def test_file_exemptions(head, remaining):
    assert sorted({c for _, c in codes_at(head + BOTH)}) == remaining


def test_a_file_exemption_anywhere_but_never_over_a_syntax_error():
    assert codes_at(BOTH + "# scopelint: noqa\n") == []
    assert [c for _, c in codes_at("# scopelint: noqa\nimport torch\ndef f(:\n")] == ["SL000"]


def test_ignore_noqa_reports_what_every_kind_of_noqa_hides(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": "# scopelint: noqa: SL104\n" + BOTH.replace("no_grad:", "no_grad:  # noqa: SL107")})
    rc, out, _ = run(["check", "--output-format", "concise", "a.py"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and found(out) == set()
    rc, out, _ = run(["check", "--output-format", "concise", "--ignore-noqa", "a.py"], tmp_path, monkeypatch, capsys)
    assert rc == 1 and {c for *_, c in found(out)} == {"SL104", "SL107"}
    # and SL001 has nothing to say then (ruff: --ignore-noqa skips the noqa pass)
    rc, out, _ = run(["check", "--output-format", "concise", "--ignore-noqa", "--select", "SL001", "a.py"],
                     tmp_path, monkeypatch, capsys)
    assert rc == 0


# --- --add-noqa ----------------------------------------------------------------------------------
def test_add_noqa_merges_keeps_the_rest_and_prints_only_the_count(tmp_path, monkeypatch, capsys):
    src = (
        "import torch\r\n"
        "from mxnet import autograd\r\n"
        "with torch.no_grad:  # noqa: E501\r\n"
        "    pass\r\n"
        "with autograd.pause():   # a note\r\n"
        "    pass\r\n"
    )
    write(tmp_path, {"a.py": src.encode("utf-8"), "clean.py": "x = 1\n"})
    rc, out, err = run(["check", "--add-noqa", "."], tmp_path, monkeypatch, capsys)
    assert rc == 0 and out == "" and err == "Added 2 noqa directives.\n"
    assert (tmp_path / "a.py").read_bytes() == (
        b"import torch\r\n"
        b"from mxnet import autograd\r\n"
        b"with torch.no_grad:  # noqa: E501, SL107\r\n"
        b"    pass\r\n"
        b"with autograd.pause():   # a note  # noqa: SL104\r\n"
        b"    pass\r\n"
    )
    assert run(["check", "a.py"], tmp_path, monkeypatch, capsys)[0] == 0
    rc, out, err = run(["check", "--add-noqa", "."], tmp_path, monkeypatch, capsys)
    assert rc == 0 and out == err == ""  # nothing left to add: nothing said, as ruff


def test_add_noqa_keeps_the_encoding_and_merges_codes_of_one_line(tmp_path, monkeypatch, capsys):
    src = "# -*- coding: latin-1 -*-\nimport torch\nfrom mxnet import autograd  # caf\xe9\nwith torch.no_grad, autograd.pause(): pass\n"
    write(tmp_path, {"a.py": src.encode("latin-1")})
    rc, _, err = run(["check", "--add-noqa", "a.py"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and err == "Added 1 noqa directive.\n"
    data = (tmp_path / "a.py").read_bytes()
    assert data.decode("latin-1").splitlines()[3].endswith("pass  # noqa: SL104, SL107") and b"caf\xe9" in data


def test_add_noqa_in_a_notebook_cell(tmp_path, monkeypatch, capsys):
    nb = {"cells": [
        {"cell_type": "code", "metadata": {"keep": 1}, "execution_count": 3, "outputs": [],
         "source": ["%matplotlib inline\n", "import torch\n", "with torch.no_grad:\n", "    pass"]},
    ], "metadata": {"kernelspec": {"language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(nb, indent=1) + "\n"
    write(tmp_path, {"n.ipynb": text})
    rc, _, err = run(["check", "--add-noqa", "n.ipynb"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and err == "Added 1 noqa directive.\n"
    after = json.loads((tmp_path / "n.ipynb").read_text())
    assert after["cells"][0]["source"][2] == "with torch.no_grad:  # noqa: SL107\n"
    nb["cells"][0]["source"][2] = "with torch.no_grad:  # noqa: SL107\n"
    assert after == nb
    assert run(["check", "n.ipynb"], tmp_path, monkeypatch, capsys)[0] == 0


def test_add_noqa_leaves_a_continued_line_alone_and_refuses_stdin_and_fix(tmp_path, monkeypatch, capsys):
    src = "import torch\nwith torch.no_grad \\\n        :\n    pass\n"
    write(tmp_path, {"a.py": src})
    rc, _, err = run(["check", "--add-noqa", "a.py"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and err == "" and (tmp_path / "a.py").read_text() == src
    for extra in (["--fix"], ["--diff"], ["--fix-only"]):
        rc, _, err = run(["check", "--add-noqa", *extra, "a.py"], tmp_path, monkeypatch, capsys)
        assert rc == 2 and "--add-noqa" in err
    rc, _, err = run(["check", "--add-noqa", "-"], tmp_path, monkeypatch, capsys, stdin=TORCH_BAD.encode())
    assert rc == 2 and "stdin" in err


def test_the_rule_doc_and_sarif_list_sl001(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule", "SL001"], tmp_path, monkeypatch, capsys)
    assert rc == 0 and "# unused-noqa (SL001)" in out and "Not selected by default" in out
    assert textwrap.dedent(ALL_RULES["SL001"].bad).strip() in out
    write(tmp_path, {"a.py": "x = 1\n"})
    rc, out, _ = run(["check", "--output-format", "sarif", "a.py"], tmp_path, monkeypatch, capsys)
    assert "SL001" in {r["id"] for r in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]}


def test_the_verifier_never_runs_a_program_for_sl001():
    """Removing a comment changes nothing at run time: no verdict to seek (as for SL000)."""
    from scopelint.runner import FileResult
    from scopelint.runtime_check.verify import _program_of

    text = "import torch\nx = torch.ones(1)  # noqa: SL101\n"
    res = FileResult("t.py", None, findings=sl001(text), source=text)
    assert [f.code for f in res.findings] == ["SL001"]
    assert _program_of(res).findings == []
