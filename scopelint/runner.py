"""Check many files: read, lint each text (``engine.lint_source``, in parallel workers),
keep the source lines the report shows."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from scopelint.engine import Settings, lint_source
from scopelint.files import Source, decode, read_source
from scopelint.finding import Finding

# Only \n, \r\n and \r end a line for Python (what the report shows of a file).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class FileResult:
    filename: str  # as shown to the user
    path: Optional[str]  # on disk; None for stdin
    findings: List[Finding] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    lines: Dict[Tuple[Optional[int], int], str] = field(default_factory=dict)  # shown source lines
    source: Optional[str] = None  # kept only when asked (fixing)
    encoding: str = "utf-8"  # of the file on disk (or stdin), to write fixes back


def display_name(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith(".." + os.sep + "..") else rel


def check_source(source: Source, filename: str, path: Optional[str], settings: Settings, keep_source: bool = False) -> FileResult:
    out = FileResult(filename, path)
    if source.error is not None:
        out.findings.append(source.error)
        return out
    is_nb = filename.endswith(".ipynb")
    try:
        result = lint_source(source.text, filename, settings, notebook=is_nb)
        nb = result.notebook
    except Exception as exc:  # never let one file take the run down
        out.errors.append(f"{filename}: internal error: {type(exc).__name__}: {exc}")
        return out
    out.findings = sorted(result.findings, key=lambda f: (f.cell or 0, f.start, f.code))
    out.errors = result.errors
    if keep_source:
        out.source = source.text
        out.encoding = source.encoding
    if out.findings:
        if nb is None:
            # Only \n, \r\n and \r end a line for Python (str.splitlines also splits on
            # form feeds and U+2028, which would shift the shown source line).
            lines = _LINE_BREAK.split(source.text)
            for f in out.findings:
                if 1 <= f.start[0] <= len(lines):
                    out.lines[(None, f.start[0])] = lines[f.start[0] - 1]
        else:
            from scopelint.notebook import locate_in_file

            try:  # the .ipynb's own lines, for SARIF and GitHub (without them: the cell's)
                locate_in_file(source.text, out.findings)
            except Exception:  # never let one file take the run down
                pass
            for f in out.findings:
                if f.cell is not None:
                    cell_lines = nb.cell_lines(f.cell)
                    if 1 <= f.start[0] <= len(cell_lines):
                        out.lines[(f.cell, f.start[0])] = cell_lines[f.start[0] - 1]
    return out


_CACHE = None  # a scopelint.cache.Cache while check_paths runs with one (also in its workers)


def _set_cache(cache) -> None:
    global _CACHE
    _CACHE = cache


def _check_path(task) -> FileResult:
    path, filename, settings, keep = task
    data = _CACHE.read_bytes(path) if _CACHE is not None and not keep else None
    if data is None:
        return check_source(read_source(Path(path), filename), filename, path, settings, keep)
    result = check_source(decode(data, filename), filename, path, settings, keep)
    _CACHE.put(_CACHE.key(data, settings, filename), result)  # keyed by the bytes linted
    return result


def check_stdin(data: bytes, filename: str, settings: Settings, keep_source: bool = False) -> FileResult:
    with _collector_paused():  # one file: its import of LibCST and its trees
        return check_source(decode(data, filename), filename, None, settings, keep_source)


def _check_many(tasks) -> List[FileResult]:
    out = []
    for t in tasks:
        out.append(_check_path(t))
        _give_back_memory()
    return out


def _give_back_memory() -> None:
    """Free what one file's checking left in reference cycles (a batch runs with the
    collector off, see ``_batch_gc``) and, once the process holds more than
    ``_TRIM_ABOVE``, return the C heap's free memory to the system (glibc keeps it), so
    that a worker does not hold on to its largest file's peak. (Not after every file:
    the pages given back are faulted in again by the next one, ~10% of a run's CPU.)"""
    gc.collect(0)
    trimmer = _Trimmer.get()
    if trimmer is not None:
        trimmer.maybe_trim()


