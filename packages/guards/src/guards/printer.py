"""Printing sympy shape expressions as Python for guard functions: fake_tensor's one printer
(fake_tensor/symbolic/printing.py) with its Python spelling, plus what guards add.

`python_expression(expr, symbols, call)` spells `expr` with each symbol replaced by
`symbols[symbol]` and each function referenced through `call(name)` (so generated code can
bind `math.floor` or a shadowed builtin to a safe name). Rules are keyed by sympy class name,
so `@prints("MyFunc")` adds one for a function defined anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy
from fake_tensor.registries import register_once
from fake_tensor.symbolic.printing import PYTHON, ExpressionPrinter, Printed, Spelling

from .errors import GuardCompileError

PRINTERS: Spelling = PYTHON.with_rules({})


def prints(*names: str):
    """Register a printer `(expr, printer) -> (text, precedence)` for the sympy classes with these names."""

    def register(rule):
        return register_once(PRINTERS, names, rule, "printers of sympy classes")

    return register


def _no_printer(expr, printer) -> Printed:
    raise GuardCompileError(
        f"cannot print the shape expression {expr} as Python: no printer for sympy "
        f"{type(expr).__name__}; register one with @guards.printer.prints({type(expr).__name__!r})"
    )


def python_expression(
    expr: sympy.Basic,
    symbols: Mapping[sympy.Symbol, str],
    call: Callable[[str], str] = lambda name: name,
) -> str:
    def symbol(s):
        if s not in symbols:
            raise GuardCompileError(f"shape symbol {s} has no source: every symbol needs one to be read")
        return symbols[s]

    return ExpressionPrinter(PRINTERS, symbol, call, _no_printer)(sympy.sympify(expr))[0]
