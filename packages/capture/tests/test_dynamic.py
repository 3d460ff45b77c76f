"""Symbolic sizes: with dynamic=True (or mark_dynamic) sizes are traced as symbols, one entry
serves every size its shape guards allow, and sizes used as Python constants are specialized
with a guard."""

from __future__ import annotations

import pytest
import torch

import capture
from helpers import captures, compile_eager, run_and_compare


def fn(x, y):
    n = x.shape[0]
    z = x.view(n, -1) * 2 + y[:n]
    return z.sum(0), n * 2, x.size(), len(x)


@pytest.mark.parametrize("sizes", [(4, 6, 9), (2, 17, 5)])
def test_one_entry_serves_many_sizes(sizes):
    compiled = compile_eager(fn, dynamic=True)
    for n in sizes:
        run_and_compare(compiled, fn, (torch.randn(n, 3), torch.randn(20, 3)))
    assert captures(compiled) == 1


def test_sizes_zero_and_one_specialize():
    compiled = compile_eager(fn, dynamic=True)
    run_and_compare(compiled, fn, (torch.randn(4, 3), torch.randn(20, 3)))
    run_and_compare(compiled, fn, (torch.randn(1, 3), torch.randn(20, 3)))
    assert captures(compiled) == 2


def test_shape_guards_reject_sizes_the_trace_assumed_against():
    def head(x, y):
        return y[: x.shape[0]].sum(0)

    compiled = compile_eager(head, dynamic=True)
    run_and_compare(compiled, head, (torch.randn(4, 3), torch.randn(20, 3)))
    run_and_compare(compiled, head, (torch.randn(9, 3), torch.randn(12, 3)))
    assert captures(compiled) == 1
    # The slice assumed x.shape[0] <= y.shape[0]; past it, slicing clamps: a new entry.
    run_and_compare(compiled, head, (torch.randn(30, 3), torch.randn(20, 3)))
    assert captures(compiled) == 2
    guard = compiled._capture_cache.entries[0].guard
    assert "L['x'].size()[0] <= L['y'].size()[0]" in guard.source


def test_python_use_of_a_size_specializes_it():
    def loop(x):
        for i in range(x.shape[0]):
            x = x + i
        return x

    compiled = compile_eager(loop, dynamic=True)
    run_and_compare(compiled, loop, (torch.randn(3, 2),))
    run_and_compare(compiled, loop, (torch.randn(3, 2),))
    run_and_compare(compiled, loop, (torch.randn(5, 2),))
    assert captures(compiled) == 2


def test_mark_dynamic_makes_only_that_dim_symbolic():
    def matmul(x, w):
        return x @ w

    compiled = compile_eager(matmul)
    w = torch.randn(8, 4)
    for rows in (3, 7, 11):
        x = torch.randn(rows, 8)
        capture.mark_dynamic(x, 0)
        run_and_compare(compiled, matmul, (x, w))
    assert captures(compiled) == 1
    x = torch.randn(3, 8)
    capture.mark_dynamic(x, 0)
    run_and_compare(compiled, matmul, (x, torch.randn(8, 5)))
    assert captures(compiled) == 2, "w is static"


def test_mark_dynamic_checks_the_dimension():
    with pytest.raises(IndexError, match="out of range"):
        capture.mark_dynamic(torch.randn(2, 3), 2)


def test_parameters_stay_static():
    linear = torch.nn.Linear(4, 4)
    compiled = compile_eager(linear, dynamic=True)
    compiled(torch.randn(3, 4))
    placeholders = [n for n in compiled._cache.entries[0].graph_module.graph.nodes if n.op == "placeholder"]
    weight = next(n for n in placeholders if "weight" in n.name)
    assert all(isinstance(s, int) for s in weight.meta["example_value"].shape)


def test_sizes_a_backend_specializes_while_compiling_are_guarded():
    """A backend may ask about a symbolic size while it compiles (`int(s0)` in a lowering, a
    C++ backward reading sizes as ints) and generate code for that size only: the guard of the
    entry must then reject other sizes, though capture itself left the size symbolic."""

    def double(x):
        return x * 2

    def backend_for_one_size(gm, example_inputs):
        x = next(n for n in gm.graph.nodes if n.op == "placeholder").meta["example_value"]
        size = int(x.shape[0])  # a question about s0: specializes it, with a guard

        def run(*args):
            return [out[:size] for out in gm(*args)]  # code that is right for this size only

        return run

    compiled = capture.optimize(double, backend=backend_for_one_size, dynamic=True)
    for n in (4, 6, 4, 9):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), double(x))
    assert captures(compiled) == 3


def test_an_argument_whose_rank_drops_after_a_size_change_recaptures():
    """Automatic dynamic shapes remember dims that changed size per argument; a later call
    passing that argument with fewer dims must not look those dims up (op_db's broadcast_to
    samples change their input's rank between calls)."""
    def expand(x, shape):
        return x.expand(shape) * 2

    compiled = capture.optimize(expand, capture.backends.eager)
    for x, shape in [(torch.randn(2, 3), (4, 2, 3)), (torch.randn(2, 5), (4, 2, 5)), (torch.randn(7), (3, 7))]:
        run_and_compare(compiled, expand, (x, shape))
