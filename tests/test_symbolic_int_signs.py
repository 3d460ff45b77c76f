"""A Python number the compiled graph takes as a symbol keeps the sign it can have.

Capture makes an int argument symbolic when it changes between calls (or with dynamic=True);
inductor took every such symbol as a positive size, so sympy simplified `-k < 0` to true. For
`x[:-k]` at k = 0 (which is `x[:0]`, empty) the backward then sized the gradient as 10 - k
elements and read them from an empty tangent: a segfault. Found by tests/test_fuzz_data_dependent.py.
"""

from __future__ import annotations

import pytest
import torch

import compiler


def _head_and_tail(x, numbers):
    k = numbers[0]
    torch._check(k >= 0)
    return x[:-k].exp(), x[k:-1].relu().sum(0)


def _scaled(x, numbers):
    return x * numbers[0] + (x[: numbers[1]] if numbers[1] < 0 else x[:1]).sum()


@pytest.fixture(autouse=True)
def fresh():
    compiler.reset()
    yield
    compiler.reset()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("dynamic", [True, None])
@pytest.mark.parametrize("ks", [(3, 0, 2), (0, 3), (7, 0, 0)])
def test_an_int_that_becomes_zero_matches_eager_with_gradients(backend, dynamic, ks):
    compiled = compiler.compile(_head_and_tail, backend=backend, dynamic=dynamic)
    for n, k in zip((10, 10, 12), ks):
        x = torch.randn(n, requires_grad=True)
        y = x.detach().clone().requires_grad_()
        ours, eager = compiled(x, [k]), _head_and_tail(y, [k])
        torch.testing.assert_close(ours, eager)
        (ours[0].sum() + ours[1]).backward()
        (eager[0].sum() + eager[1]).backward()
        torch.testing.assert_close(x.grad, y.grad)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_negative_and_float_numbers_match_eager(backend):
    compiled = compiler.compile(_scaled, backend=backend, dynamic=True)
    for numbers in ([2.5, -3], [-1.5, -1], [0.0, -4], [3.0, 2]):
        x = torch.randn(8)
        torch.testing.assert_close(compiled(x, numbers), _scaled(x, numbers))


# Uses of an int argument n that are valid for every sign of n (eager's answer may be an error,
# which the compiled function must raise too); n crosses zero and changes sign between calls.
USES_OF_A_SIGNED_INT = [
    "x[:n]",
    "x[n:]",
    "torch.roll(x, n)",
    "x * n + n // 3 - n % 4",
    "torch.nn.functional.pad(x, (n, 1))",
    "x[n - 1]",
    "x.narrow(0, 0, abs(n))",
    "x[:n] if n < 0 else x[n:]",
    "torch.arange(n, 9) * 1.0",
    "x.clamp(min=n)",
    "torch.cat([x[:n], x[n:]]) * 2",
]
SIGNED_VALUES = [3, -2, 0, 5, -5, 1, -1, 4]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("use", USES_OF_A_SIGNED_INT)
def test_an_int_crossing_zero_and_changing_sign_matches_eager(backend, use):
    fn = eval(f"lambda x, n: {use}")  # noqa: S307  (a table of our own)
    compiled = compiler.compile(fn, backend=backend, dynamic=True)
    for n in SIGNED_VALUES:
        x = torch.randn(8, requires_grad=True)
        y = x.detach().clone().requires_grad_()
        try:
            eager, refusal = fn(y, n), None
        except (IndexError, RuntimeError) as error:
            eager, refusal = None, type(error)
        if refusal is not None:
            with pytest.raises(refusal):
                compiled(x, n)
            continue
        ours = compiled(x, n)
        torch.testing.assert_close(ours, eager, msg=lambda m: f"n={n}: {m}")
        if ours.requires_grad:
            ours.sum().backward()
            eager.sum().backward()
            torch.testing.assert_close(x.grad, y.grad, msg=lambda m: f"n={n}: {m}")


USES_OF_A_SIGNED_FLOAT = [
    "x * a + a / 3",
    "x.clamp(max=a)",
    "torch.full((8,), a) - x",
    "torch.where(x > a, x, a * x)",
    "x * (a > 0) + abs(a)",
    "x.sum() * a ** 2",
]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("use", USES_OF_A_SIGNED_FLOAT)
def test_a_float_crossing_zero_and_changing_sign_matches_eager(backend, use):
    fn = eval(f"lambda x, a: {use}")  # noqa: S307  (a table of our own)
    compiled = compiler.compile(fn, backend=backend, dynamic=True)
    for a in (0.5, -1.5, 0.0, 2.25, -0.0, 1e-3):
        x = torch.randn(8, requires_grad=True)
        y = x.detach().clone().requires_grad_()
        ours, eager = compiled(x, a), fn(y, a)
        torch.testing.assert_close(ours, eager, msg=lambda m: f"a={a}: {m}")
        ours.sum().backward()
        eager.sum().backward()
        torch.testing.assert_close(x.grad, y.grad, msg=lambda m: f"a={a}: {m}")
