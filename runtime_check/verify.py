"""Verify findings at run time: run each flagged program as written and with each
finding's counterfactual fix, in parallel subprocesses, and attach the verdicts."""

from __future__ import annotations

import ast
import difflib
import hashlib
import importlib.util
import os
import re
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, TextIO, Tuple

from scopelint.finding import SYNTAX_ERROR, Edit, Finding, Fix
from scopelint.noqa import UNUSED_NOQA
from scopelint.fix import apply_edits
from scopelint.runtime_check import DEFAULT_TIMEOUT, harness, slices, standins, synth
from scopelint.runtime_check.oracle import INCONCLUSIVE, REFUTED, _exception_text, compare, original_decides

# How the fallback turns oneDNN off, per framework (the child and the harness do it).
ONEDNN_OFF = {"torch": "torch.backends.mkldnn.enabled = False", "mxnet": "MXNET_MKLDNN_ENABLED=0"}


@dataclass
class _Program:
    """One file to verify: its source and what its findings need."""

    display: str
    source: Optional[str]
    findings: List[Finding]
    frameworks: List[str] = field(default_factory=list)
    skip: Optional[str] = None  # why nothing of this file can run
    folder: Optional[str] = None  # copied (privately) for each variant
    harness: Optional[object] = None  # a synth.Harness when the file is a fragment (its holes filled)
    harness_for: Tuple = ((), (), None)  # the flagged lines, rules and project it was made for (to make the next attempt)
    relpath: Optional[str] = None  # where it stands in ``folder``
    module: Optional[str] = None  # its dotted name where it runs as a module of its package (``python -m``)
    paths: Tuple[str, ...] = ()  # more folders (in ``folder``) its imports are found in
    cwd: Optional[str] = None  # its working folder in ``folder`` (None: its own)
    standins: Tuple[str, ...] = ()  # missing modules given inert stand-ins (``runtime_check.standins``)
    # A notebook: its findings placed in the joined program -> the cell findings they are
    # copies of; and what the verdicts say of how it ran.
    cell_findings: Dict[int, Finding] = field(default_factory=dict)
    note: Optional[str] = None
    cells: List[Tuple[int, int]] = field(default_factory=list)  # joined row - 1 -> (cell, row in cell)
    slice: Optional[object] = None  # a slices.Slice: this program is the slice of another that ran first
    context: Optional[str] = None  # the whole program a slice was cut from (its argparse defaults)


@dataclass
class _Job:
    key: Tuple[str, str, str]  # (file, device, variant hash)
    source: str
    filename: str
    frameworks: List[str]
    device: str
    folder: Optional[str] = None
    watch: set = field(default_factory=set)  # lines whose running the trace reports
    watch_recording: set = field(default_factory=set)  # lines it says whether they ran while MXNet recorded
    realign: List[Tuple[int, int]] = field(default_factory=list)  # line spans: random streams realigned around them
    line_map: Optional[Dict[int, int]] = None  # a fixed variant's line -> the program's line
    prelude: Optional[str] = None  # a synthesized harness's objects, built before the program runs
    relpath: Optional[str] = None
    module: Optional[str] = None
    paths: Tuple[str, ...] = ()
    cwd: Optional[str] = None
    text: Optional[str] = None  # the variant before its harness's epilogue (a later attempt's goes there)
    standins: Tuple[str, ...] = ()


def _lines(f: Finding) -> List[int]:
    return list(range(f.start[0], max(f.start[0], f.end[0]) + 1))


def _mapped_lines(source: str, fixed: str, lines: List[int]) -> List[int]:
    """The lines of ``fixed`` that stand where ``lines`` of ``source`` stood (the
    fix's replacement for them, or the line after what it removed)."""
    before, after = source.splitlines(), fixed.splitlines()
    sm = difflib.SequenceMatcher(None, before, after, autojunk=False)

    def code_from(j: int) -> int:  # the first line from ``j`` that holds code (a line event)
        while j <= len(after) and (not after[j - 1].strip() or after[j - 1].lstrip().startswith("#")):
            j += 1
        return j

    out = set()
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        for line in lines:
            if not (i1 < line <= i2):
                continue
            if tag == "equal":
                out.add(j1 + line - i1)
            elif j2 > j1:
                out.update(range(j1 + 1, j2 + 1))
            else:
                out.add(code_from(j1 + 1))
    # A statement the fix moved (SL210 moves a step after the other backward) is still
    # the flagged statement where it now stands.
    texts = {before[line - 1].strip() for line in lines if 0 < line <= len(before) and before[line - 1].strip()}
    out.update(j for j, text in enumerate(after, start=1) if text.strip() in texts)
    return sorted(out)


