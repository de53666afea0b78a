"""Fixtures are real programs: each bad one, executed, shows the effect RULES.md names
(declared in its `# effect:` header); each good one runs cleanly."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from fixtures_util import all_fixtures, declared_effect, frameworks_of, is_bad

pytestmark = pytest.mark.frameworks


def _missing(fws):
    return [fw for fw in sorted(fws) if importlib.util.find_spec(fw) is None]


@pytest.mark.parametrize("path", all_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_runs(path, tmp_path):
    fws = frameworks_of(path)
    missing = _missing(fws)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    env = dict(os.environ, PYTHONHASHSEED="0", MXNET_ENGINE_TYPE="NaiveEngine", OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=180, env=env,
        stdin=subprocess.DEVNULL,
    )
    if not is_bad(path):
        assert proc.returncode == 0, proc.stderr[-2000:]
        return
    effect = declared_effect(path)
    assert effect is not None, "a bad fixture declares `# effect: raises ...` or `# effect: prints ...`"
    kind, text = effect
    if kind == "raises":
        assert proc.returncode != 0, f"expected it to raise {text}; stdout:\n{proc.stdout[-1000:]}"
        exc_name, _, fragment = text.partition(":")
        assert exc_name.strip() in proc.stderr, proc.stderr[-2000:]
        assert fragment.strip() in proc.stderr, proc.stderr[-2000:]
    else:
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert text in proc.stdout, f"expected output {text!r}; got:\n{proc.stdout[-1000:]}"
