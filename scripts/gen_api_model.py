"""Generate scopelint's API model of each framework from the installed frameworks.

    .venv/bin/pip install expecttest   # torch's own op database needs it
    .venv/bin/python scripts/gen_api_model.py [--out scopelint/core/api_model.json] [--check]

The static linter never imports torch or mxnet; this script does, once, and writes what
the rules need to know about each public callable as data (``scopelint/core/api.py``
reads it; ``docs/model.md`` describes it). Everything is *observed*, not listed by hand:

- **signatures** from ``torch.overrides.get_testing_overrides()`` (torch) and from
  ``inspect``/the operator docstrings (mxnet);
- **differentiable arguments** by *probing*: the op is called on small tensors where only
  one argument requires grad (``attach_grad()`` under ``record()`` for mxnet) and we look
  whether the result requires grad (torch) or the gradient reaching that argument is
  non-zero (mxnet). Torch's own OpInfo database
  (``torch.testing._internal.common_methods_invocations.op_db``) gives valid sample
  inputs for ~700 ops; other functions are probed with inputs made from their parameter
  names, and are left *unknown* (no record) when no probe runs;
- **result kinds**: a result that can carry a graph (``g``), one that cannot (``x``:
  integer/boolean tensors, samples, fresh data), a Python value (``n``: numbers, bools,
  dtypes, devices), a conversion from data (``c``: ``torch.tensor``, ``nd.array``), a
  factory of fresh data (``f``); a tuple result gets one kind per element;
- **layers**: each ``nn``/``gluon.nn`` layer class, and whether its behaviour depends on
  the train/eval flag (its code, or its bases', reads ``training``/``is_training()``, or
  it runs dropout/batch-norm);
- **distributions**: ``torch.distributions`` classes, ``has_rsample``;
- **constants**: dtypes, devices, layouts, memory formats, contexts, numbers.

``--check`` regenerates in memory and compares with the checked-in file (the test
``tests/test_api_model.py`` runs it when both frameworks are installed).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "scopelint" / "core" / "api_model.json"

G, X, N, C, FACTORY = "g", "x", "n", "c", "f"
VIEW = "gv"  # (while probing: ``g``, and a view of its input; recorded as ``"v": true``)


# --------------------------------------------------------------------------- torch
def _torch_model() -> dict:
    import torch
    import torch.overrides as ov

    torch.manual_seed(0)
    namespaces = {
        "torch": torch, "torch.nn.functional": torch.nn.functional, "torch.linalg": torch.linalg,
        "torch.fft": torch.fft, "torch.special": torch.special, "torch.autograd": torch.autograd,
        "torch.nn.init": torch.nn.init,
    }
    # Every public function object -> its qualified names.
    names_of: dict = {}
    for prefix, ns in namespaces.items():
        for attr in dir(ns):
            if attr.startswith("_"):
                continue
            obj = getattr(ns, attr, None)
            if obj is None or not callable(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
                continue
            names_of.setdefault(id(obj), set()).add(f"{prefix}.{attr}")
    overrides = ov.get_testing_overrides()
    funcs: dict = {}  # qname -> record
    methods: dict = {}  # Tensor method name -> record
    sig_of: dict = {}  # id(func) -> (param names, how many are required)
    for func, lam in overrides.items():
        try:
            params = [p for p in inspect.signature(lam).parameters.values()]
        except (TypeError, ValueError):
            continue
        named = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        names = [p.name for p in named]
        required = sum(1 for p in named if p.default is p.empty and p.kind is not p.KEYWORD_ONLY)
        if getattr(func, "__objclass__", None) is not None or "Tensor." in getattr(func, "__qualname__", "") or \
                type(func).__name__ in ("method_descriptor", "getset_descriptor", "wrapper_descriptor"):
            # A method: its parameters after the receiver (``self``, or ``input`` as the
            # overrides spell some).
            if names[:1] in (["self"], ["input"]):
                names, required = names[1:], max(0, required - 1)
            sig_of[id(func)] = (names, required)
            name = getattr(func, "__name__", None)
            if name and not name.startswith("__"):
                methods.setdefault(name, {"p": names, "_req": required})
            continue
        sig_of[id(func)] = (names, required)
        for q in names_of.get(id(func), ()):
            funcs.setdefault(q, {"p": names, "_req": required})

    def probe_rec(fn, args, kwargs, params, method: bool):
        """Which arguments are differentiable, and the result kind(s), on one input.

        Positional arguments are named by position (0, 1, ...; after the receiver for a
        method, which is ``self``), keyword arguments by name: signatures of overloaded
        functions are not reliable enough to name positions."""
        slots = [("self" if method else 0, args[0])] + [(i + (0 if method else 1), a) for i, a in enumerate(args[1:])]
        slots += list(kwargs.items())

        def floating(v):
            if torch.is_tensor(v):
                return v.is_floating_point()
            return isinstance(v, (list, tuple)) and bool(v) and all(torch.is_tensor(t) and t.is_floating_point() for t in v)

        def fresh(v, grad: bool):
            if torch.is_tensor(v):
                v = v.detach().clone()
                return v.requires_grad_(True) if grad else v
            if isinstance(v, (list, tuple)) and v and all(torch.is_tensor(t) for t in v):
                return type(v)(fresh(t, grad and t.is_floating_point()) for t in v)
            return v

        def call(grad_slot):
            pos, kw = [], {}
            for n, v in slots:
                v = fresh(v, n == grad_slot)
                if isinstance(n, str) and n != "self":
                    kw[n] = v
                else:
                    pos.append(v)
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                return fn(*pos, **kw)

        candidates = [n for n, v in slots if floating(v)]
        diff = set()
        out = None
        for name in candidates:
            out = call(name)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            if any(torch.is_tensor(o) and o.requires_grad for o in outs):
                diff.add(name)
        if out is None:
            out = call(None)
        kinds = [_torch_kind(o) for o in out] if isinstance(out, (tuple, list)) else _torch_kind(out)
        if isinstance(kinds, list) and not diff:
            kinds = [X if k == G else k for k in kinds]
        elif kinds == G and not diff and candidates:
            kinds = X  # float, but never requires grad (``bernoulli``, ``zeros_like``)
        elif kinds == G and torch.is_tensor(out) and out._is_view():
            kinds = VIEW  # (a view of its input: what that input is, it is too: an inference tensor)
        return diff, kinds

    def merge(rec: dict, diff: set, kinds) -> None:
        rec.setdefault("_d", set()).update(diff)
        rec.setdefault("_k", []).append(kinds)

    from torch.testing._internal.common_methods_invocations import op_db

    for op in op_db:
        if not op.supports_autograd:
            continue
        variants = [(op.op, False), (op.method_variant, True)]
        for alias in getattr(op, "aliases", ()) or ():
            variants += [(alias.op, False), (alias.method_variant, True)]
        try:
            samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=True))[:4]
        except Exception:
            continue
        for fn, method in variants:
            if fn is None:
                continue
            if method:
                name = getattr(fn, "__name__", None)
                rec = methods.setdefault(name, {"p": sig_of.get(id(fn), ([], 0))[0]}) if name else None
                params = rec["p"] if rec else []
            else:
                qs = names_of.get(id(fn), ())
                if not qs:
                    continue
                recs = [funcs.setdefault(q, {"p": sig_of.get(id(fn), ([], 0))[0]}) for q in qs]
                rec, params = recs[0], recs[0]["p"]
            if rec is None:
                continue
            for s in samples:
                try:
                    diff, kinds = probe_rec(fn, (s.input,) + tuple(s.args), dict(s.kwargs), params, method)
                except Exception:
                    continue
                if method:
                    merge(rec, diff, kinds)
                else:
                    for r in recs:
                        merge(r, diff, kinds)
    # Tensor methods the overrides do not list (``new_zeros``, ``new_tensor``): their names,
    # probed below like the rest.
    for name in dir(torch.Tensor):
        member = inspect.getattr_static(torch.Tensor, name, None)
        if name.startswith("_") or name in methods or isinstance(member, property) or not callable(member) \
                or type(member).__name__ == "getset_descriptor":
            continue
        try:
            params = [p for p in inspect.signature(getattr(torch.Tensor, name)).parameters.values()]
            names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)][1:]
            required = sum(1 for p in params[1:] if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD)
        except (TypeError, ValueError):
            names, required = ["size"], 1  # (a builtin: ``new_zeros(size)`` and its kind)
        methods[name] = {"p": names, "_req": required}
    # Functions and methods no OpInfo covers: probed with inputs made from their required
    # parameters' names (every required one: a shorter call may be another overload).
    for q, rec in list(funcs.items()):
        if "_k" in rec or "_req" not in rec:
            continue
        fn = _resolve(q)
        if fn is None:
            continue
        for params in _arities(rec["p"], rec["_req"]):
            for args in _torch_guess_args(params):
                try:
                    diff, kinds = probe_rec(fn, args, {}, rec["p"], False)
                except Exception:
                    continue
                merge(rec, diff, kinds)
                break
    for name, rec in list(methods.items()):
        if "_k" in rec or "_req" not in rec:
            continue
        fn = getattr(torch.Tensor, name, None)
        if fn is None:
            continue
        for params in _arities(rec["p"], rec["_req"]):
            for args in _torch_guess_args(["self"] + params):
                try:
                    diff, kinds = probe_rec(fn, args, {}, rec["p"], True)
                except Exception:
                    continue
                merge(rec, diff, kinds)
                break

    # Factories and conversions: the functions that take no tensor (overrides ignores them).
    for func in ov.get_ignored_functions():
        for q in names_of.get(id(func), ()):
            if q in funcs:
                continue
            kind = _torch_creation_kind(torch, func)
            if kind is not None:
                funcs[q] = {"p": [], "_k": [kind], "_d": set()}
    for legacy in ("FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "BoolTensor", "ByteTensor", "Tensor"):
        funcs[f"torch.{legacy}"] = {"p": [], "_k": [C], "_d": set()}
    # Tensor attributes that are not methods: views, buffers, Python values.
    attrs = {}
    x = torch.randn(3, 3, requires_grad=True)
    for name in dir(torch.Tensor):
        if name.startswith("_") or name in methods:
            continue
        try:
            member = inspect.getattr_static(torch.Tensor, name)
        except AttributeError:
            continue
        if callable(member) and not isinstance(member, property) and type(member).__name__ != "getset_descriptor":
            continue
        try:
            v = getattr(x, name)
        except Exception:
            continue
        if name == "data":
            attrs[name] = "left"
        elif name == "grad":
            attrs[name] = X
        elif torch.is_tensor(v):
            attrs[name] = (VIEW if v._is_view() else G) if v.requires_grad else X
        else:
            attrs[name] = N
    # Tensor methods that leave the graph (their result is not a tensor of the graph).
    for name in ("item", "tolist", "numpy"):
        methods.setdefault(name, {"p": []})["_k"] = [N if name != "numpy" else C]
        methods[name]["_d"] = set()
    # Moves to a GPU cannot be observed on a CPU build: they are ``to`` with a device.
    if "r" not in methods.get("cuda", {}) and "_k" not in methods.get("cuda", {}):
        methods["cuda"] = {"p": ["device", "non_blocking", "memory_format"], "_k": [G], "_d": {"self"}}
    detach = methods.setdefault("detach", {"p": []})
    detach["_k"], detach["_d"] = ["left"], set()

    constants = sorted(
        f"torch.{a}" for a in dir(torch)
        if not a.startswith("_") and isinstance(getattr(torch, a, None), (torch.dtype, torch.layout, torch.memory_format, float, int, bool))
    )
    value_funcs = sorted({
        "torch.device", "torch.finfo", "torch.iinfo", "torch.get_default_dtype", "torch.is_tensor", "torch.is_floating_point",
        "torch.is_grad_enabled", "torch.is_inference_mode_enabled", "torch.numel", "torch.manual_seed", "torch.seed",
        "torch.initial_seed", "torch.get_num_threads", "torch.set_num_threads", "torch.set_default_dtype",
        "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.current_device", "torch.Size",
        "torch.Generator", "torch.promote_types", "torch.result_type", "torch.can_cast", "torch.is_complex",
        "torch.is_nonzero", "torch.get_rng_state", "torch.set_rng_state", "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all", "torch.backends.cudnn.is_available", "torch.use_deterministic_algorithms",
        "torch.set_printoptions", "torch.set_float32_matmul_precision", "torch.compile", "torch.jit.script",
        "torch.jit.trace", "torch.save", "torch.load", "torch.cuda.synchronize", "torch.cuda.empty_cache",
        "torch.cuda.max_memory_allocated", "torch.cuda.memory_allocated", "torch.cuda.reset_peak_memory_stats",
    })
    layers = _torch_layers(torch)
    dists = _torch_distributions(torch)
    return {
        "functions": _finish(funcs),
        "methods": _finish(methods),
        "attributes": dict(sorted(attrs.items())),
        "constants": constants,
        "value_functions": value_funcs,
        "layers": layers,
        "distributions": dists,
        "distribution_methods": {"sample": X, "sample_n": X, "rsample": G, "log_prob": G, "entropy": G, "cdf": G,
                                 "icdf": G, "mean": G, "mode": G, "variance": G, "stddev": G, "perplexity": G,
                                 "enumerate_support": X},
    }


def _resolve(q: str):
    import importlib
    mod, _, attr = q.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), attr)
    except Exception:
        return None


def _torch_kind(o) -> str:
    import torch
    if torch.is_tensor(o):
        if o.requires_grad:
            return G
        return G if (o.is_floating_point() or o.is_complex()) else X
    if o is None or isinstance(o, (bool, int, float, complex, str, torch.dtype, torch.device, torch.Size)):
        return N
    return X


_ARG_GUESSES = {
    "dim": 0, "dims": (0,), "axis": 0, "p": 2.0, "k": 1, "n": 2, "diagonal": 0, "offset": 0, "alpha": 1.0,
    "value": 1.0, "exponent": 2.0, "min": -1.0, "max": 1.0, "lambd": 0.5, "eps": 1e-5, "negative_slope": 0.01,
    "beta": 1.0, "threshold": 0.5, "approximate": "none", "reduction": "mean", "size": (3, 3), "shape": (3, 3),
    "kernel_size": 2, "output_size": 2, "upscale_factor": 1, "downscale_factor": 1, "groups": 1, "chunks": 1,
    "split_size_or_sections": 1, "sections": 1, "indices_or_sections": 1, "repeats": 1, "decimals": 0,
    "correction": 1, "unbiased": True, "keepdim": False, "ord": 2, "q": 0.5, "source": 0, "destination": 1,
    "dim0": 0, "dim1": 1, "start_dim": 0, "end_dim": -1, "padding": 1, "pad": (1, 1), "scale_factor": 2.0,
    "num_samples": 1, "num_classes": 3, "depth": 3, "num_outputs": 1, "reps": (1, 1), "begin": (0, 0), "end": (2, 2),
    "act_type": "relu", "a_min": 0.3, "a_max": 0.6, "start": 0, "stop": 3, "val": 1.0, "num_hidden": 2, "kernel": (1, 1), "num_filter": 1, "lhs_axes": (0,), "rhs_axes": (0,), "generator": None, "replacement": True, "dtype": "torch.float32",
}


_OPTIONS = ("out", "dtype", "layout", "device", "pin_memory", "requires_grad", "memory_format", "generator",
            "inplace", "non_blocking", "copy", "name", "names", "sparse_grad", "keepdim", "size_average", "reduce")


def _arities(params, required):
    """The parameter lists to probe a function with: its required ones, and every one
    before the first option (an overload may take more: ``torch.where(c, x, y)``)."""
    full = []
    for name in params:
        if name in _OPTIONS:
            break
        full.append(name)
    out = [list(params[:required])]
    if len(full) > required:
        out.append(full)
    return out


def _torch_guess_args(params):
    """Calls made from parameter names: names of options get a plausible value, the
    others a float tensor in (0.1, 0.9); then each tensor in turn made an integer one
    (an index) for functions that need one."""
    import torch
    if not params:
        return
    base = []
    tensor_slots = []
    for i, name in enumerate(params):
        if name in _ARG_GUESSES:
            guess = _ARG_GUESSES[name]
            base.append(getattr(torch, guess[6:]) if isinstance(guess, str) and guess.startswith("torch.") else guess)
        elif name in ("index", "indices", "target_index"):
            base.append(torch.zeros(3, 3, dtype=torch.long))
        elif name in ("condition", "mask"):
            base.append(torch.rand(3, 3) > 0.5)
        else:
            base.append(torch.rand(3, 3) * 0.8 + 0.1)
            tensor_slots.append(i)
    yield tuple(base)
    for i in tensor_slots:
        alt = list(base)
        alt[i] = torch.zeros(3, dtype=torch.long) if len(params) > 1 else torch.tensor([0, 1, 2])
        yield tuple(alt)


def _torch_creation_kind(torch, func):
    name = getattr(func, "__name__", "")
    if name in ("tensor", "as_tensor", "from_numpy", "asarray", "frombuffer", "from_file"):
        try:
            t = torch.randn(2, requires_grad=True)
            out = func(t) if name in ("tensor", "as_tensor", "asarray") else None
        except Exception:
            out = None
        # ``as_tensor``/``asarray`` of a tensor hand the same tensor back: no conversion.
        if out is not None and out.requires_grad:
            return None
        return C
    for args in ((3,), (3, 3), (0, 3)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = func(*args)
        except Exception:
            continue
        if torch.is_tensor(out):
            return FACTORY
        return N
    return None


def _source_of(cls) -> str:
    out = []
    for klass in inspect.getmro(cls):
        if klass.__module__.split(".")[0] not in ("torch", "mxnet") or klass.__name__ in ("Module", "Block", "HybridBlock", "object"):
            continue
        try:
            out.append(inspect.getsource(klass))
        except (OSError, TypeError):
            pass
    return "\n".join(out)


_MODE_WORDS = re.compile(r"\bself\.training\b|\btraining\s*=\s*self\.training|is_training\(\)|\bF\.dropout|\bF\.batch_norm|"
                         r"\bF\.instance_norm|\b_VF\.(lstm|gru|rnn)|npx\.dropout|F\.Dropout|F\.BatchNorm")


def _mode_dependent(classes: dict) -> dict:
    """name -> whether the class's behaviour depends on the train/eval flag: its code (or
    its bases') reads it, or it builds a layer that does (``Dropout(...)`` in
    ``TransformerDecoderLayer``), to a fixpoint."""
    sources = {name: _source_of(cls) for name, cls in classes.items()}
    mode = {name: bool(_MODE_WORDS.search(src)) for name, src in sources.items()}
    changed = True
    while changed:
        changed = False
        words = [n for n, m in mode.items() if m]
        if not words:
            break
        uses = re.compile(r"\b(" + "|".join(sorted(words)) + r")\(")
        for name, src in sources.items():
            if not mode[name] and uses.search(src):
                mode[name] = changed = True
    return mode


def _torch_layers(torch) -> dict:
    classes = {}
    for attr in dir(torch.nn):
        cls = getattr(torch.nn, attr)
        if inspect.isclass(cls) and issubclass(cls, torch.nn.Module) and not attr.startswith("_") and attr != "Module":
            classes[attr] = cls
    mode = _mode_dependent(classes)
    out = {}
    for attr, cls in classes.items():
        container = attr in ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
        rec = {"mode": None if container else mode[attr], "loss": issubclass(cls, torch.nn.modules.loss._Loss)}
        params = sorted(set(re.findall(r"self\.(\w+)\s*=\s*(?:nn\.)?Parameter\(", _source_of(cls))))
        if params:
            rec["params"] = params  # (its attributes that are parameters: ``weight``, ``bias``)
        out[f"torch.nn.{attr}"] = rec
    return dict(sorted(out.items()))


def _torch_distributions(torch) -> dict:
    out = {}
    D = torch.distributions
    for attr in dir(D):
        cls = getattr(D, attr)
        if inspect.isclass(cls) and issubclass(cls, D.Distribution) and cls is not D.Distribution:
            out[f"torch.distributions.{attr}"] = {"rsample": bool(getattr(cls, "has_rsample", False))}
    return dict(sorted(out.items()))


def _finish(records: dict) -> dict:
    """Records with their observed kinds joined; unprobed ones keep only their signature."""
    out = {}
    for name, rec in sorted(records.items()):
        done = {"p": rec.get("p", [])}  # (a method's: after its receiver)
        if "_k" in rec:
            kinds = [k for k in rec["_k"] if k is not None]
            done["d"] = sorted(rec.get("_d", set()), key=lambda d: (isinstance(d, str), str(d)))
            if kinds and all(k == VIEW for k in kinds):
                done["v"] = True
            done["r"] = _join_kinds([G if k == VIEW else k for k in kinds])
            if "rf" in rec:
                done["rf"], done["fl"] = rec["rf"], rec["fl"]
        out[name] = done
    return out


def _join_kinds(kinds):
    if not kinds:
        return None
    lists = [k for k in kinds if isinstance(k, list)]
    if lists and len(lists) == len(kinds) and len({len(k) for k in lists}) == 1:
        return [G if any(k[i] == G for k in lists) else lists[0][i] for i in range(len(lists[0]))]
    flat = [k for k in kinds if not isinstance(k, list)]
    if not flat:
        return G
    if G in flat:
        return G
    return flat[0] if len(set(flat)) == 1 else G


# --------------------------------------------------------------------------- mxnet
def _mxnet_model() -> dict:
    import mxnet as mx
    from mxnet import autograd, nd

    mx.random.seed(0)
    namespaces = {
        "mxnet.nd": nd, "mxnet.nd.random": nd.random, "mxnet.nd.linalg": nd.linalg, "mxnet.nd.contrib": nd.contrib,
        "mxnet.np": mx.np, "mxnet.npx": mx.npx, "mxnet.np.random": mx.np.random, "mxnet.np.linalg": mx.np.linalg,
    }
    funcs = {}
    for prefix, ns in namespaces.items():
        for attr in dir(ns):
            if attr.startswith("_"):
                continue
            obj = getattr(ns, attr, None)
            if obj is None or not callable(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
                continue
            params = _mx_params(obj)
            rec = {"p": params}
            kinds, diff, extra = _mx_probe(mx, obj, params, prefix.startswith("mxnet.np"))
            if kinds is not None:
                rec["_k"], rec["_d"] = [kinds], diff
                rec.update(extra)
            funcs[f"{prefix}.{attr}"] = rec
    for q in ("mxnet.nd.array", "mxnet.np.array", "mxnet.nd.from_numpy", "mxnet.np.asarray"):
        funcs[q] = {"p": ["source_array"], "_k": [C], "_d": set()}
    methods = {}
    x = nd.random.uniform(0.5, 1.5, shape=(3, 3))
    for name in dir(nd.NDArray):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(nd.NDArray, name, None)
        if isinstance(member, property) or not callable(member):
            continue
        fn = getattr(nd.NDArray, name)
        fluent = re.search(r"fluent method for :py:func:`(\w+)`", fn.__doc__ or "")
        base = funcs.get(f"mxnet.nd.{fluent.group(1)}") if fluent else None
        if base is not None and base.get("p"):
            # ``x.pick(i)`` is ``nd.pick(x, i)``: the function's record, its first
            # parameter the receiver.
            first = base["p"][0]
            rec = {"p": base["p"][1:]}
            if "_k" in base:
                rec["_k"] = list(base["_k"])
                rec["_d"] = {"self" if d == first else d for d in base["_d"]}
            methods[name] = rec
            continue
        params = _mx_params(fn)
        params = params[1:] if params[:1] == ["self"] else params
        rec = {"p": params}
        kinds, diff, extra = _mx_probe(mx, fn, ["self"] + params, False, method=True)
        if kinds is not None:
            rec["_k"], rec["_d"] = [kinds], diff
            rec.update(extra)
        methods[name] = rec
    for name in ("asnumpy", "asscalar", "tolist"):
        methods[name] = {"p": ["self"], "_k": [C if name == "asnumpy" else N], "_d": set()}
    methods["detach"] = {"p": ["self"], "_k": ["left"], "_d": set()}
    for name in ("attach_grad", "wait_to_read", "backward"):
        methods[name] = {"p": methods.get(name, {}).get("p", ["self"]), "_k": [N], "_d": set()}
    attrs = {}
    for name in dir(nd.NDArray):
        member = inspect.getattr_static(nd.NDArray, name, None)
        if name.startswith("_") or not isinstance(member, property):
            continue
        if name in ("T",):
            attrs[name] = G
        elif name == "grad":
            attrs[name] = X
        else:
            attrs[name] = N
    layers = {}
    from mxnet import gluon
    classes = {}
    for prefix, ns in (("mxnet.gluon.nn", gluon.nn), ("mxnet.gluon.rnn", gluon.rnn)):
        for attr in dir(ns):
            cls = getattr(ns, attr)
            if inspect.isclass(cls) and issubclass(cls, gluon.Block) and cls not in (gluon.Block, gluon.HybridBlock):
                classes[f"{prefix}.{attr}"] = cls
    mode = _mode_dependent({q.rpartition(".")[2]: c for q, c in classes.items()})
    for q in classes:
        attr = q.rpartition(".")[2]
        container = attr in ("Sequential", "HybridSequential", "Concatenate", "HybridConcatenate")
        layers[q] = {"mode": None if container else mode[attr], "loss": False}
    for attr in dir(gluon.loss):
        cls = getattr(gluon.loss, attr)
        if inspect.isclass(cls) and issubclass(cls, gluon.loss.Loss):
            layers[f"mxnet.gluon.loss.{attr}"] = {"mode": False, "loss": True}
    constants = sorted({"mxnet.cpu", "mxnet.gpu", "mxnet.Context", "mxnet.context.cpu", "mxnet.context.gpu",
                        "mxnet.context.Context", "mxnet.context.current_context", "mxnet.current_context",
                        "mxnet.num_gpus", "mxnet.context.num_gpus", "mxnet.autograd.is_training",
                        "mxnet.autograd.is_recording", "mxnet.random.seed", "mxnet.np.float32", "mxnet.np.float16",
                        "mxnet.np.int32", "mxnet.np.int64", "mxnet.np.uint8", "mxnet.np.bool_", "mxnet.np.float64"})
    return {
        "functions": _finish(funcs),
        "methods": _finish(methods),
        "attributes": dict(sorted(attrs.items())),
        "constants": [c for c in constants if not c.endswith(("cpu", "gpu", "Context", "current_context", "num_gpus",
                                                               "is_training", "is_recording", "seed"))],
        "value_functions": [c for c in constants if c.endswith(("cpu", "gpu", "Context", "current_context", "num_gpus",
                                                                 "is_training", "is_recording", "seed"))],
        "layers": dict(sorted(layers.items())),
        "distributions": {},
        "distribution_methods": {},
    }


def _mx_params(fn) -> list:
    try:
        sig = inspect.signature(fn)
        names = [p.name for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if names:
            return names
    except (TypeError, ValueError):
        pass
    doc = getattr(fn, "__doc__", "") or ""
    block = doc.split("Parameters\n----------\n", 1)[1] if "Parameters\n----------\n" in doc else ""
    return re.findall(r"^(\w+) : ", block.split("\n\nReturns", 1)[0], re.M)


def _mx_array_params(fn, params) -> list:
    """The parameters the docstring types as arrays (``data : NDArray``, ``data :
    NDArray[]``; not ``out``), or, with no types documented (``mx.np``), the required
    ones."""
    doc = getattr(fn, "__doc__", "") or ""
    typed = dict(re.findall(r"^\s*(\w+) : ([^\n]*)$", doc, re.M))
    out = [p for p in params if p != "out" and typed.get(p, "").startswith(("NDArray", "ndarray", "array_like", "_Symbol"))
           and "optional" not in typed[p]]
    if not out:
        try:
            sig = inspect.signature(fn)
            out = [p.name for p in sig.parameters.values() if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
                   and p.name != "self" and p.name not in _ARG_GUESSES]
        except (TypeError, ValueError):
            pass
    return out


_MX_INDEX = {"index", "indices", "label", "sequence_length", "idx", "condition", "mask"}


def _mx_probe(mx, fn, params, numpy_api: bool, method: bool = False):
    """``_mx_probe_here`` in forked children, without and with the boolean options set
    (each its own child: an option may crash what runs without it): (the kind of the
    default call, its differentiable arguments, and -- where setting the options adds
    outputs, ``sample_multinomial(p, get_prob=True)`` -- ``{"rf": their kinds, "fl":
    the options}``)."""
    kind, diff = _mx_probe_child(mx, fn, params, numpy_api, method, False)
    more_kind, more = _mx_probe_child(mx, fn, params, numpy_api, method, True)
    if kind is None:
        return more_kind, more, {}
    if more_kind is None or more_kind == N:
        return kind, diff, {}
    if isinstance(more_kind, list) and (not isinstance(kind, list) or len(kind) < len(more_kind)):
        doc = getattr(fn, "__doc__", "") or ""
        flags = sorted(p for p, t in re.findall(r"^\s*(\w+) : ([^\n]*)$", doc, re.M)
                       if t.split(",")[0].strip() in ("bool", "boolean") and p not in ("out", "name"))
        return kind, diff | more, {"rf": more_kind, "fl": flags}  # (an option that adds an output)
    if isinstance(kind, list):
        return kind, diff | more, {}
    diff = diff | more
    return (G if diff else kind), diff, {}


def _mx_probe_child(mx, fn, params, numpy_api: bool, method: bool, flags: bool):
    """``_mx_probe_here`` in a forked child: some operators crash the process on inputs
    they do not expect (a segmentation fault is an unknown, not the end of the run)."""
    import os
    import pickle
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(r)
        try:
            if numpy_api:
                mx.npx.set_np()  # (0-d results, NumPy shape semantics)
            result = _mx_probe_here(mx, fn, params, numpy_api, method, flags)
        except BaseException:
            result = (None, set())
        with os.fdopen(w, "wb") as f:
            pickle.dump(result, f)
        os._exit(0)
    os.close(w)
    import select
    import signal
    import time
    chunks = []
    deadline = time.monotonic() + 120  # (some operators hang in a forked child: an unknown)
    with os.fdopen(r, "rb") as f:
        while True:
            left = deadline - time.monotonic()
            ready = select.select([f], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                os.kill(pid, signal.SIGKILL)
                chunks = []
                break
            chunk = os.read(f.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:
        return None, set()


def _mx_probe_here(mx, fn, params, numpy_api: bool, method: bool = False, with_flags: bool = False):
    """(result kind, differentiable params) observed on one call, or (None, set()):
    each array parameter in turn is the only one that records a gradient."""
    from mxnet import autograd
    arrays = [p for p in _mx_array_params(fn, params) if p != "self"]
    if method:
        arrays = ["self"] + arrays
    mod = mx.np if numpy_api else mx.nd
    if not arrays:
        # A factory of fresh data (``nd.zeros(shape)``, ``nd.random.normal(0, 1, shape)``)?
        try:
            sig = inspect.signature(fn)
            needed = {q.name: _ARG_GUESSES[q.name] for q in sig.parameters.values() if q.default is q.empty and q.name in _ARG_GUESSES}
        except (TypeError, ValueError):
            needed = {}
        for kw in ({**needed, "shape": (3, 3)}, {**needed, "size": (3, 3)}, needed):
            if any(k not in params for k in kw):
                continue
            try:
                with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                    warnings.simplefilter("ignore")
                    out = fn(**kw)
            except Exception:
                continue
            return (FACTORY if hasattr(out, "asnumpy") else N), set()
        return None, set()
    doc = getattr(fn, "__doc__", "") or ""
    typed = re.findall(r"^\s*(\w+) : ([^\n]*)$", doc, re.M)
    listed = {p for p, t in typed if t.startswith("NDArray[]")}
    # Options the operator requires (``depth : int, required``): a plausible value.
    options = {p: _ARG_GUESSES[p] for p, t in typed if "required" in t and p in _ARG_GUESSES and p not in arrays}
    try:  # (and those the signature requires: ``np.take(a, indices)``, ``nd.zeros(shape)``)
        sig = inspect.signature(fn)
        options.update({q.name: _ARG_GUESSES[q.name] for q in sig.parameters.values()
                        if q.default is q.empty and q.name in _ARG_GUESSES and q.name not in arrays})
    except (TypeError, ValueError):
        pass

    def make(name):
        if name in _MX_INDEX:
            return mod.array([0, 1, 2], dtype="float32" if not numpy_api else "int64")
        return mod.random.uniform(0.2, 0.8, size=(3, 3)) if numpy_api else mod.random.uniform(0.2, 0.8, shape=(3, 3))

    def call(grad_name):
        values = {}
        for name in arrays:
            v = [make(name), make(name)] if name in listed else make(name)
            if name == grad_name:
                for a in (v if isinstance(v, list) else [v]):
                    a.attach_grad()
            values[name] = v
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            with autograd.record():
                pos = []
                kw = dict(options)
                for name in arrays:
                    v = values[name]
                    if name == "self":
                        pos.insert(0, v)
                    elif name in listed:
                        pos.extend(v)
                    elif method:
                        pos.append(v)
                    else:
                        kw[name] = v
                out = fn(*pos, **kw)
                outs = out if isinstance(out, (list, tuple)) else [out]
                tensors = [o for o in outs if hasattr(o, "asnumpy")]
                if not tensors or grad_name is None:
                    return out, []
                heads = [o.astype("float32").sum() if hasattr(o, "asnumpy") else None for o in outs]
            # Each output alone: which carry a gradient back (``sample_multinomial``'s
            # sample does not, its log-probability does).
            got = []
            leaves = values[grad_name] if isinstance(values[grad_name], list) else [values[grad_name]]
            for head in heads:
                if head is None:
                    got.append(False)
                    continue
                for a in leaves:
                    if a.grad is not None:
                        a.grad[:] = 0
                head.backward(retain_graph=True)
                got.append(any(a.grad is not None and float(abs(a.grad).sum().asnumpy()) > 0 for a in leaves))
            mx.nd.waitall()
            return out, got

    # Boolean options may switch a differentiable output on (``sample_multinomial(p,
    # get_prob=True)`` also returns the log-probability of its sample): probed both ways.
    if with_flags:
        flags = {p: True for p, t in typed if t.split(",")[0].strip() in ("bool", "boolean") and p not in ("out", "name")}
        if not flags:
            return None, set()
        options.update(flags)
    diff = set()
    ran = False
    through = None  # per output: whether a gradient came back through it
    many = False
    for name in arrays:
        try:
            out, got = call(name)
        except Exception:
            continue
        ran = True
        many = isinstance(out, (list, tuple))
        if not hasattr(out, "asnumpy") and not many:
            return N, set()
        through = got if through is None else [a or b for a, b in zip(through, got)]
        if any(got):
            diff.add("self" if name == "self" else (params.index(name) - (1 if method else 0) if name in params and method else name))
    if not ran:
        return None, set()
    if many and through:
        return [G if g else X for g in through], diff
    return (G if diff else X), diff


def generate() -> dict:
    model = {"about": __doc__.split("\n\n")[0], "frameworks": {}}
    import torch
    model["frameworks"]["torch"] = {"version": torch.__version__.split("+")[0], **_torch_model()}
    import mxnet
    model["frameworks"]["mxnet"] = {"version": mxnet.__version__, **_mxnet_model()}
    return model


def dump(model: dict) -> str:
    return json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--check", action="store_true", help="compare with the checked-in model; exit 1 if it differs")
    a = ap.parse_args(argv)
    text = dump(generate())
    if a.check:
        old = Path(a.out).read_text(encoding="utf-8")
        if old != text:
            print(f"{a.out} differs from what the installed frameworks give: regenerate it", file=sys.stderr)
            return 1
        print(f"{a.out}: up to date")
        return 0
    Path(a.out).write_text(text, encoding="utf-8")
    print(f"wrote {a.out} ({len(text) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
