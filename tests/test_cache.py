"""The persistent cache (.scopelint_cache/): hits, invalidation, corruption, concurrency,
`scopelint clean`, `--no-cache`; and findings identical with or without the cache, with
any --jobs and with the pre-parse gate on or off, on the fixtures."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scopelint import cache as cache_mod
from scopelint import runner
from scopelint.cache import CACHE_DIR_NAME, Cache, cache_dir, project_root
from scopelint.cli import main
from scopelint.config import Resolver
from scopelint.engine import Settings
from scopelint.runner import check_paths

ROOT = Path(__file__).resolve().parent.parent
TORCH_BAD = "import torch\nwith torch.no_grad:\n    pass\n"  # SL107 (with a fix)
MX_BAD = "from mxnet import autograd\nwith autograd.pause():\n    pass\n"  # SL104
CLEAN = "import torch\nwith torch.no_grad():\n    pass\n"


def write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path):
    return write(tmp_path, {"pyproject.toml": "", "a.py": TORCH_BAD, "pkg/b.py": MX_BAD, "pkg/clean.py": CLEAN})


def tasks_for(root: Path, names, settings=Settings()):
    return [(str(root / n), n, settings, False) for n in names]


def snapshot(results):
    return [(r.filename, [dataclasses.astuple(f) for f in r.findings], sorted(r.lines.items()), r.errors) for r in results]


def entries(directory: Path, values: bool = False):
    """The cache's entries of files' results (``values``: of values the program layer
    keeps, ``Cache.put_value``, instead)."""
    return sorted(p for p in directory.rglob("*.json")
                  if not p.name.startswith(".tmp-") and (b'"body": {"value": ' in p.read_bytes()) == values)


def no_linting(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("linted although cached")

    monkeypatch.setattr(runner, "lint_source", boom)


NAMES = ["a.py", "pkg/b.py", "pkg/clean.py"]


def test_miss_then_hit_gives_the_same_results(project, monkeypatch):
    cache = Cache(project / CACHE_DIR_NAME)
    plain = check_paths(tasks_for(project, NAMES), 1)
    first = check_paths(tasks_for(project, NAMES), 1, cache)
    assert snapshot(first) == snapshot(plain)
    assert any(r.findings for r in first) and any(r.lines for r in first)
    assert any(f.fix is not None for r in first for f in r.findings)  # fixes survive the round trip
    assert len(entries(cache.directory)) == 3
    assert (cache.directory / ".gitignore").read_text().splitlines()[-1] == "*"
    no_linting(monkeypatch)
    again = check_paths(tasks_for(project, NAMES), 1, Cache(project / CACHE_DIR_NAME))
    assert snapshot(again) == snapshot(plain)
    assert [r.path for r in again] == [r.path for r in plain]


def test_a_warm_run_does_not_scan_the_program_again(project, monkeypatch):
    """What the program layer reads of each text (the names it calls, with recording off
    or at all; whether it may hold an anchor) is kept with the results: a cached run on a
    package does not scan its texts again (issue 42: those scans were most of a warm run
    on mxnet's tree)."""
    import scopelint.project as project_mod

    write(project, {"pkg/train.py": "import torch\nfrom pkg.model import infer\nwith torch.no_grad():\n    infer(1)\n",
                    "pkg/model.py": "import torch\ndef infer(x):\n    return x.backward()\n", "pkg/__init__.py": ""})
    names = ["pkg/train.py", "pkg/model.py", "pkg/b.py"]
    cache = Cache(project / CACHE_DIR_NAME)
    plain = check_paths(tasks_for(project, names), 1)
    assert snapshot(check_paths(tasks_for(project, names), 1, cache)) == snapshot(plain)
    assert entries(cache.directory, values=True)

    scans = []
    for name in ("names_called", "names_called_without_grad", "text_may_anchor"):
        real = getattr(project_mod, name)
        monkeypatch.setattr(project_mod, name, lambda *a, _real=real, _name=name, **k: scans.append(_name) or _real(*a, **k))
    assert snapshot(check_paths(tasks_for(project, names), 1, Cache(project / CACHE_DIR_NAME))) == snapshot(plain)
    assert scans == []
    assert snapshot(check_paths(tasks_for(project, names), 1)) == snapshot(plain)
    assert {"names_called", "text_may_anchor"} <= set(scans)  # (without the cache: scanned, which the test counts)


def test_cache_in_parallel_workers(project):
    names = [f"m{i}.py" for i in range(12)]
    write(project, {n: TORCH_BAD if i % 2 else CLEAN for i, n in enumerate(names)})
    cache = Cache(project / CACHE_DIR_NAME)
    plain = check_paths(tasks_for(project, names), 1)
    assert snapshot(check_paths(tasks_for(project, names), 2, cache)) == snapshot(plain)
    assert len(entries(cache.directory)) == len(names)  # written by the workers
    assert snapshot(check_paths(tasks_for(project, names), 2, cache)) == snapshot(plain)


def test_content_change_is_a_miss(project):
    cache = Cache(project / CACHE_DIR_NAME)
    check_paths(tasks_for(project, ["a.py"]), 1, cache)
    (project / "a.py").write_text(CLEAN)
    assert check_paths(tasks_for(project, ["a.py"]), 1, cache)[0].findings == []
    (project / "a.py").write_text(TORCH_BAD)
    assert [f.code for f in check_paths(tasks_for(project, ["a.py"]), 1, cache)[0].findings] == ["SL107"]


def test_settings_name_and_version_are_in_the_key(project, monkeypatch):
    cache = Cache(project / CACHE_DIR_NAME)
    data = b"x = 1\n"
    base = cache.key(data, Settings(), "a.py")
    assert base == cache.key(data, Settings(), "a.py")
    assert base != cache.key(data, Settings(select=("SL101",)), "a.py")
    assert base != cache.key(data, Settings(gate=False), "a.py")
    assert base != cache.key(data, Settings(), "b.py")
    assert base != cache.key(b"x = 2\n", Settings(), "a.py")
    monkeypatch.setattr(cache_mod, "__version__", "999.0")
    assert Cache(project / CACHE_DIR_NAME).key(data, Settings(), "a.py") != base
    # End to end: a selection that excludes the finding's code is not served from the entry.
    check_paths(tasks_for(project, ["a.py"]), 1, cache)
    other = Settings(select=("SL101",))
    assert check_paths(tasks_for(project, ["a.py"], other), 1, cache)[0].findings == []


@pytest.mark.parametrize("damage", [b"", b'{"key": "', b"\x00\xff garbage", b'{"key": "other", "findings": []}', b"[]"])
def test_corrupt_entry_is_a_miss_and_rewritten(project, damage):
    cache = Cache(project / CACHE_DIR_NAME)
    good = snapshot(check_paths(tasks_for(project, ["a.py"]), 1, cache))
    (entry,) = entries(cache.directory)
    entry.write_bytes(damage)
    assert cache.lookup(str(project / "a.py"), "a.py", Settings()) is None
    assert snapshot(check_paths(tasks_for(project, ["a.py"]), 1, cache)) == good
    json.loads(entry.read_bytes())  # rewritten whole
    assert cache.lookup(str(project / "a.py"), "a.py", Settings()) is not None


@pytest.mark.parametrize("edit", [
    lambda b: b.replace(b"SL107", b"SL108", 1),  # a byte changed inside a string: still valid JSON
    lambda b: b.replace(b'"findings": [', b'"findings": [], "x": [', 1),  # the findings dropped
    lambda b: b.replace(b'"body": ', b'"body": ', 1)[:-1] + b" }",  # space before the closing brace
], ids=["byte-in-a-string", "findings-dropped", "trailing-space"])
def test_damage_that_leaves_valid_json_is_a_miss(project, edit):
    """Issue 24's battery: an entry's body is checked against its checksum, so damage that
    keeps the JSON valid never serves another result."""
    cache = Cache(project / CACHE_DIR_NAME)
    good = snapshot(check_paths(tasks_for(project, ["a.py"]), 1, cache))
    (entry,) = entries(cache.directory)
    damaged = edit(entry.read_bytes())
    assert damaged != entry.read_bytes()
    json.loads(damaged)
    entry.write_bytes(damaged)
    assert cache.lookup(str(project / "a.py"), "a.py", Settings()) is None
    assert snapshot(check_paths(tasks_for(project, ["a.py"]), 1, cache)) == good


def test_unwritable_cache_is_ignored(project):
    (project / "blocker").write_text("a file where the cache folder would be")
    cache = Cache(project / "blocker" / CACHE_DIR_NAME)
    plain = check_paths(tasks_for(project, NAMES), 1)
    assert snapshot(check_paths(tasks_for(project, NAMES), 1, cache)) == snapshot(plain)


_WRITER = """
import sys
from pathlib import Path
from scopelint.cache import Cache
from scopelint.runner import FileResult
from scopelint.finding import Finding
cache = Cache(Path(sys.argv[1]))
for i in range(300):
    r = FileResult("f%d.py" % (i % 20), None)
    r.findings = [Finding("SL101", "m" * (i % 20 * 500), "error", r.filename, (1, 1), (1, 2))]
    cache.put("%040x" % (i % 20), r)
    got = cache.get("%040x" % (i % 20))
    assert got is None or got.filename == r.filename, got
"""


def test_concurrent_writers_do_not_break_it(project):
    directory = project / CACHE_DIR_NAME
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(directory)]) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cache = Cache(directory)
    for i in range(20):
        got = cache.get("%040x" % i)
        assert got is not None and got.filename == f"f{i}.py"
    assert not [p for p in directory.rglob(".tmp-*")]  # no temporary files left behind


