"""Compare the traces of a program as written and with the counterfactual fix."""

from __future__ import annotations

import math
import re
import signal
from typing import Dict, List, Optional, Tuple

from scopelint.runtime_check.harness import RunResult
from scopelint.runtime_check.standins import described

CONFIRMED_ERROR = "confirmed:error"
CONFIRMED_GRADS = "confirmed:grads-differ"
CONFIRMED_OUTPUTS = "confirmed:outputs-differ"
CONFIRMED_GRAPH = "confirmed:graph-retained"
REFUTED = "refuted"
INCONCLUSIVE = "inconclusive"
VERDICTS = (CONFIRMED_ERROR, CONFIRMED_GRADS, CONFIRMED_OUTPUTS, CONFIRMED_GRAPH, REFUTED, INCONCLUSIVE)

RTOL, ATOL = 1e-5, 1e-7
# Extra memory the original must use to count as "clearly more": both bounds.
MEMORY_MIN_KB, MEMORY_RATIO = 32 * 1024, 1.25

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")
# Autograd bookkeeping in printed tensors: shown by the graph oracle, not an output.
_GRAPH_NOISE = re.compile(r",?\s*(?:grad_fn=<[^>]*>|requires_grad=True)")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NOT_SELF_CONTAINED = {"ModuleNotFoundError", "ImportError", "FileNotFoundError"}


def _close(a, b) -> bool:
    if a == b:
        return True
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return False
    if math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b))


def _same_summary(a: Optional[dict], b: Optional[dict]) -> bool:
    if a is None or b is None:
        return a is b
    if a.get("shape") != b.get("shape"):
        return False
    return all(_close(a.get(k), b.get(k)) for k in ("sum", "abs"))


def _fmt_summary(s: Optional[dict]) -> str:
    if s is None:
        return "None"
    shape = "x".join(str(d) for d in s.get("shape", [])) or "scalar"
    if "sum" not in s:
        return f"[{shape}]"
    total = s["sum"]
    total = f"{total:.6g}" if isinstance(total, float) else str(total)
    return f"[{shape}] sum {total}"


def _at(event: dict) -> str:
    return f" (line {event['line']})" if event.get("line") else ""


def _first_value_difference(a_events: List[dict], b_events: List[dict], key: str, label: str) -> Optional[str]:
    for i, (ea, eb) in enumerate(zip(a_events, b_events), start=1):
        va, vb = ea.get(key) or [], eb.get(key) or []
        if len(va) != len(vb):
            return f"{label} #{i}{_at(ea)}: {len(va)} tensors vs {len(vb)} with the fix"
        for j, (sa, sb) in enumerate(zip(va, vb)):
            if not _same_summary(sa, sb):
                return f"{label} #{i}{_at(ea)}, tensor {j}: {_fmt_summary(sa)} as written vs {_fmt_summary(sb)} with the fix"
    return None


def _normalise(line: str) -> str:
    return _ADDRESS.sub("0x?", _GRAPH_NOISE.sub("", line)).rstrip()


def _same_line(a: str, b: str) -> bool:
    if a == b:
        return True
    ta, tb = _NUMBER.split(a), _NUMBER.split(b)
    na, nb = _NUMBER.findall(a), _NUMBER.findall(b)
    if ta != tb or len(na) != len(nb):
        return False
    return all(_close(float(x), float(y)) for x, y in zip(na, nb))


def stdout_difference(a: str, b: str) -> Optional[str]:
    la = [_normalise(l) for l in a.splitlines()]
    lb = [_normalise(l) for l in b.splitlines()]
    for i, (x, y) in enumerate(zip(la, lb), start=1):
        if not _same_line(x, y):
            return f"printed line {i}: {_clip(x)!r} as written vs {_clip(y)!r} with the fix"
    if len(la) != len(lb):
        return f"the program prints {len(la)} lines as written vs {len(lb)} with the fix"
    return None


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


# --- failures ---------------------------------------------------------------------------
def _exception_text(exc: dict) -> str:
    line = f" at line {exc['line']}" if exc.get("line") else ""
    msg = exc.get("message") or ""
    return f"{exc['type']}: {_clip(msg, 160)}{line}" if msg else f"{exc['type']}{line}"


