#!/usr/bin/env python3
"""The ecosystem check: scopelint on the code of published training libraries, every
finding judged. See benchmarks/README.md ("Ecosystem check").

    python benchmarks/ecosystem.py                 # download (cached), lint, diff against the baseline
    python benchmarks/ecosystem.py --packages d2l,gluoncv
    python benchmarks/ecosystem.py --update        # rewrite the baseline (judgements kept)

Exit status: 0 every finding is judged and no finding judged true vanished; 1 something
is unjudged or a true finding was lost; 2 a setup or lint error (bad download, checksum
mismatch, scopelint failed); 4 the package index cannot be reached (nothing was checked).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = HERE / ".ecosystem"  # git-ignored; reused between runs
DEFAULT_BASELINE = HERE / "ecosystem" / "baseline.json"
DEFAULT_OUT = HERE / ".out"
INDEX = os.environ.get("SCOPELINT_ECOSYSTEM_INDEX", "https://pypi.org/pypi")
EXIT_OK, EXIT_DIFF, EXIT_ERROR, EXIT_UNREACHABLE = 0, 1, 2, 4
VERDICTS = ("true", "false")
UNJUDGED = "unjudged"


@dataclasses.dataclass(frozen=True)
class Package:
    """One pinned distribution of the corpus. ``kind`` is the index's packagetype
    (``bdist_wheel``: a pure-Python wheel, the sources are in it; ``sdist``) or
    ``installed`` (the files of an installed package of that exact version, for mxnet,
    whose wheel is 49 MB of native code). ``include``: path prefixes inside the
    distribution to lint (all of it when empty); ``exclude``: prefixes to leave out."""

    name: str
    version: str
    framework: str  # "torch" or "mxnet": what its training code uses
    kind: str
    sha256: str = ""
    include: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    why: str = ""

    @property
    def key(self) -> str:
        return self.name


# Picked by how much training and evaluation code they hold; every version installs on
# this project's Pythons (none is imported: only their sources are read).
CORPUS: Tuple[Package, ...] = (
    Package("d2l", "1.0.3", "torch", "bdist_wheel",
            "c625a01e66eb5d793a7e0a6f8582b1e1e35dfad02b5e77f3d2ab299d07177ba6",
            why="the Dive into Deep Learning book's library: torch.py and mxnet.py training loops"),
    Package("pytorch-ignite", "0.5.5", "torch", "bdist_wheel",
            
            "9a397b0899968612efd00ac75bad64f20a9a91a8244f37bdcb8888af61455cf9",
            why="engines, trainers and evaluators built from callbacks"),
    Package("skorch", "1.4.0", "torch", "bdist_wheel",
            "eed53db7a7d5e72df38ec518a24206ee8e87c0bffd4a0386da3261ff667690ed",
            why="a scikit-learn wrapper: train_step/validation_step/infer in a NeuralNet class"),
    Package("fastai", "2.8.12", "torch", "bdist_wheel", 
            "50474575768679ba7352bebd0fdf8e7d2c4ddc10242455bec79a19c964f03fd0",
            why="the Learner's callback-driven fit loop"),
    Package("sentence-transformers", "6.2.0", "torch", "bdist_wheel", 
            "ffb51ccfef65427cfa61776d0eeeb257600b0099cf0c7533ae9a6856d31e4665",
            why="trainers, cached losses with manual backward, encode()"),
    Package("flair", "0.15.1", "torch", "bdist_wheel", 
            "3b6b793f2380cd618e988e7b16fbadcec6502aaa8f11a0890390160303aed553",
            why="ModelTrainer, a language-model trainer carrying hidden state"),
    Package("speechbrain", "1.1.2", "torch", "bdist_wheel", 
            "9fea4144c917ea58bcf13f17a1a1759179ed7472a30ec8416e7c7c8cf21d9c9a",
            why="the Brain class (fit_batch/evaluate_batch), many models and losses"),
    Package("pytorch-tabnet", "4.1.0", "torch", "bdist_wheel", 
            "70e8c9803f68f7cb26930d4cdb88857d1d98c745e0daf99d0f870fc70698515f",
            why="a small model with fit/predict/explain in one class"),
    Package("pytorch-metric-learning", "2.9.0", "torch", "bdist_wheel",
            "d51646006dc87168f00cf954785db133a4c5aac81253877248737aa42ef6432a",
            why="trainers and testers for embedding models"),
    Package("pytorch-forecasting", "1.8.0", "torch", "bdist_wheel", 
            "d77ad9a86a310513b3835570f2119200d7a8818fe6acf42106bb97dbba66dfff",
            why="Lightning modules with custom prediction and logging"),
    Package("lightning", "2.6.6", "torch", "bdist_wheel", 
            "2bcbd6ee840071cd076c7dc9953d7ac1040df92f1c5fa76583aae644f037ab85",
            why="the training/evaluation loops that run users' steps"),
    Package("transformers", "5.24.0", "torch", "bdist_wheel", 
            "ff5ebedf9359f94bb63772b6380eba6e7104d010cbbb2cb82c788817ea7486f6",
            exclude=("transformers/models/",),
            why="Trainer, generation, integrations (the model zoo under models/ is left out)"),
    Package("gluoncv", "0.10.5.post0", "mxnet", "bdist_wheel",
            "93318cfda39ac3ac0fae3226f425f86b5edeafa581323e4f24927655538929ee",
            why="Gluon model zoo, multi-device training utilities (and a torch half)"),
    Package("gluonnlp", "0.10.0", "mxnet", "sdist",
            "ae34825031f5228f3fced26339b56550cf8e360b40906aa44fb705439ff426e0",
            why="Gluon NLP models, samplers, scripts-style helpers"),
    Package("gluonts", "0.8.1", "mxnet", "bdist_wheel",
            "0ee5a293902e36d1626ca482d2cdf9d25c8a04227da8ec4d4c9992503f5b97d4",
            why="its MXNet Trainer (gluonts/mx/trainer) and models, plus torch nursery code"),
    Package("autogluon", "0.0.15", "mxnet", "bdist_wheel",
            "d08bcf5fb5844e85e656267b2d2eec625fca0492fe509da44960a6321e1f957e",
            why="the MXNet-era AutoGluon: schedulers with RL controllers, text/image tasks"),
    Package("mxnet", "1.9.1", "mxnet", "installed",
            include=("mxnet/gluon/contrib/estimator/",),
            why="Gluon's Estimator (fit loop, event handlers), from the installed wheel"),
)


# --- fetching ---------------------------------------------------------------------------
class Unreachable(Exception):
    """The package index cannot be reached."""


class SetupError(Exception):
    """A download, checksum or extraction failed."""


def _get(url: str, timeout: float = 60.0) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (https index)
            return resp.read()
    except urllib.error.HTTPError as exc:
        raise SetupError(f"{url}: HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise Unreachable(f"{url}: {getattr(exc, 'reason', exc)}") from exc


def _release_file(pkg: Package) -> Tuple[str, str, str]:
    """(url, filename, sha256) of the pinned file, from the index's JSON API."""
    api = f"{INDEX.rstrip('/')}/{pkg.name}/json"
    try:
        meta = json.loads(_get(api))
    except ValueError as exc:
        raise SetupError(f"{api}: not JSON") from exc
    files = [f for f in meta.get("releases", {}).get(pkg.version, []) if f.get("packagetype") == pkg.kind]
    if pkg.kind == "bdist_wheel":
        files = [f for f in files if f["filename"].endswith("-none-any.whl")]
    if not files:
        raise SetupError(f"{pkg.name}=={pkg.version}: no {pkg.kind} on the index")
    f = files[0]
    return urllib.parse.urljoin(api, f["url"]), f["filename"], f["digests"]["sha256"]


