"""An exception that is not an op's failure leaves the fake trace as it is, not wrapped in a
TracingError that blames the op it interrupted: a signal handler's (a harness's SIGALRM
timeout), Python's stack or the host's memory running out (with a note naming the op), and
KeyboardInterrupt. An op that fails is still a TracingError naming it."""

from __future__ import annotations

import signal

import pytest
import torch

from aot_autograd import TracingError, aot_eager
from aot_testing import functions_graph

# What the next fake run of the op does.
ON_FAKE: list = []


@torch.library.custom_op("aot_interrupted::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@scale.register_fake
def _(x):
    if ON_FAKE:
        ON_FAKE.pop()()
    return torch.empty_like(x)


def uses_the_op(x):
    return (scale(x) + 1,)


def _raise_signal():
    signal.raise_signal(signal.SIGALRM)  # its handler runs before the next bytecode


def _recurse():
    return _recurse()


def _raise(error):
    def run():
        raise error

    return run


def _trace_with(action):
    ON_FAKE[:] = [action]
    try:
        return aot_eager(functions_graph(uses_the_op), [torch.randn(3)])
    finally:
        ON_FAKE.clear()


@pytest.fixture
def alarm_raises_timeout():
    def on_alarm(signum, frame):
        raise TimeoutError("the harness's time is up")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    yield
    signal.signal(signal.SIGALRM, previous)


def test_a_signal_handlers_timeout_is_not_wrapped(alarm_raises_timeout):
    with pytest.raises(TimeoutError, match="the harness's time is up") as error:
        _trace_with(_raise_signal)
    assert not isinstance(error.value, TracingError)


def test_the_same_exception_raised_by_the_op_is_its_failure(alarm_raises_timeout):
    with pytest.raises(TracingError, match="aot_interrupted.scale.*TimeoutError: the op's own"):
        _trace_with(_raise(TimeoutError("the op's own")))


@pytest.mark.parametrize("action", [_recurse, _raise(MemoryError())], ids=["RecursionError", "MemoryError"])
def test_a_process_limit_is_not_wrapped_and_names_the_op(action):
    with pytest.raises((RecursionError, MemoryError)) as error:
        _trace_with(action)
    assert any("aot_interrupted.scale" in note for note in error.value.__notes__)


def test_keyboard_interrupt_is_not_wrapped():
    with pytest.raises(KeyboardInterrupt):
        _trace_with(_raise(KeyboardInterrupt()))


def test_the_graph_traces_and_runs_once_nothing_interrupts():
    x = torch.randn(3)
    compiled = _trace_with(lambda: None)
    torch.testing.assert_close(compiled(x)[0], uses_the_op(x)[0])
