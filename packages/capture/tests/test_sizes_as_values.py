"""Sizes used as Python values under fullgraph=True, also once they are symbolic (a new size):
a shape formatted into a string, a shape (or a tuple holding sizes or tensors) as a dict key
or set member, and tuples compared in order with a shape. Symbolic sizes are specialized
where their value decides (guarded, as torch.compile guards them), never answered wrongly."""

from __future__ import annotations

import pytest
import torch

from helpers import check_across_sizes


def shape_formatted(x):
    text = "%d-%s-%5.1f|%s" % (x.shape[0], "a", x.shape[0] / 2, (x.shape,))
    return x, f"shape={tuple(x.shape)}", "{}".format(x.shape), str(x.shape), str(x.reshape(1, -1).shape[1:]), text


def shape_as_dict_key(x):
    d = {(4,): "four", (7,): "seven"}
    return x + (x.shape in d), x.shape in d, d.get(tuple(x.shape), "other")


def sizes_in_a_set(x):
    s = {tuple(x.shape), (4,), x.shape}
    return x + len(s)


def tuple_of_tensors_as_key(x):
    y = x * 2
    d = {(x, y): 1, (y, x): 2}
    return d[(x, y)] + d[(y, x)] + x


def shape_compared_in_order(x):
    return x * (x.shape >= (4,)), x.shape < (5, 0), (1, 2) <= (1, 2, 0), [3, x.shape[0]] > [3, 5]


def string_sliced_by_sizes(x):
    n = x.shape[0]
    text = "ab" * n
    return x + len(text), text[::n], text[-n:], text[1 : n - 1], (1, 2, 3, 4, 5)[n - 4 :]


def shape_numel(x):
    m = x.reshape(1, -1, 1)
    return x * m.shape.numel(), m.shape[1:].numel(), torch.Size([]).numel(), x.shape.numel() == x.numel()


def byte_counts(x):
    # Tensor.nbytes reads a numel C++ cannot give for symbolic sizes: numel() * itemsize instead.
    return x + x.itemsize, x.nbytes, x.element_size(), x.half().nbytes, x[1:].nbytes


@pytest.mark.parametrize(
    "fn",
    [
        shape_formatted, shape_as_dict_key, sizes_in_a_set, tuple_of_tensors_as_key, shape_compared_in_order,
        string_sliced_by_sizes, shape_numel, byte_counts,
    ],
)
def test_sizes_as_values(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


def test_list_and_tuple_do_not_order():
    def fn(x):
        try:
            return x, [1] < (2,)
        except TypeError:
            return x - 1, None

    check_across_sizes(fn, lambda n: (torch.randn(n),))
