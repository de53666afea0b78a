"""The holes of a fragment: what a snippet or a function uses but never defines.

A forum snippet uses ``model``, ``optimizer``, ``criterion`` and ``loader`` it never
builds; a project helper ``train_one_epoch(model, loader, optimizer, criterion)`` takes
them as parameters. ``analyze`` lists them, each classified by how the code uses it
(``Hole.kind``): a model (called, ``.eval()``, ``.train()``, ``.parameters()``), an
optimizer (``zero_grad``/``step``), a loss (``criterion(out, y)``), a data iterable
(``for x, y in loader``), a tensor (indexed, ``.shape``, fed to a model), a device, a
scalar hyper-parameter, an MXNet ``Trainer`` or ``ctx``; ``None`` when the uses say
nothing (the harness then cannot fill it, and says so).

Pure analysis over ``ast``: nothing here runs the code, imports a framework or changes
``scopelint.core``; ``runtime_check.synth`` turns the holes into a harness.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from scopelint.core.fragments import bound_names

# Names a snippet uses without importing them, and the import that defines each.
IMPORTS = {
    "torch": ("torch", "import torch"),
    "nn": ("torch", "import torch.nn as nn"),
    "F": ("torch", "import torch.nn.functional as F"),
    "optim": ("torch", "import torch.optim as optim"),
    "DataLoader": ("torch", "from torch.utils.data import DataLoader"),
    "TensorDataset": ("torch", "from torch.utils.data import TensorDataset"),
    "np": (None, "import numpy as np"),
    "numpy": (None, "import numpy"),
    "mx": ("mxnet", "import mxnet as mx"),
    "mxnet": ("mxnet", "import mxnet"),
    "nd": ("mxnet", "from mxnet import nd"),
    "gluon": ("mxnet", "from mxnet import gluon"),
    "autograd": ("mxnet", "from mxnet import autograd"),
    "math": (None, "import math"),
    "random": (None, "import random"),
    "time": (None, "import time"),
    "copy": (None, "import copy"),
    "Variable": ("torch", "from torch.autograd import Variable"),
    "Parameter": ("torch", "from torch.nn import Parameter"),
}
# Builtins a forum snippet often rebinds to data (`output = model(input)`): one the
# fragment never calls but feeds to a call or reads attributes of is a hole, not the builtin.
SHADOWED_BUILTINS = {"input", "iter", "next", "filter", "map", "sum", "max", "min", "id", "type", "hash", "format",
                     "vars", "object", "len", "all", "any", "range", "zip", "list", "dict", "set", "slice"}

MODEL_METHODS = {"eval", "train", "parameters", "named_parameters", "state_dict", "load_state_dict", "modules",
                 "children", "zero_grad_", "to", "cuda", "cpu", "collect_params", "hybridize", "initialize",
                 "init_hidden", "requires_grad_", "half", "float", "double", "apply"}
MODEL_ONLY = {"eval", "train", "parameters", "named_parameters", "state_dict", "modules", "children", "collect_params",
              "hybridize", "initialize", "init_hidden", "begin_state", "requires_grad_", "apply"}  # (a module has zero_grad too)
OPTIMIZER_METHODS = {"zero_grad", "step", "param_groups", "add_param_group"}
TENSOR_ATTRS = {"shape", "size", "view", "reshape", "float", "long", "dim", "numel", "unsqueeze", "squeeze",
                "detach", "item", "sum", "mean", "asnumpy", "asscalar", "as_in_context", "T", "dtype", "t",
                "permute", "transpose", "flatten", "argmax", "max", "min", "clone", "numpy", "requires_grad",
                "astype", "copyto", "context", "ndim"}
INT_SCALARS = re.compile(r"^(n_?|num_?)?(epochs?|iters?|iterations?|steps?|batches|updates)$|^(epoch|batch_size|bs|log_interval|print_every|log_every|accum(ulation)?(_steps)?|grad_accum(_steps)?|seq_len|bptt|k)$"
                         r"|^(input|hidden|output|embed|embedding|in|out)_?(size|dim|features|units|channels)$|^n_?(in|out|hidden|features|inputs|outputs|classes|tokens|layers)$"
                         r"|^(vocab_size|num_classes|nclasses|ntokens|ntoken|num_layers|nlayers|n_layers)$", re.I)
FLOAT_SCALARS = re.compile(r"^(lr|learning_rate|alpha|beta|gamma|lam|lambda_?\w*|weight_decay|wd|clip|max_norm|grad_clip|clip_value|eps|momentum|temperature|tau|scale)$")
LOADER_NAMES = re.compile(r"(loader|dataloader|data_iter|train_iter|train_data|val_data|test_data|batches|dataset)$", re.I)
MODEL_NAMES = re.compile(r"(model|net|network|encoder|decoder|classifier|module|rnn|lstm|gru|generator|discriminator|^net[GD]$|^[GD]$|^netG|^netD|teacher|student|backbone|policy|critic|actor)", re.I)
LOSS_NAMES = re.compile(r"(criterion|loss_fn|loss_func|lossfn|loss_function|^loss_f$|^crit$|^l2_loss$|^loss_obj$)", re.I)
OPT_NAMES = re.compile(r"^(opt|optim|optimizer|optimiser)(_?[a-zA-Z0-9]+)?$|_opt(imizer)?$", re.I)
TARGET_NAMES = re.compile(r"^(y|target|targets|label|labels|gt|y_true|truth)$", re.I)
INPUT_NAMES = re.compile(r"^(x|inputs?|images?|imgs?|data|batch|features|X|src|sample|samples|x_batch|xb)$")
DEVICE_NAMES = re.compile(r"^(device|dev)$")
DTYPE_NAMES = re.compile(r"^(dtype|tensor_type|float_type|dtype_float)$")
# A logging meter (`AverageMeter`): `data_time.update(time.time() - end)`, `losses.avg`.
METER_ATTRS = {"update", "reset", "avg", "val", "sum", "count", "value"}
# An argparse namespace or config object: only its attributes are read (`args.batch_size`).
NAMESPACE_NAMES = re.compile(r"^(args|arguments|config|cfg|conf|hparams|hp|hps|flags|FLAGS|opts|options|settings|params_cfg)$")
CTX_NAMES = re.compile(r"^(ctx|context)$")


@dataclass
class Hole:
    """One name to fill: where it comes from and what it is used as."""

    name: str
    origin: str  # "free" (used, never defined) | "param" (a parameter of ``function``)
    kind: Optional[str] = None  # model optimizer trainer scheduler loss loader batch tensor target device ctx int float hidden import dtype meter namespace
    uses: List[str] = field(default_factory=list)  # what was seen (for the reason when it cannot be filled)
    function: Optional[str] = None
    arity: int = 0  # loader: items a batch unpacks to (0: unknown); loss: the arguments it is called with
    import_line: Optional[str] = None
    has_default: bool = False
    attrs: List[str] = field(default_factory=list)  # namespace: the attributes read


@dataclass
class Function:
    name: str
    lineno: int
    end_lineno: int
    params: List[Hole]
    called: bool  # called somewhere at module level already
    loops: bool
    cls: Optional[str] = None  # a method: its class (``name`` is the method's)


@dataclass
class Analysis:
    frameworks: List[str]
    free: List[Hole]
    functions: List[Function]
    recurrent: bool  # a forward returns a state fed back (SL204-style use)
    view_features: Optional[int] = None  # a `.view(-1, N)` / `.reshape(-1, N)` seen: inputs flatten to N
    regression: bool = False  # a regression loss is named (MSE/L1/L2): targets take the output's shape
    methods: List[Function] = field(default_factory=list)  # where the module runs nothing: methods nothing calls

    def holes(self, function: Optional[str] = None) -> List[Hole]:
        out = list(self.free)
        for fn in self.functions:
            if fn.name == function:
                out += fn.params
        return out


class _Uses(ast.NodeVisitor):
    """How each name is used, over the whole fragment."""

    def __init__(self):
        self.attrs: Dict[str, Set[str]] = {}
        self.called: Dict[str, List[int]] = {}  # name -> arg counts of its calls
        self.iterated: Dict[str, int] = {}  # name -> tuple arity of the loop target
        self.target_of_loss: Set[str] = set()
        self.model_input: Set[str] = set()
        self.subscripted: Set[str] = set()
        self.stepped_with_arg: Set[str] = set()
        self.passed_to_to: Set[str] = set()
        self.as_dtype: Set[str] = set()  # `.type(x)`, `dtype=x`
        self.call_args: Set[str] = set()  # names passed to any call
        self.self_input: Set[str] = set()  # names passed to a layer of `self` (`self.encoder(tokens)`)
        self.unpacked: Dict[str, int] = {}  # name -> items of the tuple it is unpacked into (`x, y = batch`)
        self.recurrent = False

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name):
            self.attrs.setdefault(node.value.id, set()).add(node.attr)
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name):
            self.subscripted.add(node.value.id)
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            self.called.setdefault(f.id, []).append(len(node.args))
            for a in node.args:
                if isinstance(a, ast.Name):
                    self.model_input.add(a.id)
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Name):
                self.target_of_loss.add(node.args[1].id)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            self.self_input.update(a.id for a in node.args if isinstance(a, ast.Name))
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            if f.attr == "step" and node.args:
                self.stepped_with_arg.add(f.value.id)
            if f.attr in ("to", "as_in_context", "copyto", "cuda") and node.args and isinstance(node.args[0], ast.Name):
                self.passed_to_to.add(node.args[0].id)
            if f.attr in ("type", "astype") and node.args and isinstance(node.args[0], ast.Name):
                self.as_dtype.add(node.args[0].id)
        for a in node.args:
            if isinstance(a, ast.Name):
                self.call_args.add(a.id)
        for kw in node.keywords:
            if kw.arg in ("device", "ctx") and isinstance(kw.value, ast.Name):
                self.passed_to_to.add(kw.value.id)
            if kw.arg == "dtype" and isinstance(kw.value, ast.Name):
                self.as_dtype.add(kw.value.id)
            if isinstance(kw.value, ast.Name):
                self.call_args.add(kw.value.id)
        self.generic_visit(node)

    def visit_For(self, node):
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "iter", "tqdm") and it.args:
            it = it.args[0]
            target = node.target.elts[1] if isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2 and node.iter.func.id == "enumerate" else node.target
        else:
            target = node.target
        if isinstance(it, ast.Name):
            self.iterated[it.id] = len(target.elts) if isinstance(target, ast.Tuple) else 1
        self.generic_visit(node)

    def visit_comprehension(self, node):
        # `[model(x) for x in data]`: `data` is iterated like a loop's iterable
        if isinstance(node.iter, ast.Name):
            self.iterated.setdefault(node.iter.id, len(node.target.elts) if isinstance(node.target, ast.Tuple) else 1)
        self.generic_visit(node)

    def visit_Assign(self, node):
        if isinstance(node.value, ast.Name) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            self.unpacked.setdefault(node.value.id, len(node.targets[0].elts))
        # out, hidden = model(x, hidden): a state returned and fed back
        if isinstance(node.value, ast.Call) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            stores = {e.id for e in node.targets[0].elts if isinstance(e, ast.Name)}
            loads = {a.id for a in node.value.args if isinstance(a, ast.Name)}
            if stores & loads:
                self.recurrent = True
        self.generic_visit(node)


def _classify(h: Hole, u: _Uses) -> None:
    n = h.name
    attrs = u.attrs.get(n, set())
    if attrs:
        h.uses.append("." + ", .".join(sorted(attrs)))
    if n in u.called:
        h.uses.append("called")
    if n in u.iterated:
        h.uses.append("iterated")
    if DTYPE_NAMES.match(n) or (n in u.as_dtype and not attrs and n not in u.called):
        h.kind = "dtype"
        return
    if NAMESPACE_NAMES.match(n) and attrs and n not in u.called and n not in u.iterated and n not in u.subscripted:
        h.kind, h.attrs = "namespace", sorted(attrs)
        return
    if DEVICE_NAMES.match(n) or (n in u.passed_to_to and not CTX_NAMES.match(n) and n not in u.called):
        h.kind = "ctx" if CTX_NAMES.match(n) else "device"
    elif CTX_NAMES.match(n):
        h.kind = "ctx"
    elif n in u.iterated or LOADER_NAMES.search(n):
        h.kind, h.arity = "loader", u.iterated.get(n, 2)
    elif "sched" in n.lower():
        h.kind = "scheduler"
    elif n in u.stepped_with_arg and ("trainer" in n.lower() or "step" in attrs and not attrs & {"zero_grad"}):
        h.kind = "trainer"
    elif (attrs & {"zero_grad", "param_groups"} and not attrs & MODEL_ONLY and not MODEL_NAMES.search(n)) or (OPT_NAMES.search(n) and "step" in attrs) or OPT_NAMES.match(n):
        h.kind = "optimizer"
    elif attrs & (MODEL_METHODS - {"to", "float", "half", "double", "cuda", "cpu"}) or (MODEL_NAMES.search(n) and (n in u.called or not attrs)):
        h.kind = "model"
    elif LOSS_NAMES.search(n) and (n in u.called or not attrs):
        h.kind = "loss"
        h.arity = max(u.called.get(n, [2]))
    elif "update" in attrs and attrs <= METER_ATTRS and n not in u.called:
        h.kind = "meter"
    elif n in u.called and max(u.called[n]) >= 2 and "loss" in n.lower():
        h.kind, h.arity = "loss", max(u.called[n])
    elif INT_SCALARS.match(n):
        h.kind = "int"
    elif FLOAT_SCALARS.match(n):
        h.kind = "float"
    elif n in ("hidden", "h", "hc", "state", "states", "h0", "hx"):
        h.kind = "hidden"
    elif u.unpacked.get(n) == 2 and not attrs and n not in u.called:  # `inputs, targets = batch`: one batch, a pair
        h.kind = "batch"
    elif TARGET_NAMES.match(n) or (n in u.target_of_loss and not attrs - TENSOR_ATTRS):
        h.kind = "target"
    elif (INPUT_NAMES.match(n) or (attrs and attrs <= TENSOR_ATTRS) or n in u.subscripted or (n in u.model_input and n not in u.called)
          or (n in u.self_input and not attrs and n not in u.called)):
        h.kind = "tensor"


def analyze(source: str) -> Optional[Analysis]:
    """The fragment's holes, or None when it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    uses = _Uses()
    uses.visit(tree)
    bound = bound_names(tree)
    shadowed = {n for n in SHADOWED_BUILTINS - bound
                if n not in uses.called and (n in uses.call_args or n in uses.attrs or n in uses.subscripted)}
    defined = (bound | set(dir(builtins)) | {"__file__", "__name__"}) - shadowed
    seen: Set[str] = set()
    free: List[Hole] = []
    frameworks: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mod = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            root = (mod or "").split(".")[0]
            if root in ("torch", "mxnet"):
                frameworks.add(root)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in defined and node.id not in seen:
            seen.add(node.id)
            h = Hole(node.id, "free")
            if node.id in IMPORTS:
                fw, line = IMPORTS[node.id]
                h.kind, h.import_line = "import", line
                if fw:
                    frameworks.add(fw)
            else:
                _classify(h, uses)
            free.append(h)
    # `autograd` alone is MXNet's only where torch is not in sight
    if "torch" in frameworks and any(h.name == "autograd" for h in free):
        for h in free:
            if h.name == "autograd":
                h.import_line = "from torch import autograd"
        if not any(h.name in ("mx", "nd", "gluon", "mxnet") for h in free) and "mxnet" not in _imported(tree):
            frameworks.discard("mxnet")
    functions = []
    called_top = {n.value.func.id for n in tree.body if isinstance(n, (ast.Expr, ast.Assign)) and isinstance(getattr(n, "value", None), ast.Call)
                  and isinstance(n.value.func, ast.Name)}
    called_any = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        functions.append(_function(node, uses, node.name in called_top or node.name in called_any))
    # A module that runs nothing (definitions only): its methods nobody calls by name
    # (`model.infer(x)`), forward and dunders aside, can be called by a harness.
    methods = []
    if all(_inert(n) for n in tree.body):
        called_attr = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for node in cls.body:
                if (isinstance(node, ast.FunctionDef) and not node.name.startswith("__") and node.name not in ("forward", "hybrid_forward")
                        and node.name not in called_attr and not node.decorator_list):
                    fn = _function(node, uses, False)
                    fn.cls = cls.name
                    methods.append(fn)
    view = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("view", "reshape"):
            # `.view(-1, 784)`, and the tuple form `.reshape((-1, 784))` (MXNet's only one)
            dims = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], ast.Tuple) else node.args
            if (len(dims) == 2 and isinstance(dims[1], ast.Constant) and isinstance(dims[1].value, int)
                    and not isinstance(dims[1].value, bool) and dims[1].value > 1):
                view = dims[1].value
    regression = bool(re.search(r"MSELoss|mse_loss|L1Loss|l1_loss|L2Loss|SmoothL1|HuberLoss|smooth_l1|BCELoss|BCEWithLogits|binary_cross_entropy|SigmoidBinaryCrossEntropy", source))
    return Analysis(sorted(frameworks), free, functions, uses.recurrent, view, regression, methods)


