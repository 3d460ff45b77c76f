"""Inductor's IR: what lowering produces and what the scheduler hands to a backend.

Two levels, both small immutable dataclasses that print as readable text.

**Tensor-level (built by `lowering/`, one value per ATen node output)**

    Pointwise(device, dtype, ranges, inner_fn)       lazy: inner_fn(index) -> ops value
    Reduction(device, dtype, ranges, reduction_ranges, reduction_type, inner_fn)
                                                     inner_fn(index, rindex) -> ops value
    GenericView(data, size, reindex)                 lazy index remap: data at reindex(index)
    ReinterpretView(data, layout)                    a strided view of a buffer's storage
    Buffer(name, layout)                             named storage, one of:
        InputBuffer                                  a graph input (or a constant attribute)
        ComputedBuffer(data=Pointwise|Reduction)     written by a generated kernel
        ExternKernel(kernel, args, kwargs)           returned by an aten call (mm, conv,
                                                     sdpa...), or by a fallback for an op with
                                                     no lowering; MultiOutput picks a tuple item

Every value has `dtype`, `device`, `size` (sympy) and `make_loader()`: a function from an index
(list of sympy expressions, one per dim) to an ops value. Views compose loaders, so a chain of
views and pointwise ops costs nothing until a consumer realizes it into a ComputedBuffer.
A Pointwise body computes in the dtype of its inputs; lowerings insert `to_dtype` casts
(float16/bfloat16 compute in float32 and round once when stored).

**Kernel-level (built by `scheduler.py`, one per generated kernel)**

    FusedKernel(name, outer, inner, stages)
        outer  ((var, size), ...)   loops run once per kernel; backends parallelize these
        inner  ((var, size), ...)   the reduction loops, shared by every InnerLoop stage
        stages (Stage, ...)         run in order for each outer iteration:
            OuterStep(node)             a node indexed by outer vars only
            InnerLoop(nodes)            nodes iterating the inner loops (reductions and
                                        full-size pointwise); reductions complete at its end
        locals                      buffers kept in registers: computed and consumed within
                                    the kernel, never written to memory
        scratch                     inner-loop buffers read only by later InnerLoops of the same
                                    outer iteration: a backend may keep just one inner row of
                                    them (C++: a stack array) or write them out like any buffer
        long_scratch                the same, with rows of symbolic length or too long for a
                                    stack array (C++: one heap row per thread; Triton writes
                                    them out)
    KernelNode(buffer, body)        body() emits the node's ops (loads, math, store or
                                    reduction+store_reduction) with indices already
                                    expressed in the kernel's loop variables

A pointwise-only kernel has no inner loops: its stages are all OuterSteps, and a backend
chooses how to tile `outer` (C++: parallel outer dims, vectorized innermost; Triton: a flat
XBLOCK). A reduction kernel maps to Triton's x (outer) and r (inner) blocks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import sympy
import torch

from .ops import TextPrinter, collect_accesses, ops, use_handler
from .sizes import Expr, contiguous_strides, loop_vars, product, simplify_index


@dataclass(frozen=True)
class Layout:
    device: torch.device
    dtype: torch.dtype
    size: tuple
    stride: tuple
    offset: Expr = sympy.Integer(0)

    @staticmethod
    def contiguous(device, dtype, size) -> "Layout":
        size = tuple(sympy.sympify(s) for s in size)
        return Layout(device, dtype, size, contiguous_strides(size))

    def index(self, index) -> Expr:
        return simplify_index(self.offset + sum((i * s for i, s, n in zip(index, self.stride, self.size) if n != 1), sympy.Integer(0)))

    def is_contiguous(self) -> bool:
        return self.offset == 0 and all(
            n == 1 or s == c for n, s, c in zip(self.size, self.stride, contiguous_strides(self.size))
        )

    def __str__(self):
        dims = ", ".join(map(str, self.size))
        strides = ", ".join(map(str, self.stride))
        offset = f", offset={self.offset}" if self.offset != 0 else ""
        return f"{str(self.dtype).replace('torch.', '')}[{dims}] stride=({strides}){offset}"


class IRNode:
    """A tensor-valued IR value: `dtype`, `device`, `size`, `make_loader()`."""

    def get_numel(self) -> Expr:
        return product(self.size)


def _render_body(fn, *index_lists) -> str:
    with use_handler(TextPrinter()):
        return str(fn(*index_lists))


@dataclass(frozen=True, eq=False)
class Pointwise(IRNode):
    device: torch.device
    dtype: torch.dtype
    ranges: tuple
    inner_fn: Callable = field(repr=False)

    @property
    def size(self):
        return self.ranges

    def make_loader(self):
        return self.inner_fn

    def __str__(self):
        index = loop_vars("i", len(self.ranges))
        return f"Pointwise({_dt(self.dtype)}[{', '.join(map(str, self.ranges))}], {_render_body(self.inner_fn, index)})"


@dataclass(frozen=True, eq=False)
class Reduction(IRNode):
    device: torch.device
    dtype: torch.dtype
    ranges: tuple
    reduction_ranges: tuple
    reduction_type: str
    inner_fn: Callable = field(repr=False)
    acc_dtype: torch.dtype = None  # the dtype inner_fn returns and the accumulator holds

    @property
    def size(self):
        return self.ranges

    def __str__(self):
        index, rindex = loop_vars("i", len(self.ranges)), loop_vars("r", len(self.reduction_ranges))
        return (
            f"Reduction({_dt(self.dtype)}[{', '.join(map(str, self.ranges))}], "
            f"over [{', '.join(map(str, self.reduction_ranges))}], {self.reduction_type}, "
            f"{_render_body(self.inner_fn, index, rindex)})"
        )


@dataclass(frozen=True, eq=False)
class GenericView(IRNode):
    data: IRNode
    size: tuple
    reindex: Callable = field(repr=False)

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def device(self):
        return self.data.device

    def make_loader(self):
        inner = self.data.make_loader()
        return lambda index: inner(self.reindex(index))

    def __str__(self):
        index = loop_vars("i", len(self.size))
        mapped = ", ".join(map(str, self.reindex(index)))
        return f"GenericView({self.data.name if isinstance(self.data, Buffer) else self.data}, [{', '.join(map(str, self.size))}], [{mapped}])"


class LaidOut(IRNode):
    """A value in memory: its dtype, device and size are those of its `layout` field."""

    @property
    def dtype(self):
        return self.layout.dtype

    @property
    def device(self):
        return self.layout.device

    @property
    def size(self):
        return self.layout.size


@dataclass(frozen=True, eq=False)
class Buffer(LaidOut):
    name: str
    layout: Layout

    def make_loader(self):
        return lambda index: ops.load(self.name, self.layout.index(index))

    def __str__(self):
        return f"{self.name}: {self.layout} = {type(self).__name__}"


@dataclass(frozen=True, eq=False)
class InputBuffer(Buffer):
    pass


@dataclass(frozen=True, eq=False)
class ComputedBuffer(Buffer):
    data: Pointwise | Reduction = None

    def __str__(self):
        return f"{self.name}: {self.layout} = {self.data}"

    def store_body(self) -> Callable:
        """body(index[, rindex]) emitting this buffer's ops: compute and store one element."""
        data, name, layout = self.data, self.name, self.layout
        if isinstance(data, Pointwise):
            return lambda index: ops.store(name, layout.index(index), data.inner_fn(index))
        return lambda index, rindex: ops.store_reduction(
            name, layout.index(index), ops.reduction(data.acc_dtype or data.dtype, data.reduction_type, data.inner_fn(index, rindex))
        )

    def reads(self) -> list[tuple[str, Expr]]:
        """(buffer, index) of every element one store reads, in loop variables `i*` and `r*`."""
        body, data = self.store_body(), self.data
        index = loop_vars("i", len(data.ranges))
        if isinstance(data, Pointwise):
            return collect_accesses(lambda: body(index)).reads
        return collect_accesses(lambda: body(index, loop_vars("r", len(data.reduction_ranges)))).reads


