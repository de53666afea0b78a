"""The lint worker: one background thread that hands the server's lints to a child
process, so that the message loop keeps answering requests (hover, code actions) while a
long lint runs. (A lint on a thread of the server's own process would not do: the
engine holds the GIL for stretches of 100-300 ms -- LibCST's native parser, the garbage
collector -- and every answer waits for them.) The child also bounds the damage of a
document the engine chokes on: one over the time budget is stopped by ending the child,
and a child that dies (out of memory, a crash) costs that lint, not the server.

Jobs are keyed by document (or notebook) URI and only the newest job per key is kept:
submitting a job for a key replaces the one still queued for it, so a burst of changes
costs at most the lint already running plus one more. A lint that is running cannot be
stopped but by its time budget (the engine has no cancellation points and need not know
about editors); the server drops its result when the document moved on meanwhile
(``Server.submit``). Pure: no pygls, no event loop.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import sys
import threading
from collections import OrderedDict
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Optional, Tuple

log = logging.getLogger("scopelint.lsp")

Deliver = Callable[[object, Optional[BaseException]], None]
Job = Tuple[Callable, tuple]  # a function of a module and its arguments: what a child can run


class TooSlow(Exception):
    """A lint ran past the time budget (and was stopped)."""

    def __init__(self, budget_s: float):
        super().__init__(f"the analysis took longer than {budget_s:g} s")
        self.budget_s = budget_s


def inline(job: Job, budget_s: float = 0):
    fn, args = job
    return fn(*args)


def ready(preload=()) -> int:
    """Run first in a new child: what every lint needs is imported (the engine, every rule,
    LibCST, lsprotocol: a second or two), so that no lint's time budget pays for it."""
    import importlib

    from scopelint.rules import ALL_RULES

    for name in preload:  # (the modules of the jobs, which the user of the runner knows)
        importlib.import_module(name)

    for code in list(ALL_RULES):
        ALL_RULES.get(code)
    return os.getpid()


def _child_init() -> None:
    # The server's stdout is its protocol channel: nothing the child prints may reach it.
    try:
        os.dup2(2, 1)
    except OSError:
        pass
    sys.stdout = sys.stderr


def _serve(conn, preload) -> None:
    """The child: import what the lints need, say so, then run each job it is sent and
    send back ``(True, result)`` or ``(False, exception)``, until the pipe closes."""
    _child_init()
    try:
        conn.send((True, ready(preload)))
    except BaseException as exc:  # (an import failed: each job will say so)
        conn.send((False, exc))
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = (True, fn(*args))
        except BaseException as exc:  # MemoryError, RecursionError, a bug: the caller's to report
            answer = (False, exc)
        try:
            conn.send(answer)
        except Exception as exc:  # (a result or exception that does not pickle)
            conn.send((False, RuntimeError(f"{type(answer[1]).__name__}: {exc}")))


