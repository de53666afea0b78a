"""Bootstrap run in a fresh interpreter for one variant of a program.

    python _child.py < CONFIG-PIPE

Reads its config from stdin (a pipe from the harness) and closes it; takes the trace
pipe's descriptor and the run's token out of it, moves the descriptor to a random
number (close-on-exec), drops to the unprivileged user the harness names (as root),
sets resource limits and seeds, patches the frameworks so that it can *record* (never
change) what the program does, runs the program with runpy, and writes a JSON trace:
backward/grad calls with the gradients they produced, parameters after optimizer
steps, forward outputs of modules/blocks, the exception or exit, graphs still alive
at the end, peak memory, and any CUDA/GPU placement mapped to the CPU.

Standalone on purpose: it imports nothing from scopelint (only the standard library
before the program's frameworks), so the child starts fast and the program cannot
see the linter.

oneDNN: on some processors oneDNN cannot build a primitive torch asks it for (torch
2.13's CPU LSTM under bf16 autocast: "could not create a primitive descriptor for the
LSTM forward propagation primitive"). The trace marks such an exception
(``exception["onednn"]``) and the verifier runs both variants again with
``"onednn": false`` in the config: ``torch.backends.mkldnn.enabled = False`` before the
program starts (MXNet: ``MXNET_MKLDNN_ENABLED=0``, set by the harness).

Test hook (internal, not an interface): with ``_SCOPELINT_FORCE_ONEDNN_ERROR`` set in
the environment, torch's LSTM (``torch._VF.lstm``) raises exactly that oneDNN error on
the CPU while ``torch.backends.mkldnn.enabled`` is on, so that the fallback is
exercised on machines where oneDNN works. ``set_onednn`` is also what the fixture tests
use to run a fixture with oneDNN off.
"""

import gc
import json
import math
import os
import re
import resource
import sys
import time
import traceback

MAX_EVENTS = 200  # per kind; beyond that only counted
MAX_TENSORS = 64  # tensors summarised per event
MAX_GRAPH_NODES = 20000
HEAD_VALUES = 128  # leading values kept per summarised tensor (for max |difference|)
MAX_VALUES = 400000  # per trace; beyond, summaries keep only sums

# oneDNN's own error texts (dnnl::error: "could not create a primitive descriptor for
# ...", "could not execute a primitive"), its diagnostic hint, or the library named.
ONEDNN_ERROR = re.compile(
    r"could not (?:create|execute|initialize)\b[^\n]*\bprimitive"
    r"|\b(?:ONEDNN|DNNL)_VERBOSE\b"
    r"|\b(?:onednn|one-dnn|mkldnn|mkl-dnn|dnnl)\b",
    re.IGNORECASE,
)
FORCE_ONEDNN_ENV = "_SCOPELINT_FORCE_ONEDNN_ERROR"
FORCED_ONEDNN_MESSAGE = (
    "could not create a primitive descriptor for the LSTM forward propagation primitive. "
    "Run workload with environment variable ONEDNN_VERBOSE=all to get additional diagnostic information."
)


def is_onednn_error(type_name, text):
    """An exception that oneDNN raised, from its class name and text (as a traceback
    shows them): a RuntimeError, which torch's and MXNet's errors are."""
    return type_name in ("RuntimeError", "MXNetError") and ONEDNN_ERROR.search(text or "") is not None


def set_onednn(torch, enabled):
    """Turn torch's oneDNN backend off when ``enabled`` is false (before the program
    runs); under the test hook, make the CPU LSTM refuse to run while it is on."""
    if not enabled:
        torch.backends.mkldnn.enabled = False
    if os.environ.get(FORCE_ONEDNN_ENV):
        from torch import _VF

        real_lstm = _VF.lstm

        def lstm(*args, **kwargs):
            first = args[0] if args else None
            on_cpu = not isinstance(first, torch.Tensor) or first.device.type == "cpu"
            if on_cpu and torch.backends.mkldnn.enabled:
                raise RuntimeError(FORCED_ONEDNN_MESSAGE)
            return real_lstm(*args, **kwargs)

        _VF.lstm = lstm  # torch.nn.LSTM calls _VF.lstm (the same module object)