def test_concurrent_cli_runs_agree(project):
    write(project, {f"m{i}.py": TORCH_BAD for i in range(8)})
    cmd = [sys.executable, "-m", "scopelint", "check", "--output-format", "json", "--exit-zero", "."]
    env = dict(os.environ, NO_COLOR="1")
    procs = [subprocess.Popen(cmd, cwd=project, stdout=subprocess.PIPE, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    warm = subprocess.run(cmd, cwd=project, capture_output=True, env=env, timeout=120).stdout
    cold = subprocess.run(cmd + ["--no-cache"], cwd=project, capture_output=True, env=env, timeout=120).stdout
    assert outs[0] == outs[1] == warm == cold
    assert len(json.loads(cold)) == 10


def test_cli_uses_the_cache_and_no_cache_disables_it(project, monkeypatch, capsys):
    monkeypatch.chdir(project / "pkg")  # the cache lives at the project root (pyproject.toml)
    assert main(["check", "--no-cache", "--output-format", "concise", "."]) == 1
    out_plain = capsys.readouterr().out
    assert not (project / CACHE_DIR_NAME).exists()
    assert main(["check", "--output-format", "concise", "."]) == 1
    assert capsys.readouterr().out == out_plain
    assert len(entries(project / CACHE_DIR_NAME)) == 2
    no_linting(monkeypatch)
    assert main(["check", "--output-format", "concise", "."]) == 1
    assert capsys.readouterr().out == out_plain


def test_stdin_is_not_cached(project, monkeypatch, capsys):
    import io

    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TORCH_BAD.encode())))
    assert main(["check", "--stdin-filename", "x.py", "-"]) == 1
    assert not (project / CACHE_DIR_NAME).exists()


