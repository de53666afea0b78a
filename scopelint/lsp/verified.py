"""The opt-in "Fix and verify" code action: the fix of a finding, offered as an edit
only once the runtime verifier confirmed the finding and the fixed program ran.

It runs the user's program (twice: as written and with the fix, in the verifier's
sandbox), so it is off unless the client asks for it (``initializationOptions``:
``{"verifyFixes": true}``), and it is offered only to clients that resolve a code
action's edit later (``codeAction/resolve``): the verification runs when the action is
chosen, never while the editor asks for actions at each move of the cursor. The
verdict is shown (``window/showMessage``) whatever it is; a refuted or inconclusive
finding resolves to an empty edit and the message says why.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Optional

from lsprotocol import types

from scopelint.lsp.documents import open_document

log = logging.getLogger("scopelint.lsp")
KEY = "verifyFix"  # in a "Fix and verify" action's data


def offer(ls, uri: str, item, kind: Optional[str], resolvable: bool) -> Optional[types.CodeAction]:
    """The action for ``item`` (no edit yet), when the user opted in and it can be run:
    a Python document (the verifier runs no notebook), a client that resolves edits."""
    f = item.finding
    if not ls.limits.verify_fixes or f.fix is None or kind != "python" or not resolvable:
        return None
    linted = ls.linted.get(uri)
    return types.CodeAction(
        title=f"{f.code}: Fix and verify: {f.fix.message}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[item.diagnostic],
        data={KEY: {"uri": uri, "code": f.code, "start": list(f.start), "end": list(f.end),
                    "version": getattr(linted, "version", None)}},
    )


def asked(action: types.CodeAction) -> Optional[dict]:
    data = action.data if isinstance(action.data, dict) else {}
    want = data.get(KEY)
    return want if isinstance(want, dict) and isinstance(want.get("uri"), str) else None


async def resolve(ls, action: types.CodeAction, want: dict, fix_edit) -> types.CodeAction:
    """Verify the finding the action names, in the document's current text; the fix's
    edit (``fix_edit(ls, item)``) only when confirmed and the text is unchanged since."""
    action.edit = types.WorkspaceEdit(changes={})
    uri = want["uri"]
    doc = open_document(ls, uri)
    linted = ls.linted.get(uri)
    item = None
    if doc is not None and linted is not None and linted.version == doc.version == want.get("version"):
        item = next((i for i in linted.items if i.finding.code == want.get("code") and list(i.finding.start) == want.get("start")
                     and list(i.finding.end) == want.get("end") and i.finding.fix is not None), None)
    if item is None:
        _say(ls, "scopelint: fix not verified: the document changed since the action was offered; ask again", types.MessageType.Warning)
        return action
    text, path = doc.source, ls.path_of(uri)
    from scopelint.runtime_check.editor import verify_finding

    try:
        runtime = await asyncio.get_running_loop().run_in_executor(None, verify_finding, text, path, item.finding)
    except Exception as exc:  # the verifier itself failed: no edit, and say so
        log.exception("verifying %s", uri)
        _say(ls, f"scopelint: fix not applied: the verifier failed ({exc})", types.MessageType.Error)
        return action
    verdict = f"{runtime.get('verdict')}: {runtime.get('detail')}"
    current = open_document(ls, uri)
    if not runtime.get("apply"):
        _say(ls, f"scopelint: {item.finding.code} fix not applied: the verifier did not confirm the finding ({verdict})", types.MessageType.Warning)
    elif current is None or current.source != text:
        _say(ls, f"scopelint: {item.finding.code} verified ({verdict}), but the document changed meanwhile; ask again", types.MessageType.Warning)
    else:
        action.edit = fix_edit(ls, item) or action.edit
        _say(ls, f"scopelint: {item.finding.code} fix verified ({verdict})", types.MessageType.Info)
    return action


def _say(ls, message: str, kind) -> None:
    try:
        ls.window_show_message(types.ShowMessageParams(type=kind, message=message))
    except Exception as exc:
        log.warning("cannot show %r: %s", message, exc)
