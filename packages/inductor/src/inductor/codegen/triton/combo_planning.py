"""Combo kernels: independent pointwise kernels run by one Triton launch. This pass (between
scheduling and code generation) chooses the runs; combo.py prints each as one kernel. It is
Triton's: other targets declare `combo_kernels = False` (codegen/backend.py) and keep their steps.

Each launch costs the host more than a small kernel takes on the GPU, and autocast models
are full of small kernels: the casts of every weight and bias at each call (96 of the 149
kernels of a GPT-2 training forward) and, in the backward, the casts of each weight gradient
back to float32. Two kinds of pointwise kernels can be moved, so that consecutive ones meet
and become one `ComboKernel`:

    hoisted   kernels that read only graph inputs may run as early as the first of a run
              (the forward's weight casts);
    deferred  kernels whose results no later step reads (graph outputs) may run as late as
              the last of a run (the backward's gradient casts).

Moving a kernel keeps buffers alive longer: a hoisted cast's output from the start of the run,
a deferred cast's input until its end. A combo holds at most MAX_COMBO_BYTES of those, so a
model's casts become a few launches rather than one that holds every cast weight at once. A
run ends at a step that may write a graph input (a fallback op, or a kernel storing into one):
readers of that input must not move across it.

One kernel is split instead: the scheduler joins unrelated work over small loops into one
kernel to save launches (scheduler.py, MAX_UNRELATED_ELEMENTS), and each program then runs
every part in turn: an AdamW step's 24 bias updates over 2048 elements made one kernel of two
programs that took 0.070 ms on an H100, 7% of the step. Its independent parts (no part reads
or writes what another writes) become the members of combos, each with programs of its own.

Neighbours that stayed apart then join, whatever their size, where none reads or writes what
another writes and each stores into inputs alone: an optimizer step's per-parameter updates
(48 launches for a 24-layer MLP's AdamW step, 4 in torch.compile's foreach kernels). With
`combo_kernels` (options.py; off by default), any such neighbours join. Nothing moves, so
nothing is held longer. As torch.compile's, such a combo has a bounded number of members and
arguments, one config (XBLOCK 1024, runtime/triton_configs.py) and so one compile, and
identical members (every weight's update, codegen/triton/kernel.py's element offsets) share
one function (combo.py). On the H200 it takes
that step from 1.09 to 0.81 ms (794a0c5; a first version, 27e401b, had made it slower). Off by
default: on an H100 (2026-12-06, benchmarks/gpu_models.py) it took the AdamW step from 1.04 to
0.95 ms (torch.compile 0.96) and a decode step from 2.26 to 2.05 ms, but a ResNet-50 training
step from 14.0 to 17.5 ms. So by default only in-place updates join, the optimizer's case: the
AdamW step then took 0.95 ms on an H100 (run q, torch.compile 0.96).
"""

from __future__ import annotations

import sympy

from ...ir import ComboKernel, FusedKernel, OuterStep, replace
from ...ops import kernel_accesses
from ...runtime.triton_configs import KIND_POINTWISE
from ... import scheduler
from ...scheduler import extern_inputs
from ...sizes import product
from .kinds import kernel_kind

MAX_COMBO_BYTES = 64 << 20
# Triton compiles a combo's members as one kernel: 97 small casts took 13.5 s on a 2-core CPU.
# Smaller combos compile in parallel (runtime/triton_launch.py precompiles all kernels at once).
# Each program also walks the members before it (combo.py's `tl.where` chain): ConvNeXt-tiny's
# 108 weight casts (H100, benchmarks/gpu_combo_casts.py) took 0.108 ms of kernel time in
# combos of 32, 0.066 ms in combos of 16 and 0.075 in combos of 8 (separate kernels: 0.142).
MAX_COMBO_MEMBERS = 16
# torch.compile's combo kernels stop at 250 arguments; its AdamW combos hold ~19 members of 8.
MAX_COMBO_ARGUMENTS = 160
# A kernel's unrelated parts are split only where each has a block of work of its own: below
# one block (XBLOCK 1024) per part, one program runs them all in either form.
MIN_SPLIT_ELEMENTS = 1024


def combine_small_kernels(steps: list, graph, combines, independent: bool = False) -> list:
    """`steps` with runs of movable pointwise kernels as ComboKernels; `combines(device)`: whether
    the kernel backend of a device runs combo kernels (KernelTargets.combo_kernels);
    `independent`: also join independent neighbours of any size (options.combo_kernels)."""
    inputs = set(graph.input_buffers())
    computed = {b.name: b.layout for b in graph.buffers}
    described: dict[int, _Movable | None] = {}  # both passes ask about the same kernels

    def movable(step):
        if id(step) not in described:
            described[id(step)] = _movable(step, combines, computed)
        return described[id(step)]

    steps = _split_unrelated_parts(steps, graph.input_writes, combines)
    # Buffers stored into an input's memory write that input as much as a fallback does.
    writers = inputs | set(graph.input_writes)
    steps = _hoist_input_readers(steps, inputs, writers, movable)
    steps = _defer_output_writers(steps, writers, movable)
    return _join_independent_neighbours(steps, graph.input_writes, movable, any_kernel=independent)


