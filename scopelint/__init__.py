"""scopelint: a linter for autograd scope misuse in PyTorch and MXNet code."""

import os

__version__ = "0.1.0"
# Where a rule's page is: ``{code}`` is the rule's code (``SL101``). Set the environment
# variable to the pages' home once they are published (e.g. a repository's
# ``.../blob/main/docs/rules/{code}.md``); by default the URL is the page shipped with
# the installed package (``docs/rules/SL101.md`` in the repository), as a file URI.
DOCS_URL_ENV = "SCOPELINT_DOCS_URL"


def docs_dir() -> str:
    """The folder of the documentation pages (``model.md``, ``rules/SLxxx.md``): the
    installed package's ``scopelint/docs``, or the repository's ``docs/`` (a checkout,
    an editable install)."""
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "docs")
    if os.path.isdir(os.path.join(installed, "rules")):
        return installed
    return os.path.join(os.path.dirname(here), "docs")


def docs_url(code: str) -> str:
    """The URL of rule ``code``'s page."""
    template = os.environ.get(DOCS_URL_ENV)
    if template:
        return template.replace("{code}", code.upper()) if "{code}" in template else template.rstrip("/") + f"/{code.upper()}.md"
    from pathlib import Path

    return Path(docs_dir(), "rules", f"{code.upper()}.md").as_uri()