class ProcessRunner:
    """Runs jobs in one child process (started when first needed, and again after it
    died or was stopped), over a pipe. (Not a ``ProcessPoolExecutor``: its queues hold
    five named semaphores per pool, which a child stopped for its budget left to
    multiprocessing's resource tracker to complain about at exit. A pipe is two file
    descriptors; the child is a daemon, killed and reaped by ``close``.)"""

    def __init__(self, preload=()):
        self.preload = tuple(preload)  # modules the child imports before its first job
        self._child = None  # (process, connection, ready: whether its first message was read)
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()  # a job's budget never counts another's time

    def start(self):
        with self._lock:
            if self._child is None or not self._child[0].is_alive():
                if self._child is not None:
                    self._end(self._child)
                # spawn: the server has threads (pygls's, this worker), which fork mixes badly with.
                ctx = multiprocessing.get_context("spawn")
                ours, theirs = ctx.Pipe()
                proc = ctx.Process(target=_serve, args=(theirs, self.preload), name="scopelint-lsp-lint", daemon=True)
                proc.start()
                theirs.close()
                self._child = [proc, ours, False]
            return self._child

    def _answer(self, child, timeout: Optional[float]):
        """The child's next answer; None when ``timeout`` passed first. Raises
        ``BrokenProcessPool`` when the child died."""
        proc, conn, _ = child
        if not multiprocessing.connection.wait([conn, proc.sentinel], timeout):
            return None
        try:
            if conn.poll():
                return conn.recv()
        except (EOFError, OSError):
            pass
        raise BrokenProcessPool(f"the lint process ended (exit status {proc.exitcode})")

    def __call__(self, job: Job, budget_s: float = 0):
        with self._one_at_a_time:
            child = self.start()
            try:
                if not child[2]:  # the child is up: its start is not the lint's time
                    self._answer(child, None)
                    child[2] = True
                child[1].send(job)
                answer = self._answer(child, budget_s or None)
            except (BrokenProcessPool, OSError, EOFError) as exc:
                self.close()
                if isinstance(exc, BrokenProcessPool):
                    raise
                raise BrokenProcessPool(f"the lint process is gone: {exc}") from exc
            if answer is None:
                self.close()
                raise TooSlow(budget_s)
            ok, value = answer
            if not ok:
                raise value
            return value

    def warm_up(self) -> None:
        """Start the child now (it imports the engine: about a second), not at the first lint."""
        try:
            self.start()
        except Exception:  # pragma: no cover - it will be tried again on the first lint
            log.debug("cannot start the lint process", exc_info=True)

    @staticmethod
    def _end(child) -> None:
        proc, conn, _ = child
        try:
            proc.kill()
            proc.join(5)
        except Exception:
            pass
        try:
            conn.close()
        except Exception:
            pass
        try:
            proc.close()
        except Exception:
            pass

    def close(self) -> None:
        """Kill the child and reap it (a job it runs ends with ``BrokenProcessPool``)."""
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            self._end(child)


class Worker:
    def __init__(self, runner: Callable = inline, name: str = "scopelint-lsp-worker"):
        self.name = name
        self.runner = runner
        self._jobs: "OrderedDict[str, Tuple[Job, float, Deliver]]" = OrderedDict()
        self._cond = threading.Condition()
        self._thread: Optional[threading.Thread] = None
        self._stopped = False
        self.running: Optional[str] = None  # the key whose job runs now

    def submit(self, key: str, job: Job, budget_s: float, deliver: Deliver) -> None:
        """Run ``job`` (with the runner: in the child process), then call
        ``deliver(result, exception)`` on the worker thread; a job still queued for
        ``key`` is replaced (it never runs). ``budget_s``: the job's time budget (0: none)."""
        with self._cond:
            if self._stopped:
                return
            self._jobs.pop(key, None)
            self._jobs[key] = (job, budget_s, deliver)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._cond.notify()

    def discard(self, key: str) -> None:
        """Forget the job queued for ``key`` (one running goes on; its result is the
        caller's to ignore)."""
        with self._cond:
            self._jobs.pop(key, None)

    def queued(self, key: str) -> bool:
        with self._cond:
            return key in self._jobs

    def stop(self, timeout: float = 0) -> None:
        """Run nothing more; wait up to ``timeout`` seconds for the running job."""
        with self._cond:
            self._stopped = True
            self._jobs.clear()
            self._cond.notify_all()
            thread = self._thread
        close = getattr(self.runner, "close", None)
        if close is not None:
            close()
        if thread is not None and timeout > 0:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                key, (job, budget_s, deliver) = self._jobs.popitem(last=False)
                self.running = key
            result, error = None, None
            try:
                result = self.runner(job, budget_s)
            except BaseException as exc:  # MemoryError, RecursionError, a bug: reported, never fatal
                error = exc
            finally:
                self.running = None
            try:
                deliver(result, error)
            except Exception:  # pragma: no cover - the loop is gone (shutting down)
                log.debug("cannot deliver the lint of %s", key, exc_info=True)
