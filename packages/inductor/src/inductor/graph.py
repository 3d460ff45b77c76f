"""GraphLowering: walks an ATen FX graph and builds IR through the lowering table.

Inputs become InputBuffers (symbolic sizes keep their symbols, bound in the wrapper from
the argument that carries them: input_symbols.py). A `copy_` into an input that ends the graph
(aot_autograd puts an input's new value there, see input_writes.py) stores the value into the
input's memory: the buffer computing it is stored in place when that is safe. Each node's
result stays lazy (Pointwise, views) until a consumer needs memory; a lazy result read by
several nodes is realized so it is computed once. Ops without a lowering run as aten calls
(see lowering/extern.py).
"""

from __future__ import annotations


import math
import operator

import sympy
import torch
import torch.fx
import torch.utils._pytree as pytree

from .codegen.cpp.expressions import CTYPES
from .codegen.targets import KernelTargets
from .codegen.triton.expressions import TRITON_DTYPES
from .context import lowering_graph
from .input_writes import InputWrite, stored_in_place, write_buffers, writes_input_at_end
from .errors import LoweringError
from .input_symbols import InputSymbols, hint_of, size_hint
from .ir import (
    Buffer, ComputedBuffer, ExternKernel, GenericView, InputBuffer, IRNode, Layout, MultiOutput, Pointwise,
    Reduction, ReinterpretView, storage_of,
)
from .layout_optimization import CHANNELS_LAST, INPUT_ORDER, channels_last_nodes
from .lowering import LOWERINGS
from .lowering.extern import fallback, reads_arguments_from_memory
from .lowering.matmul_templates import FOLDED_INTO_KEY
from .lowering.views import make_view, permute
from .memory_order import dense_in_order, dense_strides, memory_order, with_dense_strides
from .ops import DependencyCollector, use_handler
from .options import CompileOptions
from .output_layouts import OutputLayouts
from .size_questions import known_without_hints
from .sizes import as_expr, loop_vars

# A lazy value read by more nodes than this may be realized (computed once) rather than
# recomputed inside each reader: it is when it reads more buffers of its size than
# RECOMPUTE_READS or does more ops than RECOMPUTE_OPS, the limits of torch.compile's
# StorageBox.mark_reuse (realize_reads_threshold, realize_opcount_threshold).
REALIZE_USERS = 1
RECOMPUTE_READS = 4
RECOMPUTE_OPS = 30
# A lazy value computed from a chain of this many lazy values is realized even with one reader:
# each link's loader calls the one before, a few Python frames a link, and a lambda of 512
# additions overflowed the interpreter's recursion limit while its kernel was generated.
MAX_LAZY_CHAIN = 64

