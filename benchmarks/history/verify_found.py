"""The verifier on real bugs (issue 47): for every bug of the manifest that ``check`` finds at
its line (a ``score.py --json`` result), check out the parent commit's files -- the bug's
file with the other ``.py`` files of its folder, so that its local imports resolve, or the
whole tree with ``--context tree`` -- run ``scopelint verify --output-format json`` on the
bug's file there, and report the verdict of the finding at the bug's line.

A bug the project fixed is a true finding, so a conclusive verdict that matches the
effect is what the verifier should give; ``inconclusive`` says why not.

    python benchmarks/history/verify_found.py --mirrors /work/.mirror \\
        --results new.json [--scopelint "python -m scopelint"] [--check-args=--preview] \\
        [--context folder|tree] [--timeout 120] [--only ID ...] [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import score  # noqa: E402  (this folder's scorer: mirrors, checkouts, line matching)


def verify_bug(bug: dict, mirrors: Path, cmd: list, check_args: list, context: str, timeout: float) -> dict:
    out = {"id": bug["id"], "code": bug["code"], "framework": bug.get("framework", "torch"), "split": bug.get("split")}
    gd = score.gitdir(mirrors, bug["repo"])
    if gd is None:
        return {**out, "verdict": "skipped", "detail": "no mirror"}
    files = score.files_for(gd, bug["parent"], [bug["path"]], context)
    with tempfile.TemporaryDirectory(prefix="history-verify-") as tmp:
        root = Path(tmp).resolve()
        try:
            score.extract(gd, bug["parent"], files, root)
        except RuntimeError as exc:
            return {**out, "verdict": "skipped", "detail": str(exc)}
        r = subprocess.run([*cmd, "verify", *check_args, "--select", bug["code"], "--output-format", "json",
                            "--exit-zero", "--verify-timeout", str(timeout), str(root / bug["path"])],
                           capture_output=True, text=True, cwd=root / (os.path.dirname(bug["path"]) or "."))
        try:
            findings = json.loads(r.stdout) if r.stdout.strip() else []
        except json.JSONDecodeError:
            return {**out, "verdict": "error", "detail": (r.stderr or r.stdout)[-500:]}
    for f in findings:
        if f["code"] == bug["code"] and score.hits(f, bug["lines"]):
            rt = f.get("runtime") or {}
            return {**out, "verdict": rt.get("verdict", "none"), "detail": (rt.get("detail") or "")[:400]}
    return {**out, "verdict": "not found", "detail": f"verify's check made no {bug['code']} at the bug's lines"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--results", type=Path, required=True, help="score.py --json output: which bugs check finds")
    ap.add_argument("--manifest", type=Path, default=HERE / "bugs.json")
    ap.add_argument("--scopelint", default=f"{shlex.quote(sys.executable)} -m scopelint")
    ap.add_argument("--check-args", default="", help="more arguments for verify's check (e.g. --preview)")
    ap.add_argument("--context", choices=("folder", "tree"), default="folder")
    ap.add_argument("--timeout", type=float, default=120.0, help="per run of a variant")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args(argv)
    found = {r["id"] for r in json.loads(args.results.read_text())["results"] if r.get("verdict") == "found-at-line"}
    bugs = [b for b in json.loads(args.manifest.read_text())["bugs"] if b["id"] in found]
    if args.only:
        bugs = [b for b in bugs if b["id"] in set(args.only)]
    cmd, check_args = shlex.split(args.scopelint), shlex.split(args.check_args)
    rows = []
    for i, bug in enumerate(bugs, start=1):
        row = verify_bug(bug, args.mirrors, cmd, check_args, args.context, args.timeout)
        rows.append(row)
        print(f"[{i}/{len(bugs)}] {row['id']}: {row['verdict']}: {row['detail'][:160]}", file=sys.stderr, flush=True)
    counts = Counter(r["verdict"] for r in rows)
    conclusive = sum(n for v, n in counts.items() if v.startswith("confirmed") or v == "refuted")
    lines = [f"bugs check finds at their line: {len(rows)}; conclusive: {conclusive}", "",
             "| verdict | bugs |", "|---|---:|"]
    lines += [f"| {v} | {n} |" for v, n in counts.most_common()]
    lines += ["", "| bug | code | verdict | detail |", "|---|---|---|---|"]
    lines += [f"| {r['id']} | {r['code']} | {r['verdict']} | {r['detail'][:200].replace('|', '/')} |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"context": args.context, "results": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
