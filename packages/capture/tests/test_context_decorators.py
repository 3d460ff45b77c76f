"""Grad-mode and inference-mode managers used as decorators or called on a function inside
the compiled function (`@torch.no_grad()` on a nested function, `torch.no_grad()(fn)`): each
call of the decorated function runs in the mode, and the mode is restored after it."""

import pytest
import torch

from helpers import check_across_sizes, compile_eager


def no_grad_decorator(x):
    @torch.no_grad()
    def scaled(v):
        return v * 2, torch.is_grad_enabled()

    return scaled(x), x * 3, torch.is_grad_enabled()


def no_grad_called_on_a_function(x):
    manager = torch.no_grad()

    def scaled(v):
        return v * 2

    return manager(scaled)(x), manager(lambda v: v + 1)(x), x.sin()


def enable_grad_inside_no_grad(x):
    with torch.no_grad():

        @torch.enable_grad()
        def grad_on(v):
            return v * 2, torch.is_grad_enabled()

        return grad_on(x), x * 2, torch.is_grad_enabled()


def set_grad_enabled_decorator(x):
    @torch.set_grad_enabled(False)
    def off(v):
        return v * 2, torch.is_grad_enabled()

    # Decorating puts the mode back at once: only calls of `off` run without grad.
    return off(x), x * 2, torch.is_grad_enabled()


def inference_mode_decorator(x):
    @torch.inference_mode()
    def infer(v):
        return (v * 2).sum(), torch.is_inference_mode_enabled()

    @torch.inference_mode
    def bare(v):
        return v.sum()

    return infer(x), bare(x), torch.is_inference_mode_enabled()


def decorators_without_parentheses(x):
    @torch.no_grad
    def off(v):
        return v * 2

    @torch.enable_grad
    def on(v):
        return v * 3

    with torch.no_grad():
        inside = on(x)
    return off(x), inside, torch.is_grad_enabled()


def decorated_function_raises(x):
    @torch.no_grad()
    def fails(v):
        raise ValueError("inside")

    try:
        fails(x)
    except ValueError:
        pass
    return x * 2, torch.is_grad_enabled()


@pytest.mark.parametrize(
    "fn",
    [
        no_grad_decorator, no_grad_called_on_a_function, enable_grad_inside_no_grad, set_grad_enabled_decorator,
        decorators_without_parentheses, decorated_function_raises,
    ],  # fmt: skip
    ids=lambda f: f.__name__,
)
def test_grad_mode_decorators_match_eager(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n, requires_grad=True),))


def test_inference_mode_decorator_matches_eager():
    compiled = compile_eager(inference_mode_decorator, fullgraph=True)
    x = torch.randn(4)
    (total, inside), bare, outside = compiled(x)
    (expected, expected_inside), expected_bare, expected_outside = inference_mode_decorator(x)
    torch.testing.assert_close((total, bare), (expected, expected_bare))
    assert (inside, outside) == (expected_inside, expected_outside)


def test_a_returned_decorated_function_runs_in_the_mode():
    def make(x):
        @torch.no_grad()
        def scaled(v):
            return v * x.sum()

        return scaled

    compiled = compile_eager(make, fullgraph=True)
    x, v = torch.randn(3), torch.randn(3, requires_grad=True)
    assert not compiled(x)(v).requires_grad
    torch.testing.assert_close(compiled(x)(v), make(x)(v))
