"""Python ints and floats whose value changes between calls: specialized on the first call,
symbolic graph inputs (SymInt / SymFloat) after the first recompile, as with torch.compile's
automatic dynamic scalars; `dynamic=False` always specializes, `dynamic=True` never does."""

import math
import random

import pytest
import torch

from helpers import assert_same, cache_of, captures, compile_eager


def scale_and_shift(x, n, s):
    return x * n + s


def branch_on_int(x, n):
    if n > 2:
        return x + n
    return x - n


def int_and_float_of_int(x, n):
    return x * float(n) + int(n * 2.5), n * 3, n // 2


def returns_arithmetic(x, s):
    return x.sin() * s, s * 2.0, s - 1


def loop_over_range(x, n):
    for i in range(n):
        x = x + i
    return x


def size_from_int(x, n):
    return x.repeat(n) + torch.ones(n * x.shape[0])


def _graphs(compiled) -> int:
    return len(cache_of(compiled).compilation.graphs)


def _run(compiled, fn, *args):
    expected = fn(*args)
    actual = compiled(*args)
    assert_same(actual, expected)


def _numbers(kind):
    values = [random.randint(3, 50) for _ in range(6)] if kind is int else [random.uniform(-5, 5) for _ in range(6)]
    return values


@pytest.mark.parametrize("kind", [int, float])
def test_changing_number_recompiles_once_then_stays_in_the_graph(kind):
    compiled = compile_eager(scale_and_shift, fullgraph=True)
    for i, n in enumerate(_numbers(kind)):
        x = torch.randn(4 if i < 4 else 7)
        _run(compiled, scale_and_shift, x, n, kind(n) / 3)
    # The first call specializes; the second makes n and s symbolic; the new size of x at the
    # fifth call makes its dimension symbolic.
    assert captures(compiled) == 3
    assert _graphs(compiled) == 3
    graph = cache_of(compiled).entries[1].graph_module.graph
    placeholders = [n.meta["example_value"] for n in graph.find_nodes(op="placeholder")]
    symbolic = {torch.SymInt: int, torch.SymFloat: float}
    assert sorted(symbolic[type(p)].__name__ for p in placeholders if type(p) in symbolic) == sorted([kind.__name__, "float"])


def test_branch_on_a_symbolic_int_is_guarded():
    compiled = compile_eager(branch_on_int, fullgraph=True)
    for n in (5, 6, 7, 1, 0, -3, 9):
        _run(compiled, branch_on_int, torch.randn(3), n)
    # Specialized to 5, then symbolic with n > 2, then symbolic with n <= 2.
    assert captures(compiled) == 3


def branch_on_truth(x, n):
    # `if n:` of a changing number: bool() of a symbolic one raised a TypeError (its
    # __bool__ gave the number itself), an internal error of every such program
    return x * (2 if n else 3) + (1 if not n else 0)


ZERO = 0


def format_a_product_with_zero(x, s):
    # sympy folds s * 0 to 0; Python's keeps the sign of s (the capture fuzzer found it)
    return x * 2, f"{s * ZERO:.2f}"


def format_a_sum_with_zero(x, s):
    # Python's -0.0 * 0.1 + 0 * 0.2 is +0.0; sympy drops the `+ 0`, and 0.1*s is -0.0
    return x * 2, f"{s * 0.1 + ZERO * 0.2:.2f}"


@pytest.mark.parametrize("fn", [format_a_product_with_zero, format_a_sum_with_zero])
def test_a_float_folded_to_zero_keeps_pythons_sign(fn):
    compiled = compile_eager(fn, fullgraph=True)
    for rows, s in ((3, 1.5), (3, -0.5), (4, 0.0), (4, -0.0), (4, 2.0)):
        _run(compiled, fn, torch.randn(rows), s)


@pytest.mark.parametrize("numbers", [(5, 6, 0, 7, 0, -3), (0.5, 1.5, 0.0, -2.0, -0.0, float("nan"))], ids=["int", "float"])
def test_the_truth_of_a_changing_number_is_guarded(numbers):
    compiled = compile_eager(branch_on_truth, fullgraph=True)
    for n in numbers:
        _run(compiled, branch_on_truth, torch.randn(3), n)


def identities_of_finite_reals(x, a):
    # sympy takes a symbol for a finite real: `a == a` holds and `a - a` is 0, without a guard
    return (x * 2 if a == a else x * 3), a - a, (1 if a * 0 == 0 else 2)


