#!/usr/bin/env python3
"""Split invariance (issue 40): a fixture cut into a package and an entry script keeps its
findings.

Every fixture (``fixtures/SL*/bad_*.py`` and ``good_*.py``) whose module-level functions
and classes read no module-level variable of its script (only imports, and each other)
is rewritten as a small project:

- ``pkg/core.py``: the fixture's imports and its module-level functions and classes, in
  their order (the ``layout="module"`` variant puts them in ``pkg/models.py`` and
  ``pkg/engine.py``, classes and functions apart, ``engine`` importing ``models``
  relatively);
- ``pkg/__init__.py``: re-exports them (``from .core import A, f``);
- ``main.py``: the fixture's imports, ``from pkg import A, f`` (absolute, through the
  re-export), and the rest of the module-level code, in its order.

Statements move as whole lines, so their ``# expect:`` markers move with them: a bad
variant must draw exactly the findings its files' markers name, a good one none (the
whole project linted as one run, ``--preview``: every rule). Where a fixture's functions
read a variable its module-level code binds, or the fixture has nothing to move, the
variant is "not applicable". Static only: the variants are not run.

    python benchmarks/split_invariance.py                 # every fixture, table
    python benchmarks/split_invariance.py --sample 12     # a fixed sample (seed 40)
    python benchmarks/split_invariance.py --show SL101/bad_torch_loss_in_no_grad --layout module
    python benchmarks/split_invariance.py --concat        # the reverse: projects concatenated

The reverse check (``--concat``): every multi-file project fixture
(``fixtures/projects/*/{bad,good}``) against its files concatenated into one module (its
other modules first, the entry script last, the imports of its own modules dropped),
where that is valid Python: the same findings, compared by code and the text of the
line they are on.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scopelint.runtime_check.holes import bound_names  # noqa: E402

FIXTURES = ROOT / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")
LAYOUTS = ("core", "module")


class NotApplicable(Exception):
    pass


def _free(node: ast.stmt) -> Set[str]:
    """Names read in a def or class that nothing inside binds (a parameter, an
    assignment, a loop variable, a nested def): what it needs from its module."""
    local: Set[str] = set()
    loads: Set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else local).add(n.id)
        elif isinstance(n, ast.arg):
            local.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
            local.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            local.update((a.asname or a.name).split(".")[0] for a in n.names)
    # (a decorator or a default is read where the def stands, before its body binds anything)
    outer = getattr(node, "decorator_list", []) + (node.args.defaults + [d for d in node.args.kw_defaults if d]
                                                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else [])
    return (loads - local) | {n.id for e in outer for n in ast.walk(e) if isinstance(n, ast.Name)}


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def split(text: str, layout: str = "core") -> Dict[str, str]:
    """The files of the project a fixture's ``text`` becomes (raises ``NotApplicable``)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    imports, defs, rest = [], [], []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs.append(node)
        else:
            rest.append(node)
    if not defs or not rest:
        raise NotApplicable("nothing to move" if not defs else "no module-level code")
    if any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in imports):
        raise NotApplicable("a __future__ import")
    names = [d.name for d in defs]
    if any(n.startswith("_") for n in names):
        raise NotApplicable("a private name (not re-exported by a star import either)")
    script_vars: Set[str] = set()
    for node in rest:
        script_vars |= bound_names(node)  # (what a module-level statement binds)
    read = set().union(*(_free(d) for d in defs))
    globals_ = {g for d in defs for n in ast.walk(d) if isinstance(n, (ast.Global, ast.Nonlocal)) for g in n.names}
    if (read | globals_) & (script_vars - set(names)) or globals_:
        raise NotApplicable("a function reads a variable of the script")
    if set(names) & script_vars:
        raise NotApplicable("the script rebinds a moved name")

    def chunk(node: ast.stmt) -> str:
        return "".join(lines[_start(node) - 1:node.end_lineno])

    head = "".join(chunk(n) for n in imports)
    files: Dict[str, str] = {}
    if layout == "core":
        files["pkg/core.py"] = head + "\n\n" + "\n\n".join(chunk(d) for d in defs)
        files["pkg/__init__.py"] = f"from .core import {', '.join(names)}\n"
    else:
        classes = [d for d in defs if isinstance(d, ast.ClassDef)]
        functions = [d for d in defs if not isinstance(d, ast.ClassDef)]
        if not classes or not functions:
            raise NotApplicable("the module layout needs both classes and functions")
        cnames, fnames = [c.name for c in classes], [f.name for f in functions]
        # (a class that calls a function of the file, or a base class defined after a
        # function: the two modules would import each other)
        if {n.id for c in classes for n in ast.walk(c) if isinstance(n, ast.Name)} & set(fnames):
            raise NotApplicable("a class reads a function")
        files["pkg/models.py"] = head + "\n\n" + "\n\n".join(chunk(c) for c in classes)
        files["pkg/engine.py"] = head + f"from .models import {', '.join(cnames)}\n\n\n" + "\n\n".join(chunk(f) for f in functions)
        files["pkg/__init__.py"] = f"from .models import {', '.join(cnames)}\nfrom .engine import {', '.join(fnames)}\n"
    files["main.py"] = head + f"from pkg import {', '.join(names)}\n\n" + "\n".join(chunk(n) for n in rest)
    for path, body in files.items():
        if not body.endswith("\n"):
            files[path] = body + "\n"
    return files