def _failure(run: RunResult, who: str) -> Optional[str]:
    """Why this run cannot be compared (timeout, crash, memory, exit...), or None."""
    if run.status == "failed-to-start":
        return f"could not start Python for the {who}: {'; '.join(run.notes)}"
    if run.status == "timeout":
        return f"the {who} did not finish within {run.timeout:g}s (wall-clock limit; --verify-timeout)"
    if run.status == "crashed":
        rc = run.returncode
        if rc is not None and rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            if name == "SIGXCPU":
                return f"the {who} ran out of CPU time"
            if "bad_alloc" in run.stderr_tail or "out of memory" in run.stderr_tail.lower():
                return f"the {who} ran out of memory (limit {run.memory_bytes >> 20} MB)"
            return f"the {who} crashed ({name})"
        return f"the {who} ended without a trace (exit status {rc})"
    t = run.trace or {}
    if t.get("missing"):
        return f"{', '.join(t['missing'])} is not installed"
    if t.get("harness_failed") and t.get("exception"):
        return f"the synthesized harness failed before the fragment ran: {_exception_text(t['exception'])}"
    if t.get("status") == "memory":
        return f"the {who} ran out of memory (limit {run.memory_bytes >> 20} MB, SCOPELINT_VERIFY_MEMORY_MB): {_exception_text(t['exception'])}"
    if t.get("status") == "exit":
        ex = t.get("exit") or {}
        code = ex.get("code")
        if code not in (0, None):
            line = f" at line {ex['line']}" if ex.get("line") else ""
            return f"the {who} stops itself with {ex.get('how', 'exit')}({code!r}){line}"
    return None


def _out_of_memory(run: RunResult) -> bool:
    if run.status == "crashed":
        return "bad_alloc" in run.stderr_tail or "out of memory" in run.stderr_tail.lower()
    return run.status == "ran" and (run.trace or {}).get("status") == "memory"


def original_decides(run: RunResult) -> bool:
    """The run as written already makes every verdict for its file inconclusive
    (timeout, crash, not self-contained, missing framework, no CUDA): the fixed
    variants need not run. Running out of memory does not decide: the fix may not."""
    if (run.trace or {}).get("no_cuda"):
        return True
    if _failure(run, "program as written") is not None and not _out_of_memory(run):
        return True
    exc = _exception(run)
    return exc is not None and exc["type"] in _NOT_SELF_CONTAINED


def _exception(run: RunResult) -> Optional[dict]:
    t = run.trace or {}
    return t.get("exception") if t.get("status") == "exception" else None


# --- the verdict ---------------------------------------------------------------------------
def compare(original: RunResult, fixed: RunResult, fix_message: str = "", line_map: Optional[Dict[int, int]] = None) -> Tuple[str, str]:
    """(verdict, detail) for one finding; ``line_map`` takes the fixed variant's lines
    to the program's (for evidence seen only with the fix)."""
    verdict, detail = _compare(original, fixed, fix_message, line_map or {})
    mapped = []
    for run in (original, fixed):
        for m in (run.trace or {}).get("device_map") or []:
            if m not in mapped:
                mapped.append(m)
    if mapped:
        detail += f" [no GPU here: {', '.join(mapped)}]"
    synthetic = sorted({n for run in (original, fixed) for n in (run.trace or {}).get("synthetic") or []})
    if synthetic:
        detail += f" [synthetic data in place of {', '.join(synthetic)} (not on disk; never downloaded)]"
    used = sorted({n for run in (original, fixed) for n in (run.trace or {}).get("standins") or []})
    if used:
        if verdict == INCONCLUSIVE and "StandIn" in detail:
            detail = f"a value of a stand-in for a missing module ({', '.join(used)}) reaches the computation: {detail}"
        detail += described(used)
    return verdict, detail


def _compare(original: RunResult, fixed: RunResult, fix_message: str, line_map: Dict[int, int]) -> Tuple[str, str]:
    for run, who in ((original, "program as written"), (fixed, "fixed program")):
        t = run.trace or {}
        if t.get("no_cuda"):
            return INCONCLUSIVE, "no CUDA device"
    why = _failure(original, "program as written")
    if why is not None and _out_of_memory(original) and fixed.status == "ran" and _failure(fixed, "fixed program") is None and _exception(fixed) is None:
        grow = max(0, (fixed.trace or {}).get("rss_peak_kb", 0) - (fixed.trace or {}).get("rss_start_kb", 0))
        return CONFIRMED_GRAPH, f"{why}; with the fix it completes (peak memory +{grow >> 10} MB)"
    if why is not None:
        return INCONCLUSIVE, why
    ea = _exception(original)
    if ea is not None and ea["type"] in _NOT_SELF_CONTAINED:
        return INCONCLUSIVE, f"not self-contained: {_exception_text(ea)}"
    why = _failure(fixed, "fixed program")
    if why is not None:
        if ea is not None:
            why += f"; as written it raises {_exception_text(ea)}"
        return INCONCLUSIVE, why
    eb = _exception(fixed)
    with_fix = f" with the fix ({fix_message})" if fix_message else " with the fix"
    if ea is not None and eb is None:
        return CONFIRMED_ERROR, f"raises {_exception_text(ea)}; runs to completion{with_fix}"
    if ea is not None and eb is not None:
        if (ea["type"], ea.get("message"), ea.get("line")) == (eb["type"], eb.get("message"), eb.get("line")):
            return INCONCLUSIVE, f"both variants fail the same way: {_exception_text(ea)}"
        return INCONCLUSIVE, f"both variants fail: {_exception_text(ea)} as written; {_exception_text(eb)}{with_fix}"
    if eb is not None:
        return INCONCLUSIVE, f"the fix breaks the program: {_exception_text(eb)}"
    return _compare_traces(original, fixed, line_map)


