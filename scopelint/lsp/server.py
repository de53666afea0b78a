"""The pygls server: its protocol (a malformed request gets an error response; a change
to a document that is not open is ignored), and the ``Server`` that holds what the parts
share -- the settings cache, the last lint per document, the diagnostics shown per URI,
the pending (debounced) lints, the lint worker and the size limits -- and the services
they use: paths, settings, messages, publishing, scheduling, running work off the loop."""

from __future__ import annotations

import asyncio
import logging
import os
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Set
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import to_fs_path

from scopelint import __version__
from scopelint.config import ConfigError, default_selection
from scopelint.engine import Settings
from scopelint.lsp.documents import TOO_LARGE, ClientSettings, Item, Limits, Linted, SettingsCache
from scopelint.lsp.worker import ProcessRunner, TooSlow, Worker, inline

log = logging.getLogger("scopelint.lsp")


class _Malformed:
    """A request whose parameters could not be read: answered with an error."""

    def __init__(self, msg_id, error):
        self.id = msg_id
        self.error = error


class Protocol(LanguageServerProtocol):
    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return _Malformed(data["id"], exc)
            raise
        except Exception as exc:  # pragma: no cover - defensive
            if isinstance(data, dict) and "id" in data and "method" in data:
                return _Malformed(data["id"], JsonRpcInternalError(str(exc)))
            raise

    def handle_message(self, message):
        if isinstance(message, _Malformed):
            log.warning("malformed request %r: %s", message.id, message.error)
            self._send_response(message.id, None, message.error.to_response_error())
            return
        if not hasattr(message, "jsonrpc"):  # e.g. a JSON array or a bare value
            log.warning("ignoring a message that is not JSON-RPC: %r", message)
            return
        super().handle_message(message)

    # A change to a document the client never opened (or already closed) is a client's
    # bug: ignored with a note in the log, not an error (pygls would raise KeyError).
    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.info("ignoring a change to %s, which is not open", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: types.DidChangeNotebookDocumentParams):
        if unquote(params.notebook_document.uri) not in self.workspace.notebook_documents:
            log.info("ignoring a change to notebook %s, which is not open", params.notebook_document.uri)
            return
        yield from super().lsp_notebook_document__did_change(params)


