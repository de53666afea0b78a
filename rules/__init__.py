"""The rule catalog: one module per rule (installed as ``scopelint.rules``)."""

from __future__ import annotations

import importlib
from typing import Dict, Type

from scopelint.rule import Rule

RULE_MODULES = (
    "sl101_backward_on_untracked_value",
    "sl102_backward_inside_no_grad_scope",
    "sl103_recording_during_inference",
    "sl104_redundant_pause",
    "sl105_no_grad_decorator_on_training_step",
    "sl106_grad_mode_switched_globally",
    "sl107_grad_context_not_called",
    "sl108_inference_tensor_used_in_autograd",
)


def _load() -> Dict[str, Type[Rule]]:
    rules: Dict[str, Type[Rule]] = {}
    for mod_name in RULE_MODULES:
        module = importlib.import_module(f"{__name__}.{mod_name}")
        rule = module.RULE
        rules[rule.code] = rule
    return rules


ALL_RULES: Dict[str, Type[Rule]] = _load()
