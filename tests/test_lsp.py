"""`scopelint lsp`: the real server in a subprocess, driven by a real LSP client (pytest-lsp)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sys
import uuid
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs pygls (pip install 'scopelint[lsp]')")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="LSP tests need pytest-lsp (pip install 'scopelint[test]')")

from lsprotocol import types  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from scopelint.rules import ALL_RULES  # noqa: E402

pytestmark = pytest.mark.asyncio

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 60  # generous: CI machines can be slow and loaded

BAD = "import torch\n\nmodel = torch.nn.Linear(3, 1)\nwith torch.no_grad:\n    out = model(torch.ones(2, 3))\n"
GOOD = "import torch\n\nmodel = torch.nn.Linear(3, 1)\nwith torch.no_grad():\n    out = model(torch.ones(2, 3))\n"
SL101_SRC = (
    "import torch\n\n"
    "model = torch.nn.Linear(3, 1)\n"
    "x = torch.ones(2, 3)\n"
    "with torch.no_grad():\n"
    "    loss = model(x).sum()\n"
    "loss.backward()\n"
)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "scopelint", "lsp"]),
)
async def client(lsp_client: LanguageClient, tmp_path):
    caps = client_capabilities("visual-studio-code")
    lsp_client.registrations = []

    lsp_client.published = []  # (uri, version, codes) of every publishDiagnostics, in order

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):  # VS Code accepts dynamic registrations; so does this client
        lsp_client.registrations.extend(params.registrations)

    features = lsp_client.protocol.fm.features
    store = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]  # pytest-lsp's own handler

    def publish(params):
        lsp_client.published.append((params.uri, params.version, codes(params.diagnostics)))
        return store(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        )
    )
    yield
    await lsp_client.shutdown_session()


# -- helpers ----------------------------------------------------------------------------


async def wait_diagnostics(client: LanguageClient, uri: str, predicate, timeout: float = TIMEOUT):
    """Wait until the diagnostics published for ``uri`` satisfy ``predicate``."""

    async def loop():
        while True:
            if uri in client.diagnostics and predicate(list(client.diagnostics[uri])):
                return list(client.diagnostics[uri])
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    try:
        return await asyncio.wait_for(loop(), timeout)
    except asyncio.TimeoutError:
        got = [(d.code, d.range.start.line, d.message) for d in client.diagnostics.get(uri, [])]
        raise AssertionError(f"diagnostics for {uri} never matched; last published: {got}") from None


def codes(diags) -> list:
    return sorted(str(d.code) for d in diags)


def has(*expected):
    return lambda diags: codes(diags) == sorted(expected)


def open_doc(client: LanguageClient, path: Path, text: str, language: str = "python", version: int = 1) -> str:
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
    )
    return uri


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply_text_edits(text: str, edits) -> str:
    """Apply LSP TextEdits (UTF-16 positions; our test texts are ASCII) to ``text``."""
    lines = text.splitlines(True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def off(p):
        return starts[p.line] + p.character if p.line < len(starts) else len(text)

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: off(e.range.start)] + e.new_text + text[off(e.range.end) :]
    return text


async def actions_at(client: LanguageClient, uri: str, diag, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag], only=only),
        )
    ) or []


async def raw_request(client: LanguageClient, method: str, params):
    """Send a request exactly as given (no client-side typing), await the response."""
    msg_id = f"raw-{uuid.uuid4()}"
    future: concurrent.futures.Future = concurrent.futures.Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wait_for(asyncio.wrap_future(future), TIMEOUT)


def raw_notify(client: LanguageClient, method: str, params) -> None:
    client.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})


async def assert_alive(client: LanguageClient, tmp_path: Path) -> None:
    """The server still answers and still lints."""
    uri = open_doc(client, tmp_path / "alive_check.py", BAD)
    await wait_diagnostics(client, uri, has("SL107"))


# -- tests ------------------------------------------------------------------------------


async def test_open_publishes_diagnostics(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "bad.py", BAD)
    diags = await wait_diagnostics(client, uri, has("SL107"))
    d = diags[0]
    assert d.source == "scopelint"
    assert d.severity == types.DiagnosticSeverity.Error
    # `torch.no_grad` on line 4 (0-based 3), columns 5..18
    assert (d.range.start.line, d.range.start.character) == (3, 5)
    assert (d.range.end.line, d.range.end.character) == (3, 18)
    # no documentation address in a checkout: no link rather than a file:// path (issue 43)
    assert d.code_description is None and ALL_RULES["SL107"].url() is None
    assert "without calling it" in d.message


async def test_change_updates_diagnostics(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "edit.py", BAD)
    await wait_diagnostics(client, uri, has("SL107"))
    change_doc(client, uri, GOOD, 2)
    await wait_diagnostics(client, uri, has())
    change_doc(client, uri, SL101_SRC, 3)
    diags = await wait_diagnostics(client, uri, has("SL101"))
    assert diags[0].range.start.line == 6


async def test_change_is_debounced(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "typing.py", GOOD)
    await wait_diagnostics(client, uri, has())
    start = len(client.published)
    # A burst of keystrokes: linted once, for the last state, after a short pause.
    for version in range(2, 12):
        change_doc(client, uri, BAD if version % 2 else GOOD, version)
    change_doc(client, uri, BAD, 12)
    await wait_diagnostics(client, uri, has("SL107"))
    await asyncio.sleep(1.0)
    mine = [p for p in client.published[start:] if p[0] == uri]
    assert mine[-1] == (uri, 12, ["SL107"])
    assert len(mine) <= 3, mine  # not one lint per keystroke (11 changes)


async def test_save_relints(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "saved.py", BAD)
    await wait_diagnostics(client, uri, has("SL107"))
    (tmp_path / "saved.py").write_text(GOOD)
    change_doc(client, uri, GOOD, 2)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await wait_diagnostics(client, uri, has())


async def test_quick_fix_and_disable_for_line(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "fixme.py", BAD)
    (diag,) = await wait_diagnostics(client, uri, has("SL107"))
    actions = await actions_at(client, uri, diag)
    titles = [a.title for a in actions]
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "noqa" not in a.title and "Disable" not in a.title)
    assert fix.is_preferred
    assert fix.diagnostics and fix.diagnostics[0].code == "SL107"
    assert apply_text_edits(BAD, fix.edit.changes[uri]) == GOOD

    disable = next(a for a in actions if a.title == "Disable SL107 for this line")
    disabled = apply_text_edits(BAD, disable.edit.changes[uri])
    assert disabled.splitlines()[3] == "with torch.no_grad:  # noqa: SL107"
    assert titles.count("Disable SL107 for this line") == 1

    # Disabling merges into an existing `# noqa:` list.
    change_doc(client, uri, BAD.replace("with torch.no_grad:", "with torch.no_grad:  # noqa: E501"), 2)
    (diag,) = await wait_diagnostics(
        client, uri, lambda d: codes(d) == ["SL107"] and d[0].range.start.line == 3 and True
    )
    actions = await actions_at(client, uri, diag, only=[types.CodeActionKind.QuickFix])
    disable = next(a for a in actions if a.title == "Disable SL107 for this line")
    text = BAD.replace("with torch.no_grad:", "with torch.no_grad:  # noqa: E501")
    assert apply_text_edits(text, disable.edit.changes[uri]).splitlines()[3] == "with torch.no_grad:  # noqa: E501, SL107"
    assert all(a.kind == types.CodeActionKind.QuickFix for a in actions)

    # The server agrees: once disabled, the diagnostic is gone.
    change_doc(client, uri, apply_text_edits(text, disable.edit.changes[uri]), 3)
    await wait_diagnostics(client, uri, has())


async def test_fix_all(client: LanguageClient, tmp_path: Path):
    text = BAD + "with torch.enable_grad:\n    pass\n"
    uri = open_doc(client, tmp_path / "fixall.py", text)
    await wait_diagnostics(client, uri, has("SL107", "SL107"))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.scopelint"]),
        )
    )
    assert actions and len(actions) == 1 and actions[0].kind == "source.fixAll.scopelint"
    fixed = apply_text_edits(text, actions[0].edit.changes[uri])
    assert fixed == GOOD + "with torch.enable_grad():\n    pass\n"

    # Asked for `source` actions in general (VS Code's "source action" menu): offered too.
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.Source]),
        )
    )
    assert [a.kind for a in actions] == ["source.fixAll.scopelint"]


async def test_hover_shows_rule_doc(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "hover.py", BAD)
    await wait_diagnostics(client, uri, has("SL107"))
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=10))
    )
    assert hover is not None
    value = hover.contents.value
    assert "SL107" in value and "grad-context-not-called" in value
    # no documentation address in a checkout: no link (never a file:// path), the command instead
    assert "[Documentation]" not in value and "file://" not in value and "`scopelint rule SL107`" in value
    assert "(error)" in value  # the rule's default severity: no configuration says otherwise
    nothing = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=2))
    )
    assert nothing is None


async def test_hover_shows_the_configured_severity(client: LanguageClient, tmp_path: Path):
    """Issue 43: the hover said the rule's default severity where the project configures
    another (the diagnostic's own severity was already the configured one)."""
    (tmp_path / "sev").mkdir()
    (tmp_path / "sev" / "scopelint.toml").write_text('severity = { SL107 = "info" }\n', encoding="utf-8")
    uri = open_doc(client, tmp_path / "sev" / "hover.py", BAD)
    (diag,) = await wait_diagnostics(client, uri, has("SL107"))
    assert diag.severity == types.DiagnosticSeverity.Information
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=10))
    )
    assert "**SL107** `grad-context-not-called` (info)" in hover.contents.value