def _reached(run, lines) -> bool:
    """Whether the run reports any of ``lines`` as run (True when it reports nothing)."""
    t = run.trace or {}
    if "reached" not in t or not lines:
        return True
    return bool(set(t["reached"]) & set(lines))


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


class _Run:
    """The files of the run as one program (``runtime_check.project``), read only when a
    file needs it: where a file runs from, and the project's classes for a harness."""

    def __init__(self, results: Sequence):
        self.paths = [str(r.path) for r in results if getattr(r, "path", None) is not None and str(r.path).endswith(".py")]
        self._project = None

    @property
    def project(self):
        if self._project is None:
            from scopelint.runtime_check.project import Project

            self._project = Project.of(self.paths)
        return self._project

    def layout(self, path: str):
        from scopelint.runtime_check.project import layout

        try:
            return self.project.layout(path)
        except Exception:  # (an analysis bug: the file runs from its folder, as before)
            return layout(path)

    def models(self, path: str):
        """``project`` for ``synth.plan``: what the harness of ``path`` asks the project."""
        from scopelint.runtime_check.project import Asker

        return Asker(lambda: self.project, path, len(self.paths))


def _program_of(result, run: Optional[_Run] = None) -> _Program:
    # (SL001 is about comments: removing one never changes what the program does)
    findings = [f for f in result.findings if f.code not in (SYNTAX_ERROR, UNUSED_NOQA)]
    prog = _Program(result.filename, None, findings)
    if not findings:
        return prog
    source = getattr(result, "source", None)
    if source is None and result.path is not None:
        try:
            with open(result.path, encoding="utf-8") as fh:
                source = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            prog.skip = f"cannot read the program: {exc}"
            return prog
    if source is None:
        prog.skip = "no program text to run (stdin)"
        return prog
    if result.filename.endswith(".ipynb"):
        source = _notebook_program(prog, source)
        if source is None:
            return prog
    prog.source = source
    project = None
    if result.path is not None:
        prog.folder = os.path.dirname(os.path.abspath(str(result.path)))
        if run is not None:
            where = run.layout(str(result.path))
            prog.folder, prog.relpath, prog.module = where.root, where.relpath, where.module
            prog.paths, prog.cwd = where.paths, where.cwd
            project = run.models(str(result.path))
    # A snippet or a function nobody calls: a harness fills its holes (synth, holes), with
    # the project's own classes where it can build them.
    try:
        planned = synth.plan(source, sorted({r for f in findings for r in _lines(f)}), {f.code for f in findings}, project=project)
    except Exception as exc:  # (an analysis bug must not stop the verification of the other files)
        prog.skip = f"no harness could be synthesized for this fragment: {type(exc).__name__}: {exc}"
        return prog
    if isinstance(planned, str):
        prog.skip = f"not self-contained, and no harness can be synthesized: {planned}"
        return prog
    folders = [prog.folder or ""] + [os.path.join(prog.folder or "", p) for p in prog.paths]
    if prog.relpath:
        folders.append(os.path.join(prog.folder or "", os.path.dirname(prog.relpath)))
    prog.standins = tuple(standins.missing_imports_of_project(source, prog.folder if result.path is not None else None, folders))
    prog.harness = planned
    prog.harness_for = (sorted({r for f in findings for r in _lines(f)}), {f.code for f in findings}, project)
    prog.frameworks = planned.frameworks if planned is not None else harness.frameworks_of(source)
    missing = [fw for fw in prog.frameworks if importlib.util.find_spec(fw) is None]
    if missing:
        prog.skip = f"{', '.join(missing)} is not installed"
    elif not prog.frameworks:
        prog.skip = "the program imports neither torch nor mxnet"
    return prog


