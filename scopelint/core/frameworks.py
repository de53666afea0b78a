"""Every framework difference lives here: which API does what to the recording state.

Names are canonical dotted names (``torch.no_grad``, ``mxnet.autograd.pause``); the
many public spellings of one API (``torch.autograd.grad_mode.no_grad``) map onto them.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Callable, Dict, Optional, Tuple

TORCH = "torch"
MXNET = "mxnet"
FRAMEWORKS = (TORCH, MXNET)

# APIs that torch exposes under ``torch.autograd`` only (others are re-exported at the top).
_TORCH_AUTOGRAD_ONLY = {"backward", "grad", "set_grad_enabled", "Function", "Variable"}
_PREFIX_ALIASES = (
    ("torch.autograd.grad_mode.", "torch.autograd."),
    ("mxnet.contrib.autograd.", "mxnet.autograd."),
    ("torch.nn.parameter.", "torch.nn."),
    ("mxnet.gluon.block.", "mxnet.gluon."),  # (``from mxnet.gluon.block import HybridBlock``)
)


def canonical(qname: Optional[str]) -> Optional[str]:
    """Map a resolved dotted name onto the canonical spelling used in the tables."""
    if not qname:
        return qname
    for prefix, repl in _PREFIX_ALIASES:
        if qname.startswith(prefix):
            qname = repl + qname[len(prefix):]
    if qname.startswith("torch.autograd."):
        rest = qname[len("torch.autograd."):]
        if "." not in rest and rest not in _TORCH_AUTOGRAD_ONLY:
            return "torch." + rest
    return qname


def framework_of(qname: Optional[str]) -> Optional[str]:
    if not qname:
        return None
    root = qname.split(".", 1)[0]
    return root if root in FRAMEWORKS else None


# --- recording-state scopes ------------------------------------------------------
# Context managers / decorators: canonical name -> (framework, effect on recording).
# Effect "off"/"on" is the default; "arg" means the first argument (or keyword) decides.
SCOPES: Dict[str, tuple] = {
    "torch.no_grad": (TORCH, "off"),
    "torch.enable_grad": (TORCH, "on"),
    "torch.inference_mode": (TORCH, "off"),  # inference_mode(False) turns it ON
    "torch.set_grad_enabled": (TORCH, "arg"),
    "torch.autograd.set_grad_enabled": (TORCH, "arg"),
    "mxnet.autograd.record": (MXNET, "on"),
    "mxnet.autograd.pause": (MXNET, "off"),
    "mxnet.autograd.train_mode": (MXNET, "train"),
    "mxnet.autograd.predict_mode": (MXNET, "predict"),
}
# The last part of every scope's name: a name or attribute spelled so may refer to one.
SCOPE_LAST_NAMES = frozenset(q.rpartition(".")[2] for q in SCOPES)
# A module's (a Block's) own methods that return the module itself: ``Net().to(device)``
# is the ``Net`` instance.
RETURNS_SELF = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_",
                          "type", "share_memory", "apply", "as_in_context"})

# Words an unresolved callee's last part is spelled with when it opens a recording
# scope (``backend.no_grad``, ``self._get_no_grad_ctx_mgr``, ``ag.record``).
_SCOPE_WORDS = re.compile(r"no_?grad|inference_mode|grad_enabled|enable_grad|autograd_pause|^pause$|^record$|train_mode|predict_mode")


def spelled_as_scope(name: Optional[str]) -> bool:
    """An unresolved callee whose last part is ``name`` is spelled as a recording scope."""
    return name is not None and (name in SCOPE_LAST_NAMES or _SCOPE_WORDS.search(name) is not None)


# Keyword that carries the switch for "arg"-style scopes and inference_mode.
SCOPE_ARG_KEYWORD = {
    "torch.set_grad_enabled": "mode",
    "torch.autograd.set_grad_enabled": "mode",
    "torch.inference_mode": "mode",
}
# Scopes that are classes or factories and must be called to be context managers.
CONTEXT_FACTORIES = set(SCOPES)

# Scopes that make recording OFF (for "redundant" checks) and the spelling users read.
OFF_SCOPES = {"torch.no_grad", "torch.inference_mode", "mxnet.autograd.pause"}

# Global switches used as statements.
SETTERS: Dict[str, tuple] = {
    "torch.set_grad_enabled": (TORCH, "recording"),
    "torch.autograd.set_grad_enabled": (TORCH, "recording"),
    "mxnet.autograd.set_recording": (MXNET, "recording"),
    "mxnet.autograd.set_training": (MXNET, "training"),
}

# Backward entry points: canonical name -> framework. ``<expr>.backward()`` is handled
# as a method call on a value.
BACKWARD_FUNCS = {
    "torch.autograd.backward": TORCH,
    "torch.autograd.grad": TORCH,
    "mxnet.autograd.backward": MXNET,
    "mxnet.autograd.grad": MXNET,
}

# Calls that create a leaf that requires grad when passed requires_grad=True.
PARAMETER_CLASSES = {"torch.nn.Parameter", "mxnet.gluon.Parameter"}

# Methods that turn an existing array into a leaf that records gradients.
MAKE_LEAF_METHODS = {"requires_grad_", "attach_grad"}

# Module-level recording defaults: PyTorch records, MXNet does not.
MODULE_DEFAULT_RECORDING = {TORCH: True, MXNET: False}

# Lightning base classes whose *_step hooks already run without grad.
LIGHTNING_MODULES = {
    "pytorch_lightning.LightningModule",
    "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule",
    "lightning.LightningModule",
    "lightning.pytorch.LightningModule",
    "lightning.pytorch.core.LightningModule",
}
LIGHTNING_NO_GRAD_HOOKS = {"validation_step", "test_step", "predict_step"}


# Calls that build a new array from their argument's values: the graph ends there.
CONVERSION_FUNCS = {  # (what the API model does not know; ``core.api``)
    "torch.tensor", "torch.from_numpy", "torch.Tensor",
    "mxnet.nd.array", "mxnet.ndarray.array", "mxnet.np.array",
}
CONVERSION_BUILTINS = {"float", "int", "bool", "list"}


# Functions that make a fresh tensor of data (no graph; a leaf only with requires_grad=True).
_TORCH_FACTORIES = {
    "randn", "rand", "randint", "randperm", "zeros", "ones", "empty", "full", "arange", "linspace",
    "logspace", "eye", "normal", "bernoulli", "multinomial", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like",
}
_MXNET_FACTORIES = {
    "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "normal", "uniform", "randn",
    "randint", "zeros_like", "ones_like", "full_like", "shuffle",
}
_MXNET_ARRAY_MODULES = ("mxnet.nd.", "mxnet.ndarray.", "mxnet.np.", "mxnet.numpy.")


def is_data_factory(qname: Optional[str]) -> bool:
    """``torch.randn``, ``torch.zeros_like``, ``mx.nd.random.normal``: makes data, not a graph."""
    if not qname:
        return False
    head, _, last = qname.rpartition(".")
    if head in ("torch", "torch.random"):
        return last in _TORCH_FACTORIES
    if head.startswith("mxnet."):
        module = head + "."
        if module.endswith(".random."):
            module = module[: -len("random.")]
        return module in _MXNET_ARRAY_MODULES and last in _MXNET_FACTORIES
    return False


def is_conversion(qname: Optional[str], builtin: Optional[str] = None) -> bool:
    """A call that builds a new array from its argument's values: the builtins above,
    NumPy, and what the API model observed to be one (``torch.tensor``, ``nd.array``;
    not ``torch.as_tensor``, which hands a tensor back as it is)."""
    if builtin in CONVERSION_BUILTINS:
        return True
    if not qname:
        return False
    if qname.startswith("numpy."):
        return True
    from scopelint.core import api  # (the model is loaded once, on first use)
    op = api.function(qname)
    if op is not None and op.known:
        return op.kind == api.CONVERSION
    return qname in CONVERSION_FUNCS


# Functions that are inference code by their name (``inference-functions`` adds more).
DEFAULT_INFERENCE_FUNCTIONS = (
    "predict*", "infer*", "evaluate*", "eval*", "valid*", "validation_step",
    "test_step", "predict_step", "generate*",
)


@functools.lru_cache(maxsize=32)
def name_matcher(patterns: Tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a name matches one of the ``fnmatch`` patterns (inference functions): one
    expression, made once; the gate and the rules ask the same question."""
    if not patterns:
        return lambda name: False
    match = re.compile("|".join(fnmatch.translate(p) for p in patterns)).match
    return lambda name: match(name) is not None