async def test_unparsable_buffer(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "broken.py", "import torch\ndef f(:\n    pass\n")
    (diag,) = await wait_diagnostics(client, uri, has("SL000"))
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.range.start.line in (1, 2)  # where LibCST notices it
    assert diag.range.end.character > diag.range.start.character  # never an empty range
    # A hover and code actions on it do not fail either.
    await actions_at(client, uri, diag)
    change_doc(client, uri, BAD, 2)
    await wait_diagnostics(client, uri, has("SL107"))
    await assert_alive(client, tmp_path)


async def test_malformed_request_gets_error_and_server_lives(client: LanguageClient, tmp_path: Path):
    # Parameters of the wrong shape: an error response, not silence.
    with pytest.raises(JsonRpcException) as err:
        await raw_request(client, "textDocument/hover", {"textDocument": 42, "position": "x"})
    assert err.value.code == -32602  # InvalidParams
    with pytest.raises(JsonRpcException):
        await raw_request(client, "textDocument/codeAction", None)
    with pytest.raises(JsonRpcException):
        await raw_request(client, "textDocument/hover", [1, 2, 3])
    # An unknown method.
    with pytest.raises(JsonRpcException) as err:
        await raw_request(client, "scopelint/noSuchThing", {})
    assert err.value.code == -32601  # MethodNotFound
    # A request about a document that was never opened: an empty answer.
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=(tmp_path / "never.py").as_uri()),
            position=types.Position(line=0, character=0),
        )
    )
    assert result is None
    # A notification with broken parameters and a change for an unknown document.
    raw_notify(client, "textDocument/didOpen", {"textDocument": {"uri": 7}})
    raw_notify(client, "textDocument/didChange", {"bogus": True})
    change_doc(client, (tmp_path / "ghost.py").as_uri(), "x", 2)
    await assert_alive(client, tmp_path)


