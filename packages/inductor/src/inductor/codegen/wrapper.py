"""The wrapper: a Python module whose `call(args)` runs one compiled graph.

It binds size symbols from the arguments, allocates each kernel's output buffers (MemoryPlan: reusing
the memory of dead buffers of the same dtype and size), calls the generated kernels as each
backend's `KernelCall` says (C++ through ctypes with data pointers, Triton with the tensors),
calls extern ops through torch.ops, and drops every buffer and argument after its last use. The module is plain Python a user can read (COMPILER_LOGS=output_code).

Host time per call is what a GPU graph of small kernels waits on, so everything that can be
looked up once is, when the module loads: each aten overload's C++ operator
(`torch.ops.aten.avg_pool2d.default._op`: calling the OpOverload adds a Python frame that only
forwards to it) or, for the hot externs, its faster Python binding (`torch.mm`:
_PYTHON_BINDINGS), `torch.empty_strided` and the devices buffers are allocated on. Views are
`as_strided` calls in line, and an extern's layout check calls `with_layout` only when its
strides or dtype differ.
"""

from __future__ import annotations

import re

import sympy
import torch
from fake_tensor.symbolic import FLOAT_OPERATIONS
from fake_tensor.symbolic.printing import ATOM, PYTHON, UNARY, ExpressionPrinter

from ..ir import KERNEL_STEPS, Buffer, ComputedBuffer, ExternKernel, IRNode, MultiOutput, ReinterpretView, ir_leaves, storage_of
from ..memory_order import static_dense_order
from ..runtime.cpu_memory import MIN_BYTES
from ..sizes import product
from .cpp.kernel import FLAGGING_HELPERS
from .host_values import BIND_TIME, HostValues


_OP_OVERLOAD_CALL = torch._ops.OpOverload.__call__
# Overloads whose generated Python binding (torch.<name>, the same dispatcher op) parses its
# arguments faster than the operator's schema-driven one: `_op` converts each int list through
# the schema, ~5 us more per convolution on the host (a conv net's forward calls it per layer),
# and each argument of any op: ~1 us more per addmm, ~0.4 per mm, ~2 per attention (a decoder
# layer calls four matmuls and one attention). Each binding is called only with the arguments of
# the overload named (by position, then its keyword-only ones by name), which only that overload's
# signature accepts: the others of the same name take a dtype or descale tensors in between.
_PYTHON_BINDINGS = {
    "torch.ops.aten.convolution.default": "torch.convolution",
    "torch.ops.aten.mm.default": "torch.mm",
    "torch.ops.aten.addmm.default": "torch.addmm",
    "torch.ops.aten.bmm.default": "torch.bmm",
    "torch.ops.aten.baddbmm.default": "torch.baddbmm",
    "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default": "torch._scaled_dot_product_flash_attention_for_cpu",
    "torch.ops.aten._scaled_dot_product_flash_attention.default": "torch._scaled_dot_product_flash_attention",
    "torch.ops.aten._scaled_dot_product_efficient_attention.default": "torch._scaled_dot_product_efficient_attention",
    "torch.ops.aten._adaptive_avg_pool2d.default": "torch._adaptive_avg_pool2d",  # 2.5 -> 1.3 us
    "torch.ops.aten.avg_pool2d.default": "torch._C._nn.avg_pool2d",  # 3.4 -> 1.7 us
}


def _unprintable(expr, p):
    raise NotImplementedError(f"Python printing of size expression {expr}")


