"""Printing shape expressions and guards as Python source.

`print_python(expr, names)` spells a sympy expression over symbols as a Python expression,
each symbol replaced by `names[symbol]` (e.g. `L['x'].size()[0]`), with printing.py's Python
spelling: integer functions as Python's operators (`//`, `%`, `round`, `max`), relations with
`==`/`<=`, logic with `and`/`or`/`not`. The result needs only the builtins (and `math` for
floor/ceil of floats).
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy

from fake_tensor.symbolic.printing import ATOM, PYTHON, ExpressionPrinter


def _spelled_as_called(expr, printer):
    """Messages print any expression: a class no rule knows reads as a call by its name."""
    if isinstance(expr, sympy.Function):
        return printer.function(type(expr).__name__, expr.args)
    return f"({sympy.sstr(expr)})", ATOM


def print_python(expr: sympy.Basic, names: Mapping[sympy.Symbol, str] | None = None) -> str:
    names = names or {}
    printer = ExpressionPrinter(PYTHON, symbol=lambda s: names.get(s, s.name), unknown=_spelled_as_called)
    return printer.text(expr)
