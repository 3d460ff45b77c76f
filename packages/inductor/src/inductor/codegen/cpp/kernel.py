"""The C++/OpenMP printer: one `extern "C"` function per FusedKernel.

Layout of a kernel (see ir.FusedKernel):

    #pragma omp parallel for collapse(n)      outer loops, split across threads
    for x0 ... for x{n-1}:
        OuterStep code                          once per outer iteration
        T acc = init;                           InnerLoop: accumulators...
        #pragma omp simd reduction(+:acc)       ...per-lane partials folded by OpenMP
        for r0 ...: body; acc += value;
        buf[x] = acc;                           reductions complete after their loop

A kernel without inner loops vectorizes its innermost outer loop instead; one without outer
loops parallelizes its inner loops (`parallel for simd reduction(...)`: per-thread partials).
A column reduction (see loop_order.py) tiles its last outer loop instead and runs every
stage as a `lane` loop across the tile, with one accumulator per lane:

    for x{n-1}_tile in steps of LANES:        (parallel, collapsed with the other outer loops)
        T acc[LANES]; T tmp[LANES] ...          values that outlive a stage: one per lane
        for lane: acc[lane] = init
        for r0 ...: for lane: body; acc[lane] += value;     (the lane loop vectorizes)
        for lane: buf[x] = acc[lane]

Math goes through runtime/cpp_prelude.h, whose float functions vectorize without -ffast-math.

Values that do not change across the loops (an optimizer's bias correction `pow(beta, step)`,
scalars read from 0-d tensors) are computed once, before them: GCC vectorizes no loop that calls
`powf` or loads a `bool` (bool buffers are passed as uint8_t for that reason too). Likewise a
value of an inner loop that depends on the outer loops alone (a row's target class, read
through a bounds check that may set the error flag) is computed once per row, before that
inner loop: a loop that may write the flag does not vectorize.
"""

from __future__ import annotations


import sympy
import torch

from ...ir import FusedKernel, InnerLoop, OuterStep
from ...ops import COMPARISONS, UNARY, kernel_accesses, use_handler
from ...runtime.cpp_build import PRELUDE
from ...runtime.kernel_errors import BOUNDS_ERROR_CODES
from ...sizes import maybe_empty_numel, product
from . import expressions
from .expressions import ctype
from .loop_order import LANES, lane_loop
from .source_text import indent, named_by_role, nest_loops

# Prelude functions that may set ptc_error_flag (directly or through ptc_divisor).
FLAGGING_HELPERS = ("ptc_divisor", "ptc_truncdiv", "ptc_floordiv", "ptc_fmod", "ptc_mod", "ptc_index_in_bounds")

KERNEL_SYMBOL = "kernel"  # every library holds one kernel, so one exported name serves all
PARALLEL_THRESHOLD = 32768  # elements below which threads cost more than they save

