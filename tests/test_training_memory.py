"""A compiled training step's peak CPU memory is no higher than eager's, and its gradients
match: the backward frees each saved activation after its last use (aot_autograd hands its
saved tensors over to the compiled backward instead of holding them to the end)."""

from __future__ import annotations

import copy

import pytest
import torch
from inductor.runtime.cpu_memory import allocation_peak

import compiler


def _mlp():
    torch.manual_seed(0)
    widths = [64, 1024, 512, 768, 256, 10]
    layers = []
    for cin, cout in zip(widths, widths[1:]):
        layers += [torch.nn.Linear(cin, cout), torch.nn.Tanh()]
    return torch.nn.Sequential(*layers)


def _step(model, x):
    for p in model.parameters():
        p.grad = None
    loss = model(x).square().mean()
    loss.backward()
    return loss.detach()


def test_training_step_peak_is_at_most_eagers():
    eager = _mlp()
    ours = copy.deepcopy(eager)
    compiled = compiler.compile(ours, backend="inductor")
    for batch in (256, 256):  # the first call compiles; the second is a cache hit with new values
        x = torch.randn(batch, 64)
        torch.testing.assert_close(_step(compiled, x), _step(eager, x), rtol=1e-4, atol=1e-5)
        for mine, theirs in zip(ours.parameters(), eager.parameters()):
            torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-5)
    x = torch.randn(256, 64)
    ours_peak, _ = allocation_peak(lambda: _step(compiled, x))
    eager_peak, _ = allocation_peak(lambda: _step(eager, x))
    assert ours_peak <= eager_peak, (ours_peak, eager_peak)


def test_backward_with_retain_graph_keeps_the_saved_activations_for_a_second_backward():
    eager = _mlp()
    ours = copy.deepcopy(eager)
    compiled = compiler.compile(ours, backend="inductor")
    x = torch.randn(32, 64)
    for model, target in ((eager, eager), (ours, compiled)):
        loss = target(x).square().mean()
        loss.backward(retain_graph=True)
        loss.backward()  # the saved activations are still there: gradients accumulate twice
        with pytest.raises(RuntimeError, match="second time"):
            loss.backward()  # and now freed, as eager's are
    for mine, theirs in zip(ours.parameters(), eager.parameters()):
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-5)
