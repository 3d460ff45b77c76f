"""Outputs aliasing a graph input whose autograd history is not a view's, against eager.

aot_autograd hands back an output that aliases an input as a view rebuilt from the real
input after the graph (as_strided), with the view's backward. A custom autograd.Function
returning its input or a view of it (not marked dirty) gives eager a view whose grad_fn is the
Function's backward: the rebuilt view skipped it (x.grad 1 where eager's is 5, `g * 5`). Now
such outputs are returned as the graph computes them, through the compiled Function
(aot_autograd functionalization/output_histories.py), in one graph (fullgraph=True). Under
no_grad, eager hands back a detached alias of an input that requires grad: the compiled
output required grad (capture's AutogradFunctionApply.detached).

Each case: first call, a cache hit with new values, a new size; aot_eager and inductor;
values, requires_grad, gradients, whether the output shares the input's memory, and a write
into the output (refused where eager refuses it, reaching the input where eager's does).
"""

from __future__ import annotations

import pytest
import torch

import compiler

SIZES = (4, 4, 6)


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 5


class Tail(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[0]
        return x[1:]

    @staticmethod
    def backward(ctx, g):
        out = g.new_zeros(ctx.n, *g.shape[1:])
        out[1:] = g * 3
        return out


class Transposed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.t()

    @staticmethod
    def backward(ctx, g):
        return g.t() * 7


class Flattened(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view(-1)

    @staticmethod
    def backward(ctx, g):
        return g.view(-1, 3) * 2


class TailGradToOther(torch.autograd.Function):
    """A view of `x` whose gradient goes to `w` only."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return x[1:]

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return None, torch.cat([g.new_zeros(1, *g.shape[1:]), g]) * w


class DoubleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 4


# name -> (function of x, second dimension or None)
CASES = {
    "function_returning_input": (lambda x: Identity.apply(x), None),
    "function_returning_slice": (lambda x: Tail.apply(x), None),
    "function_returning_transpose": (lambda x: Transposed.apply(x), 3),
    "function_returning_flat_view": (lambda x: Flattened.apply(x), 3),
    "view_of_function_returning_input": (lambda x: Identity.apply(x).view(-1)[1:], None),
    "function_returning_input_beside_another_output": (lambda x: (Identity.apply(x), x.sin()), None),
    "function_returning_input_twice": (lambda x: (lambda y: (y, y))(Identity.apply(x)), None),
    "function_output_beside_its_slice": (lambda x: (lambda y: (y, y[1:]))(Identity.apply(x)), None),
    "function_on_intermediate_beside_it": (lambda x: (lambda t: (t, Identity.apply(t)))(x * 2), None),
    "function_slices_on_one_intermediate": (lambda x: (lambda t: (Identity.apply(t), t[1:]))(x * 2), None),
    "mark_dirty_on_a_copy": (lambda x: DoubleInPlace.apply(x.clone()), None),
    "mark_dirty_on_a_view_of_a_copy": (lambda x: DoubleInPlace.apply(x.clone()[1:]), None),
    "mark_dirty_on_input": (lambda x: DoubleInPlace.apply(x), None),  # a leaf: eager refuses it with gradients
    "plain_slice": (lambda x: x[1:], None),
    "plain_transpose": (lambda x: x.t(), 3),
    "plain_flat_view": (lambda x: x.view(-1), 3),
}

INDUCTOR_CASES = ("function_returning_input", "function_returning_transpose", "function_output_beside_its_slice",
                  "plain_slice")


def _call(fn, x, grad_mode: bool, seed: int):
    """What a caller can see of fn(x): outputs, which share x's memory, requires_grad, the
    gradient of x from random cotangents, and what a write into each output does."""
    with torch.set_grad_enabled(grad_mode):
        outputs = fn(x)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    seen = {
        "values": [o.detach().clone() for o in outputs],
        "requires_grad": [o.requires_grad for o in outputs],
        "shares_memory": [o.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for o in outputs],
    }
    roots = [o for o in outputs if o.grad_fn is not None]
    if roots:
        gen = torch.Generator().manual_seed(seed)
        torch.autograd.backward(roots, [torch.randn(r.shape, generator=gen) for r in roots])
    seen["grad"] = x.grad
    writes, inputs_after = [], []
    for o in outputs:
        try:
            with torch.set_grad_enabled(grad_mode):
                o.add_(100)
            writes.append("written")
        except RuntimeError as err:  # eager refuses writes into a view a Function returns
            writes.append(f"refused: {'modified inplace' in str(err)}")
        inputs_after.append(x.detach().clone())
    return seen, writes, inputs_after


def _assert_matches_eager(fn, backend: str, cols, *, grad_mode: bool = True, requires_grad: bool = True):
    compiled = compiler.compile(fn, backend=backend, fullgraph=True)
    for step, n in enumerate(SIZES):
        x = torch.randn(n) if cols is None else torch.randn(n, cols)
        expected, expected_writes, expected_inputs = _call(fn, x.clone().requires_grad_(requires_grad), grad_mode, step)
        actual, writes, inputs = _call(compiled, x.clone().requires_grad_(requires_grad), grad_mode, step)
        torch.testing.assert_close(actual, expected, msg=lambda m: f"size {n}, call {step}: {m}")
        assert writes == expected_writes, f"size {n}, call {step}"
        torch.testing.assert_close(inputs, expected_inputs, msg=lambda m: f"size {n}, call {step}, after writes: {m}")


TRAINING_CASES = [c for c in CASES if c != "mark_dirty_on_input"]


@pytest.mark.parametrize("backend,case", [("aot_eager", c) for c in TRAINING_CASES] + [("inductor", c) for c in INDUCTOR_CASES])
def test_training_matches_eager(backend, case):
    fn, cols = CASES[case]
    _assert_matches_eager(fn, backend, cols)


@pytest.mark.parametrize("case", ["function_returning_input", "function_returning_slice", "view_of_function_returning_input",
                                  "mark_dirty_on_input", "plain_slice"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_inference_matches_eager(case, requires_grad):
    """Under no_grad eager's Function returning its input hands back a detached alias of an
    input that requires grad (a plain tensor sharing its memory; writes reach the input)."""
    fn, cols = CASES[case]
    _assert_matches_eager(fn, "aot_eager", cols, grad_mode=False, requires_grad=requires_grad)


def test_gradient_reaching_another_input_through_a_view_of_one():
    """A Function's view of x, which needs no gradient, whose backward gives w's: rebuilt from
    x the output carried no gradient at all."""
    compiled = compiler.compile(lambda x, w: TailGradToOther.apply(x, w), backend="aot_eager", fullgraph=True)
    for n in SIZES:
        x, w = torch.randn(n), torch.randn(n)
        eager_w, our_w = w.clone().requires_grad_(), w.clone().requires_grad_()
        expected, actual = TailGradToOther.apply(x, eager_w), compiled(x.clone(), our_w)
        assert actual.requires_grad == expected.requires_grad
        cotangent = torch.randn(n - 1)
        expected.backward(cotangent)
        actual.backward(cotangent)
        torch.testing.assert_close(our_w.grad, eager_w.grad)
