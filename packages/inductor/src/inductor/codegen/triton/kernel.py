"""The Triton printer: one `@triton.jit` kernel per FusedKernel, in a module of its own.

A kernel's outer loops become one flat block axis `x` (XBLOCK lanes per program, one program
per block); its inner (reduction) loops become a second axis `r`. Four shapes of kernel:

    pointwise    no inner loops; values are [XBLOCK] blocks
    tiled        a pointwise transpose: [XBLOCK, RBLOCK] tiles on a 2-D grid, `r` the innermost
                 loop (contiguous stores), `x` the others (where a load is contiguous)
    persistent   the whole reduction fits one [XBLOCK, RBLOCK] tile (RBLOCK >= rnumel): every
                 InnerLoop stage works on the same loaded tile, so a softmax reads its input once
    looped       `for roffset in range(0, rnumel, RBLOCK)` per InnerLoop stage, accumulating
                 [XBLOCK, RBLOCK] partials that are folded after the loop

OuterStep values have shape [XBLOCK, 1] in reduction kernels. Every value remembers which
axes it varies along (`dims`), which picks the masks of its loads and stores: a load indexed
by `r` only (a layer-norm weight) is loaded once per program, not once per row. Loop
variables of the IR (`x0, x1, r0...`) are recovered from the flat `xindex`/`rindex` with `//`
and `%`. Size symbols and the two element counts are kernel arguments; the block sizes are
constexprs chosen at launch (runtime/triton_configs.py). So is the position of a load of one
fixed element of a larger buffer (`tl.load(in_ptr3 + offset0)`): an optimizer's per-parameter
update reads its own bias correction out of one buffer of them, and with the position in its
text each parameter's update would be a kernel of its own (24 compiles for a 24-layer MLP).

Values a kernel stores and reads back at the same index stay in registers (the scheduler
only fuses such reads). Its register buffers (`locals`) and `scratch` rows are never written:
a persistent kernel holds the whole row, a looped one recomputes a scratch row in each later
loop that reads it. A looped stage reading another buffer an earlier stage wrote goes through
memory after a barrier, since another thread of the program may have written it.

A pointwise or tiled kernel prints its stores after its loads (up to MAX_DEFERRED_STORES held
back, memory.py). To Triton a store may alias any later load through another pointer, so a
load printed after a store waits for it: an AdamW update printed in graph order (load, load,
store, load, store, ...) took three memory round trips per element where one suffices, and
ran at 2.76 TB/s on an H100 beside torch.compile's 2.9 (loads first).
"""

from __future__ import annotations

import torch

from ...ir import FusedKernel, OuterStep
from ...ops import kernel_accesses, use_handler
from ...runtime.triton_configs import KIND_PERSISTENT, KIND_POINTWISE, KIND_TILED
from ...size_questions import SizeQuestions
from ...sizes import product
from .expressions import triton_dtype
from .kinds import is_outer_reduction, kernel_kind
from .memory import MemoryOps
from .module_text import kernel_module
from .pointwise_ops import PointwiseOps
from .reductions import ReductionOps
from .values import Scope, TritonValue

INT32_LIMIT = 2**31


