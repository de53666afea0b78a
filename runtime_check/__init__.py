"""The runtime verifier (installed as ``scopelint.runtime_check``).

It re-executes a flagged, self-contained program twice -- as written and with the
finding's counterfactual fix (the rule's own ``NodeFix``) -- in fresh, limited
subprocesses, compares the traces and attaches a verdict to the finding:
``confirmed:error``, ``confirmed:grads-differ``, ``confirmed:outputs-differ``,
``confirmed:graph-retained``, ``refuted`` or ``inconclusive`` (with the reason).

Modules: ``counterfactuals`` (fix builders the rules use), ``harness`` (one run in a
subprocess), ``_child`` (the instrumentation inside it), ``oracle`` (verdicts),
``verify`` (orchestration), ``cli`` (``check --verify``, ``scopelint verify``).

Importing this package never imports torch or mxnet: only the child processes do.
Nothing is imported here, so the rules can load ``counterfactuals`` cheaply.
"""

# What ``check --verify`` offers (here, so that building the CLI's parser imports nothing).
DEVICES = ("cpu", "cuda", "all")
DEFAULT_TIMEOUT = 60.0