class Server(LanguageServer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.settings_cache = SettingsCache()
        self.client_settings = ClientSettings()  # the editor's select/ignore/severity/configuration
        self.linted: Dict[str, Linted] = {}  # text document or notebook URI -> last lint
        self.by_uri: Dict[str, List[Item]] = {}  # diagnostic URI (document or cell) -> items
        self.pending: Dict[str, asyncio.TimerHandle] = {}
        self.shown_errors: Set[str] = set()
        self.limits = Limits()
        self.exit_status = 0  # LSP: ``exit`` without ``shutdown`` first is 1
        self.worker = Worker(ProcessRunner(preload=("scopelint.lsp.diagnostics", "scopelint.lsp.notebooks")))
        # Per key, a counter bumped by every schedule and cancel: a lint's result is
        # published only if no newer state of its document was asked for meanwhile.
        self.generation: Dict[str, int] = {}
        self.in_flight: Dict[str, int] = {}  # key -> generation of the lint on the worker

    def report_server_error(self, error, source):
        # Log, never pop up or die: requests already get an error response.
        log.error("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=f"scopelint: {error}")
            )
        except Exception:
            pass

    def encoding(self) -> str:
        enc = self.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    def path_of(self, uri: str) -> str:
        path = None
        try:
            path = to_fs_path(uri)
        except Exception:
            path = None
        if not path or not uri.startswith("file:"):
            # An unsaved buffer (untitled:Untitled-1): settings of the workspace root.
            root = self.workspace.root_path or os.getcwd()
            name = re.sub(r"[^\w.-]", "_", uri.rsplit("/", 1)[-1].rsplit(":", 1)[-1]) or "untitled"
            return os.path.join(root, name)
        return path

    def show_once(self, message: str, kind=types.MessageType.Warning) -> None:
        if message in self.shown_errors:
            return
        self.shown_errors.add(message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def settings_for(self, path: str) -> Settings:
        try:
            return self.settings_cache.settings_for(Path(path))
        except ConfigError as exc:
            self.show_once(f"scopelint: configuration error: {exc}; using the default settings")
            return Settings(tuple(default_selection()))
        except Exception as exc:
            log.exception("resolving settings for %s", path)
            self.show_once(f"scopelint: cannot read the configuration: {exc}")
            return Settings(tuple(default_selection()))

    def settings_changed(self) -> None:
        """A pyproject.toml changed: read the settings again, show their errors again."""
        self.settings_cache.invalidate()
        self.shown_errors.clear()

    def log_errors(self, errors: Sequence[str]) -> None:
        for e in errors:
            log.error("%s", e)
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"scopelint: {e}"))

    def publish(self, uri: str, items: List[Item], version=None) -> None:
        self.by_uri[uri] = items
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[i.diagnostic for i in items], version=version)
        )

    def safely(self, fn: Callable, *args) -> None:
        try:
            fn(*args)
        except Exception as exc:  # the server outlives any bug
            log.exception("scopelint: internal error")
            try:
                self.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=f"scopelint: internal error: {exc!r}")
                )
            except Exception:
                pass

    def supersede(self, key: str) -> None:
        """What was asked for ``key`` until now is moot: drop a queued lint, and the
        result of one running."""
        self.generation[key] = self.generation.get(key, 0) + 1
        self.worker.discard(key)

    def busy(self, key: str) -> bool:
        """A lint of ``key`` is pending, queued or running."""
        return key in self.pending or key in self.in_flight

    def submit(self, key: str, job, done: Callable[[object], None], too_slow: Optional[Callable[[str], None]] = None) -> None:
        """Run ``job`` (``(function, args)``, picklable) on the lint worker, then
        ``done(result)`` on the message loop -- unless ``key`` was scheduled or cancelled
        again meanwhile (its result is moot). A job over the time budget
        (``limits.max_seconds``) is stopped, and ``too_slow(reason)`` called instead."""
        gen = self.generation.get(key, 0)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no message loop (a script, a test): here and now
            loop = None
        if loop is None:
            self.safely(lambda: done(inline(job)))
            return
        self.in_flight[key] = gen

        def deliver(result, error):
            try:
                loop.call_soon_threadsafe(self._deliver, key, gen, done, too_slow, result, error)
            except RuntimeError:  # the loop is closed: the server is going away
                pass

        self.worker.submit(key, job, self.limits.max_seconds, deliver)

    def _deliver(self, key: str, gen: int, done: Callable, too_slow, result, error) -> None:
        if self.in_flight.get(key) == gen:
            del self.in_flight[key]
        if self.generation.get(key, 0) != gen:
            log.debug("dropping the lint of an outdated state of %s", key)
            return
        if isinstance(error, TooSlow) and too_slow is not None:
            log.warning("%s: %s; stopped", key, error)
            self.safely(too_slow, f"{TOO_LARGE} within the time budget ({error})")
            return
        if error is not None:
            log.error("scopelint: internal error linting %s: %r", key, error)
            self.safely(
                self.window_log_message,
                types.LogMessageParams(type=types.MessageType.Error, message=f"scopelint: internal error: {error!r}"),
            )
            return
        self.safely(done, result)

    def schedule(self, key: str, fn: Callable, delay: float) -> None:
        """``fn(self, key)`` after ``delay`` seconds (replacing one pending for ``key``;
        what is queued or running for ``key`` becomes moot)."""
        handle = self.pending.pop(key, None)
        if handle is not None:
            handle.cancel()
        self.supersede(key)
        if delay <= 0:
            self.safely(fn, self, key)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.safely(fn, self, key)
            return
        self.pending[key] = loop.call_later(delay, self.safely, fn, self, key)

    def cancel_pending(self, key: str) -> None:
        handle = self.pending.pop(key, None)
        if handle is not None:
            handle.cancel()
        self.supersede(key)
        self.in_flight.pop(key, None)

    def stop_linting(self) -> None:
        """``shutdown``: no lint more, none pending."""
        for handle in self.pending.values():
            handle.cancel()
        self.pending.clear()
        for key in list(self.generation):
            self.supersede(key)
        self.in_flight.clear()
        self.worker.stop()


def build() -> Server:
    nb_sync = types.NotebookDocumentSyncOptions(
        notebook_selector=[
            types.NotebookDocumentFilterWithCells(
                notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]
            )
        ],
        save=True,
    )
    return Server(
        "scopelint",
        __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Full,
        notebook_document_sync=nb_sync,
        protocol_cls=Protocol,
    )
