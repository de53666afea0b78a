"""Command line: ``scopelint check | rule | ...`` in ruff's style."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import List, NoReturn, Optional

from scopelint import __version__
from scopelint.config import OUTPUT_FORMATS, ConfigError, Overrides, Resolver, expand_codes, show_settings
from scopelint.files import discover
from scopelint.fix import apply_edits, fix_until_stable, unified_diff, write_atomic
from scopelint.formats import WRITERS
from scopelint.output import (
    failed_files, failure_line, fix_only_summary, summary, write_fixed, write_github, write_grouped, write_json,
    write_statistics, write_text,
)
from scopelint.rules import ALL_RULES
from scopelint.runner import FileResult, check_paths, check_stdin, display_name

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
MAX_FIX_ROUNDS = 10  # fixes that overlap wait for the next round; a round that changes nothing ends it
# Environment variables that stand for options, as ruff's ``RUFF_*`` (clap's ``env``):
# the option wins over the variable, the variable over the configuration.
ENV_OUTPUT_FORMAT, ENV_NO_CACHE, ENV_CACHE_DIR = "SCOPELINT_OUTPUT_FORMAT", "SCOPELINT_NO_CACHE", "SCOPELINT_CACHE_DIR"
_TRUE = ("1", "true", "yes", "on")


def _codes(value: str) -> List[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def _flat(values) -> Optional[List[str]]:
    """``--select A --select B,C``: every value, in order (ruff adds repeated options up)."""
    return None if values is None else [c for group in values for c in group]


class _Parser(argparse.ArgumentParser):
    """argparse, with ruff's manners on a usage error: the (sub)command's own usage line
    and, for an unknown option, the nearest known one ("did you mean `--select`?")."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        m = re.match(r"unrecognized arguments: (.*)", message)
        if m:
            known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
            hints = []
            for arg in m.group(1).split():
                if arg.startswith("-"):
                    import difflib

                    near = difflib.get_close_matches(arg.split("=", 1)[0], known, 1, 0.6)
                    if near:
                        hints.append(f"`{arg}`: did you mean `{near[0]}`?")
            if hints:
                message += "\n  " + "\n  ".join(hints)
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scopelint", description="Find autograd scope misuse in PyTorch and MXNet code.",
                     epilog="For help with a command: scopelint COMMAND --help. Documentation: scopelint rule, "
                            "and the site built with `python -m scopelint.site` (docs/).")
    parser.add_argument("-V", "--version", action="version", version=f"scopelint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    bool_opt = argparse.BooleanOptionalAction

    check = sub.add_parser("check", help="check files and folders (default: .)", allow_abbrev=False)
    check.add_argument("paths", nargs="*", default=None, metavar="PATH", help='files or folders; "-" reads stdin')
    check.add_argument("--fix", action=bool_opt, default=None, help="apply safe fixes (--no-fix: don't, whatever the configuration says)")
    check.add_argument("--unsafe-fixes", action=bool_opt, default=None, help="also apply (or offer) unsafe fixes")
    check.add_argument("--show-fixes", action=bool_opt, default=None, help="list the fixes applied (with --fix) and show each fix's diff under its finding")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("-w", "--watch", action="store_true", help="check again whenever a checked file changes (Ctrl-C to stop)")
    check.add_argument("--fix-only", action=bool_opt, default=None,
                       help="apply fixes and report no findings (exit 0 unless --exit-non-zero-on-fix)")
    check.add_argument("--ignore-noqa", action="store_true", help="report findings whatever `# noqa` comments say")
    check.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None,
                       help=f"how findings are written (default: full, also called text) [env: {ENV_OUTPUT_FORMAT}]")
    check.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE (not stdout)")
    check.add_argument("--preview", action=bool_opt, default=None, help="enable preview mode: preview rules join the selection")
    check.add_argument("--config", action="append", default=[], metavar="FILE | KEY=VALUE",
                       help="use this configuration file only (pyproject.toml, scopelint.toml), or override one setting: "
                            "--config 'select = [\"SL1\"]' (repeatable)")
    check.add_argument("--extension", action="append", type=_codes, default=None, metavar="EXT:LANGUAGE",
                       help="check files with this extension too, as Python: --extension pyw:python (repeatable)")
    check.add_argument("--statistics", action="store_true", help="count findings per code")
    check.add_argument("--add-noqa", action="store_true", default=None,
                       help="add `# noqa: SLxxx` to every line with a finding (--add-noqa=REASON: followed by REASON)")
    check.add_argument("--add-noqa-reason", help=argparse.SUPPRESS)  # (``--add-noqa=REASON``, rewritten by ``main``)
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked, and exit")
    check.add_argument("--show-settings", action="store_true", help="print the settings of the first file, and exit")

    select = check.add_argument_group("rule selection")
    select.add_argument("--select", type=_codes, action="append", metavar="CODES",
                        help="only these codes or prefixes (e.g. SL1,SL203; ALL: every rule); repeated: added up")
    select.add_argument("--ignore", type=_codes, action="append", metavar="CODES", help="skip these codes or prefixes")
    select.add_argument("--extend-select", type=_codes, action="append", metavar="CODES", help="add codes to the selection")
    select.add_argument("--per-file-ignores", action="append", default=[], metavar="PATTERN:CODES",
                        help='ignore codes in matching files, e.g. "tests/*.py:SL101,SL203" (replaces the configuration\'s)')
    select.add_argument("--extend-per-file-ignores", action="append", default=[], metavar="PATTERN:CODES",
                        help="like --per-file-ignores, added to the configuration's")
    select.add_argument("--fixable", type=_codes, action="append", metavar="CODES", help="only these codes' fixes are applied")
    select.add_argument("--unfixable", type=_codes, action="append", metavar="CODES", help="these codes' fixes are never applied")
    select.add_argument("--extend-fixable", type=_codes, action="append", metavar="CODES", help="like --fixable, added to the configuration's")

    files = check.add_argument_group("file selection")
    files.add_argument("--exclude", type=_codes, action="append", metavar="PATTERNS",
                       help="skip these files and folders (replaces the configuration's `exclude`)")
    files.add_argument("--extend-exclude", type=_codes, action="append", metavar="PATTERNS", help="skip these too")
    files.add_argument("--respect-gitignore", action=bool_opt, default=None, help="skip what .gitignore files ignore (default)")
    files.add_argument("--force-exclude", action=bool_opt, default=None,
                       help="apply exclude settings to paths named on the command line too (for pre-commit)")

    misc = check.add_argument_group("miscellaneous")
    misc.add_argument("-n", "--no-cache", action="store_true", default=None,
                      help=f"do not read or write the cache [env: {ENV_NO_CACHE}]")
    misc.add_argument("--cache-dir", metavar="DIR", help=f"the cache's folder (default: .scopelint_cache/ at the project root) [env: {ENV_CACHE_DIR}]")
    misc.add_argument("--isolated", action="store_true", help="read no configuration file")
    misc.add_argument("--stdin-filename", metavar="NAME", help="file name for input read from stdin")
    misc.add_argument("-e", "--exit-zero", action="store_true", help="exit 0 even with findings")
    misc.add_argument("--exit-non-zero-on-fix", action="store_true",
                      help="exit 1 when a fix was applied, even if no findings remain")
    misc.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N", help="parallel workers (default: all cores)")
    misc.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                      help="colour the text output (auto: on a terminal; NO_COLOR and FORCE_COLOR are honoured)")

    logs = check.add_argument_group("log levels")
    logs.add_argument("-v", "--verbose", action="store_true", help="say which configuration each file uses, and timings (stderr)")
    logs.add_argument("-q", "--quiet", action="store_true", help="print the findings only: no summary")
    logs.add_argument("-s", "--silent", action="store_true", help="print nothing; the exit status still says whether there are findings")
    from scopelint.runtime_check.cli import add_arguments as add_verify_arguments

    add_verify_arguments(sub, check)  # --verify, --device, --verify-timeout; `scopelint verify`

    rule = sub.add_parser("rule", help="show a rule's documentation (without a code: list the rules)")
    rule.add_argument("code", nargs="?", help="a code (SL101) or a rule name (backward-on-untracked-value)")
    rule.add_argument("--all", action="store_true", help="every rule's documentation")
    rule.add_argument("--output-format", choices=["text", "json"], default="text", help="text (default) or json")
    sub.add_parser("lsp", help="run the language server over stdio (needs scopelint[lsp])")
    sub.add_parser("clean", help="remove the cache (.scopelint_cache/ at the project root)")
    completion = sub.add_parser("generate-shell-completion", help="print a completion script: bash, zsh or fish")
    completion.add_argument("shell", choices=["bash", "zsh", "fish"])
    sub.add_parser("version", help="print scopelint's version")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # ``--add-noqa=REASON``: the reason only with "=" (ruff's require_equals), so that
    # ``--add-noqa a.py`` still names a path
    argv = [a for arg in argv for a in (["--add-noqa", "--add-noqa-reason", arg.split("=", 1)[1]]
                                        if arg.startswith("--add-noqa=") else [arg])]
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:  # said by the subcommand's own parser: its usage line, and "did you mean"
            choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
            named = next((a for a in argv if a in choices), None)
            (choices[named] if named else parser).error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:  # argparse: 0 for --help/--version, 2 for usage errors
        return int(exc.code or 0)
    try:
        if args.command == "check":
            return cmd_check(args)
        if args.command == "version":
            print(f"scopelint {__version__}")
            return EXIT_OK
        if args.command == "generate-shell-completion":
            from scopelint.completion import script

            sys.stdout.write(script(parser, args.shell))
            return EXIT_OK
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
    if args.extend_per_file_ignores:
        table = {}
        for value in args.extend_per_file_ignores:
            pattern, sep, codes = value.rpartition(":")
            if not sep or not pattern.strip() or not codes.strip():
                raise ConfigError(f"--extend-per-file-ignores: expected PATTERN:CODES (e.g. \"tests/*.py:SL101\"), not `{value}`")
            table.setdefault(pattern.strip(), []).extend(expand_codes(_codes(codes), "--extend-per-file-ignores"))
        settings["extend-per-file-ignores"] = table
    # Options that stand for a setting: laid over every configuration, as ruff's.
    for key, value in (("exclude", _flat(args.exclude)), ("extend-exclude", _flat(args.extend_exclude)),
                       ("fixable", _flat(args.fixable)), ("unfixable", _flat(args.unfixable)),
                       ("extend-fixable", _flat(args.extend_fixable)), ("preview", args.preview),
                       ("respect-gitignore", args.respect_gitignore), ("force-exclude", args.force_exclude)):
        if value is not None:
            settings[key] = value
    extensions = {}
    for value in _flat(args.extension) or []:
        ext, sep, language = value.partition(":")
        ext = ext.strip().lstrip(".")
        if not sep or not ext or language.strip() not in ("python", "pyi"):
            raise ConfigError(f"--extension: expected EXT:python or EXT:pyi (e.g. pyw:python), not `{value}`"
                              + (" (notebooks are read by their .ipynb name only)" if language.strip() == "ipynb" else ""))
        extensions[ext] = language.strip()
    return Overrides(_flat(args.select), _flat(args.ignore) or [], _flat(args.extend_select) or [], config_file, settings,
                     args.ignore_noqa, args.isolated, extensions)


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
    if getattr(args, "verbose", False):
        by_config: dict = {}
        for path, _, _, _ in tasks:
            cfg = resolver.config_for(Path(path))
            by_config.setdefault(str(cfg.path) if cfg.path else "(defaults)", []).append(path)
        for where, files in by_config.items():
            _say(f"scopelint: {len(files)} file{'s' if len(files) != 1 else ''} checked with the settings of {where}")
    return tasks


