"""`[tool.scopelint]` configuration, `--config`, default excludes and `.gitignore`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from test_cli import MX_BAD, TORCH_BAD, found, run, write

SCORE = """\
import torch

model = torch.nn.Linear(3, 1)


def score_batch(x):
    return model(x)
"""  # SL103 at 7:12 only when `score_*` is configured as an inference function


def codes(out: str) -> set:
    return {c for *_, c in found(out)}


def files(out: str) -> set:
    return {p.replace(os.sep, "/") for p, *_ in found(out)}


def check(tmp_path, monkeypatch, capsys, *args):
    return run(["check", "--output-format", "concise", *args], tmp_path, monkeypatch, capsys)


# --- the keys ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "table, expected",
    [
        ('select = ["SL107"]', {"SL107"}),
        ('select = ["SL1"]', {"SL104", "SL107"}),
        ('select = ["SL2"]', set()),
        ('ignore = ["SL104"]', {"SL107"}),
        ('ignore = ["SL10"]', set()),
        ('select = ["SL2"]\nextend-select = ["SL107"]', {"SL107"}),
        ('extend-select = ["SL104"]\nignore = ["SL104"]', {"SL107"}),
    ],
)
def test_selection_keys(tmp_path, monkeypatch, capsys, table, expected):
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": MX_BAD, "pyproject.toml": f"[tool.scopelint]\n{table}\n"})
    rc, out, err = check(tmp_path, monkeypatch, capsys)
    assert codes(out) == expected, err
    assert rc == (1 if expected else 0)


def test_command_line_wins_over_the_file(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": MX_BAD, "pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n'})
    assert codes(check(tmp_path, monkeypatch, capsys, "--select", "SL104")[1]) == {"SL104"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--extend-select", "SL104")[1]) == {"SL104", "SL107"}
    assert codes(check(tmp_path, monkeypatch, capsys, "--ignore", "SL107")[1]) == set()


def test_per_file_ignores(tmp_path, monkeypatch, capsys):
    write(tmp_path, {
        "a.py": TORCH_BAD,
        "tests/test_a.py": TORCH_BAD,
        "legacy/old.py": TORCH_BAD + MX_BAD.replace("from mxnet", "\nfrom mxnet"),
        "pyproject.toml": '[tool.scopelint.per-file-ignores]\n"tests/*" = ["SL107"]\n"legacy/*.py" = ["SL1"]\n',
    })
    rc, out, err = check(tmp_path, monkeypatch, capsys)
    assert files(out) == {"a.py"}, err


def test_per_file_ignores_by_file_name(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "sub/a.py": TORCH_BAD, "b.py": TORCH_BAD,
                     "pyproject.toml": '[tool.scopelint]\nper-file-ignores = {"a.py" = ["SL107"]}\n'})
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert files(out) == {"b.py"}


def test_per_file_ignores_apply_to_stdin_filename(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"pyproject.toml": '[tool.scopelint.per-file-ignores]\n"gen/*" = ["SL107"]\n'})
    rc, out, _ = run(["check", "-", "--stdin-filename", "gen/x.py", "--output-format", "concise"], tmp_path,
                     monkeypatch, capsys, stdin=TORCH_BAD.encode())
    assert rc == 0 and found(out) == set()
    rc, out, _ = run(["check", "-", "--stdin-filename", "src/x.py", "--output-format", "concise"], tmp_path,
                     monkeypatch, capsys, stdin=TORCH_BAD.encode())
    assert rc == 1 and codes(out) == {"SL107"}


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "gen/g.py": TORCH_BAD, "build/b.py": TORCH_BAD, "vendor/v.py": TORCH_BAD})
    write(tmp_path, {"pyproject.toml": '[tool.scopelint]\nextend-exclude = ["gen", "vendor/*.py"]\n'})
    assert files(check(tmp_path, monkeypatch, capsys)[1]) == {"a.py"}
    write(tmp_path, {"pyproject.toml": '[tool.scopelint]\nexclude = ["gen"]\n'})
    assert files(check(tmp_path, monkeypatch, capsys)[1]) == {"a.py", "build/b.py", "vendor/v.py"}


def test_excluded_file_named_explicitly_is_checked(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"gen/g.py": TORCH_BAD, "build/b.py": TORCH_BAD,
                     "pyproject.toml": '[tool.scopelint]\nextend-exclude = ["gen"]\n'})
    assert files(check(tmp_path, monkeypatch, capsys, "gen/g.py", "build/b.py")[1]) == {"gen/g.py", "build/b.py"}


def test_inference_functions(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"m.py": SCORE})
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert rc == 0 and found(out) == set()
    write(tmp_path, {"pyproject.toml": '[tool.scopelint]\ninference-functions = ["score_*"]\n'})
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert found(out) == {("m.py", 7, 12, "SL103")}


def test_severity_overrides(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "b.py": MX_BAD,
                     "pyproject.toml": '[tool.scopelint.severity]\nSL107 = "info"\nSL104 = "error"\n'})
    rc, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert {d["code"]: d["severity"] for d in json.loads(out)} == {"SL107": "info", "SL104": "error"}
    rc, out, _ = run(["check", "--output-format", "sarif"], tmp_path, monkeypatch, capsys)
    levels = {r["ruleId"]: r["level"] for r in json.loads(out)["runs"][0]["results"]}
    assert levels == {"SL107": "note", "SL104": "error"}


def test_severity_by_prefix(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "pyproject.toml": '[tool.scopelint]\nseverity = {SL1 = "warning"}\n'})
    rc, out, _ = run(["check", "--output-format", "json"], tmp_path, monkeypatch, capsys)
    assert [d["severity"] for d in json.loads(out)] == ["warning"]


# --- which file applies --------------------------------------------------------------------
def test_nearest_pyproject_applies(tmp_path, monkeypatch, capsys):
    write(tmp_path, {
        "pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n',
        "a.py": TORCH_BAD + "\n" + MX_BAD,
        "sub/pyproject.toml": '[tool.scopelint]\nselect = ["SL104"]\n',
        "sub/b.py": TORCH_BAD + "\n" + MX_BAD,
        "plain/pyproject.toml": '[project]\nname = "plain"\n',  # no [tool.scopelint]: the parent's applies
        "plain/c.py": TORCH_BAD + "\n" + MX_BAD,
    })
    rc, out, err = check(tmp_path, monkeypatch, capsys)
    got = {(p.replace(os.sep, "/"), c) for p, _, _, c in found(out)}
    assert got == {("a.py", "SL107"), ("sub/b.py", "SL104"), ("plain/c.py", "SL107")}, err
    # the same from inside the sub-project, and for a file named directly
    rc, out, _ = check(tmp_path / "sub", monkeypatch, capsys)
    assert codes(out) == {"SL104"}
    rc, out, _ = check(tmp_path, monkeypatch, capsys, "sub/b.py")
    assert codes(out) == {"SL104"}


def test_config_option(tmp_path, monkeypatch, capsys):
    write(tmp_path, {
        "a.py": TORCH_BAD + "\n" + MX_BAD,
        "pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n',
        "sub/pyproject.toml": '[tool.scopelint]\nselect = ["SL107"]\n',
        "sub/b.py": TORCH_BAD + "\n" + MX_BAD,
        "ci/scopelint.toml": 'select = ["SL104"]\n',  # a plain TOML file: top-level keys
        "ci/other.toml": '[tool.scopelint]\nignore = ["SL104"]\n',
    })
    rc, out, _ = check(tmp_path, monkeypatch, capsys, "--config", "ci/scopelint.toml")
    assert codes(out) == {"SL104"} and len(found(out)) == 2  # every file, whatever its nearest pyproject
    rc, out, _ = check(tmp_path, monkeypatch, capsys, "--config", "ci/other.toml")
    assert codes(out) == {"SL107"}


# --- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "table, words",
    [
        ('selct = ["SL1"]', ["selct"]),
        ('extend_select = ["SL1"]', ["extend_select"]),
        ('select = ["SL999"]', ["SL999", "select"]),
        ('ignore = ["XX1"]', ["XX1", "ignore"]),
        ('extend-select = ["SL9"]', ["SL9", "extend-select"]),
        ('per-file-ignores = {"a.py" = ["SL42"]}', ["SL42", "per-file-ignores"]),
        ('severity = {SL999 = "info"}', ["SL999", "severity"]),
        ('severity = {SL101 = "fatal"}', ["fatal", "SL101"]),
        ("select = 3", ["select"]),
        ('inference-functions = [1]', ["inference-functions"]),
        ('per-file-ignores = ["x"]', ["per-file-ignores"]),
        ('exclude = {x = 1}', ["exclude"]),
    ],
)
def test_config_errors_name_the_key_and_exit_2(tmp_path, monkeypatch, capsys, table, words):
    write(tmp_path, {"a.py": TORCH_BAD, "pyproject.toml": f"[tool.scopelint]\n{table}\n"})
    rc, out, err = check(tmp_path, monkeypatch, capsys)
    assert rc == 2
    assert "pyproject.toml" in err
    for word in words:
        assert word in err
    assert "Traceback" not in err and found(out) == set()


def test_tool_scopelint_not_a_table(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "pyproject.toml": '[tool]\nscopelint = "on"\n'})
    rc, _, err = check(tmp_path, monkeypatch, capsys)
    assert rc == 2 and "[tool.scopelint]" in err


def test_invalid_toml(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD, "pyproject.toml": "[tool.scopelint\nselect = \n"})
    rc, _, err = check(tmp_path, monkeypatch, capsys)
    assert rc == 2 and "pyproject.toml" in err and "TOML" in err and "Traceback" not in err


def test_missing_config_file(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"a.py": TORCH_BAD})
    rc, _, err = check(tmp_path, monkeypatch, capsys, "--config", "nope.toml")
    assert rc == 2 and "nope.toml" in err


# --- default excludes and .gitignore ------------------------------------------------------------
@pytest.mark.parametrize(
    "folder", [".venv", "venv", "build", "dist", "lib/python3.11/site-packages", "__pycache__", ".git", "x.egg-info"]
)
def test_default_excludes(tmp_path, monkeypatch, capsys, folder):
    write(tmp_path, {"a.py": TORCH_BAD, f"{folder}/skipped.py": TORCH_BAD, f"src/{folder}/deep.py": TORCH_BAD})
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert files(out) == {"a.py"}
    # named explicitly, it is checked
    rc, out, _ = check(tmp_path, monkeypatch, capsys, f"{folder}/skipped.py")
    assert files(out) == {f"{folder}/skipped.py"}


def test_gitignore_patterns(tmp_path, monkeypatch, capsys):
    write(tmp_path, {
        ".gitignore": "# generated\n*_pb2.py\ngen_*.py\n!gen_keep.py\nout/\n/rootonly.py\ndocs/**/conf.py\n",
        "a.py": TORCH_BAD,
        "x_pb2.py": TORCH_BAD,
        "sub/y_pb2.py": TORCH_BAD,
        "gen_one.py": TORCH_BAD,
        "gen_keep.py": TORCH_BAD,  # negated: checked
        "out/o.py": TORCH_BAD,  # dir-only pattern
        "sub/out/o.py": TORCH_BAD,
        "rootonly.py": TORCH_BAD,  # anchored: only at the root
        "sub/rootonly.py": TORCH_BAD,
        "docs/a/b/conf.py": TORCH_BAD,
        "docs/conf.py": TORCH_BAD,  # **/ matches zero folders too
    })
    (tmp_path / ".git").mkdir()
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert files(out) == {"a.py", "gen_keep.py", "sub/rootonly.py"}


def test_gitignore_dir_only_pattern_does_not_match_files(tmp_path, monkeypatch, capsys):
    write(tmp_path, {".gitignore": "cache.py/\n/anchored/\n", "cache.py/inner.py": TORCH_BAD, "sub/cache.py": TORCH_BAD,
                     "anchored/a.py": TORCH_BAD, "sub/anchored/a.py": TORCH_BAD})
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert files(out) == {"sub/cache.py", "sub/anchored/a.py"}


def test_gitignore_in_a_subfolder_and_negation_order(tmp_path, monkeypatch, capsys):
    write(tmp_path, {
        ".gitignore": "*.py\n!*.py\nskip_*.py\n",
        "keep.py": TORCH_BAD,
        "skip_me.py": TORCH_BAD,
        "pkg/.gitignore": "local.py\n!skip_pkg.py\n",  # a deeper file can re-include
        "pkg/local.py": TORCH_BAD,
        "pkg/skip_pkg.py": TORCH_BAD,
        "pkg/other.py": TORCH_BAD,
    })
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert files(out) == {"keep.py", "pkg/skip_pkg.py", "pkg/other.py"}


def test_gitignore_cannot_reinclude_inside_an_ignored_folder(tmp_path, monkeypatch, capsys):
    write(tmp_path, {".gitignore": "vendored/\n!vendored/keep.py\n", "vendored/keep.py": TORCH_BAD, "a.py": TORCH_BAD})
    assert files(check(tmp_path, monkeypatch, capsys)[1]) == {"a.py"}


def test_gitignore_of_the_enclosing_repository_applies_to_a_subfolder(tmp_path, monkeypatch, capsys):
    write(tmp_path, {".gitignore": "pkg/gen/\n", "pkg/gen/g.py": TORCH_BAD, "pkg/m.py": TORCH_BAD})
    (tmp_path / ".git").mkdir()
    rc, out, _ = check(tmp_path / "pkg", monkeypatch, capsys, ".")
    assert files(out) == {"m.py"}


def test_gitignore_outside_the_repository_is_ignored(tmp_path, monkeypatch, capsys):
    write(tmp_path, {".gitignore": "*.py\n", "repo/a.py": TORCH_BAD})
    (tmp_path / "repo" / ".git").mkdir()
    assert files(check(tmp_path / "repo", monkeypatch, capsys)[1]) == {"a.py"}


def test_gitignored_file_named_explicitly_is_checked(tmp_path, monkeypatch, capsys):
    write(tmp_path, {".gitignore": "a.py\n", "a.py": TORCH_BAD})
    assert files(check(tmp_path, monkeypatch, capsys, "a.py")[1]) == {"a.py"}
    assert files(check(tmp_path, monkeypatch, capsys)[1]) == set()


def test_symlinked_folder_is_not_followed(tmp_path, monkeypatch, capsys):
    write(tmp_path, {"real/a.py": TORCH_BAD})
    os.symlink(tmp_path / "real", tmp_path / "link", target_is_directory=True)
    assert files(check(tmp_path, monkeypatch, capsys)[1]) == {"real/a.py"}


@pytest.mark.parametrize(
    "glob, ignored",
    [
        ("legacy", {"legacy/old.py", "legacy/deep/older.py"}),
        ("legacy/", {"legacy/old.py", "legacy/deep/older.py"}),
        ("legacy/*", {"legacy/old.py", "legacy/deep/older.py"}),  # fnmatch's * crosses folders
        ("./legacy/*.py", {"legacy/old.py", "legacy/deep/older.py"}),
        ("**/older.py", {"legacy/deep/older.py"}),
        ("**/main.py", {"main.py"}),  # **/ matches zero folders too
        ("*.py", {"main.py", "legacy/old.py", "legacy/deep/older.py"}),
        ("deep", {"legacy/deep/older.py"}),
    ],
)
def test_per_file_ignores_glob_forms(tmp_path, monkeypatch, capsys, glob, ignored):
    names = {"main.py", "legacy/old.py", "legacy/deep/older.py"}
    write(tmp_path, {n: TORCH_BAD for n in names})
    write(tmp_path, {"pyproject.toml": f'[tool.scopelint.per-file-ignores]\n"{glob}" = ["SL107"]\n'})
    rc, out, _ = check(tmp_path, monkeypatch, capsys)
    assert files(out) == names - ignored


def test_exclude_matches_a_path_reached_through_a_symlinked_folder(tmp_path, monkeypatch, capsys):
    # The walk's paths lie under `link`, outside the configuration's root; through the
    # link they are inside it, and there the root-relative pattern `src/gen` names them.
    write(tmp_path, {"proj/pyproject.toml": '[tool.scopelint]\nextend-exclude = ["src/gen"]\n',
                     "proj/src/gen/a.py": TORCH_BAD, "proj/src/b.py": TORCH_BAD})
    os.symlink(tmp_path / "proj", tmp_path / "link", target_is_directory=True)
    rc, out, _ = check(tmp_path, monkeypatch, capsys, "--config", "proj/pyproject.toml", "link")
    assert files(out) == {"link/src/b.py"}


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_symlink_loop_outside_the_configuration_s_root_is_no_crash(tmp_path, monkeypatch, capsys):
    # (``Path.resolve`` raised RuntimeError on it, and the run ended with a traceback)
    write(tmp_path, {"proj/pyproject.toml": "[tool.scopelint]\n", "out/a.py": TORCH_BAD})
    os.symlink(tmp_path / "out" / "loop2", tmp_path / "out" / "loop1")
    os.symlink(tmp_path / "out" / "loop1", tmp_path / "out" / "loop2")
    rc, out, err = check(tmp_path, monkeypatch, capsys, "--config", "proj/pyproject.toml", "out")
    assert rc == 1 and files(out) == {"out/a.py"}


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_the_configuration_of_a_path_with_dotdot_follows_the_link_before_it(tmp_path, monkeypatch):
    # link/../d is x/d (a file), as the system reads it, not ./d (a configured folder)
    from scopelint.config import Resolver

    write(tmp_path, {"x/y/keep.txt": "", "x/d": "", "d/pyproject.toml": '[tool.scopelint]\nignore = ["SL107"]\n'})
    os.symlink(tmp_path / "x" / "y", tmp_path / "link", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    assert "SL107" in Resolver().settings_for(Path("link/../d")).select
    assert "SL107" not in Resolver().settings_for(Path("d/a.py")).select


def test_fifo_as_config_is_a_clear_error_not_a_hang(tmp_path):
    # Issue 44: opening a FIFO waits for a writer forever; it is refused (exit 2).
    import subprocess
    import sys

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "cfg.toml")
    (tmp_path / "a.py").write_text("import torch\n")
    proc = subprocess.run([sys.executable, "-m", "scopelint", "check", "--no-cache", "--config", "cfg.toml", "a.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "cfg.toml: cannot read: a FIFO, not a regular file" in proc.stderr and "Traceback" not in proc.stderr
