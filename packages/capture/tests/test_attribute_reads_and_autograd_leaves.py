"""Silent wrong results found by the conformance cases modelled on test/dynamo/test_functions
and test_misc: attributes a tensor's class answers differently from a method (`x.__class__`),
hasattr through a `__getattr__` hook or a property that raises AttributeError, autograd leaves
made in the middle of a graph (`requires_grad_()`, factories with `requires_grad=True`: the
aot_autograd backend returned outputs without grad_fn) and in-place shape changes
(`unsqueeze_`, `t_`: aot_autograd refused the graph). Each test compares with eager on fresh
inputs: the first call, a cache hit with new values, and a call at a new size."""

from __future__ import annotations

import pytest
import torch

from helpers import assert_same, compile_eager, run_and_compare

import capture

SIZES = ((4,), (4,), (7,))


def agree(compiled, fn, make_args=lambda shape: (torch.randn(shape),)):
    for shape in SIZES:
        run_and_compare(compiled, fn, make_args(shape))


def test_tensor_class_attribute_is_its_type():
    """`x.__class__` was the metaclass `_TensorMeta` bound as a method of x (so the f-string
    said "_TensorMeta" and a branch on it took the wrong side)."""

    def fn(x):
        s = f"{x.__class__.__name__}!"
        return (x + 1 if s.startswith("Tensor") else x - 1), s, x.__class__ is type(x)

    agree(compile_eager(fn, fullgraph=True), fn)
    # A parameter (the comparison helper copies inputs as plain tensors, so it is called directly).
    compiled = compile_eager(fn, fullgraph=True)
    for shape in SIZES:
        p = torch.nn.Parameter(torch.randn(shape))
        assert_same(compiled(p), fn(p))


def test_tensor_hasattr_reads_the_class_not_its_metaclass():
    def fn(x):
        return x * 2, hasattr(x, "mro"), hasattr(x, "sin"), hasattr(x, "__class__")

    agree(compile_eager(fn, fullgraph=True), fn)


class _Fallback:
    def __init__(self):
        self.real = 3

    def __getattr__(self, name):
        if name.startswith("fake_"):
            return len(name)
        raise AttributeError(name)


class _Properties:
    @property
    def missing(self):
        raise AttributeError("computed from nothing")

    @property
    def present(self):
        return 2


def test_hasattr_on_a_new_object_asks_getattr_and_properties():
    """hasattr is getattr answering AttributeError with False; on an object made inside the
    compiled function it used to ask only the class (a `__getattr__` hook's names were absent,
    a property raising AttributeError present)."""

    def fn(x):
        f, p = _Fallback(), _Properties()
        flags = (hasattr(f, "fake_z"), hasattr(f, "real"), hasattr(f, "other"), hasattr(p, "missing"), hasattr(p, "present"))
        return x + sum(flags), flags

    agree(compile_eager(fn, fullgraph=True), fn)


def _requires_grad_on_intermediate(x):
    y = x.clone()
    y.requires_grad_(True)
    return y * 2, y.requires_grad, y.is_leaf


def _requires_grad_on_input(x):
    x.requires_grad_()
    return x * 2


def _factory_requires_grad(x):
    w = torch.ones(x.shape[0], requires_grad=True)
    return w * x, w.requires_grad


def _like_factory_requires_grad(x):
    return torch.zeros_like(x, requires_grad=True) + x


def _unsqueeze_in_place_on_input(x):
    x.unsqueeze_(0)
    return x.shape, x + 1


def _transpose_in_place_on_intermediate(x):
    y = x.clone()
    y.unsqueeze_(0)
    y.t_()
    return y + 1, y.shape


LEAVES_AND_SHAPES = [
    _requires_grad_on_intermediate,
    _requires_grad_on_input,
    _factory_requires_grad,
    _like_factory_requires_grad,
    _unsqueeze_in_place_on_input,
    _transpose_in_place_on_intermediate,
]


@pytest.mark.parametrize("fn", LEAVES_AND_SHAPES, ids=lambda fn: fn.__name__.strip("_"))
def test_graph_breaks_at_new_autograd_leaves_and_in_place_shape_changes(fn):
    """The call runs outside the graph (a break), as torch.compile does; the eager backend gave
    right answers before, aot_autograd lost the outputs' grad_fn or refused the graph."""
    agree(compile_eager(fn), fn)
    with pytest.raises(capture.Unsupported):
        compile_eager(fn, fullgraph=True)(torch.randn(4))


@pytest.mark.parametrize("fn", LEAVES_AND_SHAPES, ids=lambda fn: fn.__name__.strip("_"))
def test_new_autograd_leaves_and_in_place_shape_changes_through_aot_autograd(fn):
    aot_autograd = pytest.importorskip("aot_autograd")
    agree(capture.optimize(fn, aot_autograd.aot_eager), fn)


def test_requires_grad_that_changes_nothing_stays_in_the_graph():
    def fn(x):
        return x.requires_grad_(True) * 2, x.detach().requires_grad_(False) + 1

    compiled = compile_eager(fn, fullgraph=True)
    agree(compiled, fn, lambda shape: (torch.randn(shape, requires_grad=True),))
