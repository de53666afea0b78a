"""What the server offers on a document: quick fixes, "Disable SLxxx for this line",
``source.fixAll.scopelint``, the opt-in "Fix and verify" (``verified``), and the
rule's doc on hover."""

from __future__ import annotations

import asyncio
import logging
from typing import Dict, List, Optional, Sequence, Tuple

from lsprotocol import types

from scopelint import notebook
from scopelint.engine import lint_source
from scopelint.finding import SYNTAX_ERROR
from scopelint.fix import apply_edits
from scopelint.lsp.diagnostics import SOURCE, lint_document, lintable, lsp_range
from scopelint.lsp.documents import TOO_LARGE, Item, overlaps, open_document
from scopelint.lsp.notebooks import lint_cell_sources, lint_notebook, notebook_cells, notebook_of_cell
from scopelint.lsp import verified
from scopelint.lsp.text import DocText, minimal_change, noqa_in
from scopelint.rules import ALL_RULES

log = logging.getLogger("scopelint.lsp")
FIX_ALL_KIND = "source.fixAll.scopelint"
FIX_ROUNDS = 8
FRESH_WAIT_S = 60.0  # at most, for a code action on a document whose lint is on its way


def fresh_items(ls, uri: str) -> Tuple[List[Item], bool]:
    """The items shown on ``uri``, and whether they are of the document's current state.
    When they are not, a lint is asked for (unless one is on its way): the answer never
    waits for it, and the client asks again once the new diagnostics are published."""
    key = notebook_of_cell(ls, uri)
    if key is not None:
        doc, fn = ls.workspace.get_notebook_document(notebook_uri=key), lint_notebook
    else:
        key, doc, fn = uri, open_document(ls, uri), lint_document
        if doc is None:
            return [], False

    def fresh() -> bool:
        return key in ls.linted and ls.linted[key].version == doc.version

    if not fresh() and not ls.busy(key):
        ls.schedule(key, fn, 0)
    return ls.by_uri.get(uri, []), fresh()


async def until_fresh(ls, uri: str, timeout: float = FRESH_WAIT_S, poll: float = 0.02) -> None:
    """Wait (yielding to the message loop) until the lint of ``uri``'s current state is
    shown, nothing is on its way, or ``timeout`` seconds passed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    key = notebook_of_cell(ls, uri) or uri
    while True:
        _items, fresh = fresh_items(ls, uri)
        if fresh or not ls.busy(key) or loop.time() > deadline:
            return
        await asyncio.sleep(poll)


# -- edits ------------------------------------------------------------------------------


def text_edit(dt: DocText, start: int, end: int, new_text: str) -> types.TextEdit:
    return types.TextEdit(range=lsp_range(dt.position(start), dt.position(end)), new_text=new_text)


def whole_change(ls, uri: str, old: str, new: str) -> Optional[types.TextEdit]:
    if old == new:
        return None
    start, end, repl = minimal_change(old, new)
    return text_edit(DocText(old, ls.encoding()), start, end, repl)


def workspace_edit(changes: Dict[str, List[types.TextEdit]]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={u: e for u, e in changes.items() if e})


def fix_edit(ls, item: Item) -> Optional[types.WorkspaceEdit]:
    f = item.finding
    text = ls.workspace.get_text_document(item.uri).source
    if lintable(ls, item.uri) == "ipynb":
        new, n = notebook.apply_edits(text, [f], unsafe=True)
        edit = whole_change(ls, item.uri, text, new) if n else None
        return workspace_edit({item.uri: [edit]}) if edit else None
    dt = DocText(text, ls.encoding())
    edits = [text_edit(dt, dt.offset(*e.start), dt.offset(*e.end), e.content) for e in f.fix.edits]
    return workspace_edit({item.uri: edits})


def noqa_edit(ls, item: Item) -> Optional[types.WorkspaceEdit]:
    f = item.finding
    text = ls.workspace.get_text_document(item.uri).source
    if lintable(ls, item.uri) == "ipynb":
        try:
            nb = notebook.load(text)
        except ValueError:
            return None
        src = nb.cell_text(f.cell) if f.cell else ""
        new_src = noqa_in(src, f)
        if new_src is None:
            return None
        try:
            new = notebook.replace_sources(text, {f.cell: new_src})
        except ValueError:
            return None
        edit = whole_change(ls, item.uri, text, new)
        return workspace_edit({item.uri: [edit]}) if edit else None
    new = noqa_in(text, f)
    if new is None:
        return None
    edit = whole_change(ls, item.uri, text, new)
    return workspace_edit({item.uri: [edit]}) if edit else None


# -- fix all ----------------------------------------------------------------------------


def fix_all_source(text: str, path: str, settings, is_nb: bool) -> str:
    """The text with every safe fix applied, in rounds: pure (the lint process runs it)."""
    for _ in range(FIX_ROUNDS):
        if is_nb:
            result = lint_source(text, path, settings, notebook=True)
            new, n = notebook.apply_edits(text, result.findings, False)
        else:
            result = lint_source(text, path, settings)
            new, n = apply_edits(text, result.findings, False)
        if n == 0 or new == text:
            break
        text = new
    return text


def fix_all_cells(path: str, settings, cells) -> Dict[int, str]:
    """Cell number -> new source of a synced notebook's cells: pure (the lint process runs it)."""
    original = {n: src for n, _, src in cells}
    sources = dict(original)
    for _ in range(FIX_ROUNDS):
        findings, _errors = lint_cell_sources(path, settings, [(n, u, sources[n]) for n, u, _ in cells])
        changed = 0
        for n in sources:
            mine = [f for f in findings if f.cell == n and f.fix is not None]
            if not mine:
                continue
            src = sources[n]
            padded = src if src.endswith(("\n", "\r")) else src + "\n"
            new, k = apply_edits(padded, mine, False)
            if padded is not src and new.endswith("\n"):
                new = new[:-1]
            if k and new != src:
                sources[n] = new
                changed += k
        if not changed:
            break
    return {n: s for n, s in sources.items() if s != original[n]}


