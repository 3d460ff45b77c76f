"""Python attributes of tensors (`t.tag = ...`), which torch.compile traces: set on a tensor
the graph computes (kept with the trace, set on the tensor that escapes, read back before
and after a graph break and at a symbolic size) and on a tensor passed in (replayed after
the graph). Each compares with eager at two sizes, fullgraph where no break is asked for."""

from __future__ import annotations

import torch

from helpers import assert_same, compile_eager

SIZES = (4, 4, 7)


def _brk():
    print(end="")  # print breaks the graph


def _compare(fn, compiled):
    for n in SIZES:
        expected_input, actual_input = torch.ones(n), torch.ones(n)
        expected, actual = fn(expected_input), compiled(actual_input)
        assert_same(actual, expected)
        assert vars(actual_input) == vars(expected_input)
        for e, a in zip(expected, actual):
            if isinstance(e, torch.Tensor):
                assert vars(a) == vars(e)


def test_attributes_of_a_computed_tensor_are_read_back_and_kept():
    def fn(x):
        y = x * 2
        y.k = x.shape[0]
        z = y.add_(1)  # the same tensor: it has the attribute too
        return z * z.k, y.k, hasattr(x, "k"), y

    _compare(fn, compile_eager(fn, fullgraph=True))


def test_attribute_set_on_an_input_is_replayed():
    def fn(x):
        x.seen = x.shape[0] + 1
        return x * x.seen, hasattr(x, "seen")

    _compare(fn, compile_eager(fn, fullgraph=True))


def test_attribute_of_a_computed_tensor_survives_a_graph_break():
    def fn(x):
        y = x + 1
        y.k = x.shape[0]
        _brk()
        return y * y.k, y

    _compare(fn, compile_eager(fn))
