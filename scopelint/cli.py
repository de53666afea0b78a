"""Command line: ``scopelint check | rule | ...`` in ruff's style."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import List, NoReturn, Optional

from scopelint import __version__
from scopelint.config import ConfigError, Overrides, Resolver, expand_codes, show_settings
from scopelint.files import discover
from scopelint.fix import apply_edits, fix_until_stable, unified_diff, write_atomic
from scopelint.formats import WRITERS
from scopelint.output import (
    failed_files, failure_line, fix_only_summary, summary, write_github, write_json, write_statistics, write_text,
)
from scopelint.rules import ALL_RULES
from scopelint.runner import FileResult, check_paths, check_stdin, display_name

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
OUTPUT_FORMATS = ["text", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit", "pylint"]
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
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
    check.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text",
                       help="text (default), concise (one line per finding), json, json-lines, sarif, github, "
                            "gitlab, junit, pylint")
    check.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE (not stdout)")
    check.add_argument("-q", "--quiet", action="store_true", help="print the findings only: no summary")
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--fix-only", action="store_true",
                       help="apply fixes and report no findings (exit 0 unless --exit-non-zero-on-fix)")
    check.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 when a fix was applied, even if no findings remain")
    check.add_argument("--add-noqa", action="store_true", help="add `# noqa: SLxxx` to every line with a finding")
    check.add_argument("--ignore-noqa", action="store_true", help="report findings whatever `# noqa` comments say")
    check.add_argument("--per-file-ignores", action="append", default=[], metavar="PATTERN:CODES",
                       help='ignore codes in matching files, e.g. "tests/*.py:SL101,SL203" (replaces the configuration\'s)')
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked, and exit")
    check.add_argument("--show-settings", action="store_true", help="print the settings of the first file, and exit")
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
    check.add_argument("--config", action="append", default=[], metavar="FILE | KEY=VALUE",
                       help="use this pyproject.toml / TOML file only, or override one setting: "
                            "--config 'select = [\"SL1\"]' (repeatable)")
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
    except KeyboardInterrupt as exc:
        from scopelint import runner

        if getattr(exc, "signum", None) == signal.SIGTERM:  # (``verify``: its variants are ended; see harness.interruptible)
            return 128 + signal.SIGTERM
        if runner.POOL_INTERRUPTED:  # (its workers are killed: leave now, see runner)
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(130)
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


def _overrides(args) -> Overrides:
    """The command line's settings: ``--config`` (a file, or ``KEY = VALUE`` overrides,
    as ruff reads it), ``--per-file-ignores``, the rule selection, ``--ignore-noqa``."""
    config_file: Optional[Path] = None
    settings: dict = {}
    for value in args.config:
        if os.path.isfile(value) or "=" not in value:
            if config_file is not None:
                raise ConfigError(f"--config: only one configuration file may be given ({config_file}, {value})")
            config_file = Path(value)
            continue
        settings.update(_config_override(value))
    if args.per_file_ignores:
        table: dict = {}
        for value in args.per_file_ignores:
            pattern, sep, codes = value.rpartition(":")
            if not sep or not pattern.strip() or not codes.strip():
                raise ConfigError(f"--per-file-ignores: expected PATTERN:CODES (e.g. \"tests/*.py:SL101,SL203\"), not `{value}`")
            table.setdefault(pattern.strip(), []).extend(expand_codes(_codes(codes), "--per-file-ignores"))
        settings["per-file-ignores"] = table
    return Overrides(args.select, args.ignore, args.extend_select, config_file, settings, args.ignore_noqa)


def _config_override(value: str) -> dict:
    """``--config "select = ['SL1']"``: a TOML ``KEY = VALUE`` pair (or several)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(value)
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise ConfigError(f"--config: the TOML override is nested too deeply") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"--config: `{value}` is neither a file nor a valid TOML `KEY = VALUE` override ({exc}); "
            "quote strings: --config 'select = [\"SL1\"]'"
        ) from None
    scoped = data.get("tool", {}).get("scopelint") if isinstance(data.get("tool"), dict) else None
    return scoped if isinstance(scoped, dict) and len(data) == 1 else data


def _tasks(args, resolver: Resolver, paths: List[str], keep: bool) -> list:
    tasks = []
    for path in discover(paths, resolver):
        if args.force_exclude and resolver.excluded_with_parents(path):
            continue
        tasks.append((str(path), display_name(path), resolver.settings_for(path), keep))
    return tasks


class _Report:
    """Where the report goes: stdout, or the ``--output-file``, opened (its folders made,
    as ruff does) when the report is written, so that a run that fails before leaves no
    file behind."""

    def __init__(self, path: Optional[str]):
        self.path = path
        self._stream = None

    @property
    def is_stdout(self) -> bool:
        return not self.path

    def stream(self):
        if not self.path:
            return sys.stdout
        if self._stream is None:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                self._stream = open(self.path, "w", encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"--output-file: cannot write `{self.path}`: {exc.strerror or exc}") from None
        return self._stream

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()