def _notebook_program(prog: _Program, text: str) -> Optional[str]:
    """A notebook runs as ``check`` reads it: its code cells in order, as one program,
    magics and shell lines blanked (``scopelint.notebook``). ``prog.findings`` become
    copies placed in that program (their verdicts go back to the cell findings); None
    (and ``prog.skip``) where the notebook cannot be read."""
    from scopelint import notebook

    try:
        nb = notebook.load(text)
    except ValueError as exc:
        prog.skip = f"cannot read the notebook: {exc}"
        return None
    row_of = {place: row for row, place in enumerate(nb.line_map, start=1)}

    def joined(cell, pos):
        row = row_of.get((cell, pos[0]))
        return None if row is None else (row, pos[1])

    copies = []
    for f in prog.findings:
        start, end = joined(f.cell, f.start), joined(f.cell, f.end)
        if start is None or end is None:
            continue
        fix = None
        if f.fix is not None:
            edits = [Edit(e.content, joined(f.cell, e.start), joined(f.cell, e.end)) for e in f.fix.edits]
            if all(e.start is not None and e.end is not None for e in edits):
                fix = Fix(f.fix.applicability, f.fix.message, tuple(edits))
        copy = Finding(f.code, f.message, f.severity, f.filename, start, end, f.help, fix)
        prog.cell_findings[id(copy)] = f
        copies.append(copy)
    prog.findings = copies
    prog.cells = list(nb.line_map)
    blanked = 0  # (the lines ``notebook.python_lines`` blanked or left out, as check read them)
    for n, cell in enumerate(nb.cells, start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            lines = nb.cell_lines(n)
            converted = notebook.python_lines(nb.cell_text(n))
            blanked += len(lines) if converted is None else sum(a != b for a, b in zip(lines, converted))
    prog.note = "notebook: its code cells run in order as one program" + (
        f" ({blanked} magic or shell line{'s' if blanked != 1 else ''} left out)" if blanked else "")
    return nb.source


def _cell_line(cells: List[Tuple[int, int]], row: int) -> str:
    if 1 <= row <= len(cells):
        cell, line = cells[row - 1]
        return f"cell {cell}, line {line}"
    return f"line {row}"


def _opcodes(source: str, fixed: str):
    return difflib.SequenceMatcher(None, source.splitlines(), fixed.splitlines(), autojunk=False).get_opcodes()


def _line_map(opcodes) -> Dict[int, int]:
    """A fixed variant's unchanged lines -> the same lines of the program (1-based)."""
    out: Dict[int, int] = {}
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            for k in range(i2 - i1):
                out[j1 + k + 1] = i1 + k + 1
    return out


def _statement_span(tree: Optional[ast.AST], row: int, end_row: int) -> Tuple[int, int]:
    """The lines of the innermost statement holding rows ``row..end_row``."""
    best = (row, end_row)
    if tree is None:
        return best
    size = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= row and (node.end_lineno or node.lineno) >= end_row:
            n = (node.end_lineno or node.lineno) - node.lineno
            if size is None or n < size:
                size, best = n, (node.lineno, node.end_lineno or node.lineno)
    return best


def _region(tree, finding: Finding, opcodes) -> Tuple[int, int]:
    """The flagged statement's lines in the program, grown over the lines the fix
    changes next to it (an eval() inserted before, a train() after; not an import added
    at the top)."""
    lo, hi = _statement_span(tree, finding.start[0], max(finding.start[0], finding.end[0]))
    grown = True
    while grown:
        grown = False
        for tag, i1, i2, j1, j2 in opcodes:
            if tag in ("equal", "insert"):  # (lines inserted next to it join its image, not it)
                continue
            a, b = i1 + 1, i2
            if a <= hi + 1 and b >= lo - 1 and (a < lo or b > hi):
                lo, hi, grown = min(lo, max(a, 1)), max(hi, b), True
    return lo, hi


def _image(region: Tuple[int, int], opcodes) -> Optional[Tuple[int, int]]:
    """The lines of the fixed variant that the program's ``region`` became."""
    lo, hi = region
    rows = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            a, b = max(lo, i1 + 1), min(hi, i2)
            if a <= b:
                rows += [j1 + (a - i1), j1 + (b - i1)]
        elif j2 > j1:
            a, b = (i1 + 1, i2) if i2 > i1 else (i1, i1 + 1)
            if a <= hi and b >= lo:
                rows += [j1 + 1, j2]
    return (min(rows), max(rows)) if rows else None


def _counterfactual(source: str, finding: Finding) -> Tuple[Optional[str], Optional[str]]:
    """(fixed source, None) or (None, why not)."""
    if finding.fix is None:
        return None, "no counterfactual for this finding"
    try:
        fixed, n = apply_edits(source, [finding], True)
    except Exception as exc:  # positions off (file changed since the check)
        return None, f"the counterfactual does not apply: {exc}"
    if n == 0 or fixed == source:
        return None, "the counterfactual does not change the program"
    try:
        compile(fixed, finding.filename, "exec")
    except SyntaxError as exc:
        return None, f"the counterfactual does not compile: {exc.msg} (line {exc.lineno})"
    return fixed, None


class Progress:
    """A one-line progress bar on stderr (only when it is a terminal)."""

    def __init__(self, total: int, stream: TextIO, enabled: bool):
        self.total, self.done, self.stream = total, 0, stream
        self.enabled = enabled and total > 3
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def more(self, n: int) -> None:
        with self.lock:
            self.total += n

    def step(self) -> None:
        with self.lock:
            self.done += 1
            if self.enabled:
                width = 24
                filled = int(width * self.done / self.total)
                elapsed = time.monotonic() - self.start
                self.stream.write(f"\rscopelint verify [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} runs, {elapsed:.0f}s")
                self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 72 + "\r")
            self.stream.flush()


