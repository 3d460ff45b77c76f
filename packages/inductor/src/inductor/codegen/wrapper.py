"""The wrapper: a Python module whose `call(args)` runs one compiled graph.

It binds size symbols from the arguments, allocates each kernel's output buffers (reusing
the memory of dead buffers of the same dtype and size), calls the generated kernels as each
backend's `KernelCall` says (C++ through ctypes with data pointers, Triton with the tensors),
calls extern ops through torch.ops, and drops every buffer after its last use. The module is plain Python a user can read (COMPILER_LOGS=output_code).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
import torch

from ..ir import KERNEL_STEPS, Buffer, ComputedBuffer, ExternKernel, InputBuffer, IRNode, MultiOutput, ReinterpretView
from ..runtime.cpu_memory import MIN_BYTES
from ..sizes import FloorDiv, PythonMod, product


_RELATIONS = {"==", "!=", "<", "<=", ">", ">="}


def pyexpr(expr) -> str:
    """A sympy size expression as Python over the bound symbol names."""
    expr = sympy.sympify(expr)
    if isinstance(expr, sympy.Integer):
        return str(int(expr))
    if isinstance(expr, sympy.Symbol):
        return expr.name
    if isinstance(expr, FloorDiv):
        return f"({pyexpr(expr.args[0])} // {pyexpr(expr.args[1])})"
    if isinstance(expr, PythonMod):
        return f"({pyexpr(expr.args[0])} % {pyexpr(expr.args[1])})"
    if isinstance(expr, sympy.Add):
        return "(" + " + ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + " * ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Max):
        return f"max({', '.join(pyexpr(a) for a in expr.args)})"
    if isinstance(expr, sympy.Min):
        return f"min({', '.join(pyexpr(a) for a in expr.args)})"
    if isinstance(expr, sympy.Pow):
        return f"({pyexpr(expr.base)} ** {pyexpr(expr.exp)})"
    # Sizes the program computed and returns: `n >= 3`, `abs(n - 10)`, `n // 2.5`, and
    # conditions on sizes (`u0 > 3`, returned for a branch after the graph).
    if isinstance(expr, sympy.logic.boolalg.BooleanAtom):
        return str(bool(expr))
    if isinstance(expr, sympy.Rel) and expr.rel_op in _RELATIONS:
        return f"({pyexpr(expr.lhs)} {expr.rel_op} {pyexpr(expr.rhs)})"
    if isinstance(expr, sympy.Abs):
        return f"abs({pyexpr(expr.args[0])})"
    if isinstance(expr, (sympy.Float, sympy.Rational)):
        return repr(float(expr))
    if isinstance(expr, sympy.floor):
        return f"int({pyexpr(expr.args[0])} // 1)"
    if isinstance(expr, sympy.ceiling):
        return f"-int(-{pyexpr(expr.args[0])} // 1)"
    raise NotImplementedError(f"Python printing of size expression {expr}")


@dataclass(frozen=True)
class KernelCall:
    """How the wrapper loads and calls one generated kernel; each backend makes its own."""

    load: str                # Python expression, run once at import, giving the callable
    imports: str             # the import line `load` needs
    args: list               # buffer names, then Python expressions over the size symbols
    takes_pointers: bool     # C++ takes `t.data_ptr()`; Triton takes the tensors
    entry: tuple[str, str]   # the cache entry `load` reads, (kind, key): a warm start checks it


def _shape(values) -> str:
    items = [pyexpr(v) for v in values]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


class WrapperCodegen:
    def __init__(self, graph, steps, kernels: dict):
        """`kernels`: kernel name -> KernelCall from the backend."""
        self.graph, self.steps, self.kernels = graph, steps, kernels
        self.lines: list[str] = []
        self.buffers = {b.name: b for b in graph.buffers}
        self.buffers.update(graph.input_buffers())

    def _reads(self, step) -> list[str]:
        if isinstance(step, KERNEL_STEPS):
            return [a for a in self.kernels[step.name].args if a in self.buffers]
        if isinstance(step, MultiOutput):
            return [step.parent.name]
        return [v.name if isinstance(v, Buffer) else v.data.name for v in step.inputs()]

    def generate(self) -> str:
        g = self.graph
        last_use: dict[str, int] = {}
        for k, step in enumerate(self.steps):
            for name in self._reads(step):
                last_use[name] = k
        # Memory an extern's output may alias (a view op run as a fallback) is never handed out again.
        externally_seen = {
            n for s in self.steps if isinstance(s, ExternKernel) and s.aliases_inputs for n in self._reads(s)
        }
        # Buffers an extern op or the caller sees need a tensor of their own shape and strides;
        # generated kernels read only the memory, so a buffer only they read takes over a dead
        # buffer's tensor as it is, without a view (an `as_strided` costs a few us of host time).
        self.shaped = set(g.output_names) | {
            n for s in self.steps if not isinstance(s, KERNEL_STEPS) for n in self._reads(s)
        }
        self.tensor_layouts: dict[str, tuple] = {}  # buffer -> (size, stride) of the tensor it names
        header = [
            "# Generated by inductor: one compiled ATen graph.",
            "import torch",
            "from inductor.runtime.cpu_memory import empty_strided_cpu",
            *sorted({call.imports for call in self.kernels.values()}),
            "from inductor.runtime.wrapper_support import reinterpret, with_strides",
            "",
        ]
        for step in self.steps:
            if isinstance(step, KERNEL_STEPS):
                header.append(f"{step.name} = {self.kernels[step.name].load}")
        # Arguments whose memory the kernels write (input_writes.py): replaying this graph on
        # copies of them (CUDA graphs) would lose the writes.
        written = sorted(g.graph_inputs.index(self.buffers[name]) for name in set(g.input_writes.values()))
        header.append(f"written_inputs = {tuple(written)!r}")
        body = ["def call(args):"]
        params = [f"arg{k}" for k in range(len(g.graph_inputs))]
        if params:
            body.append(f"    {', '.join(params)}{',' if len(params) == 1 else ''} = args")
        for name in g.constants:
            body.append(f"    {name} = constants[{name!r}]")
        bound_later = {symbol for symbols in g.unbacked_bound_by.values() for symbol in symbols}
        for symbol, source in sorted(g.symbol_sources.items(), key=lambda kv: kv[0].name):
            if symbol not in bound_later:
                body.append(f"    {symbol.name} = {source}")
        for name, target in g.input_writes.items():
            if name in self.shaped:  # an extern reads it by its own name
                body.append(f"    {name} = {target}  # computed into the input's memory")
        free: dict[tuple, list[str]] = {}
        for k, step in enumerate(self.steps):
            if isinstance(step, KERNEL_STEPS):
                call = self.kernels[step.name]
                for name in call.args:
                    buf = self.buffers.get(name)
                    if isinstance(buf, ComputedBuffer) and _written_by(step, name):
                        body.append("    " + self._allocate(buf, free))
                pointer = ".data_ptr()" if call.takes_pointers else ""
                args = [f"{a}{pointer}" if a in self.buffers else a for a in call.args]
                body.append(f"    {step.name}({', '.join(args)})")
            elif isinstance(step, MultiOutput):
                index = "".join(f"[{i}]" for i in step.path)
                body.append(f"    {step.name} = {_checked(f'{step.parent.name}{index}', step.layout)}")
            else:
                args = [self._value(a) for a in step.args]
                args += [f"{key}={self._value(v)}" for key, v in step.kwargs.items()]
                call = f"{step.kernel}({', '.join(args)})"
                body.append(f"    {step.name} = {_checked(call, step.layout) if step.layout else call}")
            # Data-dependent sizes (the rows `nonzero` found, the number `.item()` read) are
            # known once the step that produced them ran.
            for symbol in g.unbacked_bound_by.get(step.name, ()):
                body.append(f"    {symbol.name} = {g.symbol_sources[symbol]}")
            dead = [n for n, last in last_use.items() if last == k and n in self.buffers and n not in g.output_names
                    and n not in g.input_writes and not isinstance(self.buffers[n], InputBuffer)
                    and not n.startswith("const_")]
            released = []
            for name in dead:
                buf = self.buffers[name]
                if isinstance(buf, ComputedBuffer) and name not in externally_seen:
                    free.setdefault(_reuse_key(buf), []).append(name)  # kept alive until reused
                else:
                    released.append(name)
            if released:
                body.append(f"    del {', '.join(released)}")
        outputs = [self._value(v) for v in g.outputs]
        body.append(f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
        return "\n".join([*header, "", "", *body, ""])

    def _allocate(self, buf: ComputedBuffer, free) -> str:
        layout = buf.layout
        candidates = free.get(_reuse_key(buf))
        if candidates:
            old = candidates.pop()
            held = self.tensor_layouts.pop(old, (self.buffers[old].layout.size, self.buffers[old].layout.stride))
            if held == (layout.size, layout.stride) or buf.name not in self.shaped:
                self.tensor_layouts[buf.name] = held
                return f"{buf.name} = {old}; del {old}  # reuses {old}"
            return (f"{buf.name} = reinterpret({old}, {_shape(layout.size)}, {_shape(layout.stride)}, 0); "
                    f"del {old}  # reuses {old}")
        if layout.device.type == "cpu" and not _statically_below(layout, MIN_BYTES):
            return f"{buf.name} = empty_strided_cpu({_shape(layout.size)}, {_shape(layout.stride)}, {layout.dtype})"
        return (
            f"{buf.name} = torch.empty_strided({_shape(layout.size)}, {_shape(layout.stride)}, "
            f"dtype={layout.dtype}, device={str(layout.device)!r})"
        )

    def _value(self, value) -> str:
        if isinstance(value, ReinterpretView):
            lay = value.layout
            base = value.data
            if lay.size == base.layout.size and lay.stride == base.layout.stride and lay.offset == 0:
                return base.name
            return f"reinterpret({base.name}, {_shape(lay.size)}, {_shape(lay.stride)}, {pyexpr(lay.offset)})"
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
        if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
            return str(value)
        if isinstance(value, torch.device):
            return f"torch.device({str(value)!r})"
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return f"float({str(value)!r})"
        return repr(value)


def _checked(value: str, layout) -> str:
    """An extern's result, made to have the strides the kernels were generated for."""
    return f"with_strides({value}, {_shape(layout.stride)})"


def _statically_below(layout, nbytes: int) -> bool:
    numel = product(layout.size)
    return isinstance(numel, sympy.Integer) and int(numel) * layout.dtype.itemsize < nbytes


def _written_by(kernel, name: str) -> bool:
    return any(node.name == name for node in kernel.nodes)


def _reuse_key(buf: ComputedBuffer):
    return (str(buf.layout.device), buf.layout.dtype, str(product(buf.layout.size)))
