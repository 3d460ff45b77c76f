"""Parameters that only an output the loss does not use depends on get no gradient, as in
eager: `.grad` stays None (not zeros), so an optimizer skips them (AdamW's weight decay and
moments leave them alone) and `autograd.grad(..., allow_unused=True)` returns None. A compiled
graph's backward used to receive zeros for such outputs and return zero gradients
(torch.compile does too). Against eager, over two steps, under aot_eager and inductor."""

from __future__ import annotations

import copy

import pytest
import torch

import compiler


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk, self.head_a, self.head_b = (torch.nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        h = self.trunk(x)
        return self.head_a(h), self.head_b(h), h.sum()


BACKWARDS = {
    "first_head": lambda out: out[0].sum().backward(),
    "second_head": lambda out: out[1].sum().backward(),
    "trunk_only": lambda out: out[2].backward(),
    "one_then_the_other": lambda out: (out[0].sum().backward(retain_graph=True), out[1].sum().backward()),
    "two_roots": lambda out: torch.autograd.backward([out[0].sum(), out[2]]),
}


def _gradients(model):
    return {name: p.grad for name, p in model.named_parameters()}


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("backward", BACKWARDS)
def test_gradients_of_parameters_the_loss_does_not_reach(backward, backend):
    model = TwoHeads()
    expected_model = copy.deepcopy(model)
    compiled = compiler.compile(model, backend=backend)
    for _ in range(2):
        x = torch.randn(3, 4)
        BACKWARDS[backward](expected_model(x))
        BACKWARDS[backward](compiled(x))
        expected, actual = _gradients(expected_model), _gradients(model)
        assert {n for n, g in actual.items() if g is None} == {n for n, g in expected.items() if g is None}
        torch.testing.assert_close({n: g for n, g in actual.items() if g is not None},
                                   {n: g for n, g in expected.items() if g is not None})


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_adamw_leaves_parameters_without_gradients_alone(backend):
    model = TwoHeads()
    expected_model = copy.deepcopy(model)
    compiled = compiler.compile(model, backend=backend)
    optimizers = [torch.optim.AdamW(m.parameters(), weight_decay=0.5) for m in (expected_model, model)]
    for _ in range(3):
        x = torch.randn(3, 4)
        for run, optimizer in zip((expected_model, compiled), optimizers):
            run(x)[0].sum().backward()
            optimizer.step()
            optimizer.zero_grad()
    torch.testing.assert_close(dict(model.named_parameters()), dict(expected_model.named_parameters()))


def test_autograd_grad_allow_unused_returns_none_for_them():
    model = TwoHeads()
    compiled = compiler.compile(model, backend="aot_eager")
    params = list(model.parameters())
    grads = torch.autograd.grad(compiled(torch.randn(3, 4))[0].sum(), params, allow_unused=True, create_graph=True)
    expected = torch.autograd.grad(model(torch.randn(3, 4))[0].sum(), params, allow_unused=True)
    assert [g is None for g in grads] == [g is None for g in expected]
