"""Reading the fixture corpus: expected findings and declared runtime effects."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

EXPECT = re.compile(r"#\s*expect:\s*(SL\d{3}(?:\s*,\s*SL\d{3})*)")
EFFECT = re.compile(r"^#\s*effect:\s*(raises|prints)\s+(.+?)\s*$", re.MULTILINE)


def all_fixtures() -> List[Path]:
    return sorted(FIXTURES.glob("SL*/*.py"))


def is_bad(path: Path) -> bool:
    return path.name.startswith("bad_")


def expected_findings(path: Path) -> Set[Tuple[int, str]]:
    expected = set()
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            for code in re.split(r"\s*,\s*", m.group(1)):
                expected.add((row, code))
    return expected


def declared_effect(path: Path) -> Optional[Tuple[str, str]]:
    m = EFFECT.search(path.read_text(encoding="utf-8"))
    return (m.group(1), m.group(2)) if m else None


def frameworks_of(path: Path) -> Set[str]:
    text = path.read_text(encoding="utf-8")
    found = set()
    if re.search(r"^\s*(import|from)\s+torch\b", text, re.MULTILINE):
        found.add("torch")
    if re.search(r"^\s*(import|from)\s+mxnet\b", text, re.MULTILINE):
        found.add("mxnet")
    return found