# Callees whose name says they compute a loss (the last component of the name).
LOSS_NAME = re.compile(r"loss|criterion|crit$|cross_entropy|nll|mse|l1|bce|kl_div|hinge|huber|ctc", re.IGNORECASE)
# Spelled as Python spells classes (``CTCBeam``, ``STFTLoss``, ``RandomSeeds``), not as
# functions or constants (``mse_loss``, ``BCE``).
CLASS_NAME = re.compile(r"^_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")


def is_loss_name(name: str) -> bool:
    """A callee (the last component of its name) that computes a loss: ``criterion``,
    ``mse_loss``, ``BCE``. A class spelled in CamelCase (``STFTLoss(n_fft)``,
    ``nn.MSELoss()``, ``RandomSeeds(n)``) constructs an object; it computes no loss.
    (``roles.is_loss_call`` and the gate's anchors ask this same question.)"""
    return CLASS_NAME.match(name) is None and LOSS_NAME.search(name) is not None


# Names that can hold a model (``model(x)``, ``self.encoder(x)``: roles.is_model_call).
MODEL_NAME = re.compile(
    r"(^|_)(model|net|network|module|encoder|decoder|classifier|backbone|generator|"
    r"discriminator|policy|critic|actor|transformer|resnet|bert|gpt|unet|vae|lm|rnn|lstm|gru)s?\d*$|"
    r"^(g|d|netg|netd|gen|disc|clf)$",
    re.IGNORECASE,
)


