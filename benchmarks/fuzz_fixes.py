#!/usr/bin/env python3
"""Fuzz ``--fix --unsafe-fixes``: generated programs (the bad fixtures, combined and
mutated: nested in loops, functions, ``with`` blocks, statements repeated, two fixtures
joined), each fixed as ``check --fix --unsafe-fixes`` fixes it. Every changed text must
compile, fixing it again must change nothing (the fix loop converged), and no analysis
reports an internal error.

    python benchmarks/fuzz_fixes.py                  # 10,000 programs
    python benchmarks/fuzz_fixes.py --count 500 --seed 7
    python benchmarks/fuzz_fixes.py --count 5000 --start 5000   # the second half of the default run

Exit status 1 when a program breaks either property (each is printed, with its seed).
``tests/test_scaling.py`` runs a fixed sample of the same programs.
"""

from __future__ import annotations

import argparse
import random
import sys
import textwrap
import time
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent
_WRAPS = [
    "for _step in range(3):\n{body}",
    "def run():\n{body}\n\nrun()",
    "if True:\n{body}",
    "while True:\n{body}\n    break",
    "try:\n{body}\nexcept Exception:\n    raise",
]


def fixtures() -> List[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures").glob("SL*/bad_*.py"))]


def _indent(text: str) -> str:
    return textwrap.indent(text, "    ", lambda line: True) if text.strip() else "    pass\n"


def program(rng: random.Random, corpus: List[str]) -> str:
    """One generated program (deterministic for ``rng``'s state)."""
    text = rng.choice(corpus)
    if rng.random() < 0.3:
        text = text.rstrip("\n") + "\n\n" + rng.choice(corpus)
    lines = text.splitlines(keepends=True)
    imports = [l for l in lines if l.startswith(("import ", "from "))]
    rest = [l for l in lines if l not in imports]
    body = "".join(rest)
    for _ in range(rng.randint(0, 3)):
        r = rng.random()
        if r < 0.5:
            body = rng.choice(_WRAPS).format(body=_indent(body).rstrip("\n")) + "\n"
        elif r < 0.75 and rest:  # repeat a statement line (a statement of its own when it is one)
            i = rng.randrange(len(rest))
            if not rest[i].startswith((" ", "\t", "@", "#")) and rest[i].strip():
                body = body + rest[i]
        else:
            body = body + rng.choice(corpus).split("\n\n", 1)[-1]
    return "".join(imports) + body


def check_one(text: str, settings=None) -> Optional[str]:
    """None when the program's fixes compile and converge; else what went wrong."""
    from scopelint.engine import Settings
    from scopelint.files import decode
    from scopelint.fix import compiles, fix_until_stable
    from scopelint.runner import check_source

    settings = settings or Settings()
    first = check_source(decode(text.encode(), "fuzz.py"), "fuzz.py", None, settings, keep_source=True)
    internal = [e for e in first.errors if "internal error" in e]
    if internal:
        return f"internal error: {internal}"
    if first.source is None or not any(f.fix for f in first.findings):
        return None
    fixed, result, applied = fix_until_stable(first, settings, True)
    if result.errors and fixed == text:
        return None if not compiles(text, "fuzz.py") else f"fix refused: {result.errors}"
    if fixed != text and compiles(text, "fuzz.py") and not compiles(fixed, "fuzz.py"):
        return "the fixed text does not compile"
    again = check_source(decode(fixed.encode(), "fuzz.py"), "fuzz.py", None, settings, keep_source=True)
    internal = [e for e in result.errors + again.errors if "internal error" in e]
    if internal:
        return f"internal error after fixing: {internal}"
    second, _, n = fix_until_stable(again, settings, True)
    if second != fixed:
        return f"a second run changed the text again ({n} fixes)"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--start", type=int, default=0, help="the first program's number (to split a run: --start 5000 --count 5000)")
    args = ap.parse_args(argv)
    corpus = fixtures()
    failures = changed = 0
    t0 = time.perf_counter()
    for k in range(args.start, args.start + args.count):
        rng = random.Random(args.seed * 1_000_003 + k)
        text = program(rng, corpus)
        problem = check_one(text)
        if problem is not None:
            failures += 1
            print(f"seed {args.seed} program {k}: {problem}\n{text}\n---", flush=True)
        if (k + 1 - args.start) % 500 == 0:
            print(f"{k + 1 - args.start} programs, {failures} failures, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"{args.count} programs: {failures} failures ({time.perf_counter() - t0:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
