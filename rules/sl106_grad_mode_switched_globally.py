from typing import Dict, Optional

import libcst as cst

from scopelint.core import frameworks as F
from scopelint.core.arguments import call_arg
from scopelint.core.syntax import literal_bool
from scopelint.core.queries import is_restore
from scopelint.core.state import Mode
from scopelint.core.syntax import block_path, finds, terminates
from scopelint.fixkit import (
    block_of, code_of, indented, keyword_call, module_fix, quiet, Replacement, scope_of, sibling,
    statement_of,
)
from scopelint.rule import NodeFix, Report, Rule


# The part of ``state.State`` each family of setters switches (``Returns.exit``).
_STATE_PART = {(F.TORCH, "recording"): "torch", (F.MXNET, "recording"): "mxnet", (F.MXNET, "training"): "mx_train"}

# Methods whose job is to set (and elsewhere reset) the global state.
SCOPE_METHODS = {"__enter__", "__exit__", "__aenter__", "__aexit__", "setUp", "tearDown", "setUpClass", "tearDownClass", "setup_method", "teardown_method"}


class GradModeSwitchedGlobally(Rule):
    code = "SL106"
    name = "grad-mode-switched-globally"
    severity = "warning"
    frameworks = ("torch", "mxnet")
    fixable = "unsafe"
    summary = "A function switches the global recording/training state and does not restore it on all paths."
    help = "Use the scoped form (`with torch.set_grad_enabled(...)`, `with autograd.record()/pause()`), or restore the previous state in a `finally:`."
    why = """
        `torch.set_grad_enabled(False)`, `autograd.set_recording(...)` and
        `autograd.set_training(...)` called as statements change a process-wide flag.
        Inside a function that does not restore it, the change leaks to every caller:
        after `evaluate()` returns, the training loop silently runs without gradients
        (or with Dropout in the wrong mode). An exception leaks it too, unless the
        restore sits in a `finally:`. Not reported: a class's paired mode methods (an
        `eval()` that turns recording off and a `train()` that turns it back on, as
        `__enter__`/`__exit__` do), and `torch.set_grad_enabled(True)`, which puts
        PyTorch's default back.
    """
    bad = """
        import torch

        model = torch.nn.Linear(3, 1)

        def evaluate(x):
            torch.set_grad_enabled(False)
            return model(x).mean().item()
    """
    good = """
        import torch

        model = torch.nn.Linear(3, 1)

        def evaluate(x):
            with torch.set_grad_enabled(False):
                return model(x).mean().item()
    """

    def check(self, ctx):
        for call in ctx.facts.calls:
            if call.qname not in F.SETTERS or not call.statement or call.func is None:
                continue
            family = F.SETTERS[call.qname]
            if call.func.name in SCOPE_METHODS or is_restore(call, ctx.facts):
                continue  # a context manager or test fixture managing the state on purpose
            flag = literal_bool(call.node.args[0].value) if call.node.args else None
            if flag is None:
                continue  # propagating a state (to a thread, from a saved value): not a switch
            if flag and family == (F.TORCH, "recording"):
                continue  # back to PyTorch's default (Lightning's loop ``reset``): no leak to report
            if self._paired(call, family, flag, ctx.facts):
                continue  # one of a class's paired mode methods (``eval()``/``train()``): its purpose
            if not self._restored(call.node, call.func.node, family, ctx) and not self._restored_by_callers(call.func, call.node, family, flag, ctx):
                yield Report(call.node, f"`{call.callee}(...)` switches the global state inside `{call.func.name}` and is not restored on every path", global_switch(ctx, call))

    @staticmethod
    def _paired(call, family, flag, facts) -> bool:
        return GradModeSwitchedGlobally._paired_in(call.func, family, flag, facts)

    @staticmethod
    def _paired_in(func, family, flag, facts) -> bool:
        """A method whose class has another method switching the same state the other
        way (gluon-cv COOT's ``eval()`` off, ``train()`` on): a mode API, like a context
        manager's ``__enter__``/``__exit__``. The other way may be switched by a function
        it calls, that leaves it so on exit (``Returns.exit``)."""
        cls = func.cls
        if cls is None:
            return False
        part = _STATE_PART.get(family)
        back = Mode.ON if not flag else Mode.OFF
        for other in facts.calls:
            if other.func is None or other.func.cls is not cls or other.func is func or not other.statement:
                continue
            if F.SETTERS.get(other.qname) == family and other.node.args and literal_bool(other.node.args[0].value) is (not flag):
                return True
            if other.target is not None and other.target is not func and any(
                    p == part and sw.mode is back for p, sw in other.target.returns.exit):
                return True
        return False

    def _restored_by_callers(self, func, setter, family, flag, ctx, depth: int = 3) -> bool:
        """The switch ``setter`` is what ``func`` leaves on exit (``Returns.exit``: a helper
        that turns recording off for its caller), and every call of ``func`` in the file
        restores the state after it, as ``_restored`` sees a switch of its own (or is in a
        function that so leaves it to callers that do: ``depth`` levels up)."""
        if not depth or not any(sw.origin is not None and sw.origin.node is setter for _, sw in func.returns.exit):
            return False
        sites = [c for c in ctx.facts.sites_of(func) if c.func is not func]
        return bool(sites) and all(c.func is not None and (
            self._restored(c.node, c.func.node, family, ctx) or self._paired_in(c.func, family, flag, ctx.facts)
            or self._restored_by_callers(c.func, setter, family, flag, ctx, depth - 1))
            for c in sites)

    def _restored(self, node, func_node, family, ctx) -> bool:
        names = ctx.facts.names
        facts = ctx.facts

        def same_family(n: cst.CSTNode) -> bool:
            if isinstance(n, cst.Call) and n is not node:
                scope = names.scope_of(func_node, None)
                q = names.qualify(n.func, scope)
                if F.SETTERS.get(q) == family:
                    return True
                target = getattr(facts.call_of(n), "target", None)  # a helper that sets it (``_restore(prev)``)
                return target is not None and target.node is not func_node and _sets_family(facts, target, family)
            return False

        path = block_path(func_node.body, node)
        for depth, (block, index) in enumerate(reversed(path)):
            stmt = block[index]
            if depth > 0 and isinstance(stmt, (cst.Try, cst.TryStar)) and stmt.finalbody is not None:
                if finds(stmt.finalbody, same_family):
                    return True
            if depth == 0:
                for later in block[index + 1:]:
                    if isinstance(later, (cst.Try, cst.TryStar)) and later.finalbody is not None and finds(later.finalbody, same_family):
                        return True
                    if terminates(later) or (not isinstance(later, cst.SimpleStatementLine) and finds(later, same_family)):
                        break
                    if finds(later, same_family):
                        return True
        return False


