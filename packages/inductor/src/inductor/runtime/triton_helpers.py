"""Device functions that generated Triton kernels call, where Triton's own differ from torch's.

    maximum/minimum          propagate NaN (tl.maximum's default does not, nor does tl.max)
    max_combine/min_combine  the same for two values of one dtype (reductions' accumulators)
    reduce_max/min/prod/any/all   block reductions built on those, keeping the reduced axis
    reduce_argmax/argmin     value+index reductions: NaN counts as largest, ties take the first
    welford_add/combine/welford/welford_pivoted/welford_tile   one-pass variance: (mean, m2,
                             weight) per lane, updated by an element (Welford, from a pivot) or
                             by partial statistics (Chan), then folded along an axis
    floordiv/remainder       Python's rounding toward -inf (Triton's `//` and `%` truncate)
    libdevice                CUDA's math library; under TRITON_INTERPRET=1 (where libdevice
                             calls return None) the same functions computed by numpy

Kernels import this module as `helpers` and call `helpers.maximum(a, b)`; jit functions
called from a kernel are inlined into it.
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton import knobs

INTERPRETED = knobs.runtime.interpret


# Nested selects rather than `(a > b) | (a != a)`: Triton 3.6's interpreter cannot `|` a block
# with the comparison of a 0-d constant (`tl.full([], 0.0, ...)`, as in relu-like minimum(0, x)).
@triton.jit
def maximum(a, b):
    return tl.where(a != a, a, tl.where(a > b, a, b))


@triton.jit
def minimum(a, b):
    return tl.where(a != a, a, tl.where(a < b, a, b))


# One NaN-propagating max/min instruction for floats: the nested selects above cost a bf16
# softmax over 1024 columns ~8% of its bandwidth on an H200 (4216 vs 3889 GB/s at its best
# block size). Integers (bool included, which a signed i1 max would get wrong) keep the selects.
@triton.jit
def max_combine(a, b):
    if a.dtype.is_floating():
        return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
    return maximum(a, b)


@triton.jit
def min_combine(a, b):
    if a.dtype.is_floating():
        return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
    return minimum(a, b)


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
    return tl.reduce(x, axis, max_combine, keep_dims=True)


@triton.jit
def reduce_min(x, axis):
    return tl.reduce(x, axis, min_combine, keep_dims=True)


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


# Weights are element counts (0 for masked lanes), so dividing by max(weight, 1) is exact where
# a weight is nonzero and gives 0 / 1 where both are 0, with no division by zero to select away.
# A lane's statistics are kept relative to its first element (its pivot): a running mean of
# 1000 + randn rounds at 1000's precision and feeds that error into m2 (var of 1e5 + randn off
# by 1.6e-3 over 3000 elements); shifted, the data is small and `value - pivot` exact when the
# mean dominates the spread (Sterbenz), and lanes combine through the exact pivot difference.
@triton.jit
def welford_add(pivot, mean, m2, weight, value, mask):
    """Welford's update of each lane's running statistics by one element; masked lanes keep theirs."""
    pivot = tl.where(mask & (weight == 0.0), value, pivot)
    shifted = value - pivot
    new_weight = tl.where(mask, weight + 1.0, weight)
    delta = shifted - mean
    new_mean = tl.where(mask, mean + delta / tl.maximum(new_weight, 1.0), mean)
    new_m2 = tl.where(mask, m2 + delta * (shifted - new_mean), m2)
    return pivot, new_mean, new_m2, new_weight


@triton.jit
def _welford_combine_pivoted(pivot_a, mean_a, m2_a, weight_a, pivot_b, mean_b, m2_b, weight_b):
    delta = (pivot_b - pivot_a) + (mean_b - mean_a)
    weight = weight_a + weight_b
    b_share = weight_b / tl.maximum(weight, 1.0)
    a_empty = weight_a == 0.0  # its pivot is no element: take b's
    return (tl.where(a_empty, pivot_b, pivot_a), tl.where(a_empty, mean_b, mean_a + delta * b_share),
            m2_a + m2_b + delta * delta * weight_a * b_share, weight)


@triton.jit
def welford_pivoted(pivot, mean, m2, weight, axis):
    """(mean, m2, weight) along `axis` of lanes' statistics kept relative to their pivots."""
    pivot, mean, m2, weight = tl.reduce((pivot, mean, m2, weight), axis, _welford_combine_pivoted, keep_dims=True)
    return pivot + mean, m2, weight


@triton.jit
def welford_combine(mean_a, m2_a, weight_a, mean_b, m2_b, weight_b):
    """Chan et al.'s combination of the statistics of two disjoint sets of elements."""
    delta = mean_b - mean_a
    weight = weight_a + weight_b
    b_share = weight_b / tl.maximum(weight, 1.0)
    return mean_a + delta * b_share, m2_a + m2_b + delta * delta * weight_a * b_share, weight


@triton.jit
def welford(mean, m2, weight, axis):
    return tl.reduce((mean, m2, weight), axis, welford_combine, keep_dims=True)


@triton.jit
def welford_tile(value, mask, axis):
    """(mean, m2, weight) of the unmasked elements of a tile held in registers: the mean, then
    the squared deviations from it, which is as accurate as Welford and needs no division per element."""
    weight = tl.sum(mask.to(value.dtype), axis, keep_dims=True)
    mean = tl.sum(tl.where(mask, value, 0.0), axis, keep_dims=True) / tl.maximum(weight, 1.0)
    deviation = tl.where(mask, value - mean, 0.0)
    return mean, tl.sum(deviation * deviation, axis, keep_dims=True), weight


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
    # Integer powers as aten's powi: repeated squaring with wrap-around; a negative exponent
    # gives 1 for base 1, +-1 for base -1 (by the exponent's parity) and 0 for any other base.
    one = tl.full(base.shape, 1, base.dtype)
    zero = tl.zeros(base.shape, base.dtype)
    result = one
    b = base
    e = exponent + zero
    negative = e < 0
    e = tl.where(negative, zero, e)
    for _ in tl.static_range(63):
        result = tl.where((e & 1) != 0, result * b, result)
        b = b * b
        e = e >> 1
    odd = ((exponent + zero) & 1) != 0
    reciprocal = tl.where(base == 1, one, tl.where(base == -1, tl.where(odd, zero - one, one), zero))
    return tl.where(negative, reciprocal, result)


if INTERPRETED:
    from .triton_interpreter import (
        NumpyLibdevice,
        accept_one_element_indices,
        fold_whole_slices,
        make_bfloat16_constants,
        numpy_dtypes_built_once,
        round_bfloat16_to_nearest,
        type_comparisons_as_int1,
        unsigned_all_ones,
    )

    libdevice = NumpyLibdevice()
    accept_one_element_indices()
    round_bfloat16_to_nearest()
    type_comparisons_as_int1()
    make_bfloat16_constants()
    unsigned_all_ones()
    fold_whole_slices()
    numpy_dtypes_built_once()
else:
    from triton.language.extra import libdevice  # noqa: F401  (kernels reach it as helpers.libdevice)
