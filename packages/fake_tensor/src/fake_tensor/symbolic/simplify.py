"""Simplifying shape expressions with what the ShapeEnv knows: replacements and ranges.

Three jobs:
- `simplify(expr, replacements, ranges)`: substitute known equalities (`s1 -> s0`,
  `s0 -> 8`), drop `Max`/`Min`/`%`/`//` that the ranges decide, and decide relations that
  the ranges imply (`Ne(s0, 1)` is `True` when `s0 >= 2`).
- `static_truth(condition, ranges)`: True/False when the ranges decide a condition, else None.
- `canonical_relation(rel)`: one spelling per integer relation, so that guards deduplicate
  and read the way a person writes them (`s1 <= 1024`, `s0 >= 2`, `Eq(s1, s0)`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import sympy

from fake_tensor.symbolic.functions import FloorDiv, PythonMod, factor_terms
from fake_tensor.symbolic.value_ranges import MemosPerRanges, ValueRange, bound

Ranges = Mapping[sympy.Symbol, ValueRange]


# --- deciding conditions --------------------------------------------------------------------

def _decide_by_difference(rel: sympy.Rel, ranges: Ranges, facts: Sequence[sympy.Basic] = ()) -> bool | None:
    test = _DIFFERENCE_TESTS[type(rel)]
    difference = rel.lhs - rel.rhs
    answer = test(bound(difference, ranges))
    if answer is None and isinstance(difference, sympy.Add):
        # Interval arithmetic forgets that terms share symbols: s1*(s0 - 1) + s1 - s0*s1 is 0
        # once expanded, and s0*s1 - s0 has range (-oo, oo) term by term but is
        # s0*(s1 - 1) >= 2 once the common factor is pulled out.
        expanded = sympy.expand(difference)
        for rewritten in (expanded, factor_terms(expanded)):
            if rewritten != difference:
                answer = test(bound(rewritten, ranges))
                if answer is not None:
                    break
    if answer is None and facts:
        narrowed = narrowed_by_facts(ranges, facts)
        answer = test(_bound_by_facts(difference, narrowed, facts))
    return answer


def narrowed_by_facts(ranges: Ranges, facts: Sequence[sympy.Basic]) -> Ranges:
    """`ranges` with each symbol of a linear fact bounded by the fact and the others' ranges:
    `u0 + u1 <= 10` with `u1 >= 1` gives `u0 <= 9`, which decides questions the fact's
    difference cannot reach (`x[u0::3]` has FloorDiv(12 - u0, 3) elements: never 0)."""
    narrowed = dict(ranges)
    for fact in facts:
        strict = isinstance(fact, (sympy.Lt, sympy.Gt)) and all(s.is_integer for s in fact.free_symbols)
        for e in _at_most_zero(fact):
            e = sympy.expand(e)
            for symbol in e.free_symbols:
                coefficient = e.coeff(symbol)
                if not coefficient.is_Number or coefficient == 0 or symbol not in narrowed:
                    continue
                rest = bound(sympy.expand(e - coefficient * symbol), narrowed).lower  # c*s <= -rest
                if rest in (-sympy.oo, sympy.oo) or not rest.is_number:
                    continue
                limit = (-rest - (1 if strict else 0)) / coefficient
                if symbol.is_integer:
                    limit = sympy.floor(limit) if coefficient > 0 else sympy.ceiling(limit)
                side = ValueRange.of(-sympy.oo, limit) if coefficient > 0 else ValueRange.of(limit, sympy.oo)
                tighter = narrowed[symbol].intersect(side)
                if tighter.lower <= tighter.upper:
                    narrowed[symbol] = tighter
    return narrowed


def _bound_by_facts(difference: sympy.Expr, ranges: Ranges, facts: Sequence[sympy.Basic]) -> ValueRange:
    """The range of `difference`, narrowed by relations known to hold (torch._check's facts
    over several symbols, which ranges cannot hold): from `e <= 0`, `d = e + (d - e)` is at
    most the upper bound of `d - e`, which is a number where the symbols cancel (`u0 - s0`
    against `u0 + 4 <= s0`: at most -4)."""
    known = bound(difference, ranges)
    lower, upper = known.lower, known.upper
    for fact in facts:
        for e in _at_most_zero(fact):
            upper = min(upper, bound(sympy.expand(difference - e), ranges).upper)
            lower = max(lower, -bound(sympy.expand(-difference - e), ranges).upper)
    return ValueRange.of(lower, upper) if lower <= upper else known


def _at_most_zero(fact: sympy.Basic) -> list[sympy.Expr]:
    """The expressions e with `e <= 0` that a relation states (`< 0` is tighter and implies it;
    an equality states it both ways); none for anything else."""
    if isinstance(fact, (sympy.Le, sympy.Lt, sympy.Eq)):
        e = fact.lhs - fact.rhs
    elif isinstance(fact, (sympy.Ge, sympy.Gt)):
        e = fact.rhs - fact.lhs
    else:
        return []
    return [e, -e] if isinstance(fact, sympy.Eq) else [e]


def _eq_test(r: ValueRange) -> bool | None:
    if r.lower == r.upper == 0:
        return True
    if r.lower > 0 or r.upper < 0:
        return False
    return None


def _negated(test: Callable[[ValueRange], bool | None]) -> Callable[[ValueRange], bool | None]:
    def negated(r: ValueRange) -> bool | None:
        answer = test(r)
        return None if answer is None else not answer

    return negated


def _le_test(r: ValueRange) -> bool | None:
    if r.upper <= 0:
        return True
    if r.lower > 0:
        return False
    return None


def _lt_test(r: ValueRange) -> bool | None:
    if r.upper < 0:
        return True
    if r.lower >= 0:
        return False
    return None


# The test applied to the range of `lhs - rhs`.
_DIFFERENCE_TESTS: dict[type, Callable[[ValueRange], bool | None]] = {
    sympy.Eq: _eq_test,
    sympy.Ne: _negated(_eq_test),
    sympy.Le: _le_test,
    sympy.Lt: _lt_test,
    sympy.Ge: _negated(_lt_test),
    sympy.Gt: _negated(_le_test),
}


def static_truth(condition: sympy.Basic, ranges: Ranges, facts: Sequence[sympy.Basic] = ()) -> bool | None:
    """True/False if `condition` holds/fails for every value in the ranges (and wherever the
    relations `facts` hold); None if unknown."""
    if condition is sympy.true:
        return True
    if condition is sympy.false:
        return False
    if isinstance(condition, sympy.Rel):
        return _decide_by_difference(condition, ranges, facts)
    if isinstance(condition, sympy.Not):
        answer = static_truth(condition.args[0], ranges, facts)
        return None if answer is None else not answer
    if isinstance(condition, (sympy.And, sympy.Or)):
        answers = [static_truth(arg, ranges, facts) for arg in condition.args]
        deciding = isinstance(condition, sympy.Or)  # one True decides Or; one False decides And
        if deciding in answers:
            return deciding
        if all(a is not None for a in answers):
            return not deciding
    return None


# --- range-aware rewrites of integer functions ----------------------------------------------

def _rewrite_max_min(expr: sympy.Expr, ranges: Ranges) -> sympy.Expr:
    # Max(a, b) is a when a's range lies entirely above b's (and symmetrically for Min).
    keep_larger = isinstance(expr, sympy.Max)
    args = list(expr.args)
    for a in args:
        ra = bound(a, ranges)
        dominates = all(
            (ra.lower >= bound(b, ranges).upper) if keep_larger else (ra.upper <= bound(b, ranges).lower)
            for b in args
            if b is not a
        )
        if dominates:
            return a
    return expr


def _smaller_than_divisor(a: sympy.Expr, b: sympy.Expr, ranges: Ranges) -> bool:
    """0 <= a < b for all values in the ranges."""
    return bound(a, ranges).lower >= 0 and static_truth(sympy.Lt(a, b), ranges) is True


def _rewrite_mod(expr: sympy.Expr, ranges: Ranges) -> sympy.Expr:
    a, b = expr.args
    return a if _smaller_than_divisor(a, b, ranges) else expr


def _rewrite_floordiv(expr: sympy.Expr, ranges: Ranges) -> sympy.Expr:
    a, b = expr.args
    return sympy.Integer(0) if _smaller_than_divisor(a, b, ranges) else expr


_RANGE_REWRITES: dict[type, Callable[[sympy.Expr, Ranges], sympy.Expr]] = {
    sympy.Max: _rewrite_max_min,
    sympy.Min: _rewrite_max_min,
    PythonMod: _rewrite_mod,
    FloorDiv: _rewrite_floordiv,
}


def _rewrite_with_ranges(expr: sympy.Basic, ranges: Ranges, memo: dict[sympy.Basic, sympy.Basic]) -> sympy.Basic:
    if not expr.args or expr.is_Atom:
        return expr
    rewritten = memo.get(expr)
    if rewritten is None:
        rewritten = memo[expr] = _rewrite_node(expr, ranges, memo)
    return rewritten


def _rewrite_node(expr: sympy.Basic, ranges: Ranges, memo: dict[sympy.Basic, sympy.Basic]) -> sympy.Basic:
    args = tuple(_rewrite_with_ranges(arg, ranges, memo) for arg in expr.args)
    if args != expr.args:
        # Max/Min are decided by the ranges below; sympy's evaluation costs seconds on nested
        # sizes (see sym_node._extremum).
        expr = expr.func(*args, evaluate=False) if isinstance(expr, (sympy.Max, sympy.Min)) else expr.func(*args)
    known = ranges.get(expr)
    if known is not None and known.is_singleton():
        # A guard pinned this expression (`Ne(PythonMod(s0, 2), 1)`: s0 is even, from a
        # model's `if height % 2 == 1: pad`): its value, or every later size repeats it
        # (Swin pads at each stage, and the sizes nest it four deep).
        return known.lower
    rewrite = _RANGE_REWRITES.get(type(expr))
    return rewrite(expr, ranges) if rewrite else expr


# Range rewrites already done, per distinct `ranges` (the answer depends only on the
# expression and the ranges). Padded sizes nest `%` and `//` at every stage, and the same
# ones recur in each layer's views and guards: davit's window partition at a new image size
# decided the same 26 `0 <= a < b` questions 4,646 times, each expanding and factoring the
# nested terms (165 s for the model). The last few range sets are kept, each bounded.
_memo_for = MemosPerRanges(range_sets=16, entries=4096)


def simplify(expr: sympy.Basic, replacements: Mapping[sympy.Symbol, sympy.Expr], ranges: Ranges) -> sympy.Basic:
    if replacements:
        expr = expr.xreplace(replacements)
    if expr.args and not expr.is_Atom:
        expr = _rewrite_with_ranges(expr, ranges, _memo_for(ranges))
    # (sympy.Symbol is a Boolean too, so test for the condition classes themselves.)
    if isinstance(expr, (sympy.Rel, sympy.logic.boolalg.BooleanFunction)):
        answer = static_truth(expr, ranges)
        if answer is not None:
            return sympy.true if answer else sympy.false
    return expr


# --- one spelling per relation --------------------------------------------------------------

def _split_terms(difference: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """`difference` as `left - right` with only positive coefficients on each side."""
    left, right = [], []
    for term in sympy.Add.make_args(difference):
        (right if term.could_extract_minus_sign() else left).append(term)
    return sympy.Add(*left), -sympy.Add(*right)


def canonical_relation(rel: sympy.Basic) -> sympy.Basic:
    """An equivalent relation in one standard form (integer relations only; others unchanged).

    `a < b` becomes `a + 1 <= b`; `>`/`>=` flip into `<=` unless only one side has symbols;
    a relation with one non-constant term is solved for it (`2*s0 <= 2048` -> `s0 <= 1024`,
    `(s0 - 1)//2 + 1 >= 0` -> `(s0 - 1)//2 >= -1`).
    """
    if not isinstance(rel, sympy.Rel):
        return rel
    difference = rel.lhs - rel.rhs
    if not difference.is_integer:
        return rel
    kind = type(rel)
    # Normal forms: Eq(d, 0), Ne(d, 0), d <= 0.
    if kind is sympy.Lt:
        difference, kind = difference + 1, sympy.Le
    elif kind is sympy.Gt:
        difference, kind = 1 - difference, sympy.Le
    elif kind is sympy.Ge:
        difference, kind = -difference, sympy.Le
    if kind in (sympy.Eq, sympy.Ne) and difference.could_extract_minus_sign():
        difference = -difference

    constant, rest = difference.as_coeff_Add()
    if not isinstance(rest, sympy.Add):
        # One non-constant term k*E: solve for E, so bounds on the same E deduplicate.
        k, term = rest.as_coeff_Mul()
        value = -constant / k
        if kind is sympy.Le:
            return sympy.Le(term, sympy.floor(value)) if k > 0 else sympy.Ge(term, sympy.ceiling(value))
        if not value.is_Integer:
            return sympy.false if kind is sympy.Eq else sympy.true
        return kind(term, value)

    left, right = _split_terms(difference)
    if kind is sympy.Le and left.is_number:
        return sympy.Ge(right, left)
    return kind(left, right)