def _hoist_input_readers(steps: list, inputs: set[str], writers: set[str], movable) -> list:
    combined, run, held = [], None, 0
    for step in steps:
        kernel = movable(step)
        # A kernel storing into an input (an optimizer's in-place update) stays where it is:
        # hoisted, it could overwrite the input before a kernel of the run, or a step since
        # the run began, reads it.
        writes_input = _may_write(step, writers)
        if kernel is None or not all(name in inputs for name, _ in kernel.reads) or writes_input:
            combined.append(step)
            if writes_input:
                run = None
            continue
        if run is None or _full(run, held + kernel.written, step):
            run, held = [step], 0
            combined.append(run)
        else:
            run.append(step)
        held += kernel.written
    return [_combo(s) if isinstance(s, list) else s for s in combined]


def _defer_output_writers(steps: list, writers: set[str], movable) -> list:
    read_later: list[set[str]] = []
    seen: set[str] = set()
    for step in reversed(steps):
        read_later.append(set(seen))
        kernel = movable(step)
        seen |= {name for name, _ in kernel.reads} if kernel else _step_reads(step, movable)
    read_later.reverse()
    combined, run, held = [], [], 0

    def close():
        nonlocal run, held
        if run:
            combined.append(_combo(run))
        run, held = [], 0

    for step, later in zip(steps, read_later):
        kernel = movable(step)
        writes_input = _may_write(step, writers)
        if kernel is None or writes_input or any(node.name in later for node in step.nodes):
            if writes_input:
                close()
            combined.append(step)
            continue
        if run and _full(run, held + kernel.read, step):
            close()
        run.append(step)
        held += kernel.read
    close()
    return combined


def _join_independent_neighbours(steps: list, input_writes: dict[str, str], movable, any_kernel: bool) -> list:
    """Consecutive pointwise kernels none of which reads or writes what another writes, as
    combos of at most MAX_COMBO_MEMBERS members and MAX_COMBO_ARGUMENTS buffers, in place:
    with `any_kernel`, every such kernel; else only those storing into inputs alone (_updates_inputs)."""
    combined, run = [], []
    run_reads, run_writes = set(), set()
    arguments = 0

    def close():
        nonlocal arguments
        if run:
            combined.append(_combo(list(run)))
        arguments = 0
        run.clear()
        run_reads.clear()
        run_writes.clear()

    for step in steps:
        kernel = movable(step)
        if kernel is None or not (any_kernel or _updates_inputs(step, input_writes)):
            close()
            combined.append(step)
            continue
        writes = {node.name for node in step.nodes}
        writes |= {input_writes[name] for name in writes if name in input_writes}
        reads = {name for name, _ in kernel.reads}
        if run and (reads & run_writes or writes & (run_reads | run_writes) or len(run) == MAX_COMBO_MEMBERS
                    or arguments + len(_arguments(step, reads, input_writes)) > MAX_COMBO_ARGUMENTS
                    or step.device != run[0].device):
            close()
        run.append(step)
        run_reads.update(reads)
        run_writes.update(writes)
        arguments += len(_arguments(step, reads, input_writes))
    close()
    return combined


def _updates_inputs(step, input_writes: dict[str, str]) -> bool:
    """Whether every buffer a kernel stores lives in an input's memory: an in-place update, as
    an optimizer's of each parameter and its state."""
    stored = [node.name for node in step.nodes if node.name not in step.locals and node.name not in step.scratch]
    return bool(stored) and all(name in input_writes for name in stored)


def _split_unrelated_parts(steps: list, input_writes: dict[str, str], combines) -> list:
    """`steps` with each kernel of independent parts (_unrelated_parts) as combos of them, in
    order, within the combos' caps of members and arguments."""
    split = []
    for step in steps:
        parts = _unrelated_parts(step, combines)
        if len(parts) < 2:
            split.append(step)
            continue
        run, arguments = [], 0
        for k, nodes in enumerate(parts):
            names = {node.name for node in nodes}
            name = f"{step.name}_{k}" if k else step.name  # the first combo keeps the kernel's name
            member = _with_nodes(step, nodes, name=name, locals=step.locals & names)
            count = len(_arguments(member, {n for n, _ in kernel_accesses(nodes).reads}, input_writes))
            if run and (len(run) == MAX_COMBO_MEMBERS or arguments + count > MAX_COMBO_ARGUMENTS):
                split.append(_combo(run))
                run, arguments = [], 0
            run.append(member)
            arguments += count
        split.append(_combo(run))
    return split