_FLOAT_MATH = {  # float32 versions from the prelude; other dtypes call libm (ptc_libm)
    "exp": "ptc_exp", "expm1": "ptc_expm1", "log": "ptc_log", "log1p": "ptc_log1p", "tanh": "ptc_tanh",
    "sigmoid": "ptc_sigmoid", "erf": "ptc_erf",
}
# Everything else calls libm through the prelude's ptc_libm (float and double overloads).
_CMATH = {
    name: f"ptc_libm::{name}"
    for name in ("exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh sinh cosh asin acos atan asinh acosh "
                 "atanh erf erfc floor ceil trunc lgamma abs").split()
}
_CMATH["round"] = "ptc_libm::nearbyint"  # half to even, as torch.round
_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "eq": "==", "ne": "!=", "lt": "<",
    "le": "<=", "gt": ">", "ge": ">=", "logical_and": "&&", "logical_or": "||", "bitwise_and": "&",
    "bitwise_or": "|", "bitwise_xor": "^", "lshift": "<<", "rshift": ">>",
}
_CALLS = {
    "maximum": "ptc_maximum", "minimum": "ptc_minimum", "floordiv": "ptc_floordiv", "mod": "ptc_mod",
    "truncdiv": "ptc_truncdiv", "fmod": "ptc_fmod", "pow": "ptc_pow", "atan2": "ptc_libm::atan2",
    "hypot": "ptc_libm::hypot", "copysign": "ptc_libm::copysign",
}
_REDUCTION_INIT = {"sum": "0", "prod": "1"}
_REDUCTION_CLAUSE = {"sum": "+", "prod": "*", "max": "max", "min": "min"}
# GCC's loop splitting (-O3) cuts a loop at a condition on its index (a causal mask's `r0 <= x2`)
# into two loops, and the copy loses its `omp simd`: a float sum or max, which only the pragma
# lets GCC reorder, then runs one element at a time there. With a symbolic trip count it splits
# (a static one it does not): a causal-masked softmax over 256 columns took 1.5x to 2x the static
# kernel's time. Kernels without such reductions keep splitting (a padded copy's edges gain).
NO_LOOP_SPLITTING = '__attribute__((optimize("no-split-loops"))) '
# A float32 sum over this many elements or more accumulates in double (CppKernel.reduction).
LONG_REDUCTION = 1 << 16
SUM_BLOCK = 1 << 12  # the elements a long sum's float partials add before it folds them in double


class CppValue:
    """A C++ expression (usually a variable), the torch dtype it holds, whether it is the same in
    every loop iteration (then it is computed before the loops), and whether it is the same in
    every iteration of the inner loops (`per_row`: computed once per outer iteration)."""

    def __init__(self, text: str, dtype: torch.dtype, invariant: bool = False, per_row: bool = False):
        self.text, self.dtype, self.invariant = text, dtype, invariant
        self.per_row = per_row or invariant

    def __str__(self):
        return self.text