class GraphLowering(OutputLayouts, torch.fx.Interpreter):
    def __init__(self, gm: torch.fx.GraphModule, example_inputs, *, options: CompileOptions,
                 strided_outputs: bool = False):
        super().__init__(gm, garbage_collect_values=False)
        # The compile's settings, checked once (options.py): lowerings read them here, on
        # whichever thread lowers the graph (autograd compiles a backward on its own).
        self.options = options
        # Each device's kernel backend (codegen/targets.py): what lowerings and passes may ask of it.
        self.targets = KernelTargets.from_options(options)
        # Whether an output may be a strided view of a buffer in eager's dim order rather than
        # eager's exact strides (see output_layouts.py `_as_strided_output`).
        self.strided_outputs = strided_outputs
        self.example_inputs = list(example_inputs)
        self.buffers: list[Buffer] = []
        self.input_names: list[str] = []
        self.graph_inputs: list = []                  # InputBuffer or sympy expr, per placeholder
        self.symbols = InputSymbols()
        # The table's own dicts, read by the wrapper and kernel calls.
        self.symbol_sources = self.symbols.sources
        self.hints = self.symbols.hints
        self.unbacked_bound_by = self.symbols.unbacked_bound_by
        self.constants: dict[str, torch.Tensor] = {}  # get_attr tensors, by wrapper name
        self.constant_buffers: dict[str, InputBuffer] = {}
        self.outputs: list = []
        self.output_names: set[str] = set()
        self.consumers: dict[str, set[str]] = {}
        self.current_node: torch.fx.Node | None = None
        self._counter = 0
        self._placeholder_index = 0
        self._lazy: list[torch.fx.Node] = []
        self._chain_length: dict[torch.fx.Node, int] = {}  # lazy node -> lazy values it is computed through
        # Lazy values whose traced (eager) layout is dense in another order than row-major (a
        # channels-last activation), by id: an extern reading one gets it laid out the same way.
        self._traced_orders: dict[int, tuple[IRNode, list[int]]] = {}
        # Buffer name -> input name: buffers computed straight into an input's memory.
        self.input_writes: dict[str, str] = {}
        self._pending_writes: list[InputWrite] = []
        self._realized: dict[int, tuple] = {}  # id(lazy value) -> (value, the buffer it became)
        # Matmul nodes lowered to a template that applied the activation reading them
        # (passes/matmul_epilogues.py): that activation's node is its input as it is.
        self.applied_epilogues: set[torch.fx.Node] = set()
        self.device = next((x.device for x in self.example_inputs if isinstance(x, torch.Tensor)), torch.device("cpu"))
        # Nodes whose 4-d values are computed channels-last for the convolutions (layout_optimization.py).
        self.channels_last = channels_last_nodes(gm, options.layout_optimization)

    # -- services for lowerings --------------------------------------------------------

    def in_kernel_random(self, device: torch.device) -> bool:
        """Whether kernels on `device` draw random numbers themselves (lowering/random.py)."""
        return self.targets.in_kernel_random(device)

    def welford_variance(self, device: torch.device) -> bool:
        """Whether kernels on `device` compute a variance in one pass (lowering/reductions.py)."""
        return self.targets.welford_variance(device)

    def new_name(self) -> str:
        name = f"buf{self._counter}"
        self._counter += 1
        return name

    def sympify(self, value):
        """Our sympy expression for a size, foreign symbols mapped to ours."""
        return self.symbols.sympify(value)

    def hint(self, expr) -> int:
        return int(sympy.sympify(expr).xreplace(self.hints))

    def decide(self, condition) -> bool:
        """Whether `condition` over sizes holds wherever this graph runs. Over backed sizes, the
        example's answer: the tracer guarded each choice its shapes made the same way. A
        data-dependent (unbacked) size has only a guessed hint, so a condition over one is
        answered only where the tracer's ranges prove it (torch._check, an op's own bounds);
        otherwise NotImplementedError: the node runs as its ATen op, which decides at run time."""
        condition = sympy.sympify(condition)
        if not condition.free_symbols:
            return bool(condition)
        if not condition.free_symbols & self.symbols.unbacked and condition.free_symbols <= set(self.hints):
            return bool(condition.xreplace(self.hints))
        known = known_without_hints(self.current_node, condition)
        if known is None:
            raise NotImplementedError(f"{condition} over data-dependent sizes is not decided by their ranges")
        return known

    def current_val(self):
        val = self.current_node.meta.get("val")
        if val is None:
            raise LoweringError(f"node {self.current_node.format_node()} has no meta['val'] to size its output")
        return val

    def register_reduction(self, node: Reduction) -> ComputedBuffer:
        buffer = ComputedBuffer(self.new_name(), Layout.contiguous(node.device, node.dtype, node.ranges), node)
        self._add(buffer)
        return buffer

    def register_extern(self, buffer: Buffer) -> Buffer:
        self._add(buffer)
        return buffer

    def realize(self, value):
        """A value backed by memory: the buffer itself, a strided view of one, or a new ComputedBuffer.
        A lazy value realized once is the same buffer ever after: a copy read by a matmul and
        saved for the backward (attention's heads) is computed once, not once per reader."""
        if isinstance(value, (Buffer, ReinterpretView)):
            return value
        known = self._realized.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        lazy = value
        if isinstance(value, Reduction):
            buffer = self.register_reduction(value)
        else:
            if isinstance(value, GenericView):
                value = Pointwise(value.device, value.dtype, value.size, value.make_loader())
            buffer = ComputedBuffer(self.new_name(), Layout.contiguous(value.device, value.dtype, value.size), value)
            self._add(buffer)
        self._realized[id(lazy)] = (lazy, buffer)  # the value kept: its id stays its own
        # Nodes lowered from here on read the buffer: once it is in memory, one read of it costs
        # less than recomputing it (a Linear's bias gradient sums the output gradient that its
        # matmuls read from memory, rather than computing it again from the activation).
        for node in self._lazy:
            if self.env.get(node) is lazy:
                self.env[node] = buffer
        return buffer

    def realize_keeping_views(self, value):
        """Realize the base of a chain of views and view it again, so that an output which eager
        returns as a view (a transpose, an expand) has eager's strides rather than a dense copy."""
        known = self._realized.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        if isinstance(value, GenericView):
            base = self.realize_keeping_views(value.data)
            viewed = make_view(base, value.size, value.reindex)
            return self.realize(viewed)
        return self.realize(value)

    def realize_tree(self, value):
        """Every IR value in `value` (lists, tuples, dicts: an extern call's arguments) realized;
        a lazy value eager had channels-last (or otherwise permuted) is computed in that layout:
        a convolution fed a row-major copy of a channels-last activation picks another algorithm,
        or converts it back, and returns a layout the next kernels do not expect."""
        if isinstance(value, (list, tuple)):
            return type(value)(self.realize_tree(v) for v in value)
        if isinstance(value, dict):
            return {k: self.realize_tree(v) for k, v in value.items()}
        if not isinstance(value, IRNode):
            return value
        return self._realize_as_traced(value)

    def _realize_as_traced(self, value):
        """A lazy value computed into memory in the order eager had its dims (channels-last)."""
        remembered = self._traced_orders.get(id(value))
        if remembered is not None and remembered[0] is value:
            return self.realize(self.realize_in_memory_order(value, remembered[1]))
        return self.realize(value)

    def _add(self, buffer: Buffer):
        self.buffers.append(buffer)
        for name in _reads_of(buffer):
            self.consumers.setdefault(name, set()).add(buffer.name)

    # -- interpreter -------------------------------------------------------------------

    def run(self):
        with lowering_graph(self):
            result = super().run(*self.example_inputs)
        candidates = write_buffers(self, self._pending_writes)
        self.remove_dead_buffers(keep={buffer.name for _, buffer in candidates})
        self.input_writes = stored_in_place(self, candidates)
        return result

    def run_node(self, node):
        self.current_node = node
        result = super().run_node(node)
        if isinstance(result, (Pointwise, GenericView)) and node.op == "call_function":
            chain = 1 + max((self._chain_length.get(arg, 0) for arg in node.all_input_nodes), default=0)
            if chain > MAX_LAZY_CHAIN or len(node.users) > REALIZE_USERS and (
                    self._computed_once(result) or _written_by_a_user(node) or _stored_for_a_user(node)):
                result = self.realize_in_memory_order(result, self._order_for_readers(result, node))
            else:
                self._lazy.append(node)
                self._chain_length[node] = chain
                self._remember_traced_order(result, node)
        return result

    def _order_for_readers(self, value, node) -> list[int] | None:
        """The memory order of a lazy value computed once for several readers: eager's, unless
        more of the full-size loads it is computed from read along the row-major innermost dim
        than along eager's (then row-major, None). Eager carries a transposed operand's layout
        through pointwise ops: Whisper's residual stream starts as a transposed convolution
        output plus a row-major embedding, and kept transposed, every matmul reading the stream
        needs a copy and every add a transposing kernel (torch.compile's inductor likewise
        picks the loop order most reads prefer). Graph outputs keep eager's strides."""
        order = self.traced_order(node)
        if order is None or order == sorted(order) or any(user.op == "output" for user in node.users):
            return order
        collector = DependencyCollector()
        loop = loop_vars("i", len(value.size))
        with use_handler(collector):
            value.make_loader()(loop)
        varying = {v for v, n in zip(loop, value.size) if n != 1}
        eager, row_major = 0, 0
        for _, index in collector.reads:
            index = sympy.sympify(index)
            if _reads_a_full_size(index, varying, collector.indirect_symbols):
                eager += index.coeff(loop[order[-1]]) == 1
                row_major += index.coeff(loop[-1]) == 1
        return None if row_major > eager else order

    def _computed_once(self, value) -> bool:
        """Whether a lazy value several nodes read is realized rather than recomputed by each.
        Kernels are bound by memory, so a value of few reads and ops costs less recomputed than
        written and read back: a batch norm backward's masked gradient, read by two sums and
        the input gradient, stored would cost one write and three reads of an activation-sized
        buffer; recomputed, each reader reads the gradient and the input once, and no
        activation-sized buffer is alive between them (C++ kernels stored such values until
        this applied to them too: a CPU ResNet-like training step peaked 0.9 MiB higher).
        Only reads of its own size count: per-channel statistics and scalars, broadcast, stay
        in cache. A gather (an embedding lookup) counts as one: it reads a row per element,
        at random. Uncounted, a decoder's residual stream recomputed its embedding lookup and
        every earlier layer's output in each layer's norm (T5 inference on an H200: 7.8 ms,
        torch.compile 5.0)."""
        collector = DependencyCollector()
        loop = loop_vars("i", len(value.size))
        with use_handler(collector):
            value.make_loader()(loop)
        varying = {v for v, n in zip(loop, value.size) if n != 1}
        full_size = {name for name, index in collector.reads
                     if _reads_a_full_size(sympy.sympify(index), varying, collector.indirect_symbols)}
        return len(full_size) > RECOMPUTE_READS or collector.op_count > RECOMPUTE_OPS

    def traced_order(self, node, output: int | None = None) -> list[int] | None:
        """The memory order a node's value is computed in: eager's (memory_order), or
        channels-last where layout optimization chose it; `output`: which of several values."""
        val = node.meta.get("val")
        if output is not None:
            val = val[output]
        if node in self.channels_last and isinstance(val, torch.Tensor) and val.dim() == 4:
            return list(CHANNELS_LAST)
        return memory_order(val)

    def _remember_traced_order(self, value, node):
        order = self.traced_order(node)
        if order is not None and order != sorted(order):
            self._traced_orders[id(value)] = (value, order)

    def placeholder(self, target, args, kwargs):
        position = self._placeholder_index
        self._placeholder_index += 1
        example = self.example_inputs[position]
        name = f"arg{position}"
        val = self.current_node.meta.get("val", self.current_node.meta.get("example_value", example))
        if isinstance(example, torch.Tensor):
            size = [self.symbols.bind(s, f"{name}.size({k})", size_hint(example.shape[k])) for k, s in enumerate(val.shape)]
            order = self.current_node.meta.get(INPUT_ORDER)
            if order is not None:
                # An activation the forward saved channels-last (layout_optimization.py).
                stride = dense_strides(size, order)
            else:
                stride = [self.symbols.bind(s, f"{name}.stride({k})", size_hint(example.stride()[k]))
                          for k, s in enumerate(val.stride())]
            buffer = InputBuffer(name, Layout(example.device, example.dtype, tuple(size), tuple(stride)))
            self.input_names.append(name)
            self.graph_inputs.append(buffer)
            return buffer
        if isinstance(val, (torch.SymInt, sympy.Basic)):
            expr = self.symbols.bind(val, name, size_hint(example))
            self.graph_inputs.append(expr)
            return expr
        if isinstance(val, torch.SymBool) and val.node.is_symbolic():
            # A condition the forward computed and saved for the backward (`a > 0` of a float
            # argument a): one symbol stands for it, read from the argument.
            expr = self.symbols.bind(val, name, int(hint_of(val)))
            self.graph_inputs.append(expr)
            return expr
        self.graph_inputs.append(example)
        return example

    def get_attr(self, target, args, kwargs):
        value = getattr(self.module, target) if "." not in target else operator.attrgetter(target)(self.module)
        if not isinstance(value, torch.Tensor):
            return value
        name = constant_name(target)
        if name not in self.constant_buffers:
            self.constants[name] = value
            self.input_names.append(name)
            self.constant_buffers[name] = InputBuffer(name, constant_layout(value))
        return self.constant_buffers[name]

    def input_buffers(self) -> dict[str, InputBuffer]:
        """Every buffer the wrapper receives rather than allocates: tensor arguments and constants."""
        found = {b.name: b for b in self.graph_inputs if isinstance(b, InputBuffer)}
        found.update(self.constant_buffers)
        return found

    def call_function(self, target, args, kwargs):
        if target is operator.getitem:
            return args[0][args[1]]
        if self.current_node.meta.get(FOLDED_INTO_KEY) in self.applied_epilogues:
            return args[0]
        if target in SIZE_ARITHMETIC:
            # Sizes and their arithmetic are what the tracer computed: its symbolic value, when the
            # wrapper can evaluate it (a data-dependent size is read at run time instead).
            val = self.current_val()
            if not isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                return val
            expr = self.sympify(val)
            if expr.free_symbols <= set(self.symbol_sources):
                return expr
        args, kwargs = _sympify_tree(self, args), _sympify_tree(self, kwargs)
        if isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable:
            self._realize_pending()
            if writes_input_at_end(self, self.current_node, args):
                self._pending_writes.append(InputWrite(args[0], args[1]))
                return args[0]
        lowering = None if _touches_dtype_without_kernels(self.current_node) else LOWERINGS.get(target)
        if lowering is not None:
            try:
                return lowering(*args, **kwargs)
            except NotImplementedError:
                pass
        if not isinstance(target, torch._ops.OpOverload):
            raise LoweringError(
                f"inductor lowers ATen graphs; {self.current_node.format_node()} calls {target}, which is not an "
                "ATen overload. Run the graph through aot_autograd first (inductor.compile_fx does)."
            )
        result = fallback(target, args, kwargs)
        # A Python number an extern returned is read off its step: the buffer registered last.
        self.symbols.bind_unbacked(self.current_val(), result, self.buffers[-1].name if self.buffers else "")
        return result

    def _realize_pending(self):
        """Before an op writes to memory, compute every lazy value that may read that memory."""
        for node in self._lazy:
            value = self.env.get(node)
            if isinstance(value, GenericView) and not _views_an_input(value):
                # A view of a value computed here (`d.t()` of `d = a * 1.0` before `a` is
                # written): d computed once and viewed, as eager's view of it is. A copy would
                # be a kernel of its own, and an output that is no view of the other output
                # it aliases (aot_autograd rebuilds it from the graph's value where sizes are
                # symbolic, and refused it).
                self.env[node] = self.realize_keeping_views(value)
            elif isinstance(value, (Pointwise, GenericView)):
                self.env[node] = self._realize_as_traced(value)
        self._lazy = []

    def realize_in_memory_order(self, value, order: list[int] | None):
        """`value` computed into a buffer whose dims lie in memory in `order` (outermost first; the
        kernel's loops run in that order), seen through the permuted view with the logical dims."""
        if order is None or order == sorted(order):
            return self.realize(value)
        viewed = self._view_of_realized(value, order)
        if viewed is not None:
            return viewed
        buffer = self.realize(permute(value, order))
        # Exact dense strides: a size-1 dim viewed at stride 0 (a batch of one) makes aten read a
        # channels-last activation as row-major (a max-pool or convolution copies it back).
        return with_dense_strides(permute(buffer, [order.index(d) for d in range(len(order))]), order)

    def _view_of_realized(self, value, order: list[int]):
        """`value`, a view of a lazy value already computed into memory, as a strided view of
        that buffer, when that view lies in memory in `order` with no gaps; else None. A Linear's
        backward reads its output gradient twice: as is (the input gradient's matmul) and
        transposed (the weight gradient's); the second reads the first one's buffer rather than
        computing a transposed copy of its own."""
        if not isinstance(value, GenericView):
            return None
        known = self._realized.get(id(value.data))
        if known is None or known[0] is not value.data:
            return None
        viewed = make_view(known[1], value.size, value.reindex)
        if isinstance(viewed, ReinterpretView) and dense_in_order(viewed.layout.size, viewed.layout.stride, order):
            return viewed
        return None

    def realize_like_traced(self, value, output: int | None = None):
        """`value` realized with its dims in memory as the current node's traced value has them
        (eager's strides, where those are dense); `output`: which of a node's several values."""
        return self.realize_in_memory_order(value, self.traced_order(self.current_node, output))

    def remove_dead_buffers(self, keep: set[str] = frozenset()):
        """Drop ComputedBuffers nothing reads (e.g. a mean only some consumer might have used)
        besides outputs and `keep`."""
        live: set[str] = set(self.output_names) | set(keep)
        kept = []
        for buffer in reversed(self.buffers):
            if isinstance(buffer, ComputedBuffer) and buffer.name not in live:
                continue
            kept.append(buffer)
            live |= _reads_of(buffer)
        self.buffers = kept[::-1]
        self.consumers = {}
        for buffer in self.buffers:
            for name in _reads_of(buffer):
                self.consumers.setdefault(name, set()).add(buffer.name)


