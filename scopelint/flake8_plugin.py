"""scopelint as a flake8 plugin: ``flake8 --select SL`` (as TorchFix's ``--select TOR``).

Registered as the ``flake8.extension`` entry point ``SL``. flake8 classifies a plugin by
its parameters: asking for ``tree`` makes this a per-file ("tree") plugin, run once per
file; the tree itself is not used. The plugin lints the text flake8 read (``lines``: the
file, or stdin with ``flake8 -``), never the file on disk again, through
``engine.lint_source``, as the editor integration does, with every stable rule on and
scopelint's own ``# noqa`` handling off: flake8 applies its ``# noqa``, ``--select``,
``--ignore``, ``--extend-ignore``, ``--per-file-ignores`` and ``--disable-noqa`` to what
the plugin reports. ``# scopelint: skip-file`` still skips a file.

Rows are 1-based and columns 0-based in flake8's plugin API (flake8 adds 1 when it
prints them), so a finding at scopelint's ``12:5`` is yielded as ``(12, 4)`` and printed
``12:5`` by both tools. A file that does not parse is flake8's own E999: the tree
plugins (this one included) do not run on it, so SL000 never comes from here.
"""

from __future__ import annotations

import sys
from typing import Iterator, List, Tuple

from scopelint import __version__


class Plugin:
    name = "scopelint"
    version = __version__

    def __init__(self, tree, lines: List[str], filename: str):
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        from scopelint.engine import Settings, lint_source
        from scopelint.finding import SYNTAX_ERROR

        from scopelint.config import default_selection

        # The stable rules (preview rules need scopelint's own preview mode: docs/preview.md)
        result = lint_source("".join(self.lines), self.filename, Settings(tuple(default_selection()), ignore_noqa=True))
        for error in result.errors:  # an internal error: say so, as `scopelint check` does
            print(f"scopelint: error: {error}", file=sys.stderr)
        for f in sorted(result.findings, key=lambda f: (f.start, f.code)):
            if f.code == SYNTAX_ERROR:
                continue
            yield f.start[0], max(f.start[1] - 1, 0), f"{f.code} {f.message}", type(self)
