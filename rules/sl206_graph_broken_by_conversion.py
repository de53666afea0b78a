from scopelint.core.frameworks import MXNET
from scopelint.core.queries import graph_path, may_carry_graph
from scopelint.rule import Report, Rule


class GraphBrokenByConversion(Rule):
    code = "SL206"
    name = "graph-broken-by-conversion"
    severity = "error"
    frameworks = ("torch", "mxnet")
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

        def left(v):
            return "left-graph" in v.tags

        for b in facts.backwards:
            fws = [fw for fw in b.frameworks if fw in facts.frameworks]
            if len(fws) != 1:
                continue
            fw = fws[0]
            for value in b.values:
                reachable = list(graph_path(value, left))
                other_path = any(may_carry_graph(v, fw) for v in reachable if not left(v))
                for conv in (v for v in reachable if left(v)):
                    if id(conv.node) in reported or not self._from_recorded(conv, fw):
                        continue
                    mxnet_partial = fw == MXNET and conv.node is not None and self._inside_record(conv, facts)
                    if other_path and not mxnet_partial:
                        continue
                    reported.add(id(conv.node))
                    yield Report(conv.node, "this conversion leaves the graph on the way to the backpropagated value: gradients stop here")

    @staticmethod
    def _from_recorded(conv, fw) -> bool:
        return any(may_carry_graph(v, fw) for p in conv.parents for v in p.ancestors())

    @staticmethod
    def _inside_record(conv, facts) -> bool:
        call = facts.call_of(conv.node)
        state = call.state if call is not None else None
        if state is None:  # an attribute such as ``.data``: look at its base's call
            return False
        return state.mxnet.on


RULE = GraphBrokenByConversion
