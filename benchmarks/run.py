#!/usr/bin/env python3
"""scopelint against ruff, TorchFix and Fixit on the sources of the installed mxnet and
torch packages. See benchmarks/README.md.

    python benchmarks/run.py                      # everything, 3 rounds
    python benchmarks/run.py --trees mxnet --rounds 5
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
PINS = {  # each in its own venv under --venvs
    "ruff": ["ruff==0.17.6"],
    "torchfix": ["torchfix==0.7.0"],  # needs flake8, PyYAML, libcst<1.6; not torch itself
    "fixit": ["fixit==2.2.1"],
}
# Should anything ever pull torch in, take the release already on this machine, never a
# multi-GB CUDA build.
CONSTRAINTS = "torch==2.13.0\n"


# --- setup ---------------------------------------------------------------------------
def ensure_venvs(root: Path, tools: List[str]) -> Dict[str, Path]:
    bins = {}
    for tool in tools:
        venv = root / tool
        marker = venv / ".installed"
        spec = " ".join(PINS[tool])
        if not (marker.is_file() and marker.read_text() == spec):
            print(f"[setup] creating {venv} with {spec}", file=sys.stderr)
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            cons = root / "constraints.txt"
            cons.write_text(CONSTRAINTS)
            subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(cons), *PINS[tool]],
                           check=True)
            marker.write_text(spec)
        bins[tool] = venv / "bin"
    return bins


def copy_tree(package: str, dest: Path) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {package} is not installed in {sys.executable}")
    src = Path(list(spec.submodule_search_locations)[0])

    def ignore(directory, names):
        return [n for n in names if n == "__pycache__" or not (n.endswith(".py") or os.path.isdir(os.path.join(directory, n)))]

    out = dest / package
    shutil.copytree(src, out, ignore=ignore, symlinks=False)
    return out


def py_files(tree: Path) -> List[Path]:
    return sorted(p for p in tree.rglob("*.py") if p.is_file())


def count_lines(files: List[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in files)


def make_subset(tree: Path, files: List[Path], max_lines: int, dest: Path) -> Path:
    """Every k-th file (deterministic), copied with its relative path, up to max_lines."""
    total = count_lines(files)
    step = max(1, round(total / max_lines)) if max_lines else 1
    out = dest / (tree.name + "_subset")
    lines = 0
    for p in files[::step]:
        n = p.read_bytes().count(b"\n")
        if lines + n > max_lines * 1.05:
            continue
        target = out / p.relative_to(tree)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
        lines += n
    return out


# --- measuring -----------------------------------------------------------------------
def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (from /proc)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


@dataclasses.dataclass
class Run:
    wall: float
    cpu: float  # user + system of the process and its waited-for children
    rss: int  # peak resident bytes of the whole process tree (sampled) or the largest process
    rc: int
    out: bytes


def measure(cmd: List[str], cwd: Path, stdin: Optional[Path] = None, sample: bool = True) -> Run:
    out = tempfile.TemporaryFile()
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=fin, stdout=out, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, NO_COLOR="1"))
    peak = [0]
    done = threading.Event()

    def sampler():
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    th = threading.Thread(target=sampler, daemon=True)
    if sample:
        th.start()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if stdin:
        fin.close()
    out.seek(0)
    data = out.read()
    out.close()
    return Run(wall, ru.ru_utime + ru.ru_stime, max(peak[0], ru.ru_maxrss * 1024), proc.returncode, data)


class _Lsp:
    """A minimal LSP client over stdio (JSON-RPC with Content-Length framing)."""

    def __init__(self, cmd: List[str], cwd: Path):
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)

    def send(self, method: str, params: dict, id: Optional[int] = None) -> None:
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if id is not None:
            msg["id"] = id
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self) -> dict:
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the language server exited")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def wait_for(self, match) -> dict:
        while True:
            msg = self.receive()
            if match(msg):
                return msg

    def cpu(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0


def lsp_relint(sl: List[str], work: Path, path: Path, runs: int) -> List[Run]:
    """``scopelint lsp``: open ``path``, then per run change it (a new comment line) and
    save it, timing the wait for that version's diagnostics (save lints at once; a change
    alone waits for the server's debounce, a pause in typing)."""
    lsp = _Lsp(sl + ["lsp"], work)
    try:
        lsp.send("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {}}, id=1)
        lsp.wait_for(lambda m: m.get("id") == 1)
        lsp.send("initialized", {})
        uri, text = path.resolve().as_uri(), path.read_text(encoding="utf-8")

        def published(version):
            return lambda m: (m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"]["uri"] == uri and m["params"].get("version") == version)

        lsp.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        lsp.wait_for(published(1))
        out = []
        for i in range(runs):
            version = i + 2
            cpu, t0 = lsp.cpu(), time.perf_counter()
            lsp.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                "contentChanges": [{"text": text + f"\n# edit {i}\n"}]})
            lsp.send("textDocument/didSave", {"textDocument": {"uri": uri}})
            msg = lsp.wait_for(published(version))
            out.append(Run(time.perf_counter() - t0, lsp.cpu() - cpu, lsp.rss(), 0, json.dumps(msg).encode()))
        lsp.send("shutdown", None, id=2)
        lsp.wait_for(lambda m: m.get("id") == 2)
        lsp.send("exit", None)
        lsp.proc.wait(timeout=30)
        return out
    finally:
        if lsp.proc.poll() is None:
            lsp.proc.kill()


