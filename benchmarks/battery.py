#!/usr/bin/env python3
"""The reliability battery of issue 24, re-run as one table: per area what was tried and
what failed.

    python benchmarks/battery.py --quick                     # a smoke run (a few minutes)
    python benchmarks/battery.py                             # the issue's sizes (hours on 2 cores)
    python benchmarks/battery.py --fuzz 16600 --fix-fuzz 2000 --truncations 20000
    python benchmarks/battery.py --quick --areas bad_input,cache,honest

Areas (``--areas``, comma-separated; default all):

``fuzz``        generated programs (the fixtures mutated: tokens deleted, duplicated,
                swapped or inserted, lines moved, random nesting, unicode, huge literals,
                odd indentation and line ends, truncation, bad bytes; some as ``.pyi``
                and notebooks) checked in batches by ``check --output-format json``.
                Failed: an internal error, a traceback, an exit status other than 0/1,
                output that is not a JSON array, or SL000 on a program CPython compiles.
``frameworks``  ``check`` over the installed torch and mxnet sources (copies of their
                ``.py`` files). Failed: SL000 on a file CPython compiles, an internal error.
``bad_input``   kinds of bad input (bytes, encodings, line ends, nesting, odd things on
                disk, notebooks, pyproject.toml, options), each in a project next to a
                good file. Failed: a traceback, a hang, an exit status INTERFACE.md does not
                give, the good file not checked, a passing summary after an internal error.
``cache``       4 concurrent runs sharing ``.scopelint_cache`` against ``--no-cache``;
                then N truncations/corruptions of cache entries, each read back (a miss or
                the entry's own result, never another), and every so often a whole run
                over the damaged cache compared with ``--no-cache``.
``fix_fuzz``    ``benchmarks/fuzz_fixes.py`` (fixes compile and converge) for N programs.
``scaling``     every shape of ``benchmarks/scaling.py`` (issue 24's, and issue 44's:
                notebooks, call chains, mutual recursion, class chains, training loops,
                the same code as a script) at 256k lines (``--quick``: 8k) and a quarter
                of that. Failed: CPU growth over n^1.2, over 1 GiB, or over the time limit.
``honest``      the issue's honest failures, each a subprocess with a timeout.
``pytests``     ``tests/test_verify_sandbox.py``, ``tests/test_verify_sandbox_hold.py`` (issue
                44's hostile programs, as root and as an unprivileged user: /dev, /proc,
                hostname, secrets, path sockets, seccomp, SIGTERM/SIGINT, a trace forged
                through gc) and ``tests/test_lsp_load.py`` (pytest).

Prints a markdown table ``| area | tried | failed | notes |`` and writes it with the
details to ``benchmarks/.out/battery.{md,json}`` (``--out``). Exit status 1 when an area
failed. Run it with the Python that has scopelint installed (and torch/mxnet for
``frameworks`` and ``pytests``). Linux only (FIFOs, ``/proc``, signals).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

TORCH_BAD = "import torch\nwith torch.no_grad:\n    pass\n"  # SL107 at 2:6
MX_BAD = "from mxnet import autograd\nwith autograd.pause():\n    pass\n"  # SL104 at 2:6
SIBLING = "good.py:2:6: SL107"
EXIT_CODES = {0, 1, 2}  # INTERFACE.md


def scopelint_cmd(*args: str) -> List[str]:
    return [sys.executable, "-m", "scopelint", *args]


class Proc:
    def __init__(self, rc: Optional[int], out: str, err: str, seconds: float):
        self.rc, self.out, self.err, self.seconds = rc, out, err, seconds

    @property
    def hung(self) -> bool:
        return self.rc is None


def unprivileged(cmd: List[str]) -> Optional[List[str]]:
    """``cmd`` run so that file permissions apply: as root, without the capabilities that
    bypass them (``setpriv``); None when that is not possible here."""
    if os.geteuid() != 0:
        return cmd
    setpriv = shutil.which("setpriv")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--", *cmd] if setpriv else None


def run(args: List[str], cwd, stdin: Optional[bytes] = None, timeout: float = 120, nobody: bool = False,
        env: Optional[dict] = None) -> Proc:
    """Run a command; rc None when it ran past ``timeout`` (its process group is killed).
    ``nobody``: with file permissions enforced (see ``unprivileged``)."""
    if nobody:
        args = unprivileged(args)
        if args is None:
            raise RuntimeError("cannot drop the privilege to read unreadable files (no setpriv)")
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        rc: Optional[int] = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = proc.communicate()
        rc = None
    return Proc(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.perf_counter() - start)


def write(root: Path, files: Dict[str, object]) -> None:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8", newline="")


def cpython_compiles(data: bytes, name: str = "<fuzz>") -> bool:
    """True when CPython compiles the bytes (as ``python file.py`` would read them) and
    they decode in their declared encoding: CPython 3.11 lets undecodable bytes in a
    comment through (3.12 does not), and INTERFACE.md makes a broken encoding SL000."""
    import io
    import tokenize
    import warnings

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, name, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


def internal_errors(err: str) -> List[str]:
    return [line for line in err.splitlines() if "internal error" in line and not line.startswith("scopelint: error:")]


def fixture_texts() -> List[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures").glob("SL*/*.py"))]


# =========================================================================================
# 1. fuzzed programs
# =========================================================================================
_POOL = (
    "(", ")", "[", "]", "{", "}", ":", ";", ",", ".", "=", "==", ":=", "+", "-", "*", "**", "/", "//", "@", "->",
    "\\", "#", "'", '"', '"""', "f'{", "}'", "\n", "\n    ", "\t", " ", "lambda:", "yield", "await", "async",
    "return", "with", "for", "in", "if", "else", "elif", "while", "try:", "except", "finally:", "def", "class",
    "import", "from", "as", "global", "nonlocal", "del", "not", "and", "or", "is", "None", "True", "...", "match",
    "case", "type", "print", "torch", "autograd", "no_grad()", "record()", ".backward()", ".detach()", "x", "_",
)
_UNICODE = ("ñ", "变量", "𝔘𝔫𝔦", "é", "ﬁ", "\u200d", "\u200b", "\u202e", "\u2028", "\u00a0", "😀", "Ω", "ǅ", "\u0301", "\ufeff")
_WRAPS = (
    "for _i in range(2):\n", "while x:\n", "if x:\n", "def f(x):\n", "async def g(x):\n", "class C:\n",
    "with torch.no_grad():\n", "with autograd.record():\n", "try:\n", "else:\n", "match x:\n    case 1:\n",
    "with open(p) as fh, torch.enable_grad():\n", "@decorator\ndef h():\n", "if (y := x):\n",
)


def _tokens(text: str) -> List[str]:
    return re.findall(r"\w+|[^\S\n]+|\n|.", text)


def _lines(text: str) -> List[str]:
    return text.splitlines(keepends=True) or [""]


def _m_tok_delete(rng, text, corpus):
    toks = _tokens(text)
    if toks:
        del toks[rng.randrange(len(toks))]
    return "".join(toks)


def _m_tok_duplicate(rng, text, corpus):
    toks = _tokens(text)
    if toks:
        i = rng.randrange(len(toks))
        toks.insert(i, toks[i] * rng.choice((1, 1, 2, 50)))
    return "".join(toks)


def _m_tok_swap(rng, text, corpus):
    toks = _tokens(text)
    if len(toks) > 2:
        i = rng.randrange(len(toks) - 1)
        j = min(len(toks) - 1, i + rng.randint(1, 5))
        toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks)


def _m_tok_insert(rng, text, corpus):
    toks = _tokens(text)
    toks.insert(rng.randrange(len(toks) + 1), rng.choice(_POOL))
    return "".join(toks)


def _m_line_delete(rng, text, corpus):
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def _m_line_duplicate(rng, text, corpus):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i:i] = [lines[i]] * rng.choice((1, 2, 200))
    return "".join(lines)


def _m_line_move(rng, text, corpus):
    lines = _lines(text)
    line = lines.pop(rng.randrange(len(lines)))
    lines.insert(rng.randrange(len(lines) + 1), line)
    return "".join(lines)


def _m_indent(rng, text, corpus):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    stripped = lines[i].lstrip(" \t")
    lines[i] = rng.choice(("", " ", "  ", "\t", "    \t", " " * rng.randint(1, 40), "\x0c")) + stripped
    return "".join(lines)


def _m_tabify(rng, text, corpus):
    return "".join(l.replace("    ", "\t", 1) if rng.random() < 0.5 else l for l in _lines(text))


def _m_nest(rng, text, corpus):
    depth = rng.choice((1, 2, 5, 20, 60, 110))
    prefix = ""
    for d in range(depth):
        wrap = rng.choice(_WRAPS)
        prefix += "".join("    " * d + w + "\n" for w in wrap.rstrip("\n").split("\n"))
        depth_extra = wrap.count("\n") - 1
        if depth_extra:
            prefix = prefix  # (the match/case wrap indents once more; the body below follows d)
    body = "".join("    " * depth + l if l.strip() else l for l in _lines(text))
    return prefix + body


def _m_splice(rng, text, corpus):
    other = _lines(rng.choice(corpus))
    lines = _lines(text)
    i = rng.randrange(len(lines) + 1)
    return "".join(lines[:i] + other + lines[i:])


