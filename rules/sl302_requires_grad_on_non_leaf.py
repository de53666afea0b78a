from typing import Optional

import libcst as cst

from scopelint.core.arguments import call_arg
from scopelint.core.syntax import literal_bool
from scopelint.core.frameworks import TORCH
from scopelint.core.names import dotted
from scopelint.core.queries import from_gradient, names_bound_to, wanted_as_leaf, wanted_as_leaf_after
from scopelint.core.syntax import walk
from scopelint.fixkit import clip, code_of, localized, quiet, Replace
from scopelint.rule import NodeFix, Report, Rule


class RequiresGradOnNonLeaf(Rule):
    code = "SL302"
    name = "requires-grad-on-non-leaf"
    severity = "error"
    frameworks = ("torch",)
    fixable = "unsafe"
    summary = "A tensor made with `requires_grad=True` is moved, cast or computed on before it gets a name (or its name is rebound to such a copy): the name holds a non-leaf."
    help = "Pass `device=`/`dtype=` to the factory, or call `.requires_grad_()` last."
    why = """
        `w = torch.randn(3, requires_grad=True).to(device)` (or `.cuda()`, `.double()`,
        `.view(...)`, `* 0.01`) binds `w` to the *result* of an operation. The leaf that
        requires grad is lost; `w.grad` stays `None` after backward (with a warning at
        best) and an optimizer given `w` never updates it. The same holds when the leaf
        is made first and its name then rebound to a copy of it: `x.requires_grad =
        True` then `x = x.to(device)`. Reported where the name is meant to be a leaf:
        its `.grad` is read or an optimizer is given it (after the rebinding).
    """
    bad = """
        import torch

        w = torch.randn(3, requires_grad=True) * 0.01
        loss = (w * 2).sum()
        loss.backward()
        print(w.grad)
    """
    good = """
        import torch

        w = (torch.randn(3) * 0.01).requires_grad_()
        loss = (w * 2).sum()
        loss.backward()
        print(w.grad)
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        factories = {
            id(c.node)
            for c in facts.calls
            if c.qname and c.qname.startswith("torch.") and (rg := call_arg(c.node, None, "requires_grad")) is not None
            and literal_bool(rg.value) is True
        }
        for m in _assignments(facts.module) if factories else ():
            value = m.value
            if id(value) in factories or _ends_with_requires_grad(value):
                continue
            factory = _factory_in(value, factories)
            # Only where the name is meant to be a leaf with a gradient (its ``.grad`` read,
            # an optimizer given it): flair's ``-inf * torch.ones(..., requires_grad=True)``
            # mask is a superfluous flag, not a lost parameter.
            if factory is not None and wanted_as_leaf(facts, names_bound_to(facts, value)):
                fix = requires_grad_last(value, factory)
                yield Report(value, "the tensor created with `requires_grad=True` is transformed before it is bound: the name holds a non-leaf whose `.grad` stays None", fix)
        for m in facts.mutations:
            if m.kind == "rebind" and _rebound_to_copy(facts, m):
                fix = leaf_again(m.node.value)
                yield Report(
                    m.node.value,
                    f"`{m.key}` requires grad, and is rebound to a copy computed from it: the name now holds a non-leaf whose `.grad` stays None",
                    fix,
                )


def _rebound_to_copy(facts, m) -> bool:
    """``x = x.to(...)`` (``.cuda()``, ``.double()``, ``.view(...)``, ``x * 2``) where ``x``
    held a leaf that requires grad, recording (the copy has a graph), not an update from a
    gradient (SL301's), and ``x`` is read as a leaf afterwards."""
    value = m.value
    if value is None or "leaf" not in m.before.tags or "left-graph" in m.before.tags or not m.state.torch.on:
        return False
    if "leaf" in value.tags or "left-graph" in value.tags or from_gradient(facts, value):
        return False
    if type(m.node) is not cst.Assign or len(m.node.targets) != 1 or not _chain_of(m.node.value, m.key):
        return False
    names = {m.key}
    return wanted_as_leaf(facts, names) and wanted_as_leaf_after(facts, m.func, m.node, m.loops, names)


def _chain_of(expr, name: str) -> bool:
    """``expr`` is a method chain or arithmetic on the name ``name`` itself."""
    if dotted(expr) == name:
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return _chain_of(expr.func.value, name)
    if isinstance(expr, cst.BinaryOperation):
        return _chain_of(expr.left, name) or _chain_of(expr.right, name)
    if isinstance(expr, cst.UnaryOperation):
        return _chain_of(expr.expression, name)
    return False


def _assignments(module: cst.Module):
    return [n for n in walk(module) if type(n) is cst.Assign]


def _ends_with_requires_grad(expr) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "requires_grad_"


def _factory_in(expr, factories):
    """The factory call that is the base of a method chain or an operand of arithmetic, or None."""
    if id(expr) in factories:
        return expr
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return _factory_in(expr.func.value, factories)
    if isinstance(expr, cst.BinaryOperation):
        return _factory_in(expr.left, factories) or _factory_in(expr.right, factories)
    if isinstance(expr, (cst.UnaryOperation,)):
        return _factory_in(expr.expression, factories)
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _factory_in(expr.value, factories)
    return None


# --- the fix ----------------------------------------------------------------------------
@quiet
def requires_grad_last(expr: cst.BaseExpression, factory: cst.Call) -> Optional[NodeFix]:
    """``torch.randn(3, requires_grad=True) * 0.01`` -> ``(torch.randn(3) * 0.01).requires_grad_()``:
    the name is bound to a leaf that requires grad."""
    args = [a for a in factory.args if not (a.keyword is not None and a.keyword.value == "requires_grad")]
    if len(args) == len(factory.args):
        return None
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    inner = expr.visit(Replace({id(factory): factory.with_changes(args=args)}))
    if not isinstance(inner, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not inner.lpar:
        inner = inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    new = cst.Call(func=cst.Attribute(value=inner, attr=cst.Name("requires_grad_")))
    return localized(expr, new, f"Make the bound tensor the leaf: `{clip(code_of(new))}`")


@quiet
def leaf_again(expr: cst.BaseExpression) -> Optional[NodeFix]:
    """``x.to(device)`` -> ``x.to(device).detach().requires_grad_()``: the name is bound to
    a fresh leaf that requires grad (no gradient flows back to the tensor it was copied from)."""
    inner = expr
    if not isinstance(inner, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not inner.lpar:
        inner = inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    new = cst.Call(func=cst.Attribute(value=cst.Call(func=cst.Attribute(value=inner, attr=cst.Name("detach"))), attr=cst.Name("requires_grad_")))
    return localized(expr, new, f"Bind a fresh leaf: `{clip(code_of(new))}`")


RULE = RequiresGradOnNonLeaf
