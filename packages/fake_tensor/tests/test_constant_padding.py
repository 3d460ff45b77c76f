"""constant_pad_nd with symbolic pads lays its output out as eager's kernel: a cut (no pad
positive) of a permuted tensor stays permuted, padding gives the suggested memory format."""

import pytest
import torch

from fake_tensor import FakeTensorMode, ShapeEnv

aten = torch.ops.aten


def permuted():
    return torch.randn(2, 4, 20, 16).transpose(1, 2)  # (2, 20, 4, 16), dims 1 and 2 swapped


@pytest.mark.parametrize(
    ("make", "pad_of_length"),
    [
        (permuted, lambda n: [0, 0, 0, 0, 0, -(n - 9), 0, 0]),  # cut to 9 rows
        (permuted, lambda n: [0, 0, 0, 0, -(n - 17), 0, 0, 0]),  # cut from the start
        (permuted, lambda n: [0, 0, 0, 0, 0, n - 20, 0, 0]),  # a zero pad: the clone of all of it
        (permuted, lambda n: [0, 0, 0, 0, 0, n - 17, 0, 0]),  # padding: a new tensor
        (permuted, lambda n: [0, -1, 0, 0, n - 17, -(n - 20), 0, 0]),  # one pad positive, others cut
        (lambda: torch.randn(2, 20, 4, 16), lambda n: [0, 0, 0, 0, 0, -(n - 9), 0, 0]),
    ],
    ids=["cut_end", "cut_start", "zero", "pad", "mixed", "contiguous_cut"],
)
def test_symbolic_pads_give_eager_layout(make, pad_of_length):
    real = make()
    eager = aten.constant_pad_nd(real, pad_of_length(real.shape[1]))
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake = mode.from_real(real, dynamic_dims=[1], source="L['x']")
    with mode:
        result = aten.constant_pad_nd(fake, pad_of_length(fake.shape[1]))
    at_hints = [mode.shape_env.size_hint(s) for s in (*result.shape, *result.stride())]
    assert at_hints == [*eager.shape, *eager.stride()]