@dataclass(frozen=True, eq=False)
class ExternKernel(Buffer):
    """`name = kernel(*args, **kwargs)` in the wrapper; args hold IR values or Python constants."""

    kernel: str = ""
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    is_fallback: bool = False
    aliases_inputs: bool = False  # its output may be a view of an input (schema alias info)
    # A runtime check (torch._check on a data-dependent value): nothing lowered after it may
    # run before it, since kernels after it index with what it checks.
    is_check: bool = False

    def inputs(self) -> list[IRNode]:
        found = []
        for value in [*self.args, *self.kwargs.values()]:
            found.extend(ir_leaves(value))
        return found

    def __str__(self):
        return f"{self.name}: {self.layout if self.layout else 'tuple'} = {self.kernel}(...)"


@dataclass(frozen=True, eq=False)
class MultiOutput(Buffer):
    """Item `path` of a tuple returned by an ExternKernel."""

    parent: ExternKernel = None
    path: tuple = ()


@dataclass(frozen=True, eq=False)
class ReinterpretView(LaidOut):
    data: Buffer
    layout: Layout

    def make_loader(self):
        return lambda index: ops.load(self.data.name, self.layout.index(index))

    def __str__(self):
        return f"ReinterpretView({self.data.name}, {self.layout})"


def ir_leaves(value) -> list[IRNode]:
    if isinstance(value, IRNode):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in ir_leaves(item)]
    return []


