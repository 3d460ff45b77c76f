"""The `ops` vocabulary: what a loop body may do, and the swappable handler that gives it meaning.

IR bodies (`ir.Pointwise.inner_fn`, `ir.Reduction.inner_fn`) are Python functions over sympy
indices that call `ops.<name>(...)`. Which handler is installed decides what a call does:
`DependencyCollector` records loads/stores, `codegen.cpp` prints C++, a printer beside it
prints Triton, `TextPrinter` renders a body for `__str__`. A handler implements every name in
`VOCABULARY`; values flowing between calls are whatever the handler returns (strings, typed
C++ variables...), and the body never inspects them.

Vocabulary (every dtype argument is a torch.dtype; `index` is a sympy expression):
  load(name, index)                    read element `index` of buffer `name`
  store(name, index, value)            write it
  constant(value, dtype)               a Python scalar (inf and nan included)
  index_expr(expr, dtype)              the value of an index expression
  indirect_indexing(value, size, eager_error=IndexError)   turn a loaded integer into a sympy
                                       symbol usable in an index (negative values wrap by `size`);
                                       out of range, the kernel raises `eager_error` (what eager
                                       raises for that op: RuntimeError for gather, else IndexError)
  to_dtype(x, dtype)                   a cast with torch's semantics (float->int truncates,
                                       x->bool is x != 0)
  where(cond, a, b)
  reduction(dtype, reduction_type, value)   fold `value` over the reduction loop; types in
                                       REDUCTION_TYPES; argmax/argmin return an int64 index;
                                       welford_mean/m2/weight (backends with `welford_variance`)
                                       return one statistic of a one-pass Welford fold: `value`
                                       is an element, or a (mean, m2, weight) tuple of partial
                                       statistics to combine (the final stage of a split)
  store_reduction(name, index, value)  write the folded result (once per output element)
  rand(seed, offset), randn(seed, offset)   float32 uniform in [0, 1) / standard normal: Philox
                                       of an int64 seed and an integer offset (Triton only)
  unary and binary math below, on operands of one dtype (lowerings insert the casts)
"""

from __future__ import annotations

from .context import Ambient

UNARY = (
    "neg abs exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan tanh sinh cosh asin acos atan "
    "asinh acosh atanh erf erfc sigmoid reciprocal floor ceil round trunc sign signbit logical_not "
    "bitwise_not isnan isinf isfinite lgamma"
).split()
BINARY = (
    "add sub mul truediv floordiv truncdiv mod fmod pow maximum minimum atan2 hypot copysign "
    "eq ne lt le gt ge logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor "
    "lshift rshift"
).split()
COMPARISONS = frozenset("eq ne lt le gt ge logical_and logical_or logical_xor logical_not isnan isinf isfinite signbit".split())
WELFORD_TYPES = ("welford_mean", "welford_m2", "welford_weight")
REDUCTION_TYPES = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all", *WELFORD_TYPES)
OTHER = (
    "load store constant index_expr indirect_indexing to_dtype where reduction store_reduction rand randn"
).split()
VOCABULARY = frozenset(UNARY + BINARY + OTHER)

_handler: Ambient = Ambient("inductor_ops_handler", "an IR body ran outside `use_handler(...)`: no ops handler is installed")


class _Ops:
    """`ops.add(a, b)` forwards to the handler installed by `use_handler`."""

    def __getattr__(self, name):
        if name not in VOCABULARY:
            raise AttributeError(f"ops.{name} is not in the ops vocabulary (inductor/ops.py)")
        return getattr(current_handler(), name)


ops = _Ops()


def current_handler():
    return _handler.get()


def use_handler(handler):
    """Give `ops.<name>(...)` calls inside the `with` block this handler's meaning."""
    return _handler.using(handler)


class TextPrinter:
    """Renders a body as nested calls, for `__str__` of IR nodes: `add(load(buf0, i0), 1.0)`."""

    def __getattr__(self, name):
        if name not in VOCABULARY:
            raise AttributeError(name)

        def render(*args):
            return f"{name}({', '.join(_text(a) for a in args)})"

        return render

    def indirect_indexing(self, value, size, eager_error=IndexError):
        import sympy

        return sympy.Symbol(f"indirect({value})", integer=True, nonnegative=True)


def _text(arg) -> str:
    text = str(arg)
    return text.replace("torch.", "") if "torch." in text else text


class DependencyCollector:
    """Records which buffers a body reads and writes, and at which indices."""

    def __init__(self):
        self.reads: list[tuple[str, object]] = []
        self.writes: list[tuple[str, object]] = []
        self.index_exprs: list = []
        self.indirect_symbols: set = set()  # stand for indices loaded from memory (a gather's)
        self.indirect_sizes: list = []       # the sizes of the dimensions those index
        self.op_count = 0

    def __getattr__(self, name):
        if name not in VOCABULARY:
            raise AttributeError(name)

        def count(*args):
            self.op_count += 1
            return name

        return count

    def load(self, name, index):
        self.reads.append((name, index))
        return "load"

    def index_expr(self, expr, dtype):
        self.index_exprs.append(expr)
        return "index_expr"

    def store(self, name, index, value):
        self.writes.append((name, index))

    def store_reduction(self, name, index, value):
        self.writes.append((name, index))

    def indirect_indexing(self, value, size, eager_error=IndexError):
        import sympy

        symbol = sympy.Symbol(f"indirect{len(self.reads)}", integer=True, nonnegative=True)
        self.indirect_symbols.add(symbol)
        self.indirect_sizes.append(size)
        return symbol


def collect_accesses(body) -> DependencyCollector:
    """What `body()` loads and stores (and the index expressions it uses)."""
    collector = DependencyCollector()
    with use_handler(collector):
        body()
    return collector


def kernel_accesses(nodes) -> DependencyCollector:
    """What a kernel's nodes (KernelNodes) load and store, in the kernel's loop variables."""
    return collect_accesses(lambda: [node.body() for node in nodes])


class BufferRenaming:
    """Forwards every call to `inner`, loading and storing buffers under the names in `names`."""

    def __init__(self, inner, names: dict):
        self.inner, self.names = inner, names

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def load(self, name, index):
        return self.inner.load(self.names.get(name, name), index)

    def store(self, name, index, value):
        return self.inner.store(self.names.get(name, name), index, value)

    def store_reduction(self, name, index, value):
        return self.inner.store_reduction(self.names.get(name, name), index, value)


class IndexSubstitution:
    """Forwards every call to `inner`, rewriting index expressions by `subs` first: how a body
    written over one set of loop variables runs inside a kernel whose loops were merged."""

    def __init__(self, inner, subs: dict):
        self.inner, self.subs = inner, subs

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _rewrite(self, index):
        from .sizes import simplify_index

        return simplify_index(index.xreplace(self.subs)) if self.subs else index

    def load(self, name, index):
        return self.inner.load(name, self._rewrite(index))

    def store(self, name, index, value):
        return self.inner.store(name, self._rewrite(index), value)

    def store_reduction(self, name, index, value):
        return self.inner.store_reduction(name, self._rewrite(index), value)

    def index_expr(self, expr, dtype):
        return self.inner.index_expr(self._rewrite(expr), dtype)