async def test_workspace_pyproject_settings(client: LanguageClient, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.scopelint]\nignore = ["SL107"]\n')
    uri = open_doc(client, tmp_path / "ignored.py", BAD + "\n" + SL101_SRC.split("\n\n", 1)[1])
    diags = await wait_diagnostics(client, uri, lambda d: True)
    assert "SL107" not in codes(diags)
    assert any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations)

    # The configuration changes on disk: re-read, and open documents re-linted.
    (tmp_path / "pyproject.toml").write_text("[tool.scopelint]\nignore = []\n")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(tmp_path / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    await wait_diagnostics(client, uri, lambda d: "SL107" in codes(d))


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "scopelint", "lsp"]),
)
async def configured(lsp_client: LanguageClient, tmp_path):
    """A client that sets rule settings, as the VS Code extension does (editors/vscode)."""

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):
        pass

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"scopelint": {"ignore": ["SL107"], "severity": {"SL101": "info"}}},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_client_rule_settings(configured: LanguageClient, tmp_path: Path):
    client = configured
    uri = open_doc(client, tmp_path / "mixed.py", BAD + "\n" + SL101_SRC.split("\n\n", 1)[1])
    (diag,) = await wait_diagnostics(client, uri, has("SL101"))  # SL107 ignored by the editor's setting
    assert diag.severity == types.DiagnosticSeverity.Information
    # The editor's settings change: a key given replaces, one not given stays.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"scopelint": {"ignore": [], "select": ["SL999"]}})
    )
    diags = await wait_diagnostics(client, uri, has("SL101", "SL107"))
    assert [d.severity for d in diags if d.code == "SL101"] == [types.DiagnosticSeverity.Information]
    assert any("settings.select: unknown rule code or prefix `SL999`" in m.message for m in client.messages), client.messages


