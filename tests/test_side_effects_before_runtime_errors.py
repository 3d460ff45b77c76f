"""Python side effects made before an error only values show (an index out of range) are kept,
as eager keeps them.

The entry replays the side effects of the traced code (list appends, attribute, dict and
global writes) after the compiled graph runs: when the graph raised, none were made, where
eager had made them (`log.append(1); x[i]` left `log` empty). Now a graph that raised having
left nothing visible runs its segment's code again eagerly (capture.runtime.segment_rerun).
"""

from __future__ import annotations

import types

import pytest
import torch

import compiler

BACKENDS = ["eager", "aot_eager", "inductor"]
CALLS = 0


def _effects(log, s, d):
    global CALLS
    log.append(len(log))
    s.count = len(log)
    d["k"] = s.count
    CALLS += 1


def reads_out_of_range(x, i, log, s, d):
    _effects(log, s, d)  # a nested function's effects
    return x[i] * 2


def breaks_then_reads_out_of_range(x, i, log, s, d):
    log.append("first segment")
    y = x * 2
    if y.sum() > -1e9:  # data-dependent: the rest is a resume function's segment
        _effects(log, s, d)
        return y[i]


def writes_then_reads_out_of_range(x, i, log, s, d):
    _effects(log, s, d)
    x.add_(1)
    return x[i]


def draws_then_reads_out_of_range(x, i, log, s, d):
    noise = torch.rand(2)
    _effects(log, s, d)
    return x[i] + noise.sum()


def _run(fn, x, i):
    """The error and every piece of state fn leaves, and the next random draw."""
    global CALLS
    CALLS = 0
    log, s, d = [], types.SimpleNamespace(), {}
    torch.manual_seed(0)
    with pytest.raises(Exception) as raised:
        fn(x, i, log, s, d)
    return type(raised.value), str(raised.value), log, vars(s), d, CALLS, x.tolist(), torch.rand(1).item()


def _check(fn, backend, **options):
    compiled = compiler.compile(fn, backend=backend, **options)
    for size in (3, 3, 5):  # first call, cache hit with new values, new size
        x = torch.randn(size)
        i = torch.tensor([size + 2])
        assert _run(compiled, x.clone(), i) == _run(fn, x.clone(), i)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fullgraph", [False, True])
def test_side_effects_before_an_index_out_of_range(backend, fullgraph):
    _check(reads_out_of_range, backend, fullgraph=fullgraph)


@pytest.mark.parametrize("backend", BACKENDS)
def test_side_effects_in_a_resume_function_segment(backend):
    _check(breaks_then_reads_out_of_range, backend)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_random_draws_are_made_once(backend):
    _check(draws_then_reads_out_of_range, backend)


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param("eager", marks=pytest.mark.xfail(strict=True, reason="the interpreted graph wrote x before raising")),
        "aot_eager",
        pytest.param("inductor", marks=pytest.mark.xfail(strict=True, reason="x's kernel runs before the raising one")),
    ],
)
def test_side_effects_and_an_input_write_before_an_index_out_of_range(backend):
    _check(writes_then_reads_out_of_range, backend)
