"""Scheduler: groups realized buffers into fused kernels, in an order that respects dependencies.

Walks the graph's buffers in creation (topological) order. A ComputedBuffer joins an open
group when their iteration spaces agree (same pointwise size; a reduction's outer+inner
dims; or the reduction's outer dims for epilogues such as `mean = sum / n`) and every
element it reads from the group is the one the group writes at the same loop position (so
no thread reads another's unfinished output). An extern call waits until its result is read,
then closes the groups it reads (see "externs" below).
Every open group only reads buffers of emitted steps, so it may be emitted at any time.

A GPU reduction to few outputs over a long axis arrives already split in two
(passes/split_reductions.py).

Then each group becomes a `FusedKernel` (ir.py): nodes split into OuterSteps and InnerLoops,
buffers consumed only inside their stage kept in registers, and adjacent loops merged when
every index is affine across them (a contiguous pointwise op becomes one flat loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from .ir import (
    Buffer, ComputedBuffer, ExternKernel, FusedKernel, InnerLoop, KernelNode, MultiOutput, OuterStep,
    Reduction, storage_of,
)
from .ops import BufferRenaming, IndexSubstitution, collect_accesses, current_handler, use_handler
from .sizes import affine_coefficient, loop_var, product, static_int

# Open groups are a bounded window: past it, one is emitted (_evict). An optimizer step keeps
# three groups open per parameter until its last foreach op reads them (decay, first and
# second moments): 64 split a 24-layer MLP's AdamW step, materializing the decayed weights of
# the first ten layers instead of fusing them into their update. Finding owners goes through
# an index (`_owner`), so a wide window costs little.
MAX_OPEN_GROUPS = 1024
SIBLING_WINDOW = 64
# Unrelated work joins a group (one loop over both) only over small loops, where it saves a
# launch. Over large ones it saves nothing and costs: an optimizer step's 16 same-shaped weights
# in one loop (112 arrays) ran 3x slower on CPU than one loop per weight, the hardware
# prefetchers tracking only so many streams.
MAX_UNRELATED_ELEMENTS = 65536
MAX_SCRATCH_ELEMENTS = 16384  # one inner row of a scratch buffer must fit a thread's stack comfortably


def _squeezed(sizes) -> tuple:
    return tuple(s for s in sizes if s != 1)


@dataclass
class _Member:
    buffer: ComputedBuffer
    is_inner: bool          # iterates the inner (reduction) loops
    reads: list             # [(name, index)] in group vars
    writes: list


@dataclass(eq=False)  # groups are compared by identity (the open list, the owner index)
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
    a symbolic size merges the run whose product it equals for every value of its symbols
    (2*s0 over (2, s0): a dynamic [B*T, H] view of a [B, T] x [H] layer norm)."""
    counts, k = [], 0
    for size in coarse:
        start, merged = k, sympy.Integer(1)
        while k < len(fine) and not _same_size(merged, size):
            merged *= fine[k]
            k += 1
            if _larger(merged, size):
                return None
        if k == start or not _same_size(merged, size):
            return None
        counts.append(k - start)
    return counts if k == len(fine) else None


def _same_size(a, b) -> bool:
    if a == b:
        return True
    static_a, static_b = static_int(a), static_int(b)
    if static_a is not None and static_b is not None:
        return static_a == static_b
    return sympy.expand(sympy.sympify(a) - sympy.sympify(b)) == 0


def _larger(a, b) -> bool:
    """Whether `a` is known to exceed `b` (static sizes; symbolic ones are not compared)."""
    static_a, static_b = static_int(a), static_int(b)
    return static_a is not None and static_b is not None and static_a > static_b


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


