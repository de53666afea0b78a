"""``scopelint check --watch`` (``-w``): check, then check again whenever a file that
would be checked (or a configuration file of the working folder) changes, as ruff's
watch mode. Changes are found by polling sizes and modification times (no extra
dependency), every ``INTERVAL`` seconds; Ctrl-C stops it (exit 0)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Tuple

from scopelint.config import CONFIG_FILES, ConfigError, Resolver

INTERVAL = float(os.environ.get("SCOPELINT_WATCH_INTERVAL", "0.5") or 0.5)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def snapshot(paths, resolver: Resolver) -> Dict[str, Tuple[int, int]]:
    """Path -> (size, mtime in ns) of every file a check would read, and of the working
    folder's configuration files."""
    from scopelint.files import discover

    out: Dict[str, Tuple[int, int]] = {}
    candidates = list(discover(list(paths), resolver)) + [Path(name) for name in CONFIG_FILES]
    for path in candidates:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out[os.path.abspath(path)] = (st.st_size, st.st_mtime_ns)
    return out


def watch(args, resolver: Resolver, check_once: Callable[[], int]) -> int:
    paths = args.paths or ["."]
    if "-" in paths or args.stdin_filename:
        raise ConfigError("--watch checks files: it cannot read stdin")
    if args.add_noqa or args.diff:
        raise ConfigError("--watch cannot be combined with --add-noqa or --diff")
    _say("Starting linter in watch mode...")
    try:
        while True:
            before = snapshot(paths, resolver)
            try:
                check_once()
            except ConfigError as exc:  # (a configuration being edited: say it, keep watching)
                _say(f"scopelint: error: {exc}")
            sys.stdout.flush()
            _say("Watching for file changes.")
            while True:
                time.sleep(INTERVAL)
                try:
                    resolver = Resolver(resolver.overrides)
                    now = snapshot(paths, resolver)
                except ConfigError:
                    now = None
                if now != before:
                    _say("File change detected...")
                    break
    except KeyboardInterrupt:
        return 0
