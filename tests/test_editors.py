"""The README's Neovim snippets, run as written in a real headless Neovim against the real
``scopelint lsp``: the file's diagnostics must arrive.

Neovim: the ``nvim`` on ``PATH`` when it is 0.8 or later, otherwise Debian trixie's 0.10
fetched as ``scripts/smoke_interpreters.py`` fetches interpreters (Debian 12's own is
0.7, older than ``vim.lsp.start``). A snippet that needs a newer Neovim than the one at
hand is skipped, saying so. The 0.7 snippet runs in the ``nvim`` on ``PATH`` when it is
0.7 (Debian 12's ``apt-get install neovim``), and in the 0.8+ one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest

pytest.importorskip("pygls", reason="the language server needs pygls (pip install 'scopelint[lsp]')")

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("smoke_interpreters", REPO / "scripts" / "smoke_interpreters.py")
smoke = sys.modules.get("smoke_interpreters") or importlib.util.module_from_spec(_spec)
if "smoke_interpreters" not in sys.modules:
    sys.modules["smoke_interpreters"] = smoke
    _spec.loader.exec_module(smoke)

BAD = "import torch\n\nmodel = torch.nn.Linear(3, 1)\nwith torch.no_grad:\n    out = model(torch.ones(2, 3))\n"
PROBE = """
local ok = vim.wait(90000, function() return #vim.diagnostic.get(0) > 0 end, 100)
local diags, clients = {}, {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(diags, { lnum = d.lnum, col = d.col, code = d.code, message = d.message })
end
for _, c in ipairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
  table.insert(clients, { name = c.name, root = c.config.root_dir })
end
vim.fn.writefile({ vim.json.encode({ ok = ok, diags = diags, clients = clients }) }, "result.json")
vim.cmd("qa!")
"""


def _version(nvim: str, env: Dict[str, str]) -> Optional[Tuple[int, int]]:
    try:
        out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60, env=env).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


@pytest.fixture(scope="module")
def neovim(tmp_path_factory):
    """(path, environment, version) of a Neovim 0.8 or later."""
    env = dict(os.environ)
    found = shutil.which("nvim")
    why = "no nvim on PATH"
    if found:
        version = _version(found, env)
        if version and version >= (0, 8):
            return found, env, version
        why = f"the nvim on PATH is {version}, older than 0.8"
    try:
        nvim = smoke.unpack_program(smoke.NEOVIM, tmp_path_factory.mktemp("neovim"))
    except smoke.Unavailable as exc:
        pytest.skip(f"{why}, and Debian's Neovim 0.10 cannot be had here: {exc}")
    env["VIMRUNTIME"] = str(nvim.parent.parent / "share" / "nvim" / "runtime")
    version = _version(str(nvim), env)
    assert version and version >= (0, 10), f"the unpacked Neovim does not run: {version}"
    return str(nvim), env, version


def _readme_lua(heading: str) -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(heading, 1)[1]
    return re.search(r"```lua\n(.*?)```", body, re.S).group(1)


def _run_snippet(nvim: str, env: Dict[str, str], tmp_path: Path, lua: str) -> Tuple[Path, dict]:
    """Open a buggy file in a project with ``lua`` as the whole configuration; what the
    probe saw (the diagnostics, the clients)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.scopelint]\n")
    (project / "bad.py").write_text(BAD)
    (tmp_path / "init.lua").write_text(lua)
    (tmp_path / "probe.lua").write_text(PROBE)
    env = dict(env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))
    proc = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"), "bad.py",
         "-c", f"luafile {tmp_path / 'probe.lua'}"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180,
    )
    result = project / "result.json"
    assert result.is_file(), f"nvim exited {proc.returncode}: {proc.stdout}{proc.stderr}"
    return project, json.loads(result.read_text())


def _assert_diagnostics(project: Path, data: dict) -> None:
    assert data["clients"] == [{"name": "scopelint", "root": str(project)}], data
    assert data["ok"] is True, data
    assert [(d["lnum"], d["col"], d["code"]) for d in data["diags"]] == [(3, 5, "SL107")], data


@pytest.mark.parametrize("heading,needs", [("**Neovim** (0.11+):", (0, 11)), ("**Neovim** 0.8 to 0.10", (0, 8)),
                                           ("**Neovim** 0.7", (0, 8))],
                         ids=["0.11+", "0.8-0.10", "0.7-snippet-on-0.8+"])
def test_readme_neovim_snippet_gets_the_diagnostics(neovim, tmp_path, heading, needs):
    nvim, env, version = neovim
    if version < needs:
        pytest.skip(f"this snippet needs Neovim {needs[0]}.{needs[1]}+; the one here is {version[0]}.{version[1]}")
    _assert_diagnostics(*_run_snippet(nvim, env, tmp_path, _readme_lua(heading)))


def test_readme_neovim_07_snippet_on_debian_12s_neovim(tmp_path):
    """Debian 12's packaged Neovim (0.7.2) has neither ``vim.lsp.start`` nor ``vim.fs``."""
    env = dict(os.environ)
    nvim = shutil.which("nvim")
    version = _version(nvim, env) if nvim else None
    if version is None or version[:2] != (0, 7):
        pytest.skip(f"no Neovim 0.7 on PATH (found {version}); Debian 12: apt-get install neovim")
    project, data = _run_snippet(nvim, env, tmp_path, _readme_lua("**Neovim** 0.7"))
    _assert_diagnostics(project, data)
    # The snippet's other root marker: a project without pyproject.toml, under a .git folder.
    (project / "pyproject.toml").unlink()
    (project / ".git").mkdir()
    (project / "result.json").unlink()
    sub = project / "pkg"
    sub.mkdir()
    (sub / "mod.py").write_text(BAD)
    env = dict(env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))
    subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"), "mod.py",
                    "-c", f"luafile {tmp_path / 'probe.lua'}"],
                   cwd=sub, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    data = json.loads((sub / "result.json").read_text())
    assert data["clients"] == [{"name": "scopelint", "root": str(project)}], data
    assert [d["code"] for d in data["diags"]] == ["SL107"], data
