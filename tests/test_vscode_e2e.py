"""The VS Code extension (editors/vscode) in a real VS Code: code-server with the built
.vsix installed, driven in Debian's Chromium by playwright-core
(``scripts/vscode_e2e.py``; ``editors/vscode/e2e/drive.js``).

A buggy PyTorch file's diagnostics are read from the Problems panel; the SL107 quick fix
is applied from the editor's code actions and saved, and the file on disk must be the
fixed one; a notebook's cells get their diagnostics; the extension's output names the
interpreter's scopelint; then, with ``scopelint.interpreter`` pointed at a Python without
scopelint, the extension says so and lints with its bundled scopelint; last, in a
workspace the user does not trust, it says it does not run, and nothing is linted. Screenshots and
the run's record go to ``test-artifacts/vscode/`` (``$SCOPELINT_ARTIFACTS``).

Installing code-server takes minutes (``python scripts/vscode_e2e.py install``; it is kept
in ``~/.cache/scopelint/vscode-e2e``; ``.ci/run`` does it): the test installs nothing and
is skipped, with the reason, where code-server or Chromium is not installed or could not
be.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs pygls (pip install 'scopelint[lsp]')")

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("vscode_e2e", REPO / "scripts" / "vscode_e2e.py")
e2e = sys.modules.get("vscode_e2e") or importlib.util.module_from_spec(_spec)
if "vscode_e2e" not in sys.modules:
    sys.modules["vscode_e2e"] = e2e
    _spec.loader.exec_module(e2e)

ARTIFACTS = Path(os.environ.get("SCOPELINT_ARTIFACTS", REPO / "test-artifacts")) / "vscode"
BARE_PYTHON = "/usr/bin/python3"


def test_extension_version_is_the_python_packages():
    """build.py refuses to package otherwise; this catches a bump of one without the other."""
    sys.path.insert(0, str(e2e.EXTENSION))
    try:
        import build
    finally:
        sys.path.pop(0)
    assert build.extension_version() == build.python_version()


def _bare_python() -> str | None:
    """A Python 3 without scopelint (for the not-installed notice), or None."""
    if not os.access(BARE_PYTHON, os.X_OK):
        return None
    probe = subprocess.run([BARE_PYTHON, "-c", "import scopelint"], cwd="/", capture_output=True)
    return BARE_PYTHON if probe.returncode != 0 else None


def codes_of(rows, name: str) -> list:
    """The codes the Problems panel shows under file ``name``'s row."""
    out, current = [], None
    for row in rows:
        if "scopelint(" not in row:
            current = row.rsplit(" ", 1)[0] if row.rsplit(" ", 1)[-1].isdigit() else row
        elif current == name:
            out += re.findall(r"scopelint\((SL\d+)\)", row)
    return sorted(out)


def test_vscode_extension_end_to_end(tmp_path):
    try:
        tools = e2e.prepare(install=False)  # checks; builds and installs the .vsix
    except e2e.Unavailable as exc:
        pytest.skip(f"VS Code (code-server) and Chromium cannot be had here: {exc}")
    bare = _bare_python()
    result = e2e.run_e2e(tools, tmp_path, sys.executable, ARTIFACTS, bare)
    where = f"(record: {ARTIFACTS / 'vscode-e2e.json'})"
    assert result.get("ok"), f"{result.get('error')}\n{result.get('driver_log')}\n{where}"

    problems = result["problems"]
    file_rows = " | ".join(problems["file"])
    assert "scopelint(SL107)" in file_rows and "scopelint(SL201)" in file_rows, file_rows
    assert "context manager used without calling it" in file_rows
    # The quick fix chosen from the editor's code actions, saved: the file on disk changed.
    assert any(a.startswith("SL107") for a in problems["actions"]), problems["actions"]
    assert result["train_after"] == e2e.TRAIN_FIXED
    after = " | ".join(problems["file_after_fix"])
    assert "scopelint(SL107)" not in after and "scopelint(SL201)" in after, after
    # The notebook's cells.
    assert codes_of(problems["notebook"], "explore.ipynb") == ["SL101", "SL107"], problems["notebook"]
    # The output names the environment's scopelint and the start time.
    assert "server started in" in result["output"], result["output"]  # shown by "scopelint: Show output"
    import scopelint

    assert f"starting scopelint {scopelint.__version__} in {sys.executable}" in result["output_log"], result["output_log"]
    assert result["timings"]["server_start_ms"] is not None
    screenshot = ARTIFACTS / "vscode-diagnostics.png"
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 20_000
    if bare is not None:
        notice = [m for m in result["notifications"] if "scopelint is not installed in" in m]
        assert notice and bare in notice[0] and "pip install" in notice[0], result["notifications"]
        assert "scopelint(SL101)" in " | ".join(problems["bundled"])
        assert f"starting the bundled scopelint, run by {bare} (Python 3." in result["output_log"], result["output_log"]
    # "Fix all" with a notebook cell active: the notebook fixed (and saved), SL101 stays.
    assert result["notebook_after"] == e2e.NOTEBOOK_CELLS[:3] + [e2e.NOTEBOOK_CELLS[3].replace("no_grad:", "no_grad():")]
    assert codes_of(problems["notebook_after_fix_all"], "explore.ipynb") == ["SL101"], problems["notebook_after_fix_all"]
    # An untrusted workspace: the notice, and no server (no diagnostics for the same file).
    assert any("does not run in an untrusted workspace" in m for m in result["untrusted_notifications"])
    assert "scopelint(" not in " | ".join(problems["untrusted"]), problems["untrusted"]
    assert "the workspace is not trusted: the server is not started" in result["output_log"]
    print("timings:", result["timings"])
