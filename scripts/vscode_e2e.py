#!/usr/bin/env python3
"""The VS Code extension (editors/vscode) in a real VS Code: install what that takes, and
run it.

    python scripts/vscode_e2e.py install     # what the test needs; prints the timings
    python scripts/vscode_e2e.py run         # install, then the end-to-end run; prints its result

What is installed, into ``$SCOPELINT_VSCODE_E2E_HOME`` (default
``~/.cache/scopelint/vscode-e2e``), nothing of it in the repository:

- Debian's packages (``apt-get``, when root): ``build-essential pkg-config libkrb5-dev
  libx11-dev libxkbfile-dev libsecret-1-dev`` for code-server's native modules,
  ``ripgrep`` and ``chromium``;
- ``code-server`` 4.100.3 from the npm registry (the newest that runs on Node 20), with
  ``playwright-core`` to drive the Chromium. code-server's ``@vscode/ripgrep`` would
  download ``rg`` from GitHub; it first looks in its cache
  (``$TMPDIR/vscode-ripgrep-cache-<version>/ripgrep-<tag>-<target>.tar.gz``), where
  Debian's ``rg`` is put. npm 11 runs no dependency's install script unless allowed:
  code-server's build its native modules and are needed, so they are allowed for this
  one install;
- the extension's .vsix (``editors/vscode/build.py``), installed into a code-server
  extensions folder.

A step that cannot be done raises ``Unavailable`` with the reason, kept in
``install-failed.txt`` there; the test installs nothing (it would take minutes): it is
skipped with that reason, or with how to install. ``run_e2e`` starts code-server on a workspace with a buggy PyTorch file
and a notebook and runs ``editors/vscode/e2e/drive.js`` in Chromium against it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
EXTENSION = REPO / "editors" / "vscode"
DRIVER = EXTENSION / "e2e" / "drive.js"
CODE_SERVER_VERSION = "4.100.3"
PLAYWRIGHT_VERSION = "1.55.0"
# code-server 4.100.3's lib/vscode/npm-shrinkwrap.json pins @vscode/ripgrep 1.15.11,
# whose lib/postinstall.js fetches ripgrep release v13.0.0-10.
RIPGREP_PACKAGE_VERSION = "1.15.11"
RIPGREP_TAG = "v13.0.0-10"
RIPGREP_TARGET = "x86_64-unknown-linux-musl"
APT_PACKAGES = ("build-essential", "pkg-config", "libkrb5-dev", "libx11-dev", "libxkbfile-dev",
                "libsecret-1-dev", "ripgrep", "chromium")
CHROMIUM = "/usr/bin/chromium"
INSTALL_HINT = "run `python scripts/vscode_e2e.py install`, about 5 minutes"
FAILED = "install-failed.txt"  # the reason of the last failed install, for the test's skip


class Unavailable(Exception):
    """What the run needs cannot be had here: the message says what and why."""


@dataclass
class Tools:
    home: Path
    code_server: Path
    chromium: str
    node_path: Path  # a node_modules with playwright-core
    vsix: Path
    extensions: Path
    timings: Dict[str, float]


def default_home() -> Path:
    env = os.environ.get("SCOPELINT_VSCODE_E2E_HOME")
    return Path(env) if env else Path.home() / ".cache" / "scopelint" / "vscode-e2e"


def _run(cmd: List[str], what: str, timeout: float, cwd: Optional[Path] = None, env: Optional[dict] = None) -> str:
    """Run a step quietly: its output only in the reason when it fails."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except FileNotFoundError:
        raise Unavailable(f"{what}: `{cmd[0]}` is not installed") from None
    except subprocess.TimeoutExpired:
        raise Unavailable(f"{what}: `{' '.join(cmd)}` ran over {timeout:.0f} s") from None
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip()[-1500:]
        raise Unavailable(f"{what}: `{' '.join(cmd)}` exited {proc.returncode}: {tail}")
    return proc.stdout


