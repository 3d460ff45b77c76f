"""What a training loop does to gradients between backward and the optimizer step, compiled
(aot_eager, and inductor with C++ kernels) against eager over three calls with new values:
`clip_grad_norm_` (foreach and not), `clip_grad_value_`, `get_total_norm`, and GradScaler
steps. These read `.grad` of the parameters passed in and write it in place. A scaler kept
across steps skips the step whose gradients overflow, a branch on the truth of a changing
float (`if not sum(found_inf)`), which raised an internal error.

Recorded as one graph call, clip_grad_norm_ was traced by aot_autograd on detached aliases of
the parameters, whose `.grad` is None: the compiled step returned a norm of 0 and left the
gradients unclipped. Inlined, torch's grouping of the gradients by device and dtype returns
a dict keyed by (device, dtype), whose tensors were then constants of the entry: later calls
clipped the first call's gradients.
"""

from __future__ import annotations

import pytest
import torch

import compiler


def _parameters():
    parameters = [torch.nn.Parameter(torch.randn(4, 3)), torch.nn.Parameter(torch.randn(5))]
    for p in parameters:
        p.grad = torch.randn_like(p) * 3
    return parameters


def clip_norm_foreach(parameters):
    return torch.nn.utils.clip_grad_norm_(parameters, 1.0, foreach=True)


def clip_norm(parameters):
    return torch.nn.utils.clip_grad_norm_(parameters, 0.5, norm_type=3.0)


def clip_value(parameters):
    torch.nn.utils.clip_grad_value_(parameters, 0.5, foreach=True)


def total_norm(parameters):
    return torch.nn.utils.get_total_norm([p.grad for p in parameters], 2.0, foreach=True)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("program", [clip_norm_foreach, clip_norm, clip_value, total_norm], ids=lambda f: f.__name__)
def test_gradient_utilities_match_eager(program, backend):
    compiled = compiler.compile(program, backend=backend)
    for seed in range(3):
        torch.manual_seed(seed)
        ours = _parameters()
        torch.manual_seed(seed)
        theirs = _parameters()
        torch.testing.assert_close(compiled(ours), program(theirs))
        for p, q in zip(ours, theirs):
            torch.testing.assert_close(p.grad, q.grad)


def _scaled_step(model, optimizer, x):
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    loss = model(x).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    scaler.step(optimizer)
    scaler.update()
    return loss


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_grad_scaler_step_matches_eager(backend):
    compiled = compiler.compile(_scaled_step, backend=backend)
    for seed in range(3):
        results = []
        for step in (compiled, _scaled_step):
            torch.manual_seed(seed)
            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, foreach=True)
            x = torch.randn(3, 4)
            results.append((step(model, optimizer, x), [p.detach().clone() for p in model.parameters()]))
        torch.testing.assert_close(results[0], results[1])


def _step_with_a_kept_scaler(model, optimizer, scaler, x):
    loss = model(x).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    scaler.step(optimizer)  # skipped where a gradient is not finite: `if not sum(found_inf)`
    scaler.update()
    optimizer.zero_grad()
    return loss.detach()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_grad_scaler_kept_across_steps_matches_eager(backend):
    # The scaler skips the step whose gradients overflow (the third) and backs its scale off.
    compiled = compiler.compile(_step_with_a_kept_scaler, backend=backend)
    runs = []
    for step in (compiled, _step_with_a_kept_scaler):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
        losses, scales = [], []
        for i in range(5):
            torch.manual_seed(i)
            losses.append(step(model, optimizer, scaler, torch.randn(3, 4) * (1e30 if i == 2 else 1)))
            scales.append(scaler.get_scale())
        runs.append((losses, scales, [p.detach().clone() for p in model.parameters()]))
    torch.testing.assert_close(runs[0][0], runs[1][0], equal_nan=True)
    assert runs[0][1] == runs[1][1]
    torch.testing.assert_close(runs[0][2], runs[1][2])
