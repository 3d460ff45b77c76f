"""Python side effects made before an error only values show (an index out of range) are kept,
as eager keeps them, with eager's input writes, random draws and global modes.

The entry replays the side effects of the traced code (list appends, attribute, dict and
global writes) after the compiled graph runs: when the graph raised, none were made, where
eager had made them (`log.append(1); x[i]` left `log` empty). Now a graph that raised having
left nothing visible, or whose input writes and draws were put back, runs its segment's code
again eagerly (capture.runtime.segment_rerun); the grad mode and autocast a graph switched are
put back when it raises (capture.runtime.global_state).
"""

from __future__ import annotations

import types

import pytest
import torch
import torch.nn.functional as F

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


def writes_a_view_then_reads_out_of_range(x, i, log, s, d):
    _effects(log, s, d)
    x[1:].mul_(2)
    return x[i]


def writes_in_place_by_keyword_then_reads_out_of_range(x, i, log, s, d):
    _effects(log, s, d)
    F.leaky_relu(x, 0.5, inplace=True)  # no trailing underscore names this write
    return x[i]


def writes_a_buffer_then_reads_out_of_range(x, i, log, s, d):
    _effects(log, s, d)
    MODULE.seen.add_(x[:2])
    with torch.no_grad():
        MODULE.weight.mul_(2)
    return x[i] * MODULE.weight.sum()  # the weight requires grad: a training plan


def writes_draws_then_reads_out_of_range(x, i, log, s, d):
    x.add_(1)
    noise = torch.rand(2)
    _effects(log, s, d)
    return x[i] + noise.sum()


def reads_out_of_range_then_writes(x, i, log, s, d):
    _effects(log, s, d)
    y = x[i]
    x.add_(1)
    MODULE.seen.add_(1)
    return y


def reads_out_of_range_without_grad(x, i, log, s, d):
    log.append(x * 2)  # requires grad as eager made it: the rerun runs in the caller's grad mode
    with torch.no_grad():
        return x[i]


def reads_out_of_range_under_autocast(x, i, log, s, d):
    _effects(log, s, d)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.mm(x[None], x[:, None])[i]


def reads_out_of_range_without_grad_or_effects(x, i, log, s, d):
    with torch.no_grad():
        return x[i]


class _Module(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2))
        self.register_buffer("seen", torch.zeros(2))


MODULE = _Module()


def _run(fn, x, i):
    """The error and every piece of state fn leaves, and the next random draw."""
    global CALLS
    CALLS = 0
    log, s, d = [], types.SimpleNamespace(), {}
    with torch.no_grad():
        MODULE.weight.fill_(1)
        MODULE.seen.zero_()
    torch.manual_seed(0)
    with pytest.raises(Exception) as raised:
        fn(x, i, log, s, d)
    module = (MODULE.weight.tolist(), MODULE.seen.tolist())
    log = [(v.tolist(), v.requires_grad) if isinstance(v, torch.Tensor) else v for v in log]
    modes = torch.is_grad_enabled(), torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    torch.set_grad_enabled(True)  # a mode left switched fails this test only
    torch.set_autocast_enabled("cpu", False)
    x = x.tolist()
    return type(raised.value), str(raised.value), log, vars(s), d, CALLS, x, module, modes, torch.rand(1).item()


def _check(fn, backend, requires_grad=False, **options):
    compiled = compiler.compile(fn, backend=backend, **options)
    values = torch.Generator().manual_seed(2)  # not the global generator, which _run seeds; negatives in each x
    for size in (3, 3, 5):  # first call, cache hit with new values, new size
        x = torch.randn(size, generator=values)
        i = torch.tensor([size + 2])
        assert _run(compiled, x.clone().requires_grad_(requires_grad), i) == _run(fn, x.clone().requires_grad_(requires_grad), i)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fullgraph", [False, True])
def test_side_effects_before_an_index_out_of_range(backend, fullgraph):
    _check(reads_out_of_range, backend, fullgraph=fullgraph)


@pytest.mark.parametrize("backend", BACKENDS)
def test_side_effects_in_a_resume_function_segment(backend):
    _check(breaks_then_reads_out_of_range, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_draws_are_made_once(backend):
    _check(draws_then_reads_out_of_range, backend)


# The graph writes an input (or a view of one, a module's buffer or parameter) before the op
# that raises: the inputs it writes, and the generators' states, are put back before the rerun.
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn",
    [
        writes_then_reads_out_of_range,
        writes_a_view_then_reads_out_of_range,
        writes_in_place_by_keyword_then_reads_out_of_range,
        writes_a_buffer_then_reads_out_of_range,
        writes_draws_then_reads_out_of_range,
        reads_out_of_range_then_writes,
    ],
    ids=lambda fn: fn.__name__,
)
def test_side_effects_and_an_input_write_before_an_index_out_of_range(backend, fn):
    _check(fn, backend)


# The graph raised inside a `with` block switching a global mode: the block's exit puts the mode
# back, with or without side effects to replay.
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [reads_out_of_range_without_grad, reads_out_of_range_under_autocast], ids=lambda fn: fn.__name__)
def test_global_modes_switched_in_the_graph_are_put_back(backend, fn):
    _check(fn, backend, requires_grad=True)


# (Inductor's kernels raise their own message, with no side effects to rerun for.)
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_global_modes_are_put_back_without_side_effects(backend):
    _check(reads_out_of_range_without_grad_or_effects, backend, requires_grad=True)
