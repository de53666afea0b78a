"""ruff's habits that users reach for: -o/--output-file, -q/--quiet, --show-settings,
--show-files, --fix-only, --exit-non-zero-on-fix, --per-file-ignores, --config KEY=VALUE,
`extend`, and the json-lines / junit / gitlab / pylint output formats."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from test_cli import CLEAN, MX_BAD, TORCH_BAD, found, run, write

FIXED = "import torch\nwith torch.no_grad():\n    pass\n"


def check(tmp_path, monkeypatch, capsys, *args, stdin=None):
    return run(["check", "--no-cache", *args], tmp_path, monkeypatch, capsys, stdin=stdin)


@pytest.fixture
def proj(tmp_path):
    return write(tmp_path, {"a.py": TORCH_BAD, "pkg/b.py": MX_BAD, "pkg/clean.py": CLEAN})


# --- -o / -q --------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit"])
def test_output_file_holds_the_report_and_stdout_nothing(proj, monkeypatch, capsys, fmt):
    rc, out, err = check(proj, monkeypatch, capsys, "--output-format", fmt, "-o", "reports/r.out", ".")
    assert rc == 1 and out == "" and err == ""
    text = (proj / "reports" / "r.out").read_text()
    rc2, direct, _ = check(proj, monkeypatch, capsys, "--output-format", fmt, ".")
    assert text == direct and "SL107" in text


def test_an_unwritable_output_file_is_a_clear_error(proj, monkeypatch, capsys):
    (proj / "ro").mkdir()
    os.chmod(proj / "ro", 0o500)
    try:
        target = "ro/r.txt" if os.geteuid() != 0 else "a.py/r.txt"  # (root writes anywhere; no folder inside a file)
        rc, out, err = check(proj, monkeypatch, capsys, "-o", target, ".")
    finally:
        os.chmod(proj / "ro", 0o700)
    assert rc == 2 and "--output-file" in err and "r.txt" in err and "Traceback" not in err
    assert "All checks passed" not in out + err


def test_a_failed_run_leaves_no_output_file(proj, monkeypatch, capsys):
    rc, _, err = check(proj, monkeypatch, capsys, "--config", "selct = 1", "-o", "r.txt", ".")
    assert rc == 2 and "selct" in err and not (proj / "r.txt").exists()


def test_quiet_prints_the_findings_but_no_summary(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "-q", "--output-format", "concise", ".")
    assert rc == 1 and found(out) == {("a.py", 2, 6, "SL107"), (os.path.join("pkg", "b.py"), 2, 6, "SL104")}
    assert "Found" not in out and len(out.splitlines()) == 2
    rc, out, _ = check(proj, monkeypatch, capsys, "--quiet", "pkg/clean.py")
    assert rc == 0 and out == ""


# --- --show-files / --show-settings -----------------------------------------------------------------
def test_show_files_lists_what_would_be_checked(proj, monkeypatch, capsys):
    write(proj, {".venv/lib/x.py": TORCH_BAD, "pyproject.toml": '[tool.scopelint]\nextend-exclude = ["pkg/clean.py"]\n'})
    rc, out, _ = check(proj, monkeypatch, capsys, "--show-files", ".")
    assert rc == 0
    assert out.splitlines() == sorted([str(proj / "a.py"), str(proj / "pkg" / "b.py")])


def test_show_settings_prints_the_first_file_s_resolved_settings(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": '[tool.scopelint]\nselect = ["SL1"]\nignore = ["SL104"]\nseverity = { SL107 = "info" }\n'})
    rc, out, _ = check(proj, monkeypatch, capsys, "--show-settings", "--extend-select", "SL001", ".")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == f'Resolved settings for: "{proj / "a.py"}"'
    assert lines[1] == f'Settings path: "{proj / "pyproject.toml"}"'
    select = next(line for line in lines if line.startswith("select = "))
    assert '"SL001"' in select and '"SL107"' in select and '"SL104"' not in select and '"SL201"' not in select
    assert 'severity = { "SL107" = "info" }' in lines


# --- --fix-only / --exit-non-zero-on-fix --------------------------------------------------------------
def test_fix_only_fixes_reports_nothing_and_exits_0(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix-only", ".")
    assert rc == 0 and (proj / "a.py").read_text() == FIXED
    assert out == "Fixed 1 finding. 1 more fix available with --unsafe-fixes.\n"  # SL104 remains, unreported
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix-only", "--output-format", "json", ".")
    assert rc == 0 and json.loads(out) == []
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix-only", ".")
    assert rc == 0 and out == "No findings fixed (1 more fix available with --unsafe-fixes).\n"
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix-only", "a.py")
    assert rc == 0 and out == ""  # nothing fixed, nothing waiting: nothing said, as ruff


def test_exit_non_zero_on_fix(proj, monkeypatch, capsys):
    rc, _, _ = check(proj, monkeypatch, capsys, "--fix-only", "--exit-non-zero-on-fix", "a.py")
    assert rc == 1 and (proj / "a.py").read_text() == FIXED
    assert check(proj, monkeypatch, capsys, "--fix-only", "--exit-non-zero-on-fix", "a.py")[0] == 0  # nothing to fix
    (proj / "a.py").write_text(TORCH_BAD)
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix", "--exit-non-zero-on-fix", "a.py")
    assert rc == 1 and "No findings remain" in out  # exit 1 although nothing remains
    (proj / "a.py").write_text(TORCH_BAD)
    assert check(proj, monkeypatch, capsys, "--fix", "a.py")[0] == 0
    (proj / "a.py").write_text(TORCH_BAD)
    assert check(proj, monkeypatch, capsys, "--fix", "--exit-non-zero-on-fix", "--exit-zero", "a.py")[0] == 0


def test_fix_only_on_stdin_prints_the_fixed_text(tmp_path, monkeypatch, capsys):
    rc, out, _ = check(tmp_path, monkeypatch, capsys, "--fix-only", "-", stdin=TORCH_BAD.encode())
    assert rc == 0 and out == FIXED


# --- --per-file-ignores, --config KEY=VALUE, extend -----------------------------------------------------
def test_per_file_ignores_on_the_command_line_replaces_the_configuration_s(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": '[tool.scopelint]\nper-file-ignores = { "a.py" = ["SL107"] }\n'})
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "concise", ".")
    assert {c for *_, c in found(out)} == {"SL104"}
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "concise", "--per-file-ignores", "pkg/*.py:SL104,SL107", ".")
    assert {c for *_, c in found(out)} == {"SL107"}
    rc, out, _ = check(proj, monkeypatch, capsys, "--per-file-ignores", "pkg/*.py:SL104", "--per-file-ignores", "a.py:SL1", ".")
    assert rc == 0


@pytest.mark.parametrize("value", ["pkg/*.py", "pkg/*.py:", ":SL101", "pkg/*.py:SL999"])
def test_a_bad_per_file_ignores_value_exits_2(proj, monkeypatch, capsys, value):
    rc, out, err = check(proj, monkeypatch, capsys, "--per-file-ignores", value, ".")
    assert rc == 2 and "--per-file-ignores" in err and "Traceback" not in err and found(out) == set()


def test_config_key_value_overrides_every_file(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n', "pkg/pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n'})
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "concise", ".")
    assert {c for *_, c in found(out)} == {"SL107"}
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "concise", "--config", 'select = ["SL104"]', ".")
    assert {c for *_, c in found(out)} == {"SL104"}
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "concise", "--config", 'select = ["SL1"]',
                       "--config", "severity = { SL104 = 'info' }", "--output-format", "json", ".")
    assert {(f["code"], f["severity"]) for f in json.loads(out)} == {("SL104", "info"), ("SL107", "error")}
    # a file and an override together
    write(proj, {"ci.toml": 'select = ["SL107", "SL104"]\nignore = ["SL107"]\n'})
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "concise", "--config", "ci.toml", "--config", "ignore = ['SL104']", ".")
    assert rc == 0 and found(out) == set()  # ignore chains as ruff's selections do


@pytest.mark.parametrize("value, words", [
    ("select = [SL1]", ["neither a file nor a valid TOML"]),
    ("selct = ['SL1']", ["selct", "--config"]),
    ("select = ['SL999']", ["SL999", "--config"]),
    ("extend = 'x.toml'", ["extend"]),
    ("nope.toml", ["nope.toml"]),
])
def test_a_bad_config_value_exits_2(proj, monkeypatch, capsys, value, words):
    rc, out, err = check(proj, monkeypatch, capsys, "--config", value, ".")
    assert rc == 2 and "Traceback" not in err and found(out) == set()
    for word in words:
        assert word in err


def test_two_config_files_are_an_error(proj, monkeypatch, capsys):
    write(proj, {"one.toml": "select = ['SL1']\n", "two.toml": "select = ['SL1']\n"})
    rc, _, err = check(proj, monkeypatch, capsys, "--config", "one.toml", "--config", "two.toml", ".")
    assert rc == 2 and "only one configuration file" in err


def test_extend_takes_the_base_settings_and_overrides_them(tmp_path, monkeypatch, capsys):
    both = TORCH_BAD + "\n" + MX_BAD
    write(tmp_path, {
        "shared/base.toml": '[tool.scopelint]\nignore = ["SL104"]\nseverity = { SL107 = "warning" }\nextend-exclude = ["gen"]\n',
        "proj/pyproject.toml": '[tool.scopelint]\nextend = "../shared/base.toml"\nseverity = { SL107 = "info" }\n',
        "proj/a.py": both,
        "proj/gen/g.py": TORCH_BAD,
    })
    rc, out, _ = check(tmp_path / "proj", monkeypatch, capsys, "--output-format", "json", ".")
    assert [(f["code"], f["severity"]) for f in json.loads(out)] == [("SL107", "info")]  # SL104 ignored, gen/ excluded
    # a chain: the extending file's `select` starts the selection over
    write(tmp_path, {
        "proj/pyproject.toml": '[tool.scopelint]\nextend = "mid.toml"\n',
        "proj/mid.toml": '[tool.scopelint]\nextend = "../shared/base.toml"\nselect = ["SL1"]\n',
    })
    rc, out, _ = check(tmp_path / "proj", monkeypatch, capsys, "--output-format", "concise", "a.py")
    assert {c for *_, c in found(out)} == {"SL104", "SL107"}


@pytest.mark.parametrize("files, words", [
    ({"pyproject.toml": '[tool.scopelint]\nextend = "pyproject.toml"\n'}, ["circular `extend`"]),
    ({"pyproject.toml": '[tool.scopelint]\nextend = "b.toml"\n', "b.toml": 'extend = "pyproject.toml"\n'}, ["circular `extend`", "b.toml"]),
    ({"pyproject.toml": '[tool.scopelint]\nextend = "missing.toml"\n'}, ["missing.toml", "not a file"]),
    ({"pyproject.toml": '[tool.scopelint]\nextend = "b.toml"\n', "b.toml": 'selct = ["SL1"]\n'}, ["selct", "b.toml"]),
    ({"pyproject.toml": '[tool.scopelint]\nextend = 3\n'}, ["extend"]),
])
def test_extend_errors_exit_2(tmp_path, monkeypatch, capsys, files, words):
    write(tmp_path, {"a.py": TORCH_BAD, **files})
    rc, out, err = check(tmp_path, monkeypatch, capsys, ".")
    assert rc == 2 and "Traceback" not in err and found(out) == set() and "All checks passed" not in out
    for word in words:
        assert word in err


# --- output formats -----------------------------------------------------------------------------------
def test_json_lines_is_json_one_finding_per_line(proj, monkeypatch, capsys):
    _, whole, _ = check(proj, monkeypatch, capsys, "--output-format", "json", ".")
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "json-lines", ".")
    assert rc == 1 and [json.loads(line) for line in out.splitlines()] == json.loads(whole)
    assert len(out.splitlines()) == 2


def test_junit_parses_one_suite_per_file_one_case_per_finding(proj, monkeypatch, capsys):
    write(proj, {"c.py": TORCH_BAD + "with torch.no_grad:\n    pass\n"})
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "junit", ".")
    root = ET.fromstring(out)
    assert rc == 1 and root.tag == "testsuites" and root.get("tests") == root.get("failures") == "4"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"a.py", "c.py", "pkg/b.py"}
    cases = suites["c.py"].findall("testcase")
    assert [(c.get("name"), c.get("line"), c.get("classname")) for c in cases] == [("org.scopelint.SL107", "2", "c"), ("org.scopelint.SL107", "4", "c")]
    failure = cases[0].find("failure")
    assert failure.get("message").startswith("context manager used without calling it") and failure.text.startswith("line 2, col 6, ")
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "junit", "pkg/clean.py")
    root = ET.fromstring(out)
    assert rc == 0 and [c.get("name") for c in root.iter("testcase")] == ["No errors found"] and root.find(".//failure") is None


def test_gitlab_code_quality(proj, monkeypatch, capsys):
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "gitlab", ".")
    data = json.loads(out)
    assert rc == 1 and len(data) == 2
    for item in data:
        assert set(item) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert item["severity"] in ("info", "minor", "major", "critical", "blocker")
    by_code = {d["check_name"]: d for d in data}
    assert by_code["SL107"]["location"] == {"path": "a.py", "lines": {"begin": 2, "end": 2}}
    assert by_code["SL104"]["location"]["path"] == "pkg/b.py"
    assert len({d["fingerprint"] for d in data}) == 2
    # the fingerprint stays when the finding moves down a line; CI_PROJECT_DIR roots the paths
    (proj / "a.py").write_text("\n" + TORCH_BAD)
    monkeypatch.setenv("CI_PROJECT_DIR", str(proj.parent))
    _, out, _ = check(proj, monkeypatch, capsys, "--output-format", "gitlab", "a.py")
    [moved] = json.loads(out)
    assert moved["location"] == {"path": f"{proj.name}/a.py", "lines": {"begin": 3, "end": 3}}


def test_pylint_format(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "pylint", ".")
    assert rc == 1 and sorted(out.splitlines()) == sorted([
        "a.py:2: [SL107] context manager used without calling it: raises `TypeError` when the `with` runs",
        f"{os.path.join('pkg', 'b.py')}:2: [SL104] `autograd.pause()` where nothing records: a no-op",
    ])


def test_a_bad_output_format_exits_2(proj, monkeypatch, capsys):
    rc, _, err = check(proj, monkeypatch, capsys, "--output-format", "xml", ".")
    assert rc == 2 and "xml" in err
