from typing import List, Optional

import libcst as cst

from scopelint.core.syntax import walk
from scopelint.core.queries import explicit_off, off_at_every_call, recorded_in, spell
from scopelint.fixkit import (
    body_statements, code_of, drop_decorator, enclosing_with, function_of, module_fix, quiet,
    scope_of, statement_of, torch_scope_call,
)
from scopelint.rule import NodeFix, Report, Rule


class BackwardInsideNoGradScope(Rule):
    code = "SL102"
    name = "backward-inside-no-grad-scope"
    severity = "warning"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "Backward is called inside a scope that turns recording off, on a value that was recorded."
    help = "Move the backward call out of the `no_grad()`/`pause()` block: the scope does not change the gradients."
    why = """
        Backward does not look at the recording state: gradients are the same inside
        `torch.no_grad()` or `autograd.pause()` as outside. Authors who put backward
        there usually believe it "pauses gradient updates"; it does not, and the next
        reader is misled. (The runtime verifier usually shows no gradient difference:
        this finding is about a wrong belief, not wrong numbers.)
    """
    bad = """
        from mxnet import autograd, gluon, nd

        net = gluon.nn.Dense(1)
        net.initialize()
        loss_fn = gluon.loss.L2Loss()
        x, y = nd.ones((4, 3)), nd.zeros((4, 1))
        with autograd.pause():
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
    """
    good = """
        from mxnet import autograd, gluon, nd

        net = gluon.nn.Dense(1)
        net.initialize()
        loss_fn = gluon.loss.L2Loss()
        x, y = nd.ones((4, 3)), nd.zeros((4, 1))
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
    """

    def check(self, ctx):
        for b in ctx.facts.backwards:
            if not all(recorded_in(v, b.frameworks) for v in b.values):
                continue
            off = explicit_off(b.state, b.frameworks)
            if off is None:
                # A helper (or method) whose every call stands in the scope: the same
                # belief, one call away. Reported at the backward; the fix takes the call
                # out of the scope when it is the helper's only call.
                outer = off_at_every_call(ctx.facts, b.func, b.frameworks) if all(b.state.recording(fw).off for fw in b.frameworks) else None
                if outer is not None and not _records_itself(b):
                    off, call = outer
                    calls = list(ctx.facts.sites_of(b.func))
                    yield Report(
                        b.node,
                        f"`backward` in `{b.func.name}`, which is only called inside `{spell(off.origin.api)}`,"
                        " on a recorded value: the scope has no effect on gradients",
                        # (one call, in the scope itself: take that call out of it)
                        backward_inside_off_scope(ctx, call.node, off, f"the call of `{b.func.name}`")
                        if len(calls) == 1 and calls[0] is call and off.origin.kind == "with" else None,
                    )
                continue
            where = "a function decorated with" if off.origin.kind == "decorator" else "inside"
            yield Report(
                b.node,
                f"`backward` {where} `{spell(off.origin.api)}` on a recorded value: the scope has no effect on gradients",
                backward_inside_off_scope(ctx, b.node, off),
            )


def _records_itself(b) -> bool:
    """The helper turns recording on itself for what it backpropagates (``with
    torch.enable_grad(): loss = net(x_adv)`` in an attack its callers run under
    ``no_grad``): it relies on the callers' scope being off, which misleads nobody."""
    if b.func is None:
        return False
    inside = None
    for v in b.values:
        for a in v.ancestors():
            st = a.state
            if st is None:
                continue
            for fw in b.frameworks:
                sw = st.recording(fw)
                if sw.on and sw.origin is not None and sw.origin.explicit and sw.origin.node is not None:
                    if inside is None:
                        inside = {id(n) for n in walk(b.func.node)}
                    if id(sw.origin.node) in inside:  # (its own ``enable_grad()``, not a caller's ``record()``)
                        return True
    return False


# --- the fix ----------------------------------------------------------------------------
@quiet
def backward_inside_off_scope(ctx, node, off, what: str = "the backward call") -> Optional[NodeFix]:
    """SL102: take the statement of ``node`` (the backward call, or the call of the helper
    that backpropagates) out of the scope (the scope removed for it)."""
    module = ctx.facts.module
    origin = off.origin
    if origin is None:
        return None
    if origin.kind == "decorator":
        return drop_decorator(ctx, origin.node, "Remove the decorator: backward does not depend on it")
    if origin.kind != "with" or not isinstance(origin.node, cst.WithItem):
        return None
    item = origin.node
    with_node = enclosing_with(module, item)
    if with_node is None:
        return None
    stmt = statement_of(module, node)
    body = body_statements(with_node)
    if (
        stmt is not None
        and len(with_node.items) == 1
        and isinstance(with_node.body, cst.IndentedBlock)
        and any(s is stmt for s in with_node.body.body)
    ):
        index = next(i for i, s in enumerate(with_node.body.body) if s is stmt)
        before, after = body[:index], body[index + 1:]
        parts: List[cst.BaseStatement] = []
        if before:
            parts.append(with_node.with_changes(body=with_node.body.with_changes(body=before)))
            moved = stmt
        else:
            moved = stmt.with_changes(leading_lines=tuple(with_node.leading_lines) + tuple(stmt.leading_lines))
        parts.append(moved)
        if after:
            parts.append(with_node.with_changes(body=with_node.body.with_changes(body=after), leading_lines=()))
        return module_fix(
            module, {id(with_node): cst.FlattenSentinel(parts)},
            f"Move {what} out of `{code_of(item.item)}`: gradients are the same",
        )
    # The backward sits deeper inside the scope: restore, for the whole block, the
    # recording state the scope replaced (PyTorch records by default).
    call = item.item
    if not isinstance(call, cst.Call) or not origin.api or not origin.api.startswith("torch."):
        return None
    sc = scope_of(ctx, function_of(ctx, with_node))
    return torch_scope_call(ctx, sc, "torch.enable_grad", module, call, f"Remove the effect of `{code_of(call)}`: `{{new}}`")


RULE = BackwardInsideNoGradScope
