"""Scheduler: groups realized buffers into fused kernels, in an order that respects dependencies.

Walks the graph's buffers in creation (topological) order. A ComputedBuffer joins an open
group when their iteration spaces agree (same pointwise size; a reduction's outer+inner
dims; or the reduction's outer dims for epilogues such as `mean = sum / n`) and every
element it reads from the group is the one the group writes at the same loop position (so
no thread reads another's unfinished output). An extern call waits until its result is read,
then closes the groups it reads (see "externs" below).
Every open group only reads buffers of emitted steps, so it may be emitted at any time.

Before grouping, a GPU reduction to few outputs over a long axis is split in two
(`split_reductions`): partial reductions over chunks, then one over the partials.

Then each group becomes a `FusedKernel` (ir.py): nodes split into OuterSteps and InnerLoops,
buffers consumed only inside their stage kept in registers, and adjacent loops merged when
every index is affine across them (a contiguous pointwise op becomes one flat loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from .ir import (
    Buffer, ComputedBuffer, ExternKernel, FusedKernel, InnerLoop, KernelNode, Layout, MultiOutput, OuterStep,
    Pointwise, Reduction,
)
from .ops import DependencyCollector, IndexSubstitution, current_handler, use_handler
from .sizes import FloorDiv, Mod, affine_coefficient, loop_var, loop_vars, product, static_int

MAX_OPEN_GROUPS = 8
MAX_SCRATCH_ELEMENTS = 16384  # one inner row of a scratch buffer must fit a thread's stack comfortably


def _squeezed(sizes) -> tuple:
    return tuple(s for s in sizes if s != 1)


@dataclass
class _Member:
    buffer: ComputedBuffer
    is_inner: bool          # iterates the inner (reduction) loops
    reads: list             # [(name, index)] in group vars
    writes: list


@dataclass
class _Group:
    outer: tuple            # squeezed sizes
    inner: tuple | None     # None: no reduction yet
    members: list = field(default_factory=list)

    @property
    def names(self):
        return {m.buffer.name for m in self.members}


def _runs(coarse, fine) -> list[int] | None:
    """How many adjacent dims of `fine` each dim of `coarse` merges ((68, 96) over (4, 17, 96):
    [2, 1]); None when `coarse` is not `fine` with runs of adjacent dims merged. Squeezed sizes;
    a symbolic size only matches itself."""
    counts, k = [], 0
    for size in coarse:
        if k < len(fine) and fine[k] == size:
            counts.append(1)
            k += 1
            continue
        target, start, product = static_int(size), k, 1
        while target is not None and k < len(fine) and static_int(fine[k]) is not None and product < target:
            product *= static_int(fine[k])
            k += 1
        if target is None or product != target:
            return None
        counts.append(k - start)
    return counts if k == len(fine) else None


def _merges(size, loops) -> bool:
    return tuple(size) == tuple(loops) or _runs(size, loops) is not None


def _cuts(size, loops) -> set[int]:
    """The points between `loops` that no run merged into a dim of `size` crosses (empty when
    `size` is not a merge of `loops`): where the loops may split into outer and inner."""
    runs = _runs(size, loops)
    return set() if runs is None else {sum(runs[:k]) for k in range(len(runs) + 1)}


def _node_index(sizes, variables, var_sizes):
    """The index of a node of `sizes` at loop `variables` (of `var_sizes`, squeezed): zero for
    size-1 dims; a dim that merges several loops (`_runs`) combines them row-major, as a node
    viewed [B*T, H] runs in loops [B, T] x [H]."""
    squeezed = _squeezed(sizes)
    runs = iter([1] * len(squeezed) if squeezed == tuple(var_sizes) else _runs(squeezed, var_sizes))
    loops = iter(zip(variables, var_sizes))
    index = []
    for size in sizes:
        if size == 1:
            index.append(sympy.Integer(0))
            continue
        expr = sympy.Integer(0)
        for _ in range(next(runs)):
            var, extent = next(loops)
            expr = expr * extent + var
        index.append(expr)
    return index


def _outer_vars(n):
    return [loop_var("x", k) for k in range(n)]


def _inner_vars(n):
    return [loop_var("r", k) for k in range(n)]


def _body(buffer: ComputedBuffer, is_inner: bool, outer, inner):
    """A zero-argument body for `buffer` in the loop variables of a group with these loops."""
    outer_vars, inner_vars = _outer_vars(len(outer)), _inner_vars(len(inner or ()))
    data = buffer.data
    store = buffer.store_body()
    if isinstance(data, Reduction):
        index = _node_index(data.ranges, outer_vars, outer)
        rindex = _node_index(data.reduction_ranges, inner_vars, inner)
        return lambda: store(index, rindex)
    if is_inner:
        index = _node_index(data.ranges, [*outer_vars, *inner_vars], (*outer, *inner))
    else:
        index = _node_index(data.ranges, outer_vars, outer)
    return lambda: store(index)


def _placement(buffer: ComputedBuffer, outer, inner) -> bool | None:
    """Whether `buffer` runs inside the inner loops (True) or once per outer iteration (False)
    of a group with these loops; None if its iteration space is not theirs, up to merged dims."""
    data = buffer.data
    if isinstance(data, Reduction):
        if inner is None:
            return None
        return True if _merges(_squeezed(data.ranges), outer) and _merges(_squeezed(data.reduction_ranges), inner) else None
    size = _squeezed(data.ranges)
    if inner is not None and len(outer) in _cuts(size, (*outer, *inner)):
        return True
    return False if _merges(size, outer) else None


def _collect(body):
    collector = DependencyCollector()
    with use_handler(collector):
        body()
    return collector


class Scheduler:
    def __init__(self, graph):
        self.graph = graph
        self.steps: list = []           # FusedKernel | ExternKernel | MultiOutput, in run order
        self.open: list[_Group] = []
        self.pending: list = []         # extern calls not yet emitted, in graph order
        self.emitted: set[str] = set(graph.input_names)
        self.kernel_count = 0

    def run(self):
        split_reductions(self.graph)
        for buffer in self.graph.buffers:
            if isinstance(buffer, ComputedBuffer):
                self._flush_externs_producing({name for name, _ in _collect_reads(buffer)})
                self._place(buffer)
            elif getattr(buffer, "is_fallback", False):
                # A fallback may write into its arguments (copy_, index_put_): every kernel
                # placed before it in the graph must have run, readers of those inputs included.
                self._flush_externs(len(self.pending))
                self._emit_groups_reading({name for group in self.open for name in group.names})
                self.steps.append(buffer)
                self.emitted.add(buffer.name)
            else:
                self.pending.append(buffer)
        self._flush_externs(len(self.pending))
        while self.open:
            self._emit(self.open[0])
        return self.steps

    # -- externs ---------------------------------------------------------------------------
    #
    # An extern call (a matmul) runs only when something reads its result, or at the end: the
    # groups it reads stay open meanwhile, so later buffers of the same size still join them:
    # pointwise work on either side of a matmul over one activation becomes one kernel reading
    # it once (a backward's recomputed GELU, input of the weight-gradient matmul, and the GELU
    # gradient after the input-gradient matmul). Externs keep their order among themselves.

    def _flush_externs_producing(self, deps):
        last = max((k for k, e in enumerate(self.pending) if e.name in deps), default=-1)
        self._flush_externs(last + 1)

    def _flush_externs(self, count: int):
        for extern in self.pending[:count]:
            self._emit_groups_reading({b.name for b in extern_inputs(extern)})
            self.steps.append(extern)
            self.emitted.add(extern.name)
        del self.pending[:count]

    # -- placement -------------------------------------------------------------------------

    def _fit(self, group: _Group, buffer: ComputedBuffer):
        """The group's loops (outer, inner) once `buffer` joins it, else None. A reduction joining
        a group without one gives it inner loops: its reduced dims, after the group's loops
        (`mean = sum / n` over a pointwise group), or the group's trailing loops they merge."""
        data = buffer.data
        if not isinstance(data, Reduction) or group.inner is not None:
            return (group.outer, group.inner) if _placement(buffer, group.outer, group.inner) is not None else None
        out, red = _squeezed(data.ranges), _squeezed(data.reduction_ranges)
        if _merges(out, group.outer):
            return group.outer, red
        runs = _runs((*out, *red), group.outer)
        if runs is None:
            return None
        split = sum(runs[: len(out)])
        return group.outer[:split], group.outer[split:]

    def _member(self, buffer, outer, inner, is_inner) -> _Member:
        collected = _collect(_body(buffer, is_inner, outer, inner))
        return _Member(buffer, is_inner, collected.reads, collected.writes)

    def _legal(self, group: _Group, member: _Member) -> bool:
        written = {}
        for m in group.members:
            for name, index in m.writes:
                written[name] = index
        return all(written[name] == index for name, index in member.reads if name in written)

    def _try_join(self, group: _Group, buffer: ComputedBuffer) -> bool:
        if group.members[0].buffer.device != buffer.device:
            return False  # one kernel runs on one device (a CPU scalar's kernel beside CUDA ones)
        fit = self._fit(group, buffer)
        if fit is None:
            return False
        outer, inner = fit
        members = group.members
        if (outer, inner) != (group.outer, group.inner):
            # New loops (the group gained inner ones): place every member in them again.
            placements = [_placement(m.buffer, outer, inner) for m in members]
            if None in placements:
                return False
            members = [self._member(m.buffer, outer, inner, p) for m, p in zip(members, placements)]
        candidate = self._member(buffer, outer, inner, _placement(buffer, outer, inner))
        trial = _Group(outer, inner, members)
        if not self._legal(trial, candidate):
            return False
        group.outer, group.inner, group.members = outer, inner, [*members, candidate]
        return True

    def _place(self, buffer: ComputedBuffer):
        deps = {name for name, _ in _collect_reads(buffer)}
        owners = [g for g in self.open if g.names & deps]
        for group in reversed(owners):
            others = [g for g in owners if g is not group]
            if self._try_join(group, buffer):
                for other in others:
                    self._emit(other)
                return
        for group in owners:
            self._emit(group)
        for group in reversed(self.open):
            if self._try_join(group, buffer):
                return
        data = buffer.data
        if isinstance(data, Reduction):
            group = _Group(_squeezed(data.ranges), _squeezed(data.reduction_ranges))
            group.members.append(self._member(buffer, group.outer, group.inner, True))
        else:
            group = _Group(_squeezed(data.ranges), None)
            group.members.append(self._member(buffer, group.outer, None, False))
        self.open.append(group)
        if len(self.open) > MAX_OPEN_GROUPS:
            self._emit(self.open[0])

    def _emit_groups_reading(self, deps):
        for group in [g for g in self.open if g.names & deps]:
            self._emit(group)

    def _emit(self, group: _Group):
        self.open.remove(group)
        self.steps.append(self._kernel(group))
        self.emitted |= group.names

    # -- kernel construction ---------------------------------------------------------------

    def _kernel(self, group: _Group) -> FusedKernel:
        outer_vars = _outer_vars(len(group.outer))
        inner_vars = _inner_vars(len(group.inner or ()))
        stage_of: dict[str, int] = {}
        stages: list[list] = []  # [("outer", member)] or [("inner", [members])]
        for m in group.members:
            reads = {name for name, _ in m.reads}
            if not m.is_inner:
                stages.append(["outer", m])
            else:
                last = stages[-1] if stages and stages[-1][0] == "inner" else None
                blocked = last is not None and any(
                    isinstance(x.buffer.data, Reduction) and x.buffer.name in reads for x in last[1]
                )
                if last is None or blocked:
                    stages.append(["inner", [m]])
                else:
                    last[1].append(m)
            stage_of[m.buffer.name] = len(stages) - 1
        local, scratch = self._locals(group, stage_of)
        all_exprs = [index for m in group.members for _, index in (*m.reads, *m.writes)]
        for m in group.members:
            all_exprs.extend(_collect(_body(m.buffer, m.is_inner, group.outer, group.inner)).index_exprs)
        outer, subs_o = _merge_loops(list(zip(outer_vars, group.outer)), all_exprs)
        inner, subs_i = _merge_loops(list(zip(inner_vars, group.inner or ())), all_exprs)
        subs = {**subs_o, **subs_i}

        def node(m):
            body = _body(m.buffer, m.is_inner, group.outer, group.inner)
            return KernelNode(m.buffer, _substituted(body, subs), isinstance(m.buffer.data, Reduction))

        built = [
            OuterStep(node(item)) if kind == "outer" else InnerLoop(tuple(node(x) for x in item))
            for kind, item in stages
        ]
        name = f"kernel{self.kernel_count}"
        self.kernel_count += 1
        device = group.members[0].buffer.device
        return FusedKernel(name, device, tuple(outer), tuple(inner), tuple(built), frozenset(local), frozenset(scratch))

    def _locals(self, group: _Group, stage_of) -> tuple[set[str], set[str]]:
        """(register buffers, scratch buffers): consumed only inside this kernel, either in their
        own stage, or (scratch) in later InnerLoops of the same outer iteration."""
        consumers = self.graph.consumers
        inner_numel = static_int(product(group.inner or ()))
        keep, scratch = set(), set()
        for m in group.members:
            name = m.buffer.name
            if name in self.graph.output_names:
                continue
            users = consumers.get(name, set())
            if not users or not users <= group.names:
                continue
            if m.is_inner and not isinstance(m.buffer.data, Reduction):
                if any(stage_of[u] != stage_of[name] for u in users):
                    if inner_numel is not None and inner_numel <= MAX_SCRATCH_ELEMENTS:
                        scratch.add(name)
                    continue
            keep.add(name)
        return keep, scratch


