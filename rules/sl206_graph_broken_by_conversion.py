import libcst as cst

from scopelint.core.frameworks import MXNET
from scopelint.core.queries import graph_path, may_carry_graph
from scopelint.rule import Report, Rule
from scopelint.runtime_check import counterfactuals as cf


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
        `.detach()` next to another path to the loss (a stop-gradient target) is fine.
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
        for b in facts.backwards:
            fws = [fw for fw in b.frameworks if fw in facts.frameworks]
            if len(fws) != 1:
                continue
            fw = fws[0]
            for value in b.values:
                reachable = list(graph_path(value, _left))
                other_path = any(may_carry_graph(v, fw) for v in graph_path(value, _left_or_data) if not _left_or_data(v))
                for conv in (v for v in reachable if _left(v)):
                    conv = _deepest(conv, fw)
                    if conv is None or id(conv.node) in reported:
                        continue
                    # MXNet silently gives partial gradients through a round trip made
                    # inside record(); a deliberate detach() (a stop-gradient) is fine.
                    mxnet_partial = fw == MXNET and not _is_detach(conv) and _inside_record(conv)
                    if other_path and not mxnet_partial:
                        continue
                    reported.add(id(conv.node))
                    # Undo it, and the conversions after it that lead back to the loss.
                    chain = [conv.node] + [v.node for v in reachable if _left(v) and v.node is not conv.node and _deepest_node(v, fw) is conv.node]
                    fix = cf.reconnect_graph(ctx, chain, fw)
                    yield Report(conv.node, "this conversion leaves the graph on the way to the backpropagated value: gradients stop here", fix)


def _left(v) -> bool:
    return "left-graph" in v.tags


def _left_or_data(v) -> bool:
    """Out of the graph, or an item of a data loader: neither is another path to the loss."""
    return _left(v) or "loop-item" in v.tags


def _from_recorded(conv, fw) -> bool:
    """Some value the conversion reads (directly, not through another one) has a graph."""
    return any(may_carry_graph(v, fw) for p in conv.parents for v in graph_path(p, _left) if not _left(v))


def _deepest(conv, fw):
    """The conversion where the graph is really left: ``torch.tensor(x.item())`` -> ``.item()``."""
    if _from_recorded(conv, fw):
        return conv
    for p in conv.parents:
        for v in graph_path(p, _left):
            if _left(v) and v is not conv:
                found = _deepest(v, fw)
                if found is not None:
                    return found
    return None


def _deepest_node(conv, fw):
    found = _deepest(conv, fw)
    return found.node if found is not None else None


def _is_detach(conv) -> bool:
    node = conv.node
    if isinstance(node, cst.Attribute):
        return node.attr.value == "data"
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("detach", "detach_")


def _inside_record(conv) -> bool:
    return conv.state is not None and conv.state.mxnet.on


RULE = GraphBrokenByConversion
