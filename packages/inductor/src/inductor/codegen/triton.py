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
constexprs chosen at launch (runtime/triton_configs.py).

Values a kernel stores and reads back at the same index stay in registers (the scheduler
only fuses such reads). Its register buffers (`locals`) and `scratch` rows are never written:
a persistent kernel holds the whole row, a looped one recomputes a scratch row in each later
loop that reads it. A looped stage reading another buffer an earlier stage wrote goes through
memory after a barrier, since another thread of the program may have written it.
"""

from __future__ import annotations

import re

import sympy
import torch

from ..cache import digest
from ..ir import FusedKernel, InnerLoop, OuterStep
from ..ops import BINARY, UNARY, DependencyCollector, use_handler
from ..runtime.triton_configs import KIND_LOOPED, KIND_PERSISTENT, KIND_POINTWISE, KIND_TILED
from ..sizes import FloorDiv, Mod, affine_coefficient, product
from . import triton_expr
from .triton_expr import literal, triton_dtype

# Reductions over at most this many elements keep the whole row in registers.
PERSISTENT_REDUCTION_LIMIT = 1024
INT32_LIMIT = 2**31


_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "eq": "==", "ne": "!=", "lt": "<", "le": "<=",
    "gt": ">", "ge": ">=", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "lshift": "<<",
    "rshift": ">>", "fmod": "%",
}
_LOGICAL = {"logical_and": "&", "logical_or": "|", "logical_xor": "^"}
# CUDA's math library through libdevice: the functions eager's kernels call, so results agree.
_LIBDEVICE_UNARY = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh",
    "asin": "asin", "acos": "acos", "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "erf": "erf", "erfc": "erfc", "lgamma": "lgamma", "rsqrt": "rsqrt", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "round": "nearbyint",
}
_LIBDEVICE_BINARY = {"atan2": "atan2", "hypot": "hypot", "copysign": "copysign"}
_ROUNDING = frozenset({"floor", "ceil", "trunc", "round"})
_REDUCE_FN = {
    "sum": "tl.sum", "max": "helpers.reduce_max", "min": "helpers.reduce_min", "prod": "helpers.reduce_prod",
    "any": "helpers.reduce_any", "all": "helpers.reduce_all",
}
_COMBINE = {
    "sum": "{acc} + {value}", "prod": "{acc} * {value}", "max": "helpers.max_combine({acc}, {value})",
    "min": "helpers.min_combine({acc}, {value})", "any": "{acc} | {value}", "all": "{acc} & {value}",
}


class TritonValue:
    """A Triton expression (usually a variable), its torch dtype, and the block axes it varies along.
    `literal` holds the Python value of a constant printed inline."""

    __slots__ = ("text", "dtype", "dims", "literal")

    def __init__(self, text: str, dtype: torch.dtype, dims=frozenset(), literal=None):
        self.text, self.dtype, self.dims, self.literal = text, dtype, frozenset(dims), literal

    def __str__(self):
        return self.text


class _Scope:
    """Common subexpressions and register-forwarded stores valid in one region of the kernel."""

    def __init__(self):
        self.cse: dict[str, TritonValue] = {}
        self.stored: dict[str, tuple] = {}   # buffer -> (index, value)


def _identity(reduction_type: str, dtype: torch.dtype) -> str:
    if reduction_type in ("sum", "any"):
        return literal(0, dtype) if reduction_type == "sum" else "False"
    if reduction_type == "prod":
        return literal(1, dtype)
    if reduction_type == "all":
        return "True"
    largest = reduction_type in ("min", "argmin")
    if dtype.is_floating_point:
        return 'float("inf")' if largest else 'float("-inf")'
    if dtype == torch.bool:
        return "True" if largest else "False"
    info = torch.iinfo(dtype)
    return str(info.max if largest else info.min)


class TritonKernel:
    """Prints one FusedKernel. Results: `source` (a Python module), `kind`, `args` (buffer names,
    then size-symbol names, in kernel parameter order) and `numels` (xnumel[, rnumel])."""

    def __init__(self, kernel: FusedKernel, buffers: dict, size_symbols: set):
        self.kernel = kernel
        self.buffers = buffers
        self.size_symbols = {s.name for s in size_symbols}
        reads, writes = self._accesses()
        accesses = [*reads, *writes]
        rnumel = product(n for _, n in kernel.inner)
        if not kernel.is_reduction:
            self.kind = KIND_TILED if _transposes(kernel, reads, writes) else KIND_POINTWISE
        elif isinstance(rnumel, sympy.Integer) and int(rnumel) <= PERSISTENT_REDUCTION_LIMIT:
            self.kind = KIND_PERSISTENT
        else:
            self.kind = KIND_LOOPED
        # The loops behind each block axis: a tiled kernel's `r` axis is its innermost loop.
        self.loops = (
            {"x": kernel.outer[:-1], "r": kernel.outer[-1:]} if self.kind == KIND_TILED
            else {"x": kernel.outer, "r": kernel.inner}
        )
        self.axis_of = {var.name: axis for axis, loops in self.loops.items() for var, _ in loops}
        self.xnumel = product(n for _, n in self.loops["x"])
        self.rnumel = product(n for _, n in self.loops["r"])
        self.int64_indices = self._needs_int64_indices(accesses)
        self.outer_reduction = kernel.is_reduction and self._is_outer_reduction(accesses)
        self.args: dict[str, bool] = {}          # buffer name -> written
        self.symbols: set[str] = set()
        self.used_vars: set[str] = set()
        self.indirect_dims: dict[str, frozenset] = {}
        self.counter = 0
        self.lines: list[str] = []
        self.scopes = [_Scope()]
        self.stored_in_memory: set[str] = set()  # buffers this kernel writes to memory
        self.barrier_needed = False
        self.pre: list[str] = []
        self.post: list[str] = []
        self.scratch_nodes: list = []            # looped kernels: scratch producers, recomputed per loop
        self.accumulators: list[str] = []
        self.source = self._generate()
        self.numels = [self.xnumel] + ([self.rnumel] if self.kind != KIND_POINTWISE else [])

    @property
    def name(self) -> str:
        """The kernel's step name in the wrapper (`kernel3`); `function_name` is its name in Triton."""
        return self.kernel.name

    # -- shapes and masks --------------------------------------------------------------

    def _shape(self, dims) -> str:
        if self.kind == KIND_POINTWISE:
            return "[XBLOCK]" if "x" in dims else "[]"
        if not dims:
            return "[]"
        return f"[{'XBLOCK' if 'x' in dims else '1'}, {'RBLOCK' if 'r' in dims else '1'}]"

    @staticmethod
    def _mask(dims) -> str | None:
        masks = [m for d, m in (("x", "xmask"), ("r", "rmask")) if d in dims]
        return " & ".join(masks) if masks else None

    def _accesses(self) -> tuple[list, list]:
        """(buffer, index) of every load, and of every store, in the kernel's loop variables."""
        collector = DependencyCollector()
        with use_handler(collector):
            for node in self.kernel.nodes:
                node.body()
        return collector.reads, collector.writes

    def _is_outer_reduction(self, accesses) -> bool:
        """Whether the reduced axis is strided while rows are contiguous (a sum over dim 0):
        block shapes with many rows and few reduction lanes coalesce those loads."""
        innermost = {axis: loops[-1][0] for axis, loops in (("x", self.kernel.outer), ("r", self.kernel.inner)) if loops}
        if "x" not in innermost or "r" not in innermost:
            return False
        along = {"x": 0, "r": 0}
        for _, index in accesses:
            if not {innermost["x"], innermost["r"]} <= index.free_symbols:
                # Reduction outputs, per-row values, and vectors indexed by the reduced dims alone
                # (a LayerNorm weight gradient's mean and rstd) do not decide the access pattern.
                continue
            for axis, var in innermost.items():
                if affine_coefficient(index, var) == 1:
                    along[axis] += 1
        return along["x"] > along["r"]

    def _needs_int64_indices(self, accesses) -> bool:
        """int32 index arithmetic unless some buffer this kernel touches spans 2**31 elements
        (or might, when its sizes are symbolic)."""
        extents = [self.xnumel * self.rnumel]
        for name, _ in accesses:
            layout = self.buffers[name].layout
            extents.append(layout.offset + sum(((n - 1) * s for n, s in zip(layout.size, layout.stride)), 0) + 1)
        for extent in extents:
            extent = sympy.sympify(extent)
            if not isinstance(extent, sympy.Integer) or int(extent) >= INT32_LIMIT:
                return True
        return False

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

    def _index(self, expr) -> tuple[str, frozenset]:
        """The index as Triton source, and the block axes it varies along."""
        expr = sympy.sympify(expr)
        dims = set()
        for symbol in expr.free_symbols:
            name = symbol.name
            if name in self.size_symbols:
                self.symbols.add(name)
            elif name in self.indirect_dims:
                dims |= self.indirect_dims[name]
            elif name in self.axis_of:
                self.used_vars.add(name)
                dims.add(self.axis_of[name])
        return triton_expr.index(expr), frozenset(dims)

    def _forwarded(self, name, index):
        for scope in reversed(self.scopes):
            if name in scope.stored and scope.stored[name][0] == index:
                return scope.stored[name][1]
        return None

    # -- ops handler -------------------------------------------------------------------

    def load(self, name, index):
        value = self._forwarded(name, index)
        if value is not None:
            return value
        if name in self.kernel.locals or name in self.kernel.scratch:
            raise AssertionError(f"{self.name}: register-only buffer {name} read before it was computed")
        if name in self.stored_in_memory:
            self.barrier_needed = True
        self.args.setdefault(name, False)
        text, dims = self._index(index)
        dtype = self.buffers[name].dtype
        mask = self._mask(dims)
        masked = f", {mask}, other={literal(0, dtype)}" if mask else ""
        return self._new(f"tl.load({name} + {text}{masked})", dtype, dims)

    def store(self, name, index, value):
        self._store(name, index, value, self.lines)

    def _store(self, name, index, value, lines):
        self.scopes[-1].stored[name] = (index, value)
        if name in self.kernel.locals or name in self.kernel.scratch:
            return  # in registers; a looped kernel recomputes scratch rows in each later loop
        self.args[name] = True
        self.stored_in_memory.add(name)
        value = self._tensor(value)
        text, dims = self._index(index)
        pointer = f"{name} + {text}"
        if not value.dims <= dims:
            # A folded row stored at an index without `x` (a kernel with no outer loops).
            dims = dims | value.dims
            pointer = f"tl.broadcast_to({pointer}, {self._shape(dims)})"
        mask = self._mask(dims)
        lines.append(f"tl.store({pointer}, {value}{', ' + mask if mask else ''})")

    def constant(self, value, dtype):
        return TritonValue(literal(value, dtype), dtype, (), literal=value)

    def index_expr(self, expr, dtype):
        text, dims = self._index(expr)
        if not expr.free_symbols:
            return self.constant(int(expr), dtype)
        if not dims:
            return self._new(f"tl.full([], {text}, {triton_dtype(dtype)})", dtype, dims)
        return self._new(f"({text}).to({triton_dtype(dtype)})", dtype, dims)

    def indirect_indexing(self, value, size):
        value = self._tensor(value)
        size_text, _ = self._index(size)
        wrapped = self._new(f"tl.where({value} < 0, {value} + {size_text}, {value})", value.dtype, value.dims)
        # Out-of-range indices are clamped, as in the C++ backend: a bad index never faults.
        clamped = self._new(f"tl.minimum(tl.maximum({wrapped}, 0), {size_text} - 1)", value.dtype, value.dims)
        self.indirect_dims[clamped.text] = value.dims
        return sympy.Symbol(clamped.text, integer=True, nonnegative=True)

    def to_dtype(self, x, dtype):
        if x.dtype == dtype:
            return x
        if x.literal is not None:
            # Converted as eager converts it (-25.7 to uint8 is 231), so the kernel holds a valid literal.
            return self.constant(torch.tensor(x.literal, dtype=x.dtype).to(dtype).item(), dtype)
        if dtype == torch.bool:
            return self._new(f"{x} != 0", dtype, x.dims)
        if dtype == torch.uint8 and x.dtype.is_floating_point:
            # Eager converts float to uint8 through int64 (c10's static_cast_with_inter_type), so
            # -25.0 wraps to 231; the GPU's own float-to-uint8 conversion saturates it to 0.
            return self._new(f"{x}.to(tl.int64).to(tl.uint8)", dtype, x.dims)
        return self._new(f"{x}.to({triton_dtype(dtype)})", dtype, x.dims)

    def where(self, cond, a, b):
        if cond.dtype != torch.bool:  # C++ tests any scalar; tl.where wants int1
            cond = self.to_dtype(cond, torch.bool)
        if a.literal is not None and b.literal is not None:
            a = self._tensor(a)
        dims = cond.dims | a.dims | b.dims
        return self._new(f"tl.where({cond}, {a}, {b})", a.dtype, dims)

    def __getattr__(self, name):
        if name in BINARY:
            return lambda a, b: self._binary(name, a, b)
        if name in UNARY:
            return lambda x: self._unary(name, x)
        raise AttributeError(name)

    def _binary(self, name, a, b):
        if _is_identity(name, a, b):
            return a  # `i * 1 + 0` from an arange or view: exact to drop (no -0.0 + 0 for floats)
        if a.literal is not None and b.literal is not None:
            a = self._tensor(a)
        dims = a.dims | b.dims
        dtype = a.dtype if a.literal is None else b.dtype
        if name in ("eq", "ne", "lt", "le", "gt", "ge"):
            return self._new(f"{a} {_INFIX[name]} {b}", torch.bool, dims)
        if name in _LOGICAL:
            a, b = (x if x.dtype == torch.bool else self.to_dtype(x, torch.bool) for x in (a, b))
            return self._new(f"{a} {_LOGICAL[name]} {b}", torch.bool, dims)
        if dtype == torch.bool and name in ("add", "mul", "maximum", "minimum"):
            symbol = "|" if name in ("add", "maximum") else "&"
            return self._new(f"{a} {symbol} {b}", dtype, dims)
        if name in _INFIX:
            return self._new(f"{a} {_INFIX[name]} {b}", dtype, dims)
        # Function calls: a Python literal argument would be typed float32 or int32 there.
        a, b = self._tensor(a), self._tensor(b)
        if name in _LIBDEVICE_BINARY:
            return self._new(f"libdevice.{_LIBDEVICE_BINARY[name]}({a}, {b})", dtype, dims)
        if name == "truncdiv":
            return self._new(f"{a} // {b}", dtype, dims)
        if name == "floordiv":
            helper = "floordiv_float" if dtype.is_floating_point else "floordiv_int"
            return self._new(f"helpers.{helper}({a}, {b})", dtype, dims)
        if name == "mod":
            return self._new(f"helpers.remainder({a}, {b})", dtype, dims)
        if name == "pow":
            helper = "libdevice.pow" if dtype.is_floating_point else "helpers.pow_int"
            return self._new(f"{helper}({a}, {b})", dtype, dims)
        return self._new(f"helpers.{name}({a}, {b})", dtype, dims)  # maximum, minimum

    def _unary(self, name, x):
        x = self._tensor(x)
        floating = x.dtype.is_floating_point
        if name == "neg":
            return self._new(f"-{x}", x.dtype, x.dims)
        if name == "abs":
            return self._new(f"tl.abs({x})", x.dtype, x.dims)
        if name in _ROUNDING and not floating:
            return x
        if name == "sqrt":  # correctly rounded, as eager's; tl.sqrt_rn takes float32 only
            fn = "tl.sqrt_rn" if x.dtype == torch.float32 else "libdevice.sqrt"
            return self._new(f"{fn}({x})", x.dtype, x.dims)
        if name == "reciprocal":
            return self._new(f"1.0 / {x}", x.dtype, x.dims)
        if name == "sigmoid":
            return self._new(f"1.0 / (1.0 + libdevice.exp(-{x}))", x.dtype, x.dims)
        if name == "sign":
            return self._new(f"helpers.sign({x})", x.dtype, x.dims)
        if name in _LIBDEVICE_UNARY:
            return self._new(f"libdevice.{_LIBDEVICE_UNARY[name]}({x})", x.dtype, x.dims)
        if name in ("logical_not",) or (name == "bitwise_not" and x.dtype == torch.bool):
            return self._new(f"{x} == 0", torch.bool, x.dims)
        if name == "bitwise_not":
            return self._new(f"~{x}", x.dtype, x.dims)
        return self._new(_PREDICATES[name](x, floating), torch.bool, x.dims)

    def reduction(self, dtype, reduction_type, value):
        value = self._tensor(value)
        identity = _identity(reduction_type, dtype)
        full = self._shape({"x", "r"})
        masked = self._new(f"tl.where(xmask & rmask, {value}, {identity})", dtype, {"x", "r"})
        arg = reduction_type in ("argmax", "argmin")
        if self.kind == KIND_PERSISTENT:
            if arg:
                indices = self._new(f"tl.broadcast_to(rindex.to(tl.int64), {full})", torch.int64, {"x", "r"})
                text = f"helpers.reduce_{reduction_type}({masked}, {indices}, 1)"
                return self._new(text, torch.int64, {"x"})
            fn = _REDUCE_FN[reduction_type]
            text = f"{fn}({masked}, 1, keep_dims=True)" if fn == "tl.sum" else f"{fn}({masked}, 1)"
            return self._new(text, dtype, {"x"})
        acc = f"acc{len(self.accumulators)}"
        self.accumulators.append(acc)
        self.pre.append(f"{acc} = tl.full({full}, {identity}, {triton_dtype(dtype)})")
        result = f"tmp{self.counter}"
        self.counter += 1
        if arg:
            self.pre.append(f"{acc}_index = tl.full({full}, 0, tl.int64)")
            self.lines.append(
                f"{acc}, {acc}_index = helpers.{reduction_type}_combine({acc}, {acc}_index, {masked}, rindex.to(tl.int64))"
            )
            self.post.append(f"{result} = helpers.reduce_{reduction_type}({acc}, {acc}_index, 1)")
            return TritonValue(result, torch.int64, {"x"})
        self.lines.append(f"{acc} = {_COMBINE[reduction_type].format(acc=acc, value=masked)}")
        fn = _REDUCE_FN[reduction_type]
        self.post.append(f"{result} = {fn}({acc}, 1, keep_dims=True)" if fn == "tl.sum" else f"{result} = {fn}({acc}, 1)")
        return TritonValue(result, dtype, {"x"})

    def store_reduction(self, name, index, value):
        dtype = self.buffers[name].dtype
        if self.kind != KIND_LOOPED:
            self._store(name, index, self.to_dtype(value, dtype), self.lines)
            return
        # The folded value exists after the loop: emit there, seeing only the kernel-level scope.
        saved_lines, saved_scopes = self.lines, self.scopes
        self.lines, self.scopes = self.post, self.scopes[:-1]
        try:
            self._store(name, index, self.to_dtype(value, dtype), self.post)
        finally:
            self.lines, self.scopes = saved_lines, saved_scopes

    # -- structure ---------------------------------------------------------------------

    def _generate(self) -> str:
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
        return self._module(body)

    def _looped_stage(self, stage: InnerLoop) -> list[str]:
        self.pre, self.post, self.lines = [], [], []
        self.barrier_needed = False
        self.scopes.append(_Scope())
        with use_handler(self):
            # Recomputing a scratch row costs the loads it reads; storing it would cost a write
            # and the same read back.
            for node in self.scratch_nodes:
                node.body()
            for node in stage.nodes:
                node.body()
        self.scratch_nodes += [node for node in stage.nodes if node.name in self.kernel.scratch]
        self.scopes.pop()
        loop = [
            "for roffset in range(0, rnumel, RBLOCK):",
            *_indent(["rindex = roffset + rbase", "rmask = rindex < rnumel", *self._var_lines("r"), *self.lines]),
        ]
        barrier = ["tl.debug_barrier()"] if self.barrier_needed else []
        return [*barrier, *self.pre, *loop, *self.post]

    def _var_lines(self, axis: str) -> list[str]:
        """`x0 = xindex % 128`...: the IR's loop variables recovered from the flat block index."""
        loops = self.loops[axis]
        flat = sympy.Symbol(f"{axis}index", integer=True, nonnegative=True)
        lines, stride = [], sympy.Integer(1)
        for position in reversed(range(len(loops))):
            var, size = loops[position]
            value = FloorDiv(flat, stride)
            if position > 0:
                value = Mod(value, size)
            if var.name in self.used_vars:
                text, _ = self._index(value)
                lines.append(f"{var.name} = {text}")
            stride = stride * size
        return lines[::-1]

    def _module(self, body: list[str]) -> str:
        k = self.kernel
        two_d = self.kind != KIND_POINTWISE
        index_cast = ".to(tl.int64)" if self.int64_indices else ""
        head = [
            f"xoffset = tl.program_id(0){index_cast} * XBLOCK",
            f"xindex = xoffset + tl.arange(0, XBLOCK){'[:, None]' if two_d else ''}",
            "xmask = xindex < xnumel",
            *self._var_lines("x"),
        ]
        if self.kind == KIND_TILED:
            head += [f"roffset = tl.program_id(1){index_cast} * RBLOCK",
                     "rindex = roffset + tl.arange(0, RBLOCK)[None, :]", "rmask = rindex < rnumel",
                     *self._var_lines("r")]
        elif self.kind == KIND_PERSISTENT:
            head += [f"rindex = tl.arange(0, RBLOCK)[None, :]{index_cast}", "rmask = rindex < rnumel",
                     *self._var_lines("r")]
        elif self.kind == KIND_LOOPED:
            head.append(f"rbase = tl.arange(0, RBLOCK)[None, :]{index_cast}")
        # Parameters are named by role, not by the graph's buffer names, and the kernel by a hash
        # of its text: the same kernel in every layer of a model is one module, compiled once.
        parameters = _parameter_names(self.args)
        text = "\n".join(_indent([*head, *body]))
        text = re.sub(r"\b(" + "|".join(map(re.escape, parameters)) + r")\b", lambda m: parameters[m.group(1)], text) \
            if parameters else text
        params = [*parameters.values(), *sorted(self.symbols), "xnumel"]
        if two_d:
            params.append("rnumel")
        params += ["XBLOCK: tl.constexpr"] + (["RBLOCK: tl.constexpr"] if two_d else [])
        loops = ", ".join(f"{v} < {n}" for v, n in k.outer) or "()"
        inner = ", ".join(f"{v} < {n}" for v, n in k.inner)
        title = f"# A {self.kind} kernel over {loops}" + (f" | reduction over {inner}" if inner else "")
        if self.kind == KIND_TILED:
            title += f" | tiles: x over {', '.join(str(v) for v, _ in self.loops['x'])}, r over {self.loops['r'][0][0]}"
        pointer_types = ", ".join(f"{parameters[name]!r}: {_pointer_type(self.buffers[name].dtype)!r}" for name in self.args)
        source = "\n".join([
            title,
            "# Generated by inductor (codegen/triton.py).",
            "import triton",
            "import triton.language as tl",
            "",
            "from inductor.runtime import triton_helpers as helpers",
            "from inductor.runtime.triton_helpers import libdevice",
            "",
            f"KIND = {self.kind!r}",
            *([f"OUTER_REDUCTION = True  # the reduced axis is strided; rows are contiguous"] if self.outer_reduction else []),
            f"POINTER_TYPES = {{{pointer_types}}}",
            "",
            "",
            "@triton.jit",
            f"def KERNEL_NAME({', '.join(params)}):",
            text,
            "",
        ])
        self.function_name = f"{self.kind}_{digest(source)[:12]}"
        return source.replace("KERNEL_NAME", self.function_name)

    @property
    def wrapper_args(self) -> list[str]:
        """The kernel's non-constexpr parameters, as the wrapper names them (numels excluded)."""
        return [*self.args, *sorted(self.symbols)]