def _m_unicode(rng, text, corpus):
    u = rng.choice(_UNICODE)
    choice = rng.random()
    if choice < 0.3:
        snippet = f"{u}x{u} = 1\n" if u.isidentifier() else f"s = '{u}'\n"
    elif choice < 0.6:
        snippet = f"# {u * rng.randint(1, 100)}\n"
    else:
        snippet = u
    toks = _tokens(text)
    toks.insert(rng.randrange(len(toks) + 1), snippet)
    return "".join(toks)


def _m_huge_literal(rng, text, corpus):
    kind = rng.randrange(6)
    if kind == 0:
        lit = "".join(rng.choice("0123456789") for _ in range(rng.choice((10, 4300, 5000))))
        lit = lit.lstrip("0") or "0"
    elif kind == 1:
        lit = repr("x" * rng.choice((1000, 100_000)))
    elif kind == 2:
        lit = "[" + ", ".join(str(i) for i in range(rng.choice((100, 20_000)))) + "]"
    elif kind == 3:
        d = rng.choice((50, 200, 2000))
        lit = "(" * d + "1" + ")" * d
    elif kind == 4:
        lit = " + ".join(["x"] * rng.choice((100, 5000)))
    else:
        lit = "f'" + "{" * rng.choice((1, 3, 30)) + "x" + "}" * rng.choice((1, 3, 30)) + "'"
    lines = _lines(text)
    lines.insert(rng.randrange(len(lines) + 1), f"big = {lit}\n")
    return "".join(lines)


def _m_truncate(rng, text, corpus):
    return text[: rng.randrange(len(text) + 1)]


def _m_line_ends(rng, text, corpus):
    style = rng.choice(("\r\n", "\r", "mixed"))
    if style != "mixed":
        return text.replace("\n", style)
    return "".join(l[:-1] + rng.choice(("\n", "\r\n", "\r")) if l.endswith("\n") else l for l in _lines(text))


def _m_comment(rng, text, corpus):
    c = rng.choice(("# noqa", "# noqa: SL1", "# noqa:", "# noqa: XX999", "# scopelint: skip-file", "# type: ignore",
                    "# -*- coding: latin-1 -*-", "# coding: no-such-codec", "#!/usr/bin/env python"))
    lines = _lines(text)
    i = rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines.insert(i, c + "\n")
    else:
        lines[i] = lines[i].rstrip("\r\n") + "  " + c + "\n"
    return "".join(lines)


MUTATORS = [_m_tok_delete, _m_tok_duplicate, _m_tok_swap, _m_tok_insert, _m_tok_insert, _m_line_delete,
            _m_line_duplicate, _m_line_move, _m_indent, _m_tabify, _m_nest, _m_splice, _m_unicode,
            _m_huge_literal, _m_truncate, _m_line_ends, _m_comment]