def verify(
    results: Sequence,
    device: str = "cpu",
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = 1,
    progress: Optional[TextIO] = None,
    runner: Callable = harness.run_variant,
) -> None:
    """Attach ``Finding.runtime`` to every finding of ``results`` (FileResult-like).

    Ctrl-C or SIGTERM (in the main thread) ends every running variant and everything it
    started at once (``harness.stop_all``), starts no more, and raises
    ``KeyboardInterrupt`` (``harness.Terminated`` for SIGTERM)."""
    with harness.interruptible():
        _verify(results, device, timeout, jobs, progress, runner)


def _verify(results, device, timeout, jobs, progress, runner) -> None:
    devices = ["cpu", "cuda"] if device == "all" else [device]
    cuda = harness.cuda_present() if "cuda" in devices else False
    run = _Run(results)
    programs = [_program_of(r, run) for r in results]

    jobs_by_key: Dict[Tuple[str, str, str], _Job] = {}
    plan: List[Tuple[Finding, str, Optional[Tuple], Optional[Tuple], Optional[str]]] = []
    watched: Dict[int, Tuple[List[int], List[int]]] = {}  # per finding: lines as written, with the fix
    for index, prog in enumerate(programs):
        file_key = f"{index}:{prog.display}"
        fixes = {id(f): (None, prog.skip) if prog.skip else _counterfactual(prog.source, f) for f in prog.findings}
        # The random streams are realigned around every flagged statement (and what its
        # fix made of it), in the program as written (shared by all its findings) and,
        # at the same places, in each fixed variant.
        try:
            tree = ast.parse(prog.source) if prog.source is not None else None
        except SyntaxError:
            tree = None
        ops = {key: _opcodes(prog.source, fx) for key, (fx, why) in fixes.items() if fx is not None}
        regions = sorted({_region(tree, f, ops[id(f)]) for f in prog.findings if id(f) in ops})
        for f in prog.findings:
            fixed, why = fixes[id(f)]
            for dev in devices:
                if why is None and dev == "cuda" and not cuda:
                    plan.append((f, dev, None, None, "no CUDA device"))
                    continue
                if why is not None:
                    plan.append((f, dev, None, None, why))
                    continue
                orig_key = (file_key, dev, "original")
                fixed_key = (file_key, dev, _digest(fixed))
                lines = _lines(f)
                watched[id(f)] = (lines, _mapped_lines(prog.source, fixed, lines))
                wrap = (lambda text: prog.harness.program(text, bool(prog.module))) if prog.harness is not None else (lambda text: text)
                prelude = prog.harness.prelude if prog.harness is not None else None
                if orig_key not in jobs_by_key:
                    jobs_by_key[orig_key] = _Job(orig_key, wrap(prog.source), prog.display, prog.frameworks, dev, prog.folder,
                                                 realign=regions, prelude=prelude, relpath=prog.relpath, module=prog.module,
                                                 paths=prog.paths, cwd=prog.cwd, text=prog.source, standins=prog.standins)
                if fixed_key not in jobs_by_key:
                    images = sorted({im for im in (_image(r, ops[id(f)]) for r in regions) if im is not None})
                    jobs_by_key[fixed_key] = _Job(fixed_key, wrap(fixed), prog.display, prog.frameworks, dev, prog.folder,
                                                  realign=images, line_map=_line_map(ops[id(f)]), prelude=prelude,
                                                  relpath=prog.relpath, module=prog.module, paths=prog.paths, cwd=prog.cwd,
                                                  text=fixed, standins=prog.standins)
                jobs_by_key[orig_key].watch.update(watched[id(f)][0])
                jobs_by_key[fixed_key].watch.update(watched[id(f)][1])
                if f.code in WHILE_RECORDING:
                    jobs_by_key[orig_key].watch_recording.update(watched[id(f)][0])
                plan.append((f, dev, orig_key, fixed_key, None))

    runs, fallback = _run_all(list(jobs_by_key.values()), timeout, jobs, progress, runner)
    _retry_harnesses(programs, jobs_by_key, runs, fallback, timeout, jobs, progress, runner)
    sliced = _run_slices(programs, plan, jobs_by_key, runs, fallback, watched, timeout, jobs, progress, runner)
    weaker = harness.isolation().warning if runner is harness.run_variant else None
    by_slice: Dict[int, _Program] = {}  # per finding: the slice whose verdict it got

    per_finding: Dict[int, List[Tuple[str, str, str, float]]] = {}
    for f, dev, orig_key, fixed_key, why in plan:
        if why is not None:
            verdict, detail, seconds = INCONCLUSIVE, why, 0.0
        else:
            a, b = runs[orig_key], runs[fixed_key]
            try:
                verdict, detail = evidence(a, b, *watched[id(f)], f.fix.message if f.fix else "", jobs_by_key[fixed_key].line_map)
            except Exception as exc:  # (a trace of the right shape whose values still upset the comparison)
                verdict, detail = INCONCLUSIVE, f"no trustworthy trace: comparing the runs failed ({type(exc).__name__}: {exc})"
            verdict, detail = _premise(f, verdict, detail, a, watched[id(f)][0])
            seconds = a.seconds + b.seconds
            keys = sliced.get((id(f), dev))
            if keys is not None and verdict == INCONCLUSIVE and keys[0] in runs and keys[1] in runs:
                sa, sb = runs[keys[0]], runs[keys[1]]
                sprog = programs[int(keys[0][0].split(":", 1)[0])]
                try:
                    sv, sd = evidence(sa, sb, *watched[id(f)], f.fix.message if f.fix else "", jobs_by_key[keys[1]].line_map)
                except Exception as exc:
                    sv, sd = INCONCLUSIVE, f"no trustworthy trace: comparing the runs failed ({type(exc).__name__}: {exc})"
                seconds += sa.seconds + sb.seconds
                h = sprog.harness
                note = (sprog.slice.describe() + (f", attempt {h.attempt + 1}" if h.attempt else "")
                        + f"; filled: {', '.join(h.filled)}" + "".join(f"; {n}" for n in h.notes))
                sv, sd = _premise(f, sv, sd, sa, watched[id(f)][0])
                if sv != INCONCLUSIVE:
                    verdict, detail = sv, f"{sd} ({note}; the program as written: {detail})"
                    by_slice[id(f)] = sprog
                else:
                    detail += f" [{note}: {sd}]"
            if weaker:
                detail += f" [{weaker}]"
            if orig_key[:2] in fallback:
                detail += f" [{fallback[orig_key[:2]]}]"
            if jobs_by_key[orig_key].prelude is not None:
                h = programs[int(orig_key[0].split(":", 1)[0])].harness
                detail += " (synthesized harness" + (f", attempt {h.attempt + 1}" if h.attempt else "") + "".join(f"; {n}" for n in h.notes) + ")"
        per_finding.setdefault(id(f), []).append((dev, verdict, detail, seconds))
    for prog in programs:
        for f in prog.findings:
            outcomes = per_finding.get(id(f), [])
            if not outcomes:
                continue
            f.runtime = _combine(outcomes)
            shown = by_slice.get(id(f), prog)
            if shown.harness is not None:
                f.runtime["harness"] = shown.harness.text(shown.source, bool(shown.module))
                f.runtime["holes"] = list(shown.harness.filled)
            f.extra["verify_seconds"] = round(sum(o[3] for o in outcomes), 3)
            f.extra["verdicts"] = {dev: {"verdict": v, "seconds": round(sec, 3)} for dev, v, _, sec in outcomes}
            if prog.cells:  # (lines of the joined program, as ``check`` shows them: cell and line)
                f.runtime["detail"] = re.sub(r"\bline (\d+)", lambda m: _cell_line(prog.cells, int(m.group(1))), f.runtime["detail"])
            if prog.note:
                f.runtime["detail"] += f" [{prog.note}]"
            original = prog.cell_findings.get(id(f))
            if original is not None:  # (a notebook's: the verdict goes to the cell finding)
                original.runtime = f.runtime
                original.extra.update(verify_seconds=f.extra["verify_seconds"], verdicts=f.extra["verdicts"])


