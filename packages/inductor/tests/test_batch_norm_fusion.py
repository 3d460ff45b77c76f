"""Batch norm through `compile_fx` lowers to kernels fused with its neighbours (no aten call per
norm), with eager's outputs, running statistics and gradients, in eval and training mode."""

from __future__ import annotations

import copy
import logging

import pytest
import torch

import inductor

pytest.importorskip("aot_autograd")

from test_compile_fx import traced  # noqa: E402


def _block():
    # No conv bias, as in ResNets: batch norm removes it (its gradient is zero up to rounding).
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU())


def _assert_same_gradients(model, reference):
    # The conv weight's gradient sums ~400 products of the batch norm's input gradient, and
    # they cancel: an entry can be ~1e-3 of the largest one. float32 rounding is relative to
    # the terms, not to that entry, so the absolute tolerance scales with the largest gradient
    # (over 40 seeds ours differed from eager's by at most 3.2e-6 of it; eager itself is off
    # from float64 by ~1e-6 of it).
    for ours, theirs in zip(model.parameters(), reference.parameters()):
        scale = theirs.grad.abs().max().item()
        torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-4, atol=2e-5 * scale)


def _inside_convolution(event) -> bool:
    """Whether a profiled op ran inside aten's convolution: oneDNN's channels-last kernel lays
    the row-major weight out channels-last itself (layout_optimization.py), a copy of its own."""
    while event is not None:
        if event.name == "aten::convolution":
            return True
        event = event.cpu_parent
    return False


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_matches_eager_outputs_and_running_stats(training):
    model = _block().train(training)
    reference = copy.deepcopy(model)
    x = torch.randn(4, 3, 12, 12)
    compiled = inductor.compile_fx(traced(model), [x])
    with torch.no_grad():
        torch.testing.assert_close(compiled(x)[0], reference(x), rtol=1e-4, atol=1e-5)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(model[1], name), getattr(reference[1], name))


def test_batch_norm_training_gradients_match_eager():
    model = _block().train()
    reference = copy.deepcopy(model)
    x = torch.randn(4, 3, 12, 12)
    compiled = inductor.compile_fx(traced(model), [x])
    compiled(x)[0].pow(2).sum().backward()
    reference(x).pow(2).sum().backward()
    _assert_same_gradients(model, reference)


def test_eval_batch_norm_is_no_aten_call(caplog):
    model = _block().eval()
    x = torch.randn(2, 3, 12, 12)
    with caplog.at_level(logging.INFO, logger="compiler.output_code"):
        with torch.no_grad():
            inductor.compile_fx(traced(model), [x])(x)
    wrapper = "\n".join(r.getMessage() for r in caplog.records).split('extern "C"')[0]
    assert "batch_norm" not in wrapper


def test_training_step_writes_running_stats_in_its_kernels():
    """With gradients on, the forward stores the new running statistics into the buffers from
    the kernels computing them: no copy after the call (ResNet-50 had one per statistic, ~160
    per step), and the statistics, outputs and gradients stay eager's."""
    from torch.profiler import ProfilerActivity, profile

    model = _block().train()
    reference = copy.deepcopy(model)
    compiled = inductor.compile_fx(traced(model), [torch.randn(4, 3, 12, 12)])
    for _ in range(2):  # the first call and one with new values (compile_fx's graph is static)
        x = torch.randn(4, 3, 12, 12)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            out = compiled(x)[0]
        copies = [e for e in prof.events()
                  if e.name in ("aten::copy_", "aten::_foreach_copy_") and not _inside_convolution(e)]
        assert copies == []
        out.pow(2).sum().backward()
        reference(x).pow(2).sum().backward()
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            torch.testing.assert_close(getattr(model[1], name), getattr(reference[1], name))
        _assert_same_gradients(model, reference)
