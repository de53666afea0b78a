"""What a ruff user reaches for (issue 43), each against ruff's documented behaviour:

- ruff CLI: https://docs.astral.sh/ruff/configuration/#command-line-interface
  (`ruff check --select F401 --select F403`, `--no-fix`, `-e`, `-n`, `-s`, `-v`, `--isolated`,
  `--cache-dir` [env: RUFF_CACHE_DIR], `--output-format` [env: RUFF_OUTPUT_FORMAT],
  `--extension`, `--respect-gitignore`, `--show-fixes`, `-w/--watch`, `--add-noqa`)
- configuration files: https://docs.astral.sh/ruff/configuration/ ("the .ruff.toml file will
  take precedence over the ruff.toml file, and the ruff.toml file will take precedence over
  the pyproject.toml file")
- preview: https://docs.astral.sh/ruff/preview/ (preview rules only in preview mode; `ALL`
  and prefixes select them then, unless `explicit-preview-rules`)
- settings: https://docs.astral.sh/ruff/settings/ (`fixable`, `unfixable`, `exclude`,
  `extend-exclude`, `extend-per-file-ignores`, `output-format`, `cache-dir`)
- `# flake8: noqa`: https://docs.astral.sh/ruff/linter/#error-suppression
- shell completion: https://docs.astral.sh/ruff/configuration/#shell-autocompletion
- output formats: ruff's `grouped`, `azure`, `rdjson` emitters (reviewdog's rdjson,
  Azure's `##vso[task.logissue ...]` logging command)
"""

from __future__ import annotations

import json
import os
import pty
import re
import select as select_module
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scopelint.preview import FIRST_CONTACT

from test_cli import CLEAN, MX_BAD, TORCH_BAD, found, run, write

# SL206 (a preview rule: docs/preview.md): a conversion between the graph and the loss
SL206_BAD = "import torch\n\nmodel = torch.nn.Linear(3, 1)\nout = model(torch.randn(4, 3))\nloss = torch.tensor(out.mean().item()) ** 2\nloss.backward()\n"
REPO = Path(__file__).resolve().parents[1]


def check(cwd, monkeypatch, capsys, *args, stdin=None):
    return run(["check", "--no-cache", *args], cwd, monkeypatch, capsys, stdin=stdin)


def codes(out: str) -> set:
    return {c for *_, c in found(out)}


