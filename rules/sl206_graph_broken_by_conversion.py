from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from scopelint.core.flow import LEAVING_METHODS, container_items
from scopelint.core.frameworks import MXNET, TORCH, framework_of
from scopelint.core.state import UNKNOWN_RESULT
from scopelint.core.frameworks import is_data_factory
from scopelint.core.roles import is_model_call
from scopelint.core.queries import grad_read, gradient_path, graph_path, is_object, may_carry_graph, names_bound_to, optimized, recorded
from scopelint.fixkit import (
    clip, code_of, function_of, keyword_call, module_fix, parents, quiet, Replace, Replacement,
    scope_of, spell, UNSAFE, walk,
)
from scopelint.rule import NodeFix, Report, Rule


class GraphBrokenByConversion(Rule):
    code = "SL206"
    name = "graph-broken-by-conversion"
    severity = "error"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "A conversion that leaves the graph sits between a recorded value and what is backpropagated."
    help = "Stay in tensor operations on the way to the loss (`torch.exp`, `nd.exp`, ...); convert only for logging."
    why = """
        `.item()`, `.tolist()`, `.numpy()`, `float(t)`, `torch.tensor(t)`, NumPy functions,
        and MXNet's `.asnumpy()`, `.asscalar()`, `nd.array(a.asnumpy())` produce values
        with no history. When the backpropagated value depends on the recorded
        computation only through such a conversion, PyTorch raises `element 0 of
        tensors does not require grad`; MXNet silently computes partial gradients
        (`z = nd.array(y.asnumpy()) * x` gives `dz/dx = y`, not `3x^2`). A deliberate
        `.detach()` (or a number taken out with `.item()`, an RL baseline) next to another
        path to the loss (a stop-gradient target) is fine; other conversions of a model's
        output next to it (`main + torch.tensor(aux_losses).sum()`) still drop those
        gradients, and a fresh `torch.zeros(1, requires_grad=True)` that only starts the
        sum is no other path. In MXNet too, a number taken out of an output that reaches
        the loss through another term as well (an actor-critic's advantage `r -
        v.asnumpy()[0, 0]` next to the critic's `(v - r) ** 2`) is a constant on purpose;
        and a value converted to be handed to an object (`env.step(action.asnumpy())`)
        comes back as that object's data, not as a broken path.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)
        out = model(torch.randn(4, 3))
        loss = torch.tensor(out.mean().item()) ** 2
        loss.backward()
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)
        out = model(torch.randn(4, 3))
        loss = out.mean() ** 2
        loss.backward()
    """

    def check(self, ctx):
        facts = ctx.facts
        reported = set()
        reconnected = set()  # (the conversions reported, and those their fixes undo)
        for b in facts.backwards:
            fws = [fw for fw in b.frameworks if fw in facts.frameworks]
            if len(fws) != 1:
                continue
            fw = fws[0]
            for value in b.values:
                # (not below a value computed with recording off: no gradient goes there)
                reachable = list(gradient_path(value, lambda v, fw=fw: _left(v) or _computed_off(v, fw)))
                other_path = any(
                    may_carry_graph(v, fw) and not _seed_leaf(facts, v)
                    for v in gradient_path(value, _left_or_data) if not _left_or_data(v)
                )
                # (Numbers taken out last: whether the model output they read is trained
                # elsewhere counts the paths the fixes of the others reconnect.)
                inner = _returned_inside(facts)
                deepest = [d for d in (_deepest(v, fw, inner) for v in reachable if _left(v)) if d is not None]
                for conv in sorted(deepest, key=lambda v: _number_taken_out(facts, v)):
                    if id(conv.node) in reported:
                        continue
                    # MXNet silently gives partial gradients through a round trip made
                    # inside record(); a deliberate detach() (a stop-gradient) is fine.
                    mxnet_partial = fw == MXNET and not _is_detach(conv) and _inside_record(conv) and _from_graph_directly(conv, fw)
                    # (only a number taken out: a ``.detach()`` added to the loss is the
                    # value trick ``loss - loss.detach() + c``, a teacher's logged loss...)
                    taken = _number_taken_out(facts, conv)
                    summand = taken and _only_a_summand(facts, value, conv, fw)
                    if mxnet_partial and other_path and taken and not summand \
                            and _trained_elsewhere(facts, conv, value, fw, reconnected):
                        continue  # a REINFORCE advantage ``r - v.asnumpy()[0, 0]``: a constant on purpose
                    # Next to a real second path, only a deliberate stop-gradient is fine
                    # (``target.detach()``, ``R - value.item()``); ``torch.tensor(losses)``
                    # there still drops those losses' gradients (when they are known to
                    # hold a graph: a model's output, a leaf).
                    if other_path and not mxnet_partial and not (summand and _reads_model_output(facts, conv, fw)) \
                            and (fw == MXNET or _stop_gradient(facts, conv) or not _reads_model_output(facts, conv, fw)):
                        # (a number taken out of a model's output that no backward trains
                        # otherwise is no baseline: ``natural + beta * torch.tensor(
                        # robust.item())`` drops the robust term's gradient -- TRADES)
                        if not (fw == TORCH and _number_taken_out(facts, conv) and _reads_model_output(facts, conv, fw)
                                and not _trained_by_some_backward(facts, conv, fw)):
                            continue
                    reported.add(id(conv.node))
                    # Undo it, and the conversions after it that lead back to the loss.
                    chain = [conv.node] + [v.node for v in reachable if _left(v) and v.node is not conv.node and _deepest_node(v, fw, inner) is conv.node]
                    reconnected.update(id(n) for n in chain)
                    fix = reconnect_graph(ctx, chain, fw)
                    yield Report(conv.node, "this conversion leaves the graph on the way to the backpropagated value: gradients stop here", fix,
                                 ((b.node, "the backward whose gradients stop at the conversion"),))


