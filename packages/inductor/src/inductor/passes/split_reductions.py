"""Split reductions: the pass between lowering and scheduling that turns a GPU reduction to few
outputs over a long axis into two reductions.

A looped Triton reduction runs one program per XBLOCK outputs, each streaming the whole
reduced axis. With few outputs most of the GPU idles: a LayerNorm weight gradient (768 sums
over 4096 rows) ran as 12 programs of 64 columns on a 132-SM H200, 171 us where a split
kernel takes ~8 us. Such a reduction becomes two: partials[s, x] reduces chunk s of the axis
(many programs, the prologue fused in), then the original buffer reduces the `nsplit`
partials (its epilogue fuses after it). Only associative reductions with no index to carry
split; argmax/argmin stay whole.

A Welford variance (welford_mean and welford_m2 of one element function) splits into one
set of partials, (mean, m2, weight) of each chunk, written by one kernel that reads the input
once; each final stage combines those triples with Chan's formula (a chunk's weight is its
element count, so chunks of different lengths combine correctly).

The C++ backend does not split: OpenMP already runs the outer loops across the few cores,
or the reduction itself (`parallel for reduction`) when there is a single output.
"""

from __future__ import annotations

import dataclasses

import sympy

from ..ir import ComputedBuffer, Layout, Pointwise, Reduction
from ..ops import WELFORD_TYPES, collect_accesses, ops
from ..sizes import FloorDiv, PythonMod, affine_coefficient, loop_vars, product, static_int

SPLITTABLE = frozenset({"sum", "prod", "max", "min", "any", "all", *WELFORD_TYPES})
SPLIT_TARGET_PROGRAMS = 1024   # ~8 programs per SM: enough to hide memory latency
SPLIT_OUTER_XBLOCK = 64        # outputs per program of a looped outer reduction (triton_configs)
SPLIT_MIN_CHUNK = {"outer": 128, "inner": 1024}  # a program still streams this many elements
SPLIT_MIN_COUNT = 4            # fewer chunks do not pay for the second launch
# A program streaming fewer elements finishes within a few microseconds, about the cost of
# the second launch (a loss's sum over 4096 tokens stays whole).
SPLIT_MIN_PROGRAM_ELEMENTS = 32768
# Outer partials of at most this many rows are persistent Triton kernels whose tiles still span
# >= 32 contiguous outputs (triton_configs._persistent), so each row read is a full 64-128 bytes;
# a 512-row chunk would leave 4-16 outputs per program.
SPLIT_MAX_OUTER_CHUNK = 256


def split_reductions(graph) -> None:
    """Replace each reduction worth splitting (see above) in `graph.buffers` by its partials
    buffer and a reduction of those, which keeps the original name, layout and readers.
    Each final stage waits until a buffer reads it, so that the partials of several reductions
    of one input meet in one kernel, and so do their final stages."""
    rewritten, waiting = [], []
    welford_partials: dict = {}  # (element function, split) -> its (mean, m2, weight) partials
    for buffer in graph.buffers:
        if waiting and (not isinstance(buffer, ComputedBuffer)
                        or {name for name, _ in buffer.reads()} & {final.name for final in waiting}):
            rewritten += waiting
            waiting = []
        count, outer = _split_plan(buffer, graph.targets)
        if count <= 1:
            rewritten.append(buffer)
            continue
        if buffer.data.reduction_type in WELFORD_TYPES:
            key = (id(buffer.data.inner_fn), buffer.data.ranges, buffer.data.reduction_ranges, count, outer)
            known = key in welford_partials
            if not known:
                welford_partials[key] = _welford_partials(graph, buffer, count, outer)
            partials, combine = welford_partials[key]
            finals = _welford_finals(graph, buffer, combine, count)
            new_partials = [] if known else list(partials)
        else:
            partial, final = _split(graph, buffer, count, outer)
            partials, finals, new_partials = [partial], [final], [partial]
        waiting += finals
        for partial in partials:
            graph.consumers.setdefault(partial.name, set()).add(finals[0].name)
        for partial in new_partials:
            rewritten.append(partial)
            for name, _ in partial.reads():  # the partials read what the reduction read
                graph.consumers.setdefault(name, set()).add(partial.name)
    graph.buffers = rewritten + waiting