def fix_all_plan(ls, uri: str):
    """What the fix-all of ``uri`` takes: (job, finish) -- ``job`` (a function and its
    arguments, picklable) computes the fixed text, ``finish(result)`` turns it into a
    WorkspaceEdit on the loop (None if the text changed meanwhile) -- or None."""
    key = notebook_of_cell(ls, uri)
    if key is not None:
        nb = ls.workspace.get_notebook_document(notebook_uri=key)
        if nb is None:
            return None
        cells = notebook_cells(ls, nb)
        path = ls.path_of(key)

        def finish_cells(new_sources: Dict[int, str]) -> Optional[types.WorkspaceEdit]:
            changes = {}
            for n, cell_uri, old in cells:
                new = new_sources.get(n)
                if new is None or new == old:
                    continue
                doc = open_document(ls, cell_uri)
                if doc is None or doc.source != old:  # edited meanwhile: these edits would not fit
                    return None
                edit = whole_change(ls, cell_uri, old, new)
                if edit:
                    changes[cell_uri] = [edit]
            return workspace_edit(changes) if changes else None

        return (fix_all_cells, (path, ls.settings_for(path), cells)), finish_cells
    kind = lintable(ls, uri)
    if kind is None:
        return None
    text, path = ls.workspace.get_text_document(uri).source, ls.path_of(uri)

    def finish(new: str) -> Optional[types.WorkspaceEdit]:
        doc = open_document(ls, uri)
        if doc is None or doc.source != text:
            return None
        edit = whole_change(ls, uri, text, new)
        return workspace_edit({uri: [edit]}) if edit else None

    return (fix_all_source, (text, path, ls.settings_for(path), kind == "ipynb")), finish


def fix_all_edit(ls, uri: str) -> Optional[types.WorkspaceEdit]:
    """The fix-all edit, computed here and now."""
    plan = fix_all_plan(ls, uri)
    if plan is None:
        return None
    (fn, args), finish = plan
    return finish(fn(*args))


async def fix_all_edit_off_loop(ls, uri: str) -> Optional[types.WorkspaceEdit]:
    """The fix-all edit, computed by the lint process (the loop serves other requests)."""
    runner = getattr(getattr(ls, "worker", None), "runner", None)
    if runner is None:
        return fix_all_edit(ls, uri)
    plan = fix_all_plan(ls, uri)
    if plan is None:
        return None
    job, finish = plan
    try:
        result = await asyncio.get_running_loop().run_in_executor(None, runner, job, ls.limits.max_seconds)
    except Exception as exc:  # over the time budget, the lint process died: no fix-all this time
        log.warning("fix all of %s: %r", uri, exc)
        return None
    return finish(result)


# -- requests ---------------------------------------------------------------------------


def quick_actions(ls, params: types.CodeActionParams) -> Tuple[List[types.CodeAction], bool]:
    """The quick fixes and "Disable" actions, and whether fix-all is to be offered."""
    uri = params.text_document.uri
    only = params.context.only

    def wanted(kind: str) -> bool:
        return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)

    items, fresh = fresh_items(ls, uri)
    if not fresh:  # edits made from an older state of the text would break it
        items = []
    actions: List[types.CodeAction] = []
    kind, resolvable = lintable(ls, uri), resolves_edits(ls)
    if wanted(types.CodeActionKind.QuickFix):
        req = ((params.range.start.line, params.range.start.character), (params.range.end.line, params.range.end.character))
        asked = {
            (d.code, (d.range.start.line, d.range.start.character), (d.range.end.line, d.range.end.character))
            for d in params.context.diagnostics
            if d.source == SOURCE
        }
        for item in items:
            f = item.finding
            if not (overlaps(item.range, req) or (f.code, *item.range) in asked):
                continue
            if f.fix is not None:
                edit = fix_edit(ls, item)
                if edit is not None:
                    unsafe = f.fix.applicability != "safe"
                    actions.append(
                        types.CodeAction(
                            title=f"{f.code}: {f.fix.message}" + (" (unsafe)" if unsafe else ""),
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[item.diagnostic],
                            edit=edit,
                            is_preferred=not unsafe,
                        )
                    )
                checked = verified.offer(ls, uri, item, kind, resolvable)
                if checked is not None:
                    actions.append(checked)
            if f.code != SYNTAX_ERROR:
                edit = noqa_edit(ls, item)
                if edit is not None:
                    actions.append(
                        types.CodeAction(
                            title=f"Disable {f.code} for this line",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[item.diagnostic],
                            edit=edit,
                        )
                    )
    fix_all = wanted(FIX_ALL_KIND) and (
        only is not None or any(i.finding.fix is not None and i.finding.fix.applicability == "safe" for i in items)
    )
    return actions, fix_all