def _number_taken_out(facts, conv) -> bool:
    """The conversion takes a number out of an array: ``.asscalar()``, ``.item()``, or
    ``.asnumpy()`` indexed by integers alone (``v.asnumpy()[0, 0]``)."""
    node = conv.node
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
        return False
    method = node.func.attr.value
    if method in ("asscalar", "item"):
        return True
    if method not in ("asnumpy", "numpy"):
        return False
    sub = parents(facts.module).get(id(node))
    return type(sub) is cst.Subscript and sub.value is node and all(
        type(el.slice) is cst.Index and type(el.slice.value) is cst.Integer for el in sub.slice)


def _only_a_summand(facts, value, conv, fw) -> bool:
    """Every way from the backpropagated ``value`` down to the conversion adds it (``loss
    + 0.1 * nd.array([out.abs().mean().asscalar()])``): past it, nothing that carries a
    graph is multiplied by it or handed with it to a call. Such a term is a constant
    of the loss: its gradient, the reason it was added, is lost. (A number that scales a
    graph value, ``(r - v.item()) * logp``, is a coefficient: a baseline on purpose.)"""
    found = False
    stack = [(value, 0)]
    seen = set()
    while stack:
        v, depth = stack.pop()
        if v is conv or v.node is conv.node:
            found = True
            continue
        if id(v) in seen or depth > 40:
            continue
        seen.add(id(v))
        if "carried" in v.tags:
            return False  # (a number from an earlier iteration: a running baseline, on purpose)
        leads = [p for p in v.parents if _leads_to(p, conv)]
        if not leads:
            continue
        if type(v.node) is cst.Call and not _left(v) and not _tensor_op(facts, v, leads):
            return False  # (handed to a function, a model: ``D(x.data)`` shapes what D returns)
        adds = type(v.node) is cst.BinaryOperation and type(v.node.operator) in (cst.Add, cst.Subtract)
        others = [p for p in v.parents if not any(p is q for q in leads)]
        if not adds and any(_mixed(o, conv, fw) for o in others):
            return False  # (a coefficient of a graph value, or handed to a call beside one)
        if not _linear(v.node) and any(_mixed(p, conv, fw) for p in leads):
            return False  # (``((out - target) ** 2)``: the number shapes the gradient of ``out``)
        stack.extend((p, depth + 1) for p in leads)
    return found


def _tensor_op(facts, v, leads) -> bool:
    """``v`` is a framework's function (``torch.exp(t)``) or a method of the tensor the way
    comes through (``t.abs()``): no parameters of its own, nothing the flow does not see."""
    if not v.pure:
        return False
    fact = facts.call_of(v.node)
    if fact is not None and fact.qname is not None:
        return framework_of(fact.qname) is not None
    func = v.node.func
    return type(func) is cst.Attribute and fact is not None and fact.target is None and fact.receiver is not None \
        and any(fact.receiver is p for p in leads)