def constant_name(target: str) -> str:
    """The wrapper's name for a get_attr tensor (a constant the traced code created, e.g.
    `torch.tensor([1., 2.])`): the compiled graph hands its value in through `constants`."""
    return f"const_{target.replace('.', '_')}"


def constant_layout(value: torch.Tensor) -> Layout:
    # Kernels get `data_ptr()`, which already points at the first element: offset 0.
    return Layout(value.device, value.dtype, tuple(map(as_expr, value.shape)), tuple(map(as_expr, value.stride())))


# Nodes computing sizes rather than tensors (dynamic shapes): `sym_size(x, 0) * 2`.
SIZE_ARITHMETIC = {
    torch.ops.aten.sym_size.int, torch.ops.aten.sym_stride.int, torch.ops.aten.sym_numel.default,
    torch.ops.aten.sym_storage_offset.default, operator.add, operator.sub, operator.mul, operator.floordiv,
    operator.mod, operator.neg, operator.truediv, operator.pow, torch.sym_max, torch.sym_min, torch.sym_float,
    torch.sym_int, torch.sym_sum, operator.abs, math.floor, math.ceil, math.trunc,
    # Comparisons of sizes (`n >= 3`) are SymBools the same way.
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
}

# The dtypes generated kernels compute in: those both kernel languages spell.
KERNEL_DTYPES = frozenset(CTYPES) & frozenset(TRITON_DTYPES)


