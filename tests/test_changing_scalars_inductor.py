"""Ints and floats that change between calls, through `compiler.compile` with the default
backend: after one recompile they are symbolic graph inputs (capture), which aot_autograd and
inductor receive as a SymInt / SymFloat. Results and gradients match eager for every value."""

import random

import pytest
import torch

import compiler


def scale_shift(x, n, s):
    return (x * n + s).sin() * (n // 2) - s / 2


def branchy(x, n, s):
    if n > 4:
        return x.cos() * s
    return x + n


@pytest.mark.parametrize("fn", [scale_shift, branchy], ids=lambda f: f.__name__)
def test_changing_numbers_match_eager_with_inductor(fn):
    compiler.reset()
    compiled = compiler.compile(fn, fullgraph=True)
    for n in (3, 6, 2, 8, 5):
        s = random.uniform(-3, 3)
        x = torch.randn(4, requires_grad=True)
        x_eager = x.detach().clone().requires_grad_()
        out, expected = compiled(x, n, s), fn(x_eager, n, s)
        torch.testing.assert_close(out, expected)
        out.sum().backward()
        expected.sum().backward()
        torch.testing.assert_close(x.grad, x_eager.grad)
    # At most: specialized, then symbolic n (and for branchy, s read only on one side of the
    # branch becomes symbolic one call later, and the other side of the branch).
    assert len(compiled._capture_cache.entries) <= 4


def arithmetic_on_numbers(x, n, s):
    return x * float(n) + int(s) + abs(-n) + (n == 3) + x / n + s**2 - torch.full((2,), n).sum()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_arithmetic_on_symbolic_numbers_matches_eager(backend):
    """Division, powers, abs, comparisons and int() of floats give sympy expressions that
    aot_autograd rebuilds, and that inductor either lowers or leaves to its ATen graph."""
    compiler.reset()
    compiled = compiler.compile(arithmetic_on_numbers, backend=backend, fullgraph=True)
    for n, s in ((2, 1.5), (3, -2.5), (5, 7.25), (4, 0.5)):
        x = torch.randn(2)
        torch.testing.assert_close(compiled(x, n, s), arithmetic_on_numbers(x, n, s))
    assert len(compiled._capture_cache.entries) <= 3


def divide_number(x, n):
    return x * (n % 3) + (n // 2) - n * n


def test_negative_numbers_divide_like_python_with_inductor():
    """Inductor's size arithmetic assumes non-negative operands; a number input may be negative
    (Python's -5 // 2 is -3, C's is -2)."""
    compiler.reset()
    compiled = compiler.compile(divide_number, fullgraph=True)
    for n in (5, 7, -5, -7, 0, -1):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x, n), divide_number(x, n))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_changing_norm_order_differentiates_like_eager(backend):
    # The order becomes a symbolic int; the norm's checks ask float(ord) < 0.0 (the float has
    # ord's own expression), then its backward asks ord as an int, which must answer an int.
    compiler.reset()
    compiled = compiler.compile(lambda x, p: torch.norm(x, p), backend=backend)
    for p in (2, 0, 3, 1):
        x = torch.randn(5, 5, requires_grad=True)
        x_eager = x.detach().clone().requires_grad_()
        out, expected = compiled(x, p), torch.norm(x_eager, p)
        torch.testing.assert_close(out, expected)
        out.backward()
        expected.backward()
        torch.testing.assert_close(x.grad, x_eager.grad)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_tensor_made_of_changing_ints_holds_their_values(backend):
    # torch.tensor of symbolic ints: torch's C++ conversion kept the low 32 bits (2**40 became 0).
    compiler.reset()
    fn = lambda x, s: x + torch.tensor(s) + torch.tensor([[s[1] // 2, 1], [s[0], 2]]).sum(0)  # noqa: E731
    compiled = compiler.compile(fn, backend=backend, dynamic=True)
    for s in [(3, 7), (9, 2**40), (5, -(2**62)), (4, 6)]:
        x = torch.randint(-9, 9, (2,))
        torch.testing.assert_close(compiled(x, s), fn(x, s), rtol=0, atol=0)
