"""Ctrl-C (a KeyboardInterrupt raised by a signal handler) during a compile reaches the caller,
and the process stays usable: the next compile works and nothing waits forever.

A signal handler's exception can be raised between any two bytecodes of the interrupted
thread, including inside the standard library's Python-level locks: `threading.Condition`'s
`__enter__` takes its lock and is interrupted before any `with` can release it (CPython's
bpo-29988). A lock left held that way inside a `ThreadPoolExecutor` made its shutdown (on the
way out of `with ThreadPoolExecutor()`) wait forever for a worker blocked on that lock.

Interrupts at random calls of our own code, for longer: benchmarks/reliability_soak.py
(`--only interrupts`).
"""

from __future__ import annotations

import enum
import os
import signal
import subprocess
import sys
import tempfile
import threading

import pytest
import torch
import torch.overrides
import torch.utils._python_dispatch
from torch import nn

import compiler

TIMEOUT_S = 60


def _interrupt_at_lock(nth: int):
    """A trace function raising KeyboardInterrupt as the `nth` `threading.Condition.__enter__`
    of this thread returns, the lock taken: where a signal arriving then leaves it."""
    seen = [0]

    def trace(frame, event, arg):
        if event == "call":
            return trace if frame.f_code is threading.Condition.__enter__.__code__ else None
        if event == "return":
            seen[0] += 1
            if seen[0] == nth:
                sys.settrace(None)
                raise KeyboardInterrupt(f"at Condition.__enter__ #{nth}")
        return trace

    return trace


def _kernels(tag: str, count: int = 3) -> list[str]:
    return [f'extern "C" int kernel_{tag}_{k}() {{ return {k}; }}\n' for k in range(count)]


def interrupted_builds() -> None:
    """In a process of its own (a hang there is killed at the timeout): C++ builds interrupted
    as each of their first locks is taken, each followed by a build that must complete."""
    from inductor import cache
    from inductor.runtime import cpp_build

    for nth in range(1, 5):
        os.environ["PTC_INDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptc_interrupted_")
        sys.settrace(_interrupt_at_lock(nth))
        try:
            cpp_build.build_all(_kernels(f"interrupted{nth}"))
        except KeyboardInterrupt:
            pass
        finally:
            sys.settrace(None)
        keys = cpp_build.build_all(_kernels(f"after{nth}"))
        assert all(cache.entry("cpp", key) is not None for key in keys)
    print("ok", flush=True)


@pytest.mark.skipif(sys.platform != "linux", reason="builds C++ kernels with g++")
def test_ctrl_c_during_kernel_builds_does_not_hang():
    # A hang raises TimeoutExpired (the process is killed).
    done = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr[-3000:]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(6, 6), nn.Linear(6, 3)

    def forward(self, x):
        h = torch.tanh(self.a(x))
        if h.mean() > 0:  # a graph break: two graphs, a resume function
            h = h + 1
        return self.b(h).softmax(-1)


# Where a signal leaves a mode pushed or unpopped: returning from torch's push (before its
# `__enter__` returns to the `with`), or entering an `__exit__` (before its pop).
_PUSH_RETURNS = [("return", torch.utils._python_dispatch._push_mode), ("return", torch.overrides._push_mode)]
_EXIT_CALLS = [("call", torch.utils._python_dispatch.TorchDispatchMode.__exit__),
               ("call", torch.overrides.TorchFunctionMode.__exit__)]


def _interrupt_at(event: str, function, nth: int):
    """A trace function raising KeyboardInterrupt at the `nth` `event` of `function`."""
    seen = [0]

    def trace(frame, what, arg):
        if frame.f_code is not function.__code__:
            return None
        if what == event:
            seen[0] += 1
            if seen[0] == nth:
                sys.settrace(None)
                raise KeyboardInterrupt(f"{event} of {function.__qualname__} #{nth}")
        return trace

    return trace


def _mode_stacks():
    return torch._C._len_torch_dispatch_stack(), torch._C._len_torch_function_stack()


@pytest.mark.parametrize("event, function", _PUSH_RETURNS + _EXIT_CALLS,
                         ids=lambda p: p if isinstance(p, str) else f"{p.__module__}.{p.__qualname__}")
@pytest.mark.parametrize("nth", [1, 3])
def test_ctrl_c_as_a_mode_is_entered_or_left_leaves_no_mode_on(event, function, nth):
    """A forward and backward compiled by aot_autograd (capture, then the forward and the
    backward plans), interrupted at the `nth` push or exit of a mode: the thread's mode
    stacks are as before, eager ops run on real tensors, and the function compiles again."""
    torch.manual_seed(0)
    net = Net()
    compiled = compiler.compile(net, backend="aot_eager")
    before = _mode_stacks()
    sys.settrace(_interrupt_at(event, function, nth))
    try:
        x = torch.randn(5, 6, requires_grad=True)
        compiled(x).sum().backward()
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
    assert _mode_stacks() == before
    for n in (5, 9):
        x = torch.randn(n, 6, requires_grad=True)
        actual, expected = compiled(x), net(x)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(*(torch.autograd.grad(y.sum(), x)[0] for y in (actual, expected)))


class AlarmTimeout(Exception):
    """What a user's SIGALRM handler raises (a timeout on a call, as pytest-timeout's)."""


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs POSIX signals")
def test_an_exception_a_signal_handler_raises_mid_capture_reaches_the_caller_as_it_is(monkeypatch):
    """A signal handler's exception lands between any two bytecodes, so inside capture's own
    code too: it reached the caller as CaptureInternalError ('a bug in capture'), which the
    user's `except AlarmTimeout` did not catch. The next call compiles and matches eager."""
    from capture.graph import GraphBuilder

    def timeout(signum, frame):
        raise AlarmTimeout("the call took too long")

    previous = signal.signal(signal.SIGUSR1, timeout)
    run_on_fakes = GraphBuilder._run_on_fakes
    signalled = []

    def signal_arrives(builder, *args, **kwargs):
        if not signalled:
            signalled.append(True)
            signal.raise_signal(signal.SIGUSR1)  # its handler runs now, in this frame
        return run_on_fakes(builder, *args, **kwargs)

    monkeypatch.setattr(GraphBuilder, "_run_on_fakes", signal_arrives)
    try:
        compiled = compiler.compile(lambda x: torch.relu(x) * 2 + x.cos(), backend="eager")
        with pytest.raises(AlarmTimeout):
            compiled(torch.randn(4))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert signalled and _mode_stacks() == (0, 0)
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), torch.relu(x) * 2 + x.cos())


class Mode(enum.Enum):
    FAST = 1

    @property
    def scale(self):  # run natively while the call is captured: an enum member is a constant
        if _signal_pending:
            _signal_pending.clear()
            signal.raise_signal(signal.SIGUSR1)  # its handler runs now, in this frame
        return 2.0


_signal_pending: list = []


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs POSIX signals")
def test_an_exception_a_signal_handler_raises_in_code_capture_runs_natively_reaches_the_caller():
    """Landing in user code capture runs for real (a property of a constant), the handler's
    exception was taken for the program's own: the call ran eagerly instead, so the timeout
    was lost and the call returned."""

    def timeout(signum, frame):
        raise AlarmTimeout("the call took too long")

    def f(x):
        return torch.relu(x) * Mode.FAST.scale

    previous = signal.signal(signal.SIGUSR1, timeout)
    try:
        compiled = compiler.compile(f, backend="eager")
        _signal_pending.append(True)
        with pytest.raises(AlarmTimeout):
            compiled(torch.randn(4))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), f(x))


if __name__ == "__main__":
    interrupted_builds()
