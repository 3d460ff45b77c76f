"""Property: chains of views and reshapes over an input with a symbolic size, compiled once with
`dynamic=True` by inductor, equal eager at every size, with no second compile.

The input is (4, s0) with s0 a multiple of 6, the shape DDP bucket splits and sequence models
hand inductor. A chain is drawn as operations on a model of the sizes in which exactly one dim
holds the symbolic factor; every drawn view is valid at every size in `SIZES`.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from compiler.backends import lookup_backend

SIZES = (6, 12, 30)  # s0 at the first call (the one that compiles), then new sizes


def _symbolic(d) -> bool:
    return isinstance(d, Fraction)


def _fits(f: Fraction) -> bool:
    """s0 * f is an integer for every s0 in SIZES (multiples of 6)."""
    return 6 % f.denominator == 0


def _draw_ops(draw, dims: list, steps: int):
    """Drawn operations on a value whose sizes are `dims`: ints, and one Fraction f for the dim
    of size s0 * f. Each op is (name, fn on tensors); `dims` follows it."""
    ops = []
    for _ in range(steps):
        k_sym = next(k for k, d in enumerate(dims) if _symbolic(d))
        choice = draw(st.sampled_from(["split_static", "split_symbolic", "merge", "transpose", "flatten", "pointwise"]))
        if choice == "split_static":
            candidates = [k for k, d in enumerate(dims) if not _symbolic(d) and d % 2 == 0 and d > 2]
            if not candidates:
                continue
            k = draw(st.sampled_from(candidates))
            fn = (lambda k, d: lambda x: x.unflatten(k, (2, d // 2)))(k, dims[k])
            dims = [*dims[:k], 2, dims[k] // 2, *dims[k + 1:]]
        elif choice == "split_symbolic":
            factor = draw(st.sampled_from([2, 3]))
            if not _fits(dims[k_sym] / factor):
                continue
            front = draw(st.booleans())
            # The symbolic part is the -1, as a user writes it.
            split = (factor, -1) if front else (-1, factor)
            fn = (lambda k, split: lambda x: x.reshape(*x.shape[:k], *split, *x.shape[k + 1:]))(k_sym, split)
            pair = [factor, dims[k_sym] / factor] if front else [dims[k_sym] / factor, factor]
            dims = [*dims[:k_sym], *pair, *dims[k_sym + 1:]]
        elif choice == "merge":
            if len(dims) < 2:
                continue
            k = draw(st.integers(0, len(dims) - 2))
            fn = (lambda k: lambda x: x.flatten(k, k + 1))(k)
            dims = [*dims[:k], dims[k] * dims[k + 1], *dims[k + 2:]]
        elif choice == "transpose":
            if len(dims) < 2:
                continue
            a, b = draw(st.sampled_from([(i, j) for i in range(len(dims)) for j in range(i + 1, len(dims))]))
            fn = (lambda a, b: lambda x: x.transpose(a, b))(a, b)
            dims = list(dims)
            dims[a], dims[b] = dims[b], dims[a]
        elif choice == "flatten":
            fn = lambda x: x.reshape(-1)  # noqa: E731
            dims = [Fraction(4)]
        else:
            fn = lambda x: x * 2 + 1  # noqa: E731
        ops.append((choice, fn))
    return ops


@st.composite
def reshape_chains(draw):
    return _draw_ops(draw, [4, Fraction(1)], draw(st.integers(2, 5)))


def _run(ops, x):
    for _, fn in ops:
        x = fn(x)
    return x + 0  # a kernel reads the last view


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reshape_chains())
def test_reshape_chain_with_symbolic_sizes_matches_eager(ops):
    compiles = []
    inductor = lookup_backend("inductor")

    def counting_backend(gm, example_inputs):
        compiles.append(gm)
        return inductor(gm, example_inputs)

    fn = lambda x: _run(ops, x)  # noqa: E731
    compiled = compiler.compile(fn, backend=counting_backend, dynamic=True)
    for s0 in SIZES:
        x = torch.randn(4, s0)
        torch.testing.assert_close(compiled(x), fn(x), msg=lambda m: f"{[n for n, _ in ops]} at s0={s0}: {m}")
    assert len(compiles) == 1, [n for n, _ in ops]


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x.reshape(2, 2, -1),
        lambda x: x.view(-1),
        lambda x: x.unflatten(0, (2, 2)),
        lambda x: x.t().reshape(-1, 2),
        lambda x: x.reshape(2, -1, 3).transpose(0, 2).reshape(6, -1),
    ],
    ids=["reshape_2_2_s", "view_flat", "unflatten_static", "transpose_then_reshape", "reshape_transpose_reshape"],
)
def test_view_of_symbolic_input(view):
    fn = lambda x: view(x) * 2  # noqa: E731
    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for s0 in SIZES:
        x = torch.randn(4, s0)
        torch.testing.assert_close(compiled(x), fn(x))


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda x, y: x + y.repeat(2), lambda n: [(2 * n,), (n,)]),
        (lambda x, y: torch.cat([x, x]) * y, lambda n: [(n,), (2 * n,)]),
        (lambda x, y: x.reshape(-1) + y, lambda n: [(n, 4), (4 * n,)]),
    ],
    ids=["size_is_twice_a_later_one", "size_is_half_a_later_one", "flattened_equals_other"],
)
def test_sizes_related_by_a_guard(fn, shapes):
    # The shape env learns an equality (s0 == 2*s1) and replaces one symbol by an expression
    # of another; inductor reads input sizes through those replacements.
    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for n in (3, 5, 8):
        inputs = [torch.randn(s) for s in shapes(n)]
        torch.testing.assert_close(compiled(*inputs), fn(*inputs))


@pytest.mark.parametrize(
    "split",
    [lambda x: x.chunk(2, dim=1), lambda x: x.chunk(3, dim=1), lambda x: x.split(4, dim=1), lambda x: x.split([1, 3])],
    ids=["chunk_2", "chunk_3", "split_4", "split_sizes"],
)
def test_split_of_symbolic_dim(split):
    # Piece sizes such as (s0 + 1) // 2 are symbolic: slices of expressions, not ints.
    fn = lambda x: [t * 2 for t in split(x)]  # noqa: E731
    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for s0 in (*SIZES, 31):
        x = torch.randn(4, s0)
        torch.testing.assert_close(compiled(x), fn(x))


def test_graphs_that_differ_only_in_a_specialized_size_are_not_confused():
    # max_pool1d reads its input's size as an int: each size is a graph of its own, with the
    # same code and input shapes (4, s0) but s0 -> 6, 9, 13 and other output sizes. Inductor's
    # compiled-graph cache must tell them apart.
    fn = lambda x: torch.nn.functional.max_pool1d(x[None], 2)[0] * 2  # noqa: E731
    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for s0 in (6, 9, 13):
        x = torch.randn(4, s0)
        torch.testing.assert_close(compiled(x), fn(x))


@pytest.mark.parametrize(
    "window",
    [lambda x: x[:, 2:6], lambda x: x[:, 6:12], lambda x: x[:, 1:6:2], lambda x: x[:, 3:]],
    ids=["ending_at_the_first_size", "past_the_first_size", "stepped_ending_at_it", "to_the_end"],
)
def test_slice_with_a_constant_end_at_the_first_size(window):
    # Traced at s0 = 6 or 12, a constant end equal to s0 is not "to the end": `x[:, 2:6]` stays
    # four long at s0 = 12 and 30 (the tracer guarded s0 >= 6, as torch's slice clamps only
    # past the size). Inductor clamped at equality and returned s0 - 2 elements.
    fn = lambda x: window(x) * 2  # noqa: E731
    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for s0 in (*SIZES, 6, 12):
        x = torch.randn(4, s0)
        torch.testing.assert_close(compiled(x), fn(x), msg=lambda m: f"s0={s0}: {m}")


def test_gradients_of_a_batched_matmul_over_an_empty_inner_dim():
    # (n, n, 0) @ (0, m): the backward views an (n*n, 0) product as (n, n, 0), where n*n is a
    # symbol of its own (a saved size) that the reshape cannot match to n: unflattening over
    # the empty dim divided by 0 (ZeroDivisionError). An empty view reads nothing.
    fn = torch.matmul
    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for a_shape, b_shape in (((5, 5, 10), (10, 5)), ((5, 5, 0), (0, 5)), ((3, 3, 0), (0, 4))):
        a, b = torch.randn(a_shape, requires_grad=True), torch.randn(b_shape, requires_grad=True)
        got, want = compiled(a, b), fn(a, b)
        cotangent = torch.randn_like(want)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(torch.autograd.grad(got, (a, b), cotangent), torch.autograd.grad(want, (a, b), cotangent))


def test_a_view_whose_products_differ_by_one_symbol():
    """The backward views its gradient (s0, 2*s1) as (s0, s1, 2): the group's products 2*s1 and
    s1 differ by s1 alone, which the reshape's comparison at the example sizes read as a Python
    int and failed on (fb1e85c; found by test_fuzz_symbolic_training)."""

    def fn(x):
        return torch.stack([x, x * 2], 2).flatten(1)

    compiled = compiler.compile(fn, backend="inductor", dynamic=True)
    for rows, columns in [(6, 12), (6, 12), (6, 8), (8, 7)]:
        x = torch.randn(rows, columns, requires_grad=True)
        expected_x = x.detach().clone().requires_grad_()
        out, expected = compiled(x), fn(expected_x)
        torch.testing.assert_close(out, expected)
        grad = torch.randn_like(expected)
        out.backward(grad)
        expected.backward(grad)
        torch.testing.assert_close(x.grad, expected_x.grad)