def debian_packages(install: bool = True) -> None:
    """Debian's packages the run needs, installed with apt-get when missing (as root;
    ``install=False``: only checked)."""
    if not shutil.which("dpkg-query"):
        missing = [p for p in ("rg", "chromium") if not shutil.which(p)]
        if missing:
            raise Unavailable(f"not Debian, and {', '.join(missing)} not on PATH")
        return
    status = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n", *APT_PACKAGES],
                            capture_output=True, text=True)
    installed = {line.split()[0] for line in status.stdout.splitlines() if line.endswith(" installed")}
    missing = [p for p in APT_PACKAGES if p not in installed]
    if not missing:
        return
    if not install:
        raise Unavailable(f"Debian packages missing: {' '.join(missing)} ({INSTALL_HINT})")
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise Unavailable(f"Debian packages missing and not root to install them: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run(["apt-get", "update", "-qq"], "apt-get update", 900, env=env)
    _run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], "apt-get install", 1800, env=env)


def node_major() -> int:
    out = _run(["node", "--version"], "node", 60)
    try:
        return int(out.strip().lstrip("v").split(".")[0])
    except ValueError:
        raise Unavailable(f"cannot read node's version: {out!r}") from None


def install_code_server(home: Path, install: bool = True) -> Path:
    """code-server and playwright-core under ``home`` (kept: a second call returns at once;
    ``install=False``: only checked)."""
    code_server = home / "node_modules" / "code-server"
    binary = code_server / "out" / "node" / "entry.js"
    stamp = home / "installed.json"
    want = {"code-server": CODE_SERVER_VERSION, "playwright-core": PLAYWRIGHT_VERSION}
    if binary.is_file() and stamp.is_file() and json.loads(stamp.read_text()) == want:
        return code_server
    if not install:
        failed = home / FAILED
        why = f"the last install failed: {failed.read_text().strip()}" if failed.is_file() else INSTALL_HINT
        raise Unavailable(f"code-server {CODE_SERVER_VERSION} is not installed in {home} ({why})")
    if node_major() != 20:
        raise Unavailable(f"code-server {CODE_SERVER_VERSION} needs Node 20; this node is {node_major()}")
    if not shutil.which("npm"):
        raise Unavailable("npm is not installed")
    rg = shutil.which("rg")
    if rg is None:
        raise Unavailable("ripgrep (`rg`) is not installed")
    home.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    tmp = home / "tmp"
    cache = tmp / f"vscode-ripgrep-cache-{RIPGREP_PACKAGE_VERSION}"
    cache.mkdir(parents=True, exist_ok=True)
    with tarfile.open(cache / f"ripgrep-{RIPGREP_TAG}-{RIPGREP_TARGET}.tar.gz", "w:gz") as tar:
        tar.add(rg, arcname="rg")
    package = home / "package.json"
    if not package.exists():
        package.write_text(json.dumps({"name": "scopelint-vscode-e2e", "private": True}) + "\n")
    env = dict(os.environ, TMPDIR=str(tmp),
               npm_config_yes="true",  # node-pty's build runs `npx node-gyp`
               npm_config_unsafe_perm="true",  # code-server's postinstall asks for it when root
               # npm 11 skips dependencies' install scripts unless allowed; code-server's
               # build its native modules (node-pty, kerberos, ...) and are required.
               npm_config_dangerously_allow_all_scripts="true",
               npm_config_fund="false", npm_config_audit="false", npm_config_update_notifier="false")
    _run(["npm", "install", "--no-save", f"code-server@{CODE_SERVER_VERSION}", f"playwright-core@{PLAYWRIGHT_VERSION}"],
         "installing code-server", 3600, cwd=home, env=env)
    if not binary.is_file():
        raise Unavailable(f"code-server installed without {binary}")
    rg_in = code_server / "lib" / "vscode" / "node_modules" / "@vscode" / "ripgrep" / "bin" / "rg"
    if not rg_in.is_file():
        raise Unavailable(f"code-server installed without ripgrep ({rg_in})")
    stamp.write_text(json.dumps(want))
    return code_server