def _substituted(body, subs):
    if not subs:
        return body

    def run():
        with use_handler(IndexSubstitution(current_handler(), subs)):
            body()

    return run


def _merge_loops(dims, exprs):
    """Merge adjacent loops (outer, inner) into one when every index is affine with
    coeff(outer) == coeff(inner) * size(inner). Returns the loops and the substitution
    (merged-away variables -> 0) that rewrites indices onto the surviving variable."""
    merged = [[var, size] for var, size in dims]
    subs = {}
    exprs = [sympy.expand(e) for e in exprs]
    k = len(merged) - 2
    while k >= 0:
        (va, sa), (vb, sb) = merged[k], merged[k + 1]
        ok = True
        for e in exprs:
            ca, cb = affine_coefficient(e, va), affine_coefficient(e, vb)
            if ca is None or cb is None or sympy.expand(ca - cb * sb) != 0:
                ok = False
                break
        if ok:
            subs[va] = sympy.Integer(0)
            exprs = [e.xreplace({va: 0}) for e in exprs]
            merged[k : k + 2] = [[vb, sa * sb]]
        k -= 1
    return [(v, s) for v, s in merged], subs


def _collect_reads(buffer: ComputedBuffer):
    data = buffer.data
    body = buffer.store_body()
    if isinstance(data, Pointwise):
        collected = _collect(lambda: body(loop_vars("i", len(data.ranges))))
    else:
        collected = _collect(lambda: body(loop_vars("i", len(data.ranges)), loop_vars("r", len(data.reduction_ranges))))
    return collected.reads


