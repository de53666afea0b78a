"""scopelint on the other Python versions it declares (``requires-python = ">=3.9"``):
``scripts/smoke_interpreters.py`` fetches each interpreter from Debian's archive, makes
a venv with scopelint in it and checks that ``scopelint check`` finds on ``fixtures/``
and ``demo/`` exactly what this interpreter finds (issue 22: 3.9 gave an internal error
on every file).

One test per version from 3.9 to 3.13 other than this interpreter's. A version that
cannot be had is skipped with the reason (no registry ships it, no network, not Debian
amd64); a version that can be had and misbehaves fails.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "smoke_interpreters.py"
_spec = importlib.util.spec_from_file_location("smoke_interpreters", _SCRIPT)
smoke = importlib.util.module_from_spec(_spec)
sys.modules["smoke_interpreters"] = smoke  # (dataclasses look their module up)
_spec.loader.exec_module(smoke)

VERSIONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]
HERE = "%d.%d" % sys.version_info[:2]


def test_every_declared_version_is_smoked_or_said_unavailable():
    """No version is left out silently: each one is fetched or has its reason."""
    for version in VERSIONS:
        if version != HERE:
            assert (version in smoke.SOURCES) != (version in smoke.UNAVAILABLE), version


@pytest.mark.parametrize("version", VERSIONS)
def test_check_finds_the_same_on(version, tmp_path):
    if version == HERE:
        pytest.skip(f"Python {version} runs this suite (the reference)")
    try:
        print(smoke.smoke(version, tmp_path))
    except smoke.Unavailable as exc:
        pytest.skip(f"Python {version} cannot be had here: {exc}")
    except smoke.SmokeFailure as exc:
        pytest.fail(str(exc))


def test_compare_sees_a_difference_and_an_internal_error():
    """The comparison itself: equal runs pass; a missing finding, an internal error or
    another exit status fails."""
    finding = {"filename": "/r/a.py", "location": {"row": 2, "column": 6}, "code": "SL107", "message": "m"}
    other = dict(finding, code="SL101")
    ok = (1, [finding, other], "")
    assert "2 findings, equal" in smoke.compare("3.9", ok, (1, [finding, other], ""))
    with pytest.raises(smoke.SmokeFailure, match=r"missing \[\('/r/a.py', 2, 6, 'SL101'\)\]"):
        smoke.compare("3.9", ok, (1, [finding], ""))
    with pytest.raises(smoke.SmokeFailure, match="same positions and codes"):
        smoke.compare("3.9", ok, (1, [finding, dict(other, message="changed")], ""))
    with pytest.raises(smoke.SmokeFailure, match="exit 2"):
        smoke.compare("3.9", ok, (2, [], "scopelint: error: a.py: internal error: AttributeError"))
    with pytest.raises(smoke.SmokeFailure, match="internal error"):
        smoke.compare("3.9", ok, (1, [finding, other], "scopelint: error: b.py: internal error: X"))


def test_the_debian_archive_is_read_from_apts_sources(tmp_path):
    """The archive's address is the machine's own apt's (none is written in the script)."""
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
        "Components: main\n\nTypes: deb\n# a comment: here\nURIs: http://mirror.example/debian/\n"
        "Suites: bookworm bookworm-updates\nComponents: main\nSigned-By: /k/debian.gpg\n"
    )
    (tmp_path / "sources.list.d" / "other.list").write_text("deb https://apt.example/node nodistro main\n")
    assert smoke.debian_archive(tmp_path) == ("http://mirror.example/debian", "/k/debian.gpg")
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text("deb [arch=amd64] http://old.example/debian bullseye main  # old style\n")
    assert smoke.debian_archive(tmp_path) == ("http://old.example/debian", smoke.KEYRING)
    (tmp_path / "sources.list").write_text("deb http://old.example/debian-security bullseye-security main\n")
    with pytest.raises(smoke.Unavailable, match="no Debian archive"):
        smoke.debian_archive(tmp_path)
