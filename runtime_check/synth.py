"""A synthesized harness for a fragment: the smallest real objects that fill its holes.

``runtime_check.holes`` says what a snippet or function uses but never defines; this
module writes the Python that builds each (a small ``nn.Sequential`` or Gluon
``HybridSequential`` -- with Dropout and BatchNorm when the finding is about train/eval
mode, a GRU when it is about a recurrent state -- a real optimizer or ``Trainer`` over
its parameters, a real loss, a loader of a few random batches, tensors, a device,
hyper-parameters) and, for a flagged function nobody calls, the call.

The harness is text: a *prelude* the child runs in the program's globals before the
fragment (so the fragment keeps its own line numbers) and an *epilogue* appended after
it. ``Harness.text`` is what ran, for ``--show-harness`` and the verdict's detail.
Nothing here imports a framework.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, Sequence, Union

from scopelint.runtime_check.holes import Analysis, Function, Hole, analyze

BATCH, FEATURES, CLASSES, HIDDEN, STEPS, BATCHES = 4, 8, 3, 16, 5, 3
MODE_RULES = {"SL207", "SL103"}  # train/eval mode matters: Dropout and BatchNorm inside the model
RECURRENT_RULES = {"SL204"}
ATTEMPTS = 3  # 0: sizes and loss from the uses; 1: the other loss kind (classes <-> regression); 2: one output, other sizes
INT_VALUES = {"batch_size": BATCH, "bs": BATCH, "log_interval": 1, "print_every": 1, "log_every": 1, "seq_len": STEPS, "bptt": STEPS}
FLOAT_VALUES = {"clip": 1.0, "max_norm": 1.0, "grad_clip": 1.0, "clip_value": 1.0, "eps": 1e-8, "momentum": 0.9}


@dataclass
class Harness:
    prelude: str
    epilogue: str
    frameworks: List[str]
    filled: List[str]  # "name: kind" per hole filled
    attempt: int = 0
    notes: List[str] = field(default_factory=list)  # what filled a model hole: the project's class, or why a stand-in
    attempts: int = 0  # how many attempts this fragment has (ATTEMPTS, one more with a project's class)

    def text(self, fragment: str, module: bool = False) -> str:
        """The whole program that runs: the prelude, the fragment, the epilogue."""
        body = fragment if fragment.endswith("\n") else fragment + "\n"
        which = f", attempt {self.attempt + 1}" if self.attempt else ""
        notes = "".join(f"# {n}\n" for n in self.notes)
        return (f"# --- synthesized harness (scopelint verify{which}) ---\n{notes}{self.prelude}"
                f"# --- the fragment, as given (its own line numbers) ---\n{body}"
                + (f"# --- synthesized call ---\n{self.tail(module)}" if self.epilogue else ""))

    def program(self, fragment: str, module: bool = False) -> str:
        """The fragment with the epilogue appended (the prelude runs before it, apart).
        ``module``: it runs as a module of its package (``python -m``), whose
        ``__init__`` may import it too: the epilogue runs only as ``__main__``."""
        if not self.epilogue:
            return fragment
        return (fragment if fragment.endswith("\n") else fragment + "\n") + self.tail(module)

    def tail(self, module: bool = False) -> str:
        if not module:
            return self.epilogue
        body = "".join(f"    {line}" if line.strip() else line for line in self.epilogue.splitlines(True))
        return "if __name__ == '__main__':  # (its package may import this module too)\n" + body


def _target(analysis: Analysis, lines: Iterable[int], methods: bool = False) -> Optional[Function]:
    lines = set(lines)
    for fn in analysis.functions + (analysis.methods if methods else []):
        if any(fn.lineno <= r <= fn.end_lineno for r in lines) and not fn.called:
            return fn
    return None


def plan(source: str, lines: Sequence[int], codes: Iterable[str], attempt: int = 0,
         project: Optional[Callable] = None, failed: Optional[str] = None,
         target: Optional[str] = None, context: Optional[str] = None) -> Union[None, Harness, str]:
    """None when ``source`` is a whole program (nothing to fill); a ``Harness``; or
    why no harness can be made (the hole that cannot be filled).

    ``project(function, parameter)``: the project's class for a ``model`` parameter of
    the flagged function (a ``runtime_check.project.ModelChoice``), or None. Where one can
    be built, attempt 0 builds it (the input and target sizes then come from probing it,
    ``PROBE_TORCH``/``PROBE_MXNET``) and the later attempts are the stand-ins' (one
    more attempt in all); where it cannot, the stand-in is used and the notes say why
    (``failed``: how the attempt with the project's class ended).

    ``target``: the module-level function the harness calls whether or not the
    program calls it (a slice of a whole program, ``runtime_check.slices``); ``context``:
    the whole program it was cut from, whose ``add_argument`` defaults fill the attributes
    of a namespace hole (``args.emsize``) that the attribute's name says nothing of."""
    analysis = analyze(source)
    if analysis is None or re.search(r"^\s*from\s+\S+\s+import\s+\*", source, re.M):
        return None  # (a star import defines names nobody can list)
    fn = _target(analysis, lines)
    if target is not None:
        fn = next((f for f in analysis.functions if f.name == target), None)
        if fn is None:
            return f"no module-level function `{target}` to call"
    own = None  # a flagged method's class (the program runs nothing: it defines a class whose method nobody calls)
    if fn is None and not analysis.free and project is not None:
        fn = _target(analysis, lines, methods=True)
        own = project.own(fn.cls) if fn is not None else None
        if own is None or not own.usable:
            return None  # (it runs as a whole program, as before)
    holes = [h for h in analysis.free] + ([p for p in fn.params if not p.has_default] if fn else [])
    if not holes and fn is None:
        return None
    frameworks = list(analysis.frameworks)
    if not frameworks:
        frameworks = ["mxnet"] if any(h.kind in ("trainer", "ctx") for h in holes) else ["torch"]
    fw = "mxnet" if frameworks == ["mxnet"] else "torch"
    for h in holes:
        if h.kind is None:
            used = f" (used: {'; '.join(h.uses)})" if h.uses else ""
            where = f"parameter of `{h.function}`" if h.origin == "param" else "used, never defined"
            return f"cannot fill `{h.name}` ({where}){used}: its uses do not say what it is"
    fw_models = [h for h in holes if h.kind == "model"]
    choices = {}
    if project is not None and fn is not None:
        for h in fw_models:
            if h.origin == "param":
                c = project.model(fn.name, h.name)
                if c is not None:
                    choices[h.name] = c
    usable = {n: c for n, c in choices.items() if c.usable and c.framework == fw}
    if own is not None:
        if own.framework != fw:
            return None
        usable = {"_self": own}
    if any(c.same_file for c in usable.values()) and any(h.origin != "param" and h.kind != "import" for h in holes):
        usable = {}  # (its class is built after the file ran: only a function's parameters can wait for it)
    total = ATTEMPTS + (1 if usable and own is None else 0)
    real_attempt = attempt
    if attempt >= total:
        return f"no attempt {attempt + 1}"
    notes = []
    project_now = bool(usable) and (attempt == 0 or own is not None)
    if own is not None:
        notes.append(f"`self`: {own.describe()}")
    for name, c in choices.items():
        if project_now and name in usable:
            notes.append(f"model `{name}`: {c.describe()}")
        elif name in usable:
            notes.append(f"model `{name}`: a stand-in (the project's `{c.cls}` ({c.where}) failed in attempt 1: {failed or 'it did not build or run'})")
        elif c.usable:
            notes.append(f"model `{name}`: a stand-in (the project's `{c.cls}` ({c.where}) is {c.framework}'s, the fragment {fw}'s)")
        else:
            notes.append(f"model `{name}`: a stand-in ({c.why})")
    if usable and own is None and attempt > 0:
        attempt -= 1
    if not project_now:
        usable = {}
    codes = set(codes)
    recurrent = bool(codes & RECURRENT_RULES) or analysis.recurrent
    mode = bool(codes & MODE_RULES)
    regression = analysis.regression != (attempt == 1)
    feats = analysis.view_features or FEATURES
    classes = CLASSES
    if attempt == 2:  # a single output (a score, a binary logit) and a wider input
        regression, classes, feats = True, 1, analysis.view_features or 2 * FEATURES
    out: List[str] = []
    seen_imports = set()

    def imp(line):
        if line not in seen_imports:
            seen_imports.add(line)
            out.append(line)

    for h in holes:
        if h.kind == "import":
            imp(h.import_line)
    if fw == "torch":
        imp("import torch")
    else:
        imp("import mxnet as mx")
        imp("from mxnet import gluon, nd, autograd as _autograd")
    by_kind = {}
    for h in holes:
        by_kind.setdefault(h.kind, []).append(h)
    models = by_kind.get("model", [])
    if own is not None:
        models = [Hole("_self", "param", kind="model")] + models
    need_model = any(k in by_kind for k in ("optimizer", "trainer", "scheduler"))
    built = [] if models else [Hole(n, "param", kind="model") for n in built_models(source)]
    if need_model and not models and not built:
        h = (by_kind.get("optimizer") or by_kind.get("trainer") or by_kind.get("scheduler"))[0]
        return f"cannot fill `{h.name}` ({h.kind}): the fragment builds its own model, which the harness cannot reach before it runs"
    out.append(f"_B, _F, _C, _H, _T = {BATCH}, {feats}, {classes}, {HIDDEN}, {STEPS}")
    shape = "(_B * %d, _T, _F)" % BATCHES if recurrent else "(_B * %d, _F)" % BATCHES
    head = len(out)  # (where the fills start: after the imports and sizes)
    if usable:
        out += PROBE_TORCH if fw == "torch" else PROBE_MXNET
        for m in models:
            c = usable.get(m.name)
            if c is None:
                continue
            if c.same_file:
                out.append(f"{m.name} = {c.cls}({c.args})")
            else:
                out.append(f"from {c.module} import {c.cls} as _Project_{c.cls}")
                out.append(f"{m.name} = _Project_{c.cls}({c.args})")
            if fw == "mxnet":
                out.append(f"{m.name}.initialize(mx.init.Xavier())")
        first = next(m for m in models if m.name in usable)
        out.append(f"_X, _Y = _probe({first.name}, _B * {BATCHES}, regression={regression})")
    stand = [m for m in models if m.name not in usable]  # (models the harness makes itself)
    if fw == "torch":
        if not usable:
            out.append(f"_X = torch.randn{shape}")
            out.append(f"_Y = torch.randn(_B * {BATCHES}, _C)" if regression else f"_Y = torch.randint(0, _C, (_B * {BATCHES},))")
        if recurrent and stand:
            out += [
                "class _TinyRNN(torch.nn.Module):",
                "    def __init__(self):",
                "        super().__init__()",
                "        self.rnn = torch.nn.GRU(_F, _H, batch_first=True)",
                "        self.fc = torch.nn.Linear(_H, _C)",
                "    def init_hidden(self, batch_size=_B):",
                "        return torch.zeros(1, batch_size, _H)",
                "    def forward(self, x, hidden=None):",
                "        out, hidden = self.rnn(x, hidden)",
                "        return self.fc(out[:, -1]), hidden",
            ]
        for m in stand:
            if recurrent:
                out.append(f"{m.name} = _TinyRNN()")
            else:
                mid = ["torch.nn.BatchNorm1d(_H)", "torch.nn.ReLU()", "torch.nn.Dropout(0.5)"] if mode else ["torch.nn.ReLU()"]
                out.append(f"{m.name} = torch.nn.Sequential(torch.nn.Linear(_F, _H), {', '.join(mid)}, torch.nn.Linear(_H, _C))")
        out += _optimizers(by_kind.get("optimizer", []), models, built, "torch.optim.SGD({}.parameters(), lr=0.1, momentum=0.9)")
        for h in by_kind.get("trainer", []):
            return f"cannot fill `{h.name}` (an MXNet Trainer) in a PyTorch fragment"
        for h in by_kind.get("scheduler", []):
            opts = by_kind.get("optimizer")
            if not opts:
                return f"cannot fill `{h.name}` (a scheduler) without an optimizer to schedule"
            out.append(f"{h.name} = torch.optim.lr_scheduler.StepLR({opts[0].name}, step_size=1, gamma=0.5)")
        for h in by_kind.get("loss", []):
            if h.arity == 1:  # `criterion(output)`: a loss of the output alone (forum pseudo-code)
                out.append(f"{h.name} = lambda _out: _out.float().pow(2).mean().reshape(1)")  # (one element: `loss[0]` of old posts works)
            else:
                out.append(f"{h.name} = torch.nn.{'MSELoss' if regression else 'CrossEntropyLoss'}()")
        for h in by_kind.get("loader", []):
            if h.arity == 1:
                out.append(f"{h.name} = list(_X.split(_B))")
            else:
                out.append(f"{h.name} = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(_X, _Y), batch_size=_B)")
        for h in by_kind.get("batch", []):
            out.append(f"{h.name} = (_X[:_B].clone(), _Y[:_B].clone())")
        for h in by_kind.get("tensor", []):
            out.append(f"{h.name} = _X[:_B].clone()")
        for h in by_kind.get("target", []):
            out.append(f"{h.name} = _Y[:_B].clone()")
        for h in by_kind.get("device", []) + by_kind.get("ctx", []):
            out.append(f"{h.name} = torch.device('cuda' if torch.cuda.is_available() else 'cpu')")
        for h in by_kind.get("hidden", []):
            out.append(f"{h.name} = None")
        for h in by_kind.get("dtype", []):
            out.append(f"{h.name} = torch.float32")
        if cuda_stand_in(source):
            out += CUDA_STAND_IN
    else:
        if not usable:
            out.append(f"_X = nd.random.normal(shape={shape})")
            out.append(f"_Y = nd.random.normal(shape=(_B * {BATCHES}, _C))" if regression
                       else f"_Y = nd.random.randint(0, _C, shape=(_B * {BATCHES},)).astype('float32')")
        if recurrent and stand:
            out += [
                "class _TinyRNN(gluon.Block):",
                "    def __init__(self):",
                "        super().__init__()",
                "        self.rnn = gluon.rnn.GRU(_H, input_size=_F, layout='NTC')",
                "        self.fc = gluon.nn.Dense(_C, in_units=_H)",
                "    def begin_state(self, batch_size=_B, **kwargs):",
                "        return self.rnn.begin_state(batch_size, **kwargs)",
                "    init_hidden = begin_state",
                "    def forward(self, x, hidden=None):",
                "        if hidden is None:",
                "            hidden = self.rnn.begin_state(x.shape[0])",
                "        out, hidden = self.rnn(x, hidden)",
                "        return self.fc(out.mean(axis=1)), hidden",
            ]
        for m in stand:
            if recurrent:
                out.append(f"{m.name} = _TinyRNN()")
            else:
                out.append(f"{m.name} = gluon.nn.HybridSequential()")
                mid = ", gluon.nn.BatchNorm(in_channels=_H), gluon.nn.Dropout(0.5)" if mode else ""
                out.append(f"{m.name}.add(gluon.nn.Dense(_H, in_units=_F, activation='relu'){mid}, gluon.nn.Dense(_C, in_units=_H))")
            out.append(f"{m.name}.initialize(mx.init.Xavier())")
        out += _optimizers(by_kind.get("trainer", []) + by_kind.get("optimizer", []), models, built,
                           "gluon.Trainer({}.collect_params(), 'sgd', {{'learning_rate': 0.1, 'momentum': 0.9}})")
        if by_kind.get("scheduler"):
            h = by_kind["scheduler"][0]
            return f"cannot fill `{h.name}` (a scheduler) in an MXNet fragment"
        for h in by_kind.get("loss", []):
            if h.arity == 1:
                out.append(f"{h.name} = lambda _out: (_out ** 2).mean()")
            else:
                out.append(f"{h.name} = gluon.loss.{'L2Loss' if regression else 'SoftmaxCrossEntropyLoss'}()")
        for h in by_kind.get("loader", []):
            if h.arity == 1:
                out.append(f"{h.name} = [_X[i:i + _B] for i in range(0, _X.shape[0], _B)]")
            else:
                out.append(f"{h.name} = gluon.data.DataLoader(gluon.data.ArrayDataset(_X, _Y), batch_size=_B)")
        for h in by_kind.get("batch", []):
            out.append(f"{h.name} = (_X[:_B].copy(), _Y[:_B].copy())")
        for h in by_kind.get("tensor", []):
            out.append(f"{h.name} = _X[:_B].copy()")
        for h in by_kind.get("target", []):
            out.append(f"{h.name} = _Y[:_B].copy()")
        for h in by_kind.get("device", []) + by_kind.get("ctx", []):
            out.append(f"{h.name} = mx.cpu()")
        for h in by_kind.get("hidden", []):
            out.append(f"{h.name} = None")
        for h in by_kind.get("dtype", []):
            out.append(f"{h.name} = 'float32'")
    for h in by_kind.get("meter", []):
        if METER_CLASS[0] not in out:
            out += METER_CLASS
        out.append(f"{h.name} = _Meter()")
    defaults = argparse_defaults(context if context is not None else source) if by_kind.get("namespace") else {}
    for h in by_kind.get("namespace", []):
        values = []
        for a in h.attrs:
            v = _scalar(a)
            if v is None:
                v = defaults.get(a)
            if v is None:
                return (f"cannot fill `{h.name}.{a}` (an attribute of the `{h.name}` namespace): its name does not say what it holds"
                        " and the program gives it no `add_argument` default")
            values.append(f"{a}={v}")
        imp("import types")
        out.append(f"{h.name} = types.SimpleNamespace({', '.join(values)})")
    for h in by_kind.get("int", []):
        out.append(f"{h.name} = {INT_VALUES.get(h.name, 2)}")
    for h in by_kind.get("float", []):
        out.append(f"{h.name} = {FLOAT_VALUES.get(h.name, 0.01)}")
    epilogue = ""
    if fn is not None:
        args = ", ".join(f"{p.name}={p.name}" for p in fn.params if not p.has_default)
        call = f"_self.{fn.name}" if own is not None else fn.name
        if fn.loops:
            epilogue = f"_result = {call}({args})\n"
        else:  # a step function: a few calls, as a loop would make
            epilogue = f"for _i in range({BATCHES}):\n    _result = {call}({args})\n"
    if any(c.same_file for c in usable.values()):
        # The class is the fragment's own: everything is built after the fragment ran
        # (its definitions), before the call.
        epilogue = "\n".join(out[head:]) + "\n" + epilogue
        out = out[:head]
    filled = ([f"self: the project's `{own.cls}`"] if own is not None else []) + [f"{h.name}: {h.kind}" for h in holes]
    if fw == "torch" and cuda_stand_in(source):
        filled.append(".cuda(): a CPU copy where CUDA is absent")
    return Harness("\n".join(out) + "\n", epilogue, frameworks, filled, real_attempt, notes, total)


# The input a project's model takes, found by trying it (in eval mode, without a graph;
# its mode is restored): from its first layer with parameters (a Linear's in_features, a
# convolution's channels at a few image sizes, an Embedding's tokens, a recurrent layer's
# input size), then the stand-in's sizes. The targets follow its output: class indices
# along its dimension 1 (a classification loss), else values of its shape.
PROBE_TORCH = [
    "def _probe(model, n, regression):  # the input the project's model takes, and targets for its output",
    "    nn = torch.nn",
    "    leaf = next((m for m in model.modules() if not list(m.children()) and list(m.parameters(recurse=False))), None)",
    "    tries = []",
    "    if isinstance(leaf, nn.Linear):",
    "        tries.append(lambda b: torch.randn(b, leaf.in_features))",
    "    elif isinstance(leaf, nn.modules.conv._ConvNd):",
    "        tries += [lambda b, s=s: torch.randn(b, leaf.in_channels, *[s] * len(leaf.kernel_size)) for s in (28, 32, 64)]",
    "    elif isinstance(leaf, nn.Embedding):",
    "        tries.append(lambda b: torch.randint(0, leaf.num_embeddings, (b, _T)))",
    "    elif isinstance(leaf, nn.RNNBase):",
    "        tries.append(lambda b: torch.randn(b, _T, leaf.input_size))",
    "    elif isinstance(leaf, nn.modules.batchnorm._BatchNorm):",
    "        tries.append(lambda b: torch.randn(b, leaf.num_features, *[16] * (isinstance(leaf, nn.BatchNorm2d) * 2)))",
    "    tries += [lambda b: torch.randn(b, _F), lambda b: torch.randn(b, 1, 28, 28), lambda b: torch.randn(b, 3, 32, 32)]",
    "    was = model.training",
    "    model.eval()",
    "    try:",
    "        for make in tries:",
    "            try:",
    "                with torch.no_grad():",
    "                    out = model(make(2))",
    "            except Exception:",
    "                continue",
    "            while isinstance(out, (tuple, list)) and out:",
    "                out = out[0]",
    "            if isinstance(out, dict) and out:",
    "                out = next(iter(out.values()))",
    "            if not isinstance(out, torch.Tensor) or out.dim() < 1:",
    "                continue",
    "            x = make(n)",
    "            if regression or out.dim() < 2 or out.shape[1] < 2:",
    "                return x, torch.randn((n,) + tuple(out.shape[1:]))",
    "            return x, torch.randint(0, out.shape[1], (n,) + tuple(out.shape[2:]))",
    "    finally:",
    "        model.train(was)",
    "    raise RuntimeError(f'the project\\'s {type(model).__name__} took none of the inputs tried')",
]
PROBE_MXNET = [
    "def _probe(net, n, regression):  # the input the project's block takes, and targets for its output",
    "    def leaves(b):",
    "        kids = list(b._children.values())",
    "        if not kids:",
    "            yield b",
    "        for k in kids:",
    "            yield from leaves(k() if callable(k) and not isinstance(k, gluon.Block) else k)",
    "    leaf = next(leaves(net), None)",
    "    kind = type(leaf).__name__",
    "    tries = []",
    "    if kind.startswith('Conv'):",
    "        c = getattr(leaf, '_in_channels', 0) or 1",
    "        d = len(getattr(leaf, '_kwargs', {}).get('kernel', (3, 3)))",
    "        tries += [lambda b, s=s: nd.random.normal(shape=(b, c) + (s,) * d) for s in (28, 32)]",
    "    elif kind == 'Embedding':",
    "        tries.append(lambda b: nd.random.randint(0, leaf._kwargs['input_dim'], shape=(b, _T)).astype('float32'))",
    "    else:",
    "        tries.append(lambda b: nd.random.normal(shape=(b, _F)))",
    "    for make in tries:",
    "        try:",
    "            out = net(make(2))",
    "        except Exception:",
    "            continue",
    "        while isinstance(out, (tuple, list)) and out:",
    "            out = out[0]",
    "        x = make(n)",
    "        if regression or len(out.shape) < 2 or out.shape[1] < 2:",
    "            return x, nd.random.normal(shape=(n,) + tuple(out.shape[1:]))",
    "        return x, nd.random.randint(0, out.shape[1], shape=(n,) + tuple(out.shape[2:])).astype('float32')",
    "    raise RuntimeError(f'the project\\'s {type(net).__name__} took none of the inputs tried')",
]


METER_CLASS = [
    "class _Meter:  # a logging meter (`AverageMeter`): it only records",
    "    def __init__(self):",
    "        self.reset()",
    "    def reset(self):",
    "        self.val = self.avg = self.sum = self.count = self.value = 0.0",
    "    def update(self, val, n=1):",
    "        self.val = self.value = float(val)",
    "        self.sum += float(val) * n",
    "        self.count += n",
    "        self.avg = self.sum / self.count",
]
# A CPU-only run of a fragment that calls `.cuda()` (most forum posts do): the tensor's
# `.cuda()` becomes a differentiable copy on the CPU -- like the real one, a new tensor
# (a non-leaf when its source requires grad, which SL302 is about) -- and a module's
# `.cuda()` keeps it where it is. Nothing changes where CUDA is present.
# An optimizer (or Trainer) over a model the fragment builds itself: made at its first use,
# when the fragment has run the lines that build the model.
LAZY = [
    "class _Lazy:",
    "    def __init__(self, model, make):",
    "        self._model, self._make, self._made = model, make, None",
    "    def __getattr__(self, name):",
    "        if self._made is None:  # (the model, from the globals the fragment runs in)",
    "            self._made = self._make(__import__('sys')._getframe(1).f_globals[self._model])",
    "        return getattr(self._made, name)",
]


def _optimizers(holes: List[Hole], models: List[Hole], built: List[Hole], made: str) -> List[str]:
    """The lines that fill optimizer (or Trainer) holes, ``made`` formatted with the model's
    name: over a model the harness makes, directly; over one the fragment builds itself
    (``built``), when the fragment has run: at the optimizer's first use (``LAZY``)."""
    if not holes:
        return []
    if not built:
        return [f"{h.name} = {made.format(_model_for(h, models).name)}" for h in holes]
    return LAZY + [f"{h.name} = _Lazy({_model_for(h, built).name!r}, lambda _m: {made.format('_m')})" for h in holes]


def built_models(source: str) -> List[str]:
    """The names a fragment binds, at module level, to a network it builds: ``netD =
    nn.Sequential(...)``, ``model = Net()``, ``net = gluon.nn.Dense(...)``: a call of a
    name spelled as a class (a layer, a container, the fragment's own class) whose result
    the fragment calls."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    called = {n.func.id for n in ast.walk(tree) if type(n) is ast.Call and type(n.func) is ast.Name}
    out = []
    for node in tree.body:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and type(node.value) is ast.Call:
            f = node.value.func
            last = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
            if last[:1].isupper() and not last.isupper() and node.targets[0].id in called \
                    and not last.endswith(("Loss", "Optimizer", "Trainer", "Loader", "Dataset")):
                out.append(node.targets[0].id)
    return out


CUDA_STAND_IN = [
    "if not torch.cuda.is_available():  # (no CUDA here: `.cuda()` stays on the CPU)",
    "    torch.Tensor.cuda = lambda self, *args, **kwargs: self.to(copy=True)",
    "    torch.nn.Module.cuda = lambda self, *args, **kwargs: self",
]
CUDA_CALL = re.compile(r"\.cuda\(")


def cuda_stand_in(source: str) -> bool:
    return bool(CUDA_CALL.search(source))


def argparse_defaults(source: str) -> dict:
    """The defaults a program's ``add_argument`` calls give, as Python text, by
    destination (``--emb-size`` -> ``emb_size``; ``dest=``): a literal ``default=``, False
    for ``action="store_true"``, True for ``"store_false"``. An argument without a
    default (``required=True``, or a value nobody gave) has none; neither has one
    whose default is computed (a call, a name)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out = {}
    for node in ast.walk(tree):
        if not (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "add_argument"):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        names = [a.value for a in node.args if type(a) is ast.Constant and isinstance(a.value, str)]
        if "dest" in kw and type(kw["dest"]) is ast.Constant and isinstance(kw["dest"].value, str):
            dest = kw["dest"].value
        else:
            longs = [n for n in names if n.startswith("--")]
            first = longs[0] if longs else (names[0] if names else "")
            dest = first.lstrip("-").replace("-", "_")
        if not dest.isidentifier():
            continue
        action = kw.get("action")
        action = action.value if type(action) is ast.Constant else None
        if "default" in kw:
            try:
                value = ast.literal_eval(kw["default"])
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            out.setdefault(dest, repr(value))
        elif action in ("store_true", "store_false"):
            out.setdefault(dest, repr(action == "store_false"))
    return out


def _scalar(name: str) -> Optional[str]:
    """The value of a hyper-parameter by its name (``args.batch_size``), or None."""
    from scopelint.runtime_check.holes import FLOAT_SCALARS, INT_SCALARS

    if INT_SCALARS.match(name):
        return str(INT_VALUES.get(name, 2))
    if FLOAT_SCALARS.match(name):
        return str(FLOAT_VALUES.get(name, 0.01))
    return None


def _model_for(h: Hole, models: List[Hole]) -> Hole:
    """The model an optimizer or trainer steps: one whose name shares its suffix
    (``opt_G`` / ``netG``), else the first."""
    tail = h.name.lower().rstrip("_")
    for m in models:
        last = m.name.lower().rstrip("_")[-1:]
        if len(models) > 1 and last and tail.endswith(last) and last in "gd":
            return m
    for m in models:
        for part in ("enc", "dec", "gen", "disc", "actor", "critic", "teacher", "student"):
            if part in tail and part in m.name.lower():
                return m
    return models[0]
