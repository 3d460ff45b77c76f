"""Combo kernels: pointwise kernels that read only the graph's inputs, run by one launch.

An autocast model casts every weight and bias at each call (8 kernels per GPT-2 layer, 96 of
the 149 kernels of its training forward). Each is tiny on the GPU, but each launch costs the
host more than the kernel takes, and such models are host-bound on an H200. These kernels read
nothing another kernel writes, so they may run as early as the first of them: consecutive
ones become one `ComboKernel`, which Triton runs as one launch (codegen/triton/combo.py).

Running a kernel earlier keeps its output alive longer (a cast weight from the start of the
graph instead of from just before its matmul), so a combo holds at most MAX_COMBO_BYTES of
outputs: a model's casts become a few launches, not one that holds every cast weight at once.
"""

from __future__ import annotations

import sympy

from .codegen.triton.kinds import kernel_kind
from .ir import ComboKernel, FusedKernel
from .ops import DependencyCollector, use_handler
from .runtime.triton_configs import KIND_POINTWISE
from .sizes import product

MAX_COMBO_BYTES = 64 << 20


def combine_input_kernels(steps: list, graph, devices: set[str]) -> list:
    """`steps` with runs of input-only pointwise kernels on `devices` as ComboKernels."""
    inputs = set(graph.input_buffers())
    combined, open_combo, held = [], None, 0
    for step in steps:
        size = _output_bytes(step) if isinstance(step, FusedKernel) and step.device.type in devices else None
        if size is None or not _reads_only(step, inputs):
            combined.append(step)
            if getattr(step, "is_fallback", False) or any(node.name in inputs for node in getattr(step, "nodes", ())):
                open_combo = None  # it may write an input: later readers of it must not run earlier
            continue
        if open_combo is None or held + size > MAX_COMBO_BYTES:
            open_combo, held = [step], 0
            combined.append(open_combo)
        else:
            open_combo.append(step)
        held += size
    return [_combo(s) if isinstance(s, list) else s for s in combined]


def _combo(members: list):
    if len(members) == 1:
        return members[0]
    return ComboKernel(members[0].name, members[0].device, tuple(members))


def _output_bytes(kernel: FusedKernel) -> int | None:
    """Bytes the kernel writes, if it is a pointwise (not tiled) kernel of static size; else None."""
    if kernel.is_reduction:
        return None
    reads, writes = _accesses(kernel)
    if kernel_kind(kernel, reads, writes) != KIND_POINTWISE:
        return None
    total = 0
    for node in kernel.nodes:
        numel = product(node.buffer.layout.size)
        if not isinstance(numel, sympy.Integer):
            return None
        total += int(numel) * node.buffer.layout.dtype.itemsize
    return total


def _reads_only(kernel: FusedKernel, names: set[str]) -> bool:
    reads, _ = _accesses(kernel)
    return all(name in names for name, _ in reads)


def _accesses(kernel: FusedKernel):
    collector = DependencyCollector()
    with use_handler(collector):
        for node in kernel.nodes:
            node.body()
    return collector.reads, collector.writes