def _function(node: ast.FunctionDef, uses: "_Uses", called: bool) -> Function:
    params = []
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for a, d in list(zip(positional, defaults)) + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]:
        if a.arg in ("self", "cls"):
            continue
        h = Hole(a.arg, "param", function=node.name, has_default=d is not None)
        if d is None:
            _classify(h, uses)
        params.append(h)
    loops = any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(node))
    return Function(node.name, node.lineno, node.end_lineno or node.lineno, params, called, loops)


def _inert(node: ast.stmt) -> bool:
    """A module-level statement that runs none of the module's code: a definition, an
    import, a docstring, a name bound to a constant or a name."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass)):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        return node.value is None or not any(isinstance(n, ast.Call) for n in ast.walk(node.value))
    return False


def _imported(tree: ast.AST) -> Set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module.split(".")[0])
    return out


FRAGMENT_KINDS = {"model", "optimizer", "trainer", "loss", "scheduler"}  # (a loader alone: any loop over an undefined name)
TORCH_LINT_IMPORTS = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F",
                      "from torch.autograd import Variable"]
MXNET_LINT_IMPORTS = ["import mxnet as mx", "from mxnet import autograd, gluon, nd"]


def completing_imports(source: str) -> Optional[List[str]]:
    """The import lines a fragment that imports no framework needs to be read as its
    framework's code, or None (it imports one, does not parse, or is not a fragment).

    Forum posts show the loop, not the imports: `torch.no_grad()`, `autograd.record()`,
    `nn.Linear` used as given, or no framework name at all (`model`, `optimizer`,
    `criterion` never defined). The analysis stays silent on a file that imports no
    framework; ``scopelint verify`` lints such a fragment with these lines appended (its
    own line numbers unchanged) and runs it in its harness, which imports them too. A
    fragment is a text with a framework name used but never imported, or with an
    undefined model, optimizer, trainer, loss or scheduler (a free name, or a
    parameter of one of its functions)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if _imported(tree) & {"torch", "mxnet"}:
        return None
    analysis = analyze(source)
    if analysis is None:
        return None
    framework_names = [h for h in analysis.free if h.kind == "import" and h.name in IMPORTS and IMPORTS[h.name][0]]
    params = [p for fn in analysis.functions for p in fn.params if not p.has_default]
    if not framework_names and not any(h.kind in FRAGMENT_KINDS for h in analysis.free + params):
        return None
    if "mxnet" in analysis.frameworks and "torch" not in analysis.frameworks:
        return list(MXNET_LINT_IMPORTS)
    if not analysis.frameworks and any(h.kind in ("trainer", "ctx") for h in analysis.free + params):
        return list(MXNET_LINT_IMPORTS)
    return list(TORCH_LINT_IMPORTS)