class _Trimmer:
    """glibc's ``malloc_trim``, called when the process's resident memory (read from
    ``/proc/self/statm``; where it cannot be read, always) is over ``_TRIM_ABOVE``."""

    _current: "Optional[_Trimmer] | bool" = None  # False: no malloc_trim here

    def __init__(self, trim, statm, page: int):
        self.trim, self.statm, self.page = trim, statm, page

    @classmethod
    def get(cls) -> "Optional[_Trimmer]":
        if cls._current is None:
            cls._current = cls._load()
        return cls._current or None

    @classmethod
    def _load(cls) -> "_Trimmer | bool":
        try:
            import ctypes

            trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (ImportError, OSError, AttributeError):
            return False
        try:
            page = os.sysconf("SC_PAGE_SIZE")
            statm = open("/proc/self/statm", "rb", buffering=0)  # (this process's: see forget)
        except (OSError, ValueError, AttributeError):
            page, statm = 0, None
        return cls(trim, statm, page)

    @classmethod
    def forget(cls) -> None:
        """In a forked child: /proc/self was resolved when the parent opened it."""
        if isinstance(cls._current, _Trimmer) and cls._current.statm is not None:
            cls._current.statm.close()
        cls._current = None

    def resident(self) -> Optional[int]:
        if self.statm is None:
            return None
        try:
            self.statm.seek(0)
            return int(self.statm.read().split()[1]) * self.page
        except (OSError, ValueError, IndexError):
            return None

    def maybe_trim(self) -> None:
        resident = self.resident()
        if resident is None or resident > _TRIM_ABOVE:
            self.trim(0)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Trimmer.forget)
_TRIM_ABOVE = 192 * 1024 * 1024  # resident bytes


def _crashed(task) -> FileResult:
    path, filename, _, _ = task
    return FileResult(filename, path, errors=[f"{filename}: internal error: the checker process crashed on this file"])


def _preload() -> None:
    """Import what linting a file imports (LibCST, the analysis, every rule) in this
    process before the pool forks its workers, which then start with it: each worker
    imported it alone (~1.4 G instructions, ~0.5 s of CPU a worker, 10% of a run's
    instructions on a 230-file sample of torch's tree). Nothing is imported where the
    platform does not fork (the workers would import it anyway)."""
    import multiprocessing

    if multiprocessing.get_start_method() != "fork":
        return
    import scopelint.core.flow  # noqa: F401  (libcst and the core with it)
    import scopelint.core.lower  # noqa: F401
    import scopelint.positions  # noqa: F401
    from scopelint.rules import ALL_RULES  # (the rules import the fix helpers)

    for code in ALL_RULES:
        ALL_RULES[code]


def _worker_init(cache, parent: int) -> None:
    _die_with_parent(parent)
    _set_cache(cache)
    _batch_gc()


def _die_with_parent(parent: int) -> None:
    """A worker never outlives the run that started it (SIGTERM, SIGKILL or a crash of
    the parent leave no workers behind, busy for minutes on a large file: they inherit
    the task queue's write end, so they never see it close). On Linux the kernel kills
    the worker when the parent dies (``PR_SET_PDEATHSIG``); elsewhere a daemon thread
    watches the parent's pid. Either way, a parent already gone ends the worker now."""
    armed = False
    try:
        import ctypes
        import signal

        armed = ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0) == 0  # PR_SET_PDEATHSIG
    except (ImportError, OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the kernel was told
        os._exit(1)
    if armed:
        return

    def watch():
        import time

        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="scopelint-parent-watch", daemon=True).start()


def _batch_gc() -> None:
    """A batch run builds and drops millions of small objects per file, few of them in
    cycles: no automatic collection (about 13% faster), one after each file instead
    (``_give_back_memory``), and never scan what was there before."""
    gc.freeze()
    gc.disable()


