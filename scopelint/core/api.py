"""What the frameworks define: the generated API model (``api_model.json``).

``scripts/gen_api_model.py`` writes the model from the installed torch 2.13 and mxnet
1.9.1 by introspecting and *probing* them (``docs/model.md``, "The API model"); the
static linter reads it here, and nowhere else, without importing either framework.

For each public function and each ``Tensor``/``NDArray`` method the model records its
parameters (a method's after the receiver), the arguments in which it is differentiable
(by position ``0, 1, ...``, by keyword, ``self`` for the receiver), and the kind of its
result:

- ``g``: a tensor that carries a graph when a differentiable argument does;
- ``x``: a tensor that never does (integer/boolean tensors, ``argmax``, comparisons,
  samples, ``zeros_like``);
- ``n``: a Python value (a number, a bool, a dtype, a shape);
- ``c``: a conversion from data (``torch.tensor``, ``nd.array``, ``.numpy()``);
- ``f``: a factory of fresh data (``torch.randn``, ``nd.zeros``);
- ``left``: the receiver taken out of the graph (``.detach()``).

A name the model does not know is *unknown*: the callers keep what they did before (a
framework function not in the model is still arithmetic on its arguments), and code
outside the frameworks is never assumed to carry a graph (``core.flow``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import FrozenSet, Iterable, NamedTuple, Optional, Tuple, Union

_PATH = Path(__file__).with_name("api_model.json")

GRAPH, NO_GRAPH, PYTHON, CONVERSION, FACTORY, LEFT = "g", "x", "n", "c", "f", "left"
VIEW = "gv"  # (of an attribute: ``w.T``, a view of the tensor, ``g`` besides)

# Keyword options of framework calls: never a tensor of the graph (RULES.md, "Values and
# gradient paths": ``dtype=``, ``device=``, ``ctx=``).
OPTION_KEYWORDS = frozenset({
    "dtype", "device", "ctx", "context", "layout", "memory_format", "requires_grad", "pin_memory", "non_blocking",
    "copy", "generator", "stype", "name", "out",
})

# Other spellings of the modules the model names.
_ALIASES = (
    ("mxnet.ndarray.numpy_extension.", "mxnet.npx."),
    ("mxnet.ndarray.numpy.", "mxnet.np."),
    ("mxnet.numpy_extension.", "mxnet.npx."),
    ("mxnet.numpy.", "mxnet.np."),
    ("mxnet.ndarray.", "mxnet.nd."),
    ("mxnet.gluon.nn.basic_layers.", "mxnet.gluon.nn."),
    ("mxnet.gluon.nn.conv_layers.", "mxnet.gluon.nn."),
    ("mxnet.gluon.rnn.rnn_layer.", "mxnet.gluon.rnn."),
    ("mxnet.gluon.rnn.rnn_cell.", "mxnet.gluon.rnn."),
    ("torch.nn.modules.", "torch.nn."),
    ("torch.distributions.", "torch.distributions."),
)


class Op(NamedTuple):
    """One callable: its parameters, where it is differentiable, its result's kind.
    ``diff`` and ``result`` are None when no probe ran (only the signature is known)."""

    params: Tuple[str, ...]
    diff: Optional[FrozenSet[Union[int, str]]]
    result: Union[str, Tuple[str, ...], None]
    view: bool = False  # its result is a view of its (first) input: ``w.t()``, ``x.view(n)``
    # Boolean options that add outputs (``get_prob`` of ``nd.sample_multinomial``) and
    # the result's kinds where one is set (``at_call``).
    flags: Tuple[str, ...] = ()
    flagged: Union[str, Tuple[str, ...], None] = None

    def at_call(self, set_flags) -> "Op":
        """This op as called with the boolean options ``set_flags`` set True."""
        if self.flags and set(self.flags) & set(set_flags):
            return self._replace(result=self.flagged, flags=(), flagged=None)
        return self

    @property
    def known(self) -> bool:
        return self.result is not None

    @property
    def kind(self) -> Optional[str]:
        """The result's kind, a tuple's joined: ``g`` when any element may carry a graph."""
        r = self.result
        if isinstance(r, tuple):
            return GRAPH if GRAPH in r else (r[0] if len(set(r)) == 1 else GRAPH)
        return r

    def differentiable(self, position: Optional[int], keyword: Optional[str]) -> bool:
        """Whether the argument at ``position`` (or passed as ``keyword``) is one the
        result is differentiable in (False also when not known)."""
        diff = self.diff
        if not diff:
            return False
        if keyword is not None:
            if keyword in diff:
                return True
            return keyword in self.params and self.params.index(keyword) in diff
        return position in diff or (position is not None and position < len(self.params) and self.params[position] in diff)


@functools.lru_cache(maxsize=1)
def _model() -> dict:
    try:
        return json.loads(_PATH.read_text(encoding="utf-8"))["frameworks"]
    except (OSError, ValueError, KeyError):  # (a broken install: nothing is known)
        return {}


def _op(rec: Optional[dict]) -> Optional[Op]:
    if rec is None:
        return None
    r = rec.get("r")
    d = rec.get("d")
    rf = rec.get("rf")
    return Op(tuple(rec.get("p", ())), frozenset(d) if d is not None else None, tuple(r) if isinstance(r, list) else r,
              bool(rec.get("v")), tuple(rec.get("fl", ())), tuple(rf) if isinstance(rf, list) else rf)


def canonical(qname: str) -> str:
    for prefix, repl in _ALIASES:
        if qname.startswith(prefix):
            qname = repl + qname[len(prefix):]
            break
    if qname.startswith("torch.distributions.") and qname.count(".") == 3:
        # (each class is defined in a submodule of its own and exported by the package:
        # ``torch.distributions.normal.Normal`` is ``torch.distributions.Normal``)
        module, _, last = qname.rpartition(".")
        if module.rsplit(".", 1)[1].islower():
            return "torch.distributions." + last
    return qname


def _framework(qname: str) -> Optional[dict]:
    return _model().get(qname.split(".", 1)[0])


@functools.lru_cache(maxsize=4096)
def function(qname: Optional[str]) -> Optional[Op]:
    """The model's record of a framework function (``torch.gather``, ``mx.nd.pick``)."""
    if not qname:
        return None
    fw = _framework(qname)
    if fw is None:
        return None
    return _op(fw["functions"].get(canonical(qname)))


