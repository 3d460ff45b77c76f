"""The symbols of a graph's sizes: the tracer's (foreign) symbols mapped to ours, and where the
wrapper reads each at run time.

A symbol is bound by the first source that carries it: an input's size or stride
(`arg0.size(1)`), a symbolic int argument, or, for a data-dependent size (unbacked: nonzero's
row count, a number `.item()` read), the step of the wrapper that makes it known. Each has a
hint, its example value, for heuristics (block sizes, parallelization).
"""

from __future__ import annotations

import sympy
import torch

from .ir import Buffer
from .sizes import FloorDiv, as_expr

# The hint of a data-dependent size (nonzero's row count, a mark_unbacked dim), for heuristics
# such as parallelization thresholds. Lowerings that choose what to compute by sizes (slice
# clamping, a negative index) ask `LoweringGraph.decide`, which never answers from this guess.
UNBACKED_SIZE_HINT = 8192


class InputSymbols:
    def __init__(self):
        self.sources: dict[sympy.Symbol, str] = {}   # ours -> the wrapper expression reading it
        self.hints: dict[sympy.Symbol, int] = {}
        self.foreign: dict = {}                       # foreign symbols -> ours
        self.expressions: dict = {}                   # foreign expressions given as inputs -> ours
        # Unbacked symbols by the buffer whose step makes them known; their sources read it.
        self.unbacked_bound_by: dict[str, list[sympy.Symbol]] = {}
        self.unbacked: set[sympy.Symbol] = set()      # ours whose hint is UNBACKED_SIZE_HINT's guess

    def sympify(self, value) -> sympy.Expr:
        """Our sympy expression for a size, foreign symbols mapped to ours."""
        expr = as_expr(value)
        if expr.free_symbols:
            if self.expressions:
                expr = expr.xreplace(self.expressions)
                for symbol in expr.free_symbols - set(self.foreign):
                    self._solve_from_expressions(symbol)
            expr = expr.xreplace({s: self.foreign.get(s, s) for s in expr.free_symbols})
        return expr

    def _solve_from_expressions(self, symbol: sympy.Symbol) -> None:
        """Maps a foreign symbol no input carries to an expression of ours when a bound
        expression is it times an integer plus symbols already mapped: the backward of
        `constant_pad_nd(x, [a, b])` gets a tangent of size `s + a + b` (bound as e1) and the
        saved `-a`, `-b`, never `s`, yet its output has x's strides `(s, 1)`, so `s` is
        `e1 - a - b` (a kernel stored with `s` undeclared: a g++ error); irfft's backward gets
        a gradient of width `2*s - 2` and returns one `s` wide, `(e0 + 2) // 2` (an exact
        quotient: the expression is that multiple)."""
        for expr, ours in self.expressions.items():
            if symbol not in expr.free_symbols or not expr.free_symbols - {symbol} <= set(self.foreign):
                continue
            factor = sympy.expand(expr).coeff(symbol)
            rest = sympy.expand(expr - factor * symbol)
            if factor.is_Integer and factor != 0 and symbol not in rest.free_symbols:
                multiple = sympy.expand(ours - self.sympify(rest))
                if factor < 0:
                    factor, multiple = -factor, -multiple
                self.foreign[symbol] = multiple if factor == 1 else FloorDiv(multiple, factor)
                return

    def bind(self, value, source: str, hint: int) -> sympy.Expr:
        """Our expression for a (possibly foreign) size read at `source`; the first source that
        carries a symbol binds it."""
        expr = as_expr(value)
        if isinstance(expr, sympy.Integer):
            return expr
        if isinstance(expr, sympy.Symbol):
            ours = self.foreign.get(expr)
            if ours is None:
                ours = _our_symbol(expr)
                self.foreign[expr] = ours
                if hint_of(value) is None:
                    self.unbacked.add(ours)
            if ours not in self.sources:  # new, or met first inside an expression
                self.sources[ours] = source
                self.hints[ours] = hint
            return ours
        self._bind_shifted_symbol(expr, source, hint)
        if hint is not None and (not expr.free_symbols <= set(self.foreign) or not _integer_arithmetic(expr)):
            # An expression of symbols no input carries alone (channel_shuffle's backward takes
            # c // groups and a gradient of size groups * (c // groups), never c), or one computed
            # through floats, which kernels cannot print (the gradient of interpolate's output,
            # floor(1.7 * s2) wide): a symbol of
            # ours stands for the whole expression wherever it appears. The first source binds
            # it, as for a symbol: rebinding the expression (a padded length that is both a
            # saved tensor's size and its stride) replaced its entry, so len(expressions) named
            # the next expression (8 * that length, the gradient's stride) with the same symbol,
            # and kernels indexed the saved ids with the gradient's stride.
            if expr in self.expressions:
                return self.sympify(expr)
            ours = sympy.Symbol(f"e{len(self.expressions)}", integer=True)
            assert ours not in self.sources, f"{ours} is already bound"
            self.expressions[expr] = ours
            self.sources[ours] = source
            self.hints[ours] = hint
            if hint_of(value) is None:
                # Of data-dependent sizes (a saved `-(u0 + u1)`): its hint is a guess.
                self.unbacked.add(ours)
        return self.sympify(expr)

    def _bind_shifted_symbol(self, expr: sympy.Expr, source: str, hint: int) -> None:
        """Binds the one unbound symbol of `expr` when `expr` is it plus or minus a constant:
        the partitioner saves a negated pad (`-s0`) for constant_pad_nd's backward, and a
        kernel of that backward indexes with `s0` itself."""
        unbound = [s for s in expr.free_symbols if s not in self.foreign]
        if not isinstance(expr, sympy.Expr) or len(unbound) != 1 or len(expr.free_symbols) != 1 or hint is None:
            return
        (symbol,) = unbound
        sign = expr.coeff(symbol)
        shift = sympy.expand(expr - sign * symbol)
        if sign not in (1, -1) or not isinstance(shift, sympy.Integer):
            return
        # expr = sign * symbol + shift  =>  symbol = sign * (expr - shift)
        ours = _our_symbol(symbol)  # a symbolic int input may be negative (a pad that crops)
        self.foreign[symbol] = ours
        if not symbol.is_positive and symbol.name.startswith("u"):
            self.unbacked.add(ours)  # a saved `u0 + 1`: its hint is a guess
        self.sources[ours] = f"{'-' if sign == -1 else ''}({source} - {int(shift)})"
        self.hints[ours] = int(sign) * (hint - int(shift))

    def bind_unbacked(self, val, result, last_buffer: str) -> None:
        """Bind the unbacked symbols a fallback's output brings (`nonzero`'s row count u0, the
        number `_local_scalar_dense` read) to where the wrapper reads them after that step;
        a Python number's step is `last_buffer`'s."""
        if isinstance(val, (list, tuple)) and isinstance(result, (list, tuple)):
            for item_val, item in zip(val, result):
                self.bind_unbacked(item_val, item, last_buffer)
            return
        if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            self._bind_one_unbacked(val, last_buffer, "{}")
        elif isinstance(val, torch.Tensor) and isinstance(result, Buffer):
            for k, size in enumerate(val.shape):
                self._bind_one_unbacked(size, result.name, f"{{}}.size({k})")

    def _bind_one_unbacked(self, value, buffer_name: str, read: str) -> None:
        node = getattr(value, "node", None)
        if node is None or hint_of(value) is not None:
            return
        symbol = node.expr
        if isinstance(symbol, sympy.Eq) and isinstance(symbol.lhs, sympy.Symbol) and symbol.rhs == 1:
            # A bool tensor's item, `Eq(u0, 1)` over a 0-or-1 symbol: u0 is the bool as an int.
            symbol, read = symbol.lhs, f"int({read})"
        if not isinstance(symbol, sympy.Symbol) or symbol in self.foreign:
            return
        ours = _our_symbol(symbol)
        self.foreign[symbol] = ours
        self.unbacked.add(ours)
        self.sources[ours] = read.format(buffer_name)
        self.hints[ours] = UNBACKED_SIZE_HINT
        self.unbacked_bound_by.setdefault(buffer_name, []).append(ours)


