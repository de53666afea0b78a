"""The rule catalog: one module per rule (installed as ``scopelint.rules``).

Each ``slNNN_<name>.py`` module defines ``RULE``, a ``scopelint.rule.Rule`` subclass.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, Type

from scopelint.rule import Rule


def _load() -> Dict[str, Type[Rule]]:
    rules: Dict[str, Type[Rule]] = {}
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("sl"))
    for mod_name in names:
        rule = importlib.import_module(f"{__name__}.{mod_name}").RULE
        rules[rule.code] = rule
    return dict(sorted(rules.items()))


ALL_RULES: Dict[str, Type[Rule]] = _load()
