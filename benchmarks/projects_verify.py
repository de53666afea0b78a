"""``scopelint verify <folder>`` on the multi-file projects (issue 23).

    python benchmarks/projects_verify.py [NAME ...]

Runs the verifier (cpu) on both sides of every project of ``fixtures/projects/`` (issue
20's cross-file corpus) and ``tests/data/verify_projects/`` (the verifier's own: a flagged
helper nothing in its file calls), each side copied to a temporary folder and verified as
``scopelint verify --output-format json .`` does. Prints a row per finding (its verdict,
whether a harness ran and what filled the model) and the rates: bad findings confirmed,
good sides refuted or silent. Exit status 1 when a good side draws a ``confirmed:*``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {"fixtures/projects": ROOT / "fixtures" / "projects", "verify_projects": ROOT / "tests" / "data" / "verify_projects"}


def verify_folder(folder: Path, timeout: float = 120.0):
    with tempfile.TemporaryDirectory(prefix="scopelint-projects-") as tmp:
        dest = Path(tmp) / folder.parent.name / folder.name
        shutil.copytree(folder, dest)
        env = dict(os.environ)
        proc = subprocess.run([sys.executable, "-m", "scopelint", "verify", "--no-cache", "--output-format", "json",
                               "--verify-timeout", str(timeout), "."], cwd=dest, capture_output=True, text=True, env=env)
        try:
            return json.loads(proc.stdout), None
        except ValueError:
            return [], f"exit {proc.returncode}: {proc.stderr[-300:]}"


def model_note(detail: str) -> str:
    """What ran: the whole program, or a harness with the project's class (for a model
    parameter, or as the flagged method's ``self``) or with the stand-in model."""
    if "(synthesized harness" not in detail:
        return "whole program"
    note = detail.split("(synthesized harness", 1)[1]
    if "`self`: the project's" in note:
        return "project self"
    if "the project's `" in note and "a stand-in" not in note:
        return "project class"
    return "stand-in" if "model `" in note else "harness"


def main(argv=None) -> int:
    names = set(argv if argv is not None else sys.argv[1:])
    out = {}
    failed = False
    for corpus, base in CORPORA.items():
        rows = []
        if not base.is_dir():
            continue
        for project in sorted(p for p in base.iterdir() if p.is_dir()):
            if names and project.name not in names:
                continue
            for side in ("bad", "good"):
                start = time.monotonic()
                found, error = verify_folder(project / side)
                seconds = time.monotonic() - start
                if error:
                    rows.append((project.name, side, "-", "ERROR", error, seconds))
                    failed = True
                    continue
                if not found:
                    rows.append((project.name, side, "-", "silent", "", seconds))
                for f in found:
                    rt = f.get("runtime") or {}
                    rows.append((project.name, side, f["code"], rt.get("verdict"), rt.get("detail") or "", seconds))
        out[corpus] = rows
        print(f"== {corpus}")
        for name, side, code, verdict, detail, seconds in rows:
            how = model_note(detail) if verdict not in ("silent", "ERROR") else ""
            short = "" if verdict.startswith("confirmed") or verdict == "silent" else f"  [{detail[:140]}]"
            print(f"{name:42} {side:4} {code:6} {verdict:28} {how:16} {seconds:5.1f}s{short}")
        bad = [r for r in rows if r[1] == "bad" and r[3] != "silent"]
        good = [r for r in rows if r[1] == "good"]
        confirmed = sum(r[3].startswith("confirmed") for r in bad)
        clean = sum(r[3] in ("refuted", "silent") or r[3] == "inconclusive" for r in good)
        good_confirmed = sum(r[3].startswith("confirmed") for r in good)
        failed |= good_confirmed > 0
        print(f"bad: {confirmed}/{len(bad)} confirmed; good: {sum(r[3] in ('refuted', 'silent') for r in good)}/{len(good)} "
              f"refuted or silent, {good_confirmed} confirmed ({clean - sum(r[3] in ('refuted', 'silent') for r in good)} inconclusive)\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