def _keep(pkg: Package, rel: str) -> bool:
    if not rel.endswith(".py"):
        return False
    if pkg.include and not any(rel.startswith(p) for p in pkg.include):
        return False
    return not any(rel.startswith(p) for p in pkg.exclude)


def _write_tree(dest: Path, members: Iterable[Tuple[str, bytes]]) -> int:
    n = 0
    for rel, data in members:
        parts = Path(rel).parts
        if not parts or any(p in ("..", "") for p in parts) or Path(rel).is_absolute():
            continue  # never write outside dest
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        n += 1
    return n


def _members(pkg: Package, filename: str, data: bytes) -> List[Tuple[str, bytes]]:
    out = []
    if filename.endswith(".whl") or filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if not info.is_dir() and _keep(pkg, info.filename):
                    out.append((info.filename, zf.read(info)))
    elif filename.endswith((".tar.gz", ".tgz")):
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
            for m in tf.getmembers():
                if not m.isfile():
                    continue
                rel = m.name.split("/", 1)[1] if "/" in m.name else m.name  # drop NAME-VERSION/
                if _keep(pkg, rel):
                    fh = tf.extractfile(m)
                    if fh is not None:
                        out.append((rel, fh.read()))
    else:
        raise SetupError(f"{filename}: unknown archive type")
    return out


