"""How a call's arguments bind the callee's parameters: one home for the mapping both
ways (parameter -> argument, argument -> parameter) and for spelling a callee's names
as its caller spells them.

Where ``*args`` or ``**kwargs`` hide which parameter an argument sets, nothing is
bound: the answer is unknown (None), never a guess by position.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import libcst as cst

from scopelint.core.names import dotted
from scopelint.core.syntax import literal_bool

SELF_NAMES = ("self", "cls")
# What a runner's ``*args``/``**kwargs`` collect at a call, as the keys of extra argument
# values (``flow.Analyzer._collected``): the ``i``-th positional argument past its named
# parameters, a keyword it does not name, and the shape of both.
FWD_ARG = "\0fwd:arg:"
FWD_KW = "\0fwd:kw:"
FWD_SHAPE = "\0fwd:shape:"
# The methods that calling an instance runs (``net(x)``: its ``forward``).
CALL_METHODS = ("forward", "hybrid_forward", "__call__")


def bind(call: cst.Call, params: Sequence[str]) -> Optional[Dict[str, cst.Arg]]:
    """Parameter name -> the argument of ``call`` that sets it (``params``: the ones its
    arguments bind, in order: see ``method_params``/``bound_params``). A keyword argument
    is bound by its keyword even where ``params`` does not name it (``**kwargs``). None
    where a ``*``/``**`` argument hides which parameters the others set."""
    out: Dict[str, cst.Arg] = {}
    position = 0
    for a in call.args:
        if a.star:
            return None
        if a.keyword is not None:
            out[a.keyword.value] = a
        else:
            if position < len(params):
                out[params[position]] = a
            position += 1
    return out


def method_params(call: cst.Call, params: Sequence[str]) -> List[str]:
    """``params`` without a method's ``self``/``cls`` when ``call`` is ``obj.m(...)``."""
    params = list(params)
    if type(call.func) is cst.Attribute and params and params[0] in SELF_NAMES:
        return params[1:]
    return params


def bound_params(call: cst.Call, target) -> List[str]:
    """The parameters of ``target`` (a ``FunctionInfo``) that the arguments of ``call``
    bind, in order: a method's ``self`` is bound by its instance when it is called
    through one (``obj.m(x)``, and ``net(x)`` for ``forward``)."""
    params = list(target.param_names)
    if params and params[0] in SELF_NAMES and target.cls is not None and target.parent is None and (
            type(call.func) is cst.Attribute or target.name in CALL_METHODS):
        return params[1:]
    return params


def forward_params(func) -> List[str]:
    """The parameters of a model's ``forward`` (a ``FunctionInfo``) that ``net(x)``'s
    arguments bind: without ``self``."""
    params = list(func.param_names)
    return params[1:] if params and params[0] in SELF_NAMES else params


def argument_for(call: cst.Call, params: Sequence[str], name: str) -> Optional[cst.Arg]:
    """The argument of ``call`` bound to parameter ``name`` (``params`` in order;
    ``self``/``cls`` skipped on a method call: ``method_params``)."""
    bound = bind(call, method_params(call, params))
    return bound.get(name) if bound is not None else None


def parameter_of(call: cst.Call, params: Sequence[str], index: int) -> Optional[str]:
    """The parameter that ``call.args[index]`` sets (``params``: the bound ones, in
    order), or, for a positional argument past them, the key of what ``*args`` collects
    of it (``FWD_ARG``; whether the callee has ``*args`` is for that key to find); None
    where that is not known."""
    bound = bind(call, params)
    if bound is None:
        return None
    arg = call.args[index]
    found = next((p for p, a in bound.items() if a is arg), None)
    if found is None and arg.keyword is None:
        position = sum(1 for a in call.args[:index] if a.keyword is None)
        if position >= len(params):
            return f"{FWD_ARG}{position - len(params)}"
    return found


INSTANCE_CALL = "instance"  # ``spelled_at_call``'s ``method`` for ``model(x)``: the instance called, its ``forward`` run


def spelled_at_call(call: cst.Call, params: Sequence[str], method, name: str) -> Optional[str]:
    """A name of a function with these ``params`` (``method``: of a class, called as
    ``obj.m(...)``, or ``INSTANCE_CALL``: its ``forward``, run by calling the instance
    ``obj(...)``), rooted at a parameter, as the ``call`` spells it: a parameter
    through its argument (positional or by keyword), ``self`` through the receiver
    (``model.val_start()``: ``self.enc`` is ``model.enc``); a global as it is. None where
    the call does not name it (an argument or a receiver that is no dotted name, or
    arguments that ``*``/``**`` hide)."""
    params = list(params)
    root, _, rest = name.partition(".")
    if method and params and params[0] in SELF_NAMES:
        if root == params[0]:
            if method == INSTANCE_CALL:  # ``model(x)`` runs ``model.forward``
                spelled = dotted(call.func)
            elif type(call.func) is not cst.Attribute:
                return None
            else:
                spelled = dotted(call.func.value)
            return spelled + ("." + rest if rest else "") if spelled is not None else None
        params = params[1:]
    if root not in params:
        return name
    bound = bind(call, params)
    arg = bound.get(root) if bound is not None else None
    spelled = dotted(arg.value) if arg is not None else None
    return spelled + ("." + rest if rest else "") if spelled is not None else None


def call_arg(call: cst.Call, index: int, keyword: Optional[str]) -> Optional[cst.Arg]:
    """The argument at positional ``index`` or named ``keyword``."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for a in call.args:
        if keyword and a.keyword is not None and a.keyword.value == keyword:
            return a
    if index is not None and index < len(positional):
        return positional[index]
    return None


def param_default(info, name: str) -> Optional[cst.BaseExpression]:
    """The default of ``info``'s (a ``FunctionInfo``) parameter ``name``, if any."""
    p = info.node.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        if param.name.value == name:
            return param.default
    return None


def requires_grad_off(call: cst.Call) -> bool:
    """``x.requires_grad_(False)``: not a leaf that records."""
    arg = call_arg(call, 0, "requires_grad")
    return arg is not None and literal_bool(arg.value) is False
