"""Which of the four shapes (kernel.py) a FusedKernel prints as, and the block-shape hint that
goes with a reduction: the launch heuristics (runtime/triton_configs.py) read both."""

from __future__ import annotations

import sympy

from ...ir import FusedKernel
from ...runtime.triton_configs import KIND_LOOPED, KIND_PERSISTENT, KIND_POINTWISE, KIND_TILED
from ...sizes import affine_coefficient, product

# Reductions over at most this many elements keep the whole row in registers.
PERSISTENT_REDUCTION_LIMIT = 1024
TILE_MIN = 16            # both sides of a transpose at least this long to tile it
TILE_MAX_INNER = 2**20   # the innermost loop spans grid axis 1 (at most 65535 programs)


def kernel_kind(kernel: FusedKernel, reads, writes) -> str:
    """Tiled for a transpose, else pointwise; persistent for a reduction whose row fits a tile, else looped."""
    if not kernel.is_reduction:
        return KIND_TILED if _transposes(kernel, reads, writes) else KIND_POINTWISE
    rnumel = product(n for _, n in kernel.inner)
    if isinstance(rnumel, sympy.Integer) and int(rnumel) <= PERSISTENT_REDUCTION_LIMIT:
        return KIND_PERSISTENT
    return KIND_LOOPED


def _transposes(kernel: FusedKernel, reads, writes) -> bool:
    """Whether a pointwise kernel is a transpose: its stores run contiguously along the innermost
    loop while a load runs strided along it and contiguously along another loop. Such a kernel
    is tiled (the `r` axis its innermost loop, `x` the others), so that Triton can give the
    load and the store each a coalesced layout, exchanging the tile through shared memory."""
    if kernel.is_reduction or len(kernel.outer) < 2:
        return False
    (last, inner_size), others = kernel.outer[-1], kernel.outer[:-1]
    outer_size = product(n for _, n in others)
    if not (isinstance(inner_size, sympy.Integer) and isinstance(outer_size, sympy.Integer)):
        return False
    if not (TILE_MIN <= int(inner_size) < TILE_MAX_INNER and int(outer_size) >= TILE_MIN):
        return False
    if not writes or any(affine_coefficient(index, last) != 1 for _, index in writes):
        return False
    for _, index in reads:
        along_last = affine_coefficient(index, last)
        if along_last is not None and along_last not in (0, 1) and any(
            affine_coefficient(index, var) == 1 for var, _ in others
        ):
            return True
    return False


def is_outer_reduction(kernel: FusedKernel, accesses) -> bool:
    """Whether the reduced axis is strided while rows are contiguous (a sum over dim 0):
    block shapes with many rows and few reduction lanes coalesce those loads."""
    innermost = {axis: loops[-1][0] for axis, loops in (("x", kernel.outer), ("r", kernel.inner)) if loops}
    if "x" not in innermost or "r" not in innermost:
        return False
    along = {"x": 0, "r": 0}
    for _, index in accesses:
        if not {innermost["x"], innermost["r"]} <= index.free_symbols:
            # Reduction outputs, per-row values, and vectors indexed by the reduced dims alone
            # (a LayerNorm weight gradient's mean and rstd) do not decide the access pattern.
            continue
        for axis, var in innermost.items():
            if affine_coefficient(index, var) == 1:
                along[axis] += 1
    return along["x"] > along["r"]
