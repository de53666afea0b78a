"""``python -m scopelint.site``: build the documentation site (mkdocs-material) into
``site/``, from the code: the pages of ``docs/`` written by hand, the rule pages and the
preview page generated afresh from the rule classes (``scopelint.docgen``), and
CHANGELOG.md. The site's address (``site_url``) is the package's one canonical
documentation address, ``Documentation`` in pyproject.toml's ``[project.urls]``, when
it has one. ``--serve`` serves it on localhost instead.

Needs ``mkdocs-material`` (``pip install 'scopelint[docs]'``; the test extra has it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent


def canonical_url(root: Path = ROOT) -> Optional[str]:
    """``Documentation`` of pyproject.toml's ``[project.urls]`` when it is a web address."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(root / "pyproject.toml", "rb") as fh:
            urls = tomllib.load(fh).get("project", {}).get("urls", {})
    except (OSError, ValueError):
        return None
    url = urls.get("Documentation") if isinstance(urls, dict) else None
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None


def stage(root: Path, into: Path) -> Path:
    """A docs folder to build: ``docs/``, the generated pages rewritten from the code
    (never a stale committed page), and ``changelog.md``."""
    from scopelint.docgen import pages

    docs = into / "docs"
    shutil.copytree(root / "docs", docs, ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.pyc"))
    for rel, text in pages().items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    changelog = root / "CHANGELOG.md"
    if changelog.is_file():
        (docs / "changelog.md").write_text(changelog.read_text(encoding="utf-8"), encoding="utf-8")
    return docs


def build(root: Path = ROOT, site_dir: Optional[Path] = None, serve: bool = False) -> Path:
    try:
        from mkdocs.commands import build as mk_build
        from mkdocs.config import load_config
        from mkdocs.exceptions import Abort
    except ImportError:
        raise SystemExit("scopelint.site needs mkdocs-material: pip install 'scopelint[docs]'") from None
    import logging

    log = logging.getLogger("mkdocs")
    if not log.handlers:  # (mkdocs's own command line sets this up; say its warnings here too)
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s - %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.WARNING)
    site_dir = Path(site_dir or root / "site").resolve()
    with tempfile.TemporaryDirectory(prefix="scopelint-site-") as tmp:
        docs = stage(root, Path(tmp))
        overrides = {"docs_dir": str(docs), "site_dir": str(site_dir)}
        url = canonical_url(root)
        if url:
            overrides["site_url"] = url
        config = load_config(config_file=str(root / "mkdocs.yml"), **overrides)
        if serve:
            from mkdocs.commands import serve as mk_serve

            served = {k: v for k, v in overrides.items() if k != "site_dir"}  # (serve builds into its own folder)
            mk_serve.serve(config_file=str(root / "mkdocs.yml"), **served)  # pragma: no cover
            return site_dir
        config.plugins.on_startup(command="build", dirty=False)
        try:
            mk_build.build(config)
        except Abort as exc:  # strict mode: a warning (a broken link) fails the build
            raise SystemExit(f"scopelint.site: {exc}") from None
        finally:
            config.plugins.on_shutdown()
    return site_dir


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scopelint.site", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site-dir", type=Path, default=None, help="where to write the site (default: site/)")
    parser.add_argument("--serve", action="store_true", help="serve the site on localhost instead")
    args = parser.parse_args(argv)
    out = build(ROOT, args.site_dir, args.serve)
    print(f"scopelint.site: built {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