@contextlib.contextmanager
def _collector_paused():
    """``_batch_gc`` for a while, in this process (the editor path, ``--jobs 1``): an
    editor's one file runs ~10% faster, LibCST's import included."""
    enabled = gc.isenabled()
    _batch_gc()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def _run_pool(chunks: List[list], jobs: int) -> Tuple[List[Optional[List[FileResult]]], bool]:
    """Each chunk's results, or None where the pool broke before it was done."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    out: List[Optional[List[FileResult]]] = [None] * len(chunks)
    broken = False
    _preload()
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init, initargs=(_CACHE, os.getpid()))
    try:
        futures = []
        for chunk in chunks:
            try:
                futures.append(pool.submit(_check_many, chunk))
            except BrokenProcessPool:  # a worker died before every chunk was handed out
                broken = True
                break
        for i, fut in enumerate(futures):
            try:
                out[i] = fut.result()
            except BrokenProcessPool:  # a worker died (e.g. a native crash)
                broken = True
    except BaseException:  # Ctrl-C, SIGTERM made an exception: stop the workers now, not after the queue
        _kill_workers(pool)
        global POOL_INTERRUPTED
        POOL_INTERRUPTED = True
        raise
    pool.shutdown(wait=True)
    return out, broken


# Set when a run's process pool was stopped by an exception (Ctrl-C): the CLI then exits
# at once, as SIGTERM does (a normal exit joins the pool's manager thread, which can wait
# on a task queue no worker reads any more).
POOL_INTERRUPTED = False


def _kill_workers(pool) -> None:
    """End ``pool``'s workers at once (``shutdown`` would let each finish its chunk). Also
    every other child of this run: a worker being started when Ctrl-C came is not yet in
    the pool's table, and the exit would wait for its chunk (the pool's manager thread
    is joined at exit)."""
    import multiprocessing

    _quiet_thread(getattr(pool, "_executor_manager_thread", None))
    procs = list((getattr(pool, "_processes", None) or {}).values())
    try:
        procs += [p for p in multiprocessing.active_children() if p not in procs]
    except (OSError, ValueError):
        pass
    for proc in procs:
        try:
            proc.kill()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def _quiet_thread(thread) -> None:
    """An exception in ``thread`` (the killed pool's manager thread, which may trip over
    the workers' deaths and the cancelled queue) is not printed: the run is ending on
    Ctrl-C, and the half-printed traceback the exit cut short was the last thing the
    user saw (1 run in ~40: issue 24's battery). Other threads' exceptions still are."""
    if thread is None:
        return
    previous = threading.excepthook

    def hook(args, previous=previous):
        if args.thread is not thread:
            previous(args)

    threading.excepthook = hook


def check_paths(tasks: List[Tuple[str, str, Settings, bool]], jobs: int, cache=None) -> List[FileResult]:
    """``tasks``: (path, display name, settings, keep source). Order is preserved.

    With a ``cache`` (scopelint.cache.Cache), files whose entry is there are not
    linted; the others are, and their results are stored.
    """
    if cache is None and jobs > 1 and len(tasks) >= 4:
        return _check_paths_overlapped(tasks, jobs)
    tasks = _in_program(tasks, cache)
    if cache is None:
        return _check_paths(tasks, jobs)
    results: List[Optional[FileResult]] = [None if t[3] else cache.lookup(t[0], t[1], t[2]) for t in tasks]
    todo = [t for t, r in zip(tasks, results) if r is None]
    _set_cache(cache)
    try:
        fresh = iter(_check_paths(todo, jobs))
    finally:
        _set_cache(None)
    return [r if r is not None else next(fresh) for r in results]


def _check_paths_overlapped(tasks: List[Tuple[str, str, Settings, bool]], jobs: int) -> List[FileResult]:
    """``_check_paths(_in_program(tasks), jobs)``, with the workers already linting while
    this process reads the program (``scopelint.project``: ~0.6 s alone on torch's tree,
    the other cores idle). They start on the files as if each were told nothing of the
    others, largest first, which is what most files are told: once the program is read,
    the chunks not yet started are cancelled and handed out again with what each file is
    told, and a finished file that is told something is linted again. A file's result is
    the one its own settings give (a file told nothing has the settings it was linted with),
    so the findings are those of ``_in_program`` then ``_check_paths``. Whatever a broken
    pool did not return is retried as ``_check_paths`` retries it (``_retry``)."""
    from concurrent.futures import CancelledError, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    order, chunks = _chunks(tasks, jobs)
    spans, at = [], 0
    for chunk in chunks:
        spans.append(order[at:at + len(chunk)])
        at += len(chunk)
    got: Dict[int, FileResult] = {}
    _preload()
    try:
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init, initargs=(_CACHE, os.getpid()))
    except (OSError, RuntimeError, ValueError):
        return _check_paths(_in_program(tasks), jobs)
    try:
        futures = []
        broken = False
        try:
            for chunk in chunks:
                futures.append(pool.submit(_check_many, chunk))
        except BrokenProcessPool:
            broken = True
        except (OSError, RuntimeError):  # no processes: the program first, then as without
            broken = True
        told = _in_program(tasks)
        for fut in futures:
            fut.cancel()
        # The cancelled chunks at once (waiting for the running ones first would leave a
        # worker idle while another ends its chunk), then what the others linted again.
        later: List[Tuple[list, object]] = []
        if not broken:
            broken = _submit_all(pool, [i for span, fut in zip(spans, futures) if fut.cancelled() for i in span], told, jobs, later)
        redo = []
        for span, fut in zip(spans, futures):
            if fut.cancelled():
                continue
            try:
                results = fut.result()
            except (BrokenProcessPool, CancelledError):
                broken = True
                continue
            for i, r in zip(span, results):
                if told[i] is tasks[i]:  # (told nothing: linted with its own settings)
                    got[i] = r
                else:
                    redo.append(i)
        if redo and not broken:
            broken = _submit_all(pool, redo, told, jobs, later)
        for span, fut in later:
            try:
                got.update(zip(span, fut.result()))
            except BrokenProcessPool:
                continue
    except BaseException:  # Ctrl-C, SIGTERM made an exception: stop the workers now (as ``_run_pool``)
        _kill_workers(pool)
        global POOL_INTERRUPTED
        POOL_INTERRUPTED = True
        raise
    pool.shutdown(wait=True)
    missing = [i for i in range(len(tasks)) if i not in got]
    if missing:  # (a worker died: retried in worker processes, as ``_check_paths`` does)
        try:
            got.update(zip(missing, _retry([told[i] for i in missing], jobs)))
        except (OSError, RuntimeError):  # no processes available: do it here
            got.update((i, _check_path(told[i])) for i in missing)
    return [got[i] for i in range(len(tasks))]


def _submit_all(pool, indices: List[int], tasks: list, jobs: int, into: list) -> bool:
    """Hand ``tasks[i]`` for each of ``indices`` to ``pool`` in chunks (``_chunks``), each
    as (its indices, its future) into ``into``; True when the pool broke meanwhile."""
    from concurrent.futures.process import BrokenProcessPool

    if not indices:
        return False
    sub_order, sub_chunks = _chunks([tasks[i] for i in indices], jobs)
    at = 0
    try:
        for chunk in sub_chunks:
            into.append(([indices[j] for j in sub_order[at:at + len(chunk)]], pool.submit(_check_many, chunk)))
            at += len(chunk)
    except (BrokenProcessPool, OSError, RuntimeError):
        return True
    return False


def _in_program(tasks: List[Tuple[str, str, Settings, bool]], cache=None) -> List[Tuple[str, str, Settings, bool]]:
    """The tasks with what each file is told of the others (``scopelint.project``): the
    files of one run are one program (its summaries kept in ``cache``)."""
    from scopelint.project import contexts

    try:
        found = contexts([t[0] for t in tasks], [t[2].framework for t in tasks], lambda p: display_name(Path(p)), store=cache,
                         inference=[t[2].inference_functions for t in tasks])
    except Exception:  # (the program cannot be read: each file on its own, as before)
        return tasks
    return [t if c is None else (t[0], t[1], replace(t[2], project=c), t[3]) for t, c in zip(tasks, found)]


def _chunks(tasks: list, jobs: int) -> Tuple[List[int], List[list]]:
    """The tasks in chunks for the workers (the order the chunks list them in: indices
    into ``tasks``). Largest files first, so that no large file starts last and keeps one
    worker busy while the others idle (torch's 11,000-line test file takes ~3 s); a chunk
    holds up to 16 files and about 1/(16 x jobs) of all bytes, so the chunks at the end
    are many and small."""
    sizes = []
    for t in tasks:
        try:
            sizes.append(os.path.getsize(t[0]))
        except (OSError, TypeError, ValueError):
            sizes.append(0)
    order = sorted(range(len(tasks)), key=lambda i: -sizes[i])
    budget = max(1, sum(sizes) // (16 * jobs))
    count = max(1, min(16, len(tasks) // (jobs * 4)))
    chunks: List[list] = [[]]
    held = 0
    for i in order:
        if chunks[-1] and (len(chunks[-1]) >= count or held + sizes[i] > budget):
            chunks.append([])
            held = 0
        chunks[-1].append(tasks[i])
        held += sizes[i]
    return order, chunks


def _retry(tasks: List[Tuple[str, str, Settings, bool]], jobs: int) -> List[FileResult]:
    """The files a broken pool did not return: one per chunk, so that one crash loses one
    file, then each still missing alone in its own process (a crash now is this file's).
    Never in this process (a crash here would end the run)."""
    again, _ = _run_pool([[t] for t in tasks], jobs)
    out = []
    for t, res in zip(tasks, again):
        if res is None:
            alone, _ = _run_pool([[t]], 1)
            res = alone[0]
        out.append(res[0] if res is not None else _crashed(t))
    return out


def _check_paths(tasks: List[Tuple[str, str, Settings, bool]], jobs: int) -> List[FileResult]:
    """``tasks``: (path, display name, settings, keep source). Order is preserved.

    A worker that dies (a crash in native code) costs only the file that killed it:
    the unfinished files are checked again, in isolation once the culprit is near.
    """
    if jobs <= 1 or len(tasks) < 4:
        with _collector_paused():
            return _check_many(tasks)
    order, chunks = _chunks(tasks, jobs)
    try:
        done, broken = _run_pool(chunks, jobs)
        if broken:  # again, one file per chunk, so that one crash loses one file
            retry = [t for chunk, res in zip(chunks, done) if res is None for t in chunk]
            fixed = {id(t): r for t, r in zip(retry, _retry(retry, jobs))}
            done = [res if res is not None else [fixed[id(t)] for t in chunk] for chunk, res in zip(chunks, done)]
        results: List[FileResult] = [None] * len(tasks)  # type: ignore[list-item]
        for i, r in zip(order, (r for res in done for r in res)):
            results[i] = r
        return results
    except (OSError, RuntimeError):  # no processes available: do it here
        return [_check_path(t) for t in tasks]
