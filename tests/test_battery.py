"""``benchmarks/battery.py`` (issue 24's reliability battery) runs, in its cheap areas and
small, and finds nothing: every area tried something and nothing failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_battery_quick_cheap_areas(tmp_path):
    out = tmp_path / "battery.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "battery.py"), "--quick", "--areas", "fuzz,bad_input,cache,honest",
         "--fuzz", "40", "--bad-input-max", "12", "--truncations", "100", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert out.is_file(), proc.stderr[-3000:]
    report = json.loads(out.read_text())
    areas = {a["area"]: a for a in report["areas"]}
    assert set(areas) == {"fuzz", "bad_input", "cache", "honest"}
    for name, area in areas.items():
        assert area["tried"] > 0, (name, area)
        assert area["failed"] == 0, (name, area["details"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| area | tried | failed | notes |" in proc.stdout
    assert out.with_suffix(".md").read_text().count("\n| ") == 5  # the header and four rows
