"""Index arithmetic: sympy expressions over loop variables and size symbols.

Loop variables are `i0, i1, ...` (pointwise and outer dimensions) and `r0, r1, ...`
(reduction dimensions); size symbols (`s0`, ...) come from dynamic shapes. Every symbol is a
non-negative integer, which lets `FloorDiv` and `PythonMod` (fake_tensor's, the one vocabulary of
symbolic integer functions) print as C/Triton `/` and `%`.
"""

from __future__ import annotations

import functools

import sympy
from fake_tensor.symbolic import FLOAT_OPERATIONS, FloorDiv, PythonMod, ToFloat
from fake_tensor.symbolic.printing import ATOM, UNARY

Expr = sympy.Expr


@functools.lru_cache(maxsize=None)
def loop_var(prefix: str, n: int) -> sympy.Symbol:
    return sympy.Symbol(f"{prefix}{n}", integer=True, nonnegative=True)


def loop_vars(prefix: str, count: int) -> list[sympy.Symbol]:
    return [loop_var(prefix, n) for n in range(count)]


# Python's float arithmetic on sizes (`n / (n - 1)`) and `float(n)`, as fake_tensor keeps them.
_PYTHON_FLOAT_HEADS = (ToFloat, *FLOAT_OPERATIONS.values())


def is_float_valued(expr) -> bool:
    """Whether a number the program computed from sizes is a Python float (kernels compute it
    in double): what sympy cannot show to be an integer. Every symbol of a size is an integer,
    and so is their integer arithmetic; a float operation, a float literal, or either negated
    (`-(1.0 / n)`, sympy's Mul(-1, ...), in huber_loss's gradient) is not."""
    return isinstance(expr, sympy.Expr) and not expr.is_integer


def integers_only(rule):
    """A kernel printer's rule written for integer operands (Max, Min, Abs), which refuses float
    ones (`max(n / 2, 1.0)`) rather than compute them in integers: the graph then runs
    uncompiled (compile_fx)."""

    def checked(expr, printer):
        if any(is_float_valued(arg) for arg in expr.args):
            return printer.unknown(expr, printer)
        return rule(expr, printer)

    return checked


def floats_only(rule):
    """A kernel printer's rule for rounding a Python float (floor, ceiling), which refuses
    sympy's own real arithmetic (`floor(1.5*x)`): Python computed no such expression, and
    sympy's order of operations rounds otherwise."""

    def checked(expr, printer):
        if not all(arg.has(*_PYTHON_FLOAT_HEADS) for arg in expr.args):
            return printer.unknown(expr, printer)
        return rule(expr, printer)

    return checked


def float_operand(to_double):
    """A kernel printer's spelling of an operand of Python's float arithmetic on sizes: a float
    prints as it is; an integer (exact in int64) is converted by `to_double(arg, printer)`,
    rounding once, as Python's int-to-float does."""

    def operand(arg, printer) -> str:
        return printer.text(arg, UNARY) if is_float_valued(arg) else to_double(arg, printer)

    return operand


def float_operator(symbol: str, operand):
    """A printer rule for a binary float operation: IEEE double arithmetic in the program's
    order is Python's float arithmetic, rounding and all."""
    return lambda expr, p: (f"({operand(expr.args[0], p)} {symbol} {operand(expr.args[1], p)})", ATOM)