def _touches_dtype_without_kernels(node: torch.fx.Node) -> bool:
    """An op reading or making a tensor of another dtype runs as its aten call: complex (no
    complex arithmetic in kernels: view_as_complex, complex mul, fft...), the float8 types,
    uint16/32/64 and quantized tensors."""
    values = [node.meta.get("val"), *(n.meta.get("val") for n in node.all_input_nodes)]
    return any(isinstance(v, torch.Tensor) and v.dtype not in KERNEL_DTYPES for v in pytree.tree_leaves(values))


def _sympify_tree(graph, value):
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return graph.sympify(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_sympify_tree(graph, v) for v in value)
    if isinstance(value, dict):
        return {k: _sympify_tree(graph, v) for k, v in value.items()}
    return value


def _reads_a_full_size(index: sympy.Expr, varying: set, indirect: set) -> bool:
    """Whether a load at `index` reads as many elements as the loop has (`varying`: its loop
    variables of size > 1): its index uses them all, or an index loaded from memory (one of
    the `indirect` symbols)."""
    symbols = index.free_symbols
    return varying <= symbols or not indirect.isdisjoint(symbols)


def _views_an_input(value) -> bool:
    """Whether a chain of views reads an input's memory (or another buffer not computed in
    this graph): its old value must be copied before that memory is written."""
    while isinstance(value, GenericView):
        value = value.data
    storage = storage_of(value) if isinstance(value, (Buffer, ReinterpretView)) else None
    return storage is not None and not isinstance(storage, ComputedBuffer)


