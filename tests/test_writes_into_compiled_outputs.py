"""What a caller does with a compiled module's outputs after the call, in a training step: writes
into them in place, sets requires_grad on them, then backward. HF wav2vec2 and hubert zero the
padded frames of their feature projection (a 3-d `nn.Linear`, whose result views its matmul)
after a graph break, and make `input_values[:, None]` require grad; a compiled output that was a
view made inside the autograd.Function refused the write ("Output 0 of _CompiledFunction is a
view and is being modified inplace").

Against eager, on every backend, static and dynamic: outputs, which outputs view the inputs,
parameters or each other, the inputs and parameters after the writes, and gradients; first
call, fresh values, a new size.
"""

from __future__ import annotations

import copy

import pytest
import torch

import compiler


class FeatureProjection(torch.nn.Module):
    """wav2vec2's: the projection's padded frames are zeroed by the caller."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(6)
        self.projection = torch.nn.Linear(6, 8)

    def forward(self, x):
        return (self.projection(self.norm(x)),)


class InputView(torch.nn.Module):
    """wav2vec2's feature encoder: `input_values[:, None]` then `requires_grad = True`."""

    def forward(self, x):
        return x[:, None], x.sum(-1)


class ParameterRow(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 6))

    def forward(self, x):
        return self.weight[0], x @ self.weight.t()


class OverlappingViews(torch.nn.Module):
    """Two outputs viewing one tensor the graph made: a write through one shows in the other."""

    def __init__(self):
        super().__init__()
        self.projection = torch.nn.Linear(6, 6)

    def forward(self, x):
        t = self.projection(x)
        return t[..., :4], t[..., 2:]


def zero_padding(outputs, mask):
    outputs[0][~mask] = 0


def require_grad(outputs, mask):
    if not outputs[0].requires_grad:
        outputs[0].requires_grad = True


def scale_in_place(outputs, mask):
    outputs[0].mul_(2)


CASES = {
    "projection_padding_zeroed": (FeatureProjection, zero_padding),
    "input_view_requires_grad": (InputView, require_grad),
    "parameter_row_scaled": (ParameterRow, scale_in_place),
    "overlapping_views_scaled": (OverlappingViews, scale_in_place),
}


def _step(model, call, x, mask, write):
    outputs = call(x)
    views = [(o._base is x, any(o._base is p for p in model.parameters()), o.requires_grad) for o in outputs]
    with torch.no_grad() if isinstance(model, ParameterRow) else torch.enable_grad():
        write(outputs, mask)  # a parameter's row: eager refuses the write with grad mode on
    differentiable = [o for o in outputs if o.requires_grad]
    weights = [torch.linspace(-1, 1, o.numel()).view(o.shape) for o in differentiable]
    sum((o * w).sum() for o, w in zip(differentiable, weights)).backward()
    grads = [None if p.grad is None else p.grad.clone() for p in [x, *model.parameters()]]
    return [o.detach().clone() for o in outputs], views, grads, [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("case", CASES)
def test_writes_into_outputs_after_the_call_match_eager(case, backend, dynamic):
    make, write = CASES[case]
    torch.manual_seed(0)
    eager = make()
    ours = copy.deepcopy(eager)
    compiled = compiler.compile(ours, backend=backend, dynamic=dynamic)
    for length in (5, 5, 7):
        x = torch.randn(2, length, 6)
        mask = torch.arange(length) < torch.tensor([[length], [length - 2]])
        for model in (eager, ours):
            model.zero_grad(set_to_none=True)
        expected = _step(eager, eager, x.clone(), mask, write)
        actual = _step(ours, compiled, x.clone(), mask, write)
        assert actual[1] == expected[1]
        torch.testing.assert_close(actual, expected)
