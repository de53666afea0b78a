"""Re-run scopelint over the public repositories judged in benchmarks/repos/judged.json and
diff the findings against the judgements (as ecosystem.py does for the PyPI packages).

The repositories are not stored here and not fetched by this script: extract each one
(its ``.py`` files at least, at the commit judged.json names) under ROOT as
``ROOT/<owner>+<name>/`` (``owner/name`` with ``/`` replaced by ``+``), e.g.

    git --git-dir=<mirror> archive <commit> -- $(git ... ls-tree -r --name-only <commit> | grep '\\.py$') \\
        | tar -x -C ROOT/pytorch+examples

Repositories whose folder is absent are skipped. For each present one, scopelint runs once
over the judged ``scope`` folder (``check --no-cache --jobs N --output-format json``) and the
findings are compared by (repo, path, line, code) with judged.json:

- appeared: a finding nobody judged (fails);
- lost: a finding judged true that is gone (fails);
- fixed: a finding judged false that is gone (reported, not a failure).

``--per-file`` also runs every file that mentions torch or mxnet alone (each copied into an
empty folder of its own) and prints the findings that only the whole-folder run makes (the
cross-file ones) and those only the per-file runs make.

Exit status: 0 all judged and nothing true lost, 1 otherwise, 2 nothing to check.

    python benchmarks/repos.py --root /tmp/repos [--repos pytorch/examples,dmlc/dgl] [--per-file]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
JUDGED = HERE / "repos" / "judged.json"


def scopelint(folder: str, jobs: int):
    cmd = [sys.executable, "-m", "scopelint", "check", "--no-cache", "--jobs", str(jobs),
           "--output-format", "json", "--exit-zero", folder]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"scopelint failed on {folder}:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout)


def key(repo: str, base: str, x: dict):
    return (repo, os.path.relpath(x["filename"], base), x["location"]["row"], x["code"])


def per_file(repo: str, base: str, folder: str, jobs: int):
    """Findings with every file of ``folder`` checked alone (one empty folder each)."""
    with tempfile.TemporaryDirectory() as tmp:
        where = {}
        for i, path in enumerate(sorted(Path(folder).rglob("*.py"))):
            text = path.read_text(encoding="utf-8", errors="replace")
            if "torch" not in text and "mxnet" not in text:
                continue
            d = Path(tmp, str(i))
            d.mkdir()
            shutil.copy(path, d / path.name)
            where[str(d / path.name)] = str(path)
        if not where:
            return set()
        found = scopelint(tmp, jobs)
        return {key(repo, base, dict(x, filename=where[x["filename"]])) for x in found}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="folder holding <owner>+<name>/ extractions")
    ap.add_argument("--repos", help="comma-separated owner/name to check (default: all judged)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--per-file", action="store_true", help="also diff against each file checked alone")
    ap.add_argument("--false", action="store_true", help="list the findings still judged false, with their pattern")
    args = ap.parse_args(argv)

    judged = json.loads(JUDGED.read_text())
    verdict = {(f["repo"], f["path"], f["line"], f["code"]): f["verdict"] for f in judged["findings"]}
    pattern = {(f["repo"], f["path"], f["line"], f["code"]): f.get("pattern") or f.get("reason", "") for f in judged["findings"]}
    still_false = []
    alone_verdict = {(f["repo"], f["path"], f["line"], f["code"]): f["verdict"] for f in judged["per_file_only"]}
    wanted = set(args.repos.split(",")) if args.repos else None
    appeared, lost, fixed, checked = [], [], [], []
    tally = defaultdict(Counter)
    for row in judged["repos"]:
        repo, scope = row["repo"], row["scope"]
        if wanted and repo not in wanted:
            continue
        base = os.path.join(args.root, repo.replace("/", "+"))
        folder = os.path.normpath(os.path.join(base, scope))
        if not os.path.isdir(folder):
            print(f"skip {repo} ({scope}): {folder} is absent")
            continue
        checked.append((repo, scope))
        now = {key(repo, base, x) for x in scopelint(folder, args.jobs)}
        before = {k for k in verdict if k[0] == repo and _in_scope(k[1], scope)}
        for k in sorted(now):
            if k not in verdict:
                appeared.append(k)
            elif k[3] == "SL000":
                tally[f"{repo} ({scope})"]["syntax"] += 1  # (a file Python cannot parse: no rule's finding)
            else:
                tally[f"{repo} ({scope})"][verdict[k]] += 1
                if verdict[k] == "false":
                    still_false.append(k)
        for k in sorted(before - now):
            (lost if verdict[k] == "true" else fixed).append(k)
        if args.per_file:
            alone = per_file(repo, base, folder, args.jobs)
            for k in sorted(now - alone):
                print(f"  whole-folder only (cross-file): {k} [{verdict.get(k, 'unjudged')}]")
            for k in sorted(alone - now):
                print(f"  per-file only: {k} [{alone_verdict.get(k, 'unjudged')}]")
    if not checked:
        print("nothing to check: no judged repository is extracted under --root")
        return 2
    t = sum(c["true"] for c in tally.values())
    f = sum(c["false"] for c in tally.values())
    for repo, c in tally.items():
        print(f"{repo}: {c['true']} true, {c['false']} false" + (f" (and {c['syntax']} syntax error)" if c["syntax"] else ""))
    syntax = sum(c["syntax"] for c in tally.values())
    print(f"all: {t} true, {f} false" + (f", precision {t / (t + f):.2f}" if t + f else "")
          + (f"; {syntax} syntax error (SL000) reported, not counted" if syntax else ""))
    if args.false:
        print(f"still judged false: {len(still_false)}")
        for k in still_false:
            print("  ", k, "--", pattern[k])
    for name, rows in (("appeared (unjudged)", appeared), ("lost (judged true)", lost), ("fixed (judged false)", fixed)):
        if rows:
            print(f"{name}: {len(rows)}")
            for k in rows:
                print("  ", k)
    return 1 if appeared or lost else 0


def _in_scope(path: str, scope: str) -> bool:
    return scope in (".", "") or path == scope or path.startswith(scope.rstrip("/") + "/")


if __name__ == "__main__":
    sys.exit(main())