_PREDICATES = {
    "isnan": lambda x, floating: f"{x} != {x}",
    "isinf": lambda x, floating: f'tl.abs({x}) == float("inf")' if floating else f"{x} != {x}",
    "isfinite": lambda x, floating: f'tl.abs({x}) < float("inf")' if floating else f"{x} == {x}",
    "signbit": lambda x, floating: (
        f"{x}.to({'tl.int64' if x.dtype == torch.float64 else 'tl.int32'}, bitcast=True) < 0" if floating else f"{x} < 0"
    ),
}


_SIGNATURE_NAMES = {
    torch.float32: "fp32", torch.float64: "fp64", torch.float16: "fp16", torch.bfloat16: "bf16", torch.int64: "i64",
    torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8", torch.bool: "i1",
}


TILE_MIN = 16            # both sides of a transpose at least this long to tile it
TILE_MAX_INNER = 2**20   # the innermost loop spans grid axis 1 (at most 65535 programs)


def _transposes(kernel: FusedKernel, reads, writes) -> bool:
    """Whether a pointwise kernel is a transpose: its stores run contiguously along the innermost
    loop while a load runs strided along it and contiguously along another loop. Such a kernel
    is tiled (the `r` axis its innermost loop, `x` the others), so that Triton can give the
    load and the store each a coalesced layout, exchanging the tile through shared memory."""
    if kernel.is_reduction or len(kernel.outer) < 2:
        return False
    (last, inner_size), others = kernel.outer[-1], kernel.outer[:-1]
    outer_size = product(n for _, n in others)
    if not (isinstance(inner_size, sympy.Integer) and isinstance(outer_size, sympy.Integer)):
        return False
    if not (TILE_MIN <= int(inner_size) < TILE_MAX_INNER and int(outer_size) >= TILE_MIN):
        return False
    if not writes or any(affine_coefficient(index, last) != 1 for _, index in writes):
        return False
    for _, index in reads:
        along_last = affine_coefficient(index, last)
        if along_last is not None and along_last not in (0, 1) and any(
            affine_coefficient(index, var) == 1 for var, _ in others
        ):
            return True
    return False


def _is_identity(name: str, a: TritonValue, b: TritonValue) -> bool:
    if b.literal is None or a.literal is not None or isinstance(b.literal, bool):
        return False
    if name == "mul":
        return b.literal == 1
    return name in ("add", "sub") and b.literal == 0 and not a.dtype.is_floating_point and a.dtype != torch.bool


def _parameter_names(buffers: dict) -> dict:
    """Buffer name -> kernel parameter: `in_ptr0...` for buffers only read, `out_ptr0...` for written ones."""
    counts = {"in_ptr": 0, "out_ptr": 0}
    names = {}
    for name, written in buffers.items():
        role = "out_ptr" if written else "in_ptr"
        names[name] = f"{role}{counts[role]}"
        counts[role] += 1
    return names


def _pointer_type(dtype: torch.dtype) -> str:
    """Triton's name for a pointer to `dtype`, as in `triton.compile` signatures."""
    return "*" + _SIGNATURE_NAMES[dtype]


def _indent(lines):
    return ["    " + line for line in lines]