_LINEAR_METHODS = frozenset({"mean", "sum", "reshape", "view", "squeeze", "unsqueeze", "flatten"})


def _linear(node) -> bool:
    """An operation whose gradient does not depend on its operands' values."""
    t = type(node)
    if t is cst.BinaryOperation:
        return type(node.operator) in (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)  # (by a constant: the caller checks)
    if t is cst.UnaryOperation:
        return True
    return t is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _LINEAR_METHODS


def _mixed(v, conv, fw) -> bool:
    """``v`` may carry a graph besides the conversion's number (a graph value, or one the
    number was added to; a value nobody knows, ``self.log_alpha``, may: the reading that
    calls the term a constant must not rest on it)."""
    stop = lambda u: u is conv or u.node is conv.node or _left(u)  # noqa: E731
    return any(may_carry_graph(u, fw) for u in graph_path(v, stop) if not stop(u))


def _leads_to(v, conv) -> bool:
    return any(u is conv or u.node is conv.node for u in graph_path(v, lambda u: u is conv or u.node is conv.node))


def _trained_elsewhere(facts, conv, value, fw, reconnected=frozenset()) -> bool:
    """Every model output the conversion reads also reaches the backpropagated ``value``
    without a conversion: the critic's value ``v`` is in the loss through ``(v - r) **
    2`` too, so taking a number out of it for the advantage is a deliberate constant, not
    a lost gradient. (Numbers taken out of values computed from a leaf,
    ``nd.array([(x * x).sum().asscalar()]) * x``, are still a lost path.)"""
    def stop(v):  # (a conversion reported here is undone by its fix: a path then)
        return _left_or_data(v) and id(v.node) not in reconnected

    direct = {id(v.node) for v in graph_path(value, stop) if not _left_or_data(v) and _graph_source(v, fw)}
    read = [v for p in conv.parents for v in graph_path(p, _left) if not _left(v) and _graph_source(v, fw)]
    return bool(read) and all(type(v.node) is cst.Call and "leaf" not in v.tags and id(v.node) in direct for v in read)


def _trained_by_some_backward(facts, conv, fw) -> bool:
    """Every model output the conversion reads also reaches some backward of the file
    without a conversion (an actor-critic's value, trained by the critic's own loss):
    the number taken out of it is a constant on purpose."""
    read = [v for p in conv.parents for v in graph_path(p, _left) if not _left(v) and _graph_source(v, fw)
            and type(v.node) is cst.Call and "leaf" not in v.tags]
    if not read:
        return True
    direct = facts.memo(f"sl206-direct-{fw}", lambda f: {
        id(v.node) for b in f.backwards for value in b.values
        for v in graph_path(value, _left_or_data) if not _left_or_data(v) and _graph_source(v, fw)})
    return all(id(v.node) in direct for v in read)


def _seed_leaf(facts, v) -> bool:
    """A fresh leaf made only to start a sum (``total = torch.tensor(0.,
    requires_grad=True)``): no optimizer holds it and nobody reads its ``.grad``, so it
    is no path by which gradient reaches anything that trains."""
    if "leaf" not in v.tags or type(v.node) is not cst.Call or "param" in v.tags:
        return False
    fact = facts.call_of(v.node)
    if fact is None or fact.qname is None or not (is_data_factory(fact.qname) or fact.qname in _WRAPPERS):
        return False
    if id(v.node) in optimized(facts)[0]:
        return False
    return not grad_read(facts, names_bound_to(facts, v.node))


def _reads_model_output(facts, conv, fw) -> bool:
    """The conversion reads, through tensor operations, the output of a recorded model
    call or a leaf that trains (not a name nobody knows, not a generator's items)."""
    for p in conv.parents:
        for v in graph_path(p, _left):
            if _left(v) or "const" in v.tags:
                continue
            if "leaf" in v.tags:
                if not _seed_leaf(facts, v):
                    return True
                continue
            fact = facts.call_of(v.node) if type(v.node) is cst.Call else None
            if fact is not None and is_model_call(fact) and recorded(v, fw):
                return True
    return False


def _stop_gradient(facts, conv) -> bool:
    """A conversion written to stop the gradient on purpose: ``.detach()``, ``.data``,
    a number taken out (``.item()``, ``float(t)``: a baseline, a weight), a container of
    those (``tuple(v.detach() for v in h)``), a local helper that returns only values
    taken out of the graph (``repackage_hidden(h)``)."""
    node = conv.node
    if _is_detach(conv):
        return True
    items = container_items(conv)
    if items:
        return all(not _left(v) or _stop_gradient(facts, v) for v in items)
    fact = facts.call_of(node) if type(node) is cst.Call else None
    if fact is not None and fact.target is not None and fact.target.returns.left:
        return True
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        return node.func.attr.value == "item"
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value in ("float", "int")