def _sets_family(facts, func, family, depth: int = 3) -> bool:
    """``func`` (or a function it calls, ``depth`` levels down) calls a setter of ``family``."""
    return any((F.SETTERS.get(c.qname) == family and c.statement) or (
        depth > 1 and c.target is not None and c.target is not func and _sets_family(facts, c.target, family, depth - 1))
        for c in facts.calls_in(func))


# --- the fix ----------------------------------------------------------------------------
@quiet
def global_switch(ctx, call) -> Optional[NodeFix]:
    """SL106: turn the global switch into a scope over the rest of its block, so the
    previous state comes back when the block is left (also on return or exception)."""
    module = ctx.facts.module
    node = call.node
    stmt = statement_of(module, node)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not (isinstance(small, cst.Expr) and small.value is node):
        return None
    located = block_of(module, stmt)
    if located is None or not isinstance(located[0], cst.IndentedBlock):
        return None
    block, index = located
    scope = scope_of(ctx, call.func)
    q = call.qname
    if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
        scope_expr: cst.BaseExpression = node
    elif q in ("mxnet.autograd.set_recording", "mxnet.autograd.set_training"):
        arg = call_arg(node, 0, "is_recording" if q.endswith("set_recording") else "train_mode")
        flag = literal_bool(arg.value) if arg is not None else None
        if flag is None:
            return None
        if q.endswith("set_recording"):
            api = sibling(ctx, scope, node.func, "mxnet.autograd.record" if flag else "mxnet.autograd.pause")
            training = sibling(ctx, scope, node.func, "mxnet.autograd.is_training")
            if api is None or training is None:
                return None
            scope_expr = keyword_call(api, train_mode=cst.Call(func=training))
        else:
            api = sibling(ctx, scope, node.func, "mxnet.autograd.train_mode" if flag else "mxnet.autograd.predict_mode")
            if api is None:
                return None
            scope_expr = cst.Call(func=api)
    else:
        return None
    rest = list(block.body[index + 1:])
    new = cst.With(
        items=[cst.WithItem(scope_expr)],
        body=indented(rest, header=stmt.trailing_whitespace),
        leading_lines=stmt.leading_lines,
    )
    mapping: Dict[int, Replacement] = {id(stmt): new}
    for s in rest:
        mapping[id(s)] = cst.RemovalSentinel.REMOVE
    return module_fix(module, mapping, f"Scope the switch: `with {code_of(scope_expr)}:` over the rest of the block")


RULE = GradModeSwitchedGlobally
