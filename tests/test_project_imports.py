"""Whole-project analysis (scopelint/project.py, core/interfile.py): how a file's
imports name the other files of the run."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import libcst as cst
import pytest

from scopelint.cli import main
from scopelint.core.names import _relative
from scopelint.project import Program

HELPERS = '''import torch


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(model(x).sum().item() for x, _ in loader)
'''

# A training loop that evaluates with a helper of another module and never puts the
# model back in train mode; ``{dots}`` is how it imports the helper's module.
TRAIN = '''import torch
from {dots}utils import evaluate

model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 4))]
model.train()
for epoch in range(3):
    for x, y in loader:
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    evaluate(model, loader)
'''


@pytest.mark.parametrize("package, level, module, expected", [
    ("pkg", 0, "utils", "utils"),
    ("pkg", 1, "utils", "pkg.utils"),
    ("pkg", 1, None, "pkg"),
    ("pkg.sub", 2, "utils", "pkg.utils"),
    ("pkg.sub", 2, None, "pkg"),
    ("pkg", 2, "utils", None),  # beyond the top package: Python raises ImportError
    ("pkg", 2, None, None),
    ("pkg.sub", 3, "utils", None),
    ("", 1, "utils", None),  # a top-level module has no relative imports
])
def test_relative_imports_resolve_as_python_does(package, level, module, expected):
    """The project layer (which files a module imports) and the name resolution of the
    analysis (which qualified name a call has) agree, and with Python."""
    assert Program._absolute(SimpleNamespace(package=package), level, module) == expected
    if level and package != "":  # (the analysis is told no package for a top-level module)
        node = cst.parse_statement(f"from {'.' * level}{module or ''} import x").body[0]
        assert _relative(node, package) == expected


def _codes(root: Path, target: Path, monkeypatch, capsys):
    monkeypatch.chdir(root)
    rc = main(["check", "--no-cache", "--preview", "--jobs", "1", "--output-format", "json", str(target)])
    out, _ = capsys.readouterr()
    assert rc in (0, 1)
    return [(Path(f["filename"]).relative_to(root).as_posix(), f["location"]["row"], f["code"], f["message"])
            for f in json.loads(out)]


def test_a_relative_import_beyond_the_top_package_names_no_module(tmp_path, monkeypatch, capsys):
    """``from ..utils import evaluate`` in the top package ``pkg`` fails in Python: the
    ``utils.py`` beside ``pkg`` is not what it imports, so nothing is known of it."""
    (tmp_path / "utils.py").write_text(HELPERS, encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "train.py").write_text(TRAIN.format(dots=".."), encoding="utf-8")
    assert _codes(tmp_path, tmp_path / "pkg", monkeypatch, capsys) == []


def test_a_relative_import_one_package_up_is_of_the_program(tmp_path, monkeypatch, capsys):
    """The same import one package deeper names ``pkg/utils.py``: its summary applies."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "sub" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "utils.py").write_text(HELPERS, encoding="utf-8")
    (pkg / "sub" / "train.py").write_text(TRAIN.format(dots=".."), encoding="utf-8")
    found = _codes(tmp_path, pkg / "sub", monkeypatch, capsys)
    assert [(f, row, code) for f, row, code, _ in found] == [("pkg/sub/train.py", 14, "SL207")]
    assert "utils.py" in found[0][3]