class _Progress:
    """A line on stderr while a long run works, only on a terminal (never in a pipe, a
    file or CI's log): ``scopelint: checking 51,234 files... 12 s``, rewritten each second
    from the second second on, erased at the end."""

    DELAY = float(os.environ.get("SCOPELINT_PROGRESS_DELAY", "1") or 1)  # (seconds before the line; tests set 0)

    def __init__(self, files: int, enabled: bool = True):
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.enabled = enabled and tty and files > 0 and os.environ.get("TERM") != "dumb"
        self.files = files
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._shown = False

    def __enter__(self):
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="scopelint-progress", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.wait(self.DELAY if not self._shown else 1.0):
            elapsed = time.monotonic() - started
            try:
                sys.stderr.write(f"\r\x1b[2Kscopelint: checking {self.files:,} file{'s' if self.files != 1 else ''}... {elapsed:.0f} s")
                sys.stderr.flush()
            except (OSError, ValueError):
                return
            self._shown = True

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self._shown:
                try:
                    sys.stderr.write("\r\x1b[2K")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass


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


def _run_options(args, resolver: Resolver) -> None:
    """The run's own settings: the option, else its ``SCOPELINT_*`` variable, else the
    working folder's configuration (or --config's), else the default, as ruff reads them."""
    run = resolver.run_config()

    def pick(cli, configured, default):
        return cli if cli is not None else configured if configured is not None else default

    args.fix = pick(args.fix, run.fix, False)
    args.unsafe_fixes = pick(args.unsafe_fixes, run.unsafe_fixes, False)
    args.show_fixes = pick(args.show_fixes, run.show_fixes, False)
    args.fix_only = bool(args.fix_only)
    args.force_exclude = bool(run.force_exclude)  # (the option is laid over every configuration)
    env_format = os.environ.get(ENV_OUTPUT_FORMAT) or None
    if args.output_format is None and env_format is not None and env_format not in OUTPUT_FORMATS:
        raise ConfigError(f"{ENV_OUTPUT_FORMAT}={env_format}: not an output format ({', '.join(OUTPUT_FORMATS)})")
    fmt = args.output_format or env_format or run.output_format or "full"
    args.output_format = "text" if fmt == "full" else fmt  # (ruff's ``full`` is scopelint's ``text``)
    if not args.no_cache:
        args.no_cache = os.environ.get(ENV_NO_CACHE, "").strip().lower() in _TRUE
    if not args.cache_dir:
        args.cache_dir = os.environ.get(ENV_CACHE_DIR) or (
            os.path.join(run.root, os.path.expanduser(run.cache_dir)) if run.cache_dir else None)
    if args.silent:
        args.quiet = True
    from scopelint import set_docs_url

    set_docs_url(run.docs_url)


