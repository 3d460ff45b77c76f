"""Printing sympy shape expressions as Python, with our own rules (guards must not depend on
fake_tensor, whose ShapeEnv produces the expressions).

`python_expression(expr, symbols, call)` spells `expr` with each symbol replaced by
`symbols[symbol]` and each function referenced through `call(name)` (so generated code can
bind `math.floor` or a shadowed builtin to a safe name). Node types print through a registry
keyed by sympy class name, so fake_tensor's own integer functions (`FloorDiv`, `PythonMod`,
...) need no import here, and `@prints("MyFunc")` adds one.

Every printer returns (text, precedence); an operand is parenthesized only when its
precedence is below what its position needs, so `s0 + 2*s1 <= 1024` prints as written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy

from .errors import GuardCompileError

# Python operator precedence, loosest first.
CONDITIONAL, OR, AND, NOT, COMPARE, ADD, MUL, UNARY, POWER, ATOM = range(10)

Printed = tuple[str, int]


class _Printer:
    def __init__(self, symbols: Mapping[sympy.Symbol, str], call: Callable[[str], str]):
        self.symbols = symbols
        self.call = call

    def __call__(self, expr: sympy.Basic) -> Printed:
        for cls in type(expr).__mro__:
            rule = PRINTERS.get(cls.__name__)
            if rule is not None:
                return rule(expr, self)
        raise GuardCompileError(
            f"cannot print the shape expression {expr} as Python: no printer for sympy "
            f"{type(expr).__name__}; register one with @guards.printer.prints({type(expr).__name__!r})"
        )

    def operand(self, expr: sympy.Basic, at_least: int) -> str:
        text, precedence = self(expr)
        return text if precedence >= at_least else f"({text})"

    def function(self, name: str, args) -> Printed:
        return f"{self.call(name)}({', '.join(self(a)[0] for a in args)})", ATOM


PRINTERS: dict[str, Callable[[sympy.Basic, _Printer], Printed]] = {}


def prints(*names: str):
    """Register a printer for the sympy classes with these names."""

    def register(rule):
        for name in names:
            if name in PRINTERS:
                raise ValueError(f"two printers for sympy {name}: {PRINTERS[name]} and {rule}")
            PRINTERS[name] = rule
        return rule

    return register


def python_expression(
    expr: sympy.Basic,
    symbols: Mapping[sympy.Symbol, str],
    call: Callable[[str], str] = lambda name: name,
) -> str:
    return _Printer(symbols, call)(sympy.sympify(expr))[0]


@prints("Symbol")
def _symbol(expr, p):
    if expr not in p.symbols:
        raise GuardCompileError(f"shape symbol {expr} has no source: every symbol needs one to be read")
    return p.symbols[expr], ATOM


@prints("Integer")
def _integer(expr, p):
    value = int(expr)
    return str(value), ATOM if value >= 0 else UNARY


@prints("Rational")
def _rational(expr, p):
    return f"{expr.p}/{expr.q}", MUL


@prints("Float")
def _float(expr, p):
    return repr(float(expr)), ATOM


@prints("Infinity")
def _infinity(expr, p):
    return f"{p.call('float')}('inf')", ATOM


@prints("NegativeInfinity")
def _negative_infinity(expr, p):
    return f"-{p.call('float')}('inf')", UNARY


@prints("BooleanTrue")
def _true(expr, p):
    return "True", ATOM


@prints("BooleanFalse")
def _false(expr, p):
    return "False", ATOM


@prints("Add")
def _add(expr, p):
    terms = expr.as_ordered_terms()
    text = p.operand(terms[0], ADD)
    for term in terms[1:]:
        if term.could_extract_minus_sign():
            text += f" - {p.operand(-term, MUL)}"
        else:
            text += f" + {p.operand(term, ADD)}"
    return text, ADD


@prints("Mul")
def _mul(expr, p):
    coefficient, rest = expr.as_coeff_Mul()
    if coefficient == -1:
        return f"-{p.operand(rest, UNARY)}", UNARY
    factors = list(rest.as_ordered_factors()) if isinstance(rest, sympy.Mul) else [rest]
    if coefficient != 1:
        factors.insert(0, coefficient)
    # Left-associative: every factor after the first needs more than MUL to stay grouped.
    text = p.operand(factors[0], MUL)
    for factor in factors[1:]:
        text += f"*{p.operand(factor, MUL + 1)}"
    return text, MUL


@prints("Pow")
def _pow(expr, p):
    base, exponent = expr.args
    # `**` binds tighter than unary minus on its left and is right-associative.
    return f"{p.operand(base, POWER + 1)}**{p.operand(exponent, UNARY)}", POWER


def _binary(operator: str, precedence: int):
    def rule(expr, p):
        a, b = expr.args
        return f"{p.operand(a, precedence)} {operator} {p.operand(b, precedence + 1)}", precedence

    return rule


# fake_tensor's integer functions (fake_tensor.symbolic.functions), by name.
prints("FloorDiv")(_binary("//", MUL))
prints("PythonMod")(_binary("%", MUL))


@prints("RoundToInt")
def _round(expr, p):
    return p.function("round", expr.args)


_RELATIONS = {
    "Equality": "==",
    "Unequality": "!=",
    "StrictLessThan": "<",
    "LessThan": "<=",
    "StrictGreaterThan": ">",
    "GreaterThan": ">=",
}


def _relation(operator: str):
    def rule(expr, p):
        # Comparisons chain in Python (`a < b < c`), so both sides must bind tighter.
        return f"{p.operand(expr.lhs, COMPARE + 1)} {operator} {p.operand(expr.rhs, COMPARE + 1)}", COMPARE

    return rule


for _name, _operator in _RELATIONS.items():
    prints(_name)(_relation(_operator))


@prints("And")
def _and(expr, p):
    return " and ".join(p.operand(a, AND + 1) for a in expr.args), AND


@prints("Or")
def _or(expr, p):
    return " or ".join(p.operand(a, OR + 1) for a in expr.args), OR


@prints("Not")
def _not(expr, p):
    return f"not {p.operand(expr.args[0], NOT)}", NOT


@prints("Max")
def _max(expr, p):
    return p.function("max", expr.args)


@prints("Min")
def _min(expr, p):
    return p.function("min", expr.args)


@prints("Abs")
def _abs(expr, p):
    return p.function("abs", expr.args)


@prints("floor")
def _floor(expr, p):
    return p.function("math.floor", expr.args)


@prints("ceiling")
def _ceiling(expr, p):
    return p.function("math.ceil", expr.args)


@prints("Piecewise")
def _piecewise(expr, p):
    *branches, (otherwise, _) = expr.args
    text, precedence = p(otherwise)
    for value, condition in reversed(branches):
        text = f"{p.operand(value, OR)} if {p.operand(condition, OR)} else {text if precedence > CONDITIONAL else f'({text})'}"
        precedence = CONDITIONAL
    return text, precedence
