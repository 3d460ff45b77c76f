"""Unbacked symbols: sizes and numbers only the data decides (`nonzero`'s row count, `.item()`).

With `allow_dynamic_output_shape_ops` / `allow_scalar_outputs`, a FakeTensorMode answers such
ops with a fresh unbacked symbol (u0) instead of raising. Each test compares with what eager
returns on random data: the rank, dtype and the sizes that do not depend on the data must
match, and the eager size must lie in the symbol's range. Questions the range decides are
answered without a guard; others raise GuardOnDataDependentError naming where the symbol
came from.
"""

from __future__ import annotations

import pytest
import sympy
import torch

from fake_tensor import UNBACKED, DataDependentError, FakeTensorMode, GuardOnDataDependentError, ShapeEnv


def unbacked_mode() -> tuple[ShapeEnv, FakeTensorMode]:
    env = ShapeEnv()
    return env, FakeTensorMode(env, allow_dynamic_output_shape_ops=True, allow_scalar_outputs=True)


def assert_matches_eager(fake: torch.Tensor, real: torch.Tensor, env: ShapeEnv) -> None:
    """`fake` has eager's rank and dtype, eager's size where it is a plain int, and an
    expression over unbacked symbols whose range holds eager's size elsewhere."""
    assert fake.dim() == real.dim() and fake.dtype == real.dtype
    for fake_size, real_size in zip(fake.shape, real.shape):
        if isinstance(fake_size, int):
            assert fake_size == real_size
        else:
            expr = fake_size.node.expr
            assert expr.free_symbols <= env.unbacked.keys() and not fake_size.node.has_hint()
            value_range = env.bound(expr)
            assert value_range.lower <= real_size <= value_range.upper


DATA_DEPENDENT_SHAPES = {
    "nonzero": lambda x: torch.nonzero(x > 0),
    "nonzero method": lambda x: (x > 0).nonzero(),
    "argwhere": lambda x: torch.argwhere(x > 0),
    "boolean mask": lambda x: x[x > 0],
    "mask over leading dims": lambda x: x[x[:, 0] > 0],
    "masked_select": lambda x: torch.masked_select(x, x > 0),
    "unique": lambda x: torch.unique(x.round()),
    "unique with counts": lambda x: torch.unique(x.round(), return_counts=True)[1],
    "repeat_interleave": lambda x: torch.repeat_interleave((x.abs() * 3).long().flatten()),
}


@pytest.mark.parametrize("op", DATA_DEPENDENT_SHAPES.values(), ids=DATA_DEPENDENT_SHAPES.keys())
def test_data_dependent_shapes_are_unbacked_symbols(op):
    env, mode = unbacked_mode()
    real = torch.randn(5, 4)
    with mode:
        fake = op(mode.from_real(real))
    assert_matches_eager(fake, op(real), env)
    assert env.produce_guards() == []


def test_counts_range_from_zero_to_numel_and_cover_all_and_none_selected():
    env, mode = unbacked_mode()
    with mode:
        count = torch.nonzero(mode.from_real(torch.randn(3, 4))).shape[0]
    value_range = env.ranges[count.node.expr]
    assert (value_range.lower, value_range.upper) == (0, 12)
    for real in (torch.zeros(3, 4), torch.ones(3, 4)):
        assert value_range.lower <= torch.nonzero(real).shape[0] <= value_range.upper


def test_ops_on_unbacked_sizes_trace_symbolically():
    env, mode = unbacked_mode()
    real = torch.randn(6)
    with mode:
        x = mode.from_real(real)
        y = x[x > 0]
        results = [y * 2, y.sum(), torch.cat([y, y]), y.unsqueeze(0), y.reshape(1, -1), torch.zeros(y.shape[0])]
        doubled = y.shape[0] * 2 + 1
    real_y = real[real > 0]
    expected = [real_y * 2, real_y.sum(), torch.cat([real_y, real_y]), real_y.unsqueeze(0), real_y.reshape(1, -1), torch.zeros(real_y.shape[0])]
    for fake, eager in zip(results, expected):
        assert_matches_eager(fake, eager, env)
    assert doubled.node.expr == 2 * y.shape[0].node.expr + 1 and not doubled.node.has_hint()
    assert env.produce_guards() == []


def test_questions_the_range_decides_are_answered_without_guards():
    env, mode = unbacked_mode()
    with mode:
        count = torch.nonzero(mode.from_real(torch.randn(8))).shape[0]
    assert bool(count >= 0) and not bool(count > 8) and bool(count <= 8)
    assert env.produce_guards() == [] and env.guards == []


def test_undecidable_question_raises_naming_the_op_and_the_line():
    env, mode = unbacked_mode()
    with mode:
        count = mode.from_real(torch.randn(8)).nonzero().shape[0]
    with pytest.raises(GuardOnDataDependentError, match=r"u0 > 3.*aten\.nonzero.*test_unbacked\.py") as info:
        bool(count > 3)
    assert isinstance(info.value, DataDependentError)
    with pytest.raises(GuardOnDataDependentError):
        int(count)
    assert env.guards == []


