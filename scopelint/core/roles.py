"""Roles of names, inferred from how they are spelled, made and used.

Kept deliberately small and conservative: a role is only claimed when the code makes
it plain (a name put in ``.eval()``, ``self(...)`` inside a module class, a name that
reads as a model).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Iterable, Optional

from scopelint.core.flow import CallFact, FunctionInfo

_MODEL_WORDS = re.compile(
    r"(^|_)(model|net|network|module|encoder|decoder|classifier|backbone|generator|"
    r"discriminator|policy|critic|actor|transformer|resnet|bert|gpt|unet|vae|lm)s?\d*$|"
    r"^(g|d|netg|netd|gen|disc|clf)$",
    re.IGNORECASE,
)

DEFAULT_INFERENCE_FUNCTIONS = (
    "predict*", "infer*", "evaluate*", "eval*", "valid*", "validation_step",
    "test_step", "predict_step", "generate*",
)


def is_model_call(call: CallFact) -> bool:
    """``model(x)``, ``self.net(x)``, ``self(x)`` in a class, a name put in ``.eval()``."""
    if call.qname is not None:
        return False
    callee = call.callee
    if callee is None:
        return False
    if call.method in ("forward", "hybrid_forward"):
        callee = callee.rsplit(".", 1)[0]
    elif call.method is not None and not _MODEL_WORDS.search(callee.rsplit(".", 1)[-1]):
        return callee in call.in_eval
    if callee in call.in_eval:
        return True
    if callee == "self":
        return call.func is not None and call.func.cls is not None
    last = callee.rsplit(".", 1)[-1]
    return bool(_MODEL_WORDS.search(last))


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def method_owner(func: Optional[FunctionInfo]) -> Optional[FunctionInfo]:
    while func is not None and func.parent is not None:
        func = func.parent
    return func