def code_server_command(code_server: Path) -> List[str]:
    return ["node", str(code_server / "out" / "node" / "entry.js")]


def prepare(home: Optional[Path] = None, bundle_python: Optional[str] = None, install: bool = True) -> Tools:
    """Everything the run needs, installed when missing (``install=False``: Debian's
    packages and code-server only checked, as the test does); the .vsix built and
    installed in code-server. Timings of each step (s)."""
    home = home or default_home()
    timings: Dict[str, float] = {}
    start = time.monotonic()
    try:
        debian_packages(install)
        timings["debian_packages_s"] = time.monotonic() - start
        if not os.access(CHROMIUM, os.X_OK):
            raise Unavailable(f"no Chromium at {CHROMIUM}")
        start = time.monotonic()
        code_server = install_code_server(home, install)
        timings["code_server_s"] = time.monotonic() - start
    except Unavailable as exc:
        if install:  # what the test says when it is skipped
            home.mkdir(parents=True, exist_ok=True)
            (home / FAILED).write_text(str(exc)[:2000] + "\n")
        raise
    (home / FAILED).unlink(missing_ok=True)

    start = time.monotonic()
    sys.path.insert(0, str(EXTENSION))
    try:
        import build as extension_build
    finally:
        sys.path.pop(0)
    vsix = home / "scopelint.vsix"
    version = bundle_python or "%d.%d" % sys.version_info[:2]
    try:
        extension_build.build(vsix, [version], quiet=True)
    except extension_build.BuildError as exc:
        raise Unavailable(f"building the extension: {exc}") from None
    timings["vsix_s"] = time.monotonic() - start

    start = time.monotonic()
    extensions = home / "extensions"
    shutil.rmtree(extensions, ignore_errors=True)
    _run([*code_server_command(code_server), "--config", str(home / "config.yaml"), "--extensions-dir", str(extensions), "--user-data-dir",
          str(home / "user-data"), "--install-extension", str(vsix), "--force"], "installing the .vsix", 300)
    timings["install_extension_s"] = time.monotonic() - start
    return Tools(home, code_server, CHROMIUM, home / "node_modules", vsix, extensions, timings)


# -- the run ------------------------------------------------------------------------------

TRAIN = """\
import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]

with torch.no_grad:
    print("before training:", model(torch.ones(1, 4)))

total_loss = 0
for x, y in data:
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss
print(total_loss)
"""
TRAIN_FIXED = TRAIN.replace("with torch.no_grad:", "with torch.no_grad():")
NOTEBOOK_CELLS = [
    "import torch\n\nmodel = torch.nn.Linear(3, 1)\nx = torch.ones(2, 3)",
    "with torch.no_grad():\n    loss = model(x).sum()",
    "loss.backward()",
    "with torch.no_grad:\n    print(model(x))",
]


def notebook(cells: List[str]) -> str:
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"cell{i}", "metadata": {}, "outputs": [],
                   "source": src.splitlines(True)} for i, src in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n"


