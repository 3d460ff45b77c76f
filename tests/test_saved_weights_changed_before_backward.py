"""A weight changed between the forward that saved it and the backward that reads it.

Eager's backward reads the tensor objects its forward saved. A Linear saves `weight.t()`, a
view made on the weight's storage at that time: after `weight.data = new` (which gives the
weight a new storage) the backward still reads the old values, while `x @ w` saves `w` itself
and reads the new ones; a product `x * w` eager saved was computed from the old values. Writes
through `.data` into the same storage reach the saved weight and its views. Inductor's
partition used to save the weight and recompute the view (or the product) in the backward,
reading the new values: x.grad was off by ~0.3 after `m.weight.data = m.weight.data * 0.5`
between two calls of a Linear. Writes that bump the version counter (`copy_` or `set_` under no_grad) make
eager's backward raise, and ours raises the same error.
"""

from __future__ import annotations

import copy

import pytest
import torch

import compiler

CHANGES = {
    "data_assigned": lambda w: setattr(w, "data", w.data * 0.5),
    "data_written": lambda w: w.data.mul_(0.5),
    "copied_under_no_grad": lambda w: _no_grad(w.copy_, w * 0.5),
    "set_under_no_grad": lambda w: _no_grad(w.set_, w * 0.5),
}

# How the weight reaches the forward: through a view eager saves, or itself.
USES = {
    "linear": lambda m, x: m(x),
    "row_times_input": lambda m, x: x * m.weight[1],
    "reshaped_rows": lambda m, x: x[..., :3] @ m.weight.reshape(-1)[:9].view(3, 3),
    "weight_itself": lambda m, x: x @ m.weight.t().contiguous().t().t(),
}


def _no_grad(fn, *args):
    with torch.no_grad():
        fn(*args)


def _run(program, model, x):
    model, x = copy.deepcopy(model), x.detach().clone().requires_grad_()
    try:
        first, second = program(model, x)
        (first.sum() + 2 * second.sum()).backward()
    except RuntimeError as error:
        return str(error).split(":")[0]
    return first, second, x.grad, model.weight.grad, model.weight.detach()


def _check(program, compiled, shape, eager_raises=False):
    model, x = torch.nn.Linear(4, 3), torch.randn(shape)
    expected, got = _run(program, model, x), _run(compiled, model, x)
    assert isinstance(expected, str) == eager_raises, expected
    if eager_raises:
        assert got == expected
    else:
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("use", USES)
def test_weight_data_assigned_between_two_uses_matches_eager(use, backend):
    def program(m, x):
        first = USES[use](m, x)
        m.weight.data = m.weight.data * 0.5
        return first, USES[use](m, x)

    compiled = compiler.compile(program, backend=backend)
    for shape in ((5, 4), (5, 4), (2, 7, 4)):  # first call, cache hit with new values, new size
        _check(program, compiled, shape)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("change", CHANGES)
def test_weight_changed_after_the_compiled_forward_matches_eager(change, backend):
    def forward(m, x):
        return USES["linear"](m, x).sum(-1) + USES["row_times_input"](m, x).sum(-1)

    compiled_forward = compiler.compile(forward, backend=backend)

    def program_of(fn):
        def program(m, x):
            first = fn(m, x)
            CHANGES[change](m.weight)
            return first, first * 0
        return program

    for shape in ((5, 4), (5, 4), (6, 4)):
        _check(program_of(forward), program_of(compiled_forward), shape, eager_raises=change.endswith("no_grad"))


class _Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.randn(4))
        self.weight = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x * self.scale * self.weight


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_buffer_data_assigned_between_two_uses_matches_eager(backend):
    """The weight's gradient reads x * scale, which eager saved (old scale) and inductor
    recomputed in the backward from the buffer (new scale): w.grad off by up to 5.6."""

    def program(m, x):
        first = m(x)
        m.scale.data = m.scale * 2
        return first, m(x)

    compiled = compiler.compile(program, backend=backend)
    for shape in ((3, 4), (3, 4), (5, 4)):
        model, x = _Scaled(), torch.randn(shape)
        results = []
        for fn in (program, compiled):
            m, xx = copy.deepcopy(model), x.clone().requires_grad_()
            first, second = fn(m, xx)
            (first.sum() + 3 * second.sum()).backward()
            results.append((first, second, xx.grad, m.weight.grad, m.scale))
        torch.testing.assert_close(results[1], results[0])