def _computed_off(v, fw) -> bool:
    """Computed with ``fw`` not recording (``w -= lr * g`` under ``no_grad()``): what it
    was computed from gets no gradient through it, conversion or not."""
    return v.state is not None and v.rec[fw].off and v.state.recording(fw).off and "leaf" not in v.tags


def _left(v) -> bool:
    return "left-graph" in v.tags


def _left_or_data(v) -> bool:
    """Out of the graph, or an item of a data loader: neither is another path to the loss."""
    return _left(v) or "loop-item" in v.tags


def _from_recorded(conv, fw) -> bool:
    """Some value the conversion reads (directly, not through another one) has a graph."""
    stop = lambda v: _left(v) or UNKNOWN_RESULT <= v.tags  # noqa: E731  (not into what unknown code was handed)
    return any(may_carry_graph(v, fw, unknown=False) for p in conv.parents for v in graph_path(p, stop) if not stop(v))


def _object_method(v) -> bool:
    """``self.run_trials(configs)``: a method of the object, which is no model; what it
    returns (rewards, metrics) is nobody's graph as far as the flow can tell."""
    node = v.node
    return (
        type(node) is cst.Call and v.pure and type(node.func) is cst.Attribute
        and type(node.func.value) is cst.Name and node.func.value.value in ("self", "cls")
    )


def _from_graph_directly(conv, fw) -> bool:
    """The conversion reads a graph through tensor operations alone, not through a
    method of the object (``nd.array([r - b for r in self.schedule(configs)])``, the
    REINFORCE reward of a controller, is a constant by design)."""
    stop = lambda v: _left(v) or _object_method(v) or is_object(v)  # noqa: E731
    parents = conv.parents
    node = conv.node
    if type(node) is cst.Call and len(parents) == len(node.args):  # ``nd.array(data, ctx=...)``: the data
        parents = [p for p, a in zip(parents, node.args) if a.keyword is None]
    return any(_graph_source(v, fw) for p in parents for v in graph_path(p, stop) if not stop(v))


def _graph_source(v, fw) -> bool:
    """Known to hold a graph: a leaf, or a recorded model or function call (a name nobody
    knows, ``self.baseline``, may or may not: not enough to report)."""
    if "left-graph" in v.tags or "const" in v.tags:
        return False
    if "leaf" in v.tags:
        return True
    return type(v.node) is cst.Call and not v.pure and recorded(v, fw)


def _object_result(v) -> bool:
    """What a method of an object returns (``env.step(action)`` of a ``gym.make(...)``
    environment): its data, not a path back to the graph; a conversion that only feeds
    it is how the value was handed over, not a break of the graph."""
    node = v.node
    return (type(node) is cst.Call and type(node.func) is cst.Attribute and "left-graph" not in v.tags
            and bool(v.parents) and is_object(v.parents[0]))


def _deepest(conv, fw, inner=None, depth: int = 0):
    """The conversion where the graph is really left: ``torch.tensor(x.item())`` -> ``.item()``
    (not past what an object's method returns: ``nd.array(env.step(a.asnumpy())[0])``
    starts from the environment's data); ``inner``: what a call of a local function
    that returns only values out of the graph returned (``_returned_inside``), followed
    into it (a forward pass that returns ``torch.FloatTensor(logits.data.numpy())``)."""
    if _from_recorded(conv, fw):
        return conv
    stop = lambda v: _left(v) or _object_result(v) or UNKNOWN_RESULT <= v.tags  # noqa: E731  (what unknown code returns: no path)
    inside = inner(conv) if inner is not None and depth < 4 else ()
    for p in (*conv.parents, *inside):
        for v in graph_path(p, stop):
            if _left(v) and v is not conv:
                found = _deepest(v, fw, inner, depth + any(p is q for q in inside))
                if found is not None:
                    return found
    return None


def _returned_inside(facts):
    """``_deepest``'s ``inner``: at a call of a local function whose every returned value
    has left the graph (``Returns.left``), those values (``Facts.left_returned``)."""
    def inner(v):
        fact = facts.call_of(v.node) if type(v.node) is cst.Call else None
        target = fact.target if fact is not None else None
        if target is None or not target.returns.left:
            return ()
        return facts.left_returned.get(id(target), ())
    return inner


