"""Roles of names, inferred from how they are spelled, made and used.

Kept deliberately small and conservative: a role is only claimed when the code makes
it plain (a name put in ``.eval()``, ``self(...)`` inside a module class, a name that
reads as a model).
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

import libcst as cst

from scopelint.core import frameworks as F
from scopelint.core.arguments import CALL_METHODS
from scopelint.core.frameworks import is_model_constructor
from scopelint.core.facts import CallFact
from scopelint.core.names import dotted
from scopelint.core.syntax import finds, is_nested_scope, walk

DEFAULT_INFERENCE_FUNCTIONS = F.DEFAULT_INFERENCE_FUNCTIONS




def model_called(call: CallFact) -> Optional[str]:
    """The model a forward pass runs, as the call spells it: ``net`` of ``net(x)`` and of
    ``net.forward(x)`` (``self.actor.forward(state)``: ``self.actor``)."""
    callee = call.callee
    if callee and call.method in ("forward", "hybrid_forward") and callee.endswith("." + call.method):
        return callee[: -len(call.method) - 1]
    return callee


def is_model_call(call: CallFact) -> bool:
    """``model(x)``, ``self.net(x)``, ``net.forward(x)``, ``self(x)`` in a model class,
    anything made by a model constructor or put in ``.eval()``."""
    if call.qname is not None or call.callee is None:
        return False
    target = call.target
    if target is not None and target.stateless and target.name in CALL_METHODS:
        return False  # a module that holds nothing: a function of its arguments (its walk says what it runs)
    if target is not None and call.method is not None and call.method == target.name and target.name not in CALL_METHODS \
            and target.cls is not None and target.parent is None:
        # ``self.benchmark_compiled_module(out)``: a method of this file's class, whatever
        # its name says; its own calls are what it runs
        return False
    callee = call.callee
    if call.method in ("forward", "hybrid_forward"):
        callee = callee[: -len(call.method) - 1]
    if made_model(call.callee_value):
        return True
    if callee in call.in_eval:
        return True
    if callee == "self":
        return call.func is not None and call.func.in_model_class
    # By name, only where a name can hold a model: ``model(x)``, ``self.encoder(x)``.
    # ``writer.generator(...)`` or ``gm.modules()`` are methods, not forward passes.
    parts = callee.split(".")
    if len(parts) == 1 and _parameter_defaults_to_function(call.func, callee):
        return False  # ``decoder=decode_spec_tokens``: a function handed in, not a model
    if len(parts) == 1 or (len(parts) == 2 and parts[0] == "self"):
        # ``self.save_model()``, ``_wrap_model(m)``, ``is_fsdp_managed_module(m)`` act on
        # a model; they are no model.
        return bool(F.MODEL_NAME.search(parts[-1])) and not _ACTION.match(parts[-1])
    return False


def _parameter_defaults_to_function(func, name: str) -> bool:
    """``name`` is a parameter of ``func`` whose default is a function: a lambda, a
    ``def`` of the enclosing scopes or an imported lower-case name (fastai's
    ``predict(..., decoder=decode_spec_tokens)``). What the callers hand in instead
    is the same kind of thing; a model is not a default value."""
    if func is None or name in ("self", "cls"):
        return False
    params = func.node.params
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        if p.name.value != name:
            continue
        default = p.default
        if default is None:
            return False
        if type(default) is cst.Lambda:
            return True
        if type(default) is not cst.Name or default.value == "None":
            return False
        outer = func.scope.parent or func.scope
        if outer.resolve_name(default.value) is not None:
            return default.value[:1].islower()
        scope = outer.binder(default.value)
        if scope is None:
            return False
        body = scope.node.body if type(scope.node) is cst.Module else getattr(scope.node.body, "body", ())
        return any(type(st) is cst.FunctionDef and st.name.value == default.value for st in body)
    return False


_ACTION = re.compile(
    r"^_*(is|has|get|set|save|load|wrap|unwrap|build|create|make|init|initialize|prepare|freeze|unfreeze|"
    r"copy|clone|update|reset|print|log|export|check|validate|move|register|apply|compile|sync|count|"
    r"summarize|summarise|inspect|patch|convert|quantize|restore|store|dump|push|upload|download)_",
    re.IGNORECASE,
)


def is_unit_test(func, facts=None) -> bool:
    """A pytest/unittest test: ``test*`` at module level or in a ``Test*`` class (or a
    ``unittest.TestCase``), asserting something, that nothing in its file calls (a test
    runner does). It runs once and returns: what it records is freed with it, and its
    forward passes check shapes, not predictions. (A script's own ``test_conversion(...)``
    call makes it the script's code.) With ``facts``, also a helper of a test class
    (detectron2's ``_test_eval`` of a ``unittest.TestCase`` or of a ``*Test`` mixin) that
    is called, as ``self.<name>(...)``, only from the tests of test classes or from such
    helpers."""
    if func is None or func.parent is not None:
        return False
    if _test_function(func):
        return True
    if facts is None or func.cls is None or not _test_class(func):
        return False
    return _only_called_by_tests(facts, func, set())


def _test_class(func) -> bool:
    name = func.cls.name.value
    return name.startswith("Test") or name.endswith(("Test", "Tests", "TestCase")) or any(
        b.endswith("TestCase") for b in func.class_bases)


def _only_called_by_tests(facts, func, seen: set) -> bool:
    """``func`` (a method of a test class) is called, and only as ``self.<name>(...)`` from
    methods of test classes that are tests or (recursively) such helpers."""
    if id(func) in seen:
        return True
    seen.add(id(func))
    sites = [c for c in facts.calls if c.method == func.name and c.qname is None]
    if not sites:
        return False
    for c in sites:
        caller = c.func
        if (c.callee or "").split(".", 1)[0] not in ("self", "cls") or caller is None or caller.parent is not None:
            return False
        if caller.cls is None or not _test_class(caller):
            return False
        if not (caller.name.startswith("test") or _only_called_by_tests(facts, caller, seen)):
            return False
    return True


def _test_function(func) -> bool:
    if not func.name.startswith("test"):
        return False
    origin = func.called_in.torch.origin
    if origin is None or origin.kind not in ("unknown-entry", "called-elsewhere", "opaque"):
        return False  # (called in the file, where all agree)
    if func.cls is not None and not (func.cls.name.value.startswith("Test") or any(b.endswith("TestCase") for b in func.class_bases)):
        return False
    return finds(func.node.body, lambda n: type(n) is cst.Assert or (
        type(n) is cst.Attribute and n.attr.value.startswith("assert") and type(n.value) is cst.Name and n.value.value == "self"))


# Methods only MXNet's symbolic ``mx.mod.Module`` (its executor API) has: an NDArray has
# none of them, a Gluon block none but ``forward``.
_MODULE_ONLY_METHODS = frozenset({"bind", "init_optimizer", "get_outputs", "get_input_grads", "forward_backward", "update_metric"})


def is_symbolic_module(receiver: cst.BaseExpression, value, unit: cst.CSTNode) -> bool:
    """``receiver`` (of a ``.backward()``) is an MXNet symbolic module, not an NDArray:
    made by ``mx.mod.*`` / ``mx.module.*``, or a name on which ``unit`` (the function or
    module the call is in, not its nested functions) calls what only a module has
    (``.bind(...)``, ``.init_optimizer(...)``, ``.get_outputs()``, ``.update()`` with no
    argument, ``.forward(batch, is_train=...)``). Its ``backward()`` runs the bound
    executor's backward pass: no autograd, no ``record()`` needed."""
    for t in getattr(value, "tags", None) or ():
        if t.startswith(("ctor:mxnet.mod.", "ctor:mxnet.module.")):
            return True
    name = dotted(receiver)
    if name is None:
        return False
    for n in walk(unit, is_nested_scope):
        if type(n) is not cst.Call or type(n.func) is not cst.Attribute or dotted(n.func.value) != name:
            continue
        if module_only_call(n):
            return True
    return False


def module_only_call(n: cst.Call) -> bool:
    """``x.m(...)`` (an attribute call) calls what only an MXNet symbolic module has
    (``is_symbolic_module``): ``x`` is one."""
    method = n.func.attr.value
    if method in _MODULE_ONLY_METHODS or (method == "update" and not n.args):
        return True
    return method == "forward" and any(a.keyword is not None and a.keyword.value == "is_train" for a in n.args)


def entered_exit_stack(stack, call: cst.Call, unit: cst.CSTNode) -> bool:
    """``stack`` (the receiver of ``call``, a ``stack.enter_context(...)``) is the
    ``contextlib.ExitStack()`` of a ``with ExitStack() as stack:`` of ``unit`` around
    ``call``: what it enters lasts until that ``with`` ends."""
    made = getattr(stack, "node", None)
    if type(made) is not cst.Call or "ctor:contextlib.ExitStack" not in getattr(stack, "tags", ()):
        return False
    for n in walk(unit, is_nested_scope):
        if type(n) is cst.With and any(item.item is made for item in n.items):
            return finds(n.body, lambda m: m is call)
    return False


def handed_exit_stack(stack, unit: cst.CSTNode) -> bool:
    """``stack`` is a ``contextlib.ExitStack()`` made outside ``unit`` (a function handed
    its caller's stack)."""
    made = getattr(stack, "node", None)
    if type(made) is not cst.Call or "ctor:contextlib.ExitStack" not in getattr(stack, "tags", ()):
        return False
    return not finds(unit, lambda m: m is made)


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    return F.name_matcher(tuple(patterns))(name)


def constructor(value) -> str:
    """The constructor that made ``value``, when the flow saw it (``torch.optim.SGD``)."""
    for t in getattr(value, "tags", None) or ():
        if t.startswith("ctor:"):
            return t[5:]
    return ""


def made_model(value) -> bool:
    """Made by a model constructor (``nn.Linear(...)``) or a model class of the file."""
    tags = getattr(value, "tags", None) or ()
    return "model" in tags or any(t.startswith("ctor:") and is_model_constructor(t[5:]) for t in tags)


def model_framework(call: CallFact) -> Optional[str]:
    """The framework whose constructor made the model ``call`` runs (``net =
    gluon.nn.HybridSequential()``, then ``net(x)`` in a function of a file that imports
    torch too: MXNet's), or None: unknown, or more than one.

    The constructors are read through joins (a parameter's callers, ``net =
    gluon.nn.Sequential() if a else other``), not through a constructor's arguments: a
    PyTorch module built around a Gluon block (``Wrap(gluon.nn.Dense(8))``) is no Gluon
    model."""
    value = call.callee_value
    if value is None:
        return None
    found = set()
    for n, v in enumerate(value.ancestors(stop=_constructed)):
        if n > 64:
            return None
        found.update(F.framework_of(t[5:]) for t in v.tags if t.startswith("ctor:"))
    found.discard(None)
    return next(iter(found)) if len(found) == 1 else None


def _constructed(value) -> bool:
    tags = value.tags
    return "model" in tags or any(t.startswith(("ctor:", "instance:")) for t in tags)


def made_loss(value) -> bool:
    """An instance of a framework loss class (``nn.CrossEntropyLoss()``,
    ``gluon.loss.L2Loss()``): calling it computes from its arguments alone."""
    return any(
        t.startswith("ctor:") and F.framework_of(t[5:]) and "loss" in t.rsplit(".", 1)[-1].lower()
        for t in getattr(value, "tags", None) or ()
    )


def _ctor(call: CallFact) -> str:
    return constructor(call.receiver) if call.receiver is not None else ""


def _receiver_name(call: CallFact) -> str:
    callee = call.callee or ""
    return callee.rsplit(".", 2)[-2] if callee.count(".") >= 1 else ""


_OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser|trainer)s?(_?[a-z0-9]*)?$|^opt[A-Z_]", re.IGNORECASE)
_SCHEDULER_NAME = re.compile(r"sched|lr_|warmup", re.IGNORECASE)


def is_optimizer_step(call: CallFact) -> bool:
    """``opt.step()``, ``trainer.step(n)``, ``scaler.step(opt)`` -- not a scheduler's step."""
    if call.method != "step" or call.qname is not None:
        return False
    ctor = _ctor(call)
    if ctor.startswith("torch.optim.lr_scheduler") or ctor.startswith("transformers."):
        return False
    if ctor.startswith("torch.optim.") or ctor in ("mxnet.gluon.Trainer",) or "GradScaler" in ctor:
        return True
    name = _receiver_name(call)
    if _SCHEDULER_NAME.search(name):
        return False
    return bool(_OPTIMIZER_NAME.search(name)) or name in ("scaler",)


def spelled(call: CallFact) -> str:
    """How a message names a call: ```opt.step()``` or, for the step a local function
    makes where it is called (``CallFact.via``), ```update()` (its `opt.step()`)``."""
    if call.via is not None:
        return f"`{call.via.name}()` (its `{call.callee}()`)"
    return f"`{call.callee}()`"


def is_optimizer_name(name: str) -> bool:
    return bool(_OPTIMIZER_NAME.search(name.rsplit(".", 1)[-1]))


def is_accelerator(call: CallFact) -> bool:
    return _ctor(call) == "accelerate.Accelerator" or _receiver_name(call).lower() in ("accelerator", "accel")


def is_scaler_step(call: CallFact) -> bool:
    """``scaler.step(opt)``: an AMP GradScaler stepping the optimizer it is given."""
    return bool(call.node.args) and (_receiver_name(call) == "scaler" or "GradScaler" in _ctor(call))


def optimizer_name(call: CallFact) -> str:
    """The optimizer a step belongs to (``scaler.step(opt)`` -> ``opt``)."""
    if is_scaler_step(call):
        return dotted(call.node.args[0].value) or ""
    return _receiver_name(call)


def optimizer_model(call: CallFact) -> str:
    """The module whose parameters the optimizer a step belongs to was built over
    (``dis_optim = torch.optim.Adam(discriminator.parameters())`` -> ``discriminator``;
    ``gluon.Trainer(netD.collect_params(), ...)`` -> ``netD``), as its construction
    spells it; "" where not seen."""
    made = call.receiver.node if call.receiver is not None and not is_scaler_step(call) else None
    if type(made) is not cst.Call or not made.args:
        return ""
    first = made.args[0].value
    if type(first) is cst.Call and type(first.func) is cst.Attribute and first.func.attr.value in ("parameters", "collect_params"):
        return dotted(first.func.value) or ""
    return ""


_DISCRIMINATOR = re.compile(r"(^|_)(dis|disc|discriminator|critic|netd|d)(_?net|_?model)?$|^net_?d$|^d_?net$", re.IGNORECASE)
_GENERATOR = re.compile(r"(^|_)(gen|generator|netg|g)(_?net|_?model)?$|^net_?g$|^g_?net$", re.IGNORECASE)


def _network(name: str) -> str:
    """The last part of a callee's name, the model's (``discriminator.forward`` ->
    ``discriminator``: a forward called by its name)."""
    parts = name.rsplit(".", 2)
    return parts[-2] if len(parts) > 1 and parts[-1] in ("forward", "hybrid_forward") else parts[-1]


def is_discriminator_name(name: str) -> bool:
    return bool(_DISCRIMINATOR.search(_network(name)))


def is_generator_name(name: str) -> bool:
    return bool(_GENERATOR.search(_network(name)))


def is_discriminator_optimizer(name: str) -> bool:
    """``optD``, ``optimizer_d``, ``d_optimizer``, ``trainerD``, ``opt_disc``."""
    return _optimizer_of(name, ("d", "dis", "disc", "discriminator", "critic", "netd"))


def is_generator_optimizer(name: str) -> bool:
    """``optG``, ``optimizer_g``, ``g_optimizer``, ``trainerG``, ``opt_gen``."""
    return _optimizer_of(name, ("g", "gen", "generator", "netg"))


_OPTIMIZER_WORD = "optimizer|optimiser|optim|opt|trainer"
_PLAIN_OPTIMIZER = re.compile(rf"^(?:{_OPTIMIZER_WORD})_?\d*$", re.IGNORECASE)


def is_plain_optimizer_name(name: str) -> bool:
    """``optimizer``, ``opt``, ``optimizer_1``: an optimizer's name that says nothing of
    which network it holds (``actor_optimizer``, ``optimizerD`` do)."""
    return _PLAIN_OPTIMIZER.match(name.rsplit(".", 1)[-1]) is not None


def _optimizer_of(name: str, owners) -> bool:
    n = name.rsplit(".", 1)[-1]
    rest = re.sub(rf"^({_OPTIMIZER_WORD})_?", "", n, flags=re.IGNORECASE)
    if rest != n and rest.lower() in owners:
        return True
    m = re.match(rf"^([a-z]+)_?({_OPTIMIZER_WORD})$", n, re.IGNORECASE)
    return m is not None and m.group(1).lower() in owners


def optimizer_named_for(opt: str, model: str) -> bool:
    """A GAN's optimizer and model named for one network: ``optimizerD`` and ``netD``,
    ``g_optimizer`` and ``generator`` (how a fragment, which defines neither, says which
    optimizer holds which model's parameters)."""
    return (is_discriminator_optimizer(opt) and is_discriminator_name(model)) or \
        (is_generator_optimizer(opt) and is_generator_name(model))


def is_loss_call(call: CallFact) -> bool:
    """A call that computes a loss: ``criterion(out, y)``, ``F.mse_loss(...)``; not the
    construction of a loss object (``nn.MSELoss()``: ``frameworks.is_loss_name``)."""
    return F.is_loss_name((call.qname or call.callee or "").rsplit(".", 1)[-1])


def is_class_name(name: str) -> bool:
    """Spelled as Python spells classes (``CTCBeam``, ``STFTLoss``, ``Task``), not as
    functions or constants (``mse_loss``, ``BCE``)."""
    return F.CLASS_NAME.match(name) is not None


_DATA_NAME = re.compile(r"(^|_)(loader|dataloader|dataset|data|batches|dl|iterator|samples)s?(_|$)", re.IGNORECASE)
_ITER_WRAPPERS = {"enumerate", "tqdm", "iter", "tqdm.tqdm", "progress", "track"}


def _iterated_name(expr) -> Optional[str]:
    """The last part of the name iterated (``enumerate(self.val_loader)``: ``val_loader``)."""
    while type(expr) is cst.Call and (dotted(expr.func) or "") in _ITER_WRAPPERS and expr.args:
        expr = expr.args[0].value
    name = dotted(expr)
    return name.rsplit(".", 1)[-1] if name is not None else None


def is_data_iterable(expr) -> bool:
    """``loader``, ``enumerate(train_loader)``, ``tqdm(self.dataloader)``: batches of data."""
    name = _iterated_name(expr)
    return name is not None and bool(_DATA_NAME.search(name))


_HELD_OUT = re.compile(r"^_*(val|valid|validation|test|testing|eval|evaluation|dev|holdout)(_|[A-Z]|$)", re.IGNORECASE)


def is_held_out_data(expr) -> bool:
    """``val_loader``, ``tqdm(test_dataloader)``, ``self.valid_dl``: held-out batches,
    iterated to evaluate."""
    name = _iterated_name(expr)
    return name is not None and bool(_DATA_NAME.search(name)) and bool(_HELD_OUT.search(name))


def is_gluon_forward(info) -> bool:
    """``forward``/``hybrid_forward`` of a class deriving from a Gluon ``Block`` (a
    ``HybridBlock``, a ``gluon.loss.Loss``), here or through the program's classes, and
    not named for prediction (``DeepARPredictionNetwork``). ``info``: a FunctionInfo."""
    return info.parent is None and info.cls is not None and info.name in ("forward", "hybrid_forward") and (
        any(b.startswith("mxnet.gluon.") for b in info.framework_bases)
        or any(b.startswith("mxnet.gluon.loss.") for b in info.class_bases)) \
        and not _PREDICTION_CLASS.search(info.cls.name.value)


def is_child_block_call(call: CallFact) -> bool:
    """``self.conv(x)`` in a Gluon Block's forward where ``conv`` is no method of its
    class: a child block's forward pass."""
    return call.qname is None and call.target is None and call.func is not None and is_gluon_forward(call.func) \
        and (call.callee or "").count(".") == 1 and call.callee.startswith("self.")


# A Block named for prediction (gluonts' ``DeepARPredictionNetwork`` beside its
# ``DeepARTrainingNetwork``): made to predict, not entered recording.
_PREDICTION_CLASS = re.compile(r"Prediction|Inference")


def is_loss_class(info) -> bool:
    """A method's class is a loss: derives from ``gluon.loss.Loss`` (here or through the
    program's classes), or is named one (``CtdetLoss(gluon.Block)``)."""
    return any(b.startswith("mxnet.gluon.loss.") for b in info.class_bases) or _LOSS_CLASS.search(info.cls.name.value) is not None


# A class named as a loss (``CtdetLoss``, ``PoissonNLLLoss``, ``FocalLossV2``, ``LossBlock``,
# ``MaskedCriterion``, ``CtdetLoss_with_dict``), not a class whose name only starts a word
# with it (``LossMask``, ``LosslessUpsample``). (``F.is_loss_name`` asks of callees, where
# a CamelCase name constructs an object.)
_LOSS_CLASS = re.compile(r"(?:Loss|Criterion)(?=$|_|\d|V\d|Block|Layer|Module|Fn|Func)|(?:^|_)(?:loss|criterion)$")


# An argument named as a target (``y``, ``labels``), in a loss call's target position:
# not a distillation loss's second prediction (``criterion(teacher_out, student_out)``).
_TARGET_NAME = re.compile(r"^(?:batch_|b_)?(?:y|ys|y_?true|targets?|labels?|lbls?|gts?|truth|tgts?)$")
_TARGET_KEYWORDS = frozenset({"target", "targets", "label", "labels", "y", "y_true"})


def target_arguments(call: cst.Call):
    """(index, name) of each argument of a loss call ``call`` that is a plain name spelled
    as a target, in a target's position (not the first positional argument, the
    prediction; a keyword named ``target``/``labels``...)."""
    for i, a in enumerate(call.args):
        if type(a.value) is not cst.Name or a.star or (i == 0 if a.keyword is None else a.keyword.value not in _TARGET_KEYWORDS):
            continue
        if _TARGET_NAME.match(a.value.value):
            yield i, a.value
