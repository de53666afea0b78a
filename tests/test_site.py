"""The documentation site (issue 43): `python -m scopelint.site` builds it with
mkdocs-material from the code; every internal link resolves, every rule has its page,
and a headless Chromium renders the index and a rule page (screenshots kept under
tests/.artifacts/, which git ignores).

ruff's documentation is the model: one page per rule, reached from the rules' index
(https://docs.astral.sh/ruff/rules/), and a preview page saying which rules are preview
(https://docs.astral.sh/ruff/preview/)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from scopelint.catalog import documented
from scopelint.preview import FIRST_CONTACT, is_preview

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "tests" / ".artifacts"
CHROMIUM = Path("/usr/bin/chromium")

pytest.importorskip("mkdocs", reason="the docs site needs mkdocs-material (the test extra installs it)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The one command the README names, run as a user runs it."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "scopelint.site", "--site-dir", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr  # (strict mode: a broken link fails the build anyway)
    return out


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key) and tag in ("a", "link", "script", "img"):
                self.links.append(attrs[key])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _target(page: Path, href: str, site: Path) -> Path:
    path = unquote(urlparse(href).path)
    if path.startswith("/"):  # (404.html links from the site's root)
        target = (site / path.lstrip("/")).resolve()
    else:
        target = (page.parent / path).resolve() if path else page
    if target.is_dir():
        target = target / "index.html"
    return target


def test_every_internal_link_and_anchor_resolves(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 30
    parsed = {p.resolve(): _parse(p) for p in pages}
    broken = []
    checked = 0
    for page, info in parsed.items():
        for href in info.links:
            if urlparse(href).scheme or href.startswith(("//", "mailto:", "data:")):
                continue  # (outside the site: ruff's docs, semver.org)
            url, fragment = urldefrag(href)
            target = _target(page, url, site)
            checked += 1
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {href}")
            elif fragment and target.suffix == ".html" and fragment not in parsed.get(target, _parse(target)).ids:
                broken.append(f"{page.relative_to(site)}: {href} (no #{fragment})")
    assert checked > 500 and not broken, broken[:20]


def test_every_rule_has_its_page_linked_from_the_index(site):
    index = _parse(site / "rules" / "index.html")
    linked = {_target(site / "rules" / "index.html", urldefrag(h)[0], site) for h in index.links}
    for code, rule in documented().items():
        page = site / "rules" / code / "index.html"
        assert page.is_file(), code
        text = page.read_text(encoding="utf-8")
        assert f"{rule.name} ({code})" in text and "What it does" in text
        assert page.resolve() in linked, f"{code} is not linked from the rules' index"


def test_the_preview_page_gives_each_preview_rule_and_its_figures(site):
    text = re.sub(r"<[^>]+>", "", (site / "preview" / "index.html").read_text(encoding="utf-8"))
    for code, m in FIRST_CONTACT.items():
        assert code in text and f"{m.true}/{m.findings}" in text
    assert {c for c in documented() if is_preview(c)} >= {"SL206", "SL207"}
    assert "0.95" in text and "12" in text


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (Debian's `chromium`; .ci/run installs it)")
@pytest.mark.parametrize("page, words", [
    ("index.html", ["scopelint", "Install and run"]),
    ("rules/SL101/index.html", ["backward-on-untracked-value (SL101)", "Why is this bad?"]),
])
def test_chromium_renders_the_index_and_a_rule_page(site, page, words):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / ("site-" + page.replace("/", "-").replace(".html", ".png"))
    if shot.exists():
        shot.unlink()
    url = (site / page).as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,900",
             f"--user-data-dir={site.parent / 'chromium-profile'}"]
    proc = subprocess.run([str(CHROMIUM), *flags, f"--screenshot={shot}", url], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # (a blank page is a few kB)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 900)
    dom = subprocess.run([str(CHROMIUM), *flags, "--dump-dom", url], capture_output=True, text=True, timeout=180).stdout
    text = re.sub(r"<[^>]+>", "", dom)
    for word in words:
        assert word in text, word
    assert 'class="md-header' in dom  # the theme rendered (mkdocs-material's header)