def _deepest_node(conv, fw, inner=None):
    found = _deepest(conv, fw, inner)
    return found.node if found is not None else None


def _is_detach(conv) -> bool:
    if "detached" in conv.tags:  # (in place, by the call of a function that does: ``flow.DETACHED``)
        return True
    node = conv.node
    if isinstance(node, cst.Attribute):
        return node.attr.value == "data"
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("detach", "detach_")


def _inside_record(conv) -> bool:
    return conv.state is not None and conv.state.mxnet.on


# --- the fix ----------------------------------------------------------------------------
class _NoFix(Exception):
    pass


# NumPy functions whose torch / mxnet.nd namesake means the same with the same positional
# arguments (``np.exp`` -> ``torch.exp`` / ``nd.exp``).
_NUMPY_TWINS = frozenset({
    "exp", "log", "log1p", "expm1", "abs", "sqrt", "square", "tanh", "sin", "cos", "sign",
    "maximum", "minimum", "where", "clip", "sum", "mean",
})


# Calls that make a framework array of their argument (a copy, out of the graph).
_WRAPPERS = {"torch.tensor", "torch.from_numpy", "torch.as_tensor", "torch.Tensor", "mxnet.nd.array", "mxnet.ndarray.array"}


# The typed constructors that take an array: undone as the dtype method they stand for
# (``torch.FloatTensor(y.data.numpy())`` -> ``y.float()``).
_TYPED_WRAPPERS = {"torch.FloatTensor": "float", "torch.DoubleTensor": "double", "torch.HalfTensor": "half"}


_NUMPY_WRAPPERS = {"numpy.asarray", "numpy.array", "numpy.asanyarray", "numpy.ascontiguousarray", "numpy.float32", "numpy.float64"}


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple)


# Where an expression needs no parentheses of its own.
_OPEN_SLOTS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Arg, cst.Return, cst.Expr, cst.Element)


