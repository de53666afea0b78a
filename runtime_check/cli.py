"""Command-line glue for the runtime verifier: ``check --verify`` and ``scopelint verify``.

``scopelint.cli`` calls ``add_arguments`` while building its parser and ``run`` once the
findings are known (after fixes, before output). Runs only when asked.
"""

from __future__ import annotations

import argparse
import sys
from typing import List

from scopelint.runtime_check import DEFAULT_TIMEOUT, DEVICES


MAX_TIMEOUT = 1e6  # seconds (11 days); beyond, the OS limits derived from it overflow


def _timeout(value: str) -> float:
    """``--verify-timeout``: a finite number of seconds, above 0, at most ``MAX_TIMEOUT``
    (``nan``, ``inf`` and ``1e308`` parse as floats but no clock or rlimit takes them)."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not `{value}`") from None
    if not (0 < seconds <= MAX_TIMEOUT):  # also False for nan
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, not `{value}`")
    return seconds


def add_arguments(subparsers, check: argparse.ArgumentParser) -> None:
    """``--verify``, ``--device``, ``--verify-timeout`` on ``check``, and a ``verify``
    command taking every ``check`` option (it runs ``check --verify``)."""
    group = check.add_argument_group("runtime verification")
    group.add_argument("--verify", action="store_true", help="run each flagged program as written and with the finding's fix; report a verdict per finding")
    group.add_argument("--device", choices=DEVICES, default="cpu", help="where to run the programs (default: cpu; all: cpu and cuda)")
    group.add_argument("--show-harness", action="store_true", help="with --verify: print the synthesized harness a fragment (snippet, uncalled function) ran in")
    group.add_argument("--verify-timeout", type=_timeout, default=DEFAULT_TIMEOUT, metavar="S", help=f"wall-clock limit per run in seconds (default: {DEFAULT_TIMEOUT:g})")
    cmd = subparsers.add_parser("verify", help="check, then verify every finding at run time (check --verify)")
    for action in check._actions:
        if isinstance(action, argparse._HelpAction) or action.dest == "verify":
            continue
        cmd._add_action(action)
    cmd.set_defaults(command="check", verify=True)


def run(args, results: List) -> None:
    """Attach a runtime verdict to every finding of ``results`` when ``--verify`` is on."""
    if not getattr(args, "verify", False):
        return
    from scopelint.config import ConfigError
    from scopelint.runtime_check.verify import verify

    if not (0 < args.verify_timeout <= MAX_TIMEOUT):  # (set by a caller other than the parser)
        raise ConfigError(f"--verify-timeout must be above 0 and at most {MAX_TIMEOUT:g} seconds")
    completed = lint_fragments(results)
    verify(results, args.device, args.verify_timeout, max(1, args.jobs), progress=sys.stderr)
    for res in completed:
        for f in res.findings:
            if f.runtime and f.runtime.get("detail") is not None:
                f.runtime["detail"] += f" (linted with the imports it lacks: {'; '.join(res.completed_imports)})"
                f.runtime["linted_with"] = list(res.completed_imports)
    if getattr(args, "output_format", "text") in ("text", "concise"):
        annotate_text(results, concise=args.output_format == "concise", show_harness=getattr(args, "show_harness", False))


def lint_fragments(results: List) -> List:
    """A fragment that imports no framework draws no finding: the analysis needs to see
    what `torch`, `nn` or `autograd` are, and most forum posts show the loop without its
    imports. Before verifying, each result with no finding whose text is such a fragment
    (``holes.completing_imports``) is linted again with those imports appended, after its
    last line, so every row stays its own; its findings, if any, replace the empty list
    (the text itself is unchanged: the harness imports what it uses). Returns the results
    so completed (each with ``completed_imports``)."""
    from scopelint.engine import lint_source
    from scopelint.finding import SYNTAX_ERROR
    from scopelint.runner import _LINE_BREAK
    from scopelint.runtime_check.holes import completing_imports

    done = []
    for res in results:
        source = getattr(res, "source", None)
        if source is None and getattr(res, "path", None) is not None:
            try:
                with open(res.path, encoding="utf-8") as fh:
                    source = fh.read()
            except (OSError, UnicodeDecodeError):
                continue
        if source is None or res.findings or str(res.filename).endswith(".ipynb"):
            continue
        lines = completing_imports(source)
        if not lines:
            continue
        text = (source if source.endswith("\n") else source + "\n") + "\n".join(lines) + "\n"
        rows = len(source.splitlines())
        found = [f for f in lint_source(text, res.filename).findings if f.code != SYNTAX_ERROR and f.start[0] <= rows]
        if found:
            res.findings = sorted(found, key=lambda f: (f.start, f.code))
            res.source = source
            shown = _LINE_BREAK.split(source)
            for f in res.findings:
                if 1 <= f.start[0] <= len(shown):
                    res.lines[(None, f.start[0])] = shown[f.start[0] - 1]
            res.completed_imports = lines
            done.append(res)
    return done


def _key(text: str, f) -> tuple:
    """What a finding is across the re-lints of fix rounds: its rule, the flagged line's
    text and its fix (positions move as earlier fixes land)."""
    lines = text.splitlines()
    row = f.start[0]
    line = lines[row - 1].strip() if 0 < row <= len(lines) else ""
    return (f.code, line, f.fix.message if f.fix else None)


class VerifiedFixes:
    """``check --fix --unsafe-fixes --verify``: an unsafe fix is applied only where the
    verifier confirmed the finding (``confirmed:*``: the fixed program then ran to the
    end without an error); a refuted or inconclusive finding keeps its code, and the
    output says why. Safe fixes apply as usual.

    ``verify_first`` runs the verifier on the findings as checked; ``apply`` wraps the
    fixer's ``apply`` so that every round (each re-lints the text) applies only those
    unsafe fixes; ``explain`` gives the findings that remain their verdict and why their
    fix was withheld."""

    def __init__(self, args, results: List):
        self.args = args
        self.confirmed = set()
        self.withheld = {}  # key -> (runtime, why)
        self.verdicts = []  # (file, code, row, verdict) of every unsafe fix, as first checked
        self.verify_first(results)

    def verify_first(self, results: List) -> None:
        from scopelint.runtime_check.verify import verify

        verify(results, self.args.device, self.args.verify_timeout, max(1, self.args.jobs), progress=sys.stderr)
        for res in results:
            text = res.source or ""
            for f in res.findings:
                if f.fix is None or f.fix.applicability == "safe":
                    continue
                rt = f.runtime or {}
                key = _key(text, f)
                self.verdicts.append((res.filename, f.code, f.start[0], rt.get("verdict")))
                if str(rt.get("verdict", "")).startswith("confirmed:"):
                    self.confirmed.add(key)
                else:
                    why = f"fix not applied: the verifier did not confirm the finding ({rt.get('verdict', 'not verified')})"
                    self.withheld[key] = (dict(rt) if rt else None, why)

    def apply(self, inner):
        def apply(text, findings, unsafe):
            chosen = [f for f in findings if f.fix is None or f.fix.applicability == "safe" or _key(text, f) in self.confirmed]
            return inner(text, chosen, unsafe)

        return apply

    def explain(self, results: List) -> None:
        for res in results:
            text = res.source or ""
            for f in res.findings:
                if f.fix is None or f.fix.applicability == "safe":
                    continue
                runtime, why = self.withheld.get(_key(text, f), (None, "fix not applied: not verified (it appeared after other fixes)"))
                if f.runtime is None and runtime is not None:
                    f.runtime = runtime
                f.extra["fix_withheld"] = why
        if getattr(self.args, "output_format", "text") in ("text", "concise"):
            annotate_text(results, concise=self.args.output_format == "concise")
            if self.args.output_format == "text":
                for res in results:
                    for f in res.findings:
                        if "fix_withheld" in f.extra:
                            gutter = " " * len(str(f.start[0]))
                            line = f"{gutter} = {f.extra['fix_withheld']}"
                            f.help = f"{f.help}\n{line}" if f.help else line.split("= ", 1)[1]


def runtime_line(f) -> str:
    rt = f.runtime or {}
    return f"{rt.get('verdict')} on {rt.get('device')}: {rt.get('detail')}"


def annotate_text(results: List, concise: bool, show_harness: bool = False) -> None:
    """Text output shows the verdict with its evidence under each finding (after the
    `help:` line); concise output appends the verdict to the message. ``show_harness``:
    under a fragment's first verified finding, the whole synthesized program that ran."""
    for res in results:
        shown = False
        for f in res.findings:
            if not f.runtime:
                continue
            if concise:
                f.message = f"{f.message} [{f.runtime['verdict']}]"
                continue
            gutter = " " * len(str(f.start[0]))
            line = f"{gutter} = verified: {runtime_line(f)}"
            if show_harness and f.runtime.get("harness") and not shown:
                shown = True
                body = "\n".join(f"{gutter} |   {text}" if text else f"{gutter} |" for text in f.runtime["harness"].splitlines())
                line += f"\n{gutter} = synthesized harness (holes: {', '.join(f.runtime.get('holes') or []) or 'none'}):\n{body}"
            f.help = f"{f.help}\n{line}" if f.help else line.split("= ", 1)[1]
