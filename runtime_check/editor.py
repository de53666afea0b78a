"""The verifier for an editor's "Fix and verify": verify one finding of a document's
text, as ``check --fix --unsafe-fixes --verify`` verifies each fix (alone).

The language server calls ``verify_finding`` only when its user opted in
(``initializationOptions.verifyFixes``) and chose the action: it runs the program.
"""

from __future__ import annotations

import os
from typing import Optional

from scopelint.runtime_check import DEFAULT_TIMEOUT


def verify_finding(source: str, path: str, finding, timeout: float = DEFAULT_TIMEOUT, device: str = "cpu") -> dict:
    """The verdict on ``finding`` of ``source`` (the document's text; ``path`` where it
    is, or would be, saved: its folder is what the program finds next to it), with
    ``apply``: whether its fix may be applied -- only when the verifier confirmed the
    finding (``confirmed:*``: the fixed program then ran to its end without an error)."""
    from scopelint.runner import FileResult
    from scopelint.runtime_check.verify import verify

    # (an unsaved buffer's folder, where it exists, is still the program's folder)
    where: Optional[str] = path if path and os.path.isdir(os.path.dirname(os.path.abspath(path))) else None
    result = FileResult(path or "untitled.py", where, [finding], source=source)
    verify([result], device, timeout, jobs=2)
    runtime = dict(finding.runtime or {"verdict": "inconclusive", "detail": "not verified", "device": device})
    runtime["apply"] = str(runtime.get("verdict", "")).startswith("confirmed:")
    return runtime
