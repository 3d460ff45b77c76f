"""Calls: torch functions, Tensor methods and operators, user functions inlined with every
argument form, builtins, math and functools."""

from __future__ import annotations

import functools
import math
import operator

import pytest
import torch
import torch.nn.functional as F

from helpers import check, compile_eager, graph_of


def two():
    return torch.randn(4, 6), torch.randn(4, 6)


def test_torch_functions_and_methods():
    def fn(x, y):
        z = torch.matmul(x, y.t()).softmax(dim=-1)
        return torch.cat([z, x.sum(1, keepdim=True)], dim=1).clamp(min=-1.0, max=1.0)

    check(fn, two)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**", "<", "<=", "==", "!=", ">", ">=", "&", "|"])
def test_binary_operators_on_tensors(op):
    fn = eval(f"lambda x, y: (x > 0) {op} (y > 0)") if op in "&|" else eval(f"lambda x, y: x {op} y.abs().add(1)")
    check(fn, two)


def test_operators_mixing_tensors_and_numbers():
    check(lambda x, y: 2 * x + y / 3 - 1 + (-x) ** 2 + abs(y), two)


def test_in_place_operators():
    def fn(x, y):
        z = x.clone()
        z += y
        z *= 2
        z[0] = 0
        z[:, 1] += 1
        return z

    check(fn, two)


def test_functional_calls():
    def fn(x, y):
        return F.gelu(F.linear(x, y.t() @ y)) + F.dropout(x, 0.5, training=False)

    check(fn, two)


def test_user_functions_with_every_argument_form():
    def inner(a, b=2, *rest, scale=1.0, **extra):
        return (a * b + sum(rest)) * scale + extra.get("shift", 0)

    def fn(x, y):
        return inner(x), inner(x, y), inner(x, 1, y, y, scale=2.0, shift=3), inner(*(x, y), **{"scale": 0.5})

    check(fn, two)


def test_keyword_only_and_positional_only_parameters():
    def inner(a, /, b, *, c):
        return a - b * c

    check(lambda x, y: inner(x, c=2, b=y), two)


def test_recursion_on_constants():
    def power(x, n):
        return x if n == 1 else x * power(x, n - 1)

    check(lambda x, y: power(x, 4), two)


def test_methods_of_user_objects():
    class Scaler:
        def __init__(self, factor):
            self.factor = factor

        def apply(self, t):
            return t * self.factor

        @staticmethod
        def shift(t):
            return t + 1

        @classmethod
        def make(cls):
            return cls(3)

    scaler = Scaler(2)
    check(lambda x, y: scaler.apply(x) + Scaler.shift(y) + Scaler.make().apply(x), two)


@pytest.mark.parametrize(
    "builtin",
    [
        lambda x: len(x) * x,
        lambda x: x * max(x.shape) + min(x.shape[0], 3),
        lambda x: x * sum(x.shape) + abs(-2),
        lambda x: x if all(s > 1 for s in x.shape) and not any(s > 10 for s in x.shape) else -x,
        lambda x: x * sorted([3, 1, 2])[0] + round(2.6) + int("3") + float(2),
        lambda x: x * math.sqrt(x.shape[0]) + math.floor(2.5) + math.pi,
        lambda x: x + len(list(range(x.shape[1]))) + len(tuple(reversed([1, 2]))),
        lambda x: x * (isinstance(x, torch.Tensor) + callable(len) + hasattr(x, "shape")),
        lambda x: getattr(x, "T") + getattr(x, "missing", 1),
        lambda x: x * operator.mul(2, 3) + operator.getitem([1, 2], 1),
        lambda x: functools.partial(torch.add, alpha=2)(x, 1),
        lambda x: x + len({1: 2, 3: 4}) + len({1, 2, 2}) + divmod(7, 2)[0],
    ],
    ids=["len", "max-min", "sum-abs", "all-any", "sorted-round-int-float", "math", "range-reversed",
         "isinstance-callable-hasattr", "getattr-default", "operator", "partial", "dict-set-divmod"],  # fmt: skip
)
def test_builtins(builtin):
    check(lambda x, y: builtin(x), two)


def test_tensor_metadata_is_constant():
    def fn(x, y):
        return x.new_zeros(x.shape[0], y.size(1) * 2) + x.dim() + x.numel() + (x.dtype == torch.float32)

    compiled = check(fn, two)
    ops = [n.target for n in graph_of(compiled).graph.nodes if n.op in ("call_function", "call_method")]
    assert "size" not in ops and "dim" not in ops, "metadata queries must not be graph nodes"


def test_is_compiling_is_true_while_capturing():
    def fn(x, y):
        return x + 1 if torch.compiler.is_compiling() else x - 1

    compiled = compile_eager(fn)
    torch.testing.assert_close(compiled(*two()[:1], torch.zeros(1)), torch.zeros(4, 6) + 1, atol=10, rtol=0)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, x), x + 1)


def test_string_methods_are_folded():
    def fn(x, y):
        name = "Linear-layer".lower().split("-")[0]
        return x * len(name) + (1 if name.startswith("lin") else 0)

    check(fn, two)


def test_torch_return_types_fields():
    def fn(x, y):
        result = torch.max(x, dim=1)
        values, indices = result
        return result.values + values, indices

    check(fn, two)


def test_calls_are_recorded_in_order():
    compiled = check(lambda x, y: torch.relu(x).sin().cos(), two)
    calls = [n.target for n in graph_of(compiled).graph.nodes if n.op in ("call_function", "call_method")]
    assert calls == [torch.relu, "sin", "cos"]


def test_custom_autograd_function():
    class TimesTwo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    def fn(x, y):
        return TimesTwo.apply(x).sum() + y.sum()

    compiled = compile_eager(fn)
    x = torch.randn(3, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    compiled(x, torch.ones(1)).backward()
    fn(x_ref, torch.ones(1)).backward()
    torch.testing.assert_close(x.grad, x_ref.grad)


def test_lambdas_of_torch_testing_are_inlined():
    """op_db's ops are lambdas living in torch.testing (`lambda x, *args: x.contiguous(*args)`):
    recorded as one call, the graph would name them by a path nothing can import."""
    scope = {"__name__": "torch.testing._internal.some_helpers"}
    exec("op = lambda x, *args, **kwargs: x.contiguous(*args, **kwargs) * 2", scope)
    op = scope["op"]

    def fn(x):
        return op(x)

    compiled = check(fn, lambda: (torch.randn(3, 4).t(),))
    assert "contiguous" in graph_of(compiled).code


def test_slicing_a_struct_sequence_gives_a_plain_tuple():
    # torch.return_types are struct sequences (no _fields): op_db's linalg.lstsq.grad_oriented
    # is `torch.linalg.lstsq(a, b)[:2]`, rebuilt as a 2-item linalg_lstsq (TypeError).
    def fn(x):
        values = torch.sort(x)[:1]
        return type(values) is tuple, values[0] * 2, torch.linalg.lstsq(x, x)[:2][0]

    # Well conditioned: lstsq of a random 4x4 by itself was 1.4e-5 off eager's now and then.
    check(fn, lambda: (torch.randn(4, 4) + 4 * torch.eye(4),))