async def test_pyproject_edit_seen_without_file_watching(client: LanguageClient, tmp_path: Path):
    """Clients that do not watch files: the next lint notices the changed pyproject.toml."""
    sub = tmp_path / "pkg"
    sub.mkdir()
    uri = open_doc(client, sub / "mod.py", BAD)
    await wait_diagnostics(client, uri, has("SL107"))
    (tmp_path / "pyproject.toml").write_text('[tool.scopelint]\nignore = ["SL107"]\n')
    change_doc(client, uri, BAD + "\n", 2)
    await wait_diagnostics(client, uri, has())


async def test_bad_pyproject_does_not_break_linting(client: LanguageClient, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.scopelint]\nselekt = ["SL1"]\n')
    uri = open_doc(client, tmp_path / "cfg.py", BAD)
    await wait_diagnostics(client, uri, has("SL107"))
    assert any("selekt" in m.message for m in client.messages)


def _notebook(cells) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}
                for src in cells
            ],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


NB_CELLS = [
    "import torch\nmodel = torch.nn.Linear(3, 1)\nx = torch.ones(2, 3)\nwith torch.no_grad():\n    y = model(x)\n",
    "%matplotlib inline\nwith torch.no_grad:\n    pass\n",
    "y.sum().backward()\n",
]


async def test_ipynb_opened_as_text(client: LanguageClient, tmp_path: Path):
    text = _notebook(NB_CELLS)
    uri = open_doc(client, tmp_path / "nb.ipynb", text, language="json")
    diags = await wait_diagnostics(client, uri, has("SL101", "SL107"))
    lines = text.splitlines()
    by_code = {d.code: d for d in diags}
    d101 = by_code["SL101"]
    assert lines[d101.range.start.line][d101.range.start.character :].startswith("y.sum().backward()")
    d107 = by_code["SL107"]
    assert lines[d107.range.start.line][d107.range.start.character :].startswith("torch.no_grad:")

    actions = await actions_at(client, uri, d107)
    fix = next(a for a in actions if a.is_preferred)
    fixed = apply_text_edits(text, fix.edit.changes[uri])
    data = json.loads(fixed)
    assert "".join(data["cells"][1]["source"]) == "%matplotlib inline\nwith torch.no_grad():\n    pass\n"
    disable = next(a for a in actions if a.title == "Disable SL107 for this line")
    data = json.loads(apply_text_edits(text, disable.edit.changes[uri]))
    assert "with torch.no_grad:  # noqa: SL107\n" in data["cells"][1]["source"]

    (fix_all,) = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"]),
        )
    )
    fixed = apply_text_edits(text, fix_all.edit.changes[uri])
    assert json.loads(fixed)["cells"][1]["source"] == "%matplotlib inline\nwith torch.no_grad():\n    pass\n"
    assert fixed == text.replace("no_grad:\\n    pass", "no_grad():\\n    pass")  # nothing else changed


