"""Which dtypes (and numbers of dimensions) eager numpy gives for a call, asked of numpy itself.

A numpy result's dtype depends on its arguments' dtypes, on which of them are Python scalars
(weak, NEP 50) and on constant options (`axis`, `dtype=`), never on array values or sizes;
its number of dimensions on theirs and on those options, not on sizes above 1. So
numpy run on stand-ins, zero-filled arrays of the same dtypes and a few elements per dimension
(a size above 4 becomes 4, equal sizes stay equal, so broadcasting and matmul still line up),
answers for the real call at almost no cost.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from torch.utils._pytree import tree_flatten, tree_map

from .base import Value

_STAND_IN_SIZE = 4


def _stand_in(obj):
    if isinstance(obj, torch.Tensor):
        shape = tuple(min(size, _STAND_IN_SIZE) if isinstance(size, int) else _STAND_IN_SIZE for size in obj.shape)
        return np.zeros(shape, dtype=str(obj.dtype).removeprefix("torch."))
    if isinstance(obj, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return {torch.SymInt: _STAND_IN_SIZE, torch.SymFloat: 1.0, torch.SymBool: True}[type(obj)]
    return obj


def numpy_result_kinds(numpy_fn, args: list[Value], kwargs: dict[str, Value]) -> list[tuple[np.dtype, int]] | None:
    """(dtype, ndim) of the arrays and scalars `numpy_fn(*args, **kwargs)` returns, in pytree
    order; None when numpy refuses the stand-ins."""
    stand_args, stand_kwargs = tree_map(_stand_in, ([a.as_fake() for a in args], {k: v.as_fake() for k, v in kwargs.items()}))
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = numpy_fn(*stand_args, **stand_kwargs)
    except Exception:  # what numpy refuses on zeros or on the smaller sizes
        return None
    leaves, _ = tree_flatten(result)
    return [(np.asarray(leaf).dtype, np.ndim(leaf)) for leaf in leaves if isinstance(leaf, (np.ndarray, np.generic))]
