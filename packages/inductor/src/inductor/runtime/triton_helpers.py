"""Device functions that generated Triton kernels call, where Triton's own differ from torch's.

    maximum/minimum          propagate NaN (tl.maximum's default does not, nor does tl.max)
    reduce_max/min/prod/any/all   block reductions built on those, keeping the reduced axis
    reduce_argmax/argmin     value+index reductions: NaN counts as largest, ties take the first
    floordiv/remainder       Python's rounding toward -inf (Triton's `//` and `%` truncate)
    libdevice                CUDA's math library; under TRITON_INTERPRET=1 (where libdevice
                             calls return None) the same functions computed by numpy

Kernels import this module as `helpers` and call `helpers.maximum(a, b)`; jit functions
called from a kernel are inlined into it.
"""

from __future__ import annotations

import math

import numpy as np
import triton
import triton.language as tl
from triton import knobs

INTERPRETED = knobs.runtime.interpret


@triton.jit
def maximum(a, b):
    return tl.where((a > b) | (a != a), a, b)


@triton.jit
def minimum(a, b):
    return tl.where((a < b) | (a != a), a, b)


@triton.jit
def _multiply(a, b):
    return a * b


@triton.jit
def _logical_or(a, b):
    return a | b


@triton.jit
def _logical_and(a, b):
    return a & b


@triton.jit
def reduce_max(x, axis):
    return tl.reduce(x, axis, maximum, keep_dims=True)


@triton.jit
def reduce_min(x, axis):
    return tl.reduce(x, axis, minimum, keep_dims=True)


@triton.jit
def reduce_prod(x, axis):
    return tl.reduce(x, axis, _multiply, keep_dims=True)


@triton.jit
def reduce_any(x, axis):
    return tl.reduce(x, axis, _logical_or, keep_dims=True)


@triton.jit
def reduce_all(x, axis):
    return tl.reduce(x, axis, _logical_and, keep_dims=True)


@triton.jit
def argmax_combine(a, a_index, b, b_index):
    a_nan = a != a
    b_nan = b != b
    greater = (a > b) | (a_nan & ~b_nan)
    tie = (a == b) | (a_nan & b_nan)
    take_a = greater | (tie & (a_index < b_index))
    return tl.where(take_a, a, b), tl.where(take_a, a_index, b_index)


@triton.jit
def argmin_combine(a, a_index, b, b_index):
    a_nan = a != a
    b_nan = b != b
    less = (a < b) | (a_nan & ~b_nan)
    tie = (a == b) | (a_nan & b_nan)
    take_a = less | (tie & (a_index < b_index))
    return tl.where(take_a, a, b), tl.where(take_a, a_index, b_index)


@triton.jit
def reduce_argmax(values, indices, axis):
    _, index = tl.reduce((values, indices), axis, argmax_combine, keep_dims=True)
    return index


@triton.jit
def reduce_argmin(values, indices, axis):
    _, index = tl.reduce((values, indices), axis, argmin_combine, keep_dims=True)
    return index


@triton.jit
def floordiv_int(a, b):
    quotient = a // b
    rest = a % b
    return tl.where((rest != 0) & ((rest < 0) != (b < 0)), quotient - 1, quotient)


@triton.jit
def remainder(a, b):
    # Floats too: Triton's float `%` is C's fmod, torch.remainder adds the divisor back the same way.
    rest = a % b
    return tl.where((rest != 0) & ((rest < 0) != (b < 0)), rest + b, rest)


@triton.jit
def floordiv_float(a, b):
    # torch's div_floor_floating: round (a - fmod(a, b)) / b, which is exact, not floor(a / b).
    rest = a % b
    div = (a - rest) / b
    div = tl.where((rest != 0) & ((b < 0) != (rest < 0)), div - 1.0, div)
    floored = libdevice.floor(div)
    floored = tl.where(div - floored > 0.5, floored + 1.0, floored)
    zero = libdevice.copysign(div * 0.0, a / b)
    return tl.where(b == 0, a / b, tl.where(div != 0, floored, zero))


@triton.jit
def sign(x):
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


@triton.jit
def pow_int(base, exponent):
    # Integer powers as torch computes them: repeated squaring with wrap-around, exponent >= 0.
    result = tl.full(base.shape, 1, base.dtype)
    b = base
    e = exponent + tl.zeros(base.shape, base.dtype)
    for _ in tl.static_range(63):
        result = tl.where((e & 1) != 0, result * b, result)
        b = b * b
        e = e >> 1
    return result


class _NumpyLibdevice:
    """libdevice for the interpreter: kernels there hold numpy arrays, so each libdevice
    function becomes its numpy counterpart applied to the array inside the tensor."""

    _FUNCTIONS = {
        "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
        "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
        "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos,
        "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor,
        "ceil": np.ceil, "trunc": np.trunc, "nearbyint": np.rint, "rint": np.rint, "abs": np.abs,
        "erf": np.vectorize(math.erf, otypes=[np.float64]), "erfc": np.vectorize(math.erfc, otypes=[np.float64]),
        "lgamma": np.vectorize(lambda v: math.lgamma(v) if v > 0 or v != math.floor(v) else math.inf,
                               otypes=[np.float64]),
        "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "fmod": np.fmod, "pow": np.power,
    }

    def __getattr__(self, name):
        function = self._FUNCTIONS[name]

        def apply(*args):
            first = next(a for a in args if isinstance(a, tl.tensor))
            arrays = [a.handle.data if isinstance(a, tl.tensor) else a for a in args]
            with np.errstate(all="ignore"):
                data = np.asarray(function(*arrays)).astype(first.handle.data.dtype)
            from triton.runtime.interpreter import TensorHandle

            return tl.tensor(TensorHandle(data, first.handle.dtype.scalar), first.type)

        return apply


def _accept_one_element_indices():
    """Triton 3.6's interpreter holds a kernel's int arguments as one-element arrays and runs
    `range(0, rnumel, RBLOCK)` through `int(array)`, which NumPy >= 2.4 refuses for arrays
    that are not 0-d; take the element instead."""
    from triton.runtime import interpreter

    patch_tensor = interpreter._patch_lang_tensor

    def patched(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patched


if INTERPRETED:
    libdevice = _NumpyLibdevice()
    _accept_one_element_indices()
else:
    from triton.language.extra import libdevice  # noqa: F401  (kernels reach it as helpers.libdevice)