def _unrelated_parts(step, combines) -> list[list]:
    """The nodes of a pointwise kernel over small static loops in independent groups (each in
    kernel order); fewer than two groups where it is no such kernel."""
    if not isinstance(step, FusedKernel) or step.is_reduction or not combines(step.device):
        return []
    numel = product(n for _, n in step.outer)
    small = isinstance(numel, sympy.Integer) and MIN_SPLIT_ELEMENTS <= numel <= scheduler.MAX_UNRELATED_ELEMENTS
    if not small or kernel_kind(step, *_accesses(step.nodes)) != KIND_POINTWISE:
        return []
    accesses = [kernel_accesses([node]) for node in step.nodes]
    written = {name for a in accesses for name, _ in a.writes}
    # Nodes touching a buffer one writes are one part, and so are nodes reading the same
    # elements of a buffer (split, each would load them): not those reading one fixed element
    # (an optimizer's bias corrections, one buffer for every parameter).
    part = list(range(len(step.nodes)))  # union-find over node positions

    def root(k):
        while part[k] != k:
            part[k] = part[part[k]]
            k = part[k]
        return k

    first_toucher: dict[str, int] = {}
    for k, a in enumerate(accesses):
        for name, index in (*a.reads, *a.writes):
            if name in written or sympy.sympify(index).free_symbols:
                part[root(k)] = root(first_toucher.setdefault(name, k))
    groups: dict[int, list] = {}
    for k, node in enumerate(step.nodes):
        groups.setdefault(root(k), []).append(node)
    parts = list(groups.values())
    if any(kernel_kind(_with_nodes(step, nodes), *_accesses(nodes)) != KIND_POINTWISE for nodes in parts):
        return []
    return parts


def _with_nodes(step: FusedKernel, nodes, **changes) -> FusedKernel:
    return replace(step, stages=tuple(OuterStep(node) for node in nodes), **changes)


def _accesses(nodes) -> tuple[list, list]:
    collector = kernel_accesses(nodes)
    return collector.reads, collector.writes


def _arguments(step, reads: set[str], input_writes: dict[str, str]) -> set[str]:
    """The buffers a kernel takes as arguments: those it reads that it does not compute, and
    those it stores (an input's memory for a buffer stored there), not register values."""
    names = {node.name for node in step.nodes}
    stored = {input_writes.get(n, n) for n in names if n not in step.locals and n not in step.scratch}
    return (reads - names) | stored


def _full(run: list, held: int, step) -> bool:
    """Whether `step` must start a new run: the bytes held or the member count would pass their
    caps, or it runs on another device (one launch runs on one device)."""
    return held > MAX_COMBO_BYTES or len(run) == MAX_COMBO_MEMBERS or step.device != run[0].device


def _combo(members: list):
    if len(members) == 1:
        return members[0]
    return ComboKernel(members[0].name, members[0].device, tuple(members))


class _Movable:
    """A pointwise kernel's reads and the bytes it reads and writes."""

    def __init__(self, reads, read: int, written: int):
        self.reads, self.read, self.written = reads, read, written


def _movable(step, combines, computed: dict) -> _Movable | None:
    """A pointwise (not tiled) FusedKernel of static sizes and indices on a device that
    `combines`, described (the bytes it reads count computed buffers only: graph inputs stay
    alive anyway); else None."""
    if not isinstance(step, FusedKernel) or not combines(step.device) or step.is_reduction:
        return None
    collector = kernel_accesses(step.nodes)
    if kernel_kind(step, collector.reads, collector.writes) != KIND_POINTWISE or _names_sizes(step, collector):
        return None
    written = _bytes(node.buffer.layout for node in step.nodes)
    read = _bytes(computed[name] for name in {name for name, _ in collector.reads} if name in computed)
    return None if written is None or read is None else _Movable(collector.reads, read, written)


def _names_sizes(step: FusedKernel, collector) -> bool:
    """Whether the kernel's indices, or the sizes its gathers index into, name a size symbol:
    a combo's members take none as parameters (combo.py), so static loops are not enough
    (`x[torch.arange(k, k + 4)]` gathers from x of size s0 over 4 elements)."""
    own = {var for var, _ in (*step.outer, *step.inner)} | collector.indirect_symbols
    exprs = [*(index for _, index in (*collector.reads, *collector.writes)), *collector.index_exprs,
             *collector.indirect_sizes]
    return any(not sympy.sympify(expr).free_symbols <= own for expr in exprs)


def _bytes(layouts) -> int | None:
    total = 0
    for layout in layouts:
        numel = product(layout.size)
        if not isinstance(numel, sympy.Integer):
            return None
        total += int(numel) * layout.dtype.itemsize
    return total


def _step_reads(step, movable) -> set[str]:
    if isinstance(step, ComboKernel):  # its members were described when they were combined
        return {name for member in step.members for name, _ in movable(member).reads}
    if isinstance(step, FusedKernel):
        return {name for name, _ in kernel_accesses(step.nodes).reads}
    return {buffer.name for buffer in extern_inputs(step)}


def _may_write(step, writers: set[str]) -> bool:
    return getattr(step, "is_fallback", False) or any(node.name in writers for node in getattr(step, "nodes", ()))
