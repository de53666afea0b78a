"""The rule interface. A rule reads the analysis facts and reports nodes.

Each rule module in ``scopelint.rules`` defines one ``Rule`` subclass that carries its
own documentation (what / why / bad / good / fix), in the manner of Fixit and ruff.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import ClassVar, Iterable, Optional, Sequence, Tuple, Union

import libcst as cst

from scopelint import docs_url
from scopelint.preview import is_preview
from scopelint.core.flow import Facts


@dataclass(frozen=True)
class ModuleSplice:
    """A new module that differs from ``module`` only in ``module.body[first:end]``,
    which ``statements`` replace (every other statement is shared). What a fix of the
    module keeps: the changed statements, not a list of all of them (one such list per
    finding grew as the square of the file: 1.6 GB for 64k lines of small functions).
    The module itself is built when asked (``to_module``)."""

    module: cst.Module
    first: int
    end: int
    statements: Tuple[cst.BaseStatement, ...]

    @property
    def span(self) -> Tuple[int, int, int]:
        """(first, end, new end): ``module.body[first:end]`` becomes the new module's
        ``body[first:new end]`` (``engine._Statements``)."""
        return self.first, self.end, self.first + len(self.statements)

    def to_module(self) -> cst.Module:
        body = self.module.body
        return self.module.with_changes(body=[*body[:self.first], *self.statements, *body[self.end:]])


@dataclass
class NodeFix:
    """Replace ``node`` by ``replacement`` (LibCST nodes): a localised transform. A fix
    of the whole module replaces it by a ``ModuleSplice``.

    ``also`` holds further (node, replacement) pairs of the same fix; the nodes must
    not overlap. A fix is also the rule's counterfactual for the runtime verifier.
    """

    node: cst.CSTNode
    replacement: Union[cst.CSTNode, ModuleSplice]
    applicability: str  # "safe" | "unsafe"
    message: str
    also: Tuple[Tuple[cst.CSTNode, cst.CSTNode], ...] = ()

    def pairs(self):
        return ((self.node, self.replacement),) + tuple(self.also)


@dataclass
class Report:
    node: cst.CSTNode
    message: str
    fix: Optional[NodeFix] = None
    # Places elsewhere in the program the finding rests on: (``path:line``, or a node of
    # this file, and what is there), e.g. the helper in another module that turned
    # recording off, the backward a conversion cuts the path of.
    related: Tuple[Tuple[Union[str, cst.CSTNode], str], ...] = ()


@dataclass
class RuleContext:
    facts: Facts
    inference_functions: Tuple[str, ...]


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]
    frameworks: ClassVar[Sequence[str]]
    summary: ClassVar[str]  # one line, shown on hover and in SARIF
    help: ClassVar[str]  # how to fix, shown as `help:`
    why: ClassVar[str]
    bad: ClassVar[str]
    good: ClassVar[str]
    fixable: ClassVar[Optional[str]] = None  # "safe" | "unsafe" | None
    # In the default selection; False: only when selected by code, prefix or ALL (as
    # ruff's RUF100). Must agree with ``scopelint.rules.OPT_IN`` (read without importing).
    default: ClassVar[bool] = True

    def check(self, ctx: RuleContext) -> Iterable[Report]:
        raise NotImplementedError

    @classmethod
    def url(cls) -> str:
        return docs_url(cls.code)

    @classmethod
    def documentation(cls) -> str:
        def block(code: str) -> str:
            return textwrap.dedent(code).strip("\n")

        fix = {"safe": "Fix is always available (safe).", "unsafe": "Fix is sometimes available (unsafe)."}.get(
            cls.fixable or "", "No automatic fix."
        )
        return (
            f"# {cls.name} ({cls.code})\n\n"
            f"Severity: {cls.severity}. Frameworks: {', '.join(cls.frameworks) or 'any'}. {fix}"
            f"{'' if cls.default else ' Not selected by default: select it by code or prefix.'}"
            f"{' Preview rule: it runs only in preview mode (`--preview`, `preview = true`).' if is_preview(cls.code) else ''}\n\n"
            f"## What it does\n{cls.summary}\n\n"
            f"## Why is this bad?\n{textwrap.dedent(cls.why).strip()}\n\n"
            f"## Example\n```python\n{block(cls.bad)}\n```\n\n"
            f"Use instead:\n```python\n{block(cls.good)}\n```\n\n"
            f"## How to fix\n{cls.help}\n"
        )
