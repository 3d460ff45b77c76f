"""Which numpy callables capture traces, and the torch implementation each one records.

`torch._numpy` is NumPy's API written over torch tensors (a plain library: no part of the
compiler we rebuild). A numpy function that has a namesake there is traced by calling that
namesake on the traced tensors, so the graph holds torch operations; the table pairs them by
name over `numpy`, `numpy.linalg` and `numpy.fft`. `numpy.random` is left out on purpose: its
draws come from numpy's global generator, which a graph cannot share, so those calls break
the graph and run natively, as under torch.compile (without `use_numpy_random_stream`).
"""

from __future__ import annotations

import types

import numpy as np
import torch._numpy as tnp

from ..values.numpy_fixes import FIXED

# Types of numpy's callables that are neither Python functions nor builtins (ufuncs,
# array-function dispatchers, Cython functions such as np.random.default_rng).
NUMPY_CALLABLE_TYPES: tuple[type, ...] = (np.ufunc, type(np.sum), type(np.random.default_rng))

_FUNCTION_TYPES = (types.BuiltinFunctionType, types.FunctionType, types.MethodDescriptorType, *NUMPY_CALLABLE_TYPES)

# numpy.random's functions and generator methods: never traced (see above).
RANDOM_CALLABLES: tuple = tuple(
    dict.fromkeys(
        getattr(owner, name)
        for owner in (np.random, np.random.RandomState, np.random.Generator)
        for name in dir(owner)
        if not name.startswith("_") and isinstance(getattr(owner, name), _FUNCTION_TYPES)
    )
)


def is_numpy_callable(obj) -> bool:
    """A function of numpy itself (not a user module whose name starts with "numpy")."""
    module = getattr(obj, "__module__", None) or ""
    return module == "numpy" or module.startswith("numpy.")


def _pairs(np_module: types.ModuleType, tnp_module: types.ModuleType):
    for name in dir(tnp_module):
        if name.startswith("_"):
            continue
        ours, theirs = getattr(tnp_module, name), getattr(np_module, name, None)
        if theirs is None or isinstance(theirs, (type, types.ModuleType)) or not callable(theirs) or not callable(ours):
            continue  # classes (np.float32, np.finfo) have construct rules in numpy_calls
        yield theirs, ours


def _build_table() -> dict:
    table = {}
    for np_module, tnp_module in ((np, tnp), (np.linalg, tnp.linalg), (np.fft, tnp.fft)):
        for numpy_fn, torch_fn in _pairs(np_module, tnp_module):
            table.setdefault(numpy_fn, FIXED.get(numpy_fn, torch_fn))  # aliases (np.divide is np.true_divide) once
    return table


# numpy callable -> the torch._numpy function a call of it records.
TORCH_NUMPY_FOR: dict = _build_table()
