"""The two tiers of rules, as ruff ships them: **stable** rules are the default selection;
**preview** rules run only with ``--preview`` / ``preview = true`` (and then, like
ruff's, are selected by ``ALL`` and prefixes unless ``explicit-preview-rules`` is set).

Which rules are preview is decided here, and only here, from the measurements below:
per rule, its *first-contact precision* -- the share of its findings judged true on
repositories it was never tuned on, the first time it met them -- and the number of
such repositories it was measured on. A rule is preview when

- it is listed in ``NEW`` (added since the last release, not yet measured), or
- its latest first-contact measurement's precision is below ``GRADUATION_PRECISION``.

It graduates (becomes stable) when a first-contact measurement on at least
``GRADUATION_REPOSITORIES`` repositories reaches ``GRADUATION_PRECISION``; the docs say
so on its page (``scopelint.docgen``) and CHANGELOG.md records the graduation.

A rule without a first-contact measurement stays stable: the rules released before
the tiers existed were judged on the 21 repositories of the ecosystem corpus
(``benchmarks/ecosystem/baseline.json``), whose findings were used to tune them, so that
corpus is not a first contact; they keep their stable status until a first-contact
measurement says otherwise.

This module is plain data (no LibCST, no rule imported): the engine's default
selection, the configuration, the docs and ``scopelint rule`` all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional

GRADUATION_PRECISION = 0.95
GRADUATION_REPOSITORIES = 12


@dataclass(frozen=True)
class FirstContact:
    """One first-contact measurement of a rule: ``true`` of ``findings`` judged true on
    ``repositories`` repositories it was never tuned on."""

    true: int
    findings: int
    repositories: int
    when: str  # when and where it was measured (a week, an issue)

    @property
    def precision(self) -> Optional[float]:
        return self.true / self.findings if self.findings else None

    @property
    def graduates(self) -> bool:
        """Enough repositories, and precise enough there (no findings: nothing shows it)."""
        p = self.precision
        return p is not None and p >= GRADUATION_PRECISION and self.repositories >= GRADUATION_REPOSITORIES

    def describe(self) -> str:
        p = self.precision
        share = f"{self.true}/{self.findings} ({p:.2f})" if p is not None else "no findings"
        return f"{share} on {self.repositories} repositories ({self.when})"


# The latest first-contact measurement of each measured rule. Update the figures here
# (and CHANGELOG.md on a graduation); every tier follows.
FIRST_CONTACT: Dict[str, FirstContact] = {
    # (before: 0/8 on 16 repositories, 2026-12, issue 43; SL207 found nothing on the
    # 14 repositories of 2026-12-06, so its latest measurement with findings stands)
    # (rounds 3 to 10 since: SL206 0/2 on 14 (round 3), SL207 0/2 (round 9); round 10 found
    # neither on 15; round 11: SL206 0/1, SL207 0/4 on 14)
    # Rounds 12 to 15 together (benchmarks/firstcontact/round1[2-5]*; each round's
    # findings too few to stand alone): SL206 0/3, 1/1, none, none; SL207 0/1, none,
    # none, 1/3.
    "SL206": FirstContact(true=1, findings=4, repositories=44, when="2026-12-07, 44 new repositories (rounds 12-15)"),
    "SL207": FirstContact(true=1, findings=4, repositories=44, when="2026-12-07, 44 new repositories (rounds 12-15)"),
}

# Rules added since the last release and not yet measured: preview until they are.
NEW: FrozenSet[str] = frozenset()


def is_preview(code: str) -> bool:
    code = code.upper()
    if code in NEW:
        return True
    measured = FIRST_CONTACT.get(code)
    if measured is None:
        return False
    p = measured.precision
    return p is not None and p < GRADUATION_PRECISION


def reason(code: str) -> str:
    """Why ``code`` is in its tier, in one sentence (the docs and ``scopelint rule``)."""
    code = code.upper()
    measured = FIRST_CONTACT.get(code)
    if code in NEW:
        return "Preview: added since the last release, not yet measured on repositories it was not tuned on."
    if measured is None:
        return ("Stable: released before the preview tier, judged on the 21 repositories of the ecosystem corpus "
                "(no first-contact measurement yet).")
    if is_preview(code):
        return (f"Preview: first-contact precision {measured.describe()}, below {GRADUATION_PRECISION:.2f}; "
                f"it graduates at >= {GRADUATION_PRECISION:.2f} on at least {GRADUATION_REPOSITORIES} repositories.")
    if measured.graduates:
        return f"Stable: first-contact precision {measured.describe()}."
    return (f"Stable: first-contact precision {measured.describe()} (fewer than {GRADUATION_REPOSITORIES} "
            "repositories: not yet a graduation).")


def preview_codes(codes) -> FrozenSet[str]:
    """The preview rules among ``codes``."""
    return frozenset(c for c in codes if is_preview(c))
