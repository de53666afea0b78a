"""Every code scopelint reports, documented: the rules (``scopelint.rules``) and SL000,
the code of a file that cannot be read or parsed (reported by the engine, not a rule).

``scopelint rule``, the generated pages (``scopelint.docgen``) and SARIF's rule
descriptors read the codes from here, so that a new rule module is documented
everywhere without being listed anywhere.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

from scopelint.finding import SYNTAX_ERROR
from scopelint.preview import is_preview
from scopelint.rule import Rule
from scopelint.rules import ALL_RULES

LINTER = "scopelint"
# ruff's wording (`ruff rule --output-format json`, "fix"), by `Rule.fixable`.
FIX_AVAILABILITY = {"safe": "Fix is always available.", "unsafe": "Fix is sometimes available.", None: "Fix is not available."}


class SyntaxErrorCode(Rule):
    """SL000: reported by the engine and the file reader, never by ``check``."""

    code = SYNTAX_ERROR
    name = "syntax-error"
    severity = "error"
    frameworks = ("torch", "mxnet")
    summary = "The file cannot be read or parsed as Python, so nothing else in it is checked."
    help = "Fix the syntax error (or the file's encoding); the other rules then check the file."
    why = """
        scopelint analyses a file only once it parses. A syntax error, a file that is not
        valid in its declared encoding (PEP 263 coding cookie, UTF-8 by default), a binary
        file, a malformed notebook or a file that cannot be read is reported as one
        finding with this code, at the error's line and column where there is one,
        instead of stopping the run: the other files are still checked. Until the file
        parses, no other finding in it can be reported, so a file with SL000 may hide
        real autograd errors. The code is not a rule: it cannot be selected, ignored or
        suppressed with `# noqa` (a file that does not parse is always reported).
    """
    bad = """
        import torch

        def train(model, batch:
            loss = model(batch).sum()
            loss.backward()
    """
    good = """
        import torch

        def train(model, batch):
            loss = model(batch).sum()
            loss.backward()
    """

    def check(self, ctx):
        return ()


def documented() -> Dict[str, Type[Rule]]:
    """Code -> rule class, every code in order, SL000 first."""
    out: Dict[str, Type[Rule]] = {SYNTAX_ERROR: SyntaxErrorCode}
    for code in sorted(ALL_RULES):
        out[code] = ALL_RULES[code]
    return out


def lookup(query: str) -> Optional[Type[Rule]]:
    """A rule by code (any case: ``sl101``) or by name (``backward-on-untracked-value``)."""
    query = (query or "").strip()
    rules = documented()
    if query.upper() in rules:
        return rules[query.upper()]
    return next((rule for rule in rules.values() if rule.name == query.lower()), None)


def fix_availability(rule: Type[Rule]) -> str:
    return FIX_AVAILABILITY.get(rule.fixable, FIX_AVAILABILITY[None])


def rule_json(rule: Type[Rule]) -> dict:
    """``ruff rule --output-format json``'s object (name, code, linter, summary, fix,
    explanation, preview) and scopelint's own keys (severity, frameworks,
    fix_applicability, url). ruff's ``message_formats`` is left out: scopelint's messages
    are built from the code they report, not from a fixed set of templates."""
    return {
        "name": rule.name,
        "code": rule.code,
        "linter": LINTER,
        "summary": rule.summary,
        "fix": fix_availability(rule),
        "fix_applicability": rule.fixable,
        "explanation": rule.documentation(),
        "preview": is_preview(rule.code),
        "severity": rule.severity,
        "frameworks": list(rule.frameworks),
        "url": rule.url(),
    }


def listing() -> str:
    """One line per code: code, name, summary (``scopelint rule`` without a code)."""
    rules = documented()
    width = max(len(r.name) for r in rules.values())
    return "\n".join(f"{code}  {rule.name:<{width}}  {rule.summary}" for code, rule in rules.items())