class Trace:
    def __init__(self, cfg):
        self.cfg = cfg
        self.program = cfg["program"]
        self.data = {
            "status": "ok",
            "exception": None,
            "exit": None,
            "frameworks": [],
            "missing": [],
            "device_map": [],
            "no_cuda": False,
            "backward": [],
            "grad": [],
            "steps": [],
            "outputs": [],
            "counts": {"backward": 0, "grad": 0, "steps": 0, "outputs": 0, "outputs_recorded": 0},
            "graph": None,
            "rss_start_kb": 0,
            "rss_peak_kb": 0,
            "seconds": 0.0,
            "instrumentation_errors": [],
        }
        self.depth = 0  # inside an instrumented call: nested ones are not recorded again
        self.written = False
        self.seq = 0  # every event's place in program order, across kinds
        self.values_left = MAX_VALUES

    def note_error(self, where, exc):
        errs = self.data["instrumentation_errors"]
        if len(errs) < 10:
            errs.append(f"{where}: {type(exc).__name__}: {exc}"[:300])

    def add(self, kind, counter, event):
        self.data["counts"][counter] += 1
        event["seq"] = self.seq
        self.seq += 1
        if len(self.data[kind]) < MAX_EVENTS:
            self.data[kind].append(event)

    def take_values(self, numel):
        """How many leading values of a tensor to keep (within the trace's budget)."""
        n = min(numel, HEAD_VALUES, self.values_left)
        self.values_left -= n
        return n

    def program_frame(self):
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_filename == self.program:
                return f
            f = f.f_back
        return None

    def names(self, wanted, kinds, members):
        """Names the program gives the objects whose ids are in ``wanted``: variables of
        the running program frame (locals, then globals, then ``self``'s attributes)
        bound to them, or ``var.param`` for parameters of a module/block so bound
        (``members(obj)`` yields (name, param) pairs; ``kinds`` are the tensor types)."""
        found = {}
        f = self.program_frame()
        if f is None or not wanted:
            return found
        scopes = [f.f_locals]
        if f.f_globals is not f.f_locals:
            scopes.append(f.f_globals)
        me = f.f_locals.get("self")
        if me is not None and isinstance(getattr(me, "__dict__", None), dict):
            scopes.append({f"self.{k}": v for k, v in vars(me).items()})
        for scope in scopes:
            for var, obj in list(scope.items()):
                if var.startswith("__") or len(found) == len(wanted):
                    continue
                try:
                    if isinstance(obj, kinds):
                        if id(obj) in wanted:
                            found.setdefault(id(obj), var)
                        continue
                    pairs = members(obj)
                    if pairs is None:
                        continue
                    for n, p in pairs:
                        if id(p) in wanted:
                            found.setdefault(id(p), f"{var}.{n}")
                except Exception:
                    continue
        return found

    def map_device(self, what):
        if what not in self.data["device_map"]:
            self.data["device_map"].append(what)

    def program_line(self):
        """The innermost line of the program that is running now."""
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_filename == self.program:
                return f.f_lineno
            f = f.f_back
        return None

    def write(self):
        if self.written:
            return
        self.written = True
        try:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            self.data["rss_peak_kb"] = int(usage.ru_maxrss)
            self.data["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 3)
            self.data["seconds"] = round(time.time() - self.started, 3)
        except Exception:
            pass
        payload = json.dumps(self.data).encode("utf-8")
        frame = b"SCOPELINT-TRACE %s %d\n" % (self._token.encode(), len(payload)) + payload
        view = memoryview(frame)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        os.close(self._fd)


def _num(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


# --- torch ------------------------------------------------------------------------
def install_torch(T, map_cuda):
    import torch

    T.data["frameworks"].append("torch")
    set_onednn(torch, T.cfg.get("onednn", True))
    if T.cfg["device"] == "cuda" and not torch.cuda.is_available():
        T.data["no_cuda"] = True

    def summary(t):
        try:
            if t is None:
                return None
            if not isinstance(t, torch.Tensor):
                return None
            shape = list(t.shape)
            with torch.no_grad():
                d = t.detach()
                if d.is_complex():
                    d = d.abs()
                if d.dtype == torch.bool:
                    d = d.to(torch.int64)
                if d.numel() == 0:
                    return {"shape": shape, "sum": 0.0, "abs": 0.0}
                d = d.to(torch.float64)
                out = {"shape": shape, "sum": _num(d.sum().item()), "abs": _num(d.abs().sum().item())}
                head = T.take_values(d.numel())
                if head:
                    out["head"] = [_num(v) for v in d.reshape(-1)[:head].cpu().tolist()]
                return out
        except Exception as exc:
            T.note_error("summary", exc)
            return {"shape": list(getattr(t, "shape", []))}

    def flat(obj, out, depth=0):
        if len(out) >= MAX_TENSORS or depth > 4:
            return out
        if isinstance(obj, torch.Tensor):
            out.append(obj)
        elif isinstance(obj, (list, tuple)):
            for o in obj:
                flat(o, out, depth + 1)
        elif isinstance(obj, dict):
            for o in obj.values():
                flat(o, out, depth + 1)
        elif hasattr(obj, "__dataclass_fields__") or hasattr(obj, "_fields"):
            for o in (getattr(obj, k, None) for k in getattr(obj, "_fields", None) or obj.__dataclass_fields__):
                flat(o, out, depth + 1)
        return out

    def leaves(tensors):
        """Leaf tensors that the backward pass of ``tensors`` accumulates into, in graph order."""
        found, seen = [], set()
        stack = []
        for t in tensors:
            if not isinstance(t, torch.Tensor):
                continue
            if t.grad_fn is None:
                if t.requires_grad and id(t) not in seen:
                    seen.add(id(t))
                    found.append(t)
            else:
                stack.append(t.grad_fn)
        visited = set()
        order = []
        while stack and len(visited) < MAX_GRAPH_NODES:
            fn = stack.pop(0)
            if fn is None or id(fn) in visited:
                continue
            visited.add(id(fn))
            var = getattr(fn, "variable", None)
            if isinstance(var, torch.Tensor):
                if id(var) not in seen:
                    seen.add(id(var))
                    order.append(var)
                continue
            try:
                stack.extend(n for n, _ in fn.next_functions)
            except Exception:
                pass
        return found + order

    def members(obj):
        if isinstance(obj, torch.nn.Module):
            return obj.named_parameters()
        return None

    def tensor_names(tensors):
        """A stable name per tensor, to match gradients across variants: the program's
        variable (``x``) or ``model.0.weight`` for a parameter of a module it binds; else
        the parameter's name in a module called at the top level (``weight of Linear``);
        else its place among the unnamed ones."""
        try:
            wanted = {id(t) for t in tensors}
            found = T.names(wanted, (torch.Tensor,), members)
            for m in list(roots):
                if len(found) == len(wanted):
                    break
                for n, p in m.named_parameters():
                    if id(p) in wanted:
                        found.setdefault(id(p), f"{n} of {type(m).__name__}")
        except Exception as exc:
            T.note_error("names", exc)
            found = {}
        out, k = [], 0
        for t in tensors:
            name = found.get(id(t))
            if name is None:
                k += 1
                name = f"leaf {k}"
            out.append(name)
        return out

    def as_list(x):
        if isinstance(x, torch.Tensor):
            return [x]
        if isinstance(x, (list, tuple)):
            return [t for t in x if isinstance(t, torch.Tensor)]
        return []

    def record_backward(api, tensors, inputs, run):
        if T.depth:
            return run()
        line = T.program_line()
        try:
            targets = as_list(inputs) if inputs is not None else leaves(as_list(tensors))
        except Exception as exc:
            T.note_error("leaves", exc)
            targets = []
        T.depth += 1
        try:
            result = run()
        finally:
            T.depth -= 1
        try:
            targets = targets[:MAX_TENSORS]
            T.add("backward", "backward", {"api": api, "line": line, "grads": [summary(t.grad) for t in targets], "names": tensor_names(targets)})
        except Exception as exc:
            T.note_error("backward", exc)
        return result

    orig_tensor_backward = torch.Tensor.backward
    orig_backward = torch.autograd.backward
    orig_grad = torch.autograd.grad

    def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        return record_backward(
            "Tensor.backward", [self], inputs,
            lambda: orig_tensor_backward(self, gradient, retain_graph, create_graph, inputs),
        )

    def autograd_backward(tensors, *args, **kwargs):
        return record_backward("torch.autograd.backward", tensors, kwargs.get("inputs"), lambda: orig_backward(tensors, *args, **kwargs))

    def autograd_grad(outputs, inputs=None, *args, **kwargs):
        if T.depth:
            return orig_grad(outputs, inputs, *args, **kwargs)
        line = T.program_line()
        T.depth += 1
        try:
            result = orig_grad(outputs, inputs, *args, **kwargs)
        finally:
            T.depth -= 1
        try:
            T.add("grad", "grad", {"api": "torch.autograd.grad", "line": line, "grads": [summary(g) for g in list(result)[:MAX_TENSORS]]})
        except Exception as exc:
            T.note_error("grad", exc)
        return result

    tensor_backward.__doc__ = orig_tensor_backward.__doc__
    torch.Tensor.backward = tensor_backward
    torch.autograd.backward = autograd_backward
    torch.autograd.grad = autograd_grad

    def step_hook(optimizer, args, kwargs):
        try:
            params = [p for g in optimizer.param_groups for p in g["params"]]
            params = params[:MAX_TENSORS]
            T.add("steps", "steps", {"api": type(optimizer).__name__ + ".step", "line": T.program_line(), "params": [summary(p) for p in params], "names": tensor_names(params)})
        except Exception as exc:
            T.note_error("step", exc)

    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook

        register_optimizer_step_post_hook(step_hook)
    except Exception as exc:
        T.note_error("optimizer hook", exc)

    state = {"depth": 0}
    import weakref

    roots = weakref.WeakSet()  # modules called at the top level

    def pre_hook(module, args):
        if state["depth"] == 0 and len(roots) < 64:
            roots.add(module)
        state["depth"] += 1

    def post_hook(module, args, output):
        state["depth"] -= 1
        if state["depth"] != 0 or T.depth or T.data.get("in_harness"):  # (a harness probing its model's input: not the program's)
            return None
        try:
            tensors = flat(output, [])
            recorded = any(t.grad_fn is not None for t in tensors)
            T.data["counts"]["outputs_recorded"] += int(recorded)
            T.add("outputs", "outputs", {
                "what": type(module).__name__, "line": T.program_line(), "recorded": recorded,
                "training": bool(module.training), "values": [summary(t) for t in tensors],
            })
        except Exception as exc:
            T.note_error("forward hook", exc)
        return None

    try:
        from torch.nn.modules import module as nn_module

        nn_module.register_module_forward_pre_hook(pre_hook)
        try:
            nn_module.register_module_forward_hook(post_hook, always_call=True)
        except TypeError:
            nn_module.register_module_forward_hook(post_hook)
    except Exception as exc:
        T.note_error("module hooks", exc)

    if map_cuda and T.cfg.get("mentions_cuda"):
        _map_torch_cuda(T, torch)

    def graph_scan():
        import warnings

        gc.collect()
        count = numel = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for obj in gc.get_objects():
                try:
                    if type(obj) is torch.Tensor or isinstance(obj, torch.Tensor):
                        if obj.grad_fn is not None:
                            count += 1
                            numel += obj.numel()
                except Exception:
                    continue
        return {"tensors_with_grad_fn": count, "numel": numel}

    return graph_scan


def _map_torch_cuda(T, torch):
    """Place CUDA tensors on the CPU: ``.cuda()``, ``.to("cuda")``, ``device="cuda"``."""
    from torch.overrides import TorchFunctionMode

    def is_cuda(dev):
        if isinstance(dev, torch.device):
            return dev.type == "cuda"
        if isinstance(dev, str):
            return dev.split(":")[0] == "cuda"
        return False

    cuda_methods = {torch.Tensor.cuda}

    class CudaToCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in cuda_methods:
                T.map_device("Tensor.cuda() -> CPU")
                return args[0].to("cpu", copy=True)
            if "device" in kwargs and is_cuda(kwargs["device"]):
                T.map_device("device='cuda' -> CPU")
                kwargs["device"] = "cpu"
                if getattr(func, "__name__", "") == "to":
                    kwargs["copy"] = True
            if kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
            if getattr(func, "__name__", "") == "to" and len(args) > 1 and is_cuda(args[1]):
                T.map_device("Tensor.to('cuda') -> CPU")
                args = (args[0], "cpu") + tuple(args[2:])
                kwargs["copy"] = True
            return func(*args, **kwargs)

    mode = CudaToCpu()
    mode.__enter__()
    T._cuda_mode = mode  # keep it entered for the whole run

    def quiet(name, value):
        def stub(*args, **kwargs):
            return value

        stub.__name__ = stub.__qualname__ = name
        return stub

    if not torch.cuda.is_available():
        for name, value in (("synchronize", None), ("empty_cache", None), ("max_memory_allocated", 0), ("memory_allocated", 0)):
            if hasattr(torch.cuda, name):
                setattr(torch.cuda, name, quiet(name, value))

    orig_module_cuda = torch.nn.Module.cuda

    def module_cuda(self, device=None):
        T.map_device("Module.cuda() -> CPU")
        return self

    torch.nn.Module.cuda = module_cuda
    orig_module_to = torch.nn.Module.to

    def module_to(self, *args, **kwargs):
        if args and is_cuda(args[0]):
            T.map_device("Module.to('cuda') -> CPU")
            args = ("cpu",) + tuple(args[1:])
        if is_cuda(kwargs.get("device")):
            T.map_device("Module.to('cuda') -> CPU")
            kwargs["device"] = "cpu"
        return orig_module_to(self, *args, **kwargs)

    torch.nn.Module.to = module_to
    del orig_module_cuda


# --- mxnet ------------------------------------------------------------------------
def install_mxnet(T, map_gpu):
    import mxnet as mx
    from mxnet import autograd, gluon
    from mxnet.ndarray import NDArray

    T.data["frameworks"].append("mxnet")
    if T.cfg["device"] == "cuda":
        try:
            if mx.context.num_gpus() == 0:
                T.data["no_cuda"] = True
        except Exception:
            T.data["no_cuda"] = True

    tracked = []  # arrays with attach_grad, in attach order (NDArray has no weakrefs)
    tracked_ids = set()
    params = []

    def summary(a):
        try:
            if a is None:
                return None
            import numpy as np

            v = a.asnumpy().astype(np.float64)
            out = {"shape": list(v.shape), "sum": _num(v.sum()), "abs": _num(np.abs(v).sum())}
            head = T.take_values(v.size)
            if head:
                out["head"] = [_num(x) for x in v.reshape(-1)[:head].tolist()]
            return out
        except Exception as exc:
            T.note_error("summary", exc)
            return {"shape": list(getattr(a, "shape", []))}

    def grads():
        """(summaries, names): the arrays given attach_grad (named by the program's
        variables, else by attach order), then the parameters (by their names)."""
        out, names = [], []
        arrays = tracked[:MAX_TENSORS]
        try:
            found = T.names({id(a) for a in arrays}, (NDArray,), lambda obj: None)
        except Exception:
            found = {}
        for k, a in enumerate(arrays, start=1):
            try:
                out.append(summary(a.grad))
            except Exception:
                out.append(None)
            names.append(found.get(id(a), f"array {k}"))
        for p in params:
            if len(out) >= MAX_TENSORS:
                break
            try:
                if p.grad_req != "null" and p._data is not None:
                    out.append(summary(p.grad()))
                    names.append(p.name)
            except Exception:
                out.append(None)
                names.append(getattr(p, "name", "parameter"))
        return out, names

    orig_attach = NDArray.attach_grad

    def attach_grad(self, *args, **kwargs):
        result = orig_attach(self, *args, **kwargs)
        if id(self) not in tracked_ids and len(tracked) < MAX_TENSORS:
            tracked_ids.add(id(self))
            tracked.append(self)
        return result

    NDArray.attach_grad = attach_grad

    orig_param_init = gluon.Parameter.__init__

    def param_init(self, *args, **kwargs):
        orig_param_init(self, *args, **kwargs)
        if len(params) < MAX_TENSORS:
            params.append(self)

    gluon.Parameter.__init__ = param_init

    def record(api, run):
        if T.depth:
            return run()
        line = T.program_line()
        T.depth += 1
        try:
            result = run()
        finally:
            T.depth -= 1
        try:
            values, names = grads()
            T.add("backward", "backward", {"api": api, "line": line, "grads": values, "names": names})
        except Exception as exc:
            T.note_error("backward", exc)
        return result

    orig_nd_backward = NDArray.backward

    def nd_backward(self, *args, **kwargs):
        return record("NDArray.backward", lambda: orig_nd_backward(self, *args, **kwargs))

    NDArray.backward = nd_backward
    orig_ag_backward = autograd.backward

    def ag_backward(*args, **kwargs):
        return record("autograd.backward", lambda: orig_ag_backward(*args, **kwargs))

    autograd.backward = ag_backward
    orig_ag_grad = autograd.grad

    def ag_grad(*args, **kwargs):
        if T.depth:
            return orig_ag_grad(*args, **kwargs)
        line = T.program_line()
        T.depth += 1
        try:
            result = orig_ag_grad(*args, **kwargs)
        finally:
            T.depth -= 1
        try:
            res = result if isinstance(result, (list, tuple)) else [result]
            T.add("grad", "grad", {"api": "autograd.grad", "line": line, "grads": [summary(g) for g in res[:MAX_TENSORS]]})
        except Exception as exc:
            T.note_error("grad", exc)
        return result

    autograd.grad = ag_grad

    orig_step = gluon.Trainer.step

    def trainer_step(self, *args, **kwargs):
        result = orig_step(self, *args, **kwargs)
        try:
            ps = list(getattr(self, "_params", []))[:MAX_TENSORS]
            T.add("steps", "steps", {"api": "Trainer.step", "line": T.program_line(), "params": [summary(p.data()) for p in ps], "names": [p.name for p in ps]})
        except Exception as exc:
            T.note_error("step", exc)
        return result

    gluon.Trainer.step = trainer_step

    orig_call = gluon.Block.__call__
    state = {"depth": 0}

    def block_call(self, *args, **kwargs):
        state["depth"] += 1
        try:
            out = orig_call(self, *args, **kwargs)
        finally:
            state["depth"] -= 1
        if state["depth"] == 0 and not T.depth:
            try:
                arrays = []

                def flat(o, d=0):
                    if len(arrays) >= MAX_TENSORS or d > 4:
                        return
                    if isinstance(o, NDArray):
                        arrays.append(o)
                    elif isinstance(o, (list, tuple)):
                        for x in o:
                            flat(x, d + 1)

                flat(out)
                if T.data.get("in_harness"):  # (a harness probing its model's input: not the program's)
                    return out
                recorded = bool(autograd.is_recording())
                T.data["counts"]["outputs_recorded"] += int(recorded)
                T.add("outputs", "outputs", {
                    "what": type(self).__name__, "line": T.program_line(), "recorded": recorded,
                    "training": bool(autograd.is_training()), "values": [summary(a) for a in arrays],
                })
            except Exception as exc:
                T.note_error("block call", exc)
        return out

    gluon.Block.__call__ = block_call

    if map_gpu and T.cfg.get("mentions_cuda"):
        orig_gpu = mx.context.gpu

        def gpu(device_id=0):
            T.map_device(f"mx.gpu({device_id}) -> mx.cpu()")
            return mx.cpu()

        gpu.__doc__ = orig_gpu.__doc__
        mx.gpu = gpu
        mx.context.gpu = gpu
        if hasattr(mx, "device") and hasattr(mx.device, "gpu"):
            mx.device.gpu = gpu
    return None


# --- random streams realigned around the flagged statements ---------------------------
def rng_state(frameworks, device):
    """What ``restore_rng`` needs to put every random stream back where it is now."""
    import random

    saved = {"random": random.getstate()}
    try:
        import numpy

        saved["numpy"] = numpy.random.get_state()
    except Exception:
        pass
    if "torch" in frameworks:
        import torch

        saved["torch"] = torch.get_rng_state()
        try:
            if torch.cuda.is_initialized():
                saved["cuda"] = torch.cuda.get_rng_state_all()
        except Exception:
            pass
    return saved


def restore_rng(saved, frameworks, seed):
    import random

    random.setstate(saved["random"])
    if "numpy" in saved:
        import numpy

        numpy.random.set_state(saved["numpy"])
    if "torch" in saved:
        import torch

        torch.set_rng_state(saved["torch"])
        if "cuda" in saved:
            torch.cuda.set_rng_state_all(saved["cuda"])
    if "mxnet" in frameworks:  # MXNet cannot read its state back: reseed, the same in every variant
        import mxnet

        mxnet.random.seed(seed)


def realign_rng(T, regions, frameworks, seed):
    """Around each region (a span of program lines: the flagged statement, or what the
    fix made of it), save every random stream when execution enters it and restore it
    when execution leaves it (a line outside it in the frame that entered, or that
    frame's return), so that random numbers the statement draws, more or fewer with
    the fix (Dropout in training mode, say), do not shift every later draw: later
    differences are then the fix's effect, not a drift of the random streams.
    ``T.data["realigned"]`` counts the restores."""
    spans = [(int(lo), int(hi)) for lo, hi in regions]
    program = T.program
    state = {"frame": None, "saved": None, "n": 0}
    T.data["realigned"] = 0

    def inside(line):
        return any(lo <= line <= hi for lo, hi in spans)

    def leave():
        state["frame"] = None
        state["n"] += 1
        T.data["realigned"] += 1
        try:
            restore_rng(state["saved"], frameworks, seed + state["n"])
        except Exception as exc:
            T.note_error("realign", exc)

    def local(frame, event, arg):
        try:
            if event == "line":
                if state["frame"] is None:
                    if inside(frame.f_lineno):
                        state["frame"], state["saved"] = frame, rng_state(frameworks, T.cfg.get("device"))
                elif state["frame"] is frame and not inside(frame.f_lineno):
                    leave()
                    if inside(frame.f_lineno):  # (an adjacent region)
                        state["frame"], state["saved"] = frame, rng_state(frameworks, T.cfg.get("device"))
            elif event == "return" and state["frame"] is frame:
                leave()
        except Exception as exc:
            T.note_error("realign", exc)
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename == program else None

    sys.settrace(calls)


# --- running ----------------------------------------------------------------------
def set_limits(cfg):
    for name, key in (("RLIMIT_FSIZE", "file_bytes"), ("RLIMIT_NPROC", "nproc")):
        value = cfg.get(key)
        if value and hasattr(resource, name):
            try:
                resource.setrlimit(getattr(resource, name), (value, value))
            except (ValueError, OSError):
                pass
    mem = cfg.get("memory_bytes")
    if mem:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        except (ValueError, OSError):
            pass
    cpu = cfg.get("cpu_seconds")
    if cpu:
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        except (ValueError, OSError):
            pass
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass


def seed_all(seed, frameworks):
    import random

    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except Exception:
        pass
    if "torch" in frameworks:
        import torch

        torch.manual_seed(seed)
    if "mxnet" in frameworks:
        import mxnet

        mxnet.random.seed(seed)


def describe(exc):
    """(type, first informative line, kind) of an exception."""
    name = type(exc).__name__
    text = str(exc).strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    message = lines[0] if lines else ""
    if type(exc).__module__.startswith("mxnet"):
        # MXNet puts its C++ location first and the message after "MXNetError:".
        for l in lines:
            if "MXNetError:" in l:
                message = l.split("MXNetError:", 1)[1].strip()
                message = re.sub(r"^Check failed: .*?\)\s*:\s*", "", message)
                break
    if len(message) > 100 and ". " in message:  # the first sentence says it
        message = message.split(". ", 1)[0] + "."
    if isinstance(exc, MemoryError) or "can't allocate memory" in text or "std::bad_alloc" in text or "out of memory" in text.lower():
        kind = "memory"
    else:
        kind = "error"
    return name, message[:300], kind


def take_channel(cfg):
    """(trace fd, token): the fd moved to a random number, close-on-exec, and both
    taken out of the config; stdin (the config pipe) replaced by /dev/null."""
    import fcntl
    import random

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    fd = cfg.pop("trace_fd")
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, random.SystemRandom().randrange(100, 900))
    os.close(fd)
    return moved, cfg.pop("token")


def lock_down(cfg):
    """Root in its own mount namespace (the harness's ``unshare --mount``), where no
    unprivileged user can run Python: every mount but the sandbox (and /proc, /sys,
    /dev) becomes read-only, /dev/shm a private tmpfs, and every capability is dropped
    so that nothing can be mounted writable again. Returns what failed, if anything."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC = 1, 2, 4, 32, 4096, 16384
    box = cfg["sandbox"]
    failed = []
    if libc.mount(box.encode(), box.encode(), None, MS_BIND | MS_REC, None) != 0:
        return [f"bind {box}: errno {ctypes.get_errno()}"]
    libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, b"size=256m")
    with open("/proc/self/mountinfo") as fh:
        points = [line.split()[4].encode().decode("unicode_escape") for line in fh]
    for mp in sorted(set(points)):
        if mp == box or mp.startswith(box + "/") or mp in ("/proc", "/sys", "/dev", "/dev/shm") or mp.startswith(("/proc/", "/sys/", "/dev/")):
            continue
        if libc.mount(None, mp.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None) != 0:
            if libc.mount(None, mp.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None) != 0:
                failed.append(f"{mp}: errno {ctypes.get_errno()}")
    PR_CAPBSET_DROP = 24
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    SYS_capset = {"x86_64": 126, "aarch64": 91}.get(os.uname().machine)
    if SYS_capset is None or libc.syscall(SYS_capset, ctypes.byref(Header(0x20080522, 0)), (Data * 2)()) != 0:
        failed.append("capabilities kept")
    return failed


def install_seccomp(hexprog):
    """The harness's seccomp filter (``runtime_check.sandbox.filter_program``: the
    fallback without bubblewrap, which loads it itself), with no_new_privs. Returns
    what failed, if anything."""
    import ctypes

    prog = bytes.fromhex(hexprog)
    libc = ctypes.CDLL(None, use_errno=True)

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = Fprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return [f"no_new_privs: errno {ctypes.get_errno()}"]
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return [f"seccomp: errno {ctypes.get_errno()}"]
    return []


def drop_privileges(cfg):
    """As root with a user to run as (the harness's ``nobody``): become it for good."""
    uid, gid = cfg.get("uid"), cfg.get("gid")
    if uid is None or os.geteuid() != 0:
        return
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


SYNTHETIC_SAMPLES = 256  # per synthetic dataset: a few batches, so an epoch is quick


def install_synthetic_data(T):
    """Gluon's vision datasets (MNIST, FashionMNIST, CIFAR10, CIFAR100) whose files are
    not on disk get small synthetic data of their shapes and dtypes instead of a download
    (never attempted: the sandbox has no network, and a verdict must not wait on one);
    the trace lists them (``trace["synthetic"]``)."""
    import numpy as np
    from mxnet import nd
    from mxnet.gluon.data.vision import datasets

    used = T.data["synthetic"] = []
    shapes = {"MNIST": ((28, 28, 1), 10), "FashionMNIST": ((28, 28, 1), 10),
              "CIFAR10": ((32, 32, 3), 10), "CIFAR100": ((32, 32, 3), 100)}
    for name, (shape, classes) in shapes.items():
        cls = getattr(datasets, name, None)
        if cls is None:
            continue

        def get_data(self, _real=cls._get_data, _shape=shape, _classes=classes, _name=name):
            root = getattr(self, "_root", "")
            if all(os.path.exists(os.path.join(root, f)) for f in _dataset_files(self)):
                return _real(self)
            rng = np.random.RandomState(0 if getattr(self, "_train", True) else 1)
            data = rng.randint(0, 256, size=(SYNTHETIC_SAMPLES,) + _shape).astype(np.uint8)
            self._data = nd.array(data, dtype=data.dtype)
            self._label = rng.randint(0, _classes, size=(SYNTHETIC_SAMPLES,)).astype(np.int32)
            if _name not in used:
                used.append(_name)

        cls._get_data = get_data


def _dataset_files(dataset):
    """The files a Gluon vision dataset reads from its root."""
    if hasattr(dataset, "_archive_file"):  # CIFAR: the extracted batches
        return [n for n, _ in dataset._train_data + dataset._test_data]
    data, label = (dataset._train_data, dataset._train_label) if dataset._train else (dataset._test_data, dataset._test_label)
    return [data[0], label[0]]


def _dunder(attr):
    return attr.startswith("__") and attr.endswith("__")


class StandIn:
    """An inert stand-in for a missing module's objects (``runtime_check.standins``): any
    attribute or call is another one, a call handed one function or one iterable (not a
    string) hands it back (a decorator, ``tqdm(loader)``), it is falsy, empty and a
    context manager, and it has no arithmetic, conversion or array protocol: a value of
    it that reaches a computation raises (its type's name says so) instead of changing
    a number."""

    __slots__ = ("_standin_name",)

    def __init__(self, name):
        object.__setattr__(self, "_standin_name", name)

    def __getattr__(self, attr):
        if _dunder(attr):
            raise AttributeError(attr)
        return StandIn(f"{self._standin_name}.{attr}")

    def __setattr__(self, attr, value):
        pass

    def __call__(self, *args, **kwargs):
        if args and not isinstance(args[0], StandIn):
            first = args[0]
            if callable(first) and len(args) == 1 and not kwargs:
                return first  # ``@numba.jit``, ``@hydra.main(...)(f)``
            if not isinstance(first, (str, bytes)) and hasattr(first, "__iter__"):
                return first  # ``tqdm(loader, desc=...)``
        return StandIn(f"{self._standin_name}()")

    def __getitem__(self, key):
        return StandIn(f"{self._standin_name}[]")

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __mro_entries__(self, bases):
        # ``class Logger(wandb.Callback):``: a base of its own (two stand-in bases must
        # differ), built with any arguments, every missing attribute a stand-in
        name = self._standin_name

        def init(self, *args, **kwargs):
            pass

        def missing(self, attr):
            if _dunder(attr):
                raise AttributeError(attr)
            return StandIn(f"{name}().{attr}")

        return (type(name.rsplit(".", 1)[-1], (), {"__init__": init, "__getattr__": missing}),)

    def __repr__(self):
        return f"<scopelint stand-in for {self._standin_name}>"


def install_standins(T, names):
    """Make ``import X`` (and ``import X.a.b``, ``from X import y``) of each missing
    top-level module ``X`` of ``names`` give an inert module of stand-ins; the trace
    lists those the program imported (``trace["standins"]``)."""
    import importlib.abc
    import importlib.machinery
    import types

    wanted = set(names)
    used = T.data["standins"] = []

    class Module(types.ModuleType):
        def __getattr__(self, attr):
            if _dunder(attr):
                raise AttributeError(attr)
            return StandIn(f"{self.__name__}.{attr}")

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path=None, target=None):
            if fullname.split(".")[0] not in wanted:
                return None
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

        def create_module(self, spec):
            top = spec.name.split(".")[0]
            if top not in used:
                used.append(top)
            module = Module(spec.name)
            module.__path__ = []
            return module

        def exec_module(self, module):
            pass

    sys.meta_path.append(Finder())  # last: an installed module always wins