def test_fix_bypasses_the_cache_and_still_fixes(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    main(["check", "a.py"])  # warm the cache
    capsys.readouterr()
    main(["check", "--fix", "a.py"])
    assert "torch.no_grad()" in (project / "a.py").read_text()
    capsys.readouterr()
    assert main(["check", "a.py"]) == 0  # the fixed content is a different key


def test_clean_removes_the_cache(project, monkeypatch, capsys):
    monkeypatch.chdir(project / "pkg")
    main(["check", "."])
    assert (project / CACHE_DIR_NAME).is_dir()
    capsys.readouterr()
    assert main(["clean"]) == 0
    assert not (project / CACHE_DIR_NAME).exists()
    assert CACHE_DIR_NAME in capsys.readouterr().err
    assert main(["clean"]) == 0  # nothing to clean is fine


def test_project_root_is_nearest_pyproject_or_cwd(tmp_path):
    write(tmp_path, {"p/pyproject.toml": "", "p/sub/deeper/x.py": ""})
    assert project_root(tmp_path / "p" / "sub" / "deeper") == tmp_path / "p"
    assert cache_dir(tmp_path / "p" / "sub") == tmp_path / "p" / CACHE_DIR_NAME
    lone = tmp_path / "lone"
    lone.mkdir()
    if not any((d / "pyproject.toml").is_file() for d in tmp_path.parents):
        assert project_root(lone) == lone


# --- identical findings: cache, --jobs, gate, on the fixtures ---------------------------
def test_fixtures_identical_with_cache_jobs_and_gate(tmp_path):
    files = sorted((ROOT / "fixtures").rglob("*.py"))
    assert files
    resolver = Resolver()

    def tasks(gate=True):
        out = []
        for p in files:
            s = resolver.settings_for(p)
            out.append((str(p), str(p.relative_to(ROOT)), s if gate else dataclasses.replace(s, gate=False), False))
        return out

    base = snapshot(check_paths(tasks(), 1))
    assert sum(len(r[1]) for r in base) > 0
    cache = Cache(tmp_path / CACHE_DIR_NAME)
    assert snapshot(check_paths(tasks(), 2)) == base
    assert snapshot(check_paths(tasks(), 2, cache)) == base  # cold, writes
    assert snapshot(check_paths(tasks(), 1, cache)) == base  # warm
    assert snapshot(check_paths(tasks(gate=False), 2)) == base


def test_the_code_stamp_covers_the_rules_wherever_they_live(tmp_path, monkeypatch):
    # A development install maps ``scopelint.rules`` to the repository's ``rules/``,
    # outside the package's folder: editing a rule there must not read results the old
    # rule made (found with an edited SL206 that a cached run kept silent).
    import importlib.util
    import types

    rules = tmp_path / "rules"
    write(rules, {"__init__.py": "", "sl999.py": "X = 1\n"})
    real = importlib.util.find_spec

    def find_spec(name, *a, **k):
        return types.SimpleNamespace(submodule_search_locations=[str(rules)]) if name == "scopelint.rules" else real(name, *a, **k)

    monkeypatch.setattr(cache_mod.importlib.util, "find_spec", find_spec)
    before = cache_mod._code_stamp()
    assert cache_mod._code_stamp() == before
    (rules / "sl999.py").write_text("X = 22\n")
    assert cache_mod._code_stamp() != before


def test_a_warm_run_reads_the_importers_calls_from_the_cache(tmp_path, monkeypatch):
    # The calls each importer makes of another module's functions (their recording state)
    # are kept: a warm run does not walk the importers again, and tells the same.
    from scopelint.core import callsites

    root = write(tmp_path, {
        "pyproject.toml": "",
        "engine.py": "import torch\n\n\ndef evaluate_batch(model, x):\n    return model(x)\n",
        "main.py": "import torch\nfrom engine import evaluate_batch\n\nmodel = torch.nn.Linear(2, 2)\n"
                   "with torch.no_grad():\n    evaluate_batch(model, torch.ones(1, 2))\n",
    })
    names = ["engine.py", "main.py"]
    walked = []
    real = callsites.call_states
    monkeypatch.setattr(callsites, "call_states", lambda *a, **k: walked.append(a[1]) or real(*a, **k))
    plain = check_paths(tasks_for(root, names), 1)
    cache = Cache(root / CACHE_DIR_NAME)
    first = check_paths(tasks_for(root, names), 1, cache)
    assert walked and snapshot(first) == snapshot(plain)
    walked.clear()
    again = check_paths(tasks_for(root, names), 1, Cache(root / CACHE_DIR_NAME))
    assert walked == [] and snapshot(again) == snapshot(plain)
    # an importer edited is walked again
    (root / "main.py").write_text((root / "main.py").read_text().replace("with torch.no_grad():", "if True:"))
    check_paths(tasks_for(root, names), 1, Cache(root / CACHE_DIR_NAME))
    assert walked
