"""The runtime verifier (installed as ``scopelint.runtime_check``).

It re-executes a flagged, self-contained program twice -- as written and with the
finding's counterfactual fix (the rule's own ``NodeFix``) -- in fresh, limited
subprocesses, compares the traces and attaches a verdict to the finding:
``confirmed:error``, ``confirmed:grads-differ``, ``confirmed:outputs-differ``,
``confirmed:graph-retained``, ``refuted`` or ``inconclusive`` (with the reason).

It holds only what runs programs: ``harness`` (one run in a subprocess), ``_child``
(the instrumentation inside it), ``oracle`` (verdicts), ``verify`` (orchestration),
``cli`` (``check --verify``, ``scopelint verify``). The fixes it runs are the rules' own
(each rule module builds its fix next to its ``check``, with ``scopelint.fixkit``): the
verifier depends on the rules, never the other way round.

Importing this package never imports torch or mxnet: only the child processes do.
Nothing is imported here, so that building the CLI's parser stays cheap.
"""

# What ``check --verify`` offers (here, so that building the CLI's parser imports nothing).
DEVICES = ("cpu", "cuda", "all")
DEFAULT_TIMEOUT = 60.0
