"""SymInt/SymFloat/SymBool arithmetic over our SymNode follows Python's semantics.

For random example sizes, each operation's hint equals the Python result, and its sympy
expression, evaluated at other random sizes (>= 2, the range of a dynamic size), equals the
Python result there too: the expression is the operation, not just its value at the hints.
"""

from __future__ import annotations

import math
import operator

import pytest
import sympy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fake_tensor.symbolic import ShapeEnv, print_python

sizes = st.integers(min_value=2, max_value=200)

OPERATIONS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "truediv": operator.truediv,
    "min": lambda a, b: torch.sym_min(a, b) if isinstance(a, torch.SymInt) else min(a, b),
    "max": lambda a, b: torch.sym_max(a, b) if isinstance(a, torch.SymInt) else max(a, b),
    "pow_small": lambda a, b: a ** (b % 3),
    "add_constant": lambda a, b: a + 7,
    "rsub_constant": lambda a, b: 100 - a,
    "floordiv_constant": lambda a, b: (a + b) // 4,
    "rfloordiv_constant": lambda a, b: 1000 // a,
    "mod_constant": lambda a, b: (a * b) % 6,
    "ceil_div": lambda a, b: -(-a // b),
    "float_scale": lambda a, b: a * 0.5 + b,
    "sym_float_div": lambda a, b: (torch.sym_float(a) if isinstance(a, torch.SymInt) else float(a)) / 3,
    "inverse_sqrt": lambda a, b: a**-0.5,
    "round": lambda a, b: round(a / b),
    "floor_ceil": lambda a, b: math.floor(a / 3) + math.ceil(b / 4),
    "trunc": lambda a, b: math.trunc((a - b) / 3),
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "and": lambda a, b: (a > b) & (a < 2 * b),
    "or": lambda a, b: (a > b) | (b > 100),
    "bool_eq": lambda a, b: (a > b) == (b > 10),
    "not": lambda a, b: torch.sym_not(a > b) if isinstance(a, torch.SymInt) else not (a > b),
    "neg": lambda a, b: -a,
    "pos": lambda a, b: +a + +(b / 2),  # unary plus asked the node for `pos`, which it lacked
    "nested": lambda a, b: (a * b - a) // (b + 1) + (a % b) * 3,
}


def two_symbols(a: int, b: int):
    env = ShapeEnv(duck_shape=False)
    sa, _, _ = env.symbolic_sizes_strides(torch.empty(a), [0], "a")
    sb, _, _ = env.symbolic_sizes_strides(torch.empty(b), [0], "b")
    return env, sa[0], sb[0]


def value_at(result, values: dict):
    """A SymInt/SymFloat/SymBool's expression at other symbol values, as a Python value."""
    if not isinstance(result, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return result
    expr = result.node.expr.xreplace(values)
    if isinstance(result, torch.SymBool):
        return bool(expr)
    return int(expr) if isinstance(result, torch.SymInt) else float(expr)


def same(x, y) -> bool:
    if isinstance(x, float) or isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-12)
    return x == y and type(x) is type(y)


@pytest.mark.parametrize("name", OPERATIONS)
@settings(max_examples=10, deadline=None)
@given(a=sizes, b=sizes, a2=sizes, b2=sizes)
def test_operation_matches_python_at_hints_and_elsewhere(name, a, b, a2, b2):
    fn = OPERATIONS[name]
    env, sa, sb = two_symbols(a, b)
    result = fn(sa, sb)
    hint = env.size_hint(result)
    assert same(hint, fn(a, b))
    values = {sa.node.expr: a2, sb.node.expr: b2}
    assert same(value_at(result, values), fn(a2, b2))


@pytest.mark.parametrize("name", OPERATIONS)
def test_operation_records_no_guard(name):
    env, sa, sb = two_symbols(5, 7)
    OPERATIONS[name](sa, sb)
    assert env.guards == []


def test_result_without_symbols_is_a_python_int():
    env, sa, sb = two_symbols(5, 7)
    zero = sa - sa
    assert type(zero) is int and zero == 0
    assert type(sa * 0) is int


