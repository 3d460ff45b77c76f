"""Which loop of a C++ reduction kernel the vector lanes run along.

By default the innermost reduction loop vectorizes (`omp simd reduction`), which is right
when the reduced dimension is the contiguous one (softmax, layer norm). A column reduction,
summing a [N, C] tensor over N (bias and norm-weight gradients, a mean over the sequence),
reads its reduced dimension with stride C: each lane then gathers from another row. Such a
kernel instead tiles the last outer loop, the contiguous kept dimension, into blocks of
`LANES` elements, one accumulator per element, and vectorizes across the block inside the
reduction loop: every load is contiguous again.
"""

from __future__ import annotations

from ...ir import FusedKernel, InnerLoop
from ...ops import DependencyCollector, use_handler
from ...sizes import affine_coefficient, static_int

LANES = 32  # elements per tile: four AVX2 vectors of float accumulators, to hide add latency
MIN_LANES = 8  # one AVX2 vector of floats
_SCALAR_REDUCTIONS = ("argmax", "argmin")  # their index bookkeeping runs as scalar code


def lane_loop(kernel: FusedKernel):
    """The (var, size) of the outer loop to tile and vectorize across, or None to vectorize the
    innermost reduction loop as usual."""
    if not kernel.outer or not kernel.inner or kernel.scratch or kernel.long_scratch:
        return None
    if any(getattr(n.buffer.data, "reduction_type", None) in _SCALAR_REDUCTIONS for n in kernel.nodes):
        return None
    x, x_size = kernel.outer[-1]
    r, _ = kernel.inner[-1]
    width = static_int(x_size)
    if width is not None and width < MIN_LANES:
        return None  # too narrow to fill a vector: the default loop order parallelizes better
    accesses = []
    for stage in kernel.stages:
        if isinstance(stage, InnerLoop):
            for node in stage.nodes:
                collector = DependencyCollector()
                with use_handler(collector):
                    node.body()
                accesses += [index for name, index in (*collector.reads, *collector.writes)
                             if name not in kernel.locals]
    gains = False
    for index in accesses:
        cx, cr = affine_coefficient(index, x), affine_coefficient(index, r)
        if cx is None or cr is None or cx not in (0, 1):
            return None  # a lane would not find its element next to its neighbour's
        if cx == 1 and cr == 1:
            return None
        gains = gains or (cx == 1 and cr not in (0, 1))  # contiguous across lanes, strided along r
    return kernel.outer[-1] if gains else None