class Scheduler:
    def __init__(self, graph):
        self.graph = graph
        self.steps: list = []           # FusedKernel | ExternKernel | MultiOutput, in run order
        self.open: list[_Group] = []
        self.pending: list = []         # extern calls not yet emitted, in graph order
        self.emitted: set[str] = set(graph.input_names)
        self.kernel_count = 0
        self.seen: set[str] = set()     # buffers the walk has reached (placed, pending or emitted)
        self._owner: dict[str, _Group] = {}  # buffer name -> the open group holding it
        # Buffers stored into an input's memory (input_writes.py): kernels name the input instead.
        self.input_writes: dict[str, str] = graph.input_writes
        self.buffers_by_name = {**{b.name: b for b in graph.buffers}, **graph.input_buffers()}

    def run(self):
        for buffer in self.graph.buffers:
            self.seen.add(buffer.name)
            if isinstance(buffer, ComputedBuffer):
                self._flush_externs_producing({name for name, _ in buffer.reads()})
                target = self.input_writes.get(buffer.name)
                if target is not None:
                    # Every reader of the input's old value runs first (or in the same loop iteration).
                    self._flush_externs_reading(target)
                self._place(buffer, self._open_readers(target) if target else set())
            elif getattr(buffer, "is_check", False):
                # Here, not when read: what is lowered after a check may rely on it (a window at
                # a checked offset), so it runs after the externs before it (which compute what
                # it checks) and before any kernel of a later buffer. Groups already open hold
                # only earlier buffers, which eager computes before the check too; those holding
                # a tensor it checks (`_assert_async(cond)`) run before it.
                self._flush_externs(len(self.pending))
                self._emit_groups_reading({storage.name for value in buffer.inputs()
                                           if (storage := storage_of(value)) is not None})
                self.steps.append(buffer)
                self.emitted.add(buffer.name)
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

    def _flush_externs_reading(self, name: str):
        last = max((k for k, e in enumerate(self.pending) if name in {b.name for b in extern_inputs(e)}), default=-1)
        self._flush_externs(last + 1)

    def _open_readers(self, name: str) -> set[str]:
        return {m.buffer.name for g in self.open for m in g.members if any(r == name for r, _ in m.reads)}

    def _flush_externs(self, count: int):
        for extern in self.pending[:count]:
            self._emit_groups_reading({b.name for b in extern_inputs(extern)})
            self.steps.append(extern)
            self.emitted.add(extern.name)
            self._emit_last_readers()
        del self.pending[:count]

    def _emit_last_readers(self):
        """Emit the open groups left as the last reader of a buffer. Open, a group keeps what it
        reads alive until something reads its result, or to the end of the graph: a backward's
        bias gradients (sums over the batch that nothing reads) held every layer's output
        gradient at once, where eager frees each after its layer. Run now, it lets that buffer
        die before the next extern allocates."""
        outputs, consumers = self.graph.output_names, self.graph.consumers
        for group in list(self.open):
            names = group.names
            for read in {name for m in group.members for name, _ in m.reads} - names:
                if read in outputs or read.startswith("const_"):
                    continue
                if all(c in self.emitted or c in names for c in consumers.get(read, ())):
                    self._emit(group)
                    break

    # -- placement -------------------------------------------------------------------------

    def _fit(self, group: _Group, buffer: ComputedBuffer):
        """The group's loops (outer, inner) once `buffer` joins it, else None. A reduction joining
        a group without one gives it inner loops: its reduced dims, after the group's loops
        (`mean = sum / n` over a pointwise group), or the group's trailing loops they merge."""
        data = buffer.data
        if not isinstance(data, Reduction) and group.inner is not None:
            if _placement(buffer, group.outer, group.inner) is not None:
                return group.outer, group.inner
            # A value in finer dims than the group's loops ([4, 17, 96] joining row sums over
            # [68] x [96], both recomputed from the same inputs): the loops split into its dims.
            size = _squeezed(data.ranges)
            runs = _runs((*group.outer, *group.inner), size)
            if runs is None:
                return None
            split = sum(runs[: len(group.outer)])
            return size[:split], size[split:]
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
        collected = collect_accesses(_body(buffer, is_inner, outer, inner))
        writes = collected.writes
        target = self.input_writes.get(buffer.name)
        if target is not None:
            writes = [*writes, *((target, index) for _, index in writes)]
        return _Member(buffer, is_inner, collected.reads, writes)

    def _legal(self, group: _Group, member: _Member) -> bool:
        """Each element a member reads of a buffer the group writes is the one written at that
        loop position, and the candidate writing an input's memory (input_writes.py) overwrites
        only elements the group's readers of the old value read at the same position."""
        written = {}
        for m in group.members:
            for name, index in m.writes:
                written[name] = index
        if not all(written[name] == index for name, index in member.reads if name in written):
            return False
        mine = dict(member.writes)
        return all(mine[name] == index for m in group.members for name, index in m.reads if name in mine)

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
        if self._owner.get(members[0].buffer.name) is group:  # an open group, not a trial
            self._owner[buffer.name] = group
        return True

    def _place(self, buffer: ComputedBuffer, after: set[str]):
        """`after`: buffers that must run before it (or in its loop iteration), beside those it reads."""
        deps = {name for name, _ in buffer.reads()} | after
        owners = self._owners(deps)
        # A group on another device (CPU scalars a CUDA kernel reads: an optimizer's bias
        # corrections) can never hold this buffer: it runs first, and is no reason to split
        # the same-device groups this buffer could merge.
        for group in [g for g in owners if g.members[0].buffer.device != buffer.device]:
            self._emit(group)
            owners.remove(group)
        if self._join_merged(owners, buffer):
            return
        for group in reversed(owners):
            others = [g for g in owners if g is not group]
            if self._try_join(group, buffer):
                for other in others:
                    self._emit(other)
                return
        for group in owners:
            self._emit(group)
        if self._join_sibling(buffer):
            return
        for group in reversed(self.open):
            if (_small_loops(group) or _shares_fold(group, buffer)) and self._try_join(group, buffer):
                return
        data = buffer.data
        if isinstance(data, Reduction):
            group = _Group(_squeezed(data.ranges), _squeezed(data.reduction_ranges))
            group.members.append(self._member(buffer, group.outer, group.inner, True))
        else:
            group = _Group(_squeezed(data.ranges), None)
            group.members.append(self._member(buffer, group.outer, None, False))
        self._open(group)
        if len(self.open) > MAX_OPEN_GROUPS:
            self._evict()

    def _open(self, group: _Group, at: int | None = None):
        if at is None:
            self.open.append(group)
        else:
            self.open.insert(at, group)
        for name in group.names:
            self._owner[name] = group

    def _owners(self, deps) -> list[_Group]:
        """The open groups holding any of `deps`, in the order they were opened."""
        found = {id(g): g for g in (self._owner.get(name) for name in deps) if g is not None}
        return sorted(found.values(), key=self.open.index)

    def _evict(self):
        """Emit one group to keep the window bounded: the oldest whose results no buffer still
        to come reads (nothing could join it through them), else the oldest."""
        consumers = self.graph.consumers
        for group in self.open:
            if all(c in self.seen for name in group.names for c in consumers.get(name, ())):
                self._emit(group)
                return
        self._emit(self.open[0])

    def _join_sibling(self, buffer: ComputedBuffer) -> bool:
        """Join an open group over the same number of elements that reads some of the same
        activation-sized data: a batch norm backward's two sums over the output gradient (of
        it, and of it times the centred input), a max-pool's values and window offsets, or a
        value returned both as is and transposed, each recomputed from the same inputs, then
        read that data in one pass, not one per reader. Data much smaller than the loops
        (per-channel statistics, an optimizer's scalars) is no reason to join: it stays in
        cache either way. Siblings are near each other in the graph: only the newest
        SIBLING_WINDOW open groups are looked at (the window of open groups is far larger)."""
        data = buffer.data
        numel = product((*data.ranges, *getattr(data, "reduction_ranges", ())))
        large = {name for name, _ in buffer.reads() if _at_least(self._numel(name), numel)}
        if not large:
            return False
        for group in reversed(self.open[-SIBLING_WINDOW:]):
            if product((*group.outer, *(group.inner or ()))) != numel:
                continue
            if large & {name for m in group.members for name, _ in m.reads} and self._try_join(group, buffer):
                return True
        return False

    def _numel(self, name: str):
        buffer = self.buffers_by_name.get(name)
        return product(buffer.layout.size) if buffer is not None else None

    def _join_merged(self, owners: list[_Group], buffer: ComputedBuffer) -> bool:
        """Join `buffer` to the union of the open groups it reads, when they share its loops:
        one loop then computes a parameter's whole update (its decay, moments and step, each
        from another foreach op) instead of one loop per op. Open groups read only emitted
        buffers, never each other, so their members may run in one loop in any order."""
        if len(owners) < 2 or len({(g.outer, g.inner) for g in owners}) != 1:
            return False
        merged = _Group(owners[0].outer, owners[0].inner, [m for g in owners for m in g.members])
        if not self._try_join(merged, buffer):
            return False
        at = self.open.index(owners[-1])
        self.open.remove(owners[-1])
        self._open(merged, at)
        for group in owners[:-1]:
            self.open.remove(group)
        return True

    def _emit_groups_reading(self, deps):
        for group in self._owners(deps):
            self._emit(group)

    def _emit(self, group: _Group):
        self.open.remove(group)
        for name in group.names:
            if self._owner.get(name) is group:
                del self._owner[name]
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
        local, scratch, long_scratch = self._locals(group, stage_of)
        all_exprs = [index for m in group.members for _, index in (*m.reads, *m.writes)]
        for m in group.members:
            all_exprs.extend(collect_accesses(_body(m.buffer, m.is_inner, group.outer, group.inner)).index_exprs)
        outer, subs_o = _merge_loops(list(zip(outer_vars, group.outer)), all_exprs)
        inner, subs_i = _merge_loops(list(zip(inner_vars, group.inner or ())), all_exprs)
        subs = {**subs_o, **subs_i}

        def node(m):
            body = _renamed(_body(m.buffer, m.is_inner, group.outer, group.inner), self.input_writes)
            return KernelNode(m.buffer, _substituted(body, subs), isinstance(m.buffer.data, Reduction))

        built = [
            OuterStep(node(item)) if kind == "outer" else InnerLoop(tuple(node(x) for x in item))
            for kind, item in stages
        ]
        name = f"kernel{self.kernel_count}"
        self.kernel_count += 1
        device = group.members[0].buffer.device
        return FusedKernel(name, device, tuple(outer), tuple(inner), tuple(built), frozenset(local), frozenset(scratch),
                           frozenset(long_scratch))

    def _locals(self, group: _Group, stage_of) -> tuple[set[str], set[str], set[str]]:
        """(register buffers, scratch buffers, long scratch buffers): consumed only inside this
        kernel, either in their own stage, or (scratch) in later InnerLoops of the same outer
        iteration; long scratch rows are symbolic or longer than MAX_SCRATCH_ELEMENTS."""
        consumers = self.graph.consumers
        inner_numel = static_int(product(group.inner or ()))
        keep, scratch, long_scratch = set(), set(), set()
        for m in group.members:
            name = m.buffer.name
            if name in self.graph.output_names or name in self.input_writes:
                continue
            users = consumers.get(name, set())
            if not users or not users <= group.names:
                continue
            if m.is_inner and not isinstance(m.buffer.data, Reduction):
                if any(stage_of[u] != stage_of[name] for u in users):
                    if inner_numel is not None and inner_numel <= MAX_SCRATCH_ELEMENTS:
                        scratch.add(name)
                    else:
                        long_scratch.add(name)
                    continue
            keep.add(name)
        return keep, scratch, long_scratch