def with_fix_all(actions: List[types.CodeAction], edit, only) -> Optional[List[types.CodeAction]]:
    if edit is not None or only is not None:
        actions.append(
            types.CodeAction(
                title="scopelint: fix all auto-fixable problems",
                kind=FIX_ALL_KIND,
                edit=edit or types.WorkspaceEdit(changes={}),
            )
        )
    return actions or None


def code_actions(ls, params: types.CodeActionParams) -> Optional[List[types.CodeAction]]:
    """The code actions, fix-all computed here and now."""
    actions, fix_all = quick_actions(ls, params)
    edit = fix_all_edit(ls, params.text_document.uri) if fix_all else None
    return with_fix_all(actions, edit, params.context.only) if fix_all else (actions or None)


def resolves_edits(ls) -> bool:
    """The client can ask for a code action's edit later (codeAction/resolve)."""
    try:
        support = ls.client_capabilities.text_document.code_action.resolve_support
        return support is not None and "edit" in support.properties
    except AttributeError:
        return False


async def code_actions_off_loop(ls, params: types.CodeActionParams) -> Optional[List[types.CodeAction]]:
    """The code actions, fix-all computed by the lint process. Asked for code actions
    in general (as editors do at every move of the cursor), fix-all is offered without
    its edit where the client can resolve it: computed only when chosen."""
    actions, fix_all = quick_actions(ls, params)
    uri, only = params.text_document.uri, params.context.only
    if fix_all and only is None and resolves_edits(ls):
        actions.append(
            types.CodeAction(title="scopelint: fix all auto-fixable problems", kind=FIX_ALL_KIND, data={"uri": uri})
        )
        return actions
    edit = await fix_all_edit_off_loop(ls, uri) if fix_all else None
    return with_fix_all(actions, edit, only) if fix_all else (actions or None)


async def resolve_code_action(ls, action: types.CodeAction) -> types.CodeAction:
    """codeAction/resolve: the edit of a fix-all offered without one, or of a "Fix and
    verify" (computed once the verifier confirmed the finding)."""
    want = verified.asked(action)
    if want is not None and action.edit is None:
        return await verified.resolve(ls, action, want, fix_edit)
    data = action.data if isinstance(action.data, dict) else {}
    if action.kind == FIX_ALL_KIND and action.edit is None and isinstance(data.get("uri"), str):
        action.edit = await fix_all_edit_off_loop(ls, data["uri"]) or types.WorkspaceEdit(changes={})
    return action


def hover(ls, params: types.HoverParams) -> Optional[types.Hover]:
    uri = params.text_document.uri
    pos = (params.position.line, params.position.character)
    hits = [i for i in fresh_items(ls, uri)[0] if i.range[0] <= pos <= i.range[1]]
    if not hits:
        return None
    codes = list(dict.fromkeys(i.finding.code for i in hits))
    messages = {i.finding.code: i.finding.message for i in hits}
    severities = {i.finding.code: i.finding.severity for i in hits}  # (as configured: `severity = {...}`)
    rng = hits[0].range
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_markdown(codes, messages, severities)),
        range=lsp_range(*rng),
    )


def hover_markdown(codes: Sequence[str], messages: Optional[Dict[str, str]] = None,
                   severities: Optional[Dict[str, str]] = None) -> str:
    """The hover's text; ``severities``: each code's severity in the document's settings
    (the finding's), else the rule's default."""
    parts = []
    for code in codes:
        rule = ALL_RULES.get(code)
        if rule is None:
            message = (messages or {}).get(code, "")
            if message.startswith(TOO_LARGE):
                parts.append(f"**{code}**: {message}; the document was not checked.")
            else:
                parts.append(f"**{code}**: the file cannot be parsed, so it was not checked.")
            continue
        fix = {"safe": "Fix available.", "unsafe": "Fix available (unsafe)."}.get(rule.fixable or "", "")
        url = rule.url()
        severity = (severities or {}).get(code) or rule.severity
        parts.append(
            f"**{rule.code}** `{rule.name}` ({severity})\n\n{rule.summary}\n\n"
            f"**How to fix:** {rule.help} {fix}".rstrip()
            + (f"\n\n[Documentation]({url}) · " if url else "\n\n") + f"`scopelint rule {rule.code}`"
        )
    return "\n\n---\n\n".join(parts)