# What the traces hold, in the order a tie (events without a place in program order) is broken.
_KINDS = (
    ("backward", "backward call", "grads", CONFIRMED_GRADS),
    ("grad", "autograd.grad call", "grads", CONFIRMED_GRADS),
    ("steps", "optimizer step", "params", CONFIRMED_GRADS),
    ("outputs", "forward pass", "values", CONFIRMED_OUTPUTS),
)


def _first_difference(a: dict, b: dict, line_map: Dict[int, int]) -> Optional[Tuple[str, str]]:
    """(verdict, detail) of the first difference in program order (the events' ``seq``)
    between the two traces, over gradients, parameters after steps and forward outputs."""
    found = []
    for rank, (kind, label, key, verdict) in enumerate(_KINDS):
        ea_all, eb_all = a.get(kind) or [], b.get(kind) or []
        na, nb = a["counts"][kind], b["counts"][kind]
        hit = None
        for i, (ea, eb) in enumerate(zip(ea_all, eb_all), start=1):
            text = _event_difference(ea, eb, key)
            if text is not None:
                hit = (ea.get("seq", math.inf), f"{label} #{i}{_at(ea)}: {text}", [ea], [eb], False)
                break
        if hit is None and na != nb:
            i = min(len(ea_all), len(eb_all))
            extra = ea_all[i] if i < len(ea_all) else None
            where = _at(extra) if extra else ""
            if extra is None and i < len(eb_all):
                row = line_map.get(eb_all[i].get("line"))
                where = f" (line {row})" if row else ""
            seq = extra.get("seq", math.inf) if extra else math.inf
            hit = (seq, f"{na} {label}s as written vs {nb} with the fix; the first unmatched one is #{i + 1}{where}", ea_all, eb_all, True)
        if hit is not None:
            found.append((hit[0], rank, verdict, kind) + hit[1:])
    if not found:
        return None
    _, _, verdict, kind, text, ea, eb, counted = min(found, key=lambda h: h[:2])
    if kind == "outputs":
        return verdict, f"outputs differ at {text}{_training_note(ea, eb) or _training_note(a['outputs'], b['outputs'])}"
    if kind == "steps":
        return verdict, f"parameters differ after {text}"
    if counted:
        return verdict, text
    return verdict, f"gradients differ at {text}"


def _event_difference(ea: dict, eb: dict, key: str) -> Optional[str]:
    """How two events' tensors differ, matched by name where the trace names them
    (a parameter's name in its module, the program's variable), else by position:
    the tensor that differs most, by how much, and how many differ."""
    va, vb = ea.get(key) or [], eb.get(key) or []
    names_a, names_b = ea.get("names"), eb.get("names")
    if names_a and names_b and len(names_a) == len(va) and len(names_b) == len(vb):
        da, db = dict(zip(names_a, va)), dict(zip(names_b, vb))
        only_a = [n for n in names_a if n not in db]
        only_b = [n for n in names_b if n not in da]
        if only_a or only_b:
            if len(va) == len(vb) and all(_same_summary(sa, sb) for sa, sb in zip(va, vb)):
                return None  # (the same gradients, named otherwise: the fix binds a name to the leaf itself)
            parts = []
            if only_a:
                parts.append(f"{', '.join(map(_q, only_a[:3]))} only as written")
            if only_b:
                parts.append(f"{', '.join(map(_q, only_b[:3]))} only with the fix")
            return "; ".join(parts)
        pairs = [(n, da[n], db[n]) for n in names_a]
    else:
        if len(va) != len(vb):
            return f"{len(va)} tensors vs {len(vb)} with the fix"
        pairs = [(f"tensor {j}", sa, sb) for j, (sa, sb) in enumerate(zip(va, vb))]
    differing = [(n, sa, sb) for n, sa, sb in pairs if not _same_summary(sa, sb)]
    if not differing:
        return None
    worst = max(differing, key=lambda d: _max_delta(d[1], d[2])[0])
    how = f"{len(differing)} of {len(pairs)} differ; most: " if len(pairs) > 1 else ""
    return f"{how}{_tensor_difference(*worst)}"


