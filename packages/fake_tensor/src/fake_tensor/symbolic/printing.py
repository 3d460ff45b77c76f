"""One precedence-aware printer for sympy expressions, spelled per target by a table of rules.

Every layer prints the same vocabulary (sympy's arithmetic and logic, and functions.py's
`FloorDiv`, `PythonMod`, `RoundToInt`, `ToFloat`...) into some language: guards and shape checks as Python
(guards/printer.py, guard_printer.py here), inductor's wrapper as Python, its kernels' indices
as C++ or Triton. Each target is a `Spelling`: a dict from sympy class name to a rule
`(expr, printer) -> (text, precedence)`, found along the class's MRO, so a table may hold
classes it cannot import (guards keys fake_tensor's functions by name). `PYTHON` spells
everything as Python; a target starts from it (`PYTHON.only(...)`, `PYTHON.with_rules(...)`)
and overrides what it spells differently. An operand is parenthesized only when its
precedence is below what its position needs, so `s0 + 2*s1 <= 1024` prints as written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy

# Python's operator precedence, loosest first. C's agrees on the operators the C++ spelling
# uses (`+ - * / %`, unary minus, calls), so both print with these levels.
CONDITIONAL, OR, AND, NOT, COMPARE, ADD, MUL, UNARY, POWER, ATOM = range(10)

Printed = tuple[str, int]
Rule = Callable[[sympy.Basic, "ExpressionPrinter"], Printed]


class Spelling(dict):
    """Rules by sympy class name (see the module docstring)."""

    def only(self, *names: str) -> Spelling:
        """The rules for these classes alone: a target that cannot spell the others."""
        return Spelling({name: self[name] for name in names})

    def with_rules(self, rules: Mapping[str, Rule]) -> Spelling:
        return Spelling({**self, **rules})


_PRINTED_LIMIT = 4096


class ExpressionPrinter:
    """Prints with one spelling. `symbol(s)` spells a symbol, `call(name)` a function's name (so
    generated code can bind `math.floor` or a shadowed builtin to a safe name); `unknown(expr,
    printer)` is asked for classes the spelling lacks (it raises, or prints a fallback).
    `ordered`: terms and factors in sympy's reading order (`2*s1 + s0 + 1`) rather than its
    storage order (`1 + s0 + 2*s1`); ordering costs ~20x the printing, which kernels' indices,
    printed by the thousand, do without."""

    def __init__(self, spelling: Spelling, symbol: Callable[[sympy.Symbol], str] = lambda s: s.name,
                 call: Callable[[str], str] = lambda name: name,
                 unknown: Callable[[sympy.Basic, ExpressionPrinter], Printed] | None = None,
                 ordered: bool = True):
        self.spelling, self.symbol, self.call = spelling, symbol, call
        self.unknown = unknown or _no_rule
        self.ordered = ordered
        # Each subexpression printed once: padded sizes repeat the same nested `%` and `//`
        # terms many times in one guard (DaViT's stage sizes), and ordering each sum's terms
        # again was a sixth of a capture at a new image size. Bounded: inductor's printers
        # live as long as the process.
        self._printed: dict[sympy.Basic, Printed] = {}

    def terms(self, expr: sympy.Add):
        return expr.as_ordered_terms() if self.ordered else expr.args

    def factors(self, expr: sympy.Mul):
        return expr.as_ordered_factors() if self.ordered else expr.args

    def __call__(self, expr: sympy.Basic) -> Printed:
        printed = self._printed.get(expr)
        if printed is None:
            if len(self._printed) >= _PRINTED_LIMIT:
                self._printed.clear()
            printed = self._printed[expr] = self._print(expr)
        return printed

    def _print(self, expr: sympy.Basic) -> Printed:
        for cls in type(expr).__mro__:
            rule = self.spelling.get(cls.__name__)
            if rule is not None:
                return rule(expr, self)
        return self.unknown(expr, self)

    def text(self, expr, at_least: int = CONDITIONAL) -> str:
        """`expr` as one expression, parenthesized unless it binds at least as tight as `at_least`."""
        return self.operand(sympy.sympify(expr), at_least)

    def operand(self, expr: sympy.Basic, at_least: int) -> str:
        text, precedence = self(expr)
        return text if precedence >= at_least else f"({text})"

    def function(self, name: str, args) -> Printed:
        return f"{self.call(name)}({', '.join(self(a)[0] for a in args)})", ATOM


def _no_rule(expr, printer):
    raise NotImplementedError(f"no printing rule for sympy {type(expr).__name__} ({expr})")


def _symbol(expr, p):
    return p.symbol(expr), ATOM


def _integer(expr, p):
    value = int(expr)
    return str(value), ATOM if value >= 0 else UNARY


def _rational(expr, p):
    return f"{expr.p}/{expr.q}", MUL


def _float(expr, p):
    text = repr(float(expr))
    return text, UNARY if text.startswith("-") else ATOM  # `(-2.0)**n` is not `-2.0**n`


def _infinity(expr, p):
    return f"{p.call('float')}('inf')", ATOM


def _negative_infinity(expr, p):
    return f"-{p.call('float')}('inf')", UNARY


def _add(expr, p):
    terms = p.terms(expr)
    text = p.operand(terms[0], ADD)
    for term in terms[1:]:
        coefficient, rest = term.as_coeff_Mul()
        if coefficient.is_negative:
            # `a - 2*b` for `a + (-2)*b` (built directly: sympy's negation costs more than printing).
            negated = -coefficient if rest == 1 else rest if coefficient == -1 else sympy.Mul._from_args(
                (-coefficient, *sympy.Mul.make_args(rest)))
            text += f" - {p.operand(negated, MUL)}"
        else:
            text += f" + {p.operand(term, ADD)}"
    return text, ADD


def _mul(expr, p):
    coefficient, rest = expr.as_coeff_Mul()
    if coefficient.is_Rational and not coefficient.is_Integer:
        # `x/3`, not `1/3*x`: one division of exact integers rounds once, so `floor(x/3)` is
        # exact where `floor((1/3)*x)` can fall one short. A spelling without rationals (C's
        # `/` truncates) refuses the coefficient here.
        p(coefficient)
        numerator = _mul(sympy.Mul(coefficient.p, rest, evaluate=False), p)
        return f"{numerator[0] if numerator[1] >= MUL else f'({numerator[0]})'}/{coefficient.q}", MUL
    if coefficient == -1:
        return f"-{p.operand(rest, UNARY)}", UNARY
    factors = list(p.factors(rest)) if isinstance(rest, sympy.Mul) else [rest]
    if coefficient != 1:
        factors.insert(0, coefficient)
    # Left-associative: every factor after the first needs more than MUL to stay grouped.
    text = p.operand(factors[0], MUL)
    for factor in factors[1:]:
        text += f"*{p.operand(factor, MUL + 1)}"
    return text, MUL


def _pow(expr, p):
    base, exponent = expr.args
    # `**` binds tighter than unary minus on its left and is right-associative.
    return f"{p.operand(base, POWER + 1)}**{p.operand(exponent, UNARY)}", POWER


def binary(operator: str, precedence: int) -> Rule:
    """A left-associative infix operator (`//`, `%`, C's `/`)."""

    def rule(expr, p):
        a, b = expr.args
        return f"{p.operand(a, precedence)} {operator} {p.operand(b, precedence + 1)}", precedence

    return rule


def call(name: str) -> Rule:
    """A function call on all the arguments: `max(a, b, c)`."""
    return lambda expr, p: p.function(name, expr.args)


def folded(name: str) -> Rule:
    """A two-argument function applied left to right over the arguments: `max(max(a, b), c)`."""

    def rule(expr, p):
        text = p(expr.args[0])[0]
        for arg in expr.args[1:]:
            text = f"{p.call(name)}({text}, {p(arg)[0]})"
        return text, ATOM

    return rule


def _relation(operator: str) -> Rule:
    def rule(expr, p):
        # Comparisons chain in Python (`a < b < c`), so both sides must bind tighter.
        return f"{p.operand(expr.lhs, COMPARE + 1)} {operator} {p.operand(expr.rhs, COMPARE + 1)}", COMPARE

    return rule


def _equivalent(expr, p):
    # Equality of SymBools (sympy spells `a == b` on booleans as Equivalent); a chain of `==`
    # holds when all are equal, as Equivalent does.
    return " == ".join(p.operand(a, COMPARE + 1) for a in expr.args), COMPARE


def _and(expr, p):
    return " and ".join(p.operand(a, AND + 1) for a in expr.args), AND


def _or(expr, p):
    return " or ".join(p.operand(a, OR + 1) for a in expr.args), OR


def _not(expr, p):
    return f"not {p.operand(expr.args[0], NOT)}", NOT


def _piecewise(expr, p):
    *branches, (otherwise, _) = expr.args
    text, precedence = p(otherwise)
    for value, condition in reversed(branches):
        text = f"{p.operand(value, OR)} if {p.operand(condition, OR)} else {text if precedence > CONDITIONAL else f'({text})'}"
        precedence = CONDITIONAL
    return text, precedence


def _if_then_else(expr, p):
    # sympy's ITE(c, a, b): a relation over a Piecewise folded into its branches,
    # `ITE(x >= 0, floor(x) >= 2, ceiling(x) >= 2)`.
    condition, then, otherwise = expr.args
    text, precedence = p(otherwise)
    text = text if precedence > CONDITIONAL else f"({text})"
    return f"{p.operand(then, OR)} if {p.operand(condition, OR)} else {text}", CONDITIONAL


PYTHON = Spelling({
    "Symbol": _symbol, "Integer": _integer, "Rational": _rational, "Float": _float,
    "Infinity": _infinity, "NegativeInfinity": _negative_infinity,
    "BooleanTrue": lambda expr, p: ("True", ATOM), "BooleanFalse": lambda expr, p: ("False", ATOM),
    "Add": _add, "Mul": _mul, "Pow": _pow,
    # functions.py's integer functions, by name like every rule.
    "FloorDiv": binary("//", MUL), "PythonMod": binary("%", MUL), "RoundToInt": call("round"),
    "TruncToInt": call("int"), "ToFloat": call("float"),
    # Float arithmetic in the program's order, each operator as Python applies it.
    "FloatAdd": binary("+", ADD), "FloatSub": binary("-", ADD), "FloatMul": binary("*", MUL),
    "FloatTrueDiv": binary("/", MUL), "FloatFloorDiv": binary("//", MUL), "FloatMod": binary("%", MUL),
    "FloatPow": _pow,
    "Equality": _relation("=="), "Unequality": _relation("!="), "StrictLessThan": _relation("<"),
    "LessThan": _relation("<="), "StrictGreaterThan": _relation(">"), "GreaterThan": _relation(">="),
    "Equivalent": _equivalent, "And": _and, "Or": _or, "Not": _not,
    "Max": call("max"), "Min": call("min"), "Abs": call("abs"),
    "floor": call("math.floor"), "ceiling": call("math.ceil"), "CopySign": call("math.copysign"),
    "Piecewise": _piecewise, "ITE": _if_then_else,
})
