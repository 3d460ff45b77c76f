"""One compiled function called from many threads at once, at many shapes, matches eager.

Every thread calls the same compiled function with its own sequence of shapes, some calls with
gradients (so forward, backward and the lazily compiled backward race too), first cold (nothing
compiled: the threads race to capture and compile), then warm (entries in memory), then through
a fresh compile of the same function (inductor: its graphs come from the disk cache). Each
call's outputs and gradients are compared with eager on the same fresh inputs.
"""

from __future__ import annotations

import threading
import traceback

import pytest
import torch

import compiler
from capture import config

THREADS = 8
CALLS = 6  # per thread and round
SIZES = (3, 5, 8, 13, 21)


def layer(x, w, b):
    h = torch.relu(x @ w + b)
    return h.sum(-1) * torch.sigmoid(x.mean(-1)), (h * 2).exp().amax(0)


def _call_and_compare(compiled, n: int, grad: bool) -> None:
    x, w, b = torch.randn(n, 6), torch.randn(6, 5), torch.randn(5)
    ours = [t.clone().requires_grad_(grad) for t in (x, w, b)]
    theirs = [t.clone().requires_grad_(grad) for t in (x, w, b)]
    actual, expected = compiled(*ours), layer(*theirs)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
    if grad:
        sum(o.sum() for o in actual).backward()
        sum(o.sum() for o in expected).backward()
        for a, e in zip(ours, theirs):
            torch.testing.assert_close(a.grad, e.grad, rtol=1e-4, atol=1e-4)


def _hammer(compiled, sizes=SIZES, calls=CALLS) -> None:
    """THREADS threads, released together, each calling `compiled` at its own shapes."""
    start = threading.Barrier(THREADS)
    failures = []

    def work(thread: int) -> None:
        start.wait()
        for i in range(calls):
            n, grad = sizes[(i + thread) % len(sizes)], (i + thread) % 3 == 0
            try:
                _call_and_compare(compiled, n, grad)
            except Exception:  # noqa: BLE001  (collected: a thread's exception would be lost)
                failures.append(f"thread {thread}, call {i} (n={n}, grad={grad}):\n{traceback.format_exc()}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, f"{len(failures)} failed calls; the first:\n{failures[0]}"


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_threads_calling_one_compiled_function_match_eager(backend, monkeypatch, tmp_path):
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    compiled = compiler.compile(layer, backend=backend)
    _hammer(compiled)  # cold: every thread misses at first
    _hammer(compiled)  # warm
    assert len(compiled._capture_cache.entries) <= config.recompile_limit
    _hammer(compiler.compile(layer, backend=backend))  # a fresh compile: inductor reads the disk cache


def test_racing_recompiles_stop_at_the_limit():
    """More static shapes than the recompile limit, from many threads: never more entries than
    the limit, and the calls past it run eagerly (still equal to eager)."""
    compiled = compiler.compile(layer, backend="eager", dynamic=False)
    sizes = tuple(range(2, 2 + 2 * config.recompile_limit))
    with pytest.warns(UserWarning, match="recompile limit"):
        _hammer(compiled, sizes=sizes, calls=len(sizes))
    assert len(compiled._capture_cache.entries) == config.recompile_limit


def test_is_compiling_is_off_after_threads_captured_at_once():
    """torch.compiler.is_compiling() is one flag for the process: it is on while any thread
    captures, and off again once all are done however their captures interleaved."""
    functions = [compiler.compile(lambda x, k=k: torch.relu(x) + k, backend="eager") for k in range(THREADS)]
    start = threading.Barrier(THREADS)

    def work(k):
        start.wait()
        functions[k](torch.randn(4))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not torch.compiler.is_compiling()