def test_a_nan_or_infinite_float_does_not_reach_an_entry_made_for_finite_ones():
    """Once `a` is symbolic, the entry's arithmetic assumes it finite: a NaN took the `a == a`
    branch and returned x * 2 where eager returns x * 3. Symbolic floats are guarded finite
    (guards' FiniteFloat); NaN and the infinities get an entry with the value as a constant."""
    compiled = compile_eager(identities_of_finite_reals, fullgraph=True)
    for a in (1.5, 2.5, float("nan"), float("inf"), -float("inf"), 0.25, float("nan")):
        _run(compiled, identities_of_finite_reals, torch.randn(3), a)


@pytest.mark.parametrize(
    "fn, make_number",
    [
        (int_and_float_of_int, lambda: random.randint(-20, 20)),
        (returns_arithmetic, lambda: random.uniform(-3, 3)),
        (size_from_int, lambda: random.randint(2, 6)),
    ],
    ids=["int() and float()", "returned arithmetic", "sizes from an int"],
)
def test_symbolic_numbers_compute_like_python(fn, make_number):
    compiled = compile_eager(fn, fullgraph=True)
    for _ in range(6):
        _run(compiled, fn, torch.randn(3), make_number())
    assert captures(compiled) <= 3


def test_range_of_a_changing_int_specializes_correctly():
    compiled = compile_eager(loop_over_range, fullgraph=True)
    for n in (2, 3, 3, 4):
        _run(compiled, loop_over_range, torch.randn(3), n)
    assert captures(compiled) == 3


def test_dynamic_false_specializes_every_value():
    compiled = compile_eager(scale_and_shift, fullgraph=True, dynamic=False)
    for n in (2, 3, 4, 3):
        _run(compiled, scale_and_shift, torch.randn(4), n, 0.5)
    assert captures(compiled) == 3


def test_dynamic_true_makes_numbers_symbolic_from_the_first_call():
    compiled = compile_eager(scale_and_shift, fullgraph=True, dynamic=True)
    for n in (2, 3, -4, 0):
        _run(compiled, scale_and_shift, torch.randn(4), n, random.uniform(-1, 1))
    assert captures(compiled) == 1


def test_changing_number_with_a_graph_break_still_matches(capsys):
    def fn(x, n):
        y = x * n
        print("between graphs")
        return y + n

    compiled = compile_eager(fn)
    for n in (2, 3, 4, 5):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x, n), fn(x, n))
    assert captures(compiled) == 2


def python_functions_of_numbers(x, n, s):
    return x * math.floor(s) + math.sqrt(n) + round(s, 1), str(n), f"{s:.2f}", abs(-n), min(n, 4)


def test_python_functions_of_symbolic_numbers_specialize_correctly():
    """math.*, round(), str() and formatting of a symbolic number give the result for one
    value, guarded to stay that value (as torch.compile specializes there)."""
    compiled = compile_eager(python_functions_of_numbers, fullgraph=True)
    for n, s in ((2, 1.5), (3, 2.25), (3, 2.25), (7, -4.75)):
        _run(compiled, python_functions_of_numbers, torch.randn(3), n, s)
    assert captures(compiled) <= 4


def test_nan_does_not_pass_a_guard_on_a_symbolic_float():
    def sign(x, s):
        if s > 0:
            return x + 1
        return x - 1

    compiled = compile_eager(sign, fullgraph=True)
    for s in (1.0, 2.0, 3.0, float("nan"), -1.0):
        _run(compiled, sign, torch.zeros(2), s)


def test_a_float_specialized_to_zero_keeps_its_sign():
    """-0.0 == 0.0, so a guard `s == 0.0` passes for -0.0, yet formatting and copysign tell
    them apart: constant and symbolic floats are guarded on the sign of a zero too."""

    def signed(x, s):
        return x * math.copysign(1.0, s), f"{s:+.1f}"

    for values in ((0.0, -0.0, 0.0), (1.5, -0.5, 0.0, -0.0, 0.0, -0.0)):
        compiled = compile_eager(signed, fullgraph=True)
        for s in values:
            _run(compiled, signed, torch.ones(2), s)


