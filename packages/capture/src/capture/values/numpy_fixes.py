"""Where torch._numpy's result differs from numpy's and a small wrapper around it agrees.

Each fix keeps numpy's semantics for the case torch._numpy gets wrong and defers to it
otherwise. (Differences without a fix are caught by capture.values.numpy_dtype_oracle and break
the graph.)
"""

from __future__ import annotations

import operator

import numpy as np
import torch._numpy as tnp


def _integral(value) -> bool:
    if isinstance(value, tnp.ndarray):
        return value.dtype.name.startswith(("int", "uint", "bool"))
    return isinstance(value, (int, bool))


def true_divide(x, y, *args, **kwargs):
    """numpy divides integers into float64; torch (and so torch._numpy) into its default
    float dtype, float32."""
    if _integral(x) and _integral(y):
        x, y = (v.astype("float64") if isinstance(v, tnp.ndarray) else v for v in (x, y))
    return tnp.true_divide(x, y, *args, **kwargs)


def full(shape, fill_value, dtype=None, *args, **kwargs):
    """torch._numpy passes `fill_value` to torch.full as a 0-d tensor, whose value torch reads
    (`.item()`: data-dependent, a graph break); broadcasting it reads nothing."""
    if args or kwargs:
        return tnp.full(shape, fill_value, dtype, *args, **kwargs)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return tnp.broadcast_to(tnp.asarray(fill_value, dtype=dtype), shape).copy()


# numpy callable or Python operator -> what records it instead of torch._numpy's namesake.
FIXED: dict = {np.true_divide: true_divide, operator.truediv: true_divide, np.full: full}