def _renamed(body, names: dict):
    """`body` loading and storing buffers under other names (an input written in place)."""
    if not names:
        return body

    def run():
        with use_handler(BufferRenaming(current_handler(), names)):
            body()

    return run


def _at_least(numel, loops) -> bool:
    """Whether a buffer of `numel` elements is at least as large as `loops` (None: unknown);
    symbolic sizes compare where their difference is known non-negative (384*s0 vs 128*s0)."""
    if numel is None:
        return False
    a, b = static_int(numel), static_int(loops)
    if a is not None and b is not None:
        return a >= b
    return numel == loops or sympy.expand(sympy.sympify(numel) - sympy.sympify(loops)).is_nonnegative is True


def _shares_fold(group: _Group, buffer: ComputedBuffer) -> bool:
    """Whether a member reduces the very element function `buffer` reduces (a Welford variance's
    mean and m2, lowering/reductions.py): in one kernel the backend folds it once, reading its
    input once, however large the loops."""
    data = buffer.data
    return isinstance(data, Reduction) and any(
        isinstance(m.buffer.data, Reduction) and m.buffer.data.inner_fn is data.inner_fn for m in group.members
    )


def _small_loops(group: _Group) -> bool:
    numel = static_int(product((*group.outer, *(group.inner or ()))))
    return numel is not None and numel <= MAX_UNRELATED_ELEMENTS


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


def extern_inputs(buffer) -> list[Buffer]:
    from .ir import storage_of

    if isinstance(buffer, MultiOutput):
        return [buffer.parent]
    if isinstance(buffer, ExternKernel):
        return [storage_of(v) for v in buffer.inputs() if storage_of(v) is not None]
    return []