def _bytes_mutation(rng, data: bytes) -> bytes:
    kind = rng.randrange(8)
    i = rng.randrange(len(data) + 1)
    if kind == 0:
        return data[:i] + b"\0" + data[i:]
    if kind == 1:
        return data[:i] + bytes([rng.randrange(128, 256)]) + data[i:]
    if kind == 2:
        return b"\xef\xbb\xbf" + data
    if kind == 3:
        return data[:i] + rng.choice((b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82")) + data[i:]
    if kind == 4:
        return b"# -*- coding: latin-1 -*-\n" + data.decode("utf-8", "replace").encode("latin-1", "replace")
    if kind == 5:
        return data[:i]  # (may cut a UTF-8 sequence)
    if kind == 6:
        return b"\xff\xfe" + data.decode("utf-8", "replace").encode("utf-16-le", "replace")
    return bytes(b ^ (1 << rng.randrange(8)) if rng.random() < 0.01 else b for b in data)


def fuzz_program(rng: random.Random, corpus: List[str]) -> bytes:
    text = rng.choice(corpus)
    for _ in range(rng.choice((1, 1, 2, 3, 5))):
        text = rng.choice(MUTATORS)(rng, text, corpus)
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.08:
        data = _bytes_mutation(rng, data)
    return data


def _notebook(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8", "replace")
    cells = [c for c in re.split(r"\n\s*\n", text) if c] or [""]
    if rng.random() < 0.3:
        cells.insert(0, rng.choice(("%matplotlib inline", "!pip install torch", "%%time\nx = 1", "?torch")))
    nb = {"cells": [{"cell_type": rng.choice(("code", "code", "code", "markdown")), "metadata": {},
                     "source": c.splitlines(keepends=True), "outputs": [], "execution_count": None} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    out = json.dumps(nb).encode()
    return out[: rng.randrange(len(out))] if rng.random() < 0.05 else out


def area_fuzz(args, tmp: Path) -> dict:
    corpus = fixture_texts()
    total, failed, batches, false_sl000 = args.fuzz, 0, 0, 0
    details: List[str] = []
    kinds = {"py": 0, "pyi": 0, "ipynb": 0}
    fail_dir = args.out_dir / "battery-failures"
    k = 0
    while k < total:
        n = min(args.fuzz_batch, total - k)
        batch = tmp / f"fuzz{batches}"
        batch.mkdir()
        programs: Dict[str, bytes] = {}
        for j in range(k, k + n):
            rng = random.Random(f"fuzz:{args.seed}:{j}")
            data = fuzz_program(rng, corpus)
            r = rng.random()
            ext = "ipynb" if r < 0.04 else "pyi" if r < 0.08 else "py"
            if ext == "ipynb":
                data = _notebook(rng, data)
            kinds[ext] += 1
            name = f"p{j}.{ext}"
            (batch / name).write_bytes(data)
            programs[name] = data
        jobs = ["--jobs", str(args.jobs)]
        if batches % 4 == 3:  # every fourth batch: one process, with the cache (filled by that run)
            proc = run(scopelint_cmd("check", "--output-format", "json", "--jobs", "1", "."), batch, timeout=args.batch_timeout)
        else:
            proc = run(scopelint_cmd("check", "--output-format", "json", "--no-cache", *jobs, "."), batch, timeout=args.batch_timeout)
        batches += 1
        problems: List[str] = []
        bad_files = set()
        for line in internal_errors(proc.err):
            bad_files.add(line.split(":", 1)[0])
            problems.append(line[:300])
        if proc.hung:
            problems.append(f"batch {batches - 1}: no answer in {args.batch_timeout} s")
        elif proc.rc not in (0, 1) and not bad_files:
            problems.append(f"batch {batches - 1}: exit {proc.rc}: {proc.err.strip()[-300:]}")
        if "Traceback" in proc.err:
            problems.append(f"batch {batches - 1}: a traceback: {proc.err.strip()[-500:]}")
        try:
            findings = json.loads(proc.out) if not proc.hung else []
            if not isinstance(findings, list):
                raise ValueError("not an array")
        except ValueError as exc:
            findings = []
            problems.append(f"batch {batches - 1}: the JSON output does not load: {exc}")
        for f in findings:
            name = os.path.basename(f.get("filename", ""))
            loc = f.get("location") or {}
            if f.get("code") == "SL000" and name.endswith(".py") and name in programs:
                if cpython_compiles(programs[name], name):
                    false_sl000 += 1
                    bad_files.add(name)
                    problems.append(f"{name}: SL000 on a program CPython compiles: {f.get('message')}")
            if not (isinstance(loc.get("row"), int) and loc["row"] >= 1 and isinstance(loc.get("column"), int) and loc["column"] >= 1):
                bad_files.add(name)
                problems.append(f"{name}: a finding without a 1-based position: {f}")
        if problems:
            failed += max(1, len(bad_files))
            details.extend(problems[:20])
            fail_dir.mkdir(parents=True, exist_ok=True)
            for name in bad_files or programs:
                if name in programs:
                    (fail_dir / f"seed{args.seed}_{name}").write_bytes(programs[name])
        shutil.rmtree(batch, ignore_errors=True)
        k += n
        if args.verbose:
            print(f"  fuzz: {k}/{total} programs, {failed} failed", file=sys.stderr, flush=True)
    notes = (f"{kinds['py']} .py, {kinds['pyi']} .pyi, {kinds['ipynb']} notebooks in {batches} runs of "
             f"`check --output-format json`; seed {args.seed}; false SL000: {false_sl000}")
    return {"tried": total, "failed": failed, "notes": notes, "details": details}


# =========================================================================================
# 2. framework sources
# =========================================================================================
def _site_packages() -> Optional[Path]:
    for entry in sys.path:
        if entry.endswith("site-packages") and os.path.isdir(os.path.join(entry, "torch")):
            return Path(entry)
    return None


def _copy_py(src: Path, dst: Path, every: int = 1) -> int:
    n = 0
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                n += 1
                if (n - 1) % every:
                    continue
                target = dst / os.path.relpath(os.path.join(dirpath, name), src)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(os.path.join(dirpath, name), target)
    return sum(1 for _ in dst.rglob("*.py"))


def area_frameworks(args, tmp: Path) -> dict:
    site = _site_packages()
    tried = failed = 0
    details: List[str] = []
    notes = []
    for tree in args.trees.split(","):
        src = Path("/tmp/trees") / tree if tree == "torch" and Path("/tmp/trees/torch").is_dir() else (site / tree if site else None)
        if src is None or not src.is_dir():
            details.append(f"{tree}: not installed")
            notes.append(f"{tree}: not installed")
            failed += 1
            continue
        # (Checked from the folder above, by a name no module has: ``python -m`` puts the
        # working directory first on sys.path, and the trees hold ``concurrent/``, ``_ctypes/``.)
        dst = tmp / f"{tree}_sources"
        every = args.tree_every if args.quick else 1
        files = _copy_py(src, dst, every)
        lines = sum(p.read_bytes().count(b"\n") for p in dst.rglob("*.py"))
        proc = run(scopelint_cmd("check", "--output-format", "json", "--no-cache", "--exit-zero", "--jobs", str(args.jobs), dst.name),
                   tmp, timeout=args.tree_timeout)
        tried += files
        problems = [l[:300] for l in internal_errors(proc.err)]
        if proc.hung or proc.rc not in (0, 1) and not problems or "Traceback" in proc.err:
            problems.append(f"{tree}: exit {proc.rc}: {proc.err.strip()[-300:]}")
        sl000 = compiled = 0
        try:
            findings = json.loads(proc.out)
        except ValueError:
            findings = []
            problems.append(f"{tree}: the JSON output does not load")
        for f in findings:
            if f["code"] == "SL000":
                sl000 += 1
                path = Path(f["filename"])
                path = path if path.is_absolute() else tmp / path
                if path.suffix == ".py" and cpython_compiles(path.read_bytes(), str(path)):
                    compiled += 1
                    problems.append(f"{path.relative_to(dst)}: SL000 on a file CPython compiles: {f['message']}")
        failed += len(problems)
        details.extend(problems)
        notes.append(f"{tree}: {files} files, {lines:,} lines, {len(findings)} findings, {sl000} SL000 "
                     f"({sl000 - compiled} on files CPython rejects too), {proc.seconds:.0f} s")
    return {"tried": tried, "failed": failed, "notes": "; ".join(notes), "details": details}


# =========================================================================================
# 3. bad input kinds
# =========================================================================================
class Kind:
    def __init__(self, name: str, files: Optional[Dict[str, object]] = None, args: Optional[List[str]] = None,
                 expect=(1,), sibling: bool = True, setup: Optional[Callable[[Path], None]] = None,
                 stdin: Optional[bytes] = None, nobody: bool = False, check: Optional[Callable[[Proc], Optional[str]]] = None,
                 stderr: bool = True):
        self.name, self.files, self.args, self.expect, self.sibling = name, files or {}, args, set(expect), sibling
        self.setup, self.stdin, self.nobody, self.check, self.stderr = setup, stdin, nobody, check, stderr


def _needs(*words: str) -> Callable[[Proc], Optional[str]]:
    def check(p: Proc) -> Optional[str]:
        text = p.out + p.err
        missing = [w for w in words if w not in text]
        return f"the output does not say {missing}" if missing else None
    return check


def _fifo(name: str) -> Callable[[Path], None]:
    return lambda root: os.mkfifo(root / name)


def _symlink(name: str, target: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / name)
    return setup


def _socket(root: Path) -> None:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(root / "sock.py"))
    s.close()


def _sparse(root: Path) -> None:
    with open(root / "huge.py", "wb") as fh:
        fh.write(b"import torch\n")
        fh.truncate(10 * 1024 * 1024 + 1)


def _chmod(name: str, mode: int, content=None) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        p = root / name
        if content is not None:
            write(root, {name: content})
        p.chmod(mode)
    return setup


def _read_only(name: str, content: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        _unchanged.root = root
        p = root / name
        p.write_text(content)
        p.chmod(0o444)
    return setup


def _unchanged(name: str, content: str, *words: str) -> Callable[[Proc], Optional[str]]:
    """The file ``_read_only`` made is as it was, and the output says ``words``."""
    def check(p: Proc) -> Optional[str]:
        root = getattr(_unchanged, "root", None)
        if root is not None and (root / name).read_text() != content:
            return f"{name} was rewritten"
        return _needs(*words)(p)
    return check


def _deep_dirs(root: Path) -> None:
    p = root
    for i in range(60):
        p = p / ("d" * 30)
    p.mkdir(parents=True)
    (p / "deep.py").write_text(MX_BAD)


def _all(*setups):
    def setup(root: Path) -> None:
        for s in setups:
            s(root)
    return setup


def bad_input_kinds() -> List[Kind]:
    K = Kind
    nb = lambda text: {"nb.ipynb": text}
    deep = lambda s: TORCH_BAD + s
    kinds = [
        # --- bytes and encodings
        K("binary bytes", {"bad.py": bytes(range(256)) * 4}, check=_needs("bad.py", "binary")),
        K("NUL byte mid-file", {"bad.py": b"import torch\nx = 1\0\n"}, check=_needs("bad.py", "SL000")),
        K("NUL after 1000 lines", {"bad.py": b"import torch\n" * 1000 + b"\0"}, check=_needs("bad.py", "SL000")),
        K("only NUL bytes", {"bad.py": b"\0" * 100}, check=_needs("bad.py", "SL000")),
        K("invalid UTF-8 byte", {"bad.py": b'import torch\ns = "\xff\xfe"\n'}, check=_needs("bad.py", "SL000")),
        K("truncated UTF-8 sequence at EOF", {"bad.py": b"import torch\ns = 1 # \xe2\x82"}, check=_needs("bad.py", "SL000")),
        K("overlong UTF-8", {"bad.py": b"import torch\ns = '\xc0\xaf'\n"}, check=_needs("bad.py", "SL000")),
        K("UTF-8-encoded surrogate", {"bad.py": b"import torch\ns = '\xed\xa0\x80'\n"}, check=_needs("bad.py", "SL000")),
        K("code point over U+10FFFF", {"bad.py": b"import torch\ns = '\xf4\x90\x80\x80'\n"}, check=_needs("bad.py", "SL000")),
        K("latin-1 coding cookie", {"bad.py": b"# -*- coding: latin-1 -*-\nimport torch\ns = 'caf\xe9'\nwith torch.no_grad:\n    pass\n"},
          check=_needs("bad.py:4:6: SL107")),
        K("cookie on line 2", {"bad.py": b"#!/usr/bin/python\n# coding: cp1252\nimport torch\ns = '\x80'\n"}),
        K("cookie on line 3 (ignored)", {"bad.py": b"\n\n# coding: latin-1\ns = '\xe9'\n"}, check=_needs("bad.py", "SL000")),
        K("unknown codec cookie", {"bad.py": b"# coding: no-such-codec\nimport torch\n"}, check=_needs("no-such-codec")),
        K("utf-16 cookie on ASCII", {"bad.py": b"# coding: utf-16\nimport torch\n"}),
        K("BOM and a latin-1 cookie", {"bad.py": b"\xef\xbb\xbf# coding: latin-1\nimport torch\n"}, check=_needs("bad.py", "SL000")),
        K("BOM", {"bad.py": b"\xef\xbb\xbfimport torch\nwith torch.no_grad:\n    pass\n"}, check=_needs("bad.py:2:6: SL107")),
        K("two BOMs", {"bad.py": b"\xef\xbb\xbf\xef\xbb\xbfimport torch\n"}, check=_needs("bad.py", "SL000")),
        K("BOM only", {"bad.py": b"\xef\xbb\xbf"}),
        K("UTF-16 LE with BOM", {"bad.py": "import torch\nx = 1\n".encode("utf-16")}, check=_needs("bad.py", "SL000")),
        K("UTF-32 with BOM", {"bad.py": "import torch\n".encode("utf-32")}, check=_needs("bad.py", "SL000")),
        K("rot13 codec cookie", {"bad.py": b"# coding: rot13\nvzcbeg gbepu\n"}),
        # --- line ends and whitespace
        K("CRLF", {"bad.py": b"import torch\r\nwith torch.no_grad:\r\n    pass\r\n"}, check=_needs("bad.py:2:6: SL107")),
        K("CR only", {"bad.py": b"import torch\rwith torch.no_grad:\r    pass\r"}),
        K("mixed CR, LF, CRLF", {"bad.py": b"import torch\r\nx = 1\ry = 2\nwith torch.no_grad:\r\n    pass\r"}),
        K("no newline at EOF", {"bad.py": "import torch\nwith torch.no_grad:\n    pass"}, check=_needs("bad.py:2:6: SL107")),
        K("backslash at EOF", {"bad.py": "import torch\nx = 1 + \\"}, check=_needs("bad.py", "SL000")),
        K("backslash-newline at EOF", {"bad.py": "import torch\nx = 1\n\\\n"}, check=_needs("bad.py", "SL000")),
        K("form feeds", {"bad.py": "import torch\n\x0c\n\x0cx = 1\nwith torch.no_grad:\n  \x0c  pass\n"}),
        K("vertical tab", {"bad.py": "import torch\nx = 1\x0b\n"}),
        K("U+2028 in a string", {"bad.py": "import torch\ns = 'a\u2028b'\nwith torch.no_grad:\n    pass\n"},
          check=_needs("bad.py:3:6: SL107")),
        K("U+2028 in code", {"bad.py": "import torch\nx = 1\u2028y = 2\n"}),
        K("inconsistent tabs (TabError)", {"bad.py": "import torch\nif x:\n\tif y:\n        pass\n"}, check=_needs("bad.py", "SL000")),
        K("unexpected indent", {"bad.py": "import torch\n  x = 1\n"}, check=_needs("bad.py", "SL000")),
        K("unindent mismatch", {"bad.py": "import torch\nif x:\n    a = 1\n  b = 2\n"}, check=_needs("bad.py", "SL000")),
        K("expected an indented block", {"bad.py": "import torch\nif True:\nx = 1\n"}, check=_needs("bad.py", "SL000")),
        K("101 levels of indentation", {"bad.py": "import torch\n" + "".join(" " * i + "if x:\n" for i in range(101)) + " " * 101 + "pass\n"}),
        K("non-breaking space as indentation", {"bad.py": "import torch\nif x:\n\u00a0\u00a0\u00a0\u00a0pass\n"}, check=_needs("bad.py", "SL000")),
        # --- size
        K("one 1 MB line", {"bad.py": "import torch\nx = [" + "1, " * 350_000 + "]\n"}),
        K("a 2 MB string", {"bad.py": "import torch\ns = '" + "x" * 2_000_000 + "'\n"}),
        K("a 5000-digit int", {"bad.py": "import torch\nn = " + "7" * 5000 + "\n"}),
        K("a 100k-character name", {"bad.py": "import torch\n" + "a" * 100_000 + " = 1\n"}),
        K("200k one-line statements", {"bad.py": "import torch\n" + "x = 1\n" * 200_000}),
        K("a file over 10 MiB (sparse)", setup=_sparse, check=_needs("huge.py", "too large")),
        K("10k decorators", {"bad.py": "import torch\n" + "@d\n" * 10_000 + "def f():\n    pass\n"}),
        # --- nesting
        K("5000 nested parentheses", {"bad.py": deep("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")}),
        K("3000 nested lists", {"bad.py": deep("x = " + "[" * 3000 + "]" * 3000 + "\n")}),
        K("3000 nested dicts", {"bad.py": deep("x = " + "{1: " * 3000 + "1" + "}" * 3000 + "\n")}),
        K("20000 nots", {"bad.py": deep("x = " + "not " * 20000 + "1\n")}),
        K("50000 attributes", {"bad.py": deep("x = a" + ".b" * 50000 + "\n")}),
        K("20000 elifs", {"bad.py": deep("if x:\n    pass\n" + "elif x:\n    pass\n" * 20000)}),
        K("10000 ands", {"bad.py": deep("x = 1" + " and 1" * 10000 + "\n")}),
        K("100000 pluses", {"bad.py": deep("x = 1" + " + 1" * 100_000 + "\n")}),
        K("10000 unary minuses", {"bad.py": deep("x = " + "-" * 10000 + "1\n")}),
        K("3000 nested calls", {"bad.py": deep("x = " + "f(" * 3000 + ")" * 3000 + "\n")}),
        K("3000 nested subscripts", {"bad.py": deep("x = " + "a[" * 3000 + "0" + "]" * 3000 + "\n")}),
        K("1000 chained lambdas", {"bad.py": deep("f = " + "lambda: " * 1000 + "1\n")}),
        K("200 nested f-strings", {"bad.py": deep("x = " + "f'{" * 200 + "1" + "}'" * 200 + "\n")}),
        K("25 nested for loops", {"bad.py": deep("".join("    " * i + f"for i{i} in x:\n" for i in range(25)) + "    " * 25 + "pass\n")}),
        K("90 nested functions", {"bad.py": deep("".join("    " * i + f"def f{i}():\n" for i in range(90)) + "    " * 90 + "pass\n")}),
        K("90 nested with blocks", {"bad.py": deep("".join("    " * i + "with torch.no_grad():\n" for i in range(90)) + "    " * 90 + "pass\n")}),
        K("2000 nested ternaries", {"bad.py": deep("x = " + "1 if y else " * 2000 + "0\n")}),
        K("1000 chained comparisons", {"bad.py": deep("x = 1" + " < 1" * 1000 + "\n")}),
        # --- empty and trivial
        K("empty file", {"bad.py": ""}),
        K("blank lines only", {"bad.py": "\n\n   \n\t\n"}),
        K("comments only", {"bad.py": "# a\n# b\n"}),
        K("a lone backslash-newline", {"bad.py": "\\\n"}, check=_needs("bad.py", "SL000")),
        # --- syntax
        K("unclosed parenthesis", {"bad.py": "import torch\nx = (1,\ny = 2\n"}, check=_needs("bad.py:2:5: SL000")),
        K("unterminated triple quote", {"bad.py": 'import torch\ns = """abc\n'}, check=_needs("bad.py", "SL000")),
        K("unterminated string", {"bad.py": "import torch\nx = 'abc\n"}, check=_needs("bad.py:2:5: SL000")),
        K("Python 2 print", {"bad.py": "import torch\nprint 'x'\n"}, check=_needs("bad.py", "SL000")),
        K("stray closing bracket", {"bad.py": "import torch\nx = 1)\n"}, check=_needs("bad.py", "SL000")),
        K("invalid assignment target", {"bad.py": "import torch\nf() = 1\n"}, check=_needs("bad.py", "SL000")),
        K("return outside a function", {"bad.py": "import torch\nreturn 1\n"}),
        K("await outside async", {"bad.py": "import torch\nawait x\n"}),
        K("nonlocal at module level", {"bad.py": "import torch\nnonlocal x\n"}),
        K("duplicate argument", {"bad.py": "import torch\ndef f(a, a):\n    pass\n"}),
        K("yield outside a function", {"bad.py": "import torch\nyield 1\n"}),
        K("invalid escape in bytes", {"bad.py": "import torch\nb = b'\\q\\N'\n"}),
        K("lone surrogate escape", {"bad.py": "import torch\ns = '\\ud800'\nwith torch.no_grad:\n    pass\n"}, check=_needs("bad.py:3:6: SL107")),
        K("invalid identifier character", {"bad.py": "import torch\n\u20ac = 1\n"}, check=_needs("bad.py", "SL000")),
        K("non-ASCII identifiers", {"bad.py": "import torch\nvariable\u00e9 = torch.ones(1)\n\u53d8 = 1\nwith torch.no_grad:\n    pass\n"},
          check=_needs("bad.py:4:6: SL107")),
        K("zero-width joiner in a name", {"bad.py": "import torch\na\u200db = 1\n"}, check=_needs("bad.py", "SL000")),
        K("right-to-left override in a comment", {"bad.py": "import torch\n# \u202e evil\nwith torch.no_grad:\n    pass\n"},
          check=_needs("bad.py:3:6: SL107")),
        K("PEP 695 and 701 syntax", {"bad.py": "import torch\ntype A = list[int]\ndef f[T](x: T) -> T:\n    return f'{x!r:{'>'}10}'\n"}),
        K("match statement", {"bad.py": "import torch\nmatch x:\n    case [1, *r] if r:\n        pass\n    case _:\n        pass\n"}),
        K("syntax error in a .pyi", {"bad.pyi": "def f(:\n"}, check=_needs("bad.pyi", "SL000")),
        K("binary .pyi", {"bad.pyi": bytes(range(256))}, check=_needs("bad.pyi", "binary")),
        K("skip-file then binary", {"bad.py": b"# scopelint: skip-file\n" + bytes(range(256))}),
        K("odd noqa comments", {"bad.py": "import torch\nwith torch.no_grad:  # noqa:\n    pass\nwith torch.no_grad:  # noqa: XX999, ,SL\n    pass\n"}),
        # --- odd things on disk
        K("directory named x.py", {"x.py/inner.py": MX_BAD}, check=_needs("inner.py:2:6: SL104")),
        K("dangling symlink", setup=_symlink("dangling.py", "missing.py"), check=_needs("dangling.py", "SL000")),
        K("symlink loop", setup=_all(_symlink("a.py", "b.py"), _symlink("b.py", "a.py"))),
        K("self-referencing symlink", setup=_symlink("self.py", "self.py")),
        K("folder symlink cycle", setup=_all(lambda r: (r / "sub").mkdir(), _symlink("sub/up", ".."))),
        K("FIFO named x.py", setup=_fifo("x.py"), check=_needs("x.py", "not a regular file")),
        K("FIFO named on the command line", setup=_fifo("x.py"), args=["x.py", "good.py"], check=_needs("x.py", "not a regular file")),
        K("UNIX socket named sock.py", setup=_socket),
        K("symlink to /dev/zero", setup=_symlink("zero.py", "/dev/zero")),
        K("symlink to /dev/null", setup=_symlink("null.py", "/dev/null")),
        K("unreadable file", setup=_chmod("secret.py", 0, TORCH_BAD), nobody=True, check=_needs("secret.py", "SL000")),
        K("unreadable folder", setup=_all(lambda r: write(r, {"locked/inner.py": TORCH_BAD}), _chmod("locked", 0)),
          nobody=True, check=_needs("locked", "cannot read folder")),
        K("untraversable folder (r, no x)", setup=_all(lambda r: write(r, {"noexec/inner.py": TORCH_BAD}), _chmod("noexec", 0o444)),
          nobody=True),
        K("unreadable file named on the command line", setup=_chmod("secret.py", 0, TORCH_BAD), nobody=True,
          args=["secret.py", "good.py"], check=_needs("secret.py", "SL000")),
        K("newline in a file name", {"a\nb.py": MX_BAD}),
        K("non-UTF-8 file name", setup=lambda r: open(os.path.join(os.fsencode(r), b"\xff\xfe.py"), "wb").write(MX_BAD.encode())),
        K("spaces and unicode in a name", {"caf\u00e9 \U0001f600 x.py": MX_BAD}, check=_needs("SL104")),
        K("name starting with a dash", {"-x.py": MX_BAD}),
        K("path 60 folders deep", setup=_deep_dirs, check=_needs("deep.py:2:6: SL104")),
        K("missing path and a good one", args=["missing.py", "good.py"], expect=(1, 2), check=_needs("missing.py")),
        K("only a missing path", args=["missing.py"], expect=(1, 2), sibling=False, check=_needs("missing.py")),
        K("empty string as path", args=["", "good.py"], expect=(1, 2)),
        K("file with a .txt suffix named", {"notes.txt": TORCH_BAD}, args=["notes.txt", "good.py"]),
        K("binary on stdin", args=["-"], stdin=bytes(range(256)), sibling=False, expect=(1,), check=_needs("SL000")),
        K("invalid UTF-8 on stdin", args=["--stdin-filename", "s.py", "-"], stdin=b"x = '\xff'\n", sibling=False, check=_needs("SL000")),
        K("empty stdin", args=["-"], stdin=b"", sibling=False, expect=(0,)),
        K("odd --stdin-filename", args=["--stdin-filename", "../../\u00e9\n.ipynb", "-"], stdin=TORCH_BAD.encode(), sibling=False, expect=(1, 2)),
        K("stdin and files together", args=["-", "good.py"], stdin=MX_BAD.encode(), check=_needs("SL104")),
        # --- notebooks
        K("notebook: invalid JSON", nb("{not json"), check=_needs("nb.ipynb", "SL000")),
        K("notebook: a JSON list", nb("[1, 2]"), check=_needs("nb.ipynb", "SL000")),
        K("notebook: cells not a list", nb('{"cells": 3}'), check=_needs("nb.ipynb", "SL000")),
        K("notebook: 100k-deep JSON", nb("[" * 100000 + "]" * 100000), check=_needs("nb.ipynb", "SL000")),
        K("notebook: empty", nb("")),
        K("notebook: source a number", nb('{"cells": [{"cell_type": "code", "source": 3}]}')),
        K("notebook: source list of non-strings", nb('{"cells": [{"cell_type": "code", "source": [1, null, {}]}]}')),
        K("notebook: no cell_type", nb('{"cells": [{"source": "import torch"}]}')),
        K("notebook: source null", nb('{"cells": [{"cell_type": "code", "source": null}]}')),
        K("notebook: cell a string", nb('{"cells": ["import torch"]}')),
        K("notebook: binary", {"nb.ipynb": bytes(range(256))}, check=_needs("nb.ipynb")),
        K("notebook: invalid UTF-8", {"nb.ipynb": b'{"cells": [{"cell_type": "code", "source": "x = \'\xff\'"}]}'}),
        K("notebook: nbformat 3 worksheets", nb('{"worksheets": [{"cells": [{"cell_type": "code", "input": "import torch"}]}], "nbformat": 3}')),
        K("notebook: magics and a syntax error", nb(json.dumps({"cells": [{"cell_type": "code", "source": "%time x = 1\n!ls\ndef f(:\n"}]})),
          check=_needs("nb.ipynb", "SL000")),
        K("notebook: NaN and huge numbers", nb('{"cells": [], "x": NaN, "y": 1e999999, "z": ' + "9" * 5000 + "}")),
        # --- pyproject.toml and other configuration
        K("pyproject: not UTF-8", {"pyproject.toml": b'[tool.scopelint]\nselect = ["SL1"]\n# caf\xe9\n'}, expect=(2,), sibling=False,
          check=_needs("pyproject.toml")),
        K("pyproject: invalid TOML", {"pyproject.toml": "[tool.scopelint\nselect = \n"}, expect=(2,), sibling=False, check=_needs("pyproject.toml")),
        K("pyproject: unknown key", {"pyproject.toml": "[tool.scopelint]\nfrobnicate = 1\n"}, expect=(2,), sibling=False, check=_needs("frobnicate")),
        K("pyproject: unknown code", {"pyproject.toml": '[tool.scopelint]\nselect = ["SL999"]\n'}, expect=(2,), sibling=False, check=_needs("SL999")),
        K("pyproject: select a string", {"pyproject.toml": '[tool.scopelint]\nselect = "SL1"\n'}, expect=(1, 2)),
        K("pyproject: select a number", {"pyproject.toml": "[tool.scopelint]\nselect = 3\n"}, expect=(2,), sibling=False, check=_needs("select")),
        K("pyproject: tool.scopelint not a table", {"pyproject.toml": "[tool]\nscopelint = 3\n"}, expect=(2,), sibling=False),
        K("pyproject: per-file-ignores a list", {"pyproject.toml": '[tool.scopelint]\nper-file-ignores = ["x"]\n'}, expect=(2,), sibling=False),
        K("pyproject: bad severity", {"pyproject.toml": '[tool.scopelint.severity]\nSL107 = "catastrophic"\n'}, expect=(2,), sibling=False),
        K("pyproject: invalid exclude glob", {"pyproject.toml": '[tool.scopelint]\nexclude = ["[", "a[b"]\n'}, expect=(1, 2)),
        K("pyproject: BOM", {"pyproject.toml": b"\xef\xbb\xbf[tool.scopelint]\n"}, expect=(1, 2)),
        K("pyproject: tool = 3", {"pyproject.toml": "tool = 3\n"}, expect=(2,), sibling=False, check=_needs("tool")),
        K("--config file: tool a string", {"cfg.toml": 'tool = "x"\n'}, args=["--config", "cfg.toml", "."], expect=(2,), sibling=False),
        K("--config: 3000-deep TOML", args=["--config", "select = " + "[" * 3000 + "]" * 3000, "."], expect=(2,), sibling=False),
        K("pyproject: binary", {"pyproject.toml": bytes(range(256))}, expect=(2,), sibling=False),
        K("pyproject: empty", {"pyproject.toml": ""}),
        K("pyproject: a folder", setup=lambda r: (r / "pyproject.toml").mkdir(), expect=(1, 2)),
        K("pyproject: a FIFO", setup=_fifo("pyproject.toml"), expect=(1, 2)),
        # issue 44
        K("--config: a FIFO", setup=_fifo("cfg.toml"), args=["--config", "cfg.toml", "."], expect=(2,),
          check=_needs("cfg.toml", "a FIFO, not a regular file")),
        K("Python 2 `except X, e:`", {"bad.py": "import torch\ntry:\n    pass\nexcept ValueError, e:\n    pass\n"},
          check=_needs("bad.py:4:8: SL000")),
        K("a json.py in the working folder (python -m)", {"json.py": "raise SystemExit('the working folder was imported')\n"},
          check=_needs(SIBLING)),
        K("--fix on a read-only file", setup=_read_only("ro.py", TORCH_BAD), args=["--fix", "ro.py", "good.py"], expect=(2,),
          sibling=False, check=_unchanged("ro.py", TORCH_BAD, "read-only")),
        K("pyproject: unreadable", setup=_chmod("pyproject.toml", 0, "[tool.scopelint]\n"), nobody=True, expect=(1, 2)),
        K("pyproject: 10k-deep arrays", {"pyproject.toml": "[tool.x]\na = " + "[" * 10000 + "]" * 10000 + "\n"}, expect=(1, 2)),
        K("pyproject: inference-functions not strings", {"pyproject.toml": "[tool.scopelint]\ninference-functions = [1, {}]\n"}, expect=(2,), sibling=False),
        K(".gitignore: binary", {".gitignore": bytes(range(256))}),
        K(".gitignore: a FIFO", setup=_fifo(".gitignore")),
        K(".gitignore: odd patterns", {".gitignore": "[\n!\n\\\n/\n**/\n"}),
        K("--config: missing file", args=["--config", "nope.toml", "."], expect=(2,), sibling=False, check=_needs("nope.toml")),
        K("--config: a folder", setup=lambda r: (r / "cfg").mkdir(), args=["--config", "cfg", "."], expect=(2,), sibling=False),
        K("--config: bad KEY=VALUE", args=["--config", "select=[", "."], expect=(2,), sibling=False),
        K("--config: unknown key", args=["--config", "frob = 1", "."], expect=(2,), sibling=False, check=_needs("frob")),
        # --- options
        K("--select an unknown code", args=["--select", "XYZ", "."], expect=(2,), sibling=False),
        K("--select empty", args=["--select", "", "."], expect=(0, 1, 2), sibling=False),
        K("--ignore an unknown code", args=["--ignore", "SL9999", "."], expect=(2,), sibling=False),
        K("--jobs 0", args=["--jobs", "0", "."], expect=(1, 2), sibling=False),
        K("--jobs -1", args=["--jobs", "-1", "."], expect=(1, 2), sibling=False),
        K("--jobs abc", args=["--jobs", "abc", "."], expect=(2,), sibling=False),
        K("--jobs 10**9", args=["--jobs", "1000000000", "."], expect=(1, 2), sibling=False),
        K("--output-format nope", args=["--output-format", "nope", "."], expect=(2,), sibling=False),
        K("unknown option", args=["--frobnicate", "."], expect=(2,), sibling=False),
        K("--per-file-ignores without a colon", args=["--per-file-ignores", "oops", "."], expect=(2,), sibling=False),
        K("--device bogus", args=["--verify", "--device", "tpu", "."], expect=(2,), sibling=False),
        K("--output-file in a missing folder", args=["-o", "no/such/dir/out.txt", "."], expect=(1, 2), sibling=False),
        K("--output-file a folder", setup=lambda r: (r / "outdir").mkdir(), args=["-o", "outdir", "."], expect=(2,), sibling=False),
    ]
    top = [  # not `check`: other commands, no project
        K("no command", args=[], expect=(2,), sibling=False, stderr=False, check=_needs("usage")),
        K("unknown command", args=["frob"], expect=(2,), sibling=False),
        K("rule: unknown code", args=["rule", "SL999"], expect=(2,), sibling=False),
        K("rule: no code", args=["rule"], expect=(0, 2), sibling=False),
        K("verify: missing path", args=["verify", "missing.py"], expect=(1, 2), sibling=False),
    ]
    for k in top:
        k.top = True
    return kinds + top


def _run_kind(kind: Kind, root: Path, mode: List[str], timeout: float) -> Optional[str]:
    write(root, {"good.py": TORCH_BAD})
    write(root, kind.files)
    if kind.setup:
        kind.setup(root)
    if getattr(kind, "top", False):
        cmd = scopelint_cmd(*kind.args)
    else:
        cmd = scopelint_cmd("check", "--output-format", "concise", *mode, *(kind.args if kind.args is not None else ["."]))
    if kind.nobody and "--no-cache" not in cmd and not getattr(kind, "top", False):
        cmd.insert(cmd.index("check") + 1, "--no-cache")  # (the plain user cannot write the cache)
    p = run(cmd, root, stdin=kind.stdin, timeout=timeout, nobody=kind.nobody)
    if p.hung:
        return f"no answer in {timeout} s"
    if "Traceback" in p.out + p.err:
        return "a traceback: " + p.err.strip()[-400:]
    if p.rc not in EXIT_CODES:
        return f"exit {p.rc} (not one of INTERFACE.md's): {p.err.strip()[-300:]}"
    if p.rc not in kind.expect:
        return f"exit {p.rc}, expected {sorted(kind.expect)}: {(p.err or p.out).strip()[-300:]}"
    if internal_errors(p.err):
        return f"an internal error: {internal_errors(p.err)[0][:300]}"
    if p.rc == 2 and ("All checks passed" in p.out + p.err):
        return "a passing summary with exit 2"
    if p.rc == 2 and kind.stderr and not p.err.strip():
        return "exit 2 without a message on stderr"
    if kind.sibling and p.rc != 2 and SIBLING not in p.out:
        return "the good file was not checked: " + p.out[-300:]
    if kind.check and p.rc != 2 or kind.check and kind.expect == {2}:
        problem = kind.check(p)
        if problem:
            return problem + ": " + (p.out + p.err).strip()[-300:]
    return None


def area_bad_input(args, tmp: Path) -> dict:
    kinds = bad_input_kinds()
    if args.bad_input_max:
        kinds = kinds[:: max(1, len(kinds) // args.bad_input_max)][: args.bad_input_max]
    modes = [["--jobs", "1", "--no-cache"]] if args.quick else [["--jobs", "1", "--no-cache"], ["--jobs", "2"]]
    failed = runs = 0
    details: List[str] = []
    for i, kind in enumerate(kinds):
        bad = None
        for m, mode in enumerate(modes if not getattr(kind, "top", False) else modes[:1]):
            root = tmp / f"kind{i}_{m}"
            root.mkdir()
            try:
                problem = _run_kind(kind, root, mode, args.kind_timeout)
            except Exception as exc:  # the setup itself (a file system that refuses): the battery's problem
                problem = f"setup failed: {type(exc).__name__}: {exc}"
            runs += 1
            if problem and bad is None:
                bad = f"{kind.name} [{' '.join(mode)}]: {problem}"
            subprocess.run(["chmod", "-R", "u+rwx", str(root)], stderr=subprocess.DEVNULL)
            shutil.rmtree(root, ignore_errors=True)
        if bad:
            failed += 1
            details.append(bad)
        if args.verbose:
            print(f"  bad input {i + 1}/{len(kinds)} {kind.name}: {'FAILED ' + bad if bad else 'ok'}", file=sys.stderr, flush=True)
    notes = f"{len(kinds)} kinds, {runs} runs ({' and '.join(' '.join(m) for m in modes)})"
    return {"tried": len(kinds), "failed": failed, "notes": notes, "details": details}


# =========================================================================================
# 4. the cache
# =========================================================================================
def _normal(out: str) -> List[str]:
    return sorted(json.dumps(f, sort_keys=True) for f in json.loads(out))


def _cache_project(root: Path, seed: int, files: int, every: int) -> None:
    corpus = fixture_texts()
    rng = random.Random(f"cache:{seed}")
    for i, text in enumerate(corpus[::every]):
        write(root, {f"fx/f{i}.py": text})
    for i in range(files):
        write(root, {f"fz/z{i}.py": fuzz_program(rng, corpus)})
    write(root, {"pyproject.toml": "[tool.scopelint]\n"})


def _corrupt(rng: random.Random, data: bytes, other: bytes) -> bytes:
    kind = rng.randrange(7)
    if kind <= 2:  # truncation (most of the cases, as a killed writer leaves)
        return data[: rng.randrange(len(data))]
    if kind == 3:
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == 4:
        return other  # another entry's whole content (valid JSON, the wrong key)
    if kind == 5:
        d = json.loads(data)
        d[rng.choice(list(d))] = rng.choice([None, 3, "x", [], {}, [[1]]])
        return json.dumps(d).encode()
    return rng.choice([b"", b"null", b"[]", b"{}", b"\0" * 64, bytes(range(256)), b'{"key": 1}'])


def area_cache(args, tmp: Path) -> dict:
    from scopelint.cache import Cache

    root = tmp / "proj"
    _cache_project(root, args.seed, 20 if args.quick else 200, 10 if args.quick else 1)
    files = sum(1 for _ in root.rglob("*.py"))
    details: List[str] = []
    base = run(scopelint_cmd("check", "--output-format", "json", "--no-cache", "--jobs", "1", "."), root, timeout=600)
    if base.rc not in (0, 1) or internal_errors(base.err):
        return {"tried": 0, "failed": 1, "notes": "the --no-cache run failed", "details": [base.err[-500:]]}
    want = _normal(base.out)
    concurrent_tried = concurrent_failed = 0
    for rnd in range(args.cache_rounds):
        shutil.rmtree(root / ".scopelint_cache", ignore_errors=True)
        cmds = [scopelint_cmd("check", "--output-format", "json", "--jobs", str(1 + (i % 2)), ".") for i in range(4)]
        procs = [subprocess.Popen(c, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in cmds]
        outs = [p.communicate(timeout=900) for p in procs]
        warm = run(scopelint_cmd("check", "--output-format", "json", "--jobs", "1", "."), root, timeout=600)
        for i, ((out, err), p) in enumerate(zip(outs + [(warm.out.encode(), warm.err.encode())], procs + [warm])):
            concurrent_tried += 1
            rc = p.returncode if hasattr(p, "returncode") else p.rc
            try:
                same = rc in (0, 1) and _normal(out.decode()) == want and b"internal error" not in err
            except ValueError:
                same = False
            if not same:
                concurrent_failed += 1
                details.append(f"round {rnd}, run {i} ({'warm' if i == 4 else 'concurrent'}): results differ from --no-cache (exit {rc})")
    # Truncations and corruptions, each read back through the cache's own reader.
    cache = Cache(root / ".scopelint_cache")
    entries = sorted(p for p in cache.directory.glob("??/*.json"))
    originals = {}
    for p in entries:
        key = p.parent.name + p.stem
        res = cache.get(key)
        if res is not None:
            originals[p] = (key, p.read_bytes(), [repr(f) for f in res.findings], res.lines)
    rng = random.Random(f"trunc:{args.seed}")
    paths = sorted(originals)
    trunc_failed = wrong = whole_runs = whole_failed = folders_left = 0
    damaged: List[Path] = []
    for t in range(args.truncations):
        p = rng.choice(paths)
        key, data, findings, lines = originals[p]
        other = originals[rng.choice(paths)][1]
        if p.is_dir():  # (what an earlier round left: a folder or a FIFO, not yet rewritten)
            shutil.rmtree(p)
        elif p.exists() and not p.is_file():
            p.unlink()
        if rng.random() < 0.05:  # not a file at all
            p.unlink(missing_ok=True)
            if rng.random() < 0.5:
                os.mkfifo(p)
            else:
                p.mkdir()
        else:
            p.unlink(missing_ok=True)  # (a new file, as a writer's os.replace leaves it)
            p.write_bytes(_corrupt(rng, data, other))
        try:
            res = cache.get(key)
            if res is not None and ([repr(f) for f in res.findings] != findings or res.lines != lines):
                wrong += 1
                details.append(f"truncation {t}: {p.name} read back a wrong result ({p.read_bytes()[:200]!r})")
        except Exception as exc:
            trunc_failed += 1
            details.append(f"truncation {t}: {p.name}: the reader raised {type(exc).__name__}: {exc}")
        damaged.append(p)
        if (t + 1) % args.whole_run_every == 0 or t + 1 == args.truncations:
            whole_runs += 1
            proc = run(scopelint_cmd("check", "--output-format", "json", "--jobs", "2", "."), root, timeout=600)
            try:
                ok = proc.rc in (0, 1) and _normal(proc.out) == want and not internal_errors(proc.err) and "Traceback" not in proc.err
            except ValueError:
                ok = False
            if not ok:
                whole_failed += 1
                details.append(f"after truncation {t}: a run over the damaged cache differs from --no-cache (exit {proc.rc}): {proc.err[-300:]}")
            for q in dict.fromkeys(damaged):  # the run rewrote the entries it missed, as they were
                if q.is_dir():  # (a folder cannot be replaced by a file: a miss on every run, still correct)
                    shutil.rmtree(q)
                    folders_left += 1
                    q.write_bytes(originals[q][1])
                elif not q.is_file():
                    trunc_failed += 1
                    details.append(f"after truncation {t}: {q.name} was not rewritten")
                    q.unlink(missing_ok=True)
                    q.write_bytes(originals[q][1])
                else:
                    key, _, findings, lines = originals[q]
                    res = cache.get(key)
                    if res is None or [repr(f) for f in res.findings] != findings or res.lines != lines:
                        trunc_failed += 1
                        details.append(f"after truncation {t}: {q.name} was rewritten with another result")
            damaged = []
    failed = concurrent_failed + trunc_failed + wrong + whole_failed
    notes = (f"{files} files; {args.cache_rounds} rounds of 4 concurrent runs + 1 warm run ({concurrent_tried} runs, "
             f"{concurrent_failed} differ); {args.truncations} truncations/corruptions of {len(paths)} entries "
             f"({wrong} wrong results, {trunc_failed} errors); {whole_runs} whole runs over the damaged cache ({whole_failed} differ; "
             f"entries rewritten as they were, but {folders_left} made folders, which stay misses)")
    return {"tried": concurrent_tried + args.truncations + whole_runs, "failed": failed, "notes": notes, "details": details[:50]}


# =========================================================================================
# 5. fix convergence
# =========================================================================================
def area_fix_fuzz(args, tmp: Path) -> dict:
    cmd = [sys.executable, str(BENCH / "fuzz_fixes.py"), "--count", str(args.fix_fuzz), "--seed", str(args.fix_seed),
           "--start", str(args.fix_start)]
    proc = run(cmd, ROOT, timeout=args.fix_timeout)
    m = re.search(r"^(\d+) programs: (\d+) failures", proc.out, re.M)
    if proc.hung or not m:
        return {"tried": args.fix_fuzz, "failed": 1, "notes": f"fuzz_fixes.py did not finish (exit {proc.rc})",
                "details": [proc.out[-1000:], proc.err[-1000:]]}
    failures = [l for l in proc.out.splitlines() if l.startswith(f"seed {args.fix_seed} program")]
    notes = (f"`fuzz_fixes.py --count {args.fix_fuzz} --seed {args.fix_seed} --start {args.fix_start}` "
             f"(programs {args.fix_start}..{args.fix_start + args.fix_fuzz - 1}): fixes compile, a second run changes nothing")
    return {"tried": int(m.group(1)), "failed": int(m.group(2)), "notes": notes, "details": failures[:20]}


# =========================================================================================
# 6. scaling
# =========================================================================================
def area_scaling(args, tmp: Path) -> dict:
    """Every shape of ``benchmarks/scaling.py`` (issue 24's and issue 44's: notebooks,
    call chains, mutual recursion, class chains, training loops, the same code as a
    script) at a quarter of ``--scaling-lines`` and at it (256k by default): failed
    where the fitted growth exponent of CPU time is over 1.2, the peak over 1 GiB, or
    a run over ``--scaling-timeout`` (a shape over the time limit at a quarter of the
    size is not run at the full one)."""
    import scaling

    failed = 0
    notes, details = [], []
    tried = 0
    shapes = [s for s in (args.scaling_shapes.split(",") if args.scaling_shapes else scaling.SHAPES)]
    for name in shapes:
        make = scaling.SHAPES[name]
        points = []
        lines = cpu = wall = peak = 0
        rc = 0
        for n in (args.scaling_lines // 4, args.scaling_lines):
            text = make(n)
            if len(text.encode()) > scaling.MAX_BYTES:  # refused unread (one SL000): nothing to time
                notes.append(f"{name} at {n // 1000}k: over the {scaling.MAX_BYTES >> 20} MiB file limit, not run")
                break
            path = tmp / f"{name}_{n}{scaling.SUFFIX.get(name, '.py')}"
            path.write_text(text)
            lines = scaling.lines_of(name, text)
            wall, cpu, peak, rc = scaling.measure(path, args.scaling_timeout)
            points.append((lines, cpu))
            path.unlink()
            if rc != 0:
                break
        if not points:
            continue
        tried += 1
        growth = scaling.slope(points)
        bad = rc != 0 or peak > 1024 or (growth == growth and growth > 1.2)
        if bad:
            failed += 1
            details.append(f"{name} at {lines} lines: {cpu:.1f} s CPU, {peak:.0f} MiB, n^{growth:.2f}, exit {rc}")
        over = " (killed at the time limit)" if rc == -9 else ""
        notes.append(f"{name} {lines // 1000}k: {cpu:.1f} s CPU, {wall:.1f} s wall, {peak:.0f} MiB{over}, n^{growth:.2f}")
    return {"tried": tried, "failed": failed, "notes": "; ".join(notes), "details": details}


# =========================================================================================
# 7. honest failures
# =========================================================================================
_SLOW_WORKERS = """
import sys, time
import scopelint.runner as r
real = r._check_path
r._check_path = lambda task: (time.sleep(120), real(task))[1]
from scopelint.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _children(pid: int) -> List[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _signal_kills_workers(root: Path, sig: int) -> Optional[str]:
    write(root, {f"m{i}.py": TORCH_BAD for i in range(6)})
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WORKERS, "check", "--no-cache", "--jobs", "2", "."],
                            cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        workers: List[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.05)
            workers = [k for k in _children(proc.pid) if _alive(k)]
        if len(workers) < 2:
            return "the workers never started"
        time.sleep(0.3)
        proc.send_signal(sig)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            return "the parent did not end within 60 s of the signal"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.05)
        if any(_alive(w) for w in workers):
            return "a worker outlived its parent"
        err = proc.stderr.read().decode("utf-8", "replace")
        if "Traceback" in err:
            return "a traceback: " + err[-3000:]
        return None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for k in _children(proc.pid):
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass


class _Lsp:
    """The smallest LSP client: framed JSON-RPC over the server's stdin/stdout."""

    def __init__(self, cwd: Path):
        env = dict(os.environ, SCOPELINT_LOG_LEVEL="WARNING")
        self.proc = subprocess.Popen(scopelint_cmd("lsp"), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.inbox: List[dict] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.err = b""
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_err(self) -> None:
        self.err = self.proc.stderr.read()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                continue
            msg = json.loads(out.read(length))
            with self.cond:
                self.inbox.append(msg)
                self.cond.notify_all()

    def send(self, msg: dict) -> None:
        body = json.dumps(dict(msg, jsonrpc="2.0")).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def wait_for(self, pred, timeout: float = 60) -> Optional[dict]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for m in self.inbox:
                    if pred(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)


def _lsp_unopened_change_and_exit(root: Path) -> Optional[str]:
    lsp = _Lsp(root)
    try:
        lsp.send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})
        if lsp.wait_for(lambda m: m.get("id") == 1) is None:
            return "no answer to initialize"
        lsp.send({"method": "initialized", "params": {}})
        uri = (root / "never_opened.py").as_uri()
        lsp.send({"method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2},
                                                                  "contentChanges": [{"text": TORCH_BAD}]}})
        lsp.send({"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
        good = (root / "open.py").as_uri()
        lsp.send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": good, "languageId": "python",
                                                                                "version": 1, "text": TORCH_BAD}}})
        diag = lsp.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == good)
        if diag is None or not diag["params"]["diagnostics"]:
            return "no diagnostics for an opened document after a change to an unopened one"
        if lsp.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, 0.5):
            return "diagnostics published for a document never opened"
        lsp.send({"id": 2, "method": "shutdown"})
        if lsp.wait_for(lambda m: m.get("id") == 2) is None:
            return "no answer to shutdown"
        lsp.send({"method": "exit"})
        try:
            rc = lsp.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            return "the server did not exit within 30 s of exit"
        time.sleep(0.2)
        if rc != 0:
            return f"exit status {rc} after shutdown and exit"
        if b"Traceback" in lsp.err:
            return "a traceback: " + lsp.err.decode("utf-8", "replace")[-300:]
        return None
    finally:
        if lsp.proc.poll() is None:
            lsp.proc.kill()
            lsp.proc.wait()


def area_honest(args, tmp: Path) -> dict:
    cases: List[tuple] = []

    def project(name: str) -> Path:
        root = tmp / name
        write(root, {"good.py": TORCH_BAD})
        return root

    def non_utf8_pyproject() -> Optional[str]:
        root = project("pyproject")
        write(root, {"pyproject.toml": b'[tool.scopelint]\nselect = ["SL1"]\n# caf\xe9\n'})
        p = run(scopelint_cmd("check", "--output-format", "concise", "."), root, timeout=60)
        lines = p.err.strip().splitlines()
        if p.rc != 2 or len(lines) != 1 or "pyproject.toml" not in lines[0] or "Traceback" in p.err:
            return f"exit {p.rc}, stderr {p.err.strip()[-300:]!r}"
        return None

    def verify_timeout(value: str) -> Callable[[], Optional[str]]:
        def case() -> Optional[str]:
            root = project(f"vt_{value}")
            p = run(scopelint_cmd("check", "--verify", "--verify-timeout", value, "good.py"), root, timeout=60)
            last = p.err.strip().splitlines()[-1:] or [""]
            if p.rc != 2 or "--verify-timeout" not in last[0] or p.out or "Traceback" in p.err:
                return f"exit {p.rc}, stderr {p.err.strip()[-300:]!r}, stdout {p.out[:100]!r}"
            return None
        return case

    def unreadable_folder() -> Optional[str]:
        root = project("locked")
        write(root, {"locked/inner.py": TORCH_BAD})
        os.chmod(root / "locked", 0)
        try:
            for paths in (["."], ["locked", "good.py"]):
                p = run(scopelint_cmd("check", "--no-cache", "--output-format", "concise", *paths), root, timeout=60, nobody=True)
                if p.rc != 1 or SIBLING not in p.out or "cannot read folder" not in p.out or "Traceback" in p.err:
                    return f"{paths}: exit {p.rc}, {(p.out + p.err).strip()[-300:]!r}"
        finally:
            os.chmod(root / "locked", 0o755)
        return None

    def fifo_in_cache() -> Optional[str]:
        root = project("fifo_cache")
        first = run(scopelint_cmd("check", "--output-format", "concise", "."), root, timeout=60)
        entries = list((root / ".scopelint_cache").rglob("*.json"))
        if first.rc != 1 or not entries:
            return "the first run wrote no cache entry"
        for e in entries:
            e.unlink()
            os.mkfifo(e)
        p = run(scopelint_cmd("check", "--output-format", "concise", "."), root, timeout=60)
        if p.hung:
            return "hung on a FIFO in the cache"
        if p.rc != 1 or SIBLING not in p.out or any(e.is_fifo() for e in entries):
            return f"exit {p.rc}, {(p.out + p.err)[-300:]!r}"
        return None

    cases.append(("non-UTF-8 pyproject.toml: one line, exit 2", non_utf8_pyproject))
    for v in ("nan", "inf", "-inf", "1e308", "0", "-1", "soon"):
        cases.append((f"--verify-timeout {v}: exit 2", verify_timeout(v)))
    cases.append(("unreadable folder reported", unreadable_folder))
    cases.append(("FIFO in .scopelint_cache/ does not hang", fifo_in_cache))
    cases.append(("SIGTERM ends the --jobs workers", lambda: _signal_kills_workers(project("sigterm"), signal.SIGTERM)))
    cases.append(("SIGINT ends the --jobs workers", lambda: _signal_kills_workers(project("sigint"), signal.SIGINT)))
    cases.append(("LSP: didChange of an unopened document ignored, shutdown/exit status 0",
                  lambda: _lsp_unopened_change_and_exit(project("lsp"))))
    failed = 0
    details = []
    for name, case in cases:
        try:
            problem = case()
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            failed += 1
            details.append(f"{name}: {problem}")
        if args.verbose:
            print(f"  honest: {name}: {problem or 'ok'}", file=sys.stderr, flush=True)
    return {"tried": len(cases), "failed": failed, "notes": "; ".join(n for n, _ in cases), "details": details}


# =========================================================================================
# 8. the verifier's sandbox and the LSP under load (their tests)
# =========================================================================================
def area_pytests(args, tmp: Path) -> dict:
    import xml.etree.ElementTree as ET

    tests = ["tests/test_verify_sandbox.py", "tests/test_verify_sandbox_hold.py", "tests/test_lsp_load.py"]
    xml = tmp / "junit.xml"
    p = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *tests], ROOT,
            timeout=args.pytest_timeout)
    if not xml.is_file():
        return {"tried": 0, "failed": 1, "notes": f"pytest did not run (exit {p.rc})", "details": [p.out[-1000:]]}
    tried = failed = skipped = 0
    details = []
    per_file: Dict[str, List[int]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        tried += 1
        f = case.get("classname", "").rsplit(".", 1)[-1] or case.get("file", "")
        per = per_file.setdefault(f, [0, 0, 0])
        per[0] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            per[1] += 1
            details.append(f"{case.get('classname')}::{case.get('name')}")
        elif case.find("skipped") is not None:
            skipped += 1
            per[2] += 1
    notes = "; ".join(f"{f}: {n} tests, {fl} failed, {sk} skipped" for f, (n, fl, sk) in per_file.items())
    if skipped:
        failed += 0  # (a skip is reported, not a failure: e.g. no torch)
    return {"tried": tried - skipped, "failed": failed, "notes": notes + f" ({p.seconds:.0f} s)", "details": details}


AREAS = {
    "fuzz": ("fuzzed programs", area_fuzz),
    "frameworks": ("torch and mxnet sources", area_frameworks),
    "bad_input": ("bad input kinds", area_bad_input),
    "cache": ("cache: concurrency, truncations", area_cache),
    "fix_fuzz": ("fixes compile and converge", area_fix_fuzz),
    "scaling": ("blow-ups (scaling shapes)", area_scaling),
    "honest": ("honest failures", area_honest),
    "pytests": ("verifier sandbox, LSP under load", area_pytests),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: every area small")
    ap.add_argument("--areas", default=",".join(AREAS), help=f"comma-separated, of {','.join(AREAS)}")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--jobs", type=int, default=2, help="--jobs of the checks (default 2)")
    ap.add_argument("--fuzz", type=int, help="fuzzed programs (default 16,600; --quick 200)")
    ap.add_argument("--fuzz-batch", type=int, default=400, help="programs per check run (default 400)")
    ap.add_argument("--batch-timeout", type=float, default=900)
    ap.add_argument("--trees", default="torch,mxnet")
    ap.add_argument("--tree-every", type=int, default=20, help="--quick: every k-th file of each tree (default 20)")
    ap.add_argument("--tree-timeout", type=float, default=1800)
    ap.add_argument("--bad-input-max", type=int, default=0, help="at most this many kinds (a spread sample; 0: all)")
    ap.add_argument("--kind-timeout", type=float, default=120)
    ap.add_argument("--truncations", type=int, help="cache entry truncations/corruptions (default 20,000; --quick 300)")
    ap.add_argument("--whole-run-every", type=int, help="a whole run over the damaged cache every N (default 200; --quick 100)")
    ap.add_argument("--cache-rounds", type=int, help="rounds of 4 concurrent runs (default 3; --quick 1)")
    ap.add_argument("--fix-fuzz", type=int, help="fix-fuzz programs (default 10,000; --quick 30)")
    ap.add_argument("--fix-seed", type=int, default=24)
    ap.add_argument("--fix-start", type=int, default=0)
    ap.add_argument("--fix-timeout", type=float, default=6 * 3600)
    ap.add_argument("--scaling-lines", type=int, help="lines of the scaling shapes (default 256,000; --quick 8,000)")
    ap.add_argument("--scaling-shapes", default="", help="comma-separated shapes of benchmarks/scaling.py (default: all)")
    ap.add_argument("--scaling-timeout", type=float, help="seconds per scaling run (default 600; --quick 120)")
    ap.add_argument("--pytest-timeout", type=float, default=1800)
    ap.add_argument("--out", type=Path, default=BENCH / ".out" / "battery.json", help="JSON out (the .md beside it)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    q = args.quick
    defaults = {"fuzz": (16_600, 200), "truncations": (20_000, 300), "whole_run_every": (200, 100), "cache_rounds": (3, 1),
                "fix_fuzz": (10_000, 30), "scaling_lines": (256_000, 8_000), "scaling_timeout": (600, 120)}
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if q else full)
    args.out_dir = args.out.parent
    args.out_dir.mkdir(parents=True, exist_ok=True)
    areas = [a.strip() for a in args.areas.split(",") if a.strip()]
    unknown = [a for a in areas if a not in AREAS]
    if unknown:
        ap.error(f"unknown area(s): {', '.join(unknown)}")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    report = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": commit, "quick": q,
              "python": sys.version.split()[0], "argv": sys.argv[1:], "areas": []}
    start = time.perf_counter()
    for name in areas:
        title, fn = AREAS[name]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        s0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        print(f"[battery] {name} ...", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(prefix=f"battery-{name}-") as tmp:
            try:
                res = fn(args, Path(tmp))
            except Exception as exc:  # the battery's own failure is a failure of the area, not a pass
                import traceback

                res = {"tried": 0, "failed": 1, "notes": f"the area raised {type(exc).__name__}: {exc}",
                       "details": [traceback.format_exc()]}
            finally:
                subprocess.run(["chmod", "-R", "u+rwx", tmp], stderr=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        s1 = resource.getrusage(resource.RUSAGE_SELF)
        res["seconds"] = round(time.perf_counter() - t0, 1)
        res["cpu_seconds"] = round(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime + s1.ru_utime + s1.ru_stime - s0.ru_utime - s0.ru_stime, 1)
        res.update(area=name, title=title)
        report["areas"].append(res)
        print(f"[battery] {name}: {res['tried']} tried, {res['failed']} failed ({res['seconds']:.0f} s)", file=sys.stderr, flush=True)
        for d in res.get("details", [])[:10]:
            print(f"    {d[:500]}", file=sys.stderr)
    report["seconds"] = round(time.perf_counter() - start, 1)
    rows = ["| area | tried | failed | notes |", "|---|---:|---:|---|"]
    for r in report["areas"]:
        notes = r["notes"].replace("|", "\\|") + f" ({r['seconds']:.0f} s wall, {r['cpu_seconds']:.0f} s CPU)"
        rows.append(f"| {r['title']} | {r['tried']:,} | {r['failed']:,} | {notes} |")
    table = "\n".join(rows)
    head = f"battery {report['date']} (commit {commit}{', --quick' if q else ''}), {report['seconds'] / 60:.1f} min"
    print(head + "\n\n" + table)
    args.out.write_text(json.dumps(report, indent=1))
    args.out.with_suffix(".md").write_text(head + "\n\n" + table + "\n")
    return 1 if any(r["failed"] for r in report["areas"]) else 0


if __name__ == "__main__":
    sys.exit(main())
