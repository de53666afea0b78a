"""Find candidate fix commits for autograd-scope bugs in the history of fetched repositories.

Each mirror is a bare git directory (as the session's ``fetch`` leaves them:
``MIRRORS/<owner>+<name>/repo``). For every repository this runs, over the history of
HEAD and the ``.py`` files only (notebooks are skipped):

1. ``git log -G<signature>``: commits whose diff adds or removes a line matching one of
   the fixes' signatures (an added ``zero_grad``, ``.detach()``, ``no_grad()``,
   ``model.eval()``/``train()``, ``retain_graph``, ``.item()`` in an accumulation,
   ``requires_grad_``, ``repackage_hidden``, ``set_grad_enabled``, ``inference_mode``,
   ``.data``, an optimizer constructor that moved, ``no_grad`` gaining its parentheses);
2. ``git log --grep``: commits whose message speaks of the bug ("memory leak",
   "zero_grad", "detach", "no_grad", "eval mode", "leak", "OOM", "gradient accumulation").

and prints, per commit and file, the tags that matched and the changed lines that made
them match. Judging is by hand: this only narrows thousands of commits to a readable list.

    python benchmarks/history/mine.py --mirrors /work/.mirror [--repo owner/name ...]
        [--max-lines 12] [--json out.json] [--tags zero_grad,item_acc]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

# tag -> test on the changed lines of one file in one commit. ``added``/``removed`` are
# the code parts (comments cut, right-stripped) after lines that are removed and added
# unchanged (a re-alignment of comments) cancel out; ``moved`` holds the statements that
# are then still both removed and added with another indentation (e.g. out of a loop).
ZERO = r"zero_grad\(|\.grad\s*=\s*None|\.grad\.zero_\(|\.grad\.data\.zero_\("
NOGRAD = r"no_grad\(\)|inference_mode\("
ACC = r"\+=|\.append\(|\.extend\(|=\s*\w+\s*\+"
REDUCED = r"\.item\(\)|float\(|\.detach\(\)|\.data\b|\.cpu\(\)|\.tolist\(\)|\.numpy\(\)"
OPTIM = r"optim\.\w+\(|Optimizer\(|\bAdam\w*\(|\bSGD\(|\bRMSprop\("


def net(rx: str, added, removed) -> int:
    return sum(bool(re.search(rx, x)) for x in added) - sum(bool(re.search(rx, x)) for x in removed)


def has(rx: str, lines) -> bool:
    return any(re.search(rx, x) for x in lines)


SIGNATURES = {
    "zero_grad": lambda a, r, m: net(ZERO, a, r) > 0,
    "zero_grad_moved": lambda a, r, m: has(ZERO, m),
    "detach": lambda a, r, m: net(r"\.detach_?\(\)", a, r) > 0,
    "no_grad": lambda a, r, m: net(NOGRAD, a, r) > 0,
    "no_grad_parens": lambda a, r, m: has(r"with\s+[\w.]*(no_grad|enable_grad|inference_mode)\s*:", r),
    "eval_train": lambda a, r, m: net(r"\.eval\(\)|\.train\((True|False)?\)", a, r) > 0,
    "retain_graph": lambda a, r, m: has("retain_graph", a) != has("retain_graph", r)
    or net("retain_graph", a, r) != 0,
    "item_acc": lambda a, r, m: any(re.search(ACC, x) and re.search(REDUCED, x) for x in a)
    and any(re.search(ACC, x) and not re.search(REDUCED, x) for x in r),
    "requires_grad": lambda a, r, m: net(r"requires_grad_\(|requires_grad\s*=", a, r) != 0,
    "repackage": lambda a, r, m: net(r"repackage_hidden|detach_hidden|hidden\w*\s*=.*detach", a, r) > 0,
    "set_grad_enabled": lambda a, r, m: net("set_grad_enabled", a, r) != 0,
    "data_removed": lambda a, r, m: net(r"\.data\b", a, r) < 0,
    "optimizer_moved": lambda a, r, m: has(OPTIM, m),
    "step_moved": lambda a, r, m: has(r"\.step\(", m),
}

# what -G looks for (git's extended regex): lines that can carry one of the signatures
PICKAXE = (r"zero_grad|\.detach|no_grad|inference_mode|\.eval\(\)|\.train\(|retain_graph|"
           r"\.item\(\)|requires_grad|repackage_hidden|set_grad_enabled|\.data\b|"
           r"optim\.[A-Za-z]+\(")

MESSAGES = [r"memory leak", r"\bleak", r"zero_grad", r"zero grad", r"detach", r"no_grad",
            r"no grad", r"eval mode", r"eval\(\)", r"train mode", r"\bOOM\b", r"out of memory",
            r"gradient accumulation", r"grad accumulation", r"retain_graph", r"backward twice",
            r"second time", r"requires_grad", r"inference_mode", r"set_grad_enabled",
            r"dropout.*(val|eval|test)", r"batch ?norm.*(val|eval|test)", r"\.item\(\)",
            r"hidden state", r"repackage"]

SEP = "\x1e"


def git(gitdir: str, *args: str) -> str:
    r = subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, text=True,
                       errors="replace")
    if r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])}...: {r.stderr.strip()[:500]}")
    return r.stdout


def log_patches(gitdir: str, selector: list[str]) -> str:
    return git(gitdir, "log", "HEAD", "--no-merges", "--no-renames", "--unified=0", "-p",
               f"--format={SEP}%H%x01%ad%x01%s", "--date=short", *selector, "--", "*.py")


def parse(text: str):
    """Yield (sha, date, subject, {file: (added, removed)}) from log_patches output."""
    for block in text.split(SEP)[1:]:
        head, _, body = block.partition("\n")
        sha, date, subject = (head.split("\x01") + ["", ""])[:3]
        files: dict[str, tuple[list[str], list[str]]] = {}
        cur = None
        skip = False
        for line in body.splitlines():
            if line.startswith("diff --git "):
                cur = None
                skip = False
            elif line.startswith(("new file mode", "deleted file mode")):
                skip = True
            elif line.startswith("+++ "):
                path = line[4:]
                cur = path[2:] if path.startswith("b/") and not skip else None
                if cur is not None:
                    files.setdefault(cur, ([], []))
            elif cur is None:
                continue
            elif line.startswith("+") and not line.startswith("+++"):
                files[cur][0].append(line[1:])
            elif line.startswith("-") and not line.startswith("---"):
                files[cur][1].append(line[1:])
        yield sha, date, subject, files


def code(s: str) -> str:
    return s.split("#", 1)[0].rstrip()


def tags_of(added: list[str], removed: list[str]) -> list[str]:
    a = [code(x) for x in added if code(x).strip()]
    r = [code(x) for x in removed if code(x).strip()]
    ra = list(r)
    a2 = []
    for x in a:  # cancel lines removed and added unchanged
        if x in ra:
            ra.remove(x)
        else:
            a2.append(x)
    moved = {x.strip() for x in a2} & {x.strip() for x in ra}  # re-indented
    return [tag for tag, test in SIGNATURES.items() if test(a2, ra, moved)]


def interesting(line: str) -> bool:
    return bool(re.search(PICKAXE.replace(r"\(\)", r"\(\)"), line)) or bool(
        re.search(r"\+=|\.append\(|\.backward\(|\.step\(|optim", line))


def mine(gitdir: str, repo: str, max_lines: int, only: set[str] | None):
    seen = {}
    sources = [("code", ["-G", PICKAXE]),
               ("message", ["-i", "-E", *[a for m in MESSAGES for a in ("--grep", m)]])]
    for why, sel in sources:
        try:
            text = log_patches(gitdir, sel)
        except RuntimeError as e:
            print(f"# {repo}: {e}", file=sys.stderr)
            continue
        for sha, date, subject, files in parse(text):
            for path, (added, removed) in files.items():
                tags = tags_of(added, removed)
                if only is not None and not (set(tags) & only):
                    continue
                if why == "code" and not tags:
                    continue
                key = (sha, path)
                if key in seen:
                    seen[key]["why"] = sorted(set(seen[key]["why"]) | {why})
                    continue
                lines = [("-", x) for x in removed if interesting(x)] + \
                        [("+", x) for x in added if interesting(x)]
                seen[key] = {"repo": repo, "commit": sha, "date": date, "subject": subject,
                             "file": path, "why": [why], "tags": tags,
                             "lines": [f"{s} {x.strip()}" for s, x in lines[:max_lines]],
                             "more": max(0, len(lines) - max_lines)}
    return list(seen.values())


def mirrors(root: Path, repos: list[str] | None):
    for d in sorted(root.iterdir()):
        if not d.is_dir() or "+" not in d.name:
            continue
        repo = d.name.replace("+", "/", 1)
        if repos and repo not in repos:
            continue
        for g in (d / "repo" / ".git", d / "repo"):
            if (g / "HEAD").exists():
                yield repo, str(g)
                break


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True, type=Path)
    ap.add_argument("--repo", action="append", help="owner/name (repeatable); default all")
    ap.add_argument("--tags", help="comma-separated tags to keep (default: all)")
    ap.add_argument("--max-lines", type=int, default=12)
    ap.add_argument("--json", type=Path, help="also write the candidates here")
    a = ap.parse_args(argv)
    only = set(a.tags.split(",")) if a.tags else None
    found = []
    for repo, gitdir in mirrors(a.mirrors, a.repo):
        cands = mine(gitdir, repo, a.max_lines, only)
        found += cands
        for c in cands:
            print(f"{c['repo']} {c['commit'][:10]} {c['date']} [{','.join(c['why'])}] "
                  f"{','.join(c['tags'])}\n  {c['subject'][:100]}\n  {c['file']}")
            for x in c["lines"]:
                print(f"    {x[:140]}")
            if c["more"]:
                print(f"    ... {c['more']} more")
    print(f"# {len(found)} candidates in {len({c['repo'] for c in found})} repositories",
          file=sys.stderr)
    if a.json:
        a.json.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
