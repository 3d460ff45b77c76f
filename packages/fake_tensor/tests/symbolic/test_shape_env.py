"""ShapeEnv: symbols for dynamic sizes, ranges, replacements, and the guards a trace records.

Each test builds symbolic meta tensors from real ones, runs eager ops on both, and compares
the symbolic result (evaluated at the example sizes) with the real result.
"""

from __future__ import annotations

import pytest
import sympy
import torch

from fake_tensor.symbolic import ConstraintViolationError, Dim, ShapeEnv


@pytest.fixture(autouse=True)
def python_dispatcher():
    # C++ kernels need the Python dispatcher to accept SymInts backed by our SymNode.
    guard = torch._C._EnablePythonDispatcher()
    yield
    del guard


def symbolic(env: ShapeEnv, t: torch.Tensor, dims, source: str) -> torch.Tensor:
    sizes, strides, offset = env.symbolic_sizes_strides(t, dims, source)
    return torch.empty_strided(sizes, strides, device="meta", dtype=t.dtype)


def hinted(env: ShapeEnv, values) -> tuple:
    return tuple(env.size_hint(v) for v in values)


def test_dynamic_dims_become_symbols_and_others_stay_ints():
    env = ShapeEnv()
    x = torch.randn(4, 6, 8)
    sizes, strides, offset = env.symbolic_sizes_strides(x, [0, 1], "x")
    assert isinstance(sizes[0], torch.SymInt) and isinstance(sizes[1], torch.SymInt)
    assert sizes[2] == 8 and type(sizes[2]) is int
    assert hinted(env, sizes) == tuple(x.shape)
    assert hinted(env, strides) == x.stride()
    assert offset == x.storage_offset()


@pytest.mark.parametrize("size", [0, 1])
def test_sizes_zero_and_one_are_specialized(size):
    env = ShapeEnv()
    sizes, _, _ = env.symbolic_sizes_strides(torch.randn(size, 3), [0], "x")
    assert type(sizes[0]) is int and sizes[0] == size
    assert env.symbols == []


def test_equal_sizes_share_a_symbol_when_duck_sizing():
    env = ShapeEnv()
    a, _, _ = env.symbolic_sizes_strides(torch.randn(5, 3), [0], "a")
    b, _, _ = env.symbolic_sizes_strides(torch.randn(5, 7), [0], "b")
    assert a[0].node.expr == b[0].node.expr
    assert env.symbol_sources[a[0].node.expr] == [("a", "size", 0), ("b", "size", 0)]


def test_equal_sizes_get_distinct_symbols_without_duck_sizing():
    env = ShapeEnv(duck_shape=False)
    a, _, _ = env.symbolic_sizes_strides(torch.randn(5, 3), [0], "a")
    b, _, _ = env.symbolic_sizes_strides(torch.randn(5, 7), [0], "b")
    assert a[0].node.expr != b[0].node.expr


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.randn(4, 6, 8),
        lambda: torch.randn(4, 6, 8).transpose(0, 2),
        lambda: torch.randn(4, 6, 8).permute(1, 2, 0),
        lambda: torch.randn(4, 10, 8)[:, 2:8],
        lambda: torch.randn(4, 1, 8).expand(4, 5, 8),
        lambda: torch.randn(4, 6, 8, 5).to(memory_format=torch.channels_last),
    ],
    ids=["contiguous", "transposed", "permuted", "sliced", "expanded", "channels_last"],
)
def test_symbolic_strides_agree_with_real_strides(make):
    env = ShapeEnv(duck_shape=False)
    t = make()
    sizes, strides, offset = env.symbolic_sizes_strides(t, range(t.dim()), "t")
    assert hinted(env, sizes) == tuple(t.shape)
    assert hinted(env, strides) == t.stride()
    assert offset == t.storage_offset()


def test_dim_declares_range_and_names_share_a_symbol():
    env = ShapeEnv()
    seq = Dim("seq", max=1024)
    a, _, _ = env.symbolic_sizes_strides(torch.randn(3, 7), {1: seq}, "a")
    b, _, _ = env.symbolic_sizes_strides(torch.randn(7, 2), {0: seq}, "b")
    symbol = a[1].node.expr
    assert b[0].node.expr == symbol
    assert env.ranges[symbol].lower == 2 and env.ranges[symbol].upper == 1024


def test_dim_rejects_example_outside_its_range():
    env = ShapeEnv()
    with pytest.raises(ConstraintViolationError, match="outside the range"):
        env.symbolic_sizes_strides(torch.randn(3, 9), {1: Dim("seq", max=8)}, "a")


def test_dim_rejects_two_different_example_sizes():
    env = ShapeEnv()
    env.symbolic_sizes_strides(torch.randn(3, 7), {1: Dim("seq")}, "a")
    with pytest.raises(ConstraintViolationError, match="differ in the examples"):
        env.symbolic_sizes_strides(torch.randn(3, 9), {1: Dim("seq")}, "b")


