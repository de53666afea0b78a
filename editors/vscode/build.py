#!/usr/bin/env python3
"""Build the VS Code extension's .vsix: ``python editors/vscode/build.py``.

Steps: the extension's version must be the Python package's (``pyproject.toml``;
``--sync-version`` writes it into ``package.json``); its npm packages are installed
(``npm ci``, from ``package-lock.json``); with ``--bundle`` (the default) scopelint and its
dependencies are installed under ``bundled/libs/py3.X`` for each Python version asked for
(``--bundle-pythons``, default: this interpreter's), for ``scopelint.importStrategy:
useBundled`` and as the fallback of ``fromEnvironment``; then ``@vscode/vsce`` packages it
(its ``vscode:prepublish`` type-checks and bundles the TypeScript with esbuild). Prints the
.vsix's path. Needs node and npm (the npm registry), and pip (PyPI) for the bundle.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# What the wheel's build reads (pyproject's packages, readme and license-files).
WHEEL_SOURCES = ["pyproject.toml", "README.md", "LICENSE", "scopelint", "rules", "runtime_check", "docs"]


class BuildError(Exception):
    """A step failed: the message says which and why."""


def python_version() -> str:
    """The Python package's version: pyproject.toml's ``[project] version``, or, where
    that is dynamic (``[tool.setuptools.dynamic] version = {attr = ...}``), the
    ``__version__`` assignment it names, read as text (nothing is imported)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: scopelint's own dependency
        import tomli as tomllib
    with open(REPO / "pyproject.toml", "rb") as f:
        data = tomllib.load(f)
    version = data.get("project", {}).get("version")
    if isinstance(version, str):
        return version
    if "version" not in data.get("project", {}).get("dynamic", []):
        raise BuildError("no [project] version in pyproject.toml, and none dynamic")
    attr = data.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("version", {}).get("attr")
    if not isinstance(attr, str) or "." not in attr:
        raise BuildError("pyproject.toml: a dynamic version without [tool.setuptools.dynamic] version.attr")
    module, name = attr.rsplit(".", 1)
    source = REPO.joinpath(*module.split("."))
    source = source / "__init__.py" if source.is_dir() else source.with_suffix(".py")
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as e:
        raise BuildError(f"cannot read {source} for the version: {e}") from e
    found = re.search(rf"^{re.escape(name)}\s*=\s*[\"']([^\"']+)[\"']", text, re.M)
    if not found:
        raise BuildError(f"no `{name} = \"...\"` in {source}")
    return found.group(1)


def extension_version() -> str:
    return json.loads((HERE / "package.json").read_text(encoding="utf-8"))["version"]


def sync_version(version: str) -> None:
    """Write ``version`` into package.json and package-lock.json (their root entries)."""
    for name in ("package.json", "package-lock.json"):
        path = HERE / name
        if not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        data["version"] = version
        if name == "package-lock.json" and "" in data.get("packages", {}):
            data["packages"][""]["version"] = version
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def run(cmd: Sequence[str], cwd: Path = HERE, env: Optional[dict] = None, quiet: bool = False) -> None:
    if not quiet:
        print("+", " ".join(cmd), file=sys.stderr)
    try:
        proc = subprocess.run(list(cmd), cwd=cwd, env=env, text=True,
                              stdout=subprocess.PIPE if quiet else None, stderr=subprocess.STDOUT if quiet else None)
    except OSError as exc:
        raise BuildError(f"{cmd[0]}: {exc}") from None
    if proc.returncode != 0:
        tail = (proc.stdout or "")[-3000:] if quiet else ""
        raise BuildError(f"`{' '.join(cmd)}` exited {proc.returncode}\n{tail}")


def npm_install(quiet: bool) -> None:
    """The extension's npm packages, as package-lock.json pins them (no install scripts
    are needed: esbuild's binary comes in its platform package)."""
    stamp = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    if stamp.exists() and lock.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return
    run(["npm", "ci" if lock.exists() else "install", "--no-audit", "--no-fund", "--ignore-scripts"], quiet=quiet)


def bundle(pythons: List[str], quiet: bool) -> None:
    """scopelint[lsp] and its dependencies for each Python version, in bundled/libs/py3.X
    (wheels only: the same files pip would install into such an environment here)."""
    libs = HERE / "bundled" / "libs"
    shutil.rmtree(HERE / "bundled", ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        # Built from a copy of what the build reads: a stale build/ of the checkout (a
        # module since removed) cannot get in, and a build running beside is not touched.
        src = Path(tmp) / "src"
        src.mkdir()
        for name in WHEEL_SOURCES:
            if (REPO / name).is_dir():
                shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(REPO / name, src / name)
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp, str(src)], quiet=quiet)
        (wheel,) = Path(tmp).glob("scopelint-*.whl")
        for version in pythons:
            if not re.fullmatch(r"3\.\d+", version):
                raise BuildError(f"--bundle-pythons: not a Python version: {version!r}")
            target = libs / f"py{version}"
            run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile",
                 "--target", str(target), "--python-version", version, "--implementation", "cp",
                 "--only-binary=:all:", f"{wheel}[lsp]"], quiet=quiet)
            for extra in ("bin",):
                shutil.rmtree(target / extra, ignore_errors=True)
    (HERE / "bundled" / "bundle.json").write_text(
        json.dumps({"scopelint": python_version(), "pythons": pythons}, indent=2) + "\n", encoding="utf-8")


def build(out: Optional[Path] = None, pythons: Optional[List[str]] = None, sync: bool = False,
          quiet: bool = False) -> Path:
    """Build the .vsix (``pythons``: the bundle's Python versions; None or [] for none)
    and return its path."""
    version = python_version()
    if extension_version() != version:
        if not sync:
            raise BuildError(f"editors/vscode/package.json's version is {extension_version()}, pyproject.toml's "
                             f"{version}: run with --sync-version")
        sync_version(version)
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise BuildError(f"`{tool}` is not on PATH (the extension is built with Node.js 20+)")
    npm_install(quiet)
    shutil.copyfile(REPO / "LICENSE", HERE / "LICENSE")
    if pythons:
        bundle(pythons, quiet)
    else:
        shutil.rmtree(HERE / "bundled", ignore_errors=True)
    out = Path(out or HERE / f"scopelint-{version}.vsix").resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    vsce = HERE / "node_modules" / ".bin" / "vsce"
    run([str(vsce), "package", "--no-dependencies", "--allow-missing-repository", "--out", str(out)], quiet=quiet)
    if not out.is_file():
        raise BuildError(f"vsce reported success but wrote no {out}")
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="the .vsix to write (default: editors/vscode/scopelint-VERSION.vsix)")
    parser.add_argument("--no-bundle", action="store_true", help="bundle no scopelint (fromEnvironment only)")
    parser.add_argument("--bundle-pythons", default="%d.%d" % sys.version_info[:2],
                        help="comma-separated Python versions to bundle scopelint for (default: this one's)")
    parser.add_argument("--sync-version", action="store_true", help="write pyproject.toml's version into package.json")
    parser.add_argument("--quiet", action="store_true", help="show the tools' output only when a step fails")
    args = parser.parse_args(argv)
    pythons = [] if args.no_bundle else [v.strip() for v in args.bundle_pythons.split(",") if v.strip()]
    try:
        print(build(args.out, pythons, args.sync_version, args.quiet))
    except BuildError as exc:
        print(f"build.py: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