def expected(files: Dict[str, str]) -> Set[Tuple[str, int, str]]:
    out = set()
    for path, text in files.items():
        for row, line in enumerate(text.splitlines(), start=1):
            m = EXPECT.search(line)
            if m:
                out.update((path, row, code.strip()) for code in m.group(1).split(",") if code.strip())
    return out


def lint(files: Dict[str, str]) -> Tuple[Set[Tuple[str, int, str]], str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        out = subprocess.run([sys.executable, "-m", "scopelint", "check", "--no-cache", "--preview", "--output-format", "json", "."],
                             cwd=root, capture_output=True, text=True)
        if out.returncode not in (0, 1):
            return set(), out.stderr.strip()[-300:]
        found = {(Path(f["filename"]).resolve().relative_to(root.resolve()).as_posix(), f["location"]["row"], f["code"])
                 for f in json.loads(out.stdout) if f["code"] != "SL001"}
        return found, ""


def concatenated(root: Path) -> str:
    """A multi-file project (``fixtures/projects/<name>/<bad|good>``) as one module: its
    other modules first (deepest first), the entry script last, without the imports of
    the project's own modules (raises ``NotApplicable`` where that is no valid Python:
    a star import of the project, a name two modules define)."""
    files = sorted(p for p in root.rglob("*.py") if ".scopelint_cache" not in p.parts)
    entry = [p for p in files if p.read_text(encoding="utf-8").startswith("# entry")]
    own = {p.stem for p in files} | {p.name for p in root.rglob("*") if p.is_dir()}
    parts, defined = [], Counter()
    for path in sorted(set(files) - set(entry), key=lambda p: (-len(p.relative_to(root).parts), str(p))) + entry:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        drop: Set[int] = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined[node.name] += 1
            mine = (isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in own)) or (
                isinstance(node, ast.Import) and any(a.name.split(".")[0] in own for a in node.names))
            if mine:
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                    raise NotApplicable("a star import of the project")
                if any(a.asname for a in node.names) or isinstance(node, ast.Import):
                    raise NotApplicable("a module or a name imported under another name")
                drop.update(range(node.lineno, node.end_lineno + 1))
        parts.append("".join(line for i, line in enumerate(lines, start=1) if i not in drop))
    if any(n > 1 for n in defined.values()):
        raise NotApplicable("a name two modules define")
    return "\n\n".join(parts)