def extern_inputs(buffer) -> list[Buffer]:
    from .ir import storage_of

    if isinstance(buffer, MultiOutput):
        return [buffer.parent]
    if isinstance(buffer, ExternKernel):
        return [storage_of(v) for v in buffer.inputs() if storage_of(v) is not None]
    return []


# -- split reductions ------------------------------------------------------------------------
#
# A looped Triton reduction runs one program per XBLOCK outputs, each streaming the whole
# reduced axis. With few outputs most of the GPU idles: a LayerNorm weight gradient (768 sums
# over 4096 rows) ran as 12 programs of 64 columns on a 132-SM H200, 171 us where a split
# kernel takes ~8 us. Such a reduction becomes two: partials[s, x] reduces chunk s of the axis
# (many programs, the prologue fused in), then the original buffer reduces the `nsplit`
# partials (its epilogue fuses after it). Only associative reductions with no index to carry
# split; argmax/argmin stay whole.
#
# The C++ backend does not split: OpenMP already runs the outer loops across the few cores,
# or the reduction itself (`parallel for reduction`) when there is a single output.
SPLIT_DEVICES = {"cuda"}
SPLITTABLE = frozenset({"sum", "prod", "max", "min", "any", "all"})
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
    for buffer in graph.buffers:
        if waiting and (not isinstance(buffer, ComputedBuffer)
                        or {name for name, _ in _collect_reads(buffer)} & {final.name for final in waiting}):
            rewritten += waiting
            waiting = []
        count, outer = _split_plan(buffer)
        if count > 1:
            partials, final = _split(graph, buffer, count, outer)
            rewritten.append(partials)
            waiting.append(final)
            graph.consumers[partials.name] = {final.name}
            for name, _ in _collect_reads(partials):  # the partials read what the reduction read
                graph.consumers.setdefault(name, set()).add(partials.name)
        else:
            rewritten.append(buffer)
    graph.buffers = rewritten + waiting