def _paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class _Reconnect:
    """Rewrites an expression so that it stays in the graph: conversions out of it are
    undone (``y.asnumpy()`` -> ``y``, ``x.data`` -> ``x``, ``torch.tensor(t)`` -> ``t``,
    ``torch.tensor([a, b])`` -> ``torch.stack([a, b])``) and NumPy functions on the way
    become the framework's own (``np.exp`` -> ``nd.exp``). Raises _NoFix where that
    cannot be done (NumPy used in a way the framework cannot follow)."""

    def __init__(self, ctx, fw: str, anchor: cst.CSTNode):
        self.ctx, self.fw = ctx, fw
        self.func = function_of(ctx, anchor)
        self.scope = scope_of(ctx, self.func)
        self.extra: List[Tuple[cst.CSTNode, cst.CSTNode]] = []  # helpers ported to the framework
        self.left = False  # (set by ``top``)

    def qualify(self, func) -> Optional[str]:
        return self.ctx.facts.names.qualify(func, self.scope)

    def builtin(self, func) -> Optional[str]:
        return self.ctx.facts.names.builtin(func, self.scope)

    # classification
    def kind(self, node) -> Optional[str]:
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            call = parents(self.ctx.facts.module).get(id(node))
            return None if isinstance(call, cst.Call) and call.func is node else "leave"  # not Gluon's ``p.data()``
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in LEAVING_METHODS:
            return "leave"
        q = self.qualify(func)
        if q in _WRAPPERS or q in _NUMPY_WRAPPERS or q in _TYPED_WRAPPERS or self.builtin(func) == "float":
            return "wrap"
        if q is not None and q.startswith("numpy.") and q[len("numpy."):] in _NUMPY_TWINS:
            return "numpy"
        if q is not None and q.startswith("numpy.") or self.builtin(func) in ("int", "bool", "list"):
            return "other-conversion"
        return None

    def holds_conversion(self, node) -> bool:
        if self.kind(node) is not None:
            return True
        return any(self.holds_conversion(c) for c in node.children)

    # rewriting
    def undo(self, node: cst.BaseExpression) -> cst.BaseExpression:
        new = self._undo(node)
        if isinstance(node, _ATOMS) and new is not node:
            new = _paren(new)
        return new

    def _undo(self, node):
        kind = self.kind(node)
        if kind == "leave":
            return self._undo(node.value if isinstance(node, cst.Attribute) else node.func.value)
        if kind == "wrap":
            pos = [a for a in node.args if a.keyword is None]
            if len(pos) != 1 or pos[0].star:
                raise _NoFix
            value = pos[0].value
            inner = self._undo(value)
            if self.is_list(value):
                inner = self.stack(value, inner)
            typed = _TYPED_WRAPPERS.get(self.qualify(node.func))
            if typed is not None:
                inner = cst.Call(func=cst.Attribute(value=inner if isinstance(inner, _ATOMS) else _paren(inner), attr=cst.Name(typed)))
            return inner
        if kind == "numpy":
            if any(a.keyword is not None or a.star for a in node.args):
                raise _NoFix
            func = self.spell(self.qualify(node.func)[len("numpy."):])
            return cst.Call(func=func, args=[a.with_changes(value=self._undo(a.value)) for a in node.args],
                            lpar=node.lpar, rpar=node.rpar)
        if kind == "other-conversion":
            raise _NoFix
        if not self.holds_conversion(node):
            return node
        if isinstance(node, cst.BinaryOperation):
            return node.with_changes(left=self.undo(node.left), right=self.undo(node.right))
        if isinstance(node, cst.UnaryOperation):
            return node.with_changes(expression=self.undo(node.expression))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):  # a tensor method
            func = node.func.with_changes(value=self.undo(node.func.value))
            return node.with_changes(func=func, args=[a.with_changes(value=self.undo(a.value)) for a in node.args])
        if isinstance(node, cst.Subscript):
            return node.with_changes(value=self.undo(node.value))
        if isinstance(node, (cst.List, cst.Tuple)):
            return node.with_changes(elements=[e.with_changes(value=self.undo(e.value)) for e in node.elements])
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and not any(a.keyword is None and a.star for a in node.args):
            self.port_helper(node.func.value)  # a function of the user's written with NumPy
            return node.with_changes(args=[a.with_changes(value=self.undo(a.value)) for a in node.args])
        raise _NoFix

    def port_helper(self, name: str) -> None:
        """Rewrite a module-level helper called only here, whose NumPy use is only
        functions with a framework twin (``np.abs`` -> ``torch.abs``); else _NoFix."""
        infos = [f for f in self.ctx.facts.functions if f.name == name and f.parent is None and f.cls is None]
        if len(infos) != 1 or any(n is infos[0].node for n, _ in self.extra):
            raise _NoFix
        info = infos[0]
        module = self.ctx.facts.module
        calls = [n for n in walk(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == name]
        mentions = [n for n in walk(module) if isinstance(n, cst.Name) and n.value == name]
        if len(calls) != 1 or len(mentions) != 1 + 1:  # the def and this one call
            raise _NoFix
        outer = (self.func, self.scope)
        self.func, self.scope = info, info.scope
        try:
            funcs: Dict[int, Replacement] = {}
            for n in walk(info.node.body):
                kind = self.kind(n)
                if kind == "numpy" and not any(a.keyword is not None or a.star for a in n.args):
                    funcs[id(n.func)] = self.spell(self.qualify(n.func)[len("numpy."):])
                elif kind is not None:
                    raise _NoFix
            mapped = {id(x) for n in walk(info.node.body) if id(n) in funcs for x in walk(n)}
            if not funcs or any(
                isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in mapped and (self.qualify(n) or "").startswith("numpy")
                for n in walk(info.node.body)
            ):
                raise _NoFix  # NumPy used some other way
        finally:
            self.func, self.scope = outer
        self.extra.append((info.node, info.node.visit(Replace(funcs))))

    def spell(self, name: str) -> cst.BaseExpression:
        if self.fw == TORCH:
            expr = spell(self.ctx, self.scope, f"torch.{name}")
        else:
            expr = spell(self.ctx, self.scope, f"mxnet.nd.{name}") or spell(self.ctx, self.scope, f"mxnet.ndarray.{name}")
        if expr is None:
            raise _NoFix
        return expr

    def stack(self, original: cst.BaseExpression, items: cst.BaseExpression) -> cst.Call:
        """One array of a list of graph values: ``torch.stack``; MXNet's scalars (shape
        (1,)) joined with ``nd.concat(..., dim=0)``, other arrays with ``nd.stack``."""
        if self.fw == TORCH:
            return cst.Call(func=self.spell("stack"), args=[cst.Arg(items)])
        scalars = isinstance(original, (cst.List, cst.Tuple)) and original.elements and all(
            isinstance(e.value, cst.Call) and isinstance(e.value.func, cst.Attribute) and e.value.func.attr.value == "asscalar"
            for e in original.elements
        )
        if scalars:
            dim = keyword_call(cst.Name("_"), dim=cst.Integer("0")).args[0]
            return cst.Call(func=self.spell("concat"), args=[cst.Arg(items, star="*"), dim])
        return cst.Call(func=self.spell("stack"), args=[cst.Arg(items, star="*")])

    def is_list(self, expr) -> bool:
        """A list (or tuple) literal, or a name only ever bound to one here (whose items
        are not taken out of the graph on the way: that edit would be elsewhere)."""
        if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if not isinstance(expr, cst.Name):
            return False
        body = self.func.node if self.func is not None else self.ctx.facts.module
        values = []
        stack = [body]
        while stack:
            n = stack.pop()
            if n is not body and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == expr.value for t in n.targets):
                values.append(n.value)
            stack.extend(n.children)
        if not values or not all(isinstance(v, (cst.List, cst.ListComp)) for v in values):
            return False
        if any(self.holds_conversion(v) for v in values):
            raise _NoFix
        return True

    def top(self, conv: cst.CSTNode) -> cst.CSTNode:
        """The outermost expression around ``conv`` that belongs to the round trip out of
        and back into the framework (arithmetic, NumPy functions, the re-wrapping call).
        Sets ``left`` where the climb passed a further conversion out of the graph that no
        re-wrapping call around it brings back: undoing ``conv`` alone would leave that one
        on a value that now requires grad (``y.data.numpy()`` -> ``y.numpy()``, an error),
        unless the top of another conversion holds this one."""
        table = parents(self.ctx.facts.module)
        top = current = conv
        left = False  # a conversion out of the graph above ``top``, not yet undone
        while True:
            parent = table.get(id(current))
            if isinstance(parent, cst.Arg):
                call = table.get(id(parent))
                if not isinstance(call, cst.Call) or self.kind(call) not in ("wrap", "numpy"):
                    break
                current = top = call
                left = False
            elif isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
                current = parent
            elif isinstance(parent, cst.Attribute) and parent.value is current and isinstance(table.get(id(parent)), cst.Call) \
                    and table.get(id(parent)).func is parent:
                current = table.get(id(parent))  # a method on the converted value
                left = left or self.kind(current) == "leave"
            else:
                break
        self.left = left
        return top