# fake_tensor's one printer, Python's spelling of what size arithmetic builds, and of sizes the
# program computed and returns: `n >= 3`, `abs(n - 10)`, `n // 2.5`, and conditions on sizes
# (`u0 > 3`, returned for a branch after the graph). The wrapper imports no `math`: floor and
# ceiling are spelled with `//`.
_SIZES = ExpressionPrinter(
    PYTHON.only(
        "Symbol", "Integer", "Float", "Add", "Mul", "Pow", "FloorDiv", "PythonMod", "Max", "Min", "Abs",
        "BooleanTrue", "BooleanFalse", "Equality", "Unequality", "StrictLessThan", "LessThan",
        "StrictGreaterThan", "GreaterThan", "TruncToInt", "ToFloat", *(cls.__name__ for cls in FLOAT_OPERATIONS.values()),
    ).with_rules({
        "Rational": PYTHON["Float"],  # a literal float, as the program computed it: not `p/q`
        "floor": lambda expr, p: (f"int({p.text(expr.args[0], UNARY)} // 1)", ATOM),
        "ceiling": lambda expr, p: (f"-int(-{p.text(expr.args[0], UNARY)} // 1)", UNARY),
    }),
    unknown=_unprintable, ordered=False,
)


def pyexpr(expr) -> str:
    """A sympy size expression as Python over the bound symbol names."""
    return _SIZES.text(expr)


def _shape(values) -> str:
    items = [pyexpr(v) for v in values]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


