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

import concurrent.futures
import logging
import multiprocessing
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


class ProcessRunner:
    """Runs jobs in one child process (started when first needed, and again after it
    died or was stopped)."""

    def __init__(self, preload=()):
        self.preload = tuple(preload)  # modules the child imports before its first job
        self._pool: Optional[concurrent.futures.ProcessPoolExecutor] = None
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()  # a job's budget never counts another's time

    def start(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn: the server has threads (pygls's, this worker), which fork mixes badly with.
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_child_init
                )
            return self._pool

    def __call__(self, job: Job, budget_s: float = 0):
        fn, args = job
        with self._one_at_a_time:
            pool = self.start()
            try:
                pool.submit(ready, self.preload).result()  # the child is up: its start is not the lint's time
                future = pool.submit(fn, *args)
                return future.result(timeout=budget_s or None)
            except concurrent.futures.TimeoutError:
                self.close()
                raise TooSlow(budget_s) from None
            except BrokenProcessPool:
                self.close()
                raise

    def warm_up(self) -> None:
        """Start the child now (it imports the engine: about a second), not at the first lint."""
        try:
            self.start().submit(ready, self.preload)
        except Exception:  # pragma: no cover - it will be tried again on the first lint
            log.debug("cannot start the lint process", exc_info=True)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        for proc in list(getattr(pool, "_processes", {}).values()):
            try:
                proc.kill()
            except Exception:
                pass
        pool.shutdown(wait=False, cancel_futures=True)


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
