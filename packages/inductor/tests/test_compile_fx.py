"""`compile_fx`, the "inductor" backend: aot_autograd's graphs through each backend's kernels,
for inference and training, compared with eager (outputs and gradients)."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.fx

import inductor
from conftest import assert_same_gradients, backend_options, traced

pytest.importorskip("aot_autograd")


def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(48, 96), torch.nn.GELU(), torch.nn.LayerNorm(96), torch.nn.Dropout(0.0),
        torch.nn.Linear(96, 96), torch.nn.Tanh(), torch.nn.Linear(96, 10), torch.nn.LogSoftmax(-1),
    )


def test_mlp_inference_matches_eager(device):
    model = mlp().to(device)
    x = torch.randn(32, 48, device=device)
    compiled = inductor.compile_fx(traced(model), [x], options=backend_options())
    with torch.no_grad():
        torch.testing.assert_close(compiled(x)[0], model(x), rtol=1e-4, atol=1e-5)


def test_mlp_training_step_matches_eager_gradients(device):
    model = mlp().to(device)
    x = torch.randn(32, 48, device=device, requires_grad=True)
    compiled = inductor.compile_fx(traced(model), [x], options=backend_options())
    assert_same_gradients(compiled, model, x, rtol=1e-4, atol=1e-4)


def test_dropout_training_step_reads_the_forwards_mask_in_backward(device):
    # Drawn inside a kernel (Triton's default) or by aten (C++): the gradient is the forward's mask, scaled.
    x = torch.randn(64, 48, device=device, requires_grad=True)
    compiled = inductor.compile_fx(traced(torch.nn.Dropout(0.4)), [x], options=backend_options())
    out = compiled(x)[0]
    out.sum().backward()
    kept = out != 0
    assert 0.5 < kept.float().mean().item() < 0.7
    torch.testing.assert_close(x.grad, kept.float() / 0.6)
    torch.testing.assert_close(out, torch.where(kept, x.detach() / 0.6, 0.0))


def test_dropout_training_step_with_fallback_random_draws_eagers_masks_under_one_seed(device):
    model = torch.nn.Sequential(torch.nn.Linear(48, 96), torch.nn.Dropout(0.4), torch.nn.GELU(), torch.nn.Linear(96, 10))
    model = model.to(device)
    x = torch.randn(32, 48, device=device)
    compiled = inductor.compile_fx(traced(model), [x], options={**backend_options(), "fallback_random": True})
    torch.manual_seed(11)
    out = compiled(x)[0]
    out.pow(2).sum().backward()
    ours = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    torch.manual_seed(11)
    expected = model(x)
    expected.pow(2).sum().backward()
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)
    for a, p in zip(ours, model.parameters()):
        torch.testing.assert_close(a, p.grad, rtol=1e-4, atol=1e-4)


def test_output_code_is_logged(caplog):
    x = torch.randn(8, 8)
    gm = traced(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()))
    with caplog.at_level(logging.INFO, logger="compiler.output_code"):
        with torch.no_grad():
            inductor.compile_fx(gm, [x])(x)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "def call(args)" in text and 'extern "C"' in text


class ConvReLU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)) * 2


@pytest.mark.parametrize("memory_format", [torch.channels_last, torch.contiguous_format])
def test_training_on_channels_last_input_matches_eager_gradients(memory_format, device):
    # The backward reads the saved relu output with the strides it was traced with (channels
    # last, as eager lays it out): the forward must store it that way.
    model = ConvReLU().to(device)
    x = torch.randn(2, 3, 8, 8, device=device).to(memory_format=memory_format).requires_grad_()
    compiled = inductor.compile_fx(traced(model), [x], options=backend_options())
    out = compiled(x)[0]
    ours = torch.autograd.grad(out.sum(), [x, *model.parameters()])
    expected = model(x)
    assert out.stride() == expected.stride()
    for a, e in zip(ours, torch.autograd.grad(expected.sum(), [x, *model.parameters()])):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)


def test_a_forward_run_uncompiled_hands_saved_values_over_in_the_marked_layouts():
    """A forward that falls back to running its ATen graph (arithmetic on a symbolic number
    lowering has no rule for) still hands each saved value over in the memory order the
    partition marked for the compiled backward; the caller's outputs keep eager's."""
    import sys

    from inductor.layout_optimization import CHANNELS_LAST, SAVED_ORDERS

    compile_fx = sys.modules["inductor.compile_fx"]
    gm = torch.fx.symbolic_trace(lambda x: (x.relu(), x.relu() * 2))
    gm.graph.find_nodes(op="output")[0].meta[SAVED_ORDERS] = (CHANNELS_LAST,)
    x = torch.randn(2, 3, 4, 5)
    returned, saved = compile_fx._uncompiled(gm, [x])(x)
    assert returned.stride() == x.relu().stride()
    assert saved.stride() == torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    torch.testing.assert_close(saved, x.relu() * 2)