def cmd_check(args) -> int:
    if args.jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    resolver = Resolver(_overrides(args))
    if not args.paths and args.stdin_filename:  # as ruff: --stdin-filename alone reads stdin
        args.paths = ["-"]
    paths = args.paths or ["."]
    if args.add_noqa and (args.fix or args.fix_only or args.diff):
        raise ConfigError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if args.add_noqa and "-" in paths:
        raise ConfigError("--add-noqa needs files to write: it cannot read stdin")
    if args.show_files or args.show_settings:
        return _show(args, resolver, paths)
    report = _Report(args.output_file)
    try:
        return _check(args, resolver, paths, report)
    finally:
        report.close()


def _show(args, resolver: Resolver, paths: List[str]) -> int:
    """``--show-files`` (every file that would be checked, absolute, sorted, as ruff
    prints them) and ``--show-settings`` (the resolved settings of the first)."""
    files = sorted(os.path.abspath(t[0]) for t in _tasks(args, resolver, [p for p in paths if p != "-"], False))
    if "-" in paths:
        files.insert(0, os.path.abspath(args.stdin_filename) if args.stdin_filename else "-")
    out = sys.stdout
    if args.show_files:
        if not files:
            _say("scopelint: warning: no Python files found under the given path(s)")
        for f in files:
            out.write(f + "\n")
        return EXIT_OK
    if not files:
        raise ConfigError("--show-settings: no files found under the given path(s)")
    first = Path(files[0]) if files[0] != "-" else Path.cwd() / "stdin.py"
    cfg = resolver.config_for(first)
    settings = resolver.settings_for(first)
    out.write(f'Resolved settings for: "{first}"\n')
    out.write(f'Settings path: "{os.path.abspath(cfg.path)}"\n' if cfg.path else "Settings path: none (defaults)\n")
    out.write("\n" + show_settings(cfg, settings))
    return EXIT_OK


# Outputs that write the fixes' edits (the others only say whether a finding is fixable)
_EDIT_FORMATS = ("json", "json-lines", "sarif")


def _check(args, resolver: Resolver, paths: List[str], report) -> int:
    fixing = args.fix or args.diff or args.fix_only
    keep = fixing or args.add_noqa
    # Without fixing, verifying or an output that writes edits, no fix's edits are read:
    # the lint leaves the costly ones out (``Settings.edits``; part of the cache key).
    edits = bool(fixing or args.add_noqa or getattr(args, "verify", False) or args.output_format in _EDIT_FORMATS)
    results: List[FileResult] = []
    stdin_data = b""
    if "-" in paths:
        name = args.stdin_filename or "-"
        settings = resolver.settings_for(Path(name) if args.stdin_filename else Path.cwd() / "stdin.py")
        if not edits:
            settings = replace(settings, edits=False)
        stdin_data = sys.stdin.buffer.read()
        results.append(check_stdin(stdin_data, name, settings, keep_source=keep or getattr(args, "verify", False)))  # (the verifier runs it)
        paths = [p for p in paths if p != "-"]
    if paths:
        tasks = _tasks(args, resolver, paths, keep)
        if not edits:
            tasks = [(path, name, replace(settings, edits=False), k) for path, name, settings, k in tasks]
        cache = None
        if not args.no_cache:
            from scopelint.cache import Cache, cache_dir

            cache = Cache(cache_dir())
        results.extend(check_paths(tasks, args.jobs, cache))

    if args.add_noqa:
        return _add_noqa(results, args)
    fixed = 0
    verified = None
    if fixing and args.unsafe_fixes and getattr(args, "verify", False):  # verified unsafe fixes only
        from scopelint.runtime_check.cli import VerifiedFixes

        verified = VerifiedFixes(args, results)
    if fixing:
        fixed = _apply_fixes(results, args, resolver, report.stream if args.diff else None, verified)
    stdin_result = results[0] if "-" in (args.paths or []) else None
    if verified is not None:
        verified.explain(results)
    elif getattr(args, "verify", False) and not args.fix_only:  # runtime verdicts: scopelint.runtime_check
        from scopelint.runtime_check.cli import run as run_verifier

        run_verifier(args, results)

    errors = [e for r in results for e in r.errors]
    remaining = sum(len(r.findings) for r in results)
    unsafe_hidden = 0 if args.unsafe_fixes else sum(
        1 for r in results for f in r.findings if f.fix is not None and f.fix.applicability == "unsafe"
    )
    if args.fix_only:  # fixed, and nothing more to say about what remains
        for r in results:
            r.findings = []
    # `check --fix -` (editors, formatters): stdout is the file, fixed or not; the report goes to stderr.
    stdin_fix_output = (args.fix or args.fix_only) and not args.diff and stdin_result is not None
    out = sys.stderr if stdin_fix_output and report.is_stdout else report.stream()
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
    elif args.output_format in WRITERS:
        WRITERS[args.output_format](results, out)
    elif args.output_format == "sarif":
        from scopelint.sarif import write_sarif

        write_sarif(results, out, errors)
    elif args.output_format == "github":
        write_github(results, out)
    elif not args.diff:
        write_text(results, out, args.output_format == "concise", color)
        if args.fix_only:
            line = fix_only_summary(results, fixed, unsafe_hidden)
            if line and not args.quiet:
                print(line, file=out)
        elif not args.quiet:
            print(summary(results, fixed, unsafe_hidden), file=out)
    for e in errors:
        print(f"scopelint: error: {e}", file=sys.stderr)
    if errors:  # whatever the format: how many files failed, and exit 2
        print(f"scopelint: error: {failure_line(failed_files(results), results)}", file=sys.stderr)
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_OK
    if args.diff:
        return EXIT_FINDINGS if fixed else EXIT_OK
    if args.fix_only:
        return EXIT_FINDINGS if fixed and args.exit_non_zero_on_fix else EXIT_OK
    return EXIT_FINDINGS if remaining or (fixed and args.exit_non_zero_on_fix) else EXIT_OK