# Findings about what happens while MXNet records: refuted only where the flagged line
# ran while it recorded (the child's ``reached_recording``).
WHILE_RECORDING = frozenset({"SL304"})


def _premise(f: Finding, verdict: str, detail: str, run, lines: List[int]) -> Tuple[str, str]:
    """A ``refuted`` stands only on a run where the finding's premise held: a write while
    recording (SL304) whose line ran only with recording off (the model file's own demo
    predicting, not its training) says nothing of the write."""
    t = (run.trace or {}) if run is not None else {}
    if verdict != REFUTED or f.code not in WHILE_RECORDING or "reached_recording" not in t:
        return verdict, detail
    if set(t["reached_recording"]) & set(lines) or not set(t.get("reached") or []) & set(lines):
        return verdict, detail
    return INCONCLUSIVE, (f"the flagged line ran only with MXNet's recording off, so the write it is about never "
                          f"happened while recording (as written: {detail})")


def _run_slices(programs, plan, jobs_by_key, runs, fallback, watched, timeout, jobs, progress, runner) -> Dict:
    """Where a whole program gave a finding no verdict (it stopped before the flagged line,
    or both variants failed alike on something else), run the slice the finding needs
    (``runtime_check.slices``): the flagged function with the definitions it reaches, in
    a synthesized harness, as written and with the fix; its harness gets its further
    attempts too. The slice programs are appended to ``programs`` (with no findings of
    their own). Returns, per (finding, device), the slice's (original, fixed) run keys."""
    out: Dict[Tuple[int, str], Tuple] = {}
    made: Dict[Tuple[int, str], Optional[int]] = {}  # (program, function) -> its slice program, None: none can be made
    new: Dict[Tuple[str, str, str], _Job] = {}
    for f, dev, orig_key, fixed_key, why in plan:
        if why is not None or orig_key not in runs or fixed_key not in runs:
            continue
        index = int(orig_key[0].split(":", 1)[0])
        prog = programs[index]
        if prog.harness is not None or prog.slice is not None or prog.source is None:
            continue
        try:
            verdict, detail = evidence(runs[orig_key], runs[fixed_key], *watched[id(f)])
            verdict, _ = _premise(f, verdict, detail, runs[orig_key], watched[id(f)][0])
        except Exception:
            verdict = INCONCLUSIVE
        if verdict != INCONCLUSIVE:
            continue
        s = slices.slice_for(prog.source, _lines(f))
        if isinstance(s, str):
            continue
        if (index, s.function) not in made:
            made[(index, s.function)] = _slice_program(programs, prog, s, _lines(f))
        at = made[(index, s.function)]
        if at is None:
            continue
        sprog = programs[at]
        whole_fixed = jobs_by_key[fixed_key]
        fixed_text = slices.cut(whole_fixed.text or "", s)
        if fixed_text is None:
            continue
        file_key = f"{at}:{sprog.display}"
        keys = ((file_key, dev, "original"), (file_key, dev, _digest(fixed_text)))
        for key, text, like in ((keys[0], sprog.source, jobs_by_key[orig_key]), (keys[1], fixed_text, whole_fixed)):
            if key not in jobs_by_key:
                jobs_by_key[key] = new[key] = _Job(
                    key, sprog.harness.program(text, bool(sprog.module)), sprog.display, sprog.frameworks, dev, sprog.folder,
                    realign=like.realign, line_map=like.line_map, prelude=sprog.harness.prelude, relpath=sprog.relpath,
                    module=sprog.module, paths=sprog.paths, cwd=sprog.cwd, text=text, standins=sprog.standins)
        jobs_by_key[keys[0]].watch.update(watched[id(f)][0])
        jobs_by_key[keys[1]].watch.update(watched[id(f)][1])
        if f.code in WHILE_RECORDING:
            jobs_by_key[keys[0]].watch_recording.update(watched[id(f)][0])
        out[(id(f), dev)] = keys
    if new:
        more, fb = _run_all(list(new.values()), timeout, jobs, progress, runner)
        runs.update(more)
        fallback.update(fb)
        _retry_harnesses(programs, jobs_by_key, runs, fallback, timeout, jobs, progress, runner,
                         only={i for i in made.values() if i is not None})
    return out