async def test_notebook_document_sync(client: LanguageClient, tmp_path: Path):
    nb_uri = (tmp_path / "synced.ipynb").as_uri()
    cells = [f"{nb_uri}#cell{i}" for i in range(len(NB_CELLS))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=c) for c in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=c, language_id="python", version=1, text=src)
                for c, src in zip(cells, NB_CELLS)
            ],
        )
    )
    d3 = await wait_diagnostics(client, cells[2], has("SL101"))
    assert d3[0].range.start.line == 0
    d2 = await wait_diagnostics(client, cells[1], has("SL107"))
    assert (d2[0].range.start.line, d2[0].range.start.character) == (1, 5)
    actions = await actions_at(client, cells[1], d2[0])
    fix = next(a for a in actions if a.is_preferred)
    assert apply_text_edits(NB_CELLS[1], fix.edit.changes[cells[1]]) == "%matplotlib inline\nwith torch.no_grad():\n    pass\n"

    # Edit cell 1 so that `y` is no longer computed under no_grad: SL101 in cell 3 goes away.
    new_first = NB_CELLS[0].replace("with torch.no_grad():\n    y = model(x)\n", "y = model(x)\n")
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cells[0], version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=new_first)],
                        )
                    ]
                )
            ),
        )
    )
    await wait_diagnostics(client, cells[2], has())


async def test_uris_as_vs_code_encodes_them(client: LanguageClient, tmp_path: Path):
    """VS Code percent-encodes URIs: a notebook cell's fragment always
    (``#W0sZmlsZQ%3D%3D``), a file's path where it has a space. pygls keeps documents under
    the decoded URI; the diagnostics must come all the same, on the URIs the client sent."""
    folder = tmp_path / "my project"
    folder.mkdir()
    uri = open_doc(client, folder / "bad file.py", BAD)
    assert "%20" in uri
    (diag,) = await wait_diagnostics(client, uri, has("SL107"))
    assert any(a.title.startswith("SL107: ") for a in await actions_at(client, uri, diag))

    nb_uri = (folder / "synced.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{nb_uri[len('file:'):]}#W{i}sZmlsZQ%3D%3D" for i in range(len(NB_CELLS))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri, notebook_type="jupyter-notebook", version=0,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=c) for c in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=c, language_id="python", version=1, text=src)
                for c, src in zip(cells, NB_CELLS)
            ],
        )
    )
    await wait_diagnostics(client, cells[2], has("SL101"))
    (d2,) = await wait_diagnostics(client, cells[1], has("SL107"))
    fix = next(a for a in await actions_at(client, cells[1], d2) if a.is_preferred)
    assert apply_text_edits(NB_CELLS[1], fix.edit.changes[cells[1]]) == "%matplotlib inline\nwith torch.no_grad():\n    pass\n"


async def test_untitled_buffer(client: LanguageClient, tmp_path: Path):
    uri = "untitled:Untitled-1"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=BAD)
        )
    )
    await wait_diagnostics(client, uri, has("SL107"))


async def test_non_python_documents_are_left_alone(client: LanguageClient, tmp_path: Path):
    toml = open_doc(client, tmp_path / "pyproject.toml", "[tool.scopelint]\n", language="toml")
    text = open_doc(client, tmp_path / "notes.txt", BAD, language="plaintext")
    await assert_alive(client, tmp_path)
    assert toml not in client.diagnostics and text not in client.diagnostics


async def test_missing_pygls_gives_a_clear_message():
    import subprocess

    code = "import sys; sys.modules['pygls'] = None; from scopelint.cli import main; sys.exit(main(['lsp']))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "pip install 'scopelint[lsp]'" in proc.stderr
    assert proc.stdout == ""


# -- "Fix and verify" (opt-in: it runs the program) -------------------------------------

SL102_SRC = (
    "import torch\n\n"
    "model = torch.nn.Linear(3, 2)\n"
    "loss = model(torch.ones(4, 3)).pow(2).mean()\n"
    "with torch.no_grad():\n"
    "    loss.backward()\n"
    "print(model.weight.grad.sum().item())\n"
)
VERIFY_WAIT = 600  # two runs of a torch program on a loaded machine, at most


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "scopelint", "lsp"]),
)
async def verifying(lsp_client: LanguageClient, tmp_path):
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):
        pass

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"scopelint": {"verifyFixes": True}},
        )
    )
    yield
    await lsp_client.shutdown_session()


def _verify_actions(actions):
    return [a for a in actions if "Fix and verify" in a.title]


