"""Creating the symbols of sizes, strides and Python numbers the inputs give (backed symbols:
each has an example value, its hint), and the SymNodes built over them."""

from __future__ import annotations

import itertools
import math

import sympy
import torch

from fake_tensor.symbolic.dim import ConstraintViolationError, Dim
from fake_tensor.symbolic.shape_env.places import Place, place_name
from fake_tensor.symbolic.sym_node import SymNode
from fake_tensor.symbolic.value_ranges import ValueRange

# Sizes 0 and 1 are never symbolic (torch's 0/1 specialization): a size symbol is >= 2.
DYNAMIC_SIZE_RANGE = ValueRange.of(2, sympy.oo)


def is_constant(expr: sympy.Basic) -> bool:
    return expr.is_Number or isinstance(expr, sympy.logic.boolalg.BooleanAtom)


def sympy_symbol(name: str, pytype: type, value_range: ValueRange, *, nonnegative: bool) -> sympy.Symbol:
    """A float symbol is real; an int one with a range from 0 up is positive (a size: sizes 0 and
    1 specialize), or only non-negative for an unbacked count, which may be 0."""
    if pytype is float:
        return sympy.Symbol(name, real=True)
    if value_range.lower >= 0:
        return sympy.Symbol(name, integer=True, **({"nonnegative": True} if nonnegative else {"positive": True}))
    return sympy.Symbol(name, integer=True)


class SymbolCreation:
    """ShapeEnv's methods that create backed symbols and SymNodes (a mixin: the state they use
    lives in ShapeEnv.__init__)."""

    @property
    def symbols(self) -> list[sympy.Symbol]:
        return list(self.hints)

    def create_symbol(self, hint: int, place: Place, dim: Dim | None = None) -> sympy.Symbol:
        """A symbol for a size/stride with example value `hint` (>= 2), found at `place`."""
        if dim is not None:
            return self._symbol_for_dim(hint, place, dim)
        if self.duck_shape and place[1] == "size" and hint in self._duck_symbols:
            symbol = self._duck_symbols[hint]
        else:
            symbol = self._new_symbol(hint, DYNAMIC_SIZE_RANGE)
            if place[1] == "size":
                self._duck_symbols.setdefault(hint, symbol)
        self.symbol_sources[symbol].append(place)
        return symbol

    def _symbol_for_dim(self, hint: int, place: Place, dim: Dim) -> sympy.Symbol:
        where = place_name(*place)
        if not dim.allows(hint):
            raise ConstraintViolationError(
                f"{where} has example size {hint}, outside the range {dim!r} declares. "
                f"Give an example within [{dim.min}, {dim.max}] or widen the Dim."
            )
        known = self._dim_symbols.get(dim.name)
        if known is not None:
            known_dim, symbol = known
            if known_dim != dim:
                raise ConstraintViolationError(
                    f"two different Dims are named {dim.name!r}: {known_dim!r} and {dim!r}"
                )
            if self.hints[symbol] != hint:
                first = place_name(*self.symbol_sources[symbol][0])
                raise ConstraintViolationError(
                    f"{dim!r} is used for sizes that differ in the examples: {first} is "
                    f"{self.hints[symbol]} but {where} is {hint}. Use separate Dims, or make "
                    f"the examples agree."
                )
        else:
            analysed = ValueRange.of(max(dim.min, 2), dim.max if dim.max != math.inf else sympy.oo)
            symbol = self._new_symbol(hint, analysed, dim.name)
            self.declared[symbol] = dim
            self._dim_symbols[dim.name] = (dim, symbol)
        self.symbol_sources[symbol].append(place)
        return symbol

    def scalar(self, hint: int | float, source) -> torch.SymInt | torch.SymFloat:
        """A symbolic Python int or float input whose example value is `hint`, read from
        `source` (place `(source, "value", 0)`). Unlike sizes it is not specialized at 0 or 1
        and may be negative (torch.compile's automatic dynamic ints do the same); floats are
        real symbols."""
        pytype = type(hint)
        symbol = self._new_symbol(hint, ValueRange(-sympy.oo, sympy.oo), pytype=pytype)
        self.symbol_sources[symbol].append((source, "value", 0))
        return (torch.SymFloat if pytype is float else torch.SymInt)(SymNode(symbol, self, pytype, hint))

    def _new_symbol(self, hint: int, value_range: ValueRange, name: str | None = None, pytype: type = int) -> sympy.Symbol:
        # Symbols of declared Dims carry the Dim's name, so shapes print as (batch, seq, 768).
        if name is None:
            name = next(f"s{i}" for i in itertools.count(len(self.hints)) if f"s{i}" not in self._names)
        elif name in self._names:
            raise ConstraintViolationError(f"Dim name {name!r} is already the name of another symbol")
        self._names.add(name)
        symbol = sympy_symbol(name, pytype, value_range, nonnegative=False)
        self._order[symbol] = len(self._order)
        self.hints[symbol] = hint
        self.ranges[symbol] = value_range
        self.symbol_sources[symbol] = []
        return symbol

    def symint(self, symbol: sympy.Symbol) -> torch.SymInt:
        return torch.SymInt(SymNode(symbol, self, int, self.hints[symbol]))

    def make_node(self, expr: sympy.Basic, pytype: type, hint) -> SymNode:
        if self.replacements:
            expr = expr.xreplace(self.replacements)
        if hint is None and is_constant(expr):  # unbacked symbols that cancelled (u0 - u0)
            hint = bool(expr) if pytype is bool else pytype(expr)
        # torch's SymFloat magic methods cannot unwrap a constant SymFloat (they assert), so
        # float results stay symbolic-looking even when their expression is a number.
        constant = hint if pytype is not float and is_constant(expr) else None
        return SymNode(expr, self, pytype, hint, constant)