def _q(name: str) -> str:
    return f"`{name}`"


def _max_delta(sa: Optional[dict], sb: Optional[dict]) -> Tuple[float, bool]:
    """(largest |difference| over the values both summaries keep, whether that covers
    every value); (inf, True) where one is missing or the shapes differ."""
    if sa is None or sb is None or sa.get("shape") != sb.get("shape"):
        return math.inf, True
    ha, hb = sa.get("head"), sb.get("head")
    if not ha or not hb or len(ha) != len(hb):
        return -1.0, False
    worst = 0.0
    for x, y in zip(ha, hb):
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return math.inf, True
            continue
        worst = max(worst, abs(x - y))
    numel = math.prod(sa.get("shape") or [1])
    return worst, len(ha) >= numel


def _tensor_difference(name: str, sa: Optional[dict], sb: Optional[dict]) -> str:
    if sa is None or sb is None:
        return f"{_q(name)}: {_fmt_summary(sa)} as written vs {_fmt_summary(sb)} with the fix"
    if sa.get("shape") != sb.get("shape"):
        return f"{_q(name)}: shape {_fmt_summary(sa)} as written vs {_fmt_summary(sb)} with the fix"
    delta, whole = _max_delta(sa, sb)
    sums = f"{_fmt_summary(sa)} as written vs {_fmt_summary(sb)} with the fix"
    if delta == math.inf:
        return f"{_q(name)}: non-finite values differ ({sums})"
    if delta < 0:
        return f"{_q(name)}: {sums}"
    if delta <= ATOL and not whole:
        return f"{_q(name)}: {sums} (its first {len(sa['head'])} values agree)"
    bound = "" if whole else f" (over its first {len(sa['head'])} values)"
    return f"{_q(name)}: max |Δ| {delta:.3g}{bound}; {sums}"


def _compare_traces(original: RunResult, fixed: RunResult, line_map: Dict[int, int]) -> Tuple[str, str]:
    a, b = original.trace, fixed.trace
    ca, cb = a["counts"], b["counts"]
    notes = ""
    first = _first_difference(a, b, line_map)
    if first is not None:
        return first[0], first[1] + notes

    printed = stdout_difference(original.stdout, fixed.stdout)

    # graphs kept alive / memory
    evidence = []
    if ca["outputs_recorded"] > cb["outputs_recorded"]:
        evidence.append(f"{ca['outputs_recorded']} of {ca['outputs']} forward passes recorded a graph as written vs {cb['outputs_recorded']} with the fix")
    ga, gb = a.get("graph") or {}, b.get("graph") or {}
    if ga.get("tensors_with_grad_fn", 0) > gb.get("tensors_with_grad_fn", 0):
        evidence.append(f"{ga['tensors_with_grad_fn']} tensors with grad_fn alive at the end vs {gb.get('tensors_with_grad_fn', 0)}")
    grow_a = max(0, a.get("rss_peak_kb", 0) - a.get("rss_start_kb", 0))
    grow_b = max(0, b.get("rss_peak_kb", 0) - b.get("rss_start_kb", 0))
    if grow_a - grow_b >= MEMORY_MIN_KB and grow_a >= MEMORY_RATIO * grow_b:
        evidence.append(f"peak memory +{grow_a >> 10} MB as written vs +{grow_b >> 10} MB with the fix")
    if evidence:
        extra = f" (printed output differs only where it shows autograd state: {printed})" if printed else ""
        return CONFIRMED_GRAPH, "values equal, but " + "; ".join(evidence) + extra + notes

    if printed is not None:
        return CONFIRMED_OUTPUTS, f"printed output differs: {printed}{notes}"

    seen = []
    if ca["backward"] or ca["grad"]:
        seen.append(f"gradients of {ca['backward'] + ca['grad']} backward/grad calls")
    if ca["steps"]:
        seen.append(f"parameters after {ca['steps']} optimizer steps")
    if ca["outputs"]:
        seen.append(f"{ca['outputs']} forward outputs")
    seen.append("printed output")
    more = ""
    if cb["outputs_recorded"] > ca["outputs_recorded"]:
        more = f"; the fix only records {cb['outputs_recorded'] - ca['outputs_recorded']} more forward passes"
    return REFUTED, f"no observable difference with the fix: {', '.join(seen)} identical{more}; the finding is harmless here{notes}"


def _training_note(a: List[dict], b: List[dict]) -> str:
    for ea, eb in zip(a, b):
        if "training" in ea and ea.get("training") != eb.get("training"):
            state = lambda e: "training mode" if e.get("training") else "predict mode"  # noqa: E731
            return f" ({state(ea)} as written, {state(eb)} with the fix: Dropout/BatchNorm)"
    return ""
