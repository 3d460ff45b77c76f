"""A compiled graph that writes an input in place, and then meets an error only real values
show (an index out of range, an integer division by zero), leaves the input as eager does.

Eager has made every write before the op that raises, none after. A functional graph writes
its inputs at its end (or aot_autograd's epilogue does, after it): the graph raised with the
input unwritten (aot_eager: all of these cases; inductor: a write stored after the raising
kernel, `x.mul_(2); i // (i - 1)`). Now a graph that raised having written no input is run
again as eager runs it, which makes eager's writes and raises eager's error.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import compiler


def _index(n):
    return torch.tensor([n - 1, n + 3])  # one index out of range


# program(x, i): writes x, and raises on the index `_index(len(x))`; an op after the write
# reads it or not.
PROGRAMS = {
    "index_after_write": lambda x, i: (x.add_(1), x[i] * 2)[1],
    "gather": lambda x, i: (x.mul_(2), torch.gather(x, 0, i) + 1)[1],
    "index_select": lambda x, i: (x.mul_(2), x.index_select(0, i))[1],
    "embedding": lambda x, i: (x.mul_(2), F.embedding(i, x.view(-1, 1)))[1],
    "cross_entropy_target": lambda x, i: (x.mul_(2), F.cross_entropy(torch.ones(2, x.shape[0]), i))[1],
    "integer_division_by_zero": lambda x, i: (x.mul_(2), i // (i - i[0]))[1],
    "scatter": lambda x, i: (x.mul_(2), torch.zeros_like(x).scatter_(0, i, 1.0))[1],
    "index_put_into_a_copy": lambda x, i: (x.mul_(2), x.clone().index_put_((i,), torch.tensor(1.0)))[1],
    "row_written_then_index": lambda x, i: (x[0].fill_(5.0), x[i])[1],
    "index_before_write": lambda x, i: (x[i] + 1, x.add_(1))[0],
}


def _outcome(program, x, i):
    try:
        program(x, i)
    except (IndexError, RuntimeError) as error:
        return type(error)
    return None


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_input_written_before_an_error_only_values_show_is_as_eager_leaves_it(program, backend):
    fn = PROGRAMS[program]
    compiled = compiler.compile(fn, backend=backend)
    for size in (6, 6, 9):  # first call, cache hit with new values, new size
        x = torch.randn(size)
        i = _index(size)
        expected, got = x.clone(), x.clone()
        raised = _outcome(fn, expected, i)
        assert raised is not None
        assert _outcome(compiled, got, i) is raised
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    # In-range values still compute eager's result.
    x, i = torch.randn(7), torch.tensor([6, 2])
    if program != "integer_division_by_zero":
        expected, got = x.clone(), x.clone()
        torch.testing.assert_close(compiled(got, i), fn(expected, i))
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_training_graph_writing_a_buffer_before_an_error_only_values_show(backend):
    """A running statistic written in a graph that computes gradients, then a target out of range."""

    def step(w, stats, x, target):
        stats.mul_(0.9).add_(x.mean(0).detach(), alpha=0.1)
        return F.cross_entropy(x @ w, target)

    compiled = compiler.compile(step, backend=backend)
    for batch in (4, 4, 6):
        w = torch.randn(5, 3, requires_grad=True)
        x, stats = torch.randn(batch, 5), torch.randn(5)
        target = torch.randint(0, 3, (batch,))
        target[-1] = 3
        expected, got = stats.clone(), stats.clone()
        with pytest.raises(IndexError, match="out of bounds"):
            step(w, expected, x, target)
        # IndexError as eager's (inductor's nll_loss raised RuntimeError, gather's error, before).
        with pytest.raises(IndexError, match="out of bounds"):
            compiled(w, got, x, target)
        torch.testing.assert_close(got, expected)  # written (kernels round the update otherwise)
        assert not torch.equal(got, stats)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_random_draws_before_the_error_are_made_once(backend):
    """The replay draws what the compiled forward drew: the generator ends where eager's does."""

    def fn(x, i):
        noise = torch.rand(x.shape[0])
        x.add_(1)
        return x[i] + noise[:2]

    compiled = compiler.compile(fn, backend=backend)
    for size in (6, 6, 9):
        states = []
        for program in (fn, compiled):
            torch.manual_seed(size)
            x = torch.zeros(size)
            with pytest.raises(IndexError):
                program(x, _index(size))
            states.append((x, torch.rand(4)))
        torch.testing.assert_close(states[1], states[0], rtol=0, atol=0)