def _split_plan(buffer, targets) -> tuple[int, bool]:
    """(chunk count, whether the reduced axis is strided): count 1 when it stays whole, as on
    every device whose kernel backend does not split (`KernelBackend.split_reductions_on`)."""
    data = getattr(buffer, "data", None)
    if not (isinstance(buffer, ComputedBuffer) and isinstance(data, Reduction)):
        return 1, False
    if not targets.splits_reductions(buffer.device) or data.reduction_type not in SPLITTABLE:
        return 1, False
    xnumel, rnumel = static_int(product(data.ranges)), static_int(product(data.reduction_ranges))
    if not xnumel or rnumel is None:
        return 1, False  # symbolic sizes (None) would need the split chosen per launch; 0: nothing to do
    outer = _reduces_strided_axis(data)
    programs = -(-xnumel // SPLIT_OUTER_XBLOCK) if outer else xnumel
    if rnumel * (min(xnumel, SPLIT_OUTER_XBLOCK) if outer else 1) < SPLIT_MIN_PROGRAM_ELEMENTS:
        return 1, outer
    wanted = -(-SPLIT_TARGET_PROGRAMS // programs)
    if wanted < SPLIT_MIN_COUNT:
        return 1, outer
    if outer:
        wanted = max(wanted, -(-rnumel // SPLIT_MAX_OUTER_CHUNK))
    count = _chunk_count(rnumel, wanted, rnumel // SPLIT_MIN_CHUNK["outer" if outer else "inner"])
    return (count if count >= SPLIT_MIN_COUNT else 1), outer


def _chunk_count(rnumel: int, wanted: int, most: int) -> int:
    """The smallest divisor of `rnumel` from `wanted` to `most`, else the largest below `most`:
    chunks divide the reduced axis exactly, so no chunk reads past its end (4097 rows: 17 x 241)."""
    divisors = [d for d in range(1, most + 1) if rnumel % d == 0]
    return next((d for d in divisors if d >= wanted), divisors[-1] if divisors else 1)


def _reduces_strided_axis(data: Reduction) -> bool:
    """Whether the reads run contiguously along an output dim rather than the reduced one
    (a sum over dim 0): the partials then put the chunk dim first, so rows stay contiguous.
    Only reads that vary along both innermost dims decide: in a LayerNorm weight gradient the
    per-row mean and rstd (indexed by the reduced dim alone) are small beside the [rows,
    hidden] tensors."""
    index, rindex = loop_vars("i", len(data.ranges)), loop_vars("r", len(data.reduction_ranges))
    collected = collect_accesses(lambda: data.inner_fn(index, rindex))
    last_x = next((v for v, n in zip(reversed(index), reversed(data.ranges)) if n != 1), None)
    last_r = next((v for v, n in zip(reversed(rindex), reversed(data.reduction_ranges)) if n != 1), None)
    along_x = along_r = 0
    for _, expr in collected.reads:
        if last_r is None or last_r not in expr.free_symbols or last_x not in expr.free_symbols:
            continue
        along_r += affine_coefficient(expr, last_r) == 1
        along_x += affine_coefficient(expr, last_x) == 1
    return along_x > along_r


def _split(graph, buffer: ComputedBuffer, count: int, outer: bool) -> tuple[ComputedBuffer, ComputedBuffer]:
    data = buffer.data
    acc = data.acc_dtype or data.dtype
    partials = _partials(graph, data, data.reduction_type, _chunk_element(data, count, outer), count, outer)
    load, position = partials.make_loader(), _chunk_position(data, outer)

    def combine(index, rindex):
        return load(_with_chunk(index, rindex, position))

    final = Reduction(data.device, data.dtype, data.ranges, (sympy.Integer(count),), data.reduction_type, combine, acc)
    return partials, ComputedBuffer(buffer.name, buffer.layout, final)


def _welford_partials(graph, buffer: ComputedBuffer, count: int, outer: bool):
    """(mean, m2, weight) of each chunk, three reductions of one element function, which the
    scheduler puts in one kernel and the printer folds once; and the final stages' element
    function, one for all of them (so that they share a kernel and a fold too).

    The chunks see the data less its first element along the reduced dims (the pivot): Chan's
    formula weighs the differences between chunk means, which for 1000 + randn would carry
    the rounding of means near 1000; shifted, they are small and `x - pivot` is exact
    (Sterbenz) when the mean dominates the spread. The final mean adds the pivot back."""
    data = buffer.data
    pivot = _pivot(data)

    def shifted(index, rindex):
        return ops.sub(data.inner_fn(index, rindex), pivot(index))

    element = _chunk_element(dataclasses.replace(data, inner_fn=shifted), count, outer)
    partials = tuple(_partials(graph, data, kind, element, count, outer) for kind in WELFORD_TYPES)
    loads, position = [p.make_loader() for p in partials], _chunk_position(data, outer)

    def combine(index, rindex):
        index = _with_chunk(index, rindex, position)
        return tuple(load(index) for load in loads)

    return partials, combine


def _pivot(data: Reduction):
    first = [sympy.Integer(0)] * len(data.reduction_ranges)
    return lambda index: data.inner_fn(index, first)


def _welford_finals(graph, buffer: ComputedBuffer, combine, count: int) -> list[ComputedBuffer]:
    """The final stage of one welford_* reduction, combining the partials: the buffer itself,
    or for the mean a reduction to the shifted mean and the buffer adding the pivot back."""
    data = buffer.data
    final = dataclasses.replace(data, reduction_ranges=(sympy.Integer(count),), inner_fn=combine)
    if data.reduction_type != "welford_mean":
        return [ComputedBuffer(buffer.name, buffer.layout, final)]
    acc = data.acc_dtype or data.dtype
    shifted = ComputedBuffer(graph.new_name(), Layout.contiguous(data.device, acc, data.ranges),
                             dataclasses.replace(final, dtype=acc))
    load_shifted, pivot = shifted.make_loader(), _pivot(data)

    def mean(index):
        value = ops.add(load_shifted(index), pivot(index))
        return value if data.dtype == acc else ops.to_dtype(value, data.dtype)

    graph.consumers[shifted.name] = {buffer.name}
    return [shifted, ComputedBuffer(buffer.name, buffer.layout, Pointwise(data.device, data.dtype, data.ranges, mean))]


def _chunk_position(data: Reduction, outer: bool) -> int:
    """Where the chunk dim sits among the partials' dims: first for an outer reduction, so rows
    stay contiguous, else last."""
    return 0 if outer else len(data.ranges)


def _with_chunk(index, rindex, position: int) -> list:
    index = list(index)
    index.insert(position, rindex[0])
    return index


def _chunk_element(data: Reduction, count: int, outer: bool):
    """element(index, rindex) of the partials: index holds the chunk `s` at its position, and
    rindex[0] runs over the chunk."""
    reduced, chunk = data.reduction_ranges, _chunk_size(data, count)
    position = _chunk_position(data, outer)

    def partial(index, rindex):
        # Element `chunk * s + c` of the reduced dims, in row-major order.
        index = list(index)
        s = index.pop(position)
        flat = s * chunk + rindex[0]
        unflattened, stride = [], sympy.Integer(1)
        for k in reversed(range(len(reduced))):
            part = FloorDiv(flat, stride)
            unflattened.append(part if k == 0 else PythonMod(part, reduced[k]))
            stride = stride * reduced[k]
        return data.inner_fn(index, unflattened[::-1])

    return partial


def _chunk_size(data: Reduction, count: int) -> sympy.Integer:
    return sympy.Integer(static_int(product(data.reduction_ranges)) // count)


def _partials(graph, data: Reduction, reduction_type: str, element, count: int, outer: bool) -> ComputedBuffer:
    acc = data.acc_dtype or data.dtype
    ranges = list(data.ranges)
    ranges.insert(_chunk_position(data, outer), sympy.Integer(count))
    partials_data = Reduction(data.device, acc, tuple(ranges), (_chunk_size(data, count),), reduction_type, element, acc)
    return ComputedBuffer(graph.new_name(), Layout.contiguous(data.device, acc, ranges), partials_data)