def test_guard_or_answers_the_default_and_expect_true_assumes_at_runtime():
    env, mode = unbacked_mode()
    with mode:
        count = mode.from_real(torch.randn(8)).nonzero().shape[0]
    node = (count == 1).node
    assert node.guard_or_false() is False and node.guard_or_true() is True
    assert (count >= 2).node.expect_true()
    assert [str(a.expr) for a in env.runtime_asserts] == ["u0 >= 2"]
    assert bool(count != 1)  # now decided by the narrowed range
    assert env.guards == []


def test_a_fact_over_two_symbols_decides_what_it_implies():
    """torch._check(k + 4 <= n) on a .item() k and a dynamic size n: the fact teaches nothing
    about k's range alone, but decides k > n, k + 4 > n, k < n and k + 2 < n, as torch's
    axioms do; what it does not imply stays undecided."""
    env, mode = unbacked_mode()
    n = mode.from_real(torch.randn(10), dynamic_dims=[0], source="x").shape[0]
    index = mode.from_real(torch.tensor(2))
    with mode:
        k = index.item()
    assert (k + 4 <= n).node.expect_true()
    assert bool(k > n) is False and bool(k + 4 > n) is False and bool(k < n) is True
    assert env.statically_known(sympy.Gt(k.node.expr, n.node.expr)) is False
    assert bool(k + 2 < n) is True
    with pytest.raises(GuardOnDataDependentError):
        bool(k + 6 < n)  # k + 4 <= n leaves k + 6 anywhere up to n + 2
    with pytest.raises(GuardOnDataDependentError):
        bool(k < 0)
    assert env.guards == []


def test_a_fact_bounds_each_of_its_symbols_by_the_others_ranges():
    """k + w <= 10 with w >= 1 puts k at most 9: that decides questions the fact's difference
    alone cannot, such as whether x[k::3] of a 10-long x is empty (FloorDiv(12 - k, 3) == 0)."""
    env, mode = unbacked_mode()
    numbers = mode.from_real(torch.tensor([2, 3]))
    with mode:
        k, w = numbers[0].item(), numbers[1].item()
    for fact in (k >= 0, w >= 1, k + w <= 10):
        assert fact.node.expect_true()
    assert bool(k <= 9) is True and bool(k > 9) is False
    assert bool((12 - k) // 3 != 0) is True
    assert bool(w <= 10) is True
    with pytest.raises(GuardOnDataDependentError):
        bool(k < 9)  # k = 9, w = 1 meets every fact
    assert env.guards == []


def test_size_oblivious_questions_assume_sizes_of_at_least_two():
    env, mode = unbacked_mode()
    with mode:
        count = mode.from_real(torch.randn(8)).nonzero().shape[0]
    assert (count == 1).node.guard_size_oblivious() is False
    with pytest.raises(GuardOnDataDependentError):
        (count == 5).node.guard_size_oblivious()


@pytest.mark.parametrize(
    "dtype, python_type", [(torch.float32, torch.SymFloat), (torch.int64, torch.SymInt), (torch.bool, torch.SymBool)]
)
def test_item_is_an_unbacked_number(dtype, python_type):
    env, mode = unbacked_mode()
    real = (torch.randn(()) * 10).to(dtype)
    with mode:
        value = mode.from_real(real).item()
    assert isinstance(value, python_type) and not value.node.has_hint()
    if dtype is torch.int64:
        value_range = env.ranges[value.node.expr]
        assert value_range.lower <= real.item() <= value_range.upper


def test_item_of_many_elements_fails_as_in_eager():
    _, mode = unbacked_mode()
    with pytest.raises(RuntimeError, match="3 elements cannot be converted"):
        torch.randn(3).item()
    with mode, pytest.raises(RuntimeError, match="3 elements cannot be converted"):
        mode.from_real(torch.randn(3)).item()


@pytest.mark.parametrize("op", [lambda x: x.nonzero(), lambda x: x[x > 0], lambda x: x.sum().item()], ids=["nonzero", "mask", "item"])
def test_without_the_settings_data_dependent_ops_are_refused(op):
    mode = FakeTensorMode(ShapeEnv())
    with mode, pytest.raises(DataDependentError):
        op(mode.from_real(torch.randn(4)))


def test_settings_need_a_shape_env():
    with pytest.raises(ValueError, match="shape_env"):
        FakeTensorMode(allow_dynamic_output_shape_ops=True)


@pytest.mark.parametrize("rows", [0, 1, 5])
def test_unbacked_input_dims_have_no_hint_no_specialization_and_no_guards(rows):
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    real = torch.randn(rows, 3)
    fake = mode.from_real(real, dynamic_dims={0: UNBACKED}, source="x")
    size = fake.shape[0]
    assert isinstance(size, torch.SymInt) and not size.node.has_hint()
    with mode:
        out = (fake * 2).sum(0)
    assert_matches_eager(out, (real * 2).sum(0), env)
    assert env.produce_guards() == []
    assert env.bind_symbols({"x": real}) == {size.node.expr: rows}


def test_strides_over_an_unbacked_dim_are_checked_at_their_place():
    env = ShapeEnv()
    mode = FakeTensorMode(env)
    real = torch.randn(3, 5)
    fake = mode.from_real(real, dynamic_dims={1: UNBACKED}, source="x")
    u = fake.shape[1].node.expr
    assert fake.stride() == (fake.shape[1], 1) and isinstance(u, sympy.Symbol)
    assert env.evaluate_guards({"x": torch.randn(3, 7)})
    assert not env.evaluate_guards({"x": torch.randn(7, 3).t()})