class TritonKernel(MemoryOps, PointwiseOps, ReductionOps):
    """Prints one FusedKernel. Results: `source` (a Python module), `kind`, `args` (buffer names,
    then size-symbol names, in kernel parameter order) and `numels` (xnumel[, rnumel]).

    The printer is the ops handler its node bodies run under: memory.py, pointwise_ops.py and
    reductions.py each hold a part of that handler; this class holds the kernel-wide state."""

    def __init__(self, kernel: FusedKernel, buffers: dict, size_symbols: set, sizes: SizeQuestions):
        self.kernel = kernel
        self.buffers = buffers
        self.size_symbols = {s.name for s in size_symbols}
        reads, writes = self._accesses()
        accesses = [*reads, *writes]
        self.kind = kernel_kind(kernel, reads, writes)
        # The loops behind each block axis: a tiled kernel's `r` axis is its innermost loop.
        self.loops = (
            {"x": kernel.outer[:-1], "r": kernel.outer[-1:]} if self.kind == KIND_TILED
            else {"x": kernel.outer, "r": kernel.inner}
        )
        self.axis_of = {var.name: axis for axis, loops in self.loops.items() for var, _ in loops}
        self.xnumel = product(n for _, n in self.loops["x"])
        self.rnumel = product(n for _, n in self.loops["r"])
        self.int64_indices = self._needs_int64_indices(accesses, sizes)
        self.outer_reduction = kernel.is_reduction and is_outer_reduction(kernel, accesses)
        self.args: dict[str, bool] = {}          # buffer name -> written
        self.loaded: set[str] = set()            # buffers read from memory (written too: in_out_ptr)
        self.symbols: set[str] = set()
        # (buffer, element) -> parameter, for loads of one fixed element of a larger buffer
        # (memory.py): their positions are arguments, not text.
        self.element_offsets: dict[tuple[str, int], str] = {}
        self.used_vars: set[str] = set()
        self.indirect_dims: dict[str, frozenset] = {}
        # Indirect indices into a dimension that may be empty -> their in-range test (memory.py).
        self.indirect_in_range: dict[str, str] = {}
        # Kernels on CPU tensors run in Triton's interpreter, where checking for the inputs eager
        # raises on costs little (runtime/kernel_errors.py); `raises`: some check was printed.
        self.checks_errors = kernel.device.type == "cpu"
        self.raises = False
        self.device_asserts = False  # on a GPU, instead: some `tl.device_assert` was printed (memory.py)
        self.counter = 0
        self.lines: list[str] = []
        self.scopes = [Scope()]
        self.stored_in_memory: set[str] = set()  # buffers this kernel writes to memory
        self.barrier_needed = False
        # Pointwise and tiled kernels print their stores after every load (_body).
        self.deferred_stores: list[str] | None = [] if self.kind in (KIND_POINTWISE, KIND_TILED) else None
        self.pre: list[str] = []
        self.post: list[str] = []
        self.scratch_nodes: list = []            # looped kernels: scratch producers, recomputed per loop
        self.accumulators: list[str] = []
        self.body_lines = self._body()
        self.source, self.function_name = kernel_module(self, self.body_lines)
        self.numels = [self.xnumel] + ([self.rnumel] if self.kind != KIND_POINTWISE else [])

    @property
    def name(self) -> str:
        """The kernel's step name in the wrapper (`kernel3`); `function_name` is its name in Triton."""
        return self.kernel.name

    @property
    def wrapper_args(self) -> list[str]:
        """The kernel's non-constexpr parameters, as the wrapper names them (numels excluded)."""
        return [*self.args, *sorted(self.symbols), *self.offset_values]

    @property
    def offset_values(self) -> list[str]:
        """The element positions the offset parameters take, as the wrapper passes them."""
        return [str(element) for _, element in self.element_offsets]

    def _accesses(self) -> tuple[list, list]:
        """(buffer, index) of every load, and of every store, in the kernel's loop variables."""
        collector = kernel_accesses(self.kernel.nodes)
        return collector.reads, collector.writes

    def _needs_int64_indices(self, accesses, sizes: SizeQuestions) -> bool:
        """int32 index arithmetic unless some buffer this kernel touches spans 2**31 elements.
        A symbolic extent below 2**31 at the example sizes is guarded to stay there
        (size_questions.py): 64-bit arithmetic costs registers and instructions in every
        index, and a dynamic graph would otherwise pay that at every size."""
        extents = {self.xnumel * self.rnumel: None}  # ordered: the questions, asked in order
        for name, _ in accesses:
            layout = self.buffers[name].layout
            extents[layout.offset + sum(((n - 1) * s for n, s in zip(layout.size, layout.stride)), 0) + 1] = None
        return not all(sizes.below(extent, INT32_LIMIT) for extent in extents)

    # -- values ------------------------------------------------------------------------

    def _new(self, text: str, dtype: torch.dtype, dims) -> TritonValue:
        for scope in reversed(self.scopes):
            if text in scope.cse:
                return scope.cse[text]
        name = f"tmp{self.counter}"
        self.counter += 1
        self.lines.append(f"{name} = {text}")
        value = TritonValue(name, dtype, dims)
        self.scopes[-1].cse[text] = value
        return value

    def _tensor(self, value: TritonValue) -> TritonValue:
        """A constant as a 0-d tensor of its dtype: where Triton cannot infer a literal's type."""
        if value.literal is None:
            return value
        return self._new(f"tl.full([], {value.text}, {triton_dtype(value.dtype)})", value.dtype, ())

    # -- structure ---------------------------------------------------------------------

    def _body(self) -> list[str]:
        """The kernel body's lines, stage by stage; a looped stage is a loop of its own."""
        body: list[str] = []
        for stage in self.kernel.stages:
            if isinstance(stage, OuterStep):
                self.lines = body
                with use_handler(self):
                    stage.node.body()
            elif self.kind == KIND_PERSISTENT:
                self.lines = body
                with use_handler(self):
                    for node in stage.nodes:
                        node.body()
            else:
                body += self._looped_stage(stage)
        return body + (self.deferred_stores or [])
