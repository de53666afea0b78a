"""The import direction between the project's parts, read from the import statements
(every ``import`` anywhere in a module: top level, inside functions, under TYPE_CHECKING)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, Set

REPO = Path(__file__).resolve().parents[1]
# Where each installed package lives in the repository (pyproject's package-dir).
PACKAGES = {"scopelint": REPO / "scopelint", "scopelint.rules": REPO / "rules", "scopelint.runtime_check": REPO / "runtime_check"}


def modules() -> Dict[str, Path]:
    out = {}
    for name, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([name, *parts])] = path
    return out


def imported(name: str, path: Path) -> Set[str]:
    """Absolute names of the modules ``path`` imports (``from a import b`` counts as both
    ``a`` and ``a.b``, since ``b`` may be a module)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


MODULES = modules()
GRAPH = {name: {m for m in imported(name, path) if m in MODULES and m != name} for name, path in MODULES.items()}


def test_the_module_table_reads_the_layout():
    # The reader sees the packages where they are, and the imports that are there.
    assert "scopelint.core.flow" in MODULES and "scopelint.rules.sl101_backward_on_untracked_value" in MODULES
    assert "scopelint.runtime_check.verify" in MODULES
    assert "scopelint.core.roles" in GRAPH["scopelint.core.flow"]
    assert "scopelint.runtime_check.oracle" in GRAPH["scopelint.runtime_check.verify"]


def test_the_analysis_core_has_no_import_cycle():
    core = {n for n in GRAPH if n.startswith("scopelint.core.")}
    state: Dict[str, int] = {}
    cycles = []

    def visit(n, path):
        state[n] = 1
        for m in sorted(GRAPH[n] & core):
            if state.get(m) == 1:
                cycles.append(path[path.index(m):] + [m])
            elif m not in state:
                visit(m, path + [m])
        state[n] = 2

    for n in sorted(core):
        if n not in state:
            visit(n, [n])
    assert not cycles, cycles
    assert "scopelint.core.flow" not in GRAPH["scopelint.core.roles"]
    assert "scopelint.core.facts" in GRAPH["scopelint.core.roles"]


def test_the_static_linter_never_imports_the_verifier():
    """Rules carry their own fixes (with ``scopelint.fixkit``): nothing under scopelint/ or
    rules/ imports the runtime package, except the CLI, which hands ``check --verify``
    and ``scopelint verify`` to its glue module, and the language server's opt-in
    "Fix and verify", which hands the finding to the editor's."""
    offenders = {}
    for name, deps in GRAPH.items():
        if name.startswith("scopelint.runtime_check"):
            continue
        verifier = {m for m in deps if m == "scopelint.runtime_check" or m.startswith("scopelint.runtime_check.")}
        if name == "scopelint.cli":
            verifier -= {"scopelint.runtime_check", "scopelint.runtime_check.cli"}
        if name == "scopelint.lsp.verified":  # the opt-in "Fix and verify" code action
            verifier -= {"scopelint.runtime_check.editor"}
        if verifier:
            offenders[name] = sorted(verifier)
    assert not offenders, offenders


def test_the_verifier_imports_the_rules_and_the_fix_helpers_are_on_the_static_side():
    assert "scopelint.fixkit" in MODULES and not any(n.startswith("scopelint.runtime_check.") and "counterfactual" in n for n in MODULES)
    users = {n for n, deps in GRAPH.items() if "scopelint.fixkit" in deps}
    assert users and all(n.startswith("scopelint.rules.") for n in users), users
    assert not any(m.startswith("scopelint.rules") for m in GRAPH["scopelint.fixkit"])


def test_linting_a_text_loads_no_verifier_module():
    code = (
        "import sys; from scopelint.engine import lint_source; "
        "r = lint_source('import torch\\nwith torch.no_grad():\\n    y = torch.ones(1)\\ny.backward()\\n', 'x.py'); "
        "print([f.code for f in r.findings], [m for m in sys.modules if m.startswith('scopelint.runtime_check')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['SL101'] []", out.stdout + out.stderr


def test_data_flows_down_cli_runner_engine_core():
    """cli -> runner (files, workers) -> engine (one text, the one entry) -> core; the
    editor calls the engine as the runner does. Nothing below imports what is above it."""
    lsp = {n for n in MODULES if n == "scopelint.lsp" or n.startswith("scopelint.lsp.")}
    above = {
        "scopelint.runner": {"scopelint.cli"} | lsp,
        "scopelint.engine": {"scopelint.cli", "scopelint.runner", "scopelint.config", "scopelint.files"} | lsp,
        **{name: {"scopelint.runner", "scopelint.cli"} for name in lsp},
    }
    for name, forbidden in above.items():
        assert not GRAPH[name] & forbidden, (name, GRAPH[name] & forbidden)
    for name, deps in GRAPH.items():
        if name.startswith("scopelint.core."):
            assert all(m.startswith("scopelint.core") for m in deps if m.startswith("scopelint")), (name, deps)
    assert "scopelint.engine" in GRAPH["scopelint.runner"] and "scopelint.engine" in GRAPH["scopelint.lsp.diagnostics"]


def test_the_language_server_parts_import_downwards():
    """worker <- server <- diagnostics <- notebooks <- verified <- actions <- handlers; documents and text are
    pure (no pygls), and the package itself imports pygls only to start the server."""
    order = ["text", "documents", "worker", "server", "diagnostics", "notebooks", "verified", "actions", "handlers"]
    for i, part in enumerate(order):
        deps = {m.rsplit(".", 1)[1] for m in GRAPH[f"scopelint.lsp.{part}"] if m.startswith("scopelint.lsp.")}
        assert deps <= set(order[:i]), (part, deps)
    for part in ("text", "documents"):
        assert not {m for m in imported(f"scopelint.lsp.{part}", MODULES[f"scopelint.lsp.{part}"]) if m.startswith(("pygls", "lsprotocol"))}
    top = imported("scopelint.lsp", MODULES["scopelint.lsp"])
    assert {"scopelint.lsp.server", "scopelint.lsp.handlers"} <= top  # (inside create_server)
