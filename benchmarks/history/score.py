"""Score scopelint on real autograd-scope bugs that public projects fixed (recall from history).

Each bug of a manifest (``bugs.json``; schema in README.md) names a repository, the fix
commit and its parent, the file and lines where the bug sits in the parent, and the lines
of the fixed code in the fix commit. For every bug this script checks out the parent's
file(s) into an empty temporary folder (``--context file``; ``folder`` adds the other
``.py`` files of the same folder(s), ``tree`` every ``.py`` file of the repository), runs
``scopelint check --no-cache --output-format json --exit-zero`` there, and does the same for
the fix commit. A bug is then

- ``found-at-line``: a finding with the bug's code at one of its ``lines``;
- ``found-elsewhere``: that code elsewhere in the bug's file(s), not at its lines;
- ``missed``: no finding with that code in the bug's file(s);

and, on the fix side, ``fixed-silent`` when no finding with that code sits at its
``fixed_lines`` (bugs without ``fixed_lines`` have no fixed-side verdict). A bug whose
repository has no mirror under ``--mirrors`` is reported as skipped.

Mirrors are git directories as the session's ``fetch`` leaves them:
``MIRRORS/<owner>+<name>/repo`` (bare) or ``MIRRORS/<owner>+<name>/repo/.git``.

    python benchmarks/history/score.py --mirrors /work/.mirror \\
        [--manifest benchmarks/history/bugs.json --manifest other.json] \\
        [--scopelint "python -m scopelint"] [--context file|folder|tree] \\
        [--split dev|test] [--jobs 2] [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_MANIFEST = HERE / "bugs.json"
VERDICTS = ("found-at-line", "found-elsewhere", "missed")


def split_of(repo: str) -> str:
    """The manifest's dev/test side of a repository, fixed once by its name: all of a
    repository's bugs are on one side."""
    return "dev" if int(hashlib.sha1(repo.encode()).hexdigest(), 16) % 2 == 0 else "test"


# ---------------------------------------------------------------- mirrors and checkouts

def gitdir(mirrors: Path, repo: str) -> str | None:
    base = mirrors / repo.replace("/", "+", 1) / "repo"
    for g in (base / ".git", base):
        if (g / "HEAD").exists() and (g / "objects").is_dir():
            return str(g)
    return None


def git(gd: str, *args: str, binary: bool = False):
    r = subprocess.run(["git", "--git-dir", gd, *args], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])}: {r.stderr.decode(errors='replace')[:300]}")
    return r.stdout if binary else r.stdout.decode(errors="replace")


def python_files(gd: str, commit: str, folder: str | None) -> list[str]:
    """The .py files of ``folder`` (non-recursive; "" is the root) or of the whole tree."""
    if folder is None:
        out = git(gd, "ls-tree", "-r", "--name-only", "-z", commit)
        return [p for p in out.split("\0") if p.endswith(".py")]
    spec = [f"{folder}/"] if folder else []
    out = git(gd, "ls-tree", "--name-only", "-z", commit, *spec)
    return [p for p in out.split("\0") if p.endswith(".py")]


def files_for(gd: str, commit: str, paths: list[str], context: str) -> list[str]:
    if context == "file":
        return sorted(set(paths))
    if context == "tree":
        return sorted(set(python_files(gd, commit, None)) | set(paths))
    folders = {os.path.dirname(p) for p in paths}
    found = set(paths)
    for f in folders:
        found |= set(python_files(gd, commit, f))
    return sorted(found)


def extract(gd: str, commit: str, files: list[str], dest: Path) -> None:
    """Write ``files`` as they are at ``commit`` under ``dest`` (git archive, in chunks)."""
    for i in range(0, len(files), 500):
        chunk = files[i:i + 500]
        data = git(gd, "archive", "--format=tar", commit, "--", *chunk, binary=True)
        kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, members=[m for m in tar.getmembers() if m.isfile()], **kw)


# ---------------------------------------------------------------- running scopelint

CHECK_ARGS: list = []  # (``--check-args``: e.g. ``--preview``, every rule of a tiered scopelint)