def make_workspace(root: Path, interpreter: str) -> Path:
    """A project: a training script with SL107 (fixable) and SL201, a notebook with SL101 and
    SL107, and the workspace setting naming the interpreter that has scopelint."""
    ws = root / "project"
    (ws / ".vscode").mkdir(parents=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n\n[tool.scopelint]\n')
    (ws / "train.py").write_text(TRAIN)
    (ws / "explore.ipynb").write_text(notebook(NOTEBOOK_CELLS))
    (ws / ".vscode" / "settings.json").write_text(json.dumps({"scopelint.interpreter": [interpreter]}, indent=2))
    return ws


USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "chat.commandCenter.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "files.autoSave": "off",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"code-server exited {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"code-server did not answer at {url} within {timeout:.0f} s")


def run_e2e(tools: Tools, workdir: Path, interpreter: str, artifacts: Path,
            bare_interpreter: Optional[str] = None, timeout: float = 600) -> dict:
    """Start code-server on a fresh workspace, drive it; the driver's result, with the
    workspace's path, the file's text after the run and code-server's log."""
    ws = make_workspace(workdir, interpreter)
    untrusted = make_workspace(workdir / "untrusted", interpreter)
    user_data = workdir / "user-data"
    (user_data / "User").mkdir(parents=True)
    (user_data / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2))
    artifacts.mkdir(parents=True, exist_ok=True)
    for old in artifacts.glob("vscode-*"):  # a screenshot of an earlier run's failure is no evidence of this one
        old.unlink()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(workdir / "code-server.log", "w")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    started = time.monotonic()
    proc = subprocess.Popen(
        [*code_server_command(tools.code_server), "--config", str(workdir / "config.yaml"), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}",
         "--user-data-dir", str(user_data), "--extensions-dir", str(tools.extensions),
         "--disable-telemetry", "--disable-update-check",
         "--disable-getting-started-override", str(ws)],
        cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_http(url, proc, 120)
        code_server_up = time.monotonic() - started
        config = {
            "url": url, "chromium": tools.chromium, "workspace": str(ws), "file": "train.py",
            "original": TRAIN, "expectedCodes": ["SL107", "SL201"], "quickFix": "SL107",
            "fixedCode": "SL107", "notebook": "explore.ipynb", "notebookCodes": ["SL101", "SL107"],
            "screenshots": str(artifacts), "out": str(workdir / "drive.json"),
            "bareInterpreter": bare_interpreter, "untrustedWorkspace": str(untrusted),
            "notebookFixAll": {"gone": "SL107"},
        }
        (workdir / "drive-config.json").write_text(json.dumps(config, indent=2))
        driver = subprocess.run(["node", str(DRIVER), str(workdir / "drive-config.json")], cwd=workdir,
                                env=dict(os.environ, NODE_PATH=str(tools.node_path)), stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=timeout)
        result = json.loads((workdir / "drive.json").read_text()) if (workdir / "drive.json").exists() else {}
        result.setdefault("timings", {})["code_server_up_ms"] = round(code_server_up * 1000)
        result["driver_rc"] = driver.returncode
        result["driver_log"] = (driver.stdout + driver.stderr)[-4000:]
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        log.close()
    # The extension's output channel as VS Code logs it (the whole text; the panel shows
    # what fits, wrapped).
    logs = sorted(user_data.glob("logs/*/exthost*/output_logging_*/*scopelint.log"), key=lambda p: p.stat().st_mtime)
    result["output_log"] = "".join(p.read_text(errors="replace") for p in logs)
    result["workspace"] = str(ws)
    result["train_after"] = (ws / "train.py").read_text()
    try:
        result["notebook_after"] = ["".join(c["source"]) for c in json.loads((ws / "explore.ipynb").read_text())["cells"]]
    except (OSError, ValueError, KeyError) as exc:
        result["notebook_after"] = f"unreadable: {exc}"
    result["code_server_log"] = (workdir / "code-server.log").read_text(errors="replace")[-4000:]
    (artifacts / "vscode-e2e.json").write_text(json.dumps(result, indent=2))
    return result


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["install", "run"])
    parser.add_argument("--home", type=Path, default=None, help="where to install (default: %(default)s)")
    parser.add_argument("--artifacts", type=Path, default=REPO / "test-artifacts" / "vscode")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        tools = prepare(args.home)
    except Unavailable as exc:
        print(f"vscode_e2e: unavailable: {exc}", file=sys.stderr)
        return 3
    timings = {k: round(v, 1) for k, v in tools.timings.items()}
    timings["total_s"] = round(time.monotonic() - start, 1)
    print(json.dumps(timings))
    if args.what == "install":
        return 0
    import tempfile

    with tempfile.TemporaryDirectory(prefix="scopelint-vscode-") as tmp:
        result = run_e2e(tools, Path(tmp), sys.executable, args.artifacts, shutil.which("python3", path="/usr/bin"))
    print(json.dumps({k: result.get(k) for k in ("ok", "error", "timings", "problems", "notifications")}, indent=2))
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
