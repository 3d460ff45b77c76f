"""Autograd the compiled code runs itself, under the backends that differentiate the graph.

A custom autograd.Function whose backward reads values (indexing by a saved index tensor,
`.item()`, `nonzero`, branching on a gradient) cannot be traced on fake tensors: aot_autograd
failed compiling it (TracingError, GuardOnDataDependentError). It now breaks the graph around
the call and runs eagerly, as under torch.compile; fullgraph=True refuses at the user's line.

`torch.autograd.grad` without retain_graph frees the graph it walks; a compiled function that
also returned a tensor computed through that graph failed compiling ("Trying to backward
through the graph a second time"). It now breaks the graph at the call, so the caller gets
eager's tensor: values, gradients, and a later `backward()` that raises where eager's does.

`torch.autograd.backward(...)` (as `Tensor.backward()`) breaks the graph: aot_autograd failed
compiling it ("does not require grad", "backward through the graph a second time").

Each case against eager: first call, a cache hit with new values, a new size.
"""

from __future__ import annotations

import pytest
import torch
from torch.autograd.function import once_differentiable

import compiler
from capture import Unsupported

SIZES = (4, 4, 6)


def cases_and_backends(cases, *, with_inductor):
    """Every case under aot_eager, and `with_inductor` under inductor too (C++ kernels take
    a while to build: one case of each kind is enough for the mechanism)."""
    return [(case, "aot_eager") for case in cases] + [(case, "inductor") for case in with_inductor]


def _backward(outputs, seed: int):
    """Backpropagate every output that requires grad with random cotangents: None, or the
    error's type and message head."""
    roots = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad]
    gen = torch.Generator().manual_seed(seed)
    try:
        torch.autograd.backward(roots, [torch.randn(r.shape, generator=gen) for r in roots])
    except RuntimeError as err:
        return type(err), str(err)[:40]
    return None


def assert_matches_eager(fn, backend: str, *, inputs=lambda n: (torch.randn(n),), compiled=None):
    compiled = compiled or compiler.compile(fn, backend=backend)
    for step, n in enumerate(SIZES):
        args = inputs(n)
        eager_args = [a.detach().clone().requires_grad_() for a in args]
        ours_args = [a.detach().clone().requires_grad_() for a in args]
        expected, actual = fn(*eager_args), compiled(*ours_args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        actual = actual if isinstance(actual, tuple) else (actual,)
        torch.testing.assert_close(actual, expected)
        assert [a.requires_grad for a in actual] == [e.requires_grad for e in expected]
        assert _backward(actual, step) == _backward(expected, step)
        torch.testing.assert_close([a.grad for a in ours_args], [a.grad for a in eager_args])


# --- custom autograd.Function whose backward reads values ------------------------------------


class ArgmaxIndex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        i = x.argmax()
        ctx.save_for_backward(i)
        ctx.mark_non_differentiable(i)
        ctx.n = x.shape[0]
        return x.max(), i

    @staticmethod
    def backward(ctx, g, gi):
        (i,) = ctx.saved_tensors
        out = torch.zeros(ctx.n)
        out[i] = g
        return out


class ItemScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.abs().max())
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return g * s.item()


class PositiveOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.relu()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        index = (x > 0).nonzero().squeeze(1)
        out = torch.zeros_like(g)
        out[index] = g[index]
        return out


class SignOfGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        if g.sum() > 0:
            return g * 3
        return -g