class WrapperCodegen:
    def __init__(self, graph, steps, kernels: dict):
        """`kernels`: kernel name -> its backend's KernelCall (codegen/backend.py)."""
        self.graph, self.kernels = graph, kernels
        self.buffers = {b.name: b for b in graph.buffers}
        self.buffers.update(graph.input_buffers())
        self.bound: dict[str, str] = {}  # name the wrapper calls -> what it is bound to once, at load
        self.steps = _without_unread_items(graph, steps, self._reads)

    def _reads(self, step) -> list[str]:
        if isinstance(step, KERNEL_STEPS):
            return [a for a in self.kernels[step.name].args if a in self.buffers]
        if isinstance(step, MultiOutput):
            return [step.parent.name]
        return [v.name if isinstance(v, Buffer) else v.data.name for v in step.inputs()]

    def _allocated_by(self, step) -> list[ComputedBuffer]:
        """The buffers a kernel step writes, which the wrapper allocates just before calling it."""
        if not isinstance(step, KERNEL_STEPS):
            return []
        found = [self.buffers.get(name) for name in self.kernels[step.name].args]
        return [buf for buf in found if isinstance(buf, ComputedBuffer) and _written_by(step, buf.name)]

    def generate(self) -> str:
        self.host_values = HostValues(self.steps, self.kernels, self.buffers, self.graph.input_writes, self._reads)
        self.memory = MemoryPlan(self.graph, self.steps, self.buffers, self._reads, self._allocated_by, self.bind,
                                 pinned=self.host_values.pinned)
        body = ["def call(args):", *self._bind_inputs(), *self.host_values.lines_after(BIND_TIME)]
        for k, step in enumerate(self.steps):
            body += self._step(step)
            body += self.host_values.lines_after(k)
            body += self._bind_unbacked(step)
            body += self.memory.release_after(k)
        body.append(self._return())
        return "\n".join([*self._header(), "", "", *body, "", "", *self._size_key(), ""])

    def bind(self, name: str, expression: str) -> str:
        """`name`, bound to `expression` once when the module loads (same name, same binding)."""
        assert self.bound.setdefault(name, expression) == expression, (name, expression)
        return name

    def _header(self) -> list[str]:
        """Imports, and each kernel loaded once when the module runs."""
        header = [
            "# Generated by inductor: one compiled ATen graph.",
            "import torch",
            "from inductor.runtime.cpu_memory import empty_strided_cpu",
            *sorted({call.imports for call in self.kernels.values()}),
            "from inductor.runtime.wrapper_support import with_layout",
            "",
        ]
        for step in self.steps:
            if isinstance(step, KERNEL_STEPS):
                header.append(f"{step.name} = {self.kernels[step.name].load}")
        header += [f"{name} = {expression}" for name, expression in self.bound.items()]
        # Arguments whose memory the kernels write (input_writes.py): replaying this graph on
        # copies of them (CUDA graphs) would lose the writes.
        g = self.graph
        written = sorted(g.graph_inputs.index(self.buffers[name]) for name in set(g.input_writes.values()))
        header.append(f"written_inputs = {tuple(written)!r}")
        header.append(f"copies_host_values = {bool(self.host_values.on_device)!r}")
        header.append(f"inputs_kept_on_error = {self._inputs_kept_on_error()!r}")
        return header

    def _inputs_kept_on_error(self) -> bool:
        """Whether no step that may raise (runtime/kernel_errors.py) runs after, or is, a step
        writing an input: then a call that raises has written no input, and aot_autograd can
        replay the graph eagerly to make eager's writes before eager's error."""
        written = False
        for step in self.steps:
            written = written or self._writes_input(step)
            if written and self._may_raise(step):
                return False
        return True

    def _writes_input(self, step) -> bool:
        if isinstance(step, KERNEL_STEPS):
            return any(_written_by(step, name) for name in self.graph.input_writes)
        if not isinstance(step, ExternKernel):
            return False
        inputs = set(self.graph.graph_inputs)
        return any(storage_of(value) in inputs for value in _written_arguments(step))

    def _may_raise(self, step) -> bool:
        """A kernel with a check of its values, or any extern op (eager's kernels check theirs)."""
        if isinstance(step, KERNEL_STEPS):
            source = self.kernels[step.name].source
            return "RAISES = True" in source or any(f"{helper}(" in source for helper in FLAGGING_HELPERS)
        return isinstance(step, ExternKernel)

    def _bind_inputs(self) -> list[str]:
        """Arguments, constants and size symbols as the names the steps use."""
        g = self.graph
        lines = []
        params = [f"arg{k}" for k in range(len(g.graph_inputs))]
        if params:
            # The caller hands over its list: emptied, an argument lives only as long as this
            # call or the caller needs it (a backward's saved activations die at their last use).
            lines.append(f"    {', '.join(params)}{',' if len(params) == 1 else ''} = args")
            lines.append("    args.clear()")
        for name in g.constants:
            lines.append(f"    {name} = constants[{name!r}]")
        bound_later = {symbol for symbols in g.unbacked_bound_by.values() for symbol in symbols}
        for symbol, source in sorted(g.symbol_sources.items(), key=lambda kv: kv[0].name):
            if symbol not in bound_later:
                lines.append(f"    {symbol.name} = {source}")
        for name, target in g.input_writes.items():
            if name in self.memory.shaped:  # an extern reads it by its own name
                lines.append(f"    {name} = {target}  # computed into the input's memory")
        return lines

    def _size_key(self) -> list[str]:
        """`size_key(args)`: the sizes `call` reads from its arguments. A CUDA graph recorded at
        one call replays correctly at another with the same key (runtime/cuda_graphs.py): every
        other property of the inputs is fixed by what the kernels were compiled for."""
        g = self.graph
        bound_later = {symbol for symbols in g.unbacked_bound_by.values() for symbol in symbols}
        reads = [re.sub(r"\barg(\d+)\b", r"args[\1]", source)
                 for symbol, source in sorted(g.symbol_sources.items(), key=lambda kv: kv[0].name)
                 if symbol not in bound_later]
        return ["def size_key(args):", f"    return ({', '.join(reads)}{',' if len(reads) == 1 else ''})"]

    def _bind_unbacked(self, step) -> list[str]:
        """Data-dependent sizes (the rows `nonzero` found, the number `.item()` read) are known
        once the step that produced them ran."""
        g = self.graph
        return [f"    {symbol.name} = {g.symbol_sources[symbol]}" for symbol in g.unbacked_bound_by.get(step.name, ())]

    def _step(self, step) -> list[str]:
        if isinstance(step, KERNEL_STEPS):
            return self._kernel_call(step)
        if isinstance(step, MultiOutput):
            # with_layout's test in line, as for an extern's result below (a call per item
            # costs a Python frame); an item the op leaves undefined (None) stays None.
            index = "".join(f"[{i}]" for i in step.path)
            stride, dtype = _shape(step.layout.stride), _dtype(self.bind, step.layout.dtype)
            return [f"    {step.name} = {step.parent.name}{index}",
                    f"    if {step.name} is not None and ({step.name}.stride() != {stride} or {step.name}.dtype != {dtype}): "
                    f"{step.name} = with_layout({step.name}, {stride}, {dtype})"]
        args = [self._value(a) for a in step.args]
        args += [f"{key}={self._value(v)}" for key, v in step.kwargs.items()]
        call = f"{self._operator(step.kernel)}({', '.join(args)})"
        if not step.layout:
            return [f"    {step.name} = {call}"]
        # A single tensor result (never None): its strides and dtype are compared in line, and
        # only a result laid out otherwise goes through with_layout (a copy).
        stride, dtype = _shape(step.layout.stride), _dtype(self.bind, step.layout.dtype)
        return [f"    {step.name} = {call}",
                f"    if {step.name}.stride() != {stride} or {step.name}.dtype != {dtype}: "
                f"{step.name} = with_layout({step.name}, {stride}, {dtype})"]

    def _operator(self, kernel: str) -> str:
        """The name an extern op is called by: an overload's C++ operator, bound at load.
        `OpOverload.__call__` only calls `self._op`; dispatch (modes, autograd, profiling)
        happens below it, in the dispatcher, either way. Overload classes whose `__call__`
        does more (TorchBind ops) are called as they are."""
        if kernel.startswith("inductor."):  # a runtime function of ours (the matmul template)
            module, function = kernel.rsplit(".", 1)
            return self.bind(f"{module.rsplit('.', 1)[1]}_{function}",
                             f"__import__({module!r}, fromlist=[{function!r}]).{function}")
        if not kernel.startswith("torch.ops."):
            return kernel
        if kernel in _PYTHON_BINDINGS:
            return self.bind(kernel.removeprefix("torch.ops.").replace(".", "_"), _PYTHON_BINDINGS[kernel])
        namespace, name, overload = kernel.removeprefix("torch.ops.").split(".")
        if type(getattr(getattr(getattr(torch.ops, namespace), name), overload)).__call__ is not _OP_OVERLOAD_CALL:
            return kernel
        return self.bind(f"{namespace}_{name}_{overload}", f"{kernel}._op")

    def _kernel_call(self, step) -> list[str]:
        """The buffers the kernel writes, allocated, then the call as its backend's KernelCall says."""
        call = self.kernels[step.name]
        lines = ["    " + self.memory.allocate(buf) for buf in self._allocated_by(step)]
        pointer = ".data_ptr()" if call.takes_pointers else ""
        on_device = self.host_values.on_device if step.device.type == "cuda" else {}
        args = [on_device.get(a) or (f"{a}{pointer}" if a in self.buffers else a) for a in call.args]
        lines.append(f"    {step.name}({', '.join(args)})")
        return lines

    def _return(self) -> str:
        outputs = [self._value(v) for v in self.graph.outputs]
        return f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})"

    def _value(self, value) -> str:
        if isinstance(value, ReinterpretView):
            lay = value.layout
            base = value.data
            if (lay.size, lay.stride) == self.memory.tensor_layout(base) and lay.offset == 0:
                return base.name
            return _view(base.name, lay.size, lay.stride, lay.offset)
        if isinstance(value, Buffer):
            return value.name
        if isinstance(value, IRNode):
            raise AssertionError(f"unrealized value reached the wrapper: {value}")
        if isinstance(value, sympy.Basic):
            return pyexpr(value)
        if isinstance(value, (list, tuple)):
            items = [self._value(v) for v in value]
            text = ", ".join(items)
            return f"[{text}]" if isinstance(value, list) else f"({text}{',' if len(items) == 1 else ''})"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {self._value(v)}" for k, v in value.items()) + "}"
        if isinstance(value, torch.dtype):
            return _dtype(self.bind, value)
        if isinstance(value, (torch.layout, torch.memory_format)):
            return str(value)
        if isinstance(value, torch.device):
            return _device(self.bind, value)
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return f"float({str(value)!r})"
        return repr(value)


