"""scopelint: a linter for autograd scope misuse in PyTorch and MXNet code."""

import os

__version__ = "0.2.0"
# Where the rules' pages are published (JSON ``url``, SARIF ``helpUri``, the editor's
# links): in this order, the environment variable, ``docs-url`` in the configuration
# (``set_docs_url``), else the project's canonical documentation address, written once:
# ``Documentation`` in pyproject.toml's ``[project.urls]`` (the package metadata). With
# none, a finding has no URL (SARIF carries each rule's page in ``help.markdown``): never
# a ``file://`` path of the machine that ran the check.
DOCS_URL_ENV = "SCOPELINT_DOCS_URL"
_configured: "list[str]" = []


def docs_dir() -> str:
    """The folder of the documentation pages (``model.md``, ``rules/SLxxx.md``): the
    installed package's ``scopelint/docs``, or the repository's ``docs/`` (a checkout,
    an editable install)."""
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "docs")
    if os.path.isdir(os.path.join(installed, "rules")):
        return installed
    return os.path.join(os.path.dirname(here), "docs")


def canonical_docs_url():
    """``Documentation`` of the installed package's ``Project-URL``s when it is a web
    address; None otherwise (not installed, not published yet)."""
    if "canonical" not in _CACHE:
        url = None
        try:
            from importlib.metadata import PackageNotFoundError, metadata

            for entry in metadata("scopelint").get_all("Project-URL") or []:
                label, _, value = entry.partition(",")
                if label.strip().lower() == "documentation" and value.strip().startswith(("https://", "http://")):
                    url = value.strip()
        except (ImportError, PackageNotFoundError, OSError, ValueError):
            url = None
        _CACHE["canonical"] = url
    return _CACHE["canonical"]


_CACHE: dict = {}


def set_docs_url(url) -> None:
    """``docs-url`` of the run's configuration (None: not set)."""
    _configured[:] = [url] if url else []


def docs_base():
    """The documentation site's address in force, or None."""
    return os.environ.get(DOCS_URL_ENV) or (_configured[0] if _configured else None) or canonical_docs_url()


def docs_url(code: str):
    """The URL of rule ``code``'s page: ``{base}/rules/{code}/`` (the site's layout:
    ``python -m scopelint.site``), or the setting itself where it holds ``{code}``
    (``https://example.org/blob/main/docs/rules/{code}.md``); None when no address is set."""
    base = docs_base()
    if not base:
        return None
    if "{code}" in base:
        return base.replace("{code}", code.upper())
    return base.rstrip("/") + f"/rules/{code.upper()}/"