def _integer_arithmetic(expr: sympy.Expr) -> bool:
    """Whether every part of `expr` is an integer (no float constant or float operation)."""
    return all(part.is_integer for part in sympy.preorder_traversal(expr) if isinstance(part, sympy.Expr))


def _our_symbol(foreign: sympy.Symbol) -> sympy.Symbol:
    """Our symbol for a tracer's, with the tracer's assumptions: a size is positive, a row count
    non-negative, a symbolic int argument (`x[:-k]` with k a Python int) or a number read with
    `.item()` any integer, a float any real. Expressions that reach a lowering unmapped (read off a
    node's value) then mean the same symbol, and sympy never simplifies by a sign the value lacks:
    `-k < 0` taken as true for k = 0 sized x[:-0] as the whole of x (a segfault in a backward
    that read 10 elements of an empty gradient)."""
    if foreign.is_positive:
        return sympy.Symbol(foreign.name, integer=True, positive=True)
    if foreign.is_nonnegative:
        return sympy.Symbol(foreign.name, integer=True, nonnegative=True)
    if foreign.is_integer:
        return sympy.Symbol(foreign.name, integer=True)
    return sympy.Symbol(foreign.name, real=True)


def hint_of(value):
    """A SymInt's example value; None for an unbacked one (plain ints are their own)."""
    node = getattr(value, "node", None)
    return getattr(node, "hint", value) if node is not None else value


def size_hint(size) -> int:
    """An example input's size, read without asking its shape env (`int(symint)` is a question
    that specializes the symbol: a replacement `s1 -> 6` no guard protects); a fake's unbacked
    size (mark_unbacked) has none: assumed."""
    hint = hint_of(size)
    return UNBACKED_SIZE_HINT if hint is None else int(hint)
