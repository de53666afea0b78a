"""The rule catalog: one module per rule (installed as ``scopelint.rules``).

Each ``slNNN_<name>.py`` module defines ``RULE``, a ``scopelint.rule.Rule`` subclass.
The catalog knows the codes from the module names and imports a rule (and LibCST) only
when it is looked up, so that runs that parse nothing (a warm cache, a file no rule can
fire in) start fast.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Dict, Iterator, Mapping, Type

if TYPE_CHECKING:
    from scopelint.rule import Rule


class _Catalog(Mapping):
    def __init__(self) -> None:
        modules = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("sl"))
        self._modules: Dict[str, str] = {name.split("_", 1)[0].upper(): name for name in modules}
        self._loaded: Dict[str, Type["Rule"]] = {}

    def __getitem__(self, code: str) -> Type["Rule"]:
        rule = self._loaded.get(code)
        if rule is None:
            rule = importlib.import_module(f"{__name__}.{self._modules[code]}").RULE
            if rule.code != code:
                raise ImportError(f"{self._modules[code]} defines {rule.code}, not {code}")
            self._loaded[code] = rule
        return rule

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __contains__(self, code: object) -> bool:
        return code in self._modules


# Rules that run only when selected by code, prefix or ``ALL`` (``Rule.default`` False),
# as ruff's RUF100: named here so that the default selection imports no rule.
OPT_IN = frozenset({"SL001"})
ALL_RULES: Mapping[str, Type["Rule"]] = _Catalog()
