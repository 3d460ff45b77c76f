"""Threads doing different things to compiled functions at once: one compiling while another
changes the stance, resets every cache, or has its backend fail. Every call still matches
eager and nothing waits forever (each thread is joined with a timeout).

One compiled function hammered from many threads at many shapes is tests/test_threads.py.
"""

from __future__ import annotations

import os
import random
import threading
import traceback

import pytest
import torch

# Triton binds its library functions when first imported: without a GPU, switch its interpreter on
# now (collection imports this module before any test imports triton).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler  # noqa: E402
from capture.session import CaptureSession  # noqa: E402

JOIN_TIMEOUT_S = 120


def layer(x, k: int):
    y = torch.cos(x) * k
    if y.sum() > 0:  # data-dependent: a graph break, then a resume function
        y = y + 1
    return (y - y.mean(0)).abs().amax(-1), x.shape[0]


def _compare(compiled, n: int, k: int = 2) -> None:
    x = torch.randn(n, 4)
    actual, expected = compiled(x, k), layer(x, k)
    torch.testing.assert_close(actual[0], expected[0])
    assert actual[1] == expected[1]


def _run_threads(*targets) -> None:
    failures = []

    def collecting(target):
        try:
            target()
        except Exception:  # noqa: BLE001  (collected: a thread's exception would be lost)
            failures.append(traceback.format_exc())

    threads = [threading.Thread(target=collecting, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT_S)
    assert not any(t.is_alive() for t in threads), "a thread is still running: deadlock?"
    assert not failures, f"{len(failures)} threads failed; the first:\n{failures[0]}"


def test_set_stance_on_one_thread_while_another_captures(monkeypatch):
    """set_stance is refused inside a capture (as torch's), but only on the capturing thread:
    torch.compiler.is_compiling() is on for the whole process then, and set_stance on any
    other thread raised 'attempted to set_stance in a compiled region'."""
    capturing, release = threading.Event(), threading.Event()
    run = CaptureSession._run

    def blocking_run(session, *args, **kwargs):
        if not capturing.is_set():
            capturing.set()
            release.wait(JOIN_TIMEOUT_S)
        return run(session, *args, **kwargs)

    monkeypatch.setattr(CaptureSession, "_run", blocking_run)
    compiled = compiler.compile(layer, backend="eager")
    other = compiler.compile(lambda x, k: layer(x, k), backend="eager")

    def change_stance():
        assert capturing.wait(JOIN_TIMEOUT_S) and torch.compiler.is_compiling()
        try:
            with compiler.set_stance("force_eager"):
                _compare(other, 3)
            assert not other._capture_cache.entries  # force_eager: nothing captured
        finally:
            release.set()

    _run_threads(lambda: _compare(compiled, 5), change_stance)
    _compare(other, 3)


def test_reset_and_failing_backends_on_some_threads_while_others_call():
    """Threads calling compiled functions (a shared one, and one compiled afresh per call),
    racing with threads calling compiler.reset() and threads whose backend fails at random:
    a failed compile raises on its own thread only, and every other call matches eager."""

    class BackendFailed(Exception):
        pass

    def flaky_backend(gm, example_inputs):
        if random.random() < 0.5:
            raise BackendFailed("a backend failing mid-compile")
        return gm.forward

    shared = compiler.compile(layer, backend="eager")

    def calling(seed):
        rng = random.Random(seed)
        for _ in range(12):
            _compare(shared, rng.choice([2, 3, 5, 8]), rng.choice([1, 2, 3]))
            _compare(compiler.compile(layer, backend="eager"), rng.choice([2, 3, 5]))

    def resetting():
        for _ in range(12):
            compiler.reset()

    def failing():
        for _ in range(6):
            flaky = compiler.compile(layer, backend=flaky_backend)
            try:
                _compare(flaky, 4)
            except BackendFailed:
                pass

    _run_threads(*(lambda s=s: calling(s) for s in range(4)), resetting, failing, failing)
    _compare(shared, 7)


@pytest.mark.parametrize("grad", [False, True])
def test_threads_with_their_own_grad_mode_and_autocast(grad):
    """Grad mode and autocast are per thread in torch: each thread's calls must run the entry
    made for its own state (a guard on the calling thread's state, not the compiling one's)."""
    w = torch.randn(8, 5, requires_grad=grad)

    def f(x):
        return torch.relu(x @ w) + 1

    compiled = compiler.compile(f, backend="eager")
    contexts = [torch.no_grad, torch.enable_grad, lambda: torch.autocast("cpu", dtype=torch.bfloat16)]

    def calling(kind):
        for n in (3, 4, 3, 6):
            x = torch.randn(n, 8)
            with contexts[kind]():
                actual, expected = compiled(x), f(x)
            assert (actual.dtype, actual.requires_grad) == (expected.dtype, expected.requires_grad)
            torch.testing.assert_close(actual, expected)

    _run_threads(*(lambda k=k: calling(k) for k in (0, 1, 2, 0, 1, 2)))


def test_threads_running_triton_kernels_in_the_interpreter():
    """Triton's interpreter keeps the program id being run and its patched `tl` functions in
    module globals: two threads launching kernels on CPU tensors at once read each other's grid
    ('x >= grid_dim[0]') or found `tl` unpatched ('Did you forget to add @triton.jit ?')."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("Triton kernels on CPU tensors need TRITON_INTERPRET=1")

    def f(x, y):
        return torch.sigmoid(x * y + 1).sum(-1), torch.tanh(y) - x

    compiled = compiler.compile(f, backend="inductor", options={"cpu_backend": "triton"})

    def calling(seed):
        rng = random.Random(seed)
        for _ in range(6):
            x, y = torch.randn(rng.choice([3, 64]), 33), torch.randn(1, 33)
            for actual, expected in zip(compiled(x, y), f(x, y)):
                torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)

    _run_threads(*(lambda s=s: calling(s) for s in range(6)))
