"""``python -m scopelint``.

``-m`` puts the working folder first on ``sys.path``: a ``json.py`` (or ``libcst/``,
``torch.py``...) lying there would be imported by scopelint itself, outside the
verifier's sandbox. The package is already imported when this runs, so the working
folder is taken off the path before anything else is imported (as ``python -P`` does).
"""

import os
import sys

if sys.path and not getattr(sys.flags, "safe_path", False):
    try:
        _cwd = os.getcwd()
    except OSError:  # (the working folder was removed)
        _cwd = None
    if sys.path[0] in ("", ".") or (_cwd is not None and os.path.abspath(sys.path[0]) == _cwd):
        del sys.path[0]

from scopelint.cli import run  # noqa: E402

if __name__ == "__main__":
    run()