@functools.lru_cache(maxsize=4096)
def _method(name: str, frameworks: Tuple[str, ...]) -> Optional[Op]:
    found = [_op(_model()[fw]["methods"].get(name)) for fw in frameworks if fw in _model()]
    found = [op for op in found if op is not None]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    # Both frameworks in one file: a method both define is what either makes of it.
    known = [op for op in found if op.known]
    if not known:
        return found[0]
    if len(known) == 1 or len({op.kind for op in known}) == 1 and len({op.diff for op in known}) == 1:
        return known[0]
    kinds = {op.kind for op in known}
    diff = frozenset().union(*(op.diff or frozenset() for op in known))
    return Op(known[0].params, diff, GRAPH if GRAPH in kinds else known[0].result)


def method(name: str, frameworks: Iterable[str]) -> Optional[Op]:
    """A ``Tensor`` (torch) or ``NDArray`` (mxnet) method of the file's frameworks."""
    return _method(name, tuple(sorted(frameworks)))


def attribute(name: str, frameworks: Iterable[str]) -> Optional[str]:
    """The kind of a tensor attribute (``T``: ``gv``, a view; ``shape``: ``n``; ``grad``: ``x``)."""
    kinds = {_model()[fw]["attributes"].get(name) for fw in frameworks if fw in _model()}
    kinds.discard(None)
    if not kinds:
        return None
    if VIEW in kinds:
        return VIEW
    return GRAPH if GRAPH in kinds else kinds.pop()


@functools.lru_cache(maxsize=4096)
def is_constant(qname: Optional[str]) -> bool:
    """A framework constant (``torch.float32``, ``torch.pi``) or a call that makes one
    (``torch.device("cuda")``, ``mx.cpu()``, ``mx.gpu(0)``): no graph, no path."""
    if not qname:
        return False
    fw = _framework(qname)
    if fw is None:
        return False
    q = canonical(qname)
    return q in _set(qname.split(".", 1)[0], "constants") or q in _set(qname.split(".", 1)[0], "value_functions")


@functools.lru_cache(maxsize=8)
def _set(fw: str, key: str) -> FrozenSet[str]:
    return frozenset(_model().get(fw, {}).get(key, ()))


@functools.lru_cache(maxsize=4096)
def layer(qname: Optional[str]) -> Optional[dict]:
    """``{"mode": bool | None, "loss": bool}`` for an ``nn``/``gluon.nn`` layer class;
    ``mode`` says whether its behaviour depends on the train/eval flag (None: a
    container, whose layers decide)."""
    if not qname:
        return None
    fw = _framework(qname)
    return fw["layers"].get(canonical(qname)) if fw is not None else None


def mode_free_layer(qname: Optional[str]) -> bool:
    """A layer class whose behaviour is known not to depend on train/eval mode."""
    rec = layer(qname)
    return rec is not None and rec.get("mode") is False


@functools.lru_cache(maxsize=1024)
def distribution(qname: Optional[str]) -> Optional[dict]:
    """``{"rsample": bool}`` for a ``torch.distributions`` class."""
    if not qname:
        return None
    fw = _framework(qname)
    return fw["distributions"].get(canonical(qname)) if fw is not None else None


def distribution_method(name: str) -> Optional[str]:
    """The kind of what a distribution's method returns: ``sample`` none (``x``),
    ``rsample``/``log_prob``/``entropy`` a graph of the distribution's parameters (``g``)."""
    return _model().get("torch", {}).get("distribution_methods", {}).get(name)


def version(fw: str) -> Optional[str]:
    return _model().get(fw, {}).get("version")
