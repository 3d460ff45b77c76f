"""Printing shape expressions and guards as Python source.

`print_python(expr, names)` spells a sympy expression over symbols as a Python expression,
each symbol replaced by `names[symbol]` (e.g. `L['x'].size()[0]`). Integer functions print
with Python's operators (`//`, `%`, `max`), relations with `==`/`<=`, logic with
`and`/`or`/`not`. The result needs only the builtins (and `math` for floor/ceil of floats).
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

_RELATION_OPERATORS = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class PythonShapePrinter(StrPrinter):
    def __init__(self, names: Mapping[sympy.Symbol, str]):
        super().__init__()
        self._names = names

    def _print_Symbol(self, expr):
        return self._names.get(expr, expr.name)

    def _binary(self, expr, operator: str) -> str:
        # `//` and `%` bind like `*` in Python and associate to the left; sympy prints the
        # function call as an atom, so the whole operation is parenthesized too.
        a, b = expr.args
        left = self.parenthesize(a, PRECEDENCE["Mul"], strict=True)
        right = self.parenthesize(b, PRECEDENCE["Mul"], strict=False)
        return f"({left} {operator} {right})"

    def _print_FloorDiv(self, expr):
        return self._binary(expr, "//")

    def _print_PythonMod(self, expr):
        return self._binary(expr, "%")

    def _print_Relational(self, expr):
        op = _RELATION_OPERATORS[expr.rel_op]
        return f"{self.parenthesize(expr.lhs, PRECEDENCE['Relational'])} {op} {self.parenthesize(expr.rhs, PRECEDENCE['Relational'])}"

    def _print_And(self, expr):
        return " and ".join(f"({self._print(a)})" for a in expr.args)

    def _print_Or(self, expr):
        return " or ".join(f"({self._print(a)})" for a in expr.args)

    def _print_Not(self, expr):
        return f"not ({self._print(expr.args[0])})"

    def _print_Equivalent(self, expr):
        # Equality of SymBools (sympy spells `a == b` on booleans as Equivalent).
        return " == ".join(f"({self._print(a)})" for a in expr.args)

    def _print_Max(self, expr):
        return f"max({', '.join(self._print(a) for a in expr.args)})"

    def _print_Min(self, expr):
        return f"min({', '.join(self._print(a) for a in expr.args)})"

    def _print_floor(self, expr):
        return f"math.floor({self._print(expr.args[0])})"

    def _print_ceiling(self, expr):
        return f"math.ceil({self._print(expr.args[0])})"

    def _print_RoundToInt(self, expr):
        return f"round({self._print(expr.args[0])})"

    def _print_Abs(self, expr):
        return f"abs({self._print(expr.args[0])})"

    def _print_Piecewise(self, expr):
        *branches, (otherwise, _) = expr.args
        text = self._print(otherwise)
        for value, condition in reversed(branches):
            text = f"({self._print(value)} if {self._print(condition)} else {text})"
        return text

    def _print_BooleanTrue(self, expr):
        return "True"

    def _print_BooleanFalse(self, expr):
        return "False"


def print_python(expr: sympy.Basic, names: Mapping[sympy.Symbol, str] | None = None) -> str:
    return PythonShapePrinter(names or {}).doprint(expr)