def summarise(runs: List[Run]) -> dict:
    return {
        "wall_s": statistics.median(r.wall for r in runs),
        "cpu_s": statistics.median(r.cpu for r in runs),
        "peak_rss_mb": max(r.rss for r in runs) / 2**20,
        "runs": len(runs),
        "walls": [round(r.wall, 3) for r in runs],
        "rcs": sorted({r.rc for r in runs}),
    }


def findings(out: bytes) -> List[str]:
    return sorted(line for line in out.decode("utf-8", "replace").splitlines() if ": SL" in line)


# --- internal helpers run as child processes -------------------------------------------
def _parse_one(args):
    kind, path = args
    data = Path(path).read_bytes()
    if kind == "ast":
        import ast

        try:
            ast.parse(data)
        except (SyntaxError, ValueError, RecursionError):
            pass
    else:
        import libcst

        try:
            libcst.parse_module(data)
        except Exception:
            pass
    return 0


def parse_floor(kind: str, listfile: str, jobs: int) -> int:
    """Parse every file (one per line in listfile) with ast or libcst, on ``jobs`` processes."""
    if kind == "libcst":
        import libcst  # noqa: F401  (imported once, before the workers fork)
    from multiprocessing import Pool

    files = Path(listfile).read_text().splitlines()
    if jobs <= 1:
        for f in files:
            _parse_one((kind, f))
        return 0
    with Pool(jobs) as pool:
        for _ in pool.imap_unordered(_parse_one, [(kind, f) for f in files], chunksize=8):
            pass
    return 0


def scopelint_without_gate(argv: List[str]) -> int:
    """`scopelint` with Settings(gate=False) for every file (the gate's equivalence check)."""
    from scopelint import cli, config

    original = config.Resolver.settings_for
    config.Resolver.settings_for = lambda self, path: dataclasses.replace(original(self, path), gate=False)
    return cli.main(argv)


# --- the benchmark -------------------------------------------------------------------
def scopelint_cmd(args) -> List[str]:
    script = Path(args.python).parent / "scopelint"
    # `python -m` would put the working folder first on sys.path, where mxnet's copy has a
    # random.py and a _ctypes package that break the standard library.
    return [str(script)] if script.is_file() else [args.python, "-P", "-m", "scopelint"]


def pick_file(files: List[Path], target_lines: int, words=(b"backward", b"no_grad", b"autograd")) -> Path:
    best, best_d = None, None
    for p in files:
        data = p.read_bytes()
        if not any(w in data for w in words) or b"torch" not in data and b"mxnet" not in data:
            continue
        d = abs(data.count(b"\n") - target_lines)
        if best_d is None or d < best_d:
            best, best_d = p, d
    return best or max(files, key=lambda p: p.stat().st_size)