def _add_noqa(results: List[FileResult], args) -> int:
    """``--add-noqa``: each line with a finding gets ``# noqa: <its codes>`` (added to a
    ``# noqa:`` list already there); ``Added N noqa directives.`` on stderr, as ruff."""
    from scopelint import notebook
    from scopelint.fix import compiles
    from scopelint.noqa import add_noqa_findings, rows_inside_strings

    added = 0
    for res in results:
        if res.source is None or res.path is None or not res.findings or res.errors:
            continue
        if res.filename.lower().endswith(".ipynb"):
            try:
                nb = notebook.load(res.source)
            except ValueError:
                continue
            edits = add_noqa_findings(res.findings, nb.cell_lines, lambda cell: rows_inside_strings(nb.cell_text(cell)))
            text, n = notebook.apply_edits(res.source, edits, False)
        else:
            lines = _LINE_BREAK.split(res.source)
            inside = rows_inside_strings(res.source)
            edits = add_noqa_findings(res.findings, lambda cell: lines, lambda cell: inside)
            text, n = apply_edits(res.source, edits, False)
            if n and compiles(res.source, res.filename) and not compiles(text, res.filename):
                res.errors.append(f"{res.filename}: adding `# noqa` would break the file; left unchanged")
                continue
        if not n or text == res.source:
            continue
        try:
            write_atomic(res.path, text, res.encoding)
        except (OSError, UnicodeEncodeError) as exc:
            res.errors.append(f"{res.filename}: cannot write the file: {getattr(exc, 'strerror', None) or exc}")
            continue
        added += n
    errors = [e for r in results for e in r.errors]
    if added and not args.quiet:
        _say(f"Added {added} noqa directive{'s' if added != 1 else ''}.")
    for e in errors:
        print(f"scopelint: error: {e}", file=sys.stderr)
    if errors:
        print(f"scopelint: error: {failure_line(failed_files(results), results)}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def _apply_fixes(results: List[FileResult], args, resolver: Resolver, diff_out=None, verified=None) -> int:
    """Apply fixes in rounds until nothing changes; rewrite findings to what remains
    (``verified``: only the unsafe fixes the runtime verifier confirmed)."""
    from scopelint.notebook import apply_edits as notebook_apply_edits

    total = 0
    for i, res in enumerate(results):
        if res.source is None or not any(f.fix for f in res.findings):
            continue
        # Notebooks: edits are cell-relative; only the fixed cells' JSON strings change.
        apply = notebook_apply_edits if res.filename.lower().endswith(".ipynb") else apply_edits
        if verified is not None:
            apply = verified.apply(apply)
        original = res.source
        settings = resolver.settings_for(Path(res.path) if res.path else Path(args.stdin_filename or Path.cwd() / "stdin.py"))
        if res.path is not None and res.path.endswith(".py"):  # what the program around it tells it, as when checked
            from scopelint.project import with_program

            try:
                settings = with_program(settings, res.path, {res.path: original}, lambda p: display_name(Path(p)))
            except Exception:  # (the program cannot be read: the file on its own, as before)
                pass
        text, current, applied = fix_until_stable(res, settings, args.unsafe_fixes, apply, MAX_FIX_ROUNDS)
        if text == original:
            results[i] = current
            continue
        total += applied
        if args.diff:
            (diff_out() if diff_out else sys.stdout).write(unified_diff(original, text, res.filename))
            continue
        if res.path is not None:  # stdin's fixed text is written by the caller
            try:
                write_atomic(res.path, text, res.encoding)
            except OSError as exc:  # (a read-only file is refused: nothing written, its findings as they were)
                res.errors.append(f"{res.filename}: cannot write the fixed file: {exc.strerror or exc}")
                total -= applied
                continue
        results[i] = current
    return total