def test_questions_implied_by_ranges_record_no_guard():
    env = ShapeEnv()
    x = symbolic(env, torch.randn(5, 3), [0], "x")
    n = x.shape[0]
    assert n != 1 and n != 0 and n >= 2 and n > 1
    assert env.guards == []


def test_repeated_question_records_one_guard():
    env = ShapeEnv()
    n = symbolic(env, torch.randn(5, 3), [0], "x").shape[0]
    for _ in range(10):
        assert n > 3
    assert len(env.guards) == 1


def test_comparison_guard_narrows_the_range():
    env = ShapeEnv()
    n = symbolic(env, torch.randn(5, 3), [0], "x").shape[0]
    assert n <= 1024
    symbol = n.node.expr
    assert env.ranges[symbol].upper == 1024
    assert n <= 2048  # implied now
    assert [g.expr for g in env.guards] == [sympy.Le(symbol, 1024)]


def test_equality_guard_makes_a_replacement():
    env = ShapeEnv(duck_shape=False)
    a = symbolic(env, torch.randn(5, 3), [0], "a").shape[0]
    b = symbolic(env, torch.randn(5, 3), [0], "b").shape[0]
    assert a == b
    assert env.replacements == {b.node.expr: a.node.expr}
    assert str(b + 1) == str(a + 1)  # new expressions use the older symbol


def test_int_guard_specializes_the_symbol():
    env = ShapeEnv()
    n = symbolic(env, torch.randn(5, 3), [0], "x").shape[0]
    assert int(n) == 5
    assert env.replacements == {n.node.expr: 5}
    assert n * 2 == 10


def test_statically_known_true_records_no_guard():
    env = ShapeEnv()
    n = symbolic(env, torch.randn(5, 3), [0], "x").shape[0]
    assert (n >= 2).node.statically_known_true()
    assert not (n >= 5).node.statically_known_true()
    assert env.statically_known((n >= 2).node.expr) is True
    assert env.guards == []


def test_guards_hold_at_hints_and_fail_when_broken():
    env = ShapeEnv()
    x = symbolic(env, torch.randn(6, 4), [0, 1], "x")
    y = symbolic(env, torch.randn(4, 3), [0], "y")
    out = (x @ y) + x[:, :3]  # x.size(1) == y.size(0) (duck sized), and x.size(1) >= 3
    assert hinted(env, out.shape) == (6, 3)
    assert env.evaluate_guards({"x": torch.randn(6, 4), "y": torch.randn(4, 3)})
    assert env.evaluate_guards({"x": torch.randn(9, 5), "y": torch.randn(5, 3)})
    assert not env.evaluate_guards({"x": torch.randn(6, 5), "y": torch.randn(4, 3)})  # duck equality
    assert not env.evaluate_guards({"x": torch.randn(6, 2), "y": torch.randn(2, 3)})  # x.size(1) >= 3
    assert not env.evaluate_guards({"x": torch.randn(6, 4).t().contiguous().t(), "y": torch.randn(4, 3)})  # strides


def test_produce_guards_includes_ranges_of_every_symbol():
    env = ShapeEnv()
    n = symbolic(env, torch.randn(5, 3), {0: Dim("batch", max=64)}, "x").shape[0]
    assert set(env.produce_guards()) == {sympy.Ge(n.node.expr, 2), sympy.Le(n.node.expr, 64)}


def test_guards_evaluate_on_symbol_values():
    env = ShapeEnv()
    x = symbolic(env, torch.randn(6, 4), [0, 1], "x")
    x[:, :3].sum()  # needs x.size(1) >= 3
    n, m = (s.node.expr for s in x.shape)
    assert env.guards_hold_at(env.hints)
    assert env.guards_hold_at({n: 100, m: 3})
    assert not env.guards_hold_at({n: 100, m: 2})


def test_guards_print_as_python_over_places():
    env = ShapeEnv()
    x = symbolic(env, torch.randn(6, 4), [0, 1], "x")
    symbolic(env, torch.randn(6), [0], "y")
    x[:, :3].sum()
    lines = env.guards_as_python()
    for sizes, expected in (((6, 4, 6), True), ((7, 5, 7), True), ((6, 2, 6), False), ((6, 4, 5), False)):
        scope = {"x": torch.empty(sizes[:2]), "y": torch.empty(sizes[2])}
        assert all(eval(line, {}, scope) for line in lines) is expected


