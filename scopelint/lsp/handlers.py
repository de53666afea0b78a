"""The LSP methods the server answers, each handed to the part that does the work."""

from __future__ import annotations

import logging
import os

from lsprotocol import types

from scopelint.config import CONFIG_FILES
from scopelint.lsp import actions
from scopelint.lsp.diagnostics import lint_dependants, lint_document, lintable
from scopelint.lsp.notebooks import lint_notebook

log = logging.getLogger("scopelint.lsp")
DEBOUNCE_S = 0.3


def relint_all(ls) -> None:
    for uri in list(ls.workspace.text_documents):
        if lintable(ls, uri):
            ls.schedule(uri, lint_document, 0)
    for uri in list(ls.workspace.notebook_documents):
        ls.schedule(uri, lint_notebook, 0)


def reload_settings(ls) -> None:
    """``pyproject.toml`` changed: read the settings again and lint every open document."""
    ls.settings_changed()
    relint_all(ls)


def clear(ls, uri: str) -> None:
    """Forget a document's diagnostics, and clear them in the editor if any were shown."""
    if ls.by_uri.pop(uri, None) is not None:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def take_client_settings(server, options, source: str, root=None) -> bool:
    """The editor's rule settings (``ClientSettings``) from ``options``: complaints shown
    once; returns whether the settings changed."""
    before = dict(server.client_settings.values)
    for complaint in server.client_settings.update(options, source, root):
        log.warning("%s", complaint)
        server.show_once(f"scopelint: {complaint}; setting not applied")
    if server.client_settings.values == before:
        return False
    server.settings_cache.invalidate(server.client_settings.overrides())
    return True


def _root_of(params) -> str:
    """The workspace root an ``initialize`` names (for relative paths in its options)."""
    from pygls.uris import to_fs_path

    folders = params.workspace_folders or []
    uri = folders[0].uri if folders else params.root_uri
    try:
        return (to_fs_path(uri) if uri else None) or params.root_path or ""
    except Exception:
        return params.root_path or ""


def register(server) -> None:
    """Register every handler on ``server`` (a ``scopelint.lsp.server.Server``)."""

    @server.feature(types.INITIALIZE)
    def initialize(params):
        for complaint in server.limits.update(params.initialization_options):
            log.warning("%s", complaint)
            server.show_once(f"scopelint: {complaint}; using the default")
        take_client_settings(server, params.initialization_options, "initializationOptions", _root_of(params))

    @server.feature(types.INITIALIZED)
    def initialized(params):
        warm_up = getattr(server.worker.runner, "warm_up", None)
        if warm_up is not None:
            warm_up()  # the lint process imports the engine while the client gets ready
        caps = server.client_capabilities
        watch = caps.workspace and caps.workspace.did_change_watched_files
        if watch and watch.dynamic_registration:
            reg = types.Registration(
                id="scopelint-pyproject",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
                ),
            )

            def done(fut):
                if not fut.cancelled() and fut.exception() is not None:
                    log.warning("the client did not register the pyproject.toml watcher: %s", fut.exception())

            try:
                server.client_register_capability(types.RegistrationParams(registrations=[reg])).add_done_callback(done)
            except Exception as exc:
                log.warning("cannot register a pyproject.toml watcher: %s", exc)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params):
        server.schedule(params.text_document.uri, lint_document, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params):
        server.schedule(params.text_document.uri, lint_document, DEBOUNCE_S)
        lint_dependants(server, params.text_document.uri, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params):
        uri = params.text_document.uri
        if os.path.basename(server.path_of(uri)) in CONFIG_FILES:
            reload_settings(server)
            return
        server.schedule(uri, lint_document, 0)
        lint_dependants(server, uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params):
        uri = params.text_document.uri
        server.cancel_pending(uri)
        server.linted.pop(uri, None)
        clear(server, uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params):
        if any(c.uri.rsplit("/", 1)[-1] in CONFIG_FILES for c in params.changes):
            reload_settings(server)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(params):
        # The client's settings changed: take its limits and rule settings (same keys as
        # ``initializationOptions``), read every pyproject.toml again, lint again.
        for complaint in server.limits.update(params.settings, "settings"):
            log.warning("%s", complaint)
            server.show_once(f"scopelint: {complaint}; the limit is unchanged")
        server.settings_changed()  # (forgets the messages shown: a complaint shows again)
        take_client_settings(server, params.settings, "settings", server.workspace.root_path)
        relint_all(server)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def nb_did_open(params):
        server.schedule(params.notebook_document.uri, lint_notebook, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def nb_did_change(params):
        server.schedule(params.notebook_document.uri, lint_notebook, DEBOUNCE_S)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def nb_did_save(params):
        server.schedule(params.notebook_document.uri, lint_notebook, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def nb_did_close(params):
        uri = params.notebook_document.uri
        server.cancel_pending(uri)
        old = server.linted.pop(uri, None)
        uris = {c.uri for c in params.cell_text_documents} | ({i.uri for i in old.items} if old else set())
        for cell_uri in uris:
            clear(server, cell_uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL_KIND], resolve_provider=True
        ),
    )
    async def code_action(params):
        # Edits must be made from the text's current state: a request that comes while
        # that state is still being linted waits for the lint (the loop serves others).
        await actions.until_fresh(server, params.text_document.uri)
        return await actions.code_actions_off_loop(server, params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(params):
        return await actions.resolve_code_action(server, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params):
        return actions.hover(server, params)

    @server.feature(types.SHUTDOWN)
    def shutdown(params):
        server.stop_linting()

    @server.feature(types.EXIT)
    def exit_(params):
        # The exit status (LSP: 0 after shutdown, 1 without); pygls's own ``sys.exit``
        # with it does not reach ``scopelint lsp``'s caller.
        server.exit_status = 0 if server.protocol._shutdown else 1
        server.stop_linting()