def _color(args, out) -> bool:
    """``--color``; in ``auto``, FORCE_COLOR (non-empty) turns it on anywhere, NO_COLOR off,
    else a terminal decides (https://force-color.org, https://no-color.org)."""
    if args.color != "auto":
        return args.color == "always"
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def cmd_check(args) -> int:
    if args.jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    resolver = Resolver(_overrides(args))
    _run_options(args, resolver)
    from scopelint import set_docs_url

    try:
        if args.watch:
            from scopelint.watch import watch

            return watch(args, resolver, lambda: cmd_check_once(args, Resolver(_overrides(args))))
        return cmd_check_once(args, resolver)
    finally:
        set_docs_url(None)  # (the run's setting: not left to a later run in this process)


def cmd_check_once(args, resolver: Resolver) -> int:
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
_EDIT_FORMATS = ("json", "json-lines", "sarif", "rdjson")


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

            cache = Cache(Path(args.cache_dir) if args.cache_dir else cache_dir())
        started = time.monotonic()
        with _Progress(len(tasks), enabled=not args.quiet and not args.watch):
            results.extend(check_paths(tasks, args.jobs, cache))
        if args.verbose:
            _say(f"scopelint: checked {len(tasks)} file{'s' if len(tasks) != 1 else ''} in {time.monotonic() - started:.2f} s"
                 + (f" (cache: {args.cache_dir or cache_dir()})" if cache is not None else " (no cache)"))
    if not args.silent:
        for warning in resolver.warnings:
            _say(f"scopelint: warning: {warning}")
    _unfixable(results, resolver)

    if args.add_noqa:
        return _add_noqa(results, args)
    fixed = 0
    verified = None
    if fixing and args.unsafe_fixes and getattr(args, "verify", False):  # verified unsafe fixes only
        from scopelint.runtime_check.cli import VerifiedFixes

        verified = VerifiedFixes(args, results)
    before = {r.filename: Counter(f.code for f in r.findings if f.fix is not None) for r in results} if args.show_fixes else {}
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
    if args.silent and report.is_stdout:
        out = open(os.devnull, "w")
    color = _color(args, out)
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
    elif args.output_format == "grouped" and not args.diff:
        write_grouped(results, out, color)
    elif not args.diff:
        write_text(results, out, args.output_format == "concise", color)
        if args.fix_only:
            line = fix_only_summary(results, fixed, unsafe_hidden)
            if line and not args.quiet:
                print(line, file=out)
        elif not args.quiet:
            print(summary(results, fixed, unsafe_hidden), file=out)
    if args.show_fixes and fixed and not args.quiet and not args.diff:
        write_fixed(before, results, sys.stderr if out is sys.stdout and args.output_format not in ("text", "concise", "grouped") else out)
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
    reason = args.add_noqa_reason
    if reason is not None:
        reason = " ".join(reason.split())  # (one line: it ends the comment)
    for res in results:
        if res.source is None or res.path is None or not res.findings or res.errors:
            continue
        if res.filename.lower().endswith(".ipynb"):
            try:
                nb = notebook.load(res.source)
            except ValueError:
                continue
            edits = add_noqa_findings(res.findings, nb.cell_lines, lambda cell: rows_inside_strings(nb.cell_text(cell)), reason)
            text, n = notebook.apply_edits(res.source, edits, False)
        else:
            lines = _LINE_BREAK.split(res.source)
            inside = rows_inside_strings(res.source)
            edits = add_noqa_findings(res.findings, lambda cell: lines, lambda cell: inside, reason)
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


def _only_fixable(inner, is_fixable):
    def apply(text, findings, unsafe):
        return inner(text, [f for f in findings if f.fix is None or is_fixable(f.code)], unsafe)

    return apply


def _unfixable(results: List[FileResult], resolver: Resolver) -> None:
    """``unfixable`` / ``fixable``: a finding of a code whose fixes are not applied shows
    no fix either (no ``[*]``), as ruff's."""
    for res in results:
        if res.path is None and res.filename == "-":
            cfg = resolver.run_config()
        else:
            cfg = resolver.config_for(Path(res.path or res.filename))
        if cfg.fixable is None and not cfg.unfixable:
            continue
        for f in res.findings:
            if f.fix is not None and not cfg.is_fixable(f.code):
                f.fix = None


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
        fixable = resolver.config_for(Path(res.path)) if res.path else resolver.run_config()
        if fixable.fixable is not None or fixable.unfixable:  # only the fixable codes' fixes, every round
            apply = _only_fixable(apply, fixable.is_fixable)
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