def test_bound_on_an_expression_is_a_guard_that_keeps_the_symbol():
    """`evaluate(expr < limit)` is how a backend asks for a bound (inductor's 32-bit indices
    while `768*s0 < 2**31`): answered at the hints, recorded as a bound on the symbol, with no
    replacement, so every size up to the bound passes and a larger one fails."""
    env = ShapeEnv()
    n = symbolic(env, torch.randn(5, 768), [0], "x").shape[0]
    s0 = n.node.expr
    assert env.evaluate(sympy.Lt(768 * s0, 2**31)) is True
    assert env.replacements == {}
    assert env.statically_known(sympy.Lt(768 * s0, 2**31)) is True  # asking again takes no new guard
    first_too_large = -(-(2**31) // 768)
    assert env.guards_hold_at({s0: first_too_large - 1}) and not env.guards_hold_at({s0: first_too_large})
    lines = env.guards_as_python()
    assert all(eval(line, {}, {"x": torch.empty(9, 768)}) for line in lines)
    assert not all(eval(line, {}, {"x": torch.empty(1, 768).expand(first_too_large, 768)}) for line in lines)


def test_an_expression_a_guard_pins_simplifies_to_its_value():
    """Once `n // 4 % 2 == 1` is guarded false (a model's `if height % 2 == 1: pad`), the
    remainder is 0 in every later size: Swin pads each of its four stages to a multiple of the
    window, and without this the padded sizes nest the remainder in each other until simplifying
    one view takes seconds."""
    env = ShapeEnv()
    n = symbolic(env, torch.randn(80, 3), [0], "x").shape[0]
    height = n // 4
    assert not (height % 2 == 1)
    padded = height + (2 - height % 2) % 2
    assert str(padded) == str(height)


def _window_round_trip(x: torch.Tensor, window: int) -> torch.Tensor:
    """DaViT's and Swin's window attention without the attention: pad (B, H, W, C) to a
    multiple of the window, split into windows, merge them back, crop."""
    _, h, w, _ = x.shape
    x = torch.nn.functional.pad(x, (0, 0, 0, (window - w % window) % window, 0, (window - h % window) % window))
    b, hp, wp, c = x.shape
    windows = x.view(b, hp // window, window, wp // window, window, c).permute(0, 1, 3, 2, 4, 5)
    windows = windows.contiguous().view(-1, window, window, c)
    x = windows.view(-1, hp // window, wp // window, window, window, c).permute(0, 1, 3, 2, 4, 5)
    return x.contiguous().view(-1, hp, wp, c)[:, :h, :w, :]


def test_padded_window_stages_decide_each_size_question_once(monkeypatch):
    """Each stage's size nests the padding `%` and `//` of the stages before it, and every
    view asks about the same few terms again. Range rewrites are remembered per set of ranges
    and the factoring of nested terms per term: without that, davit_tiny's capture at a new
    image size took 165 s (sympy.factor_terms ran thousands of times on the same terms, and on
    both sides of each `max(1, size)` of the contiguous strides)."""
    env = ShapeEnv()
    real = torch.randn(1, 45, 38, 2)
    x = symbolic(env, real, [1, 2], "x")
    factored_nodes = []  # the size of each expression handed to sympy.factor_terms
    factor_terms = sympy.factor_terms

    def counting(expr, *args, **kwargs):
        factored_nodes.append(sum(1 for _ in sympy.preorder_traversal(expr)))
        return factor_terms(expr, *args, **kwargs)

    monkeypatch.setattr(sympy, "factor_terms", counting)
    monkeypatch.setattr(sympy.functions.elementary.miscellaneous, "factor_terms", counting)  # Max, Min
    for stage in range(3):
        x, real = _window_round_trip(x, 7), _window_round_trip(real, 7)
        assert hinted(env, x.shape) == real.shape
        x, real = x[:, ::2, ::2], real[:, ::2, ::2]  # the stride-2 downsample between stages
    # 40,159 nodes with nothing remembered; 14,122 while FloorDiv's common factor and sympy's
    # Max(1, size) still factored whole nested sizes; 2,932 now.
    assert sum(factored_nodes) < 5_000


def test_an_exact_quotient_is_worked_out_once_per_pair(monkeypatch):
    """FloorDiv and PythonMod ask whether a / b is an integer (sympy.together of the pair) each
    time one is built, and for each term of a sum; inductor rebuilds the same quotients at every
    load of every pass over a body, past what sympy's own bounded cache holds (swin at a new
    image size: 11.9 -> 10.9 s CPU with the answer remembered). Same answers."""
    from fake_tensor.symbolic import FloorDiv, PythonMod

    calls = []
    together = sympy.together
    monkeypatch.setattr(sympy, "together", lambda *args, **kwargs: calls.append(args) or together(*args, **kwargs))
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    padded = 2 * s0 + PythonMod(-s0, 7) + 3 * s1
    built, counts = [], []
    for _ in range(2):
        sympy.core.cache.clear_cache()  # as when sympy's cache has moved on to other expressions
        calls.clear()
        built.append((FloorDiv(padded, 2 * s0), PythonMod(4 * padded, 2), FloorDiv(6 * s0 * s1, 3 * s1)))
        counts.append(len(calls))
    assert built[0] == built[1]
    assert built[0][1:] == (0, 2 * s0)
    assert counts[1] == 0, counts  # the first round may find answers an earlier test left
