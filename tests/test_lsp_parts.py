"""The language server's parts, each on its own (tests/test_lsp.py drives the whole
server over stdio): pure text helpers and settings without pygls; diagnostics and code
actions against a stand-in for the server, with no protocol or event loop."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scopelint.engine import Settings
from scopelint.finding import syntax_finding
from scopelint.lsp.documents import ClientSettings, Limits, SettingsCache, overlaps
from scopelint.lsp.text import DocText, add_noqa, minimal_change, noqa_in

SL107 = "import torch\n\nmodel = torch.nn.Linear(3, 1)\nwith torch.no_grad:\n    out = model(torch.ones(2, 3))\n"


# -- text (pure) -----------------------------------------------------------------------------
def test_positions_count_utf16_units_and_only_lsp_line_breaks():
    dt = DocText("a\U0001F600b\r\nc\x0cd\n")
    assert dt.position(3) == (0, 4)  # the emoji is two UTF-16 units
    assert DocText(dt.text, "utf-32").position(3) == (0, 3)
    assert dt.position(5) == (1, 0) and dt.line_end(0) == 3
    assert dt.starts == [0, 5, 9]  # a form feed does not end a line
    assert dt.offset_of(1, 2) == 7 and dt.offset(2, 3) == 7


def test_minimal_change_and_noqa():
    assert minimal_change("with torch.no_grad:\n", "with torch.no_grad():\n") == (18, 18, "()")
    assert add_noqa("x = 1  # noqa: SL101", "SL107") == "x = 1  # noqa: SL101, SL107"
    assert add_noqa("x = 1  # noqa", "SL107") is None
    f = syntax_finding("t.py", "m", 4, 1)
    f.code = "SL107"
    assert noqa_in(SL107, f).splitlines()[3] == "with torch.no_grad:  # noqa: SL107"
    inside = 'x = """\nwith\n"""\n'
    g = syntax_finding("t.py", "m", 2, 1)
    assert noqa_in(inside, g) is None  # the line ends inside a string
    assert overlaps(((1, 0), (1, 4)), ((1, 4), (2, 0))) and not overlaps(((1, 0), (1, 3)), ((1, 4), (2, 0)))


# -- documents: settings ---------------------------------------------------------------------
def test_settings_are_read_again_when_a_pyproject_changes(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.scopelint]\nselect = ["SL101"]\n')
    doc = tmp_path / "pkg" / "a.py"
    doc.parent.mkdir()
    cache = SettingsCache()
    assert cache.settings_for(doc).select == ("SL101",)
    (tmp_path / "pyproject.toml").write_text('[tool.scopelint]\nselect = ["SL107", "SL101"]\n')
    assert set(cache.settings_for(doc).select) == {"SL101", "SL107"}


def test_client_settings_lay_over_the_pyproject_settings(tmp_path):
    """The editor's select/ignore/severity/configuration, as the command line's options."""
    (tmp_path / "pyproject.toml").write_text('[tool.scopelint]\nignore = ["SL101"]\nseverity = { SL103 = "info" }\n')
    (tmp_path / "other.toml").write_text('[tool.scopelint]\nselect = ["SL2"]\n')
    doc = tmp_path / "a.py"
    client = ClientSettings()
    assert client.update({"scopelint": {"ignore": ["SL107"], "severity": {"SL102": "warning"}}}) == []
    cache = SettingsCache(client.overrides())
    settings = cache.settings_for(doc)
    assert "SL101" not in settings.select and "SL107" not in settings.select and "SL102" in settings.select
    assert dict(settings.severity) == {"SL102": "warning"}  # replaces the file's table, as --config does
    # A key given replaces its value, one not given keeps it, null unsets it.
    assert client.update({"select": ["SL10"], "severity": None}, "settings") == []
    cache.invalidate(client.overrides())
    settings = cache.settings_for(doc)
    assert set(settings.select) == {f"SL10{i}" for i in range(1, 9)} - {"SL101", "SL107"}  # as --select: both ignores stay
    assert dict(settings.severity) == {"SL103": "info"}
    # configuration: this file instead of the nearest pyproject.toml (relative to the root).
    assert client.update({"select": None, "ignore": None, "configuration": "other.toml"}, root=str(tmp_path)) == []
    assert client.values["configuration"] == str(tmp_path / "other.toml")
    cache.invalidate(client.overrides())
    assert all(c.startswith("SL2") for c in cache.settings_for(doc).select)
    assert cache.settings_for(doc).select


def test_client_settings_complain_and_keep_what_they_had(tmp_path):
    client = ClientSettings()
    assert client.update({"select": ["SL1"]}) == []
    bad = client.update({"select": ["SL999"], "ignore": "SL101", "severity": {"SL107": "loud"},
                         "configuration": "missing.toml"}, "settings", str(tmp_path))
    assert bad[0].startswith("settings.select: unknown rule code or prefix `SL999`")
    assert bad[1:] == [
        "settings.ignore must be a list of codes, not 'SL101'",
        "settings.severity: severity of `SL107` must be one of error, warning, info, not `loud`",
        f"settings.configuration: no such file: {tmp_path / 'missing.toml'}",
    ]
    assert client.values == {"select": ["SL1"]}
    (tmp_path / "broken.toml").write_text('[tool.scopelint]\nselekt = ["SL1"]\n')
    [complaint] = client.update({"configuration": str(tmp_path / "broken.toml")})
    assert "unknown key `selekt`" in complaint and "configuration" not in client.values
    assert client.update("not options") == [] and client.update(None) == []


# -- diagnostics and actions against a stand-in server ----------------------------------------
pytest.importorskip("lsprotocol", reason="the language server needs pygls (pip install 'scopelint[lsp]')")
from lsprotocol import types  # noqa: E402

from scopelint.lsp import actions, diagnostics  # noqa: E402


class FakeServer:
    """What the parts ask of ``scopelint.lsp.server.Server``, with documents in a dict."""

    def __init__(self, docs):
        self.docs = {uri: SimpleNamespace(source=text, version=1, language_id="python") for uri, text in docs.items()}
        self.workspace = SimpleNamespace(
            text_documents=self.docs,
            notebook_documents={},
            get_text_document=lambda uri: self.docs[uri],
            get_notebook_document=lambda **kw: None,
        )
        self.linted, self.by_uri, self.pending, self.published, self.errors = {}, {}, {}, [], []
        self.limits = Limits()

    def path_of(self, uri):
        return "/nowhere/" + uri.rsplit("/", 1)[-1]

    def settings_for(self, path):
        return Settings()

    def encoding(self):
        return "utf-16"

    def log_errors(self, errors):
        self.errors.extend(errors)

    def publish(self, uri, items, version=None):
        self.by_uri[uri] = items
        self.published.append((uri, version, [i.diagnostic.code for i in items]))

    def schedule(self, key, fn, delay):
        fn(self, key)

    def busy(self, key):
        return False

    def submit(self, key, job, done, too_slow=None):  # the real server: on its lint worker
        fn, args = job
        done(fn(*args))


def test_lint_document_publishes_diagnostics_with_lsp_ranges():
    ls = FakeServer({"file:///w/a.py": SL107, "file:///w/notes.txt": SL107})
    diagnostics.lint_document(ls, "file:///w/a.py")
    assert ls.published == [("file:///w/a.py", 1, ["SL107"])]
    d = ls.by_uri["file:///w/a.py"][0].diagnostic
    assert (d.range.start.line, d.range.start.character, d.source) == (3, 5, "scopelint")
    assert d.severity == types.DiagnosticSeverity.Error and d.data == {"fixable": True}
    ls.docs["file:///w/notes.txt"].language_id = "plaintext"
    diagnostics.lint_document(ls, "file:///w/notes.txt")  # not a Python document: left alone
    assert len(ls.published) == 1


def test_code_actions_and_hover_on_their_own():
    ls = FakeServer({"file:///w/a.py": SL107})
    everything = types.Range(types.Position(0, 0), types.Position(9, 0))
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri="file:///w/a.py"),
        range=everything,
        context=types.CodeActionContext(diagnostics=[]),
    )
    got = actions.code_actions(ls, params)  # lints first: the document was never linted
    assert [a.title for a in got] == [
        "SL107: Call the context manager: add `()`",
        "Disable SL107 for this line",
        "scopelint: fix all auto-fixable problems",
    ]
    (fix,) = got[0].edit.changes["file:///w/a.py"]
    assert fix.new_text == "torch.no_grad()" and (fix.range.start.line, fix.range.start.character) == (3, 5)
    (fix_all,) = got[2].edit.changes["file:///w/a.py"]
    assert fix_all.new_text == "()"
    hover = actions.hover(ls, types.HoverParams(types.TextDocumentIdentifier("file:///w/a.py"), types.Position(3, 8)))
    assert hover.contents.value.startswith("**SL107** `grad-context-not-called`")
    assert actions.hover(ls, types.HoverParams(types.TextDocumentIdentifier("file:///w/a.py"), types.Position(0, 0))) is None


# -- the lint worker and the limits (pure) ------------------------------------------------------
def test_worker_keeps_only_the_newest_job_per_document():
    import threading

    from scopelint.lsp.worker import Worker

    started, release, delivered = threading.Event(), threading.Event(), []
    all_done = threading.Event()

    def slow(name):
        started.set()
        release.wait(30)
        return name

    def deliver(result, error):
        delivered.append((result, error))
        if len(delivered) in (2, 3):
            all_done.set()

    w = Worker()
    w.submit("a.py", (slow, ("v1",)), 0, deliver)
    assert started.wait(30)  # v1 runs: it cannot be stopped
    w.submit("a.py", (str, ("v2",)), 0, deliver)
    w.submit("a.py", (str, ("v3",)), 0, deliver)  # replaces v2, which never runs
    assert w.queued("a.py")
    release.set()
    assert all_done.wait(30)
    assert delivered == [("v1", None), ("v3", None)]
    all_done.clear()
    w.submit("b.py", (int, ("x",)), 0, deliver)  # a failing job: delivered with its error
    assert all_done.wait(30)
    assert delivered[2][0] is None and isinstance(delivered[2][1], ValueError)
    w.stop(timeout=5)


def test_process_runner_stops_a_slow_job_and_leaves_no_semaphore_nor_child(monkeypatch):
    """The lint child: results and errors come back, a job over its budget ends the child
    (the next job gets a new one), a child dying during a job is an error (one that died
    between jobs is replaced), and no named semaphore is
    made (multiprocessing's resource tracker warned at exit about the pool's)."""
    import os
    import signal
    import time
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import synchronize

    from scopelint.lsp.worker import ProcessRunner, TooSlow

    made = []
    original = synchronize.SemLock.__init__

    def counting(self, *args, **kwargs):
        made.append(args)
        original(self, *args, **kwargs)

    monkeypatch.setattr(synchronize.SemLock, "__init__", counting)
    runner = ProcessRunner()
    try:
        assert runner((sum, ([1, 2, 3],)), 30) == 6
        with pytest.raises(ValueError):
            runner((int, ("x",)), 30)
        first = runner((os.getpid, ()), 30)
        with pytest.raises(TooSlow):
            runner((time.sleep, (30,)), 0.5)
        with pytest.raises(ProcessLookupError):  # killed and reaped
            os.kill(first, 0)
        second = runner((os.getpid, ()), 30)
        assert second != first
        with pytest.raises(BrokenProcessPool):  # the child dies during a job: an error
            runner((os.kill, (second, signal.SIGKILL)), 30)
        third = runner((os.getpid, ()), 30)  # (and a new child again)
        assert third != second
        os.kill(third, signal.SIGKILL)  # one that died between jobs is replaced, no error
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(third, 0)
            except ProcessLookupError:
                break
            if runner._child[0].exitcode is not None:
                break
            time.sleep(0.01)
        assert runner((str, (5,)), 30) == "5"
    finally:
        runner.close()
    assert made == []


def test_limits():
    limits = Limits()
    assert limits.exceeded("x = 1\n" * 100) is None
    assert limits.update({"scopelint": {"maxLines": 10, "maxSeconds": 2.5}}) == []
    assert (limits.max_lines, limits.max_seconds) == (10, 2.5)
    assert limits.exceeded("x\n" * 20) == "scopelint: document too large to analyse (21 lines > limit 10)"
    assert limits.update({"maxLines": -1, "maxChars": True, "maxSeconds": "soon"}) == [
        "initializationOptions.maxLines must be a whole number >= 0, not -1",
        "initializationOptions.maxChars must be a whole number >= 0, not True",
        "initializationOptions.maxSeconds must be a number >= 0, not 'soon'",
    ]
    assert limits.max_lines == 10  # kept
    assert limits.update(None) == [] and limits.update({"maxLines": 0}) == [] and limits.exceeded("x\n" * 99999) is None
    assert limits.update({"maxSeconds": -2}, "settings") == ["settings.maxSeconds must be a number >= 0, not -2"]


def test_verify_fixes_option():
    limits = Limits()
    assert limits.verify_fixes is False  # it runs the program: off unless asked for
    assert limits.update({"scopelint": {"verifyFixes": True}}) == [] and limits.verify_fixes is True
    assert limits.update({"verifyFixes": "yes"}) == ["initializationOptions.verifyFixes must be true or false, not 'yes'"]
    assert limits.verify_fixes is True  # kept