class OnceWithFloat(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * float(x.sum())


class NeedsInputGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return (g * w if ctx.needs_input_grad[0] else None, g * x if ctx.needs_input_grad[1] else None)


READING_BACKWARDS = {
    "index_by_saved_argmax": lambda x: ArgmaxIndex.apply(x)[0] * 2,
    "item": lambda x: ItemScale.apply(x).sin(),
    "nonzero": lambda x: PositiveOnly.apply(x) * 2,
    "branch_on_gradient": lambda x: SignOfGradient.apply(x) * x,
    "once_differentiable_float": lambda x: OnceWithFloat.apply(x) * 2,
}


@pytest.mark.parametrize(("case", "backend"), cases_and_backends(READING_BACKWARDS, with_inductor=["index_by_saved_argmax"]))
def test_function_whose_backward_reads_values(case, backend):
    assert_matches_eager(READING_BACKWARDS[case], backend)


def test_function_whose_backward_reads_values_breaks_the_graph():
    explained = compiler.explain(READING_BACKWARDS["index_by_saved_argmax"])(torch.randn(4, requires_grad=True))
    assert "the backward of the autograd.Function ArgmaxIndex cannot be traced" in str(explained.break_reasons[0])


def test_fullgraph_names_the_apply_line():
    def fn(x):
        return ArgmaxIndex.apply(x)[0] * 2  # the apply line

    with pytest.raises(Unsupported, match="backward of the autograd.Function ArgmaxIndex") as info:
        compiler.compile(fn, backend="aot_eager", fullgraph=True)(torch.randn(4, requires_grad=True))
    assert "# the apply line" in str(info.value)


def test_function_reading_needs_input_grad_stays_in_the_graph():
    """Only one input requires grad: the backward skips the other's gradient."""
    def fn(x, w):
        return NeedsInputGrad.apply(x, w.detach()) + 1

    explained = compiler.explain(fn)(torch.randn(4, requires_grad=True), torch.randn(4))
    assert explained.graph_break_count == 0
    assert_matches_eager(fn, "aot_eager", inputs=lambda n: (torch.randn(n), torch.randn(n)))


# --- torch.autograd.grad freeing the history of what the function returns ----------------------


class SavesInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


def _grad_returned(x):
    y = (x * x).sum()
    (g,) = torch.autograd.grad(y, x)
    return y, g


def _grad_of_two_returned(x):
    a, b = (x * x).sum(), x.sin().sum()
    (g,) = torch.autograd.grad([a, b], [x])
    return a, b, g


def _grad_then_used(x):
    y = (x * x).sum()
    (g,) = torch.autograd.grad(y, x, retain_graph=False)
    return y * 3 + x.sum(), g


def _grad_through_function_saving_tensors(x):
    y = SavesInput.apply(x).sum()
    (g,) = torch.autograd.grad(y, x)
    return y, g


def _inner_grad(x):
    y = (x * x).sum()
    return y, torch.autograd.grad(y, x)[0]


def _grad_in_inlined_call(x):
    y, g = _inner_grad(x)
    return y + 1, g


def _grad_then_break_with_history_live(x):
    y = (x * x).sum()
    (g,) = torch.autograd.grad(y, x)
    print(end="")  # a graph break while y is live
    return y, g * 2


FREED_HISTORY = {
    "returned": _grad_returned,
    "two_outputs_returned": _grad_of_two_returned,
    "used_after": _grad_then_used,
    "through_function_saving_tensors": _grad_through_function_saving_tensors,
    "in_inlined_call": _grad_in_inlined_call,
    "live_at_a_later_break": _grad_then_break_with_history_live,
}


@pytest.mark.parametrize(("case", "backend"), cases_and_backends(FREED_HISTORY, with_inductor=["returned"]))
def test_autograd_grad_freeing_what_the_function_returns(case, backend):
    assert_matches_eager(FREED_HISTORY[case], backend)


def _grad_retained(x):
    y = (x * x).sum()
    (g,) = torch.autograd.grad(y, x, retain_graph=True)
    return y, g


def _grad_created(x):
    y = (x * x).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    return y, g


def _grad_of_history_without_saved_tensors(x):
    y = x.sum() + x.mean()  # SumBackward0, MeanBackward0 and AddBackward0 keep no tensors
    (g,) = torch.autograd.grad(y, x)
    return y, g


def _grad_not_returned_with(x):
    (g,) = torch.autograd.grad((x * x).sum(), x)
    return x.sin().sum(), g


ONE_GRAPH = {
    "retain_graph": _grad_retained,
    "create_graph": _grad_created,
    "no_saved_tensors": _grad_of_history_without_saved_tensors,
    "freed_history_not_returned": _grad_not_returned_with,
}


@pytest.mark.parametrize("case", ONE_GRAPH)
def test_autograd_grad_keeping_one_graph(case):
    explained = compiler.explain(ONE_GRAPH[case])(torch.randn(4, requires_grad=True))
    assert explained.graph_break_count == 0
    assert_matches_eager(ONE_GRAPH[case], "aot_eager")


def test_autograd_grad_freeing_what_the_function_returns_breaks_there():
    explained = compiler.explain(_grad_returned)(torch.randn(4, requires_grad=True))
    assert "torch.autograd.grad frees the autograd graph it walks" in str(explained.break_reasons[0])


def test_fullgraph_names_the_autograd_grad_line():
    def fn(x):
        y = (x * x).sum()
        (g,) = torch.autograd.grad(y, x)  # the grad line
        return y, g

    with pytest.raises(Unsupported, match="torch.autograd.grad frees") as info:
        compiler.compile(fn, backend="aot_eager", fullgraph=True)(torch.randn(4, requires_grad=True))
    assert "# the grad line" in str(info.value)


# --- torch.autograd.backward, which writes the leaves' .grad ------------------------------------


def _backward_then_grad_read(x):
    y = (x * x).sum()
    torch.autograd.backward(y)
    return y.detach() * 2


def _backward_with_inputs_returning_the_root(x):
    y = (x * x).sum()
    torch.autograd.backward([y], inputs=[x])
    return y


@pytest.mark.parametrize("fn", [_backward_then_grad_read, _backward_with_inputs_returning_the_root], ids=lambda f: f.__name__)
def test_autograd_backward_inside(fn):
    assert_matches_eager(fn, "aot_eager")


# --- Python numbers a Function's methods read -------------------------------------------------

SCALE = 2.0


def _scale():
    return SCALE


class ScaledByGlobal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * SCALE

    @staticmethod
    def backward(ctx, g):
        return g * SCALE


class BackwardScaledThroughHelper(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        return g * _scale()


def _scaled_by_closure():
    settings = {"scale": 2.0}
    scale = settings["scale"]

    class ScaledByCell(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * scale

    def set_scale(value):
        nonlocal scale
        scale = value

    return ScaledByCell, set_scale


def _set_global_scale(value):
    global SCALE
    SCALE = value


@pytest.mark.parametrize(("where", "backend"), cases_and_backends(["global", "helper", "closure"], with_inductor=["global"]))
def test_function_reading_a_changed_python_number(where, backend):
    """The number read is changed between calls: the next call must use the new one (the
    graph had the first baked in: value and gradient scaled by 2.0 where eager used 3.0)."""
    if where == "closure":
        function, set_scale = _scaled_by_closure()
    else:
        function = ScaledByGlobal if where == "global" else BackwardScaledThroughHelper
        set_scale = _set_global_scale
    def fn(x):
        return function.apply(x).sin()

    compiled = compiler.compile(fn, backend=backend)
    try:
        for scale in (2.0, 3.0):
            set_scale(scale)
            assert_matches_eager(fn, backend, compiled=compiled)
    finally:
        _set_global_scale(2.0)


class Defaults:
    SCALE = 2.0


class Settings:
    def __init__(self):
        self.scale = 2.0


SETTINGS = Settings()
CONFIG = {"scale": 2.0}


class ScaledByClassAttribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * Defaults.SCALE

    @staticmethod
    def backward(ctx, g):
        return g * Defaults.SCALE


class ScaledBySettings(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * SETTINGS.scale


class ScaledByConfigItem(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * CONFIG["scale"]

    @staticmethod
    def backward(ctx, g):
        return g * 2


@pytest.mark.parametrize(("function", "owner", "name"), [(ScaledByClassAttribute, Defaults, "SCALE"),
                                                         (ScaledBySettings, SETTINGS, "scale"),
                                                         (ScaledByConfigItem, CONFIG, "scale")],
                         ids=["class", "instance", "dict_item"])
def test_function_reading_a_changed_attribute(function, owner, name):
    def fn(x):
        return function.apply(x).sin()

    compiled = compiler.compile(fn, backend="aot_eager")
    try:
        for scale in (2.0, 3.0):
            _set(owner, name, scale)
            assert_matches_eager(fn, "aot_eager", compiled=compiled)
    finally:
        _set(owner, name, 2.0)


def _set(owner, name, value):
    if isinstance(owner, dict):
        owner[name] = value
    else:
        setattr(owner, name, value)


class Patched(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_function_whose_backward_is_replaced_between_calls():
    def fn(x):
        return Patched.apply(x).sin()

    original = Patched.backward
    compiled = compiler.compile(fn, backend="aot_eager")
    try:
        assert_matches_eager(fn, "aot_eager", compiled=compiled)
        Patched.backward = staticmethod(lambda ctx, g: g * 5)  # the gradient eager now gives: 5 * cos
        assert_matches_eager(fn, "aot_eager", compiled=compiled)
    finally:
        Patched.backward = staticmethod(original)


# --- a Function returning a view of its input ---------------------------------------------------


class ReturnsInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 5


class ReturnsTail(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[0]
        return x[1:]

    @staticmethod
    def backward(ctx, g):
        out = g.new_zeros(ctx.n)
        out[1:] = g * 3
        return out


VIEWS_OF_INPUTS = {
    "input_itself": lambda x: ReturnsInput.apply(x),
    "slice_of_input": lambda x: ReturnsTail.apply(x),
    "input_itself_beside_another_output": lambda x: (ReturnsInput.apply(x), x.sin()),
    "slice_of_intermediate": lambda x: ReturnsTail.apply(x * 2),
}


@pytest.mark.parametrize("case", VIEWS_OF_INPUTS)
def test_function_returning_a_view_of_its_input(case):
    """aot_eager regenerated an output aliasing a graph input from the input, with the view's
    backward: the gradient skipped the Function's (x.grad 1 where eager's is 5)."""
    assert_matches_eager(VIEWS_OF_INPUTS[case], "aot_eager")