class MemoryPlan:
    """Which buffers and arguments die after each step, and whose memory a new buffer takes
    over: a dead buffer of the same device, dtype and element count that a later kernel output
    reuses is kept until then; one that nothing reuses is deleted where it dies (keeping it to
    the end of the call would hold every dead activation at once: the peak of the whole graph).
    A dead buffer is kept for reuse only where holding it does not raise the call's peak."""

    def __init__(self, graph, steps: list, buffers: dict, reads, allocated_by, bind, pinned: set[str] = frozenset()):
        """`reads(step)`: buffer names it reads; `allocated_by(step)`: buffers the wrapper allocates
        for it. `pinned`: CPU buffers allocated in pinned memory and copied to the device without
        waiting; their memory is never handed to another buffer (the copy may still be reading
        it), the host allocator takes them back once the copy is done. `bind(name, expression)`
        names a value the module computes once (WrapperCodegen.bind)."""
        self.graph = graph
        self.buffers = buffers
        self.bind = bind
        self.pinned = pinned
        self.last_use: dict[str, int] = {}
        for k, step in enumerate(steps):
            for name in reads(step):
                self.last_use[name] = k
        self.outputs = set(graph.output_names)
        self.input_writes = graph.input_writes  # buffers computed into an input's memory: never freed
        # Memory an extern's output may alias (a view op run as a fallback) is never handed out again.
        self.externally_seen = {n for s in steps if isinstance(s, ExternKernel) and s.aliases_inputs for n in reads(s)}
        self.externally_seen |= pinned
        # Buffers an extern op or the caller sees need a tensor of their own shape and strides;
        # generated kernels read only the memory, so a buffer only they read takes over a dead
        # buffer's tensor as it is, without a view (an `as_strided` costs a few us of host time).
        self.shaped = self.outputs | {n for s in steps if not isinstance(s, KERNEL_STEPS) for n in reads(s)}
        self.tensor_layouts: dict[str, tuple] = {}  # buffer -> (size, stride) of the tensor it names
        self.wanted = _tensor_layouts_read(graph, steps, buffers)
        self.takes = self._plan_reuse(steps, allocated_by)  # new buffer -> the dead one whose memory it takes
        self.reused = set(self.takes.values())

    def _dead_after(self, k: int) -> list[str]:
        """Buffers and arguments last read by step `k`. A constant stays: the module holds it anyway."""
        return [n for n, last in self.last_use.items() if last == k and n in self.buffers and n not in self.outputs
                and n not in self.input_writes and not n.startswith("const_")]

    def _plan_reuse(self, steps: list, allocated_by) -> dict[str, str]:
        """Which dead buffer each new kernel output takes over. A dead buffer held until a later
        output reuses it adds its bytes to every step in between; it is held only if that stays
        within the peak the call has without any reuse. (Held regardless, a 1x1 conv's input
        kept for a same-sized buffer after the next expansion stood on top of that expansion's
        input and output: MobileNet's peak.) Of several candidates the one that died last, held
        the shortest, is tried first."""
        live = self._live_bytes(steps, allocated_by)
        peak = max(live, default=0)
        free: dict[tuple, list[tuple[str, int]]] = {}  # reuse key -> (dead buffer, step it died after)
        takes = {}
        for k, step in enumerate(steps):
            for buf in allocated_by(step):
                if buf.name in self.pinned:
                    continue
                candidates = free.get(_reuse_key(buf), [])
                for i in reversed(range(len(candidates))):
                    old, died = candidates[i]
                    size = self._nbytes(old)
                    if max(live[died + 1:k], default=0) + size <= peak:
                        for j in range(died + 1, k):
                            live[j] += size
                        takes[buf.name] = old
                        del candidates[i]
                        break
            for name in self._dead_after(k):
                if isinstance(self.buffers[name], ComputedBuffer) and name not in self.externally_seen:
                    free.setdefault(_reuse_key(self.buffers[name]), []).append((name, k))
        return takes

    def _live_bytes(self, steps: list, allocated_by) -> list[int]:
        """Bytes alive during each step with no memory reused: arguments from the start,
        buffers from the step computing them, each until its last read (outputs, constants and
        what nothing reads, to the end)."""
        if not steps:  # the graph returns its inputs (or views of them)
            return []
        born = {name: 0 for name in self.graph.input_buffers()}
        for k, step in enumerate(steps):
            for buf in allocated_by(step):
                born[buf.name] = k
            if getattr(step, "name", None) in self.buffers and not isinstance(step, KERNEL_STEPS):
                born[step.name] = k  # an extern's or a tuple item's own result
        change = [0] * (len(steps) + 1)
        for name, start in born.items():
            end = self.last_use.get(name, len(steps) - 1)
            if name in self.outputs or name in self.input_writes or name.startswith("const_"):
                end = len(steps) - 1
            size = self._nbytes(name)
            change[start] += size
            change[max(start, end) + 1] -= size
        live, total = [], 0
        for delta in change[:-1]:
            total += delta
            live.append(total)
        return live

    def _nbytes(self, name: str) -> int:
        """A buffer's bytes at the example's sizes; 0 for an extern's tuple (its items count)."""
        layout = getattr(self.buffers[name], "layout", None)
        if not layout:
            return 0
        return self.graph.hint(product(layout.size)) * layout.dtype.itemsize

    def release_after(self, k: int) -> list[str]:
        """Buffers and arguments last read by step `k`: kept for the buffer that takes over their
        memory, or deleted (the line that does it)."""
        released = [name for name in self._dead_after(k) if name not in self.reused]
        return [f"    del {', '.join(released)}"] if released else []

    def allocate(self, buf: ComputedBuffer) -> str:
        """The line giving `buf` its memory: a dead buffer's, or new."""
        layout = buf.layout
        if buf.name in self.pinned:
            return (f"{buf.name} = torch.empty_strided({_shape(layout.size)}, {_shape(layout.stride)}, "
                    f"dtype={_dtype(self.bind, layout.dtype)}, pin_memory=True)")
        # The tensor the name holds: the one view externs and the caller read it through, where
        # they read it only so (a channels-last activation, computed as its NHWC buffer).
        size, stride = self.wanted.get(buf.name, (layout.size, layout.stride))
        self.tensor_layouts[buf.name] = (size, stride)
        old = self.takes.get(buf.name)
        if old is not None:
            held = self.tensor_layouts.pop(old, (self.buffers[old].layout.size, self.buffers[old].layout.stride))
            if held == (size, stride) or buf.name not in self.shaped:
                self.tensor_layouts[buf.name] = held
                return f"{buf.name} = {old}; del {old}  # reuses {old}"
            return f"{buf.name} = {_view(old, size, stride, 0)}; del {old}  # reuses {old}"
        if layout.device.type == "cpu" and not _statically_below(layout, MIN_BYTES):
            return f"{buf.name} = empty_strided_cpu({_shape(size)}, {_shape(stride)}, {_dtype(self.bind, layout.dtype)})"
        empty_strided = self.bind("empty_strided", "torch.empty_strided")
        device = _device(self.bind, layout.device)
        return f"{buf.name} = {empty_strided}({_shape(size)}, {_shape(stride)}, dtype={_dtype(self.bind, layout.dtype)}, device={device})"

    def tensor_layout(self, buffer: Buffer) -> tuple:
        """(size, stride) of the tensor `buffer`'s name holds at this point of the call."""
        return self.tensor_layouts.get(buffer.name, (buffer.layout.size, buffer.layout.stride))