def as_expr(value) -> Expr:
    """An int, a sympy expression or a SymInt (through its node's expression) as sympy. A
    SymFloat's expression may be an integer one (`float(n)` keeps `n`): it is wrapped in
    ToFloat, so that what reads it alone still knows it is a float."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool):
        return sympy.Integer(int(value))
    if isinstance(value, int):
        return sympy.Integer(value)
    node = getattr(value, "node", None)
    if node is not None:
        for attr in ("expr", "_expr"):
            expr = getattr(node, attr, None)
            if isinstance(expr, sympy.Basic):
                expr = _with_replacements(expr, node)
                return ToFloat(expr) if node.is_float() and expr.is_integer else expr
        hint = node.maybe_as_int() if hasattr(node, "maybe_as_int") else None
        if hint is not None:
            return sympy.Integer(hint)
    return sympy.Integer(int(value))


def _with_replacements(expr: Expr, node) -> Expr:
    """`expr` with the equalities its shape env learned from guards substituted (`s0 -> 4` after
    `x.unflatten(0, (2, 2))`): the graph only runs where those guards pass, and a size left as
    `s0` could not be matched against the literal sizes of a later view."""
    replacements = getattr(getattr(node, "shape_env", None), "replacements", None)
    if replacements and expr.free_symbols & replacements.keys():
        return expr.xreplace(replacements)
    return expr


# Memoized: a loader's index is built again at every pass over a body (value collection, access
# collection, fusion, code generation), and through every loader above it, while sympy's
# Max/Min compare their arguments on each construction (factor_terms on each difference). ViT's
# position embeddings at a new image size (a cat of the class token and a bicubic interpolate
# of a view, 16 taps) clamped 27 distinct indices 2078 times: 9.8 of 11 s CPU of its compile.
@functools.lru_cache(maxsize=4096)
def clamp_index(expr: Expr, size: Expr) -> Expr:
    """`expr` clamped into `[0, size - 1]`: a load that stays in bounds where its value is
    discarded (the other inputs' part of a cat, a pad, a window past the edge)."""
    return sympy.Max(sympy.Min(expr, size - 1), 0)


def product(values) -> Expr:
    result = sympy.Integer(1)
    for v in values:
        result = result * v
    return result


def maybe_empty_numel(size) -> Expr | None:
    """The element count of a buffer of `size` when it may be 0 (a data-dependent size: the
    rows `x[x > 0]` selected), else None. A kernel may read such a buffer at a clamped
    position (cat's and pad's loads are clamped into each input) that is position 0 of
    nothing: its loads are guarded by this count (codegen/cpp, codegen/triton)."""
    numel = sympy.sympify(product(size))
    return None if numel.is_positive else numel


def contiguous_strides(size) -> tuple[Expr, ...]:
    strides = []
    running = sympy.Integer(1)
    for dim in reversed(size):
        strides.append(running)
        running = running * dim
    return tuple(reversed(strides))


# Memoized: a buffer's index is simplified at every load of every pass over every body that
# reads it (values, accesses, fusion, code generation), and expanding a nest of FloorDiv and
# PythonMod is sympy's slowest step: MobileViT at a new image size asked 11k times.
@functools.lru_cache(maxsize=8192)
def simplify_index(expr: Expr) -> Expr:
    """Expand and fold `b*FloorDiv(x, b) + PythonMod(x, b)` back into `x`: what a view of a view leaves."""
    expr = sympy.expand(expr)
    for _ in range(4):
        folded = _fold_div_mod(expr)
        if folded == expr:
            return expr
        expr = sympy.expand(folded)
    return expr


def _fold_div_mod(expr: Expr) -> Expr:
    if not isinstance(expr, sympy.Add):
        return expr
    terms = list(expr.args)
    for m_index, term in enumerate(terms):
        coeff, mod = _split_coeff(term, PythonMod)
        if mod is None:
            continue
        base, divisor = mod.args
        # FloorDiv merges nested quotients, `(x // 32) // s` is `x // (32*s)`: what the mod pairs
        # with is its own quotient in that canonical form (a flatten of [2, s, 32, 128]).
        quotient = FloorDiv(base, divisor)
        for d_index, other in enumerate(terms):
            if d_index == m_index:
                continue
            other_coeff, div = _split_coeff(other, FloorDiv)
            if div is not None and div == quotient and sympy.expand(other_coeff - coeff * divisor) == 0:
                rest = [t for k, t in enumerate(terms) if k not in (m_index, d_index)]
                return sympy.Add(*rest) + coeff * base
    return expr


def _split_coeff(term: Expr, kind) -> tuple[Expr, Expr | None]:
    if isinstance(term, kind):
        return sympy.Integer(1), term
    if isinstance(term, sympy.Mul):
        found = [a for a in term.args if isinstance(a, kind)]
        if len(found) == 1:
            return sympy.Mul(*[a for a in term.args if a is not found[0]]), found[0]
    return sympy.Integer(0), None


def affine_coefficient(expr: Expr, var: sympy.Symbol) -> Expr | None:
    """The coefficient of `var` if `expr` is affine in it (and `var` appears nowhere else), else None."""
    expr = sympy.expand(expr)
    if var not in expr.free_symbols:
        return sympy.Integer(0)
    coeff = expr.coeff(var, 1)
    rest = sympy.expand(expr - coeff * var)
    if var in rest.free_symbols or var in coeff.free_symbols:
        return None
    return coeff


def static_int(expr) -> int | None:
    expr = as_expr(expr)
    return int(expr) if isinstance(expr, sympy.Integer) else None


def known_multiple_of(expr, n: int) -> bool:
    """Whether `expr` is a multiple of `n` at every value of its size symbols: each term of its
    expansion an integer coefficient divisible by `n` times integer factors. False when unsure."""
    expr = sympy.expand(as_expr(expr))
    for term in sympy.Add.make_args(expr):
        coeff, rest = term.as_coeff_Mul()
        if not (coeff.is_Integer and int(coeff) % n == 0 and (rest == 1 or rest.is_integer)):
            return False
    return True
