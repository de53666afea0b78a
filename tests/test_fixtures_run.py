"""Fixtures are real programs: each bad one, executed, shows the effect RULES.md names
(declared in its `# effect:` header); each good one runs cleanly.

Where oneDNN refuses an operation on this processor (torch 2.13 cannot build its bf16
LSTM primitive on some CPUs), a fixture runs again with oneDNN off (fixtures_util.run_fixture),
as the verifier does; the internal hook _SCOPELINT_FORCE_ONEDNN_ERROR forces that refusal
so the fallback is tested on every machine."""

from __future__ import annotations

import importlib.util
import warnings

import pytest

from fixtures_util import FIXTURES, all_fixtures, declared_effect, frameworks_of, is_bad, onednn_refusal, run_fixture

pytestmark = pytest.mark.frameworks


def _missing(fws):
    return [fw for fw in sorted(fws) if importlib.util.find_spec(fw) is None]


def _check(path, proc, refused):
    how = f" (with oneDNN off: with it on, {refused})" if refused else ""
    if not is_bad(path):
        assert proc.returncode == 0, proc.stderr[-2000:] + how
        return
    effect = declared_effect(path)
    assert effect is not None, "a bad fixture declares `# effect: raises ...` or `# effect: prints ...`"
    kind, text = effect
    if kind == "raises":
        assert proc.returncode != 0, f"expected it to raise {text}{how}; stdout:\n{proc.stdout[-1000:]}"
        exc_name, _, fragment = text.partition(":")
        assert exc_name.strip() in proc.stderr, proc.stderr[-2000:] + how
        assert fragment.strip() in proc.stderr, proc.stderr[-2000:] + how
    else:
        assert proc.returncode == 0, proc.stderr[-2000:] + how
        assert text in proc.stdout, f"expected output {text!r}{how}; got:\n{proc.stdout[-1000:]}"


@pytest.mark.parametrize("path", all_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_runs(path, tmp_path):
    fws = frameworks_of(path)
    missing = _missing(fws)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    proc, refused = run_fixture(path, tmp_path)
    if refused:
        warnings.warn(f"{path.parent.name}/{path.name} ran with oneDNN off: with it on, {refused}")
    _check(path, proc, refused)


# A bf16 LSTM under autocast (what some CPUs refuse) and a float32 one (what they run).
LSTM = [FIXTURES / "SL204" / "good_repackage_hidden.py", FIXTURES / "SL204" / "bad_lstm_tuple_state.py"]


@pytest.mark.parametrize("path", LSTM, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_runs_when_onednn_refuses_lstm(path, tmp_path, monkeypatch):
    from scopelint.runtime_check._child import FORCE_ONEDNN_ENV

    if _missing({"torch"}):
        pytest.skip("needs torch")
    monkeypatch.setenv(FORCE_ONEDNN_ENV, "1")
    proc, refused = run_fixture(path, tmp_path)
    assert refused is not None and refused.startswith("RuntimeError: could not create a primitive descriptor for the LSTM"), refused
    _check(path, proc, refused)


def test_onednn_refusal_is_read_from_the_final_exception():
    tb = "Traceback (most recent call last):\n  File \"p.py\", line 3, in <module>\n    x = lstm(y)\n"
    refused = tb + "RuntimeError: could not create a primitive descriptor for the LSTM forward propagation primitive. Run workload with environment variable ONEDNN_VERBOSE=all\n"
    assert onednn_refusal(1, refused) == refused.splitlines()[-1]
    assert onednn_refusal(0, refused) is None
    assert onednn_refusal(1, tb + "RuntimeError: Trying to backward through the graph a second time\n") is None
    # a oneDNN error handled earlier, then another failure: the final one counts
    assert onednn_refusal(1, refused + "\nDuring handling of the above exception, another exception occurred:\n\n" + tb + "ValueError: bad\n") is None
    mx = "mxnet.base.MXNetError: Traceback (most recent call last):\n  [bt] (0) libmxnet.so\n  File \"src/operator/nn/mkldnn/mkldnn_rnn.cc\", line 1\nMXNetError: could not create a primitive\n"
    assert onednn_refusal(1, mx) == "MXNetError: could not create a primitive"