# Constructors whose result is a model (a callable holding parameters).
MODEL_CONSTRUCTOR_PREFIXES = (
    "torch.nn.", "mxnet.gluon.nn.", "mxnet.gluon.rnn.", "mxnet.gluon.model_zoo.",
    "torchvision.models.", "transformers.", "timm.create_model",
)
NOT_MODEL_PREFIXES = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.Parameter", "torch.nn.parameter")
MODEL_BASE_CLASSES = {
    "torch.nn.Module", "mxnet.gluon.Block", "mxnet.gluon.HybridBlock", "mxnet.gluon.nn.Block",
    "mxnet.gluon.nn.HybridBlock",
} | LIGHTNING_MODULES


# What ``transformers`` makes besides models: tokenizers, processors, configurations,
# pipelines (which run their model without grad), data collators, trainers.
_NOT_MODEL_IN_TRANSFORMERS = re.compile(
    r"Tokeni[sz]er|Processor|FeatureExtractor|Config|[Pp]ipeline|DataCollator|Trainer|TrainingArguments|GenerationConfig")


def is_model_constructor(qname: str) -> bool:
    if qname.startswith("transformers.") and _NOT_MODEL_IN_TRANSFORMERS.search(qname):
        return False  # (a tokenizer's ``tokenizer(texts)`` is no forward pass)
    return qname.startswith(MODEL_CONSTRUCTOR_PREFIXES) and not qname.startswith(NOT_MODEL_PREFIXES) and not qname.endswith("Loss")


def is_model_class(qname: str) -> bool:
    """A framework class whose subclasses are models: ``nn.Module``, a Gluon ``Block``, and
    every layer the frameworks define that is no loss (``nn.Sequential``, Gluon's
    ``HybridSequential``, ``nn.LSTM``: osmr/imgclsmob's ``HierarchicalConcurrent`` derives
    from ``nn.HybridSequential`` and runs its children in its own ``hybrid_forward``)."""
    if qname in MODEL_BASE_CLASSES:
        return True
    from scopelint.core import api  # (the generated API model, read once when first asked)

    found = api.layer(qname) if qname.startswith(("torch.", "mxnet.")) else None
    return found is not None and not found.get("loss")


# --- optimizers -----------------------------------------------------------------------
def is_optimizer_constructor(qname: Optional[str]) -> bool:
    """``torch.optim.Adam(...)``, ``gluon.Trainer(...)``: not a scheduler or SWA helper."""
    if not qname:
        return False
    if qname.startswith("torch.optim."):
        return not qname.startswith(("torch.optim.lr_scheduler", "torch.optim.swa_utils"))
    return qname == "mxnet.gluon.Trainer"


# ``X.parameters()`` / ``X.collect_params()``: the parameters of model X, all of them.
PARAMETER_METHODS = ("parameters", "collect_params")
