# The package re-exports its helpers (gluon-cv style): importing it imports engine.py too.
from .engine import evaluate, train_epoch  # noqa: F401