def _slice_program(programs: List[_Program], prog: _Program, s, lines: List[int]) -> Optional[int]:
    """The slice ``s`` of ``prog`` as a program of its own in its harness (appended to
    ``programs``: its index), or None where no harness can be made for it."""
    text = slices.cut(prog.source, s)
    if text is None:
        return None
    codes = {f.code for f in prog.findings}
    project = prog.harness_for[2] if len(prog.harness_for) > 2 else None
    try:
        planned = synth.plan(text, lines, codes, project=project, target=s.function, context=prog.source)
    except Exception:  # (an analysis bug: the program's own verdict stands)
        return None
    if not isinstance(planned, synth.Harness):
        return None
    programs.append(_Program(prog.display, text, [], frameworks=planned.frameworks or prog.frameworks, folder=prog.folder,
                             harness=planned, harness_for=(lines, codes, project), relpath=prog.relpath, module=prog.module,
                             paths=prog.paths, cwd=prog.cwd, standins=prog.standins, slice=s, context=prog.source))
    return len(programs) - 1


def _missed(run, watch) -> bool:
    """The program as written raised before any of ``watch`` ran (or its harness failed):
    a harness that guessed a shape or a loss wrong, worth another attempt."""
    t = (run.trace or {}) if run is not None else {}
    if run is None or run.status != "ran" or t.get("status") != "exception":
        return False
    return bool(t.get("harness_failed")) or not _reached(run, watch)


