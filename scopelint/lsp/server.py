"""The pygls server: its protocol (a malformed request gets an error response), and the
``Server`` that holds what the parts share -- the settings cache, the last lint per
document, the diagnostics shown per URI, the pending (debounced) lints -- and the
services they use: paths, settings, messages, publishing, scheduling."""

from __future__ import annotations

import asyncio
import logging
import os
import re
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Set

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from scopelint import __version__
from scopelint.config import ConfigError
from scopelint.engine import Settings
from scopelint.lsp.documents import Item, Linted, SettingsCache

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


class Server(LanguageServer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.settings_cache = SettingsCache()
        self.linted: Dict[str, Linted] = {}  # text document or notebook URI -> last lint
        self.by_uri: Dict[str, List[Item]] = {}  # diagnostic URI (document or cell) -> items
        self.pending: Dict[str, asyncio.TimerHandle] = {}
        self.shown_errors: Set[str] = set()

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
            return Settings()
        except Exception as exc:
            log.exception("resolving settings for %s", path)
            self.show_once(f"scopelint: cannot read the configuration: {exc}")
            return Settings()

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

    def schedule(self, key: str, fn: Callable, delay: float) -> None:
        """``fn(self, key)`` after ``delay`` seconds (replacing one pending for ``key``)."""
        handle = self.pending.pop(key, None)
        if handle is not None:
            handle.cancel()
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