def _installed_root(pkg: Package) -> Optional[Path]:
    """The folder holding the installed top-level package, if its version is the pin
    (read from the distribution's metadata; nothing is imported)."""
    try:
        from importlib import metadata

        if metadata.version(pkg.name) != pkg.version:
            return None
    except Exception:  # not installed
        return None
    spec = importlib.util.find_spec(pkg.name)  # a top-level package: found, not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).parent


def fetch(pkg: Package, cache: Path) -> Optional[Path]:
    """The package's extracted sources under ``cache`` (downloaded once, checksum
    verified). None when an ``installed`` package is not installed at its pinned version."""
    dest = cache / "src" / f"{pkg.name}-{pkg.version}"
    stamp = dest / ".complete"
    if stamp.is_file():
        return dest
    if pkg.kind == "installed":
        root = _installed_root(pkg)
        if root is None:
            return None
        members = []
        for path in sorted(root.joinpath(pkg.name).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if _keep(pkg, rel):
                members.append((rel, path.read_bytes()))
        digest = "installed"
    else:
        archive_dir = cache / "archives"
        archive_dir.mkdir(parents=True, exist_ok=True)
        url, filename, sha = _release_file(pkg)
        if pkg.sha256 and sha != pkg.sha256:
            raise SetupError(f"{filename}: the index lists sha256 {sha}, the pin is {pkg.sha256}")
        archive = archive_dir / filename
        data = archive.read_bytes() if archive.is_file() else b""
        if hashlib.sha256(data).hexdigest() != sha:
            data = _get(url, timeout=300)
            if hashlib.sha256(data).hexdigest() != sha:
                raise SetupError(f"{filename}: the download does not match sha256 {sha}")
            archive.write_bytes(data)
        members = _members(pkg, filename, data)
        digest = sha
    if not members:
        raise SetupError(f"{pkg.name}=={pkg.version}: no Python files matched")
    if dest.exists():
        import shutil

        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    _write_tree(dest, members)
    stamp.write_text(digest + "\n")
    return dest


# --- linting ----------------------------------------------------------------------------
@dataclasses.dataclass
class Finding:
    package: str
    path: str  # relative to the package's extracted root, POSIX
    line: int
    column: int
    code: str
    message: str

    @property
    def key(self) -> Tuple[str, str, int, int, str]:
        return (self.package, self.path, self.line, self.column, self.code)


def tree_size(root: Path) -> Tuple[int, int]:
    files = lines = 0
    for p in root.rglob("*.py"):
        files += 1
        with open(p, "rb") as fh:
            lines += sum(1 for _ in fh)
    return files, lines


def lint(pkg: Package, root: Path, jobs: int, scopelint: Sequence[str]) -> Tuple[List[Finding], float]:
    """scopelint's findings on one package (no cache, no configuration but the
    defaults) and the wall time of the run."""
    config = root.parent.parent / "isolated.toml"
    if not config.is_file():
        config.write_text("[tool.scopelint]\n")
    cmd = [*scopelint, "check", "--no-cache", "--preview", "--exit-zero", "--output-format", "json",
           "--jobs", str(jobs), "--config", str(config), str(root)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SetupError(f"scopelint failed on {pkg.name} (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    out = []
    for d in json.loads(proc.stdout or "[]"):
        rel = Path(d["filename"]).resolve().relative_to(root.resolve()).as_posix()
        loc = d.get("location") or {}
        out.append(Finding(pkg.key, rel, int(loc.get("row") or 0), int(loc.get("column") or 0),
                           d["code"], d["message"]))
    return out, wall


# --- the baseline and the diff ----------------------------------------------------------
def load_baseline(path: Path) -> List[dict]:
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data["findings"] if isinstance(data, dict) else data
    for r in rows:
        if r.get("verdict", UNJUDGED) not in VERDICTS + (UNJUDGED,):
            raise SetupError(f"{path}: verdict {r.get('verdict')!r} for {r.get('path')}:{r.get('line')} "
                             f"is none of true/false/{UNJUDGED}")
    return rows


def _row_key(r: dict) -> Tuple[str, str, int, int, str]:
    return (r["package"], r["path"], int(r["line"]), int(r["column"]), r["code"])


@dataclasses.dataclass
class Diff:
    kept: List[Tuple[Finding, dict]]  # found now and in the baseline
    appeared: List[Finding]  # found now, not in the baseline
    vanished: List[dict]  # in the baseline, not found now

    @property
    def unjudged(self) -> List[Finding]:
        return self.appeared + [f for f, r in self.kept if r.get("verdict") not in VERDICTS]

    @property
    def lost(self) -> List[dict]:
        return [r for r in self.vanished if r.get("verdict") == "true"]

    @property
    def fixed(self) -> List[dict]:
        return [r for r in self.vanished if r.get("verdict") == "false"]

    @property
    def failed(self) -> bool:
        return bool(self.unjudged or self.lost)


def compare(findings: Sequence[Finding], baseline: Sequence[dict], packages: Iterable[str]) -> Diff:
    """Findings against the baseline rows of the packages that were checked."""
    checked = set(packages)
    rows = {_row_key(r): r for r in baseline if r["package"] in checked}
    seen = set()
    kept, appeared = [], []
    for f in findings:
        r = rows.get(f.key)
        if r is None:
            appeared.append(f)
        else:
            kept.append((f, r))
        seen.add(f.key)
    vanished = [r for k, r in rows.items() if k not in seen]
    return Diff(kept, appeared, vanished)


def updated_baseline(diff: Diff, baseline: Sequence[dict], packages: Iterable[str], drop_lost: bool) -> List[dict]:
    """The baseline rewritten: every finding now, its judgement kept (the message as it
    reads now); new ones unjudged (so the check stays red until someone judges them);
    vanished false ones dropped (fixed); vanished true ones kept unless ``drop_lost``
    (lost recall stays visible). Rows of packages not checked are kept as they were."""
    checked = set(packages)
    out = [dict(r) for r in baseline if r["package"] not in checked]
    for f, r in diff.kept:
        row = dict(r)
        row["message"] = f.message
        out.append(row)
    for f in diff.appeared:
        out.append({"package": f.package, "path": f.path, "line": f.line, "column": f.column, "code": f.code,
                    "message": f.message, "verdict": UNJUDGED, "reason": ""})
    if not drop_lost:
        out.extend(dict(r) for r in diff.lost)
    out.sort(key=_row_key)
    return out


def write_baseline(path: Path, rows: Sequence[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = ("package", "path", "line", "column", "code", "verdict", "reason", "message")
    lines = []
    for r in rows:
        row = {k: r.get(k, "") for k in keys}
        row.update({k: v for k, v in r.items() if k not in row})
        lines.append("  " + json.dumps(row, ensure_ascii=False))
    text = ('{\n "about": "Every scopelint finding on the ecosystem corpus (benchmarks/ecosystem.py), '
            'judged by reading the code: verdict true/false and why.",\n "findings": [\n'
            + ",\n".join(lines) + "\n ]\n}\n")
    path.write_text(text, encoding="utf-8")


# --- reporting --------------------------------------------------------------------------
def _verdict_of(f: Finding, diff_rows: Dict[Tuple, dict]) -> str:
    r = diff_rows.get(f.key)
    return r.get("verdict", UNJUDGED) if r else UNJUDGED


def report(results: List[dict], diff: Diff, wall: float) -> str:
    rows = {_row_key(r): r for _, r in diff.kept}
    out = ["| package | version | framework | files | lines | findings per rule | true | false | unjudged | seconds |",
           "|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    per_rule: Dict[str, Counter] = defaultdict(Counter)
    per_fw: Dict[str, Counter] = defaultdict(Counter)
    totals = Counter()
    for res in results:
        c = Counter()
        rules = Counter()
        for f in res["findings"]:
            v = _verdict_of(f, rows)
            c[v] += 1
            rules[f.code] += 1
            per_rule[f.code][v] += 1
            per_fw[res["framework"]][v] += 1
        totals.update(c)
        totals["files"] += res["files"]
        totals["lines"] += res["lines"]
        rule_s = ", ".join(f"{k}×{n}" for k, n in sorted(rules.items())) or "–"
        out.append(f"| {res['package']} | {res['version']} | {res['framework']} | {res['files']} | {res['lines']} | "
                   f"{rule_s} | {c['true']} | {c['false']} | {c[UNJUDGED]} | {res['seconds']:.1f} |")
    out.append(f"| **all** | | | {totals['files']} | {totals['lines']} | | {totals['true']} | {totals['false']} | "
               f"{totals[UNJUDGED]} | {wall:.1f} |")
    out += ["", "| rule | true | false | unjudged | precision |", "|---|---:|---:|---:|---:|"]
    for code in sorted(per_rule):
        c = per_rule[code]
        out.append(f"| {code} | {c['true']} | {c['false']} | {c[UNJUDGED]} | {_precision(c)} |")
    out += ["", "| framework | true | false | precision |", "|---|---:|---:|---:|"]
    for fw in sorted(per_fw):
        c = per_fw[fw]
        out.append(f"| {fw} | {c['true']} | {c['false']} | {_precision(c)} |")
    out.append(f"\nprecision (judged findings): {_precision(totals)}")
    return "\n".join(out)


def _precision(c: Counter) -> str:
    judged = c["true"] + c["false"]
    return f"{c['true'] / judged:.2f}" if judged else "–"


def _line(x) -> str:
    if isinstance(x, Finding):
        return f"{x.package}: {x.path}:{x.line}:{x.column}: {x.code} {x.message}"
    return f"{x['package']}: {x['path']}:{x['line']}:{x['column']}: {x['code']} {x.get('message', '')}"


# --- main -------------------------------------------------------------------------------
def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", help="comma-separated names from the corpus (default: all)")
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("SCOPELINT_ECOSYSTEM_CACHE", DEFAULT_CACHE)),
                    help=f"downloads and extracted sources (default: {DEFAULT_CACHE.relative_to(HERE.parent)})")
    ap.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where ecosystem.{md,json} are written")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--update", action="store_true", help="rewrite the baseline (judgements kept, new rows unjudged)")
    ap.add_argument("--drop-lost", action="store_true", help="with --update: also drop vanished findings judged true")
    ap.add_argument("--scopelint", default=f"{sys.executable} -m scopelint",
                    help="the command that runs scopelint (default: this Python's)")
    args = ap.parse_args(argv)

    corpus = list(CORPUS)
    if args.packages:
        names = {n.strip() for n in args.packages.split(",") if n.strip()}
        unknown = names - {p.name for p in corpus}
        if unknown:
            print(f"ecosystem: not in the corpus: {', '.join(sorted(unknown))}", file=sys.stderr)
            return EXIT_ERROR
        corpus = [p for p in corpus if p.name in names]
    try:
        baseline = load_baseline(args.baseline)
    except (SetupError, ValueError, KeyError) as exc:
        print(f"ecosystem: bad baseline: {exc}", file=sys.stderr)
        return EXIT_ERROR

    t0 = time.perf_counter()
    results, findings, checked, skipped = [], [], [], []
    try:
        for pkg in corpus:
            root = fetch(pkg, args.cache)
            if root is None:
                skipped.append(f"{pkg.name}=={pkg.version} (not installed at that version)")
                continue
            files, lines = tree_size(root)
            found, secs = lint(pkg, root, args.jobs, args.scopelint.split())
            results.append({"package": pkg.name, "version": pkg.version, "framework": pkg.framework,
                            "files": files, "lines": lines, "seconds": secs, "findings": found})
            findings.extend(found)
            checked.append(pkg.name)
    except Unreachable as exc:
        print(f"ecosystem: the package index cannot be reached, nothing was checked: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except SetupError as exc:
        print(f"ecosystem: {exc}", file=sys.stderr)
        return EXIT_ERROR
    wall = time.perf_counter() - t0

    diff = compare(findings, baseline, checked)
    table = report(results, diff, wall)
    print(table)
    for title, items in (("appeared (unjudged: judge them in the baseline)", diff.appeared),
                         ("judged true, now missing (lost recall)", diff.lost),
                         ("judged false, now gone (fixed)", diff.fixed)):
        if items:
            print(f"\n{title}: {len(items)}")
            for x in items:
                print("  " + _line(x))
    pending = [f for f, r in diff.kept if r.get("verdict") not in VERDICTS]
    if pending:
        print(f"\nlisted but not yet judged: {len(pending)}")
        for f in pending:
            print("  " + _line(f))
    for s in skipped:
        print(f"\nskipped: {s}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ecosystem.md").write_text(table + "\n", encoding="utf-8")
    (args.out / "ecosystem.json").write_text(json.dumps(
        {"packages": [{**r, "findings": [dataclasses.asdict(f) for f in r["findings"]]} for r in results],
         "appeared": [dataclasses.asdict(f) for f in diff.appeared], "lost": diff.lost, "fixed": diff.fixed,
         "skipped": skipped, "wall_seconds": wall}, indent=1), encoding="utf-8")
    if args.update:
        write_baseline(args.baseline, updated_baseline(diff, baseline, checked, args.drop_lost))
        print(f"\nbaseline rewritten: {args.baseline}")
        return EXIT_OK
    status = "FAILED" if diff.failed else "ok"
    print(f"\necosystem check {status}: {len(findings)} findings, {len(diff.unjudged)} unjudged, "
          f"{len(diff.lost)} true findings lost, {len(diff.fixed)} false findings fixed, {wall:.1f} s")
    return EXIT_DIFF if diff.failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