def _without_unread_items(graph, steps: list, reads) -> list:
    """`steps` less the items of an extern's tuple that nothing reads: not a later step, the
    caller, or a size (flash attention's logsumexp, which only a backward reads, was taken out
    and its layout checked at every call of an inference graph, and then held to its end)."""
    read = set(graph.output_names) | set(graph.input_writes) | set(graph.unbacked_bound_by)
    read |= {name for step in steps for name in reads(step)}
    sources = " ".join(str(source) for source in graph.symbol_sources.values())
    return [step for step in steps if not isinstance(step, MultiOutput) or step.name in read
            or re.search(rf"\b{step.name}\b", sources)]


def _tensor_layouts_read(graph, steps: list, buffers: dict) -> dict[str, tuple]:
    """Computed buffers that extern ops and the caller read only through one view covering the
    buffer's memory exactly (static, dense, at its start), each with that view's (size, stride):
    allocated so, the name is that tensor and no `as_strided` runs per call (a conv net's
    channels-last activations are NHWC buffers each convolution read through a view: one
    `as_strided` per layer)."""
    seen: dict[str, set] = {}
    values = [*graph.outputs]
    for step in steps:
        if not isinstance(step, KERNEL_STEPS) and isinstance(step, ExternKernel):
            values += [*step.args, *step.kwargs.values()]
    for value in _ir_values(values):
        if isinstance(value, ReinterpretView):
            lay = value.layout
            seen.setdefault(value.data.name, set()).add((lay.size, lay.stride, lay.offset))
        elif isinstance(value, Buffer):
            seen.setdefault(value.name, set()).add((value.layout.size, value.layout.stride, 0))
    wanted = {}
    for name, layouts in seen.items():
        buffer = buffers.get(name)
        if not isinstance(buffer, ComputedBuffer) or len(layouts) != 1:
            continue
        size, stride, offset = next(iter(layouts))
        own = buffer.layout
        if (size, stride) != (own.size, own.stride) and offset == 0 and static_dense_order(size, stride) is not None \
                and static_dense_order(own.size, own.stride) is not None \
                and product(size) == product(own.size):
            wanted[name] = (size, stride)
    return wanted