def run_scopelint(cmd: list[str], root: Path, files: list[str], context: str) -> list[dict]:
    targets = [str(root)] if context == "tree" else [str(root / f) for f in files]
    r = subprocess.run([*cmd, "check", *CHECK_ARGS, "--no-cache", "--output-format", "json", "--exit-zero",
                        *targets], capture_output=True, text=True, cwd=root)
    if r.returncode != 0:
        raise RuntimeError(f"scopelint failed ({r.returncode}): {r.stderr[-1500:]}")
    out = r.stdout.strip()
    findings = json.loads(out) if out else []
    for f in findings:  # paths relative to the checkout, as the manifest has them
        f["relpath"] = os.path.relpath(f["filename"], root).replace(os.sep, "/")
        if f.get("cell"):  # (a notebook's finding: at a row of that cell)
            f["relpath"] += f"#{f['cell']}"
    return findings


_cache: dict = {}


def findings_at(cmd: list[str], gd: str, commit: str, paths: list[str], context: str) -> list[dict]:
    files = files_for(gd, commit, paths, context)
    key = (gd, commit, context, tuple(files), tuple(cmd))
    if key not in _cache:
        with tempfile.TemporaryDirectory(prefix="history-") as tmp:
            root = Path(tmp).resolve()
            extract(gd, commit, files, root)
            _cache[key] = run_scopelint(cmd, root, files, context)
    return _cache[key]


# ---------------------------------------------------------------- classification

def locations(bug: dict, side: str) -> dict[str, list[int]]:
    """{path: lines} of the bug in the parent (side "parent") or the fix (side "fix"),
    extra locations of cross-file bugs included. A notebook's bug names its cell (``cell``,
    ``fixed_cell``, counted from 1 over all cells as ``scopelint check`` counts them) and
    rows in that cell: its path is then ``path#cell``."""
    if side == "parent":
        locs = {_at(bug["path"], bug.get("cell")): list(bug["lines"])}
        for e in bug.get("extra", []):
            locs.setdefault(e["path"], []).extend(e["lines"])
    else:
        locs = {_at(bug.get("fixed_path") or bug["path"], bug.get("fixed_cell", bug.get("cell"))): list(bug.get("fixed_lines", []))}
        for e in bug.get("extra", []):
            locs.setdefault(e.get("fixed_path") or e["path"], []).extend(e.get("fixed_lines", []))
    return locs


def _at(path: str, cell) -> str:
    return f"{path}#{cell}" if cell else path


def _file(loc: str) -> str:
    return loc.split("#", 1)[0]


def hits(finding: dict, lines: list[int]) -> bool:
    """A finding is at one of ``lines`` when it starts there or spans it (a multi-line call)."""
    start = finding["location"]["row"]
    end = (finding.get("end_location") or {}).get("row", start)
    return any(start == ln or start <= ln <= end for ln in lines)


def classify(code: str, locs: dict[str, list[int]], findings: list[dict]) -> str:
    files = {_file(p) for p in locs}  # (a notebook: any of its cells is its file)
    mine = [f for f in findings if f["code"] == code and _file(f["relpath"]) in files]
    if any(f["relpath"] in locs and hits(f, locs[f["relpath"]]) for f in mine):
        return "found-at-line"
    return "found-elsewhere" if mine else "missed"


def silent(code: str, locs: dict[str, list[int]], findings: list[dict]) -> bool | None:
    if not any(locs.values()):
        return None
    return not any(f["code"] == code and f["relpath"] in locs and hits(f, locs[f["relpath"]])
                   for f in findings)