class CppKernel:
    """Prints one FusedKernel; `source` and `signature` (buffer names, size symbols, then the
    positions of fixed elements read: `_fixed_element`) result."""

    def __init__(self, kernel: FusedKernel, buffers: dict, size_symbols: set):
        self.kernel = kernel
        self.buffers = buffers          # name -> ir.Buffer (for dtypes)
        self.size_symbols = size_symbols
        self.args: dict[str, bool] = {}  # buffer name -> written
        self.symbols: set[str] = set()
        # (buffer, element) -> parameter, for loads of one fixed element of a larger buffer: an
        # optimizer's per-parameter update reads its bias correction at its own position of one
        # buffer of them; as an argument, every same-shaped parameter's update is one library.
        self.element_offsets: dict[tuple[str, int], str] = {}
        self.counter = 0
        self.lines: list[str] = []
        self.hoisted: list[str] = []           # loop-invariant values, computed before the loops
        self.written = {name for name, _ in kernel_accesses(kernel.nodes).writes}
        self.pre: list[str] = []
        self.post: list[str] = []
        self.cse: list[dict] = [{}]
        self.local_values: dict[str, CppValue] = {}
        self.clauses: list[str] = []
        self.block_sums: list[str] = []       # long sums of this InnerLoop added up per block
        self.scalar_stage = False
        self.inner_flat = "0"
        self.scratch = kernel.scratch | kernel.long_scratch  # buffers kept one inner row at a time
        self.lanes = lane_loop(kernel)        # (var, size) of the tiled outer loop, or None
        # Names an index may hold and still be the same in every inner iteration: outer loop
        # variables, sizes, and per-row values used as indices (a row's gathered position).
        self.outer_names = {v.name for v, _ in kernel.outer} | {s.name for s in size_symbols}
        # Indices read from memory into a dimension that may be empty (a data-dependent size):
        # no position is in range there, so an access through one is skipped once an index
        # is flagged out of range (ptc_index_in_bounds returns 0, and element 0 of an empty
        # buffer is foreign memory: `y[i]` of an empty `y = x[x > 0]` crashed the process).
        self.maybe_empty_indices: set[str] = set()
        # Whether the inner loops surely run (values computed before them must not fault or flag
        # errors that the loops, running no iteration, would not).
        self.inner_runs = kernel.is_reduction and product(n for _, n in kernel.inner).is_positive is True
        self.finished: list[CppValue] = []    # a stage's reduction results: per-row once it ends
        self.lane_arrays: list[str] = []       # per-tile declarations of values outliving a stage
        self.tile_level = True                 # emitting code that runs once per outer iteration
        self.source, self.signature = self._generate()

    # -- ops handler -------------------------------------------------------------------

    def _new(self, text: str, dtype: torch.dtype, *operands) -> CppValue:
        """`text` in a new variable; computed before the loops when every operand is invariant
        (a value that may set the error flag stays in the loop: it must not fire when the loop
        runs no iteration)."""
        for scope in reversed(self.cse):
            if text in scope:
                return scope[text]
        name = f"tmp{self.counter}"
        self.counter += 1
        if operands and all(getattr(o, "invariant", False) for o in operands) and not _flags(text):
            self.hoisted.append(f"const {ctype(dtype)} {name} = {text};")
            value = self.cse[0][text] = CppValue(name, dtype, invariant=True)
            return value
        if self._once_per_row(text, operands):
            self.pre.append(f"const {ctype(dtype)} {name} = {text};")
            value = self.cse[-1][text] = CppValue(name, dtype, per_row=True)
            return value
        value = self._declare(name, dtype, text)
        value.per_row = self.tile_level and not self.lanes  # an OuterStep's value: one per row
        self.cse[-1][text] = value
        return value

    def _once_per_row(self, text: str, operands) -> bool:
        """Whether a value inside an inner loop depends on the outer loops alone, so that it can be
        computed before that loop (when the loop surely runs: the value may flag an error)."""
        if self.tile_level or self.lanes or not self.inner_runs or not operands:
            return False
        return all(getattr(o, "per_row", False) for o in operands)

    def _declare(self, name: str, dtype: torch.dtype, text: str) -> CppValue:
        """`const T name = text;`, or with lanes, at tile level, element `lane` of a per-tile
        array: every stage runs in its own lane loop, and later stages read the value."""
        if self.lanes and self.tile_level:
            self.lane_arrays.append(f"{ctype(dtype)} {name}[{LANES}];")
            self.lines.append(f"{name}[lane] = {text};")
            return CppValue(f"{name}[lane]", dtype)
        self.lines.append(f"const {ctype(dtype)} {name} = {text};")
        return CppValue(name, dtype)

    def _accumulator(self, name: str, type_: str, init: str, clause: str) -> str:
        """Declare a reduction accumulator; returns how the loop body names it."""
        if self.lanes:
            self.lane_arrays.append(f"{type_} {name}[{LANES}];")
            self.pre.append(f"{name}[lane] = {init};")
            return f"{name}[lane]"
        self.pre.append(f"{type_} {name} = {init};")
        self.clauses.append(f"{clause}:{name}")
        return name

    def _after_loop(self, name: str, dtype: torch.dtype, text: str) -> CppValue:
        """A value computed once the reduction loop is done (visible to later stages)."""
        saved, self.lines, self.tile_level = self.lines, self.post, True
        value = self._declare(name, dtype, text)
        value.per_row = not self.lanes
        self.lines, self.tile_level = saved, False
        return value

    def _index(self, expr) -> str:
        expr = sympy.sympify(expr)
        self.symbols |= {s.name for s in expr.free_symbols if s in self.size_symbols}
        return expressions.index(expr)

    def _element(self, name, index) -> str:
        """`name[index]`; a scratch buffer holds one inner row, indexed by the inner position."""
        if name in self.scratch:
            return f"{name}[{self.inner_flat}]"
        return f"{name}[{self._index(index)}]"

    def load(self, name, index):
        if name in self.local_values:
            return self.local_values[name]
        if name not in self.scratch:
            self.args.setdefault(name, False)
        dtype = self.buffers[name].dtype
        text = self._fixed_element(name, index) or self._element(name, index)
        numel = maybe_empty_numel(self.buffers[name].layout.size) if name not in self.scratch else None
        if numel is not None:  # no element to read at a clamped position (sizes.py)
            text = f"({self._index(numel)} > 0 ? {text} : {ctype(dtype)}())"
        if self._through_maybe_empty_index(index):
            text = f"(ptc_error_flag ? {ctype(dtype)}() : {text})"
        if dtype == torch.bool and name not in self.scratch:
            text = f"({text} != 0)"  # a uint8_t pointer (see the module docstring)
        if self._invariant_load(name, index):
            return self._new(text, dtype, _INVARIANT)
        if name not in self.written and name not in self.scratch and self._per_row_index(index):
            return self._new(text, dtype, _PER_ROW)
        return self._new(text, dtype)

    def _fixed_element(self, name, index) -> str | None:
        """`name[offsetN]` for a fixed element of a buffer of more than one (else None)."""
        index = sympy.sympify(index)
        numel = sympy.sympify(product(self.buffers[name].layout.size))
        if name in self.scratch or not isinstance(index, sympy.Integer) \
                or not (isinstance(numel, sympy.Integer) and numel > 1):
            return None
        key = (name, int(index))
        if key not in self.element_offsets:
            self.element_offsets[key] = f"offset{len(self.element_offsets)}"
        return f"{name}[{self.element_offsets[key]}]"

    def _per_row_index(self, expr) -> bool:
        """Whether an index names the same element in every iteration of the inner loops."""
        return {s.name for s in sympy.sympify(expr).free_symbols} <= self.outer_names

    def _invariant_load(self, name, index) -> bool:
        """A read of an element the loops do not move, of a buffer this kernel does not write
        and that has one (so that reading it before the loops cannot fall outside it)."""
        if name in self.written or name in self.scratch or name in self.kernel.locals:
            return False
        if not sympy.sympify(index).free_symbols <= self.size_symbols:
            return False
        numel = sympy.Integer(1)
        for n in self.buffers[name].layout.size:
            numel = numel * n
        return numel.is_positive is True

    def store(self, name, index, value):
        if name in self.kernel.locals:
            self.local_values[name] = value
            return
        if name not in self.scratch:
            self.args[name] = True
        target = self._element(name, index)
        if self._through_maybe_empty_index(index):
            self.lines.append(f"if (!ptc_error_flag) {target} = {value};")
            return
        self.lines.append(f"{target} = {value};")
        self.cse[-1][target] = value  # a later load of this element in this scope reuses the value

    def constant(self, value, dtype):
        return CppValue(expressions.constant(value, dtype), dtype, invariant=True)

    def index_expr(self, expr, dtype):
        invariant = sympy.sympify(expr).free_symbols <= self.size_symbols
        marker = [_INVARIANT] if invariant else [_PER_ROW] if self._per_row_index(expr) else []
        return self._new(f"static_cast<{ctype(dtype)}>({self._index(expr)})", dtype, *marker)

    def _through_maybe_empty_index(self, index) -> bool:
        return any(s.name in self.maybe_empty_indices for s in sympy.sympify(index).free_symbols)

    def indirect_indexing(self, value, size, eager_error=IndexError):
        code = BOUNDS_ERROR_CODES[eager_error]
        var = self._new(f"ptc_index_in_bounds(static_cast<int64_t>({value}), {self._index(size)}, {code})", torch.int64, value)
        if sympy.sympify(size).is_positive is not True:
            self.maybe_empty_indices.add(var.text)
        if var.per_row:
            self.outer_names.add(var.text)  # indices built from it stay per-row
        return sympy.Symbol(var.text, integer=True, nonnegative=True)

    def to_dtype(self, x, dtype):
        if x.dtype == dtype:
            return x
        if dtype == torch.bool:
            return self._new(f"({x} != 0)", dtype, x)
        if x.dtype == torch.bfloat16:
            x = self._new(f"bf16_to_float({x})", torch.float32, x)
            if dtype == torch.float32:
                return x
        if dtype == torch.bfloat16:
            return self._new(f"float_to_bf16(static_cast<float>({x}))", dtype, x)
        if dtype in (torch.uint8, torch.int8, torch.int16) and x.dtype.is_floating_point:
            # Through int64, so out-of-range values wrap as in eager: c10 converts float to uint8
            # that way (-25.0 gives 231), and x86 converts to int8/int16 through int32 (300.0 gives
            # 44). A direct conversion is undefined out of range: vector units and constant
            # folding saturate instead.
            return self._new(f"static_cast<{ctype(dtype)}>(static_cast<int64_t>({x}))", dtype, x)
        return self._new(f"static_cast<{ctype(dtype)}>({x})", dtype, x)

    def where(self, cond, a, b):
        return self._new(f"{cond} ? {a} : {b}", a.dtype, cond, a, b)

    def logical_xor(self, a, b):
        return self._new(f"static_cast<bool>({a}) != static_cast<bool>({b})", torch.bool, a, b)

    def __getattr__(self, name):
        if name in _INFIX:
            return lambda a, b: self._binary(name, a, b)
        if name in _CALLS:
            return lambda a, b: self._new(f"{_CALLS[name]}({a}, {b})", a.dtype, a, b)
        if name in UNARY:
            return lambda x: self._unary(name, x)
        raise AttributeError(f"the C++ printer has no rule for ops.{name}")

    def _binary(self, name, a, b):
        dtype = torch.bool if name in COMPARISONS else a.dtype
        if a.dtype == torch.bool and name in ("add", "mul"):
            return self._new(f"{a} {'||' if name == 'add' else '&&'} {b}", torch.bool, a, b)
        return self._new(f"{a} {_INFIX[name]} {b}", dtype, a, b)

    def _unary(self, name, x):
        dtype = torch.bool if name in COMPARISONS else x.dtype
        if x.dtype == torch.float32 and name in _FLOAT_MATH:
            return self._new(f"{_FLOAT_MATH[name]}({x})", dtype, x)
        special = {
            "neg": f"-{x}", "reciprocal": f"1 / {x}", "rsqrt": f"1 / ptc_libm::sqrt({x})",
            "logical_not": f"!{x}", "bitwise_not": f"!{x}" if x.dtype == torch.bool else f"~{x}",
            "sign": f"ptc_sign({x})", "isnan": f"ptc_isnan({x})", "isinf": f"ptc_isinf({x})",
            "isfinite": f"!(ptc_isnan({x}) || ptc_isinf({x}))", "signbit": f"ptc_libm::signbit({x})",
            "sigmoid": f"1 / (1 + ptc_libm::exp(-{x}))",
        }
        if name in special:
            text = special[name]
            if name in ("neg", "bitwise_not") and x.dtype not in (torch.bool,) and not x.dtype.is_floating_point:
                text = f"static_cast<{ctype(x.dtype)}>({text})"
            return self._new(text, dtype, x)
        if name == "abs" and not x.dtype.is_floating_point:
            return self._new(f"({x} < 0 ? -{x} : {x})", dtype, x)
        if name in ("floor", "ceil", "trunc", "round") and not x.dtype.is_floating_point:
            return x
        return self._new(f"{_CMATH[name]}({x})", dtype, x)

    def reduction(self, dtype, reduction_type, value):
        acc = f"acc{self.counter}"
        self.counter += 1
        t = ctype(dtype)
        if reduction_type in ("argmax", "argmin"):
            self.scalar_stage = True
            better = ">" if reduction_type == "argmax" else "<"
            start = "lowest()" if reduction_type == "argmax" else "max()"
            if dtype.is_floating_point:
                start = "infinity()" if reduction_type == "argmin" else "infinity()"
                start_value = f"{'-' if reduction_type == 'argmax' else ''}std::numeric_limits<{t}>::{start}"
            else:
                start_value = f"std::numeric_limits<{t}>::{start}"
            self.pre += [f"{t} {acc} = {start_value};", f"int64_t {acc}_index = 0;", f"bool {acc}_nan = false;"]
            nan_check = f"if ({value} != {value}) {{ {acc}_nan = true; {acc}_index = {self.inner_flat}; }} else " if dtype.is_floating_point else ""
            self.lines.append(
                f"if (!{acc}_nan) {{ {nan_check}if ({value} {better} {acc}) {{ {acc} = {value}; {acc}_index = {self.inner_flat}; }} }}"
            )
            return self._result(f"{acc}_index", torch.int64)
        if reduction_type in ("max", "min"):
            limit = "infinity()" if dtype.is_floating_point else ("lowest()" if reduction_type == "max" else "max()")
            sign = "-" if reduction_type == "max" and dtype.is_floating_point else ""
            init = f"{sign}std::numeric_limits<{t}>::{limit}"
            a = self._accumulator(acc, t, init, _REDUCTION_CLAUSE[reduction_type])
            op = "<" if reduction_type == "max" else ">"
            self.lines.append(f"{a} = {a} {op} {value} ? {value} : {a};")
            if dtype.is_floating_point:
                # NaN never enters the comparison chain above; an int flag (bool accumulators
                # do not vectorize) carries it past the loop.
                nan = self._accumulator(f"{acc}_nan", "int", "0", "|")
                self.lines.append(f"{nan} = {nan} | ({value} != {value});")
                result = f"{nan} ? std::numeric_limits<{t}>::quiet_NaN() : {a}"
                return self._after_loop(f"{acc}_result", dtype, result)
            return self._result(a, dtype)
        if reduction_type in ("any", "all"):
            # int accumulators: OpenMP reductions over bool do not vectorize.
            op = "|" if reduction_type == "any" else "&"
            a = self._accumulator(acc, "int", str(int(reduction_type == "all")), op)
            self.lines.append(f"{a} = {a} {op} static_cast<int>({value} != 0);")
            return self._result(a, dtype)
        if reduction_type == "sum" and dtype == torch.float32 and self._long_reduction():
            # A long float sum accumulates in double: per SIMD lane (and thread) the adds are
            # sequential, n / 16 of them, where eager's cascade sum adds pairwise. Over 4M
            # elements the float partials were 1500 times further from the exact sum than
            # eager's (4.8e-5 relative against 3.3e-8); double partials round once, at the end.
            if self._in_blocks():
                # Float partials over blocks of SUM_BLOCK elements (shorter than the rows that
                # keep float accumulators; twice the vector width of double), each block's
                # added in double.
                self.pre.append(f"double {acc} = 0;")
                self.block_sums.append(acc)
                self.clauses.append(f"+:{acc}_part")
                self.lines.append(f"{acc}_part = {acc}_part + {value};")
                return self._after_loop(f"{acc}_sum", dtype, f"static_cast<float>({acc})")
            a = self._accumulator(acc, "double", "0", "+")
            self.lines.append(f"{a} = {a} + {value};")
            return self._after_loop(f"{acc}_sum", dtype, f"static_cast<float>({a})")
        a = self._accumulator(acc, t, _REDUCTION_INIT[reduction_type], _REDUCTION_CLAUSE[reduction_type])
        update = {"sum": f"{a} + {value}", "prod": f"{a} * {value}"}[reduction_type]
        self.lines.append(f"{a} = {update};")
        return self._result(a, dtype)

    def _in_blocks(self) -> bool:
        """Whether this InnerLoop's long sums add up per block: one inner loop, run per row by
        one thread (no outer loops: OpenMP's threads split the row and keep double partials)."""
        return len(self.kernel.inner) == 1 and bool(self.kernel.outer) and not self.lanes

    def _long_reduction(self) -> bool:
        """Whether the inner loops may run LONG_REDUCTION times or more. Shorter rows (a
        hidden size) keep float accumulators, which vectorize twice as wide."""
        numel = self._inner_count()
        return not isinstance(numel, sympy.Integer) or int(numel) >= LONG_REDUCTION

    def _result(self, accumulator: str, dtype: torch.dtype) -> CppValue:
        """A reduction's accumulator, which later stages read as a per-row value."""
        value = CppValue(accumulator, dtype)
        self.finished.append(value)
        return value

    def store_reduction(self, name, index, value):
        buffer_dtype = self.buffers[name].dtype
        saved, self.lines, self.tile_level = self.lines, self.post, True
        value = self.to_dtype(value, buffer_dtype)
        self.lines, self.tile_level = saved, False
        if name in self.kernel.locals:
            self.local_values[name] = value
            return
        self.args[name] = True
        self.post.append(f"{name}[{self._index(index)}] = {value};")

    # -- structure ---------------------------------------------------------------------

    def _generate(self):
        k = self.kernel
        body: list[str] = []
        for stage in k.stages:
            if isinstance(stage, OuterStep):
                self.lines, self.tile_level = [], True
                with use_handler(self):
                    stage.node.body()
                body += self._in_lanes(self.lines)
            else:
                body += self._inner_loop(stage)
        rows = [f"alignas(64) {ctype(self.buffers[n].dtype)} {n}[{self._inner_numel()}];" for n in sorted(k.scratch)]
        rows += [f"{ctype(self.buffers[n].dtype)}* __restrict__ {n} = reinterpret_cast<{ctype(self.buffers[n].dtype)}*>"
                 f"(ptc_rows.row({i}));" for i, n in enumerate(sorted(k.long_scratch))]
        body = rows + [f"alignas(64) {decl}" for decl in self.lane_arrays] + body
        loops = [(v.name, self._index(n)) for v, n in k.outer]
        if self.lanes:
            var, size = loops[-1]
            loops[-1] = (f"{var}_tile", size, LANES)
            body = [f"const int64_t lanes = ptc_min<int64_t>({LANES}, {size} - {var}_tile);", *body]
        vectorize_outer = not k.is_reduction
        code = nest_loops(loops, body, parallel=True, simd=vectorize_outer, clauses=[], work=self._work())
        params = []
        for name, written in self.args.items():
            const = "" if written else "const "
            dtype = self.buffers[name].dtype
            pointee = "uint8_t" if dtype == torch.bool else ctype(dtype)
            params.append(f"{const}{pointee}* __restrict__ {name}")
        symbols = sorted(self.symbols)
        params += [f"const int64_t {s}" for s in [*symbols, *self.element_offsets.values()]]
        # The error flag is one per library: calls from several Python threads at once (ctypes
        # releases the GIL) must not clear or read each other's, so a kernel that may set it
        # runs one call at a time.
        checks = any(_flags(line) for line in code)
        attributes = NO_LOOP_SPLITTING if any("simd reduction(" in line for line in code) else ""
        source = "\n".join(
            [f'#include "{PRELUDE.name}"', "", f'extern "C" {attributes}int {KERNEL_SYMBOL}({", ".join(params)})', "{",
             *(["    ptc_one_call_lock ptc_one_call;"] if checks else []),
             "    ptc_error_flag = 0;", *indent(self._heap_rows()), *indent(self.hoisted), *indent(code),
             "    return ptc_error_flag;", "}", ""]
        )
        offsets = [str(element) for _, element in self.element_offsets]
        return named_by_role(source, self.args, self.scratch), [*self.args, *symbols, *offsets]

    def _heap_rows(self) -> list[str]:
        """The per-thread rows of long scratch buffers, allocated once per call (a stack array
        of a symbolic length could overflow a thread's stack; a buffer of the full size cost a
        write and a read of every element, and its allocation, per call: a softmax over
        32x512x512 at symbolic sizes took twice as long)."""
        if not self.kernel.long_scratch:
            return []
        count = len(self.kernel.long_scratch)
        return [f"ptc_scratch_rows ptc_rows({count}, {self._inner_numel()});",
                "if (!ptc_rows.data) return PTC_OUT_OF_MEMORY;"]

    def _in_lanes(self, lines: list[str]) -> list[str]:
        """With lanes: `lines` run once per element of the tile, in a vectorized loop."""
        if not self.lanes or not lines:
            return lines
        var = self.lanes[0].name
        return ["#pragma omp simd", "for (int64_t lane = 0; lane < lanes; ++lane)", "{",
                f"    const int64_t {var} = {var}_tile + lane;", *indent(lines), "}"]

    def _inner_loop(self, stage: InnerLoop) -> list[str]:
        self.pre, self.post, self.lines, self.clauses, self.block_sums = [], [], [], [], []
        self.scalar_stage = False
        self.tile_level = False
        inner = [(v.name, self._index(n)) for v, n in self.kernel.inner]
        flat = "0"
        for var, size in inner:
            flat = f"({flat} * {size} + {var})" if flat != "0" else var
        self.inner_flat = flat
        self.cse.append({})
        with use_handler(self):
            for node in stage.nodes:
                node.body()
        self.cse.pop()
        self.tile_level = True
        for value in self.finished:
            value.per_row = not self.lanes
        self.finished = []
        loop_body = self.lines
        if self.lanes:
            loop = nest_loops(inner, self._in_lanes(loop_body), parallel=False, simd=False, clauses=[], work="")
            return [*self._in_lanes(self.pre), *loop, *self._in_lanes(self.post)]
        if self.block_sums:
            return [*self.pre, *self._blocks(inner[0], loop_body), *self.post]
        parallel = not self.kernel.outer and not self.scalar_stage
        loop = nest_loops(inner, loop_body, parallel=parallel, simd=not self.scalar_stage, clauses=self.clauses,
                     work=self._work())
        return [*self.pre, *loop, *self.post]

    def _blocks(self, inner, body: list[str]) -> list[str]:
        """The inner loop over blocks of SUM_BLOCK elements, each block's float sums (`_part`)
        added to their double accumulators after it."""
        var, size = inner
        reduction = "".join(f" reduction({clause})" for clause in self.clauses)
        pragma = [] if self.scalar_stage else [f"#pragma omp simd{reduction}"]
        return [
            f"for (int64_t {var}_block = 0; {var}_block < {size}; {var}_block += {SUM_BLOCK})", "{",
            *indent([f"const int64_t {var}_end = ptc_min<int64_t>({size}, {var}_block + {SUM_BLOCK});",
                      *(f"float {acc}_part = 0;" for acc in self.block_sums),
                      *pragma, f"for (int64_t {var} = {var}_block; {var} < {var}_end; ++{var})", "{",
                      *indent(body), "}",
                      *(f"{acc} = {acc} + {acc}_part;" for acc in self.block_sums)]),
            "}",
        ]

    def _inner_count(self) -> sympy.Expr:
        """How many times the inner loops run per outer iteration."""
        return sympy.sympify(product(n for _, n in self.kernel.inner))

    def _inner_numel(self) -> str:
        return self._index(self._inner_count())

    def _work(self) -> str:
        sizes = [n for _, n in (*self.kernel.outer, *self.kernel.inner)]
        total = sympy.Integer(1)
        for n in sizes:
            total = total * n
        if isinstance(total, sympy.Integer):
            return "" if int(total) < PARALLEL_THRESHOLD else "always"
        return f"{self._index(total)} >= {PARALLEL_THRESHOLD}"


def _flags(text: str) -> bool:
    """Whether `text` calls a prelude function that may set ptc_error_flag."""
    return any(f"{helper}(" in text for helper in FLAGGING_HELPERS)


# An operand that is the same in every iteration (what a load at a fixed element passes to _new).
_INVARIANT = CppValue("", torch.int64, invariant=True)
# An operand that is the same in every inner iteration of one outer iteration.
_PER_ROW = CppValue("", torch.int64, per_row=True)