def _ir_values(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _ir_values(value)
        elif isinstance(value, dict):
            yield from _ir_values(value.values())
        elif isinstance(value, IRNode):
            yield value


def _dtype(bind, dtype: torch.dtype) -> str:
    """A dtype as a name the module binds at load: spelled `torch.float32`, each call would read
    `torch`'s attribute again on the hot path (every allocation, every extern's check)."""
    return bind(f"dtype_{str(dtype).removeprefix('torch.')}", str(dtype))


def _device(bind, device: torch.device) -> str:
    return bind("device_" + str(device).replace(":", "_"), f"torch.device({str(device)!r})")


def _view(base: str, size, stride, offset) -> str:
    """A strided view of `base`'s storage, `offset` elements past `base`'s own start."""
    if offset == 0:  # as_strided keeps the tensor's storage offset when given none
        return f"{base}.as_strided({_shape(size)}, {_shape(stride)})"
    return f"{base}.as_strided({_shape(size)}, {_shape(stride)}, {base}.storage_offset() + {pyexpr(offset)})"


def _statically_below(layout, nbytes: int) -> bool:
    numel = product(layout.size)
    return isinstance(numel, sympy.Integer) and int(numel) * layout.dtype.itemsize < nbytes


def _written_arguments(step: ExternKernel) -> list:
    """The IR values an extern step writes: its op's arguments the schema marks written, or
    all of them when the step calls something other than a `torch.ops` overload."""
    op = torch.ops if step.kernel.startswith("torch.ops.") else None
    for part in step.kernel.split(".")[2:] if op is not None else ():
        op = getattr(op, part, None)
    if not isinstance(op, torch._ops.OpOverload):
        return step.inputs()
    written = []
    for k, argument in enumerate(op._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = step.args[k] if k < len(step.args) else step.kwargs.get(argument.name)
            written.extend(ir_leaves(value))
    return written


def _written_by(kernel, name: str) -> bool:
    return any(node.name == name for node in kernel.nodes)


def _reuse_key(buf: ComputedBuffer):
    return (str(buf.layout.device), buf.layout.dtype, str(_storage_elements(buf.layout)))


def _storage_elements(layout):
    """Elements of storage a layout spans: its numel, or more where its strides leave gaps (an
    output with eager's strides of a slice's copy), which a dense dead buffer of as many
    elements cannot hold."""
    numel = product(layout.size)
    if layout.is_contiguous() or numel == 0:
        return numel
    span = sympy.expand(1 + sum((n - 1) * s for n, s in zip(layout.size, layout.stride)))
    return numel if span == sympy.expand(numel) else span  # dense in another order: its numel