def process(args, cwd, env=None, **kw):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SCOPELINT_", "FORCE_COLOR", "NO_COLOR"))}
    return subprocess.run([sys.executable, "-m", "scopelint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=kw.pop("timeout", 120), env={**base, **(env or {})}, **kw)


@pytest.fixture
def proj(tmp_path):
    return write(tmp_path, {"a.py": TORCH_BAD, "pkg/b.py": MX_BAD, "pkg/clean.py": CLEAN})


# --- silently wrong before ---------------------------------------------------------------------
def test_repeated_selection_options_add_up(proj, monkeypatch, capsys):
    """`ruff check --select F401 --select F403`: both. Only the last was kept."""
    assert codes(check(proj, monkeypatch, capsys, "--select", "SL107", "--select", "SL104", ".")[1]) == {"SL104", "SL107"}
    assert codes(check(proj, monkeypatch, capsys, "--ignore", "SL107", "--ignore", "SL104", ".")[1]) == set()
    assert codes(check(proj, monkeypatch, capsys, "--select", "SL2", "--extend-select", "SL107",
                       "--extend-select", "SL104", ".")[1]) == {"SL104", "SL107"}


@pytest.mark.parametrize("files, expected", [
    ({"scopelint.toml": 'select = ["SL104"]\n'}, {"SL104"}),
    ({".scopelint.toml": 'select = ["SL104"]\n'}, {"SL104"}),
    ({"scopelint.toml": 'select = ["SL104"]\n', "pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n'}, {"SL104"}),
    ({".scopelint.toml": 'select = ["SL107"]\n', "scopelint.toml": 'select = ["SL104"]\n'}, {"SL107"}),
    ({"scopelint.toml": '[tool.scopelint]\nselect = ["SL104"]\n'}, {"SL104"}),
    ({"pyproject.toml": '[project]\nname = "x"\n'}, {"SL104", "SL107"}),  # no table: not a configuration
])
def test_scopelint_toml_files_are_configurations_with_ruffs_precedence(proj, monkeypatch, capsys, files, expected):
    write(proj, files)
    rc, out, err = check(proj, monkeypatch, capsys, ".")
    assert codes(out) == expected, err


def test_a_nested_scopelint_toml_governs_its_folder(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n', "pkg/scopelint.toml": 'select = ["SL104"]\n'})
    rc, out, _ = check(proj, monkeypatch, capsys, "--show-settings", "pkg/b.py")
    assert f'Settings path: "{proj / "pkg" / "scopelint.toml"}"' in out
    assert codes(check(proj, monkeypatch, capsys, ".")[1]) == {"SL107", "SL104"}


@pytest.mark.parametrize("setting", ['select = "SL107"', 'ignore = "SL1"', 'exclude = "build"', 'fixable = "SL107"'])
def test_a_string_where_a_list_is_meant_is_an_error(proj, monkeypatch, capsys, setting):
    write(proj, {"pyproject.toml": f"[tool.scopelint]\n{setting}\n"})
    rc, out, err = check(proj, monkeypatch, capsys, ".")
    key = setting.split(" ")[0]
    assert rc == 2 and f"`{key}` must be a list of strings" in err and "pyproject.toml" in err and out == ""


@pytest.mark.parametrize("setting, words", [
    ("preview = 1", "`preview` must be true or false"),
    ('output-format = "fancy"', "`output-format` must be one of"),
    ("cache-dir = 3", "`cache-dir` must be a string"),
])
def test_new_settings_are_typed(proj, monkeypatch, capsys, setting, words):
    write(proj, {"pyproject.toml": f"[tool.scopelint]\n{setting}\n"})
    rc, _, err = check(proj, monkeypatch, capsys, ".")
    assert rc == 2 and words in err


def test_flake8_noqa_exempts_the_file_as_in_ruff(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"all.py": "# flake8: noqa\n" + TORCH_BAD, "codes.py": "# flake8: noqa: SL104\n" + TORCH_BAD + MX_BAD,
                     "none.py": TORCH_BAD})
    rc, out, _ = check(tmp_path, monkeypatch, capsys, "--output-format", "concise", ".")
    assert found(out) == {("codes.py", 3, 6, "SL107"), ("none.py", 2, 6, "SL107")}
    rc, out, _ = check(tmp_path, monkeypatch, capsys, "--ignore-noqa", "--output-format", "concise", ".")
    assert {p for p, *_ in found(out)} == {"all.py", "codes.py", "none.py"}


# --- the options --------------------------------------------------------------------------------
def test_exclude_and_extend_exclude_on_the_command_line(proj, monkeypatch, capsys):
    write(proj, {"build/gen.py": TORCH_BAD})
    assert {p for p, *_ in found(check(proj, monkeypatch, capsys, ".")[1])} == {"a.py", os.path.join("pkg", "b.py")}
    out = check(proj, monkeypatch, capsys, "--exclude", "pkg", ".")[1]  # replaces the defaults: build/ is back
    assert {p for p, *_ in found(out)} == {"a.py", os.path.join("build", "gen.py")}
    out = check(proj, monkeypatch, capsys, "--extend-exclude", "pkg", "--extend-exclude", "a.py", ".")[1]
    assert found(out) == set()


def test_no_fix_overrides_fix_true(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": "[tool.scopelint]\nfix = true\n"})
    rc, out, _ = check(proj, monkeypatch, capsys, "--no-fix", "a.py")
    assert rc == 1 and (proj / "a.py").read_text() == TORCH_BAD
    rc, out, _ = check(proj, monkeypatch, capsys, "a.py")  # fix = true applies it
    assert rc == 0 and (proj / "a.py").read_text() == CLEAN and "Fixed 1 finding." in out


def test_show_fixes_enumerates_what_was_fixed(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix", "--show-fixes", ".")
    assert "Fixed 1 finding:\n- a.py:\n    1 \u00d7 SL107 (grad-context-not-called)\n" in out
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix", "--show-fixes", ".")
    assert "\u00d7" not in out  # nothing fixed this time


def test_short_flags(proj, monkeypatch, capsys):
    rc, out, err = check(proj, monkeypatch, capsys, "-e", ".")
    assert rc == 0 and "SL107" in out
    rc, out, err = run(["check", "-n", "-s", "."], proj, monkeypatch, capsys)
    assert rc == 1 and out == "" and err == ""  # silent: nothing, but the exit status
    assert not (proj / ".scopelint_cache").exists()  # -n: no cache written
    rc, out, err = check(proj, monkeypatch, capsys, "-v", ".")
    assert rc == 1 and "checked with the settings of (defaults)" in err and re.search(r"checked 3 files in [\d.]+ s", err)
    rc, out, err = check(proj, monkeypatch, capsys, "-q", ".")
    assert "Found" not in out and "SL107" in out


def test_isolated_reads_no_configuration(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": '[tool.scopelint]\nselect = ["SL104"]\n'})
    assert codes(check(proj, monkeypatch, capsys, ".")[1]) == {"SL104"}
    assert codes(check(proj, monkeypatch, capsys, "--isolated", ".")[1]) == {"SL104", "SL107"}
    rc, _, err = check(proj, monkeypatch, capsys, "--isolated", "--config", "pyproject.toml", ".")
    assert rc == 2 and "--isolated" in err


def test_cache_dir_option_variable_and_setting(proj):
    proc = process(["check", "--cache-dir", "c1", "."], proj)
    assert proc.returncode == 1 and (proj / "c1").is_dir() and not (proj / ".scopelint_cache").exists()
    proc = process(["check", "."], proj, env={"SCOPELINT_CACHE_DIR": str(proj / "c2")})
    assert proc.returncode == 1 and (proj / "c2").is_dir()
    write(proj, {"pyproject.toml": '[tool.scopelint]\ncache-dir = "c3"\n'})
    assert process(["check", "."], proj).returncode == 1 and (proj / "c3").is_dir()
    assert process(["check", "--cache-dir", "c4", "."], proj, env={"SCOPELINT_CACHE_DIR": "c5"}).returncode == 1
    assert (proj / "c4").is_dir() and not (proj / "c5").exists()  # the option wins over the variable
    shutil.rmtree(proj / "c4")
    assert process(["check", "."], proj, env={"SCOPELINT_NO_CACHE": "1", "SCOPELINT_CACHE_DIR": "c4"}).returncode == 1
    assert not (proj / "c4").exists()


def test_respect_gitignore_and_its_negation(proj, monkeypatch, capsys):
    write(proj, {".gitignore": "a.py\n"})
    (proj / ".git").mkdir()
    assert {p for p, *_ in found(check(proj, monkeypatch, capsys, ".")[1])} == {os.path.join("pkg", "b.py")}
    out = check(proj, monkeypatch, capsys, "--no-respect-gitignore", ".")[1]
    assert {p for p, *_ in found(out)} == {"a.py", os.path.join("pkg", "b.py")}
    write(proj, {"pyproject.toml": "[tool.scopelint]\nrespect-gitignore = false\n"})
    assert "a.py" in {p for p, *_ in found(check(proj, monkeypatch, capsys, ".")[1])}


def test_extension_checks_more_files_as_python(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"tool.pyw": TORCH_BAD, "a.py": CLEAN})
    assert found(check(tmp_path, monkeypatch, capsys, ".")[1]) == set()
    assert found(check(tmp_path, monkeypatch, capsys, "--extension", "pyw:python", ".")[1]) == {("tool.pyw", 2, 6, "SL107")}
    rc, _, err = check(tmp_path, monkeypatch, capsys, "--extension", "ipy:ipynb", ".")
    assert rc == 2 and "--extension" in err


def test_include_setting(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"src/a.py": TORCH_BAD, "scripts/b.py": TORCH_BAD,
                     "pyproject.toml": '[tool.scopelint]\ninclude = ["src/**/*.py"]\n'})
    assert {p for p, *_ in found(check(tmp_path, monkeypatch, capsys, ".")[1])} == {os.path.join("src", "a.py")}


def test_fixable_and_unfixable(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "--unfixable", "SL107", "a.py")
    assert "[*]" not in out and "fixable with --fix" not in out
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix", "--unfixable", "SL107", "a.py")
    assert rc == 1 and (proj / "a.py").read_text() == TORCH_BAD
    write(proj, {"pyproject.toml": '[tool.scopelint]\nfixable = ["SL104"]\n'})
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix", "a.py")
    assert rc == 1 and (proj / "a.py").read_text() == TORCH_BAD
    rc, out, _ = check(proj, monkeypatch, capsys, "--fix", "--extend-fixable", "SL107", "a.py")
    assert rc == 0 and (proj / "a.py").read_text() == CLEAN


def test_extend_per_file_ignores_adds_to_the_configuration(proj, monkeypatch, capsys):
    write(proj, {"pyproject.toml": '[tool.scopelint]\nper-file-ignores = { "pkg/*" = ["SL104"] }\n'})
    assert codes(check(proj, monkeypatch, capsys, ".")[1]) == {"SL107"}
    assert codes(check(proj, monkeypatch, capsys, "--extend-per-file-ignores", "a.py:SL107", ".")[1]) == set()
    # --per-file-ignores replaces the configuration's instead
    assert codes(check(proj, monkeypatch, capsys, "--per-file-ignores", "a.py:SL107", ".")[1]) == {"SL104"}


def test_add_noqa_with_a_reason(proj, monkeypatch, capsys):
    rc, out, err = check(proj, monkeypatch, capsys, "--add-noqa=legacy loop, see #12", "a.py")
    assert rc == 0 and err == "Added 1 noqa directive.\n"
    assert (proj / "a.py").read_text() == "import torch\nwith torch.no_grad:  # noqa: SL107 legacy loop, see #12\n    pass\n"
    assert check(proj, monkeypatch, capsys, "a.py")[0] == 0  # the reason does not spoil the directive
    rc, _, err = check(proj, monkeypatch, capsys, "--add-noqa", "pkg/b.py")  # without "=": a path
    assert rc == 0 and "# noqa: SL104\n" in (proj / "pkg" / "b.py").read_text()


# --- preview ------------------------------------------------------------------------------------
def test_preview_rules_run_only_in_preview_mode(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"conv.py": SL206_BAD, "a.py": TORCH_BAD})
    assert codes(check(tmp_path, monkeypatch, capsys, ".")[1]) == {"SL107"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--select", "ALL", ".")[1]) == {"SL107"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--preview", ".")[1]) == {"SL107", "SL206"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--preview", "--select", "SL2", ".")[1]) == {"SL206"}
    rc, out, err = check(tmp_path, monkeypatch, capsys, "--select", "SL206", ".")
    assert rc == 0 and codes(out) == set() and "warning" in err and "SL206" in err and "preview" in err
    write(tmp_path, {"pyproject.toml": "[tool.scopelint]\npreview = true\n"})
    assert codes(check(tmp_path, monkeypatch, capsys, ".")[1]) == {"SL107", "SL206"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--no-preview", ".")[1]) == {"SL107"}


def test_explicit_preview_rules(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"conv.py": SL206_BAD, "a.py": TORCH_BAD,
                     "pyproject.toml": "[tool.scopelint]\npreview = true\nexplicit-preview-rules = true\n"})
    assert codes(check(tmp_path, monkeypatch, capsys, ".")[1]) == {"SL107"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--select", "ALL", ".")[1]) == {"SL107"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--select", "ALL,SL206", ".")[1]) == {"SL107", "SL206"}


def test_rule_json_and_pages_say_which_rules_are_preview(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["rule", "--all", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    preview = {r["code"] for r in json.loads(out) if r["preview"]}
    assert preview == {"SL206", "SL207"}
    page = (REPO / "docs" / "rules" / "SL206.md").read_text(encoding="utf-8")
    measured = FIRST_CONTACT["SL206"]  # (the page says the latest measurement, whatever it is)
    assert "Preview" in page and f"{measured.true}/{measured.findings}" in page and f"{measured.repositories} repositories" in page
    assert "Stable" in (REPO / "docs" / "rules" / "SL101.md").read_text(encoding="utf-8")


# --- output -------------------------------------------------------------------------------------
def test_full_is_text(proj, monkeypatch, capsys):
    full = check(proj, monkeypatch, capsys, "--output-format", "full", ".")
    text = check(proj, monkeypatch, capsys, "--output-format", "text", ".")
    assert full == text and "2 | with torch.no_grad:" in full[1]


def test_grouped(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "grouped", ".")
    assert rc == 1
    assert out.startswith("a.py:\n  2:6 SL107 [*] context manager used without calling it")
    assert f"\n{os.path.join('pkg', 'b.py')}:\n  2:6 SL104 `autograd.pause()`" in out


def test_azure(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "azure", ".")
    lines = out.splitlines()
    assert lines[0].startswith("##vso[task.logissue type=error;sourcepath=a.py;linenumber=2;columnnumber=6;code=SL107;]")
    assert lines[1].startswith("##vso[task.logissue type=") and "sourcepath=pkg/b.py;" in lines[1] and "code=SL104;]" in lines[1]


def test_rdjson(proj, monkeypatch, capsys):
    rc, out, _ = check(proj, monkeypatch, capsys, "--output-format", "rdjson", ".")
    data = json.loads(out)
    assert data["source"]["name"] == "scopelint" and data["severity"] == "WARNING"
    first = data["diagnostics"][0]
    assert first["code"] == {"value": "SL107"} and first["location"]["path"] == "a.py"
    assert first["location"]["range"] == {"start": {"line": 2, "column": 6}, "end": {"line": 2, "column": 19}}
    assert first["suggestions"][0]["text"] == "torch.no_grad()"
    monkeypatch.setenv("SCOPELINT_DOCS_URL", "https://docs.example.org/sl/")
    data = json.loads(check(proj, monkeypatch, capsys, "--output-format", "rdjson", ".")[1])
    assert data["diagnostics"][0]["code"]["url"] == "https://docs.example.org/sl/rules/SL107/"


def test_json_has_the_rule_name(proj, monkeypatch, capsys):
    data = json.loads(check(proj, monkeypatch, capsys, "--output-format", "json", ".")[1])
    assert {(f["code"], f["name"]) for f in data} == {("SL107", "grad-context-not-called"), ("SL104", "redundant-pause")}
    assert all(f["url"] is None for f in data)
    write(proj, {"pyproject.toml": '[tool.scopelint]\ndocs-url = "https://docs.example.org/x/"\n'})
    data = json.loads(check(proj, monkeypatch, capsys, "--output-format", "json", ".")[1])
    assert {f["url"] for f in data} == {"https://docs.example.org/x/rules/SL107/", "https://docs.example.org/x/rules/SL104/"}


def test_output_format_from_variable_and_configuration(proj):
    assert process(["check", "."], proj, env={"SCOPELINT_OUTPUT_FORMAT": "concise"}).stdout.startswith("a.py:2:6: SL107")
    proc = process(["check", "--output-format", "json", "."], proj, env={"SCOPELINT_OUTPUT_FORMAT": "concise"})
    assert json.loads(proc.stdout)[0]["code"] == "SL107"  # the option wins
    write(proj, {"pyproject.toml": '[tool.scopelint]\noutput-format = "pylint"\n'})
    assert process(["check", "."], proj).stdout.startswith("a.py:2: [SL107]")
    proc = process(["check", "."], proj, env={"SCOPELINT_OUTPUT_FORMAT": "nonsense"})
    assert proc.returncode == 2 and "SCOPELINT_OUTPUT_FORMAT" in proc.stderr


def test_force_color_and_no_color(proj):
    assert "\x1b[" not in process(["check", "."], proj).stdout  # a pipe: no colour
    assert "\x1b[" in process(["check", "."], proj, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in process(["check", "--color", "never", "."], proj, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in process(["check", "."], proj, env={"FORCE_COLOR": ""}).stdout  # (empty: unset)


# --- usage --------------------------------------------------------------------------------------
def test_a_typo_says_did_you_mean_with_the_subcommands_usage(proj):
    proc = process(["check", "--selct", "SL1", "."], proj)
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: scopelint check ")
    assert "unrecognized arguments: --selct" in proc.stderr and "did you mean `--select`?" in proc.stderr
    proc = process(["check", "--no-fxi", "."], proj)
    assert proc.returncode == 2 and "did you mean `--no-fix`?" in proc.stderr


def test_bash_completion_completes_commands_options_formats_and_codes(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    script = process(["generate-shell-completion", "bash"], tmp_path).stdout
    (tmp_path / "c.sh").write_text(script)

    def complete(*words):
        line = " ".join(words)
        probe = (f"source {tmp_path / 'c.sh'}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
                 "_scopelint; printf '%s\\n' \"${COMPREPLY[@]}\"")
        return subprocess.run([bash, "-c", probe], capture_output=True, text=True, timeout=30).stdout.split()

    assert {"check", "rule", "verify", "generate-shell-completion"} <= set(complete("scopelint", "''"))
    assert complete("scopelint", "check", "--sel") == ["--select"]
    assert "--no-fix" in complete("scopelint", "check", "--no-f")
    assert set(complete("scopelint", "check", "--output-format", "''")) >= {"full", "grouped", "rdjson", "azure", "sarif"}
    assert complete("scopelint", "check", "--select", "SL20") == [f"SL20{i}" for i in range(1, 10)]


@pytest.mark.parametrize("shell, checker", [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])])
def test_zsh_and_fish_completion_scripts(tmp_path, shell, checker):
    proc = process(["generate-shell-completion", shell], tmp_path)
    assert proc.returncode == 0
    if shell == "zsh":
        assert proc.stdout.startswith("#compdef scopelint") and "complete -o filenames -F _scopelint scopelint" in proc.stdout
    else:
        assert "complete -c scopelint -n __fish_use_subcommand -a check" in proc.stdout
        assert "complete -c scopelint -n '__fish_seen_subcommand_from check' -l output-format -x -a " in proc.stdout
    if shutil.which(checker[0]) is None:
        pytest.skip(f"no {checker[0]} here to parse the script (its content was checked)")
    (tmp_path / "script").write_text(proc.stdout)
    assert subprocess.run([*checker, str(tmp_path / "script")], capture_output=True, timeout=30).returncode == 0


def _run_on_a_tty(args, cwd, env):
    """The command with its stderr on a pseudo-terminal (stdout a pipe); returns stderr's bytes."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "scopelint", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select_module.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(master)
    return proc, seen


def test_a_progress_line_on_a_terminal_only(proj):
    env = {**os.environ, "SCOPELINT_PROGRESS_DELAY": "0", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc, err = _run_on_a_tty(["check", "--no-cache", "--jobs", "1", "."], proj, env)
    assert proc.returncode == 1
    assert b"scopelint: checking 3 files..." in err and err.rstrip().endswith(b"\x1b[2K")  # erased at the end
    piped = process(["check", "--no-cache", "--jobs", "1", "."], proj, env={"SCOPELINT_PROGRESS_DELAY": "0"})
    assert "checking" not in piped.stderr and piped.stderr == ""


def test_watch_checks_again_when_a_file_changes(proj):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPELINT_")}
    env.update(NO_COLOR="1", SCOPELINT_WATCH_INTERVAL="0.2")
    proc = subprocess.Popen([sys.executable, "-m", "scopelint", "check", "--no-cache", "-w", "--output-format", "concise", "."],
                            cwd=proj, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        def wait_for(stream, text, timeout=60):
            got = ""
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                line = stream.readline()
                got += line
                if text in got:
                    return got
            raise AssertionError(f"no {text!r} in {got!r}")

        wait_for(proc.stderr, "Watching for file changes.")
        (proj / "a.py").write_text(CLEAN)
        wait_for(proc.stderr, "File change detected...")
        wait_for(proc.stderr, "Watching for file changes.")
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    runs = out.split("Found")
    assert "a.py:2:6: SL107" in runs[0] and "a.py:2:6: SL107" not in "".join(runs[1:]), out


@pytest.mark.parametrize("doc", ["README.md", "docs/configuration.md"])
def test_the_documented_configuration_is_valid_as_written(tmp_path, monkeypatch, capsys, doc):
    """The `[tool.scopelint]` example of the README and of the configuration page, every key
    in it, loads as written (only `extend` pointed at a file that exists)."""
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", (REPO / doc).read_text(encoding="utf-8"), re.S)
                if b.startswith("[tool.scopelint]") and "docs-url" in b]
    write(tmp_path, {"base.toml": "[tool.scopelint]\n", "sub/pyproject.toml": block.replace("../pyproject.toml", "../base.toml"),
                     "sub/a.py": TORCH_BAD})
    from scopelint.config import KNOWN_KEYS

    keys = set(re.findall(r"^([a-z-]+) =", block, re.M))
    assert keys == KNOWN_KEYS, (KNOWN_KEYS - keys, keys - KNOWN_KEYS)  # every setting is documented there
    rc, out, err = check(tmp_path, monkeypatch, capsys, "--show-settings", "sub/a.py")
    assert rc == 0, err
    assert f'Settings path: "{tmp_path / "sub" / "pyproject.toml"}"' in out and "explicit-preview-rules = false" in out
