"""torch.tensor / as_tensor / asarray of numpy scalars (alone or in lists) take the dtype torch
infers from them, as eager: np.float64 gives float64, np.int32 int32, np.float16 float16,
np.bool_ bool, even though operators receive such a scalar as the Python number."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers import compile_eager, run_and_compare

SCALARS = {
    "float64": lambda: np.float64(np.random.uniform(-2, 2)),
    "int32": lambda: np.int32(np.random.randint(-5, 5)),
    "float16": lambda: np.float16(np.random.uniform(-2, 2)),
    "bool": lambda: np.bool_(np.random.rand() < 0.5),
}


def factories(x, a):
    return torch.tensor(a), torch.as_tensor(a), torch.asarray(a), torch.tensor([a, a]), x * torch.tensor(a)


def mixed_list(x, a):
    # A Python number beside a numpy scalar: torch's inference over both (a np.bool_ beside
    # an int is eager's TypeError).
    return torch.tensor([a, 1]), torch.tensor([[a], [x.shape[0]]]), torch.tensor(a, dtype=torch.float32)


CASES = [(factories, kind) for kind in SCALARS] + [(mixed_list, kind) for kind in SCALARS if kind != "bool"]


@pytest.mark.parametrize(("fn", "kind"), CASES)
def test_numpy_scalar_dtype_like_eager(fn, kind):
    # Before: every result was float32 (int64 for integers, float32 for bools): the graph
    # received the scalar as a Python number.
    compiled = compile_eager(fn)
    for size in (3, 3, 5):
        run_and_compare(compiled, fn, (torch.randn(size), SCALARS[kind]()))