@quiet
def reconnect_graph(ctx, conversions: Sequence[cst.CSTNode], fw: str) -> Optional[NodeFix]:
    """SL206: undo the conversions that take the backpropagated value out of the graph
    (each with the round trip around it), so the gradient flows again."""
    if fw not in (TORCH, MXNET) or not conversions:
        return None
    table = parents(ctx.facts.module)
    tops: List[cst.CSTNode] = []
    unsafe: List[cst.CSTNode] = []  # tops that would leave a conversion behind
    for conv in conversions:
        climb = _Reconnect(ctx, fw, conv)
        top = climb.top(conv)
        if all(t is not top for t in tops):
            tops.append(top)
        if climb.left:
            unsafe.append(top)

    def inside(node, other) -> bool:
        p = table.get(id(node))
        while p is not None:
            if p is other:
                return True
            p = table.get(id(p))
        return False

    tops = [t for t in tops if not any(inside(t, o) for o in tops if o is not t)]
    if any(t is u for t in tops for u in unsafe):
        return None
    pairs = []
    for t in tops:
        rewriter = _Reconnect(ctx, fw, t)
        try:
            new = rewriter._undo(t)
        except _NoFix:
            return None
        if not isinstance(table.get(id(t)), _OPEN_SLOTS):
            new = _paren(new)
        pairs.append((t, new))
        pairs.extend(rewriter.extra)
    first_old, first_new = pairs[0]
    message = f"Stay in the graph: `{clip(code_of(first_old))}` -> `{clip(code_of(first_new))}`"
    if any(isinstance(old, cst.BaseStatement) for old, _ in pairs):
        # A ported helper: statements map exactly onto their source only through the module.
        return module_fix(ctx.facts.module, {id(old): new for old, new in pairs}, message)
    return NodeFix(first_old, first_new, UNSAFE, message, tuple(pairs[1:]))


RULE = GraphBrokenByConversion
