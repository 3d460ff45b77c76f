"""Numbers a graph returns that Python operators compute from its number inputs and its
tensors' sizes are computed by the graph's own nodes on each call's inputs, in the program's
order (number_outputs.py): a float rebuilt from a sympy expression may round otherwise."""

from __future__ import annotations

import torch

from aot_autograd import aot_eager
from aot_autograd.number_outputs import split_number_outputs
from aot_testing import functions_graph


def scaled(x, base, n):
    return x * 2, (0.1 + base) * 3.0, x.size(0) / 3 + n, base > 0.5


def test_number_outputs_are_computed_by_the_programs_operators():
    graph = functions_graph(scaled)
    compiled = aot_eager(graph, [torch.randn(4), 0.25, 2])
    for base, n, rows in ((0.10211, 3, 4), (0.7, -1, 5)):
        x = torch.randn(rows)
        expected, actual = scaled(x, base, n), compiled(x, base, n)
        torch.testing.assert_close(actual[0], expected[0])
        assert tuple(actual[1:]) == expected[1:]


def test_a_graph_returning_no_number_is_left_whole():
    assert split_number_outputs(functions_graph(lambda x: (x + 1,)), [torch.randn(2)]) is None


def test_a_long_chain_of_operators_is_no_recursion():
    # 1024 `+` nodes in a row: deciding which outputs are numbers recursed once per node.
    def chain(x, n):
        y = x
        for _ in range(1024):
            y = y + x
        return y, n * 2

    graph = functions_graph(chain)
    numbers = split_number_outputs(graph, [torch.randn(2), 3])
    assert numbers is not None and numbers.positions == frozenset({1})
