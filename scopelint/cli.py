"""Command line: ``scopelint check | rule | ...`` in ruff's style."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import List, NoReturn, Optional

from scopelint import __version__
from scopelint.config import ConfigError, Overrides, Resolver
from scopelint.files import discover
from scopelint.fix import apply_edits, fix_until_stable, unified_diff, write_atomic
from scopelint.output import failed_files, failure_line, summary, write_github, write_json, write_statistics, write_text
from scopelint.rules import ALL_RULES
from scopelint.runner import FileResult, check_paths, check_stdin, display_name

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
MAX_FIX_ROUNDS = 10  # fixes that overlap wait for the next round; a round that changes nothing ends it


def _codes(value: str) -> List[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scopelint", description="Find autograd scope misuse in PyTorch and MXNet code.")
    parser.add_argument("--version", action="version", version=f"scopelint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="check files and folders (default: .)")
    check.add_argument("paths", nargs="*", default=None, metavar="PATH", help='files or folders; "-" reads stdin')
    check.add_argument("--select", type=_codes, metavar="CODES", help="only these codes or prefixes (e.g. SL1,SL203)")
    check.add_argument("--ignore", type=_codes, default=[], metavar="CODES", help="skip these codes or prefixes")
    check.add_argument("--extend-select", type=_codes, default=[], metavar="CODES", help="add codes to the selection")
    check.add_argument("--output-format", choices=["text", "concise", "json", "sarif", "github"], default="text",
                       help="text (default), concise (one line per finding), json, sarif, github")
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--unsafe-fixes", action="store_true", help="also apply (or offer) unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--statistics", action="store_true", help="count findings per code")
    check.add_argument(
        "--force-exclude", action="store_true",
        help="apply exclude settings to paths named on the command line too (for pre-commit)",
    )
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the cache (.scopelint_cache/)")
    check.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N", help="parallel workers (default: all cores)")
    check.add_argument("--config", type=Path, metavar="FILE", help="use this pyproject.toml / TOML file only")
    check.add_argument("--stdin-filename", metavar="NAME", help="file name for input read from stdin")
    check.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    from scopelint.runtime_check.cli import add_arguments as add_verify_arguments

    add_verify_arguments(sub, check)  # --verify, --device, --verify-timeout; `scopelint verify`

    rule = sub.add_parser("rule", help="show a rule's documentation (without a code: list the rules)")
    rule.add_argument("code", nargs="?", help="a code (SL101) or a rule name (backward-on-untracked-value)")
    rule.add_argument("--all", action="store_true", help="every rule's documentation")
    rule.add_argument("--output-format", choices=["text", "json"], default="text", help="text (default) or json")
    sub.add_parser("lsp", help="run the language server over stdio (needs scopelint[lsp])")
    sub.add_parser("clean", help="remove the cache (.scopelint_cache/ at the project root)")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 0 for --help/--version, 2 for usage errors
        return int(exc.code or 0)
    try:
        if args.command == "check":
            return cmd_check(args)
        if args.command == "rule":
            return cmd_rule(args)
        if args.command == "lsp":
            from scopelint import lsp

            return lsp.main()
        if args.command == "clean":
            from scopelint.cache import clean

            removed = clean()
            if removed is not None:
                print(f"Removing cache at: {removed}", file=sys.stderr)
            return EXIT_OK
        parser.print_help()
        return EXIT_ERROR
    except ConfigError as exc:
        print(f"scopelint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # writing the report (a full disk)
        _say(f"scopelint: error: cannot write the output: {exc}")
        return EXIT_ERROR


def _say(message: str) -> None:
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def run() -> NoReturn:
    """The console script (and ``python -m scopelint``): ``main``, then leave without
    tearing the interpreter down, as mypy does: freeing LibCST's trees and node classes
    one object at a time costs an editor's one-file run ~5%, and nothing is left to do
    by then (every file written). Not so with a thread still running (``--verify``'s
    workers after a second Ctrl-C), a profiler, a tracer or coverage: they exit as
    usual."""
    code = main()
    try:
        for stream in (sys.stdout, sys.__stdout__, sys.stderr):  # (lsp swaps stdout)
            if stream is not None:
                stream.flush()
    except BrokenPipeError:  # ``| head``: what was wanted was read (as ``main`` says when it meets one)
        code = EXIT_OK
    except (OSError, ValueError) as exc:  # a full disk: the report is cut short
        _say(f"scopelint: error: cannot write the output: {exc}")
        code = EXIT_ERROR
    if threading.active_count() > 1 or sys.gettrace() is not None or sys.getprofile() is not None or "coverage" in sys.modules:
        sys.exit(code)
    os._exit(code)


def cmd_rule(args) -> int:
    import json

    from scopelint.catalog import documented, listing, lookup, rule_json

    as_json = args.output_format == "json"
    if args.all or not args.code:  # ruff: `rule --all`; without a code: the list
        rules = list(documented().values())
        if as_json:
            print(json.dumps([rule_json(r) for r in rules], indent=2))
        else:
            print("\n\n".join(r.documentation() for r in rules) if args.all else listing())
        return EXIT_OK
    rule = lookup(args.code)
    if rule is None:
        print(f"scopelint: error: unknown rule `{args.code}`: neither a code (SL101) nor a rule name "
              "(backward-on-untracked-value); `scopelint rule` lists them", file=sys.stderr)
        return EXIT_ERROR
    print(json.dumps(rule_json(rule), indent=2) if as_json else rule.documentation())
    return EXIT_OK


def cmd_check(args) -> int:
    if args.jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    resolver = Resolver(Overrides(args.select, args.ignore, args.extend_select, args.config))
    if not args.paths and args.stdin_filename:  # as ruff: --stdin-filename alone reads stdin
        args.paths = ["-"]
    paths = args.paths or ["."]
    fixing = args.fix or args.diff
    results: List[FileResult] = []
    stdin_data = b""
    if "-" in paths:
        name = args.stdin_filename or "-"
        settings = resolver.settings_for(Path(name) if args.stdin_filename else Path.cwd() / "stdin.py")
        stdin_data = sys.stdin.buffer.read()
        results.append(check_stdin(stdin_data, name, settings, keep_source=fixing))
        paths = [p for p in paths if p != "-"]
    if paths:
        tasks = []
        for path in discover(paths, resolver):
            if args.force_exclude and resolver.excluded_with_parents(path):
                continue
            tasks.append((str(path), display_name(path), resolver.settings_for(path), fixing))
        cache = None
        if not args.no_cache:
            from scopelint.cache import Cache, cache_dir

            cache = Cache(cache_dir())
        results.extend(check_paths(tasks, args.jobs, cache))

    fixed = 0
    if fixing:
        fixed = _apply_fixes(results, args, resolver)
    stdin_result = results[0] if "-" in (args.paths or []) else None
    if getattr(args, "verify", False):  # runtime verdicts: scopelint.runtime_check
        from scopelint.runtime_check.cli import run as run_verifier

        run_verifier(args, results)

    errors = [e for r in results for e in r.errors]
    # `check --fix -` (editors, formatters): stdout is the file, fixed or not; the report goes to stderr.
    stdin_fix_output = args.fix and not args.diff and stdin_result is not None
    out = sys.stderr if stdin_fix_output else sys.stdout
    if stdin_fix_output:
        from scopelint.files import encode

        sys.stdout.flush()
        if stdin_result.source is not None:
            sys.stdout.buffer.write(encode(stdin_result.source, stdin_result.encoding))
        else:  # unreadable as Python: hand it back untouched
            sys.stdout.buffer.write(stdin_data)
        sys.stdout.buffer.flush()
    color = args.color == "always" or (args.color == "auto" and out.isatty() and not os.environ.get("NO_COLOR"))
    if args.statistics:
        write_statistics(results, out, args.unsafe_fixes)
    elif args.output_format == "json":
        write_json(results, out)
    elif args.output_format == "sarif":
        from scopelint.sarif import write_sarif

        write_sarif(results, out, errors)
    elif args.output_format == "github":
        write_github(results, out)
    elif not args.diff:
        write_text(results, out, args.output_format == "concise", color)
        unsafe_hidden = 0 if args.unsafe_fixes else sum(
            1 for r in results for f in r.findings if f.fix is not None and f.fix.applicability == "unsafe"
        )
        print(summary(results, fixed, unsafe_hidden), file=out)
    for e in errors:
        print(f"scopelint: error: {e}", file=sys.stderr)
    if errors:  # whatever the format: how many files failed, and exit 2
        print(f"scopelint: error: {failure_line(failed_files(results))}", file=sys.stderr)
        return EXIT_ERROR
    remaining = sum(len(r.findings) for r in results)
    if args.diff:
        return EXIT_FINDINGS if fixed and not args.exit_zero else EXIT_OK
    return EXIT_FINDINGS if remaining and not args.exit_zero else EXIT_OK


def _apply_fixes(results: List[FileResult], args, resolver: Resolver) -> int:
    """Apply fixes in rounds until nothing changes; rewrite findings to what remains."""
    from scopelint.notebook import apply_edits as notebook_apply_edits

    total = 0
    for i, res in enumerate(results):
        if res.source is None or not any(f.fix for f in res.findings):
            continue
        # Notebooks: edits are cell-relative; only the fixed cells' JSON strings change.
        apply = notebook_apply_edits if res.filename.lower().endswith(".ipynb") else apply_edits
        original = res.source
        settings = resolver.settings_for(Path(res.path) if res.path else Path(args.stdin_filename or Path.cwd() / "stdin.py"))
        text, current, applied = fix_until_stable(res, settings, args.unsafe_fixes, apply, MAX_FIX_ROUNDS)
        if text == original:
            results[i] = current
            continue
        total += applied
        if args.diff:
            sys.stdout.write(unified_diff(original, text, res.filename))
            continue
        if res.path is not None:  # stdin's fixed text is written by the caller
            try:
                write_atomic(res.path, text, res.encoding)
            except OSError as exc:
                current.errors.append(f"{res.filename}: cannot write the fixed file: {exc.strerror or exc}")
        results[i] = current
    return total