def pick_analysed_file(files: List[Path], target_lines: int) -> Tuple[Path, int]:
    """The editor case that costs most: of the files within 30% of ``target_lines``, the
    one whose largest part scopelint's gate keeps for the analysis (so LibCST parses
    it); the closest to the target breaks ties. Returns it and the lines kept."""
    import ast as _ast

    from scopelint.core import slicing
    from scopelint.engine import Settings, might_fire

    settings, best, best_key = Settings(), None, None
    for p in files:
        text = p.read_text(encoding="utf-8", errors="replace")
        n = text.count("\n")
        if abs(n - target_lines) > 0.3 * target_lines or not might_fire(text, settings):
            continue
        try:
            plan = slicing.plan(text, settings.inference_functions, _ast.parse(text))
        except (SyntaxError, ValueError, RecursionError):
            continue
        kept = plan.kept_lines if plan is not None and plan.source is not None else 0
        key = (round(kept / max(n, 1), 1), -abs(n - target_lines))
        if best_key is None or key > best_key:
            best, best_key = (p, kept), key
    return best if best is not None else (pick_file(files, target_lines), 0)


def compile_scopelint(python: str) -> str:
    """Byte-compile scopelint's modules, as pip does for the competitors' regular
    installs. An editable install run with PYTHONDONTWRITEBYTECODE set (as on some CI
    machines) would otherwise compile its sources in every process it starts."""
    probe = ("import os, scopelint, scopelint.rules, scopelint.runtime_check as r; "
             "print('\\n'.join(sorted({os.path.dirname(m.__file__) for m in (scopelint, scopelint.rules, r)})))")
    dirs = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([python, "-m", "compileall", "-q", *dirs], env=env, stdout=subprocess.DEVNULL, check=True)
    return f"scopelint's modules byte-compiled before timing (as a regular pip install does): {', '.join(dirs)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", default="mxnet,torch", help="installed packages whose sources are linted")
    ap.add_argument("--tools", default="ruff,torchfix,fixit", help="competitors (scopelint always runs)")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds per tool and tree (default 3)")
    ap.add_argument("--rounds-for", action="append", default=[], metavar="TREE=N",
                    help="fewer (or more) rounds on one tree, e.g. torch=2")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="scopelint --jobs and parse-floor workers")
    ap.add_argument("--fixit-lines", type=int, default=60000,
                    help="Fixit runs on a subset of about this many lines per tree (0: whole tree)")
    ap.add_argument("--torchfix-lines", type=int, default=0, help="as --fixit-lines, for TorchFix (0: whole tree)")
    ap.add_argument("--check-lines", type=int, default=0,
                    help="the --jobs 1 and gate-off equivalence runs on a subset of this many lines (0: whole tree)")
    ap.add_argument("--editor-runs", type=int, default=7)
    ap.add_argument("--venvs", type=Path, default=HERE / ".venvs")
    ap.add_argument("--out", type=Path, default=HERE / ".out", help="where results.json and results.md go")
    ap.add_argument("--python", default=sys.executable, help="the Python that has scopelint installed")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    # internal
    ap.add_argument("--_parse", nargs=2, metavar=("KIND", "LISTFILE"), help=argparse.SUPPRESS)
    ap.add_argument("--_nogate", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._parse:
        return parse_floor(args._parse[0], args._parse[1], args.jobs)
    if args._nogate is not None:
        return scopelint_without_gate(args._nogate)

    tools = [t for t in args.tools.split(",") if t]
    bins = ensure_venvs(args.venvs, tools)
    rounds_for = {k: int(v) for k, v in (s.split("=") for s in args.rounds_for)}
    work = Path(tempfile.mkdtemp(prefix="scopelint-bench-"))
    sl = scopelint_cmd(args)
    version = subprocess.run(sl + ["--version"], capture_output=True, text=True).stdout.strip()
    compiled = compile_scopelint(args.python)
    report = {
        "machine": {"nproc": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "scopelint": version, "pins": PINS, "jobs": args.jobs, "trees": {}, "notes": [compiled],
    }
    out_dir = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        for name in [t for t in args.trees.split(",") if t]:
            tree = copy_tree(name, work)
            files = py_files(tree)
            lines = count_lines(files)
            rounds = rounds_for.get(name, args.rounds)
            print(f"[{name}] {len(files)} files, {lines} lines, {rounds} rounds", file=sys.stderr)
            rel = tree.name
            t: dict = {"files": len(files), "lines": lines, "rounds": rounds, "tools": {}, "checks": {}}
            report["trees"][name] = t

            subsets = {}
            for tool, limit in (("fixit", args.fixit_lines), ("torchfix", args.torchfix_lines)):
                if tool in tools and limit and lines > limit * 1.1:
                    if limit not in subsets:
                        subsets[limit] = make_subset(tree, files, limit, work / f"sub{limit}")

            def cmd_for(tool: str, target: str) -> List[str]:
                if tool == "scopelint":
                    return sl + ["check", "--no-cache", "--exit-zero", "--output-format", "concise", "--jobs", str(args.jobs), target]
                if tool == "ruff":
                    return [str(bins["ruff"] / "ruff"), "check", "--isolated", "--no-cache", "--exit-zero", target]
                if tool == "torchfix":
                    return [str(bins["torchfix"] / "torchfix"), target]
                if tool == "fixit":
                    return [str(bins["fixit"] / "fixit"), "lint", target]
                raise ValueError(tool)

            # (label, tool, cwd, target): the whole tree, or a subset with scopelint beside it
            jobs_list = [("scopelint", "scopelint", work, rel)]
            for tool in tools:
                limit = {"fixit": args.fixit_lines, "torchfix": args.torchfix_lines}.get(tool, 0)
                if limit in subsets:
                    sub = subsets[limit]
                    jobs_list.append((tool, tool, sub.parent, sub.name))
                    label = f"scopelint@subset{limit}"
                    if not any(j[0] == label for j in jobs_list):
                        jobs_list.append((label, "scopelint", sub.parent, sub.name))
                else:
                    jobs_list.append((tool, tool, work, rel))
            runs: Dict[str, List[Run]] = {j[0]: [] for j in jobs_list}
            for r in range(rounds):
                order = jobs_list[r % len(jobs_list):] + jobs_list[: r % len(jobs_list)]  # alternate the order
                for label, tool, cwd, target in order:
                    run = measure(cmd_for(tool, target), cwd)
                    runs[label].append(run)
                    print(f"[{name}] round {r + 1}: {label:24s} {run.wall:8.2f}s wall {run.cpu:8.2f}s cpu "
                          f"{run.rss / 2**20:7.0f} MB rc={run.rc}", file=sys.stderr)
            for label, tool, cwd, target in jobs_list:
                target_files = py_files(cwd / target)
                t["tools"][label] = dict(summarise(runs[label]), files=len(target_files),
                                         lines=lines if target == rel else count_lines(target_files),
                                         subset=target != rel)
            for limit, sub in subsets.items():
                report["notes"].append(f"{name}: tools with a *subset* figure ran on every k-th file, "
                                       f"{count_lines(py_files(sub))} lines; compare them with scopelint@subset{limit}")
            cold = runs["scopelint"]

            # warm: fill the cache once (timed as "cold, writing the cache"), then nothing changed
            cache_cmd = sl + ["check", "--exit-zero", "--output-format", "concise", "--jobs", str(args.jobs), rel]
            shutil.rmtree(work / ".scopelint_cache", ignore_errors=True)
            fill = measure(cache_cmd, work)
            t["tools"]["scopelint cold, writing cache"] = dict(summarise([fill]), files=len(files), lines=lines)
            warm = [measure(cache_cmd, work) for _ in range(max(3, rounds))]
            t["tools"]["scopelint warm"] = dict(summarise(warm), files=len(files), lines=lines)

            # one file changed (a different edit each time)
            changed = pick_file(files, 800)
            original = changed.read_bytes()
            one = []
            try:
                for i in range(max(3, rounds)):
                    changed.write_bytes(original + f"\n# scopelint benchmark edit {time.time_ns()} {i}\n".encode())
                    one.append(measure(cache_cmd, work))
            finally:
                changed.write_bytes(original)
            t["tools"]["scopelint one file changed"] = dict(summarise(one), files=len(files), lines=lines,
                                                             changed=str(changed.relative_to(work)))

            # the floor: just parsing
            listfile = work / f"{name}.files"
            listfile.write_text("\n".join(str(p) for p in files))
            for kind in ("ast", "libcst"):
                pr = [measure([args.python, "-P", str(Path(__file__).resolve()), "--jobs", str(args.jobs), "--_parse", kind,
                               str(listfile)], work) for _ in range(rounds if kind == "ast" else 1)]
                t["tools"][f"parse only: {kind}"] = dict(summarise(pr), files=len(files), lines=lines)

            # the editor path: one ~2,000-line file through stdin, process start included;
            # the file the analysis has to read most of (a file the gate skips is 0.06 s)
            edit, analysed = pick_analysed_file(files, 2000)
            ed = [measure(sl + ["check", "--exit-zero", "--output-format", "concise", "--stdin-filename",
                                str(edit.relative_to(work)), "-"], work, stdin=edit, sample=False)
                  for _ in range(args.editor_runs)]
            t["tools"]["editor: one file via stdin"] = dict(summarise(ed), files=1, lines=edit.read_bytes().count(b"\n"),
                                                            file=str(edit.relative_to(work)), analysed_lines=analysed)
            # the same file in the language server: re-lint after each edit (no process start)
            lr = lsp_relint(sl, work, edit, args.editor_runs)
            t["tools"]["editor: LSP re-lint after an edit"] = dict(summarise(lr), files=1,
                                                                  lines=edit.read_bytes().count(b"\n"),
                                                                  file=str(edit.relative_to(work)), analysed_lines=analysed)

            # equivalence: cache on/off, --jobs 1 vs N, gate on/off
            base = findings(cold[0].out)
            checks = t["checks"]
            checks["findings"] = len(base)
            checks["cold runs agree"] = all(findings(r.out) == base for r in cold)
            checks["cache: writing run == --no-cache"] = findings(fill.out) == base
            checks["cache: warm runs == --no-cache"] = all(findings(r.out) == base for r in warm)
            ctree, ccwd = rel, work
            if args.check_lines and lines > args.check_lines * 1.1:
                sub = make_subset(tree, files, args.check_lines, work / "check")
                ctree, ccwd = sub.name, sub.parent
                report["notes"].append(f"{name}: --jobs 1 and gate-off checks ran on a subset of "
                                       f"{count_lines(py_files(sub))} lines")
                base_n = findings(measure(cmd_for("scopelint", ctree), ccwd, sample=False).out)
            else:
                base_n = base
            j1 = measure(sl + ["check", "--no-cache", "--exit-zero", "--output-format", "concise", "--jobs", "1", ctree],
                         ccwd, sample=False)
            checks["--jobs 1 == --jobs N"] = findings(j1.out) == base_n
            ng = measure([args.python, "-P", str(Path(__file__).resolve()), "--_nogate", "check", "--no-cache",
                          "--exit-zero", "--output-format", "concise", "--jobs", str(args.jobs), ctree], ccwd, sample=False)
            checks["gate off == gate on"] = findings(ng.out) == base_n
            checks["gate off: wall s"] = round(ng.wall, 2)
            checks["checked on"] = "subset" if ctree != rel else "whole tree"
            (out_dir / "results.json").write_text(json.dumps(report, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)

    md = table(report)
    (out_dir / "results.json").write_text(json.dumps(report, indent=1))
    (out_dir / "results.md").write_text(md)
    print(md)
    return 0


def table(report: dict) -> str:
    m = report["machine"]
    rows = [f"{report['scopelint']}, nproc={m['nproc']}, --jobs {report['jobs']}, Python {m['python']}, {m['platform']}", "",
            "| tree | tool | files | lines | median wall s | median CPU s | peak RSS MB | wall / scopelint | runs |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, t in report["trees"].items():
        tools = t["tools"]
        for label, s in tools.items():
            ref = tools.get("scopelint")
            if s.get("analysed_lines") is not None:
                label += f" ({s['analysed_lines']} lines analysed)"
            if s.get("subset"):
                ref = next((v for k, v in tools.items() if k.startswith("scopelint@subset") and v["lines"] == s["lines"]), ref)
                label += " (subset)"
            ratio = s["wall_s"] / ref["wall_s"] if ref and ref["wall_s"] else float("nan")
            rows.append(f"| {name} | {label} | {s['files']} | {s['lines']} | {s['wall_s']:.2f} | {s['cpu_s']:.2f} | "
                        f"{s['peak_rss_mb']:.0f} | {ratio:.2f} | {s['runs']} |")
    rows.append("")
    rows.append("| tree | check | result |")
    rows.append("|---|---|---|")
    for name, t in report["trees"].items():
        for k, v in t["checks"].items():
            rows.append(f"| {name} | {k} | {v} |")
    for n in report["notes"]:
        rows.append(f"\n- {n}")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.exit(main())
