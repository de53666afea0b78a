from typing import Optional

import libcst as cst

from scopelint.core.arguments import call_arg
from scopelint.core.syntax import literal_bool
from scopelint.fixkit import code_of, dedented, module_fix, quiet, Replacement
from scopelint.rule import NodeFix, Report, Rule


class RedundantPause(Rule):
    code = "SL104"
    name = "redundant-pause"
    severity = "info"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "A scope that turns recording off where nothing records: a no-op."
    help = "Remove the redundant `autograd.pause()` / `torch.no_grad()` block (keep its body)."
    why = """
        MXNet records only inside `autograd.record()`: a `pause()` at module level, inside
        another `pause()`, or in a function that is only called where recording is off
        does nothing. A `torch.no_grad()` nested in another off scope does nothing
        either. The scope suggests a recording state that is not there and hides where
        recording really happens.
    """
    bad = """
        from mxnet import gluon, nd, autograd

        net = gluon.nn.Dense(2)
        net.initialize()

        def predict(x):
            with autograd.pause():
                return net(x)

        print(predict(nd.ones((1, 4))))
    """
    good = """
        from mxnet import gluon, nd

        net = gluon.nn.Dense(2)
        net.initialize()

        def predict(x):
            return net(x)

        print(predict(nd.ones((1, 4))))
    """

    def check(self, ctx):
        for scope in ctx.facts.scopes:
            if not scope.called:
                continue
            before = scope.before
            if scope.api == "torch.no_grad" and before.torch.off:
                yield Report(scope.item.item, "`torch.no_grad()` inside a scope where recording is already off: a no-op", redundant_scope(ctx, scope))
            elif scope.api == "mxnet.autograd.pause" and before.mxnet.off and before.mx_train.off:
                arg = call_arg(scope.item.item, 0, "train_mode")
                if arg is None or literal_bool(arg.value) is False:
                    yield Report(scope.item.item, "`autograd.pause()` where nothing records: a no-op", redundant_scope(ctx, scope))


# --- the fix ----------------------------------------------------------------------------
@quiet
def redundant_scope(ctx, scope_fact) -> Optional[NodeFix]:
    """SL104: remove the no-op scope, keeping its body."""
    module = ctx.facts.module
    item = scope_fact.item
    with_node = scope_fact.with_node
    if item.asname is not None:
        return None
    if len(with_node.items) == 1:
        replacement: Replacement = cst.FlattenSentinel(dedented(with_node))
    else:
        items = [i for i in with_node.items if i is not item]
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        replacement = with_node.with_changes(items=items)
    return module_fix(module, {id(with_node): replacement}, f"Remove the redundant `{code_of(item.item)}` (keep its body)")


RULE = RedundantPause