def watch_lines(T, program, lines, recording_lines=()):
    """Record which of ``lines`` of the program run (``trace["reached"]``); tracing
    stops once all have run. Only the program's own frames get a line tracer."""
    want = set(lines)
    reached = T.data["reached"] = []
    # (and which of them run while MXNet records, ``trace["reached_recording"]``: a
    # finding about a write while recording is refuted only where its line ran so)
    recording = T.data["reached_recording"] = []
    want_rec = set(recording_lines)
    if not want and not want_rec:
        return

    def mx_recording() -> bool:
        mx = sys.modules.get("mxnet")
        try:
            return mx is not None and bool(mx.autograd.is_recording())
        except Exception:
            return False

    def watching() -> bool:  # (after every line has run, lines asked about recording, where MXNet runs)
        return bool(want) or (bool(want_rec) and "mxnet" in (T.data.get("frameworks") or []))

    def local(frame, event, arg):
        if not watching():
            return None
        if event == "line":
            line = frame.f_lineno
            if line in want:
                want.discard(line)
                reached.append(line)
            if line in want_rec and mx_recording():
                want_rec.discard(line)
                recording.append(line)
            if not watching():
                return None
        return local

    def calls(frame, event, arg):
        if watching() and frame.f_code.co_filename == program:
            return local
        return None

    import threading

    threading.settrace(calls)  # the flagged line may run in a thread the program starts
    sys.settrace(_chained(sys.gettrace(), calls))  # (with ``realign_rng``'s tracer, if set)


