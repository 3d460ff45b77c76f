"""`wrap_numpy`: a function of NumPy arrays called with tensors (torch.compiler.wrap_numpy).

Compiled, capture traces the arrays as the tensors themselves (capture.values.numpy_arrays;
`tensor_as_array` has its rule in capture.calls.numpy_calls), so the NumPy code runs as torch
operations: on the tensors' device, with gradients. Called eagerly it converts through
`Tensor.numpy()`, which only CPU tensors without grad allow, as torch's wrap_numpy does.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np
import torch


def wrap_numpy(fn: Callable) -> Callable:
    """`fn` taking tensors where it takes arrays, and returning tensors where it returns arrays
    (inside tuples, lists and dicts too)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args = _map(args, torch.Tensor, tensor_as_array)
        kwargs = _map(kwargs, torch.Tensor, tensor_as_array)
        return _map(fn(*args, **kwargs), np.ndarray, torch.as_tensor)

    return wrapped


def tensor_as_array(t: torch.Tensor) -> np.ndarray:
    """`t` as an array: traced, the tensor itself, its grad and device kept."""
    return t.numpy()


def _map(tree: Any, kind: type, convert: Callable) -> Any:
    # Plain recursion rather than torch.utils._pytree, so that capture traces it.
    if isinstance(tree, kind):
        return convert(tree)
    if isinstance(tree, (tuple, list)):
        items = [_map(item, kind, convert) for item in tree]
        return type(tree)(items) if type(tree) in (tuple, list) else type(tree)(*items)
    if isinstance(tree, dict):
        return {key: _map(value, kind, convert) for key, value in tree.items()}
    return tree
