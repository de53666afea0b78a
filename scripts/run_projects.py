"""Runs every project of fixtures/projects (bad and good twins) from its `# entry` file,
as `python <entry>` in the project's folder; tests/test_projects.py runs a sample.

    python scripts/run_projects.py [NAME ...]

Exit status 1 when any entry fails (non-zero exit or a timeout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "fixtures" / "projects"
ENV = dict(PYTHONHASHSEED="0", MXNET_ENGINE_TYPE="NaiveEngine", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
           OPENBLAS_NUM_THREADS="1")


def entry(root: Path) -> Path:
    (found,) = [p for p in sorted(root.rglob("*.py")) if p.read_text(encoding="utf-8").startswith("# entry")]
    return found


def main(names) -> int:
    failed = 0
    for project in sorted(p for p in PROJECTS.iterdir() if p.is_dir() and (not names or p.name in names)):
        for kind in ("bad", "good"):
            root = project / kind
            script = entry(root)
            try:
                proc = subprocess.run([sys.executable, str(script.relative_to(root))], cwd=root, capture_output=True,
                                      text=True, timeout=120, env=dict(os.environ, **ENV))
                ok, last = proc.returncode == 0, (proc.stdout.strip().splitlines() or [""])[-1]
                if not ok:
                    last = (proc.stderr.strip().splitlines() or [""])[-1]
            except subprocess.TimeoutExpired:
                ok, last = False, "timed out"
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {project.name}/{kind}: {last[:100]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