def _chained(first, second):
    """One global trace function that runs two (``sys.settrace`` holds only one)."""
    if first is None:
        return second

    def calls(frame, event, arg):
        return _both(first(frame, event, arg), second(frame, event, arg))

    return calls


def _both(a, b):
    """A local trace function running the local tracers ``a`` and ``b`` (either None)."""
    if a is None or b is None:
        return a if b is None else b

    def local(frame, event, arg):
        na, nb = a(frame, event, arg), b(frame, event, arg)
        return local if (na is a and nb is b) else _both(na, nb)

    return local


def main():
    cfg = json.loads(sys.stdin.buffer.read())
    fd, token = take_channel(cfg)
    try:
        os.setsid()  # a group of its own: kill(0, ...) / killpg(getpgrp()) reach no launcher
    except OSError:
        pass
    set_limits(cfg)
    locked = None
    if cfg.get("lockdown"):
        try:
            locked = lock_down(cfg)
        except Exception as exc:
            locked = [f"{type(exc).__name__}: {exc}"]
    drop_privileges(cfg)
    if cfg.get("seccomp"):
        try:
            locked = (locked or []) + install_seccomp(cfg.pop("seccomp"))
        except Exception as exc:
            locked = (locked or []) + [f"seccomp: {type(exc).__name__}: {exc}"]
    T = Trace(cfg)
    T._fd, T._token = fd, token
    del fd, token
    if locked:
        T.data["isolation_errors"] = locked[:10]
    T.started = time.time()
    program = cfg["program"]
    directory = os.path.dirname(program)
    sys.path[0] = directory
    if cfg.get("module"):  # a module of a package: run as `python -m pkg.engine` from the folder above it
        directory = cfg["root"]
        sys.path[0] = directory
    for extra in reversed(cfg.get("paths") or []):  # (a script of a subfolder, its project's root on the path)
        if extra not in sys.path:
            sys.path.insert(1, extra)
    sys.argv = [program]
    os.chdir(cfg.get("cwd") or directory)

    real_exit = os._exit

    def os_exit(code):
        T.data["status"] = "exit"
        T.data["exit"] = {"how": "os._exit", "code": code, "line": T.program_line()}
        try:
            T.write()
        finally:
            real_exit(code)

    frameworks = cfg.get("frameworks", [])
    scans = []
    for fw in frameworks:
        try:
            if fw == "torch":
                scans.append(install_torch(T, cfg["device"] == "cpu"))
            elif fw == "mxnet":
                scans.append(install_mxnet(T, cfg["device"] == "cpu"))
        except ImportError as exc:
            T.data["missing"].append(fw)
            T.note_error(f"import {fw}", exc)
        except Exception as exc:
            T.note_error(f"instrument {fw}", exc)
    try:
        seed_all(cfg.get("seed", 0), T.data["frameworks"])
    except Exception as exc:
        T.note_error("seed", exc)
    if cfg.get("realign"):
        realign_rng(T, cfg["realign"], T.data["frameworks"], cfg.get("seed", 0))
    T.data["rss_start_kb"] = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    T.data["setup_seconds"] = round(time.time() - T.started, 3)  # frameworks imported and instrumented
    os._exit = os_exit
    if "mxnet" in T.data["frameworks"]:
        try:
            install_synthetic_data(T)
        except Exception as exc:
            T.note_error("synthetic data", exc)
    if cfg.get("standins"):
        try:
            install_standins(T, cfg["standins"])
        except Exception as exc:
            T.note_error("stand-ins", exc)
    namespace = None
    import runpy

    try:
        prelude = None
        if cfg.get("prelude"):  # a synthesized harness: its objects, in the program's globals
            T.data["in_harness"] = True
            prelude = {"__name__": "__main__"}
            exec(compile(cfg["prelude"], "<scopelint harness>", "exec"), prelude)
            T.data["in_harness"] = False
            prelude = {k: v for k, v in prelude.items() if k != "__builtins__"}
        watch_lines(T, program, cfg.get("watch") or [], cfg.get("watch_recording") or [])
        if cfg.get("module"):
            namespace = runpy.run_module(cfg["module"], init_globals=prelude, run_name="__main__", alter_sys=True)
        else:
            namespace = runpy.run_path(program, init_globals=prelude, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        T.data["status"] = "exit"
        T.data["exit"] = {"how": "sys.exit", "code": code if isinstance(code, (int, type(None))) else str(code)[:200], "line": _raise_line(exc, program)}
    except BaseException as exc:
        name, message, kind = describe(exc)
        T.data["status"] = "memory" if kind == "memory" else "exception"
        T.data["exception"] = {
            "type": name,
            "module": type(exc).__module__,
            "message": message,
            "line": _raise_line(exc, program),
            "onednn": isinstance(exc, RuntimeError) and ONEDNN_ERROR.search(str(exc)) is not None,  # MXNetError is one
        }
        if T.data.get("in_harness"):
            T.data["harness_failed"] = True
        if kind == "memory":
            namespace = None
            exc.__traceback__ = None
            del exc
            gc.collect()
        else:
            sys.stderr.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:])
    finally:
        sys.settrace(None)
        if "threading" in sys.modules:
            sys.modules["threading"].settrace(None)
        os._exit = real_exit
    try:
        sys.stdout.flush()
    except Exception:
        pass
    if T.data["status"] != "memory":
        for scan in scans:
            if scan is not None:
                try:
                    T.data["graph"] = scan()
                except Exception as exc:
                    T.note_error("graph scan", exc)
    del namespace
    T.write()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    real_exit(0)  # skip interpreter teardown (framework threads, atexit of the program)


def _raise_line(exc, program):
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == program:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


if __name__ == "__main__":
    main()
