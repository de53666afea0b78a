"""scopelint: a linter for autograd scope misuse in PyTorch and MXNet code."""

__version__ = "0.1.0"
DOCS_URL = "https://scopelint.readthedocs.io/en/latest/rules/{code}.html"