async def test_fix_and_verify_is_not_offered_by_default(client: LanguageClient, tmp_path: Path):
    uri = open_doc(client, tmp_path / "plain.py", SL101_SRC)
    (diag,) = await wait_diagnostics(client, uri, has("SL101"))
    actions = await actions_at(client, uri, diag)
    assert any(a.title.startswith("SL101: ") and a.edit is not None for a in actions)  # the plain quick fix
    assert _verify_actions(actions) == []


@pytest.mark.frameworks
async def test_fix_and_verify_offers_the_edit_only_when_confirmed(verifying: LanguageClient, tmp_path: Path):
    pytest.importorskip("torch", reason="the verifier runs the program: needs torch")
    client = verifying
    # Confirmed (the program as written raises; with the fix it runs): the edit is the fix's.
    uri = open_doc(client, tmp_path / "confirmed.py", SL101_SRC)
    (diag,) = await wait_diagnostics(client, uri, has("SL101"))
    actions = await actions_at(client, uri, diag)
    [checked] = _verify_actions(actions)
    plain = next(a for a in actions if a.title.startswith("SL101: ") and a is not checked)
    assert checked.edit is None and checked.kind == types.CodeActionKind.QuickFix  # nothing runs until chosen
    assert client.messages == []
    resolved = await asyncio.wait_for(client.code_action_resolve_async(checked), VERIFY_WAIT)
    assert resolved.edit is not None and resolved.edit.changes == plain.edit.changes
    fixed = apply_text_edits(SL101_SRC, resolved.edit.changes[uri])
    compile(fixed, "confirmed.py", "exec")
    assert any("SL101 fix verified (confirmed:error" in m.message for m in client.messages), client.messages
    change_doc(client, uri, fixed, 2)
    await wait_diagnostics(client, uri, has())

    # Refuted (backward under no_grad computes the same gradients): no edit, and the why.
    uri = open_doc(client, tmp_path / "refuted.py", SL102_SRC)
    (diag,) = await wait_diagnostics(client, uri, has("SL102"))
    [checked] = _verify_actions(await actions_at(client, uri, diag))
    resolved = await asyncio.wait_for(client.code_action_resolve_async(checked), VERIFY_WAIT)
    assert not (resolved.edit and resolved.edit.changes), resolved.edit
    assert any("SL102 fix not applied: the verifier did not confirm the finding (refuted" in m.message
               for m in client.messages), client.messages

    # Stale: the document changed after the action was offered -> no edit, nothing run.
    uri = open_doc(client, tmp_path / "stale.py", SL101_SRC)
    (diag,) = await wait_diagnostics(client, uri, has("SL101"))
    [checked] = _verify_actions(await actions_at(client, uri, diag))
    change_doc(client, uri, SL101_SRC + "print('edited')\n", 2)
    await wait_diagnostics(client, uri, has("SL101"))
    await asyncio.sleep(0.5)
    resolved = await asyncio.wait_for(client.code_action_resolve_async(checked), TIMEOUT)
    assert not (resolved.edit and resolved.edit.changes)
    assert any("the document changed since the action was offered" in m.message for m in client.messages)


HELPER_STEP = """import torch.nn.functional as F


def train_step(model, opt, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""
CALLER = """import torch
from helper_step import train_step

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
{call}
"""


async def test_editing_a_caller_relints_the_open_module_it_calls(client: LanguageClient, tmp_path: Path):
    # (issue 40: a function's entry state comes from its calls in other files; the
    # caller's unsaved buffer decides the callee's diagnostics)
    helper = open_doc(client, tmp_path / "helper_step.py", HELPER_STEP)
    caller = open_doc(client, tmp_path / "run_steps.py", CALLER.format(call="train_step(model, opt, torch.randn(2, 4), torch.randn(2, 1))"))
    await wait_diagnostics(client, helper, has())
    change_doc(client, caller, CALLER.format(call="with torch.no_grad():\n    train_step(model, opt, torch.randn(2, 4), torch.randn(2, 1))"), 2)
    diags = await wait_diagnostics(client, helper, has("SL101"))
    assert diags[0].range.start.line == 5 and "run_steps.py:7" in diags[0].message