def score_bug(bug: dict, mirrors: Path, cmd: list[str], context: str) -> dict:
    res = {"id": bug["id"], "repo": bug["repo"], "code": bug["code"],
           "framework": bug.get("framework", "torch"), "split": bug.get("split", "?")}
    gd = gitdir(mirrors, bug["repo"])
    if gd is None:
        return {**res, "verdict": "skipped", "reason": "no mirror"}
    try:
        p_locs, f_locs = locations(bug, "parent"), locations(bug, "fix")
        before = findings_at(cmd, gd, bug["parent"], sorted({_file(p) for p in p_locs}), context)
        after = findings_at(cmd, gd, bug["fix_commit"], sorted({_file(p) for p in f_locs}), context)
    except RuntimeError as e:
        return {**res, "verdict": "skipped", "reason": str(e)}
    res["verdict"] = classify(bug["code"], p_locs, before)
    res["fixed_silent"] = silent(bug["code"], f_locs, after)
    res["parent_findings"] = sorted({(f["relpath"], f["location"]["row"], f["code"])
                                     for f in before if f["relpath"] in p_locs})
    return res


# ---------------------------------------------------------------- manifests and tables

def load(manifests: list[Path]) -> list[dict]:
    bugs, seen = [], set()
    for m in manifests:
        for b in json.loads(Path(m).read_text())["bugs"]:
            if b["id"] in seen:
                raise SystemExit(f"duplicate bug id {b['id']} ({m})")
            seen.add(b["id"])
            bugs.append(b)
    return bugs


def table(results: list[dict], key: str, title: str) -> str:
    rows = defaultdict(list)
    for r in results:
        rows[r[key]].append(r)
        rows["all"].append(r)
    head = (f"| {title} | n | at line | elsewhere | missed | skipped | recall at line "
            f"| fixed silent |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    out = [head]
    for k in sorted(rows, key=lambda k: (k == "all", str(k))):
        rs = rows[k]
        scored = [r for r in rs if r["verdict"] != "skipped"]
        c = {v: sum(r["verdict"] == v for r in scored) for v in VERDICTS}
        fs = [r["fixed_silent"] for r in scored if r.get("fixed_silent") is not None]
        rec = f"{c['found-at-line'] / len(scored):.0%}" if scored else "-"
        sil = f"{sum(fs)}/{len(fs)} ({sum(fs) / len(fs):.0%})" if fs else "-"
        name = f"**{k}**" if k == "all" else k
        out.append(f"| {name} | {len(scored)} | {c['found-at-line']} | {c['found-elsewhere']} "
                   f"| {c['missed']} | {len(rs) - len(scored)} | {rec} | {sil} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True, type=Path)
    ap.add_argument("--manifest", action="append", type=Path)
    ap.add_argument("--scopelint", default=f"{shlex.quote(sys.executable)} -m scopelint",
                    help="command that runs scopelint (default: this Python's -m scopelint)")
    ap.add_argument("--context", choices=("file", "folder", "tree"), default="file")
    ap.add_argument("--check-args", default="", help="more options for `scopelint check` (`--preview` to run every rule)")
    ap.add_argument("--split", choices=("dev", "test"))
    ap.add_argument("--code", action="append", help="only these codes (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    a = ap.parse_args(argv)
    CHECK_ARGS[:] = shlex.split(a.check_args)
    bugs = load(a.manifest or [DEFAULT_MANIFEST])
    if a.split:
        bugs = [b for b in bugs if b.get("split") == a.split]
    if a.code:
        bugs = [b for b in bugs if b["code"] in a.code]
    cmd = shlex.split(a.scopelint)
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda b: score_bug(b, a.mirrors, cmd, a.context), bugs))
    for r in results:
        extra = f" fixed-silent={r.get('fixed_silent')}" if r["verdict"] != "skipped" else \
            f" ({r.get('reason')})"
        print(f"{r['verdict']:16} {r['id']}{extra}")
    md = "\n\n".join([f"context: {a.context}; bugs: {len(results)}",
                      table(results, "code", "code"), table(results, "split", "split"),
                      table(results, "framework", "framework")])
    print("\n" + md)
    if a.markdown:
        a.markdown.write_text(md + "\n")
    if a.json:
        a.json.write_text(json.dumps({"context": a.context, "scopelint": a.scopelint,
                                      "results": results}, indent=1) + "\n")
    return results


if __name__ == "__main__":
    main()
