"""``scopelint lsp``: a Language Server (pygls, stdio).

Diagnostics on open, change (debounced) and save; a quick fix per fixable finding; a
"Disable SLxxx for this line" action; ``source.fixAll.scopelint``; the rule's short doc
on hover. Settings come from the nearest ``pyproject.toml`` of each document and are
re-read when one changes. Python files, ``.ipynb`` files opened as text, and notebooks
synchronised as notebook documents are linted. The server only parses: it never imports
or runs the code it checks. A malformed request gets an error response, and nothing a
client sends takes the server down. Lints run in a child process (``worker``), so that
requests are answered while one runs; a document too large to analyse (``Limits``) gets
one diagnostic instead.

Parts (pygls's usual shape: a server subclass and the modules that work for it):
``server`` (the protocol and the ``Server``, which holds the shared state and services),
``documents`` (what is kept per document; settings), ``text`` (positions and edits,
pure), ``diagnostics`` (linting a text document), ``notebooks`` (synced notebooks),
``actions`` (quick fixes, fix-all, hover), ``worker`` (the lint worker and its child
process), ``handlers`` (the LSP methods). Only this
module is imported until the server starts: pygls is optional.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import List, Optional

MISSING_PYGLS = (
    "scopelint: error: `scopelint lsp` needs the `pygls` package; "
    "install it with: pip install 'scopelint[lsp]'"
)


def create_server():
    """Build the pygls server (raises ImportError without pygls)."""
    from scopelint.lsp import handlers, server

    ls = server.build()
    handlers.register(ls)
    return ls


def _preload(server) -> None:
    """What the first requests would otherwise load on the loop: the rules (and LibCST,
    ~1 s; the lints run in a child process, so nothing else loads them here), and the
    protocol's (de)serializers of hovers and code actions (built on first use)."""
    log = logging.getLogger("scopelint.lsp")
    try:
        from scopelint.rules import ALL_RULES

        for code in list(ALL_RULES):
            ALL_RULES.get(code)
    except Exception:  # pragma: no cover - a broken rule shows on first use instead
        log.debug("cannot preload the rules", exc_info=True)
    try:
        from lsprotocol import types

        conv = server.protocol._converter
        rng = types.Range(types.Position(0, 0), types.Position(0, 1))
        edit = types.WorkspaceEdit(changes={"file:///x.py": [types.TextEdit(range=rng, new_text="x")]})
        diag = types.Diagnostic(range=rng, message="m", code="SL000", source="scopelint", data={})
        conv.unstructure([types.CodeAction(title="t", kind="quickfix", diagnostics=[diag], edit=edit)])
        conv.unstructure(types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="v"), range=rng))
        doc = {"uri": "file:///x.py"}
        pos = {"line": 0, "character": 0}
        conv.structure({"textDocument": doc, "position": pos}, types.HoverParams)
        conv.structure({"textDocument": doc, "range": {"start": pos, "end": pos}, "context": {"diagnostics": []}},
                       types.CodeActionParams)
        conv.structure({"title": "t", "kind": "quickfix"}, types.CodeAction)
        # pygls (de)serializes whole messages: their own hooks are built on first use too.
        action = types.CodeAction(title="t", kind="quickfix", diagnostics=[diag], edit=edit)
        conv.unstructure(types.CodeActionResponse(id=1, result=[action]))
        conv.unstructure(types.HoverResponse(id=1, result=None))
        params = {"textDocument": doc, "range": {"start": pos, "end": pos}, "context": {"diagnostics": []}}
        conv.structure({"jsonrpc": "2.0", "id": 1, "method": "textDocument/codeAction", "params": params},
                       types.CodeActionRequest)
        conv.structure({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover",
                        "params": {"textDocument": doc, "position": pos}}, types.HoverRequest)
    except Exception:  # pragma: no cover - only the first requests are slower
        log.debug("cannot preload the protocol's converters", exc_info=True)


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of ``scopelint lsp``: serve over stdin/stdout until the client exits."""
    try:
        import pygls  # noqa: F401
        import lsprotocol  # noqa: F401
    except ImportError:
        print(MISSING_PYGLS, file=sys.stderr)
        return 2
    logging.basicConfig(level=os.environ.get("SCOPELINT_LOG_LEVEL", "WARNING").upper(), stream=sys.stderr,
                        format="scopelint-lsp %(levelname)s %(name)s: %(message)s")
    server = create_server()
    threading.Thread(target=_preload, args=(server,), name="scopelint-lsp-preload", daemon=True).start()
    # stdout is the protocol channel: anything else printing there would corrupt it.
    # pygls closes the stream it writes when the client exits: it gets its own handle on
    # the same file, so that the interpreter's stdout stays open (and flushes at exit).
    try:
        channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    except (OSError, ValueError, AttributeError):  # no file behind stdout
        channel = sys.stdout.buffer
    sys.stdout = sys.stderr
    try:
        server.start_io(sys.stdin.buffer, channel)
    finally:
        server.stop_linting()
    return server.exit_status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