@settings(max_examples=50, deadline=None)
@given(a=sizes, b=sizes, a2=sizes, b2=sizes, name=st.sampled_from(sorted(OPERATIONS)))
def test_printed_python_evaluates_like_the_expression(a, b, a2, b2, name):
    env, sa, sb = two_symbols(a, b)
    result = OPERATIONS[name](sa, sb)
    if not isinstance(result, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return
    names = {sa.node.expr: "x", sb.node.expr: "y"}
    source = print_python(result.node.expr, names)
    printed = eval(source, {"math": math}, {"x": a2, "y": b2})
    expected = value_at(result, {sa.node.expr: a2, sb.node.expr: b2})
    assert same(type(expected)(printed), expected)


def test_hot_queries_read_attributes():
    env, sa, _ = two_symbols(5, 7)
    node = sa.node
    assert node.is_int() and not node.is_float() and not node.is_bool()
    assert not node.is_constant() and node.maybe_as_int() is None
    assert node.wrap_int(3).maybe_as_int() == 3 and node.wrap_int(3).is_constant()
    assert isinstance(node.expr, sympy.Symbol)


@settings(max_examples=20, deadline=None)
@given(a=sizes, a2=sizes, k=st.integers(1, 5))
def test_shift_by_a_constant_stays_symbolic(a, a2, k):
    env, sa, _ = two_symbols(a, 3)
    for fn in (lambda v: v << k, lambda v: v >> k, lambda v: (-v) >> k):
        result = fn(sa)
        assert isinstance(result, torch.SymInt) and same(env.size_hint(result), fn(a))
        assert same(value_at(result, {sa.node.expr: a2}), fn(a2))
    assert env.guards == []


@pytest.mark.parametrize("fn", [operator.and_, operator.or_, operator.xor, lambda a, b: b << a])
def test_bit_operations_on_a_symbol_specialize_with_a_guard(fn):
    env, sa, sb = two_symbols(5, 12)
    result = fn(sa, sb)
    assert result == fn(5, 12)
    assert env.guards  # the operands' values were guarded


def test_negative_shift_count_is_pythons_error():
    env, sa, _ = two_symbols(5, 7)
    with pytest.raises(ValueError, match="negative shift count"):
        sa << -sa


def test_unary_result_a_specialization_made_a_number_divides_by_a_float():
    # torch.signal.windows.gaussian computes `-(M) / 2.0` after a guard fixed M: the negation
    # comes back as a SymInt whose expression is a number, and SymInt.__truediv__ calls
    # sym_float on it, which must stay a SymFloat.
    env, sa, sb = two_symbols(5, 7)
    assert bool(sa == 5)
    assert env.replacements
    negated = -sa
    assert negated / 2.0 == -2.5
    assert (-sb) / 2.0 == -3.5


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_a_float_specialized_to_a_zero_is_guarded_on_its_sign_too(zero):
    # -0.0 == 0.0, so `Eq(s, 0.0)` alone would let the other zero reuse `f"{s}"`'s answer.
    env = ShapeEnv()
    s = env.scalar(zero, "s")
    assert str(float(s)) == str(zero)
    guards = " and ".join(env.guards_as_python(lambda *place: "s"))
    assert eval(guards, {"math": math, "s": zero}), guards
    assert not eval(guards, {"math": math, "s": -zero}), guards


@pytest.mark.parametrize("value", [0, 3, -2, 0.0, -0.0, 1.5, float("nan")])
def test_a_numbers_truth_is_whether_it_is_nonzero_guarded_so(value):
    # `if s:` of a changing number: bool() gave the number itself (a TypeError from __bool__).
    env = ShapeEnv()
    s = env.scalar(value, "s")
    assert bool(s) is bool(value)
    guards = " and ".join(env.guards_as_python(lambda *place: "s"))
    for other in (0, 7, -0.5, 0.0):
        if not isinstance(value, float) or isinstance(other, float):
            assert eval(guards, {"math": math, "s": other}) == (bool(other) == bool(value)), (guards, other)


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_a_product_folded_to_zero_guards_the_sign_of_its_factor(zero):
    # sympy folds `s * 0` to 0; Python's -0.0 * 0 is -0.0 (f"{x}" shows it): the entry that
    # formatted one zero must not serve the other.
    env = ShapeEnv()
    s = env.scalar(zero, "s")
    product = s * 0
    assert str(float(product)) == str(zero * 0)
    guards = " and ".join(env.guards_as_python(lambda *place: "s"))
    assert eval(guards, {"math": math, "s": zero}), guards
    assert not eval(guards, {"math": math, "s": -zero}), guards


def test_float_arithmetic_specialized_guards_its_symbols_not_sympys_rearrangement():
    # sympy's algebra distributes `(s + 0.1) * 3.0` into `3.0*s + 0.3`: 2.3999999999999995 at
    # s = 0.7, where Python's value (and the specialization) is 2.4. The guard pins s: it holds
    # there and only there.
    env = ShapeEnv()
    s = env.scalar(0.7, "s")
    assert float((s + 0.1) * 3.0) == (0.7 + 0.1) * 3.0
    guards = " and ".join(env.guards_as_python(lambda *place: "s"))
    assert eval(guards, {"math": math, "s": 0.7}), guards
    assert not eval(guards, {"math": math, "s": 0.7000000000000001}), guards



@pytest.mark.parametrize("power, divisor, plus", [(20, 10**19, 0), (3, 6, 0), (1, 10, 0), (20, 10**19, 10**20)])
def test_floor_division_of_a_power_by_a_number_it_does_not_divide(power, divisor, plus):
    """`2**(k*s0) // d` where d has prime factors other than 2: sympy's assumptions call the
    quotient an integer, which made the floor division a true division (its expression a
    rational times the power, rebuilt as a float by aot_autograd)."""
    env, sa, _ = two_symbols(4, 3)
    result = (2 ** (power * sa) + plus) // divisor
    for hint in (4, 7):
        assert value_at(result, {sa.node.expr: hint}) == (2 ** (power * hint) + plus) // divisor
    assert sympy.fraction(sympy.together(result.node.expr))[1] == 1, result.node.expr


@pytest.mark.parametrize("compare", [operator.lt, operator.le, operator.gt, operator.ge])
@pytest.mark.parametrize("bound", [5.0, 4.5, 6.5])
def test_a_size_compared_with_a_float_narrows_its_range(compare, bound):
    """`max(n, 5.0)` asks `n < 5.0`: the guard it records is on an integer against a float,
    which the range bookkeeping took only for integer bounds (KeyError: StrictLessThan)."""
    env, sa, _ = two_symbols(4, 3)
    answer = bool(compare(sa, bound))
    assert answer == compare(4, bound)
    # What the guard taught must stay true at the example and decide the same again.
    assert bool(compare(sa, bound)) == answer
    guards = " and ".join(env.guards_as_python(lambda *place: "a"))
    for size in range(2, 10):
        assert eval(guards, {"math": math, "a": size}) == (compare(size, bound) == answer), (guards, size)


# Float arithmetic on a size, as the program writes it; sympy's algebra gives n/3 - 4/3, n and
# 1.0*n for them, which round otherwise at some lengths (n = 49, 61 and 3).
FLOAT_ARITHMETIC_OF_A_SIZE = {
    "thirds": lambda n: (n - 7) / 3 + 1,
    "sevenths": lambda n: n / 7 * 7,
    "scaled_and_back": lambda n: n * 0.7 / 0.7,
    "sum_of_fractions": lambda n: n / 10 + n / 5 - 0.3,
    "power": lambda n: (n * 0.5) ** 1.5 / n,
    "floor_division": lambda n: (n + 0.5) // 0.7 % 5.5,
}


@pytest.mark.parametrize("name", FLOAT_ARITHMETIC_OF_A_SIZE)
def test_float_arithmetic_on_a_size_computes_in_the_programs_order(name):
    """The expression, substituted or printed as guards print it, gives Python's value of the
    program's arithmetic at every length, bit for bit, and so does int() of it."""
    fn = FLOAT_ARITHMETIC_OF_A_SIZE[name]
    env, sa, _ = two_symbols(100, 3)
    result = fn(sa)
    symbol = sa.node.expr
    printed = eval(f"lambda n: {print_python(result.node.expr, {symbol: 'n'})}")  # noqa: S307
    truncated = eval(f"lambda n: {print_python(torch.sym_int(result).node.expr, {symbol: 'n'})}")  # noqa: S307
    for n in range(2, 1000):
        assert value_at(result, {symbol: n}) == printed(n) == fn(n), n
        assert truncated(n) == int(fn(n)), n
    assert env.guards == []


def test_a_comparison_of_float_arithmetic_is_not_decided_by_algebra():
    # sympy's algebra says n * 0.7 / 0.7 is n, so `>= n` always; at n = 3 the program's is
    # 2.9999999999999996. The question guards, and the guard computes as the program does.
    env, sa, _ = two_symbols(4, 3)
    assert bool(sa * 0.7 / 0.7 >= sa) == (4 * 0.7 / 0.7 >= 4)
    guards = " and ".join(env.guards_as_python(lambda *place: "a"))
    for size in range(2, 200):
        assert eval(guards, {"math": math, "a": size}) == (size * 0.7 / 0.7 >= size), (guards, size)