def concat_check(only: Optional[str] = None) -> List[dict]:
    """Each project fixture's findings (code and the marked line's text) against those of
    its files concatenated into one module (``only``: that project's two)."""
    rows = []
    for root in sorted(p for p in (FIXTURES / "projects").glob("*/*") if p.is_dir()):
        if only is not None and root.parent.name != only:
            continue
        name = f"{root.parent.name}/{root.name}"
        try:
            text = concatenated(root)
        except (NotApplicable, SyntaxError) as e:
            rows.append({"project": name, "outcome": "n/a", "why": str(e)})
            continue
        # (with its configuration and requirements: they may name its framework)
        files = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*")
                 if p.is_file() and ".scopelint_cache" not in p.parts and p.suffix in (".py", ".toml", ".txt", ".cfg")}
        extra = {k: v for k, v in files.items() if not k.endswith(".py") and "/" not in k}

        def marked(found, texts):
            return Counter((texts[f].splitlines()[row - 1].strip(), code) for f, row, code in found)

        split_found, e1 = lint(files)
        whole_found, e2 = lint({"all.py": text, **extra})
        same = not (e1 or e2) and marked(split_found, files) == marked(whole_found, {"all.py": text})
        rows.append({"project": name, "outcome": "same" if same else "different", "project_findings": sorted(split_found),
                     "concatenated": sorted(whole_found), "error": e1 or e2})
    return rows


def fixtures() -> List[Path]:
    return sorted(p for p in FIXTURES.glob("SL*/*.py") if p.name.startswith(("bad_", "good_")))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, help="a fixed sample of this many fixtures (seed 40)")
    ap.add_argument("--layout", choices=LAYOUTS, action="append", help="the layouts to try (default: both)")
    ap.add_argument("--show", help="print the files of one variant (SLxxx/name) and its findings")
    ap.add_argument("--json", type=Path, help="write every variant's outcome here")
    ap.add_argument("--concat", action="store_true", help="instead: each project fixture against its files concatenated")
    args = ap.parse_args(argv)
    if args.concat:
        rows = concat_check()
        c = Counter(r["outcome"] for r in rows)
        print(f"projects: {len(rows)}; same findings: {c['same']}; different: {c['different']}; not applicable: {c['n/a']}")
        for r in rows:
            if r["outcome"] != "same":
                print(f"{r['outcome']}: {r['project']} {r.get('why', '')}{r.get('project_findings', '')} {r.get('concatenated', '')}")
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        return 0
    layouts = args.layout or list(LAYOUTS)
    if args.show:
        files = split((FIXTURES / f"{args.show}.py").read_text(encoding="utf-8"), layouts[0])
        for path, text in sorted(files.items()):
            print(f"--- {path}\n{text}")
        found, error = lint(files)
        print("expected:", sorted(expected(files)), "\nfound:   ", sorted(found), error)
        return 0
    paths = fixtures()
    if args.sample:
        paths = sorted(random.Random(40).sample(paths, min(args.sample, len(paths))))
    rows = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for layout in layouts:
            name = f"{path.parent.name}/{path.stem}"
            try:
                files = split(text, layout)
            except (NotApplicable, SyntaxError) as e:
                rows.append({"fixture": name, "layout": layout, "outcome": "n/a", "why": str(e)})
                continue
            want = expected(files)
            found, error = lint(files)
            kept = not error and found == want
            rows.append({"fixture": name, "layout": layout, "outcome": "kept" if kept else "lost",
                         "missing": sorted(want - found), "extra": sorted(found - want), "error": error})
    table: Dict[Tuple[str, str], Counter] = {}
    for r in rows:
        kind = "bad" if "/bad_" in r["fixture"] else "good"
        table.setdefault((r["layout"], kind), Counter())[r["outcome"]] += 1
    print("| layout | fixtures | kept | lost | not applicable | kept share |")
    print("|---|---|---:|---:|---:|---:|")
    for (layout, kind), c in sorted(table.items()):
        done = c["kept"] + c["lost"]
        share = f"{c['kept'] / done:.2f}" if done else "-"
        print(f"| {layout} | {kind} | {c['kept']} | {c['lost']} | {c['n/a']} | {share} |")
    for r in rows:
        if r["outcome"] == "lost":
            print(f"lost: {r['fixture']} ({r['layout']}): missing {r['missing']} extra {r['extra']} {r['error']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