def _retry_harnesses(programs, jobs_by_key, runs, fallback, timeout, jobs, progress, runner, only=None) -> None:
    """Where a fragment's program as written never reached its flagged lines in the
    synthesized harness, run all its variants again in the next attempt's harness
    (``synth.plan(..., attempt=n)``: other sizes, another loss; after a project's own
    class, the stand-in), up to the harness's ``attempts``; the last attempt's runs stand."""
    most = max([p.harness.attempts for p in programs if p.harness is not None] + [synth.ATTEMPTS])
    for n in range(1, most):
        retry: List[_Job] = []
        for index, prog in enumerate(programs):
            if prog.harness is None or (only is not None and index not in only):
                continue
            file_key = f"{index}:{prog.display}"
            group = [j for k, j in jobs_by_key.items() if k[0] == file_key]
            if not any(_missed(runs.get(j.key), j.watch) for j in group if j.key[2] == "original"):
                continue
            lines, codes, project = prog.harness_for
            failed = None
            if n == 1:  # (how the first attempt ended: where it built the project's class, the note says)
                first = runs.get((file_key, group[0].key[1], "original"))
                exc = ((first.trace or {}).get("exception") if first is not None else None)
                failed = _exception_text(exc) if exc else None
            nxt = synth.plan(prog.source, lines, codes, attempt=n, project=project, failed=failed,
                             target=prog.slice.function if prog.slice is not None else None, context=prog.context)
            if not isinstance(nxt, synth.Harness) or (nxt.prelude, nxt.epilogue) == (prog.harness.prelude, prog.harness.epilogue):
                continue
            prog.harness = nxt
            for j in group:
                j.prelude = nxt.prelude
                if j.text is not None:
                    j.source = nxt.program(j.text, bool(prog.module))
                fallback.pop(j.key[:2], None)
            retry += group
        if not retry:
            return
        more, fb = _run_all(retry, timeout, jobs, progress, runner)
        runs.update(more)
        fallback.update(fb)


def evidence(a, b, lines: List[int], fixed_lines: List[int], fix_message: str = "", line_map=None) -> Tuple[str, str]:
    """The oracle's verdict, standing only on evidence the program could not forge:
    a tampered trace channel, or a flagged line that never ran in either variant,
    makes it inconclusive."""
    for run, who in ((a, "program as written"), (b, "fixed program")):
        if getattr(run, "tampered", None):
            return INCONCLUSIVE, f"no trustworthy trace from the {who}: {run.tampered}"
    verdict, detail = compare(a, b, fix_message, line_map)
    if verdict == INCONCLUSIVE:
        return verdict, detail
    broken = sorted({e for run in (a, b) for e in ((run.trace or {}).get("isolation_errors") or [])})
    if broken:
        detail += f" [sandbox incomplete: {'; '.join(broken[:3])}]"
    missed = [who for run, watch, who in ((a, lines, "as written"), (b, fixed_lines, "with the fix")) if not _reached(run, watch)]
    if missed:
        return INCONCLUSIVE, f"the flagged line never ran ({' and '.join(missed)}; the program ended before it)"
    return verdict, detail