def storage_of(value: IRNode) -> Buffer | None:
    """The buffer whose memory a realized value reads, if it is one or a strided view of one."""
    if isinstance(value, Buffer):
        return value
    if isinstance(value, ReinterpretView):
        return value.data
    return None


def _dt(dtype) -> str:
    return str(dtype).replace("torch.", "")


# ----------------------------------------------------------------------------- kernel level


@dataclass(frozen=True, eq=False)
class KernelNode:
    buffer: ComputedBuffer
    body: Callable = field(repr=False)
    is_reduction: bool = False

    @property
    def name(self):
        return self.buffer.name


@dataclass(frozen=True)
class OuterStep:
    node: KernelNode

    def __str__(self):
        return f"    {self.node.name} = {_render_body(self.node.body)}"


@dataclass(frozen=True)
class InnerLoop:
    nodes: tuple

    def __str__(self):
        lines = [f"      {n.name} = {_render_body(n.body)}" for n in self.nodes]
        return "    inner loop:\n" + "\n".join(lines)


@dataclass(frozen=True, eq=False)
class FusedKernel:
    name: str
    device: torch.device
    outer: tuple
    inner: tuple
    stages: tuple
    locals: frozenset = frozenset()
    scratch: frozenset = frozenset()
    long_scratch: frozenset = frozenset()

    @property
    def nodes(self) -> list[KernelNode]:
        found = []
        for stage in self.stages:
            found.extend([stage.node] if isinstance(stage, OuterStep) else stage.nodes)
        return found

    @property
    def is_reduction(self) -> bool:
        return any(isinstance(s, InnerLoop) for s in self.stages)

    def __str__(self):
        loops = ", ".join(f"{v} < {n}" for v, n in self.outer)
        inner = ", ".join(f"{v} < {n}" for v, n in self.inner)
        head = f"{self.name}: for {loops or '()'}" + (f" | inner {inner}" if inner else "")
        local = f"  (registers: {', '.join(sorted(self.locals))})" if self.locals else ""
        local += f"  (scratch rows: {', '.join(sorted(self.scratch))})" if self.scratch else ""
        return "\n".join([head + local, *map(str, self.stages)])


@dataclass(frozen=True)
class ComboKernel:
    """Independent pointwise FusedKernels run by one launch, each over its own range of program
    ids (codegen/triton/combo_planning.py): `nodes` are all of theirs."""

    name: str
    device: torch.device
    members: tuple

    @property
    def nodes(self) -> list[KernelNode]:
        return [node for member in self.members for node in member.nodes]

    def __str__(self):
        return "\n".join([f"{self.name}: one launch of", *(str(m) for m in self.members)])


# The steps that are generated kernels; the others are extern calls and their outputs.
KERNEL_STEPS = (FusedKernel, ComboKernel)


def replace(obj, **changes):
    return dataclasses.replace(obj, **changes)