def _split_plan(buffer) -> tuple[int, bool]:
    """(chunk count, whether the reduced axis is strided): count 1 when it stays whole."""
    data = getattr(buffer, "data", None)
    if not (isinstance(buffer, ComputedBuffer) and isinstance(data, Reduction)):
        return 1, False
    if buffer.device.type not in SPLIT_DEVICES or data.reduction_type not in SPLITTABLE:
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
    collected = _collect(lambda: data.inner_fn(index, rindex))
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
    reduced = data.reduction_ranges
    chunk = sympy.Integer(static_int(product(reduced)) // count)
    acc = data.acc_dtype or data.dtype
    position = 0 if outer else len(data.ranges)  # where the chunk dim sits among the partials' dims

    def partial(index, rindex):
        # Element `chunk * s + c` of the reduced dims, in row-major order.
        index = list(index)
        s = index.pop(position)
        flat = s * chunk + rindex[0]
        unflattened, stride = [], sympy.Integer(1)
        for k in reversed(range(len(reduced))):
            part = FloorDiv(flat, stride)
            unflattened.append(part if k == 0 else Mod(part, reduced[k]))
            stride = stride * reduced[k]
        return data.inner_fn(index, unflattened[::-1])

    ranges = list(data.ranges)
    ranges.insert(position, sympy.Integer(count))
    partials_data = Reduction(data.device, acc, tuple(ranges), (chunk,), data.reduction_type, partial, acc)
    partials = ComputedBuffer(graph.new_name(), Layout.contiguous(data.device, acc, ranges), partials_data)
    load = partials.make_loader()

    def combine(index, rindex):
        index = list(index)
        index.insert(position, rindex[0])
        return load(index)

    final = Reduction(data.device, data.dtype, data.ranges, (sympy.Integer(count),), data.reduction_type, combine, acc)
    return partials, ComputedBuffer(buffer.name, buffer.layout, final)