def _combine(outcomes: List[Tuple[str, str, str, float]]) -> dict:
    if len(outcomes) == 1:
        dev, verdict, detail, _ = outcomes[0]
        return {"verdict": verdict, "detail": detail, "device": dev}
    conclusive = [o for o in outcomes if o[1] != INCONCLUSIVE]
    chosen = conclusive[0] if conclusive else outcomes[0]
    others = "; ".join(f"{dev}: {verdict} ({detail})" for dev, verdict, detail, _ in outcomes if dev != chosen[0])
    detail = chosen[2] + (f" | {others}" if others else "")
    return {"verdict": chosen[1], "detail": detail, "device": chosen[0]}


def _run_all(jobs_list: List[_Job], timeout: float, jobs: int, progress: Optional[TextIO], runner) -> Tuple[Dict, Dict]:
    """Run the originals first (each is shared by every finding of its file); a file's
    fixed variants run only when its original leaves something to compare.

    When a run fails only because oneDNN refused an operation on this processor
    (``harness.onednn_failure``), every variant of that file and device runs again with
    oneDNN off, its original first, so that the variants compared always ran under the
    same backend; runs made with oneDNN on for that file are dropped, even those still
    in flight. Returns the runs and, per (file, device) that fell back, a note saying so."""
    bar = Progress(len(jobs_list), progress or sys.stderr, progress is not None and _isatty(progress))
    runs: Dict = {}
    fallback: Dict[Tuple[str, str], str] = {}
    originals = [j for j in jobs_list if j.key[2] == "original"]
    original_of = {j.key[:2]: j for j in originals}
    fixed_of: Dict[Tuple[str, str], List[_Job]] = {}
    for j in jobs_list:
        if j.key[2] != "original":
            fixed_of.setdefault(j.key[:2], []).append(j)

    submitted: Dict[Tuple[str, str], int] = {}  # runs (or skips) per group, for the bar

    def submit(pending, job: _Job, onednn: bool) -> None:
        submitted[job.key[:2]] = submitted.get(job.key[:2], 0) + 1
        pending.add(pool.submit(one, job, onednn))

    isolated = runner is harness.run_variant

    def one(job: _Job, onednn: bool):
        extra = {} if onednn else {"onednn": False}
        if isolated:
            extra.update(folder=job.folder, watch=sorted(job.watch))
            if job.realign:
                extra["realign"] = job.realign
            if job.prelude is not None:
                extra["prelude"] = job.prelude
            if job.relpath is not None:
                extra.update(relpath=job.relpath, module=job.module, paths=job.paths, cwd=job.cwd)
            if job.standins:
                extra["standins"] = list(job.standins)
            if job.watch_recording:
                extra["watch_recording"] = sorted(job.watch_recording)
        result = runner(job.source, job.filename, job.frameworks, job.device, timeout, **extra)
        bar.step()
        return job, onednn, result

    def skipped(job: _Job, original) -> harness.RunResult:
        submitted[job.key[:2]] = submitted.get(job.key[:2], 0) + 1
        bar.step()
        return harness.RunResult("skipped", timeout=timeout, notes=["the program as written decides the verdict"])

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        if True:  # (not ``with pool``: its exit would wait for the running variants before ``except`` ends them)
            pending: set = set()
            for j in originals:
                submit(pending, j, True)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    job, onednn, result = fut.result()
                    group = job.key[:2]
                    if onednn and group in fallback:
                        continue  # superseded: this file runs again with oneDNN off
                    refused = harness.onednn_failure(result) if onednn else None
                    if refused is not None:
                        who = "the program as written" if job.key[2] == "original" else "a fixed variant"
                        how = ", ".join(ONEDNN_OFF[fw] for fw in job.frameworks if fw in ONEDNN_OFF)
                        fallback[group] = f"oneDNN off for both variants ({how}): with it on, {who} raised {refused}"
                        for key in [k for k in runs if k[:2] == group]:
                            del runs[key]
                        bar.more(submitted[group])  # its runs so far still count; all are made again
                        submit(pending, original_of[group], False)
                        continue
                    runs[job.key] = result
                    if job.key[2] != "original":
                        continue
                    for fixed in fixed_of.get(group, []):
                        if original_decides(result):
                            runs[fixed.key] = skipped(fixed, result)
                        else:
                            submit(pending, fixed, onednn)
        pool.shutdown(wait=True)
    except BaseException:  # Ctrl-C, SIGTERM: end the running variants now, run no more
        harness.stop_all()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
    return runs, fallback


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