def _written_by_a_user(node: torch.fx.Node) -> bool:
    """Whether a mutable op (a functionalized graph's closing `copy_` into an input) takes the
    value: realized where it is defined, it is stored into the input's memory (input_writes.py)
    by the kernel computing it; left lazy, a copy kernel would store it after the fact."""
    return any(isinstance(user.target, torch._ops.OpOverload) and user.target._schema.is_mutable for user in node.users)


def _stored_for_a_user(node: torch.fx.Node) -> bool:
    """Whether an extern (a matmul, a convolution, a fallback) takes the value, directly or
    through views: it is then stored anyway, so it is stored where it is defined and every
    reader reads it. Left lazy, readers lowered before the extern recompute it, keeping its
    inputs alive until the last of them (a Linear-Tanh training step's bias-gradient sum held
    the activation and the output gradient past the matmuls: above eager's peak)."""
    pending = list(node.users)
    while pending:
        user = pending.pop()
        target = user.target
        if isinstance(target, torch._ops.OpOverload) and target.is_view:
            pending.extend(user.users)
        elif reads_arguments_from_memory(target):
            return True
    return False


def _reads_of(buffer: Buffer) -> set[str]:
    if isinstance(buffer, ComputedBuffer):
        collector = DependencyCollector()
        data = buffer.data
        with use_handler(collector):
            if isinstance(data, Reduction):
                buffer.store_body()(loop_vars("i", len(data.ranges)), loop_vars("r", len(data.reduction_ranges)))
            else:
                buffer.store_body()(loop_vars("i", len(data.ranges)))
        return {name for name, _ in collector.reads}
    if isinstance(buffer, MultiOutput):
        return {buffer.parent.name}
    if isinstance(buffer, ExternKernel):
        return {storage_of(v).name for v in buffer.inputs() if storage_of(v) is not None}
    return set()

