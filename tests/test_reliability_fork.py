"""Compiled functions in processes forked from a process that compiles (multiprocessing's
"fork" start method, DataLoader workers, servers that fork per request).

A child starts with one thread, a copy of the parent's memory: compiled entries made before
the fork work in it; a compile another thread was in the middle of never finishes there, so
the child must be able to compile that function itself (it used to wait forever on a lock the
vanished thread held). Each child compares with eager and reports through a pipe; a child
that does not answer within the timeout is killed and reported as hung.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import traceback

import pytest
import torch

import compiler
from aot_autograd import aot_module_simplified
from capture.session import CaptureSession

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="needs os.fork (Linux)")

CHILD_TIMEOUT_S = 60


def layer(x, w):
    return torch.relu(x @ w).sum(-1) * 2, torch.sigmoid(x).amax(0)


def _compare(compiled, n: int) -> None:
    x, w = torch.randn(n, 8), torch.randn(8, 4)
    for actual, expected in zip(compiled(x, w), layer(x, w)):
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def _in_forked_child(work) -> str:
    """Run `work()` in a forked child: "ok", its traceback, or "hung" (killed at the timeout)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            work()
            message = "ok"
        except BaseException:  # noqa: BLE001  (reported to the parent)
            message = traceback.format_exc()
        os.write(write, message.encode() or b"?")
        os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], CHILD_TIMEOUT_S)
    answer = os.read(read, 1 << 16).decode() if ready else ""
    os.close(read)
    if not answer:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return answer or "hung"


def _blocking(release: threading.Event, blocked: threading.Event, compile_fn):
    """`compile_fn`, which in this process (not in a forked child) first waits for `release`."""
    parent = os.getpid()

    def blocking_compile(gm, example_inputs):
        if os.getpid() == parent:
            blocked.set()
            release.wait(CHILD_TIMEOUT_S)
        return compile_fn(gm, example_inputs)

    return blocking_compile


def _capture_backend(release, blocked):
    return _blocking(release, blocked, lambda gm, example_inputs: gm.forward)


def _aot_backend(release, blocked):
    # The forward is compiled at the first call of the entry, under aot_autograd's plan lock.
    forward = _blocking(release, blocked, lambda gm, example_inputs: gm.forward)
    return lambda gm, example_inputs: aot_module_simplified(gm, example_inputs, fw_compiler=forward)


@pytest.mark.parametrize("held", ["function's capture lock", "aot_autograd's plan lock"])
def test_a_child_forked_while_a_thread_compiles_compiles_the_function_itself(held):
    release, blocked = threading.Event(), threading.Event()
    make_backend = _capture_backend if held == "function's capture lock" else _aot_backend
    compiled = compiler.compile(layer, backend=make_backend(release, blocked))
    compiling = threading.Thread(target=_compare, args=(compiled, 5))
    compiling.start()
    try:
        assert blocked.wait(CHILD_TIMEOUT_S)
        outcome = _in_forked_child(lambda: _compare(compiled, 5))
    finally:
        release.set()
        compiling.join()
    assert outcome == "ok", outcome


def test_is_compiling_is_off_in_a_child_forked_while_a_thread_captures(monkeypatch):
    """torch.compiler.is_compiling() is on while any thread captures; a child forked then
    has no capturing thread, and code it runs eagerly must not see the flag on."""
    release, blocked = threading.Event(), threading.Event()
    run = CaptureSession._run

    def blocking_run(session, *args, **kwargs):
        if not blocked.is_set():
            blocked.set()
            release.wait(CHILD_TIMEOUT_S)
        return run(session, *args, **kwargs)

    monkeypatch.setattr(CaptureSession, "_run", blocking_run)
    compiled = compiler.compile(layer, backend="eager")
    capturing = threading.Thread(target=_compare, args=(compiled, 5))
    capturing.start()
    try:
        assert blocked.wait(CHILD_TIMEOUT_S) and torch.compiler.is_compiling()

        def child():
            assert not torch.compiler.is_compiling()
            _compare(compiled, 6)  # captured here, by the child itself
            assert not torch.compiler.is_compiling()

        outcome = _in_forked_child(child)
    finally:
        release.set()
        capturing.join()
    assert outcome == "ok", outcome
    assert not torch.compiler.is_compiling()


def test_a_forked_child_runs_and_compiles_inductor_kernels(monkeypatch, tmp_path):
    """Entries compiled before the fork serve the child; a new size compiles there (g++ in the
    child, the shared cache folder). The OpenMP pool of the parent's kernels does not survive a
    fork: as in eager (torch's own kernels hang the same way), the child runs with one thread,
    which is what DataLoader workers set."""
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    compiled = compiler.compile(layer, backend="inductor", dynamic=False)
    _compare(compiled, 300)

    def child():
        torch.set_num_threads(1)
        _compare(compiled, 300)
        _compare(compiled, 7)

    assert _in_forked_child(child) == "ok"
    _compare(compiled, 300)
