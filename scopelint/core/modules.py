"""Module names: the absolute module a relative import names. Plain text, no syntax
nodes and no LibCST, so the project layer reads it in runs that parse nothing."""

from __future__ import annotations

from typing import Optional


def relative_module(package: Optional[str], level: int, module: Optional[str]) -> Optional[str]:
    """The absolute module ``from <level dots><module> import x`` names in ``package``
    (``""``: a top-level module); None if unknown, or beyond the top package (where
    Python raises ImportError). The one resolution, for the analysis and the project layer."""
    if not package:
        return None
    parts = package.split(".")
    if level - 1 >= len(parts):
        return None
    return ".".join(parts[: len(parts) - (level - 1)] + ([module] if module else []))
