from scopelint.core.frameworks import TORCH
from scopelint.core.queries import backwards_in_loop, recording
from scopelint.core.roles import is_model_call, matches_any
from scopelint.fixkit import insert_call
from scopelint.rule import Report, Rule


class EvalTrainModeMismatch(Rule):
    code = "SL207"
    name = "eval-train-mode-mismatch"
    severity = "warning"
    fixable = "unsafe"
    frameworks = ("torch",)
    summary = "Evaluation runs a model still in training mode, or training resumes with the model left in eval mode."
    help = "Call `model.eval()` before evaluating and `model.train()` before the next training forward pass."
    why = """
        `no_grad()` does not switch Dropout and BatchNorm to inference behaviour;
        `model.eval()` does. Evaluating without it gives noisy, pessimistic metrics and
        updates BatchNorm statistics with validation data. The opposite mistake is
        worse: an evaluation helper that calls `model.eval()` and never
        `model.train()` again makes every later epoch train without dropout and with
        frozen BatchNorm statistics.
    """
    bad = """
        import torch

        model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.5), torch.nn.Linear(3, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def validate(x):
            model.eval()
            with torch.no_grad():
                return model(x).mean().item()

        for epoch in range(3):
            opt.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            opt.step()
            validate(torch.randn(4, 3))
    """
    good = """
        import torch

        model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.5), torch.nn.Linear(3, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def validate(x):
            model.eval()
            with torch.no_grad():
                return model(x).mean().item()

        for epoch in range(3):
            model.train()
            opt.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            opt.step()
            validate(torch.randn(4, 3))
    """

    def check(self, ctx):
        facts = ctx.facts
        if TORCH not in facts.frameworks:
            return
        yield from self._left_in_eval(ctx)
        yield from self._evaluated_in_train_mode(ctx)

    def _left_in_eval(self, ctx):
        """A training forward pass (here, or in a training step called here) that runs
        after an evaluation left the model in eval mode on the previous iteration."""
        facts = ctx.facts
        reported = set()
        steps = {id(b.func) for b in facts.backwards if b.func is not None}
        for call in facts.calls:
            if not call.loops or not recording(call.state, TORCH):
                continue
            if is_model_call(call) and backwards_in_loop(facts, call.loops[-1]):
                models = {call.callee}
            elif call.target is not None and id(call.target) in steps:
                models = _trained_models(call.target, facts)
            else:
                continue
            for name in sorted(models):
                if name not in call.maybe_eval or name in call.in_eval:
                    continue
                culprit = call.maybe_eval[name]
                if id(culprit) not in reported:
                    reported.add(id(culprit))
                    fix = insert_call(ctx, culprit, name, "train", True, f"Put `{name}` back in train mode")
                    yield Report(culprit, f"`{name}` is left in eval mode here and the training loop's next forward pass runs without `{name}.train()`", fix)

    def _evaluated_in_train_mode(self, ctx):
        """Evaluation code (by name) under no_grad in a file that trains and never calls eval()."""
        facts, inference_functions = ctx.facts, ctx.inference_functions
        if not facts.backwards or any(c.method == "eval" or (c.method == "train" and c.node.args) for c in facts.calls):
            return
        done = set()
        for call in facts.calls:
            sw = call.state.torch
            if call.func is None or not matches_any(call.func.name, inference_functions):
                continue
            if not (sw.off and sw.origin is not None and sw.origin.explicit) or not is_model_call(call):
                continue
            if id(call.func) not in done:
                done.add(id(call.func))
                fix = insert_call(ctx, call.node, call.callee, "eval", False, f"Put `{call.callee}` in eval mode first")
                yield Report(call.node, f"`{call.callee}` evaluated under `no_grad` but never put in `eval()`: Dropout/BatchNorm still act as in training", fix)


def _trained_models(step, facts):
    """Models a training step runs while recording, without putting them in train mode itself."""
    calls = facts.calls_in(step)
    models = {c.callee for c in calls if is_model_call(c) and c.callee and recording(c.state, TORCH)}
    models = {m[: -len(".forward")] if m.endswith(".forward") else m for m in models}
    restored = {c.callee.rsplit(".", 1)[0] for c in calls if c.method == "train" and c.callee}
    return models - restored


RULE = EvalTrainModeMismatch
