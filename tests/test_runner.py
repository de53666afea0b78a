"""What a batch worker does between files (scopelint.runner)."""

from __future__ import annotations

import io
import os

import pytest

from scopelint import runner
from scopelint.engine import Settings


class _Statm(io.BytesIO):
    """/proc/self/statm's fields: size, resident (pages), ..."""

    def __init__(self, resident_pages: int):
        super().__init__(f"100000 {resident_pages} 0 0 0 0 0\n".encode())


def _trimmer(statm, calls):
    return runner._Trimmer(lambda pad: calls.append(pad), statm, 4096)


def test_the_heap_is_given_back_only_over_the_threshold():
    calls = []
    over = runner._TRIM_ABOVE // 4096 + 1
    _trimmer(_Statm(over - 2), calls).maybe_trim()
    assert calls == []
    _trimmer(_Statm(over), calls).maybe_trim()
    assert calls == [0]


def test_without_a_readable_statm_the_heap_is_given_back_after_every_file():
    calls = []
    _trimmer(None, calls).maybe_trim()
    broken = _Statm(5)
    broken.close()
    _trimmer(broken, calls).maybe_trim()
    assert calls == [0, 0]


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/statm"), reason="needs fork and /proc")
def test_a_forked_worker_reads_its_own_memory(monkeypatch):
    monkeypatch.setattr(runner._Trimmer, "_current", None)
    parent = runner._Trimmer.get()
    assert parent is not None and parent.resident() > 0
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its trimmer is its own, reading its own statm
        try:
            child = runner._Trimmer.get()
            ok = child is not parent and child.statm is not parent.statm and child.resident() > 0
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"1"
    os.waitpid(pid, 0)
    assert not parent.statm.closed
    parent.statm.close()


def test_chunks_hand_out_every_file_once_largest_first(tmp_path):
    sizes = [10] * 17 + [2500] + [10] * 10 + [7000] + [10] * 8 + [900, 0]
    tasks = []
    for i, n in enumerate(sizes):
        path = tmp_path / f"f{i}.py"
        path.write_text("#" * n)
        tasks.append((str(path), f"f{i}.py", None, False))
    tasks.append((str(tmp_path / "missing.py"), "missing.py", None, False))  # sized 0
    order, chunks = runner._chunks(tasks, 2)
    assert sorted(order) == list(range(len(tasks)))
    assert [t for chunk in chunks for t in chunk] == [tasks[i] for i in order]
    # over 1/32 of all bytes: a chunk alone, the largest first; then up to 40 // 8 files
    assert chunks[:3] == [[tasks[28]], [tasks[17]], [tasks[37]]]
    assert [len(c) for c in chunks[3:]] == [5] * 7 + [2]


def test_parallel_results_come_back_in_the_order_of_the_tasks(tmp_path):
    # Sizes not in name order: chunks are handed out largest first, results are not.
    tasks = []
    for i in range(12):
        padding = "\n" * ((i * 7919) % 13 * 200)
        (tmp_path / f"f{i:02d}.py").write_text(f"import torch\n{padding}" + "with torch.no_grad:\n    pass\n" * (i + 1))
        tasks.append((str(tmp_path / f"f{i:02d}.py"), f"f{i:02d}.py", Settings(), False))
    results = runner.check_paths(tasks, 2)
    assert [r.filename for r in results] == [t[1] for t in tasks]
    assert [len(r.findings) for r in results] == list(range(1, 13))


_NO_GRAD_HELPER = "import torch\n\n\n@torch.no_grad()\ndef run_model(model, x):\n    return model(x)\n"
_TRAIN = """import torch
from torch import nn
from utils import run_model

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    opt.zero_grad()
    loss = nn.functional.cross_entropy(run_model(model, x), y)
    loss.backward()
    opt.step()
"""


def _program(tmp_path):
    """Files told something by the others (``train*.py`` call ``utils.run_model``, which
    runs under ``no_grad``: SL101 only with the program) and files told nothing."""
    (tmp_path / "utils.py").write_text(_NO_GRAD_HELPER)
    tasks = []
    for i in range(6):
        (tmp_path / f"train{i}.py").write_text(_TRAIN + "\n" * i)
        (tmp_path / f"alone{i}.py").write_text("import torch\n" + "with torch.no_grad:\n    pass\n" * (i + 1))
    for path in sorted(tmp_path.glob("*.py")):
        tasks.append((str(path), path.name, Settings(), False))
    return tasks


def _seen(results):
    return [(r.filename, [(f.code, f.start, f.message) for f in r.findings], r.errors) for r in results]


@pytest.mark.parametrize("slow_program", [False, True])
def test_workers_started_before_the_program_is_read_give_its_findings(tmp_path, monkeypatch, slow_program):
    """``--no-cache --jobs N``: the workers lint while the program is read; what they
    linted of a file the program tells something is linted again with it."""
    tasks = _program(tmp_path)
    serial = _seen(runner.check_paths(tasks, 1))
    assert [f[0] for name, found, _ in serial for f in found if name.startswith("train")] == ["SL101"] * 6
    if slow_program:  # every speculative chunk is done before the program is known
        import time

        real = runner._in_program

        def slow(*args, **kwargs):
            time.sleep(3)
            return real(*args, **kwargs)

        monkeypatch.setattr(runner, "_in_program", slow)
    assert _seen(runner.check_paths(tasks, 2)) == serial


def test_a_killed_pools_manager_thread_dies_quietly(monkeypatch, capsys):
    """Issue 24's battery: on Ctrl-C the pool's manager thread could raise while the run
    exited, leaving a half-printed traceback; only that thread is silenced."""
    import threading

    from scopelint import runner as runner_module

    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    seen = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.thread.name))

    def fail():
        raise RuntimeError("dictionary changed size during iteration")

    manager = threading.Thread(target=fail, name="manager")
    other = threading.Thread(target=fail, name="other")
    runner_module._quiet_thread(manager)
    for t in (manager, other):
        t.start()
        t.join()
    assert seen == ["other"]