def test_float_arithmetic_specialized_to_its_value_is_guarded_by_the_inputs():
    """`(s + 0.1) * 3.0` formatted is a constant of the graph, guarded. sympy rearranges it
    as `3.0*s + 0.3`, which rounds otherwise than Python: a guard on that expression failed at
    the very values it was captured for (capture again on every call), so the guard pins `s`."""

    def formatted(x, s):
        scaled = (s + 0.1) * 3.0
        return x * 2, f"{scaled:.17g}", f"{s * 0.1 + s * 0.2:.17g}"

    compiled = compile_eager(formatted, fullgraph=True)
    for s in (-0.5, 0.7, -0.5, 1.3, 0.7, 0.1):
        _run(compiled, formatted, torch.randn(2), s)
    assert captures(compiled) <= 6


@pytest.mark.parametrize("branch", ["truth", "negation", "equality"])
def test_a_float_a_branch_found_zero_keeps_its_sign(branch):
    """`if s:` at s = 0.0 guards s == 0, which -0.0 passes too: the zero it is then
    specialized to (formatting, copysign) is guarded on its sign as well, whichever of the
    two zeros comes first. (Found by the capture fuzzer: `x * (2 if s else 3)` beside
    `f"{s:.2f}"` printed 0.00 for -0.0.)"""
    test = {"truth": lambda s: bool(s), "negation": lambda s: not s, "equality": lambda s: s == 0}[branch]

    def signed(x, s):
        return x * (2 if test(s) else 3), f"{s}", math.copysign(1.0, s)

    for values in ((1.5, -0.5, 0.0, -0.0, 0.0), (1.5, -0.5, -0.0, 0.0, -0.0)):
        compiled = compile_eager(signed, fullgraph=True)
        for s in values:
            _run(compiled, signed, torch.ones(2), s)


def test_an_infinite_float_after_finite_ones_stays_a_constant():
    # `ord=inf` of a norm after `ord=2.0, 3.0` (op_db's norm.inf): a symbol with hint inf
    # made the norm's own check `ord == inf` an internal error.
    def norm(x, p):
        return torch.linalg.vector_norm(x, ord=p) * 2

    compiled = compile_eager(norm, fullgraph=True)
    for p in (2.0, 3.0, math.inf, 4.0, -math.inf, math.inf):
        _run(compiled, norm, torch.randn(5), p)


def test_augmented_assignment_of_a_symbolic_int_leaves_the_original_unchanged():
    # `count = n; count += 1` must not change `n`: FX prints operator.iadd as `l_n += 1`.
    def fn(x, n):
        count = n
        count += 1
        count *= 2
        return x + n, count

    compiled = compile_eager(fn)
    for n in (1, 2, 3, 7):  # symbolic from the second value on
        x = torch.randn(3)
        actual, expected = compiled(x, n), fn(x, n)
        torch.testing.assert_close(actual[0], expected[0])
        assert actual[1] == expected[1]


def view_as_shape(x, shape):
    return x.view(shape) * shape[1]


def test_changing_int_inside_a_tuple_argument_becomes_symbolic():
    """An argument holding a tuple of ints (the `output_shape = (-1, seq_len, hidden)` a
    model's resume function receives after a graph break): once one item changes, that item
    is a symbolic input and a third value reuses the entry; the other items stay pinned."""
    compiled = compile_eager(view_as_shape, fullgraph=True)
    for n in (4, 6, 3, 5):
        _run(compiled, view_as_shape, torch.randn(2 * n), (-1, n))
    assert captures(compiled) == 2
    _run(compiled, view_as_shape, torch.randn(12), (2, 6))  # the pinned -1 changed
    assert captures(compiled) == 3


def test_tuple_item_changing_under_dynamic_true_becomes_symbolic_after_one_recompile():
    compiled = compile_eager(view_as_shape, fullgraph=True, dynamic=True)
    for n in (4, 6, 3, 5):
        _run(compiled, view_as_shape, torch.randn(2 * n), (-1, n))
    assert captures(compiled) == 2


def resume_with_a_shape(x):
    shape = (-1,) + x.view(2, -1).shape[1:]  # a torch.Size, as GPT-2's output_shape
    print("between graphs")
    return x.view(shape) * shape[1]


def test_resume_function_receiving_a_tuple_of_sizes_recompiles_once(capsys):
    """The resume function gets `shape` as an argument: its sizes become symbolic after
    the first change, not pinned per length."""
    compiled = compile_eager(resume_with_a_shape)
    for n in (4, 6, 3, 5):
        x = torch.randn(2 * n)
        torch.testing.assert_close(compiled(x), resume_with_a_shape(x))
    (resume,) = cache_of(compiled).compilation._resumes.values()
    assert captures(compiled) == 2 and len(resume.entries) == 2
