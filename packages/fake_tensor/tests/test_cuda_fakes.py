"""Fakes standing for CUDA tensors (needs a GPU: fake-cuda on a CPU-only torch is not
supported, since torch initializes CUDA for some calls on such tensors)."""

import pytest
import torch
from torch import nn

from fake_tensor import FakeTensorMode, is_fake

pytestmark = pytest.mark.gpu


def metadata(t):
    return t.shape, t.stride(), t.dtype, t.device


def run_both(program, *reals):
    mode = FakeTensorMode()
    fakes = [mode.from_real(r) for r in reals]
    eager = program(*reals)
    with mode:
        fake = program(*fakes)
    return eager, fake


PROGRAMS = {
    "linear_gelu": lambda x: nn.functional.gelu(nn.functional.linear(x, torch.ones(32, 16, device="cuda"))),
    "softmax_half": lambda x: torch.softmax(x.half(), dim=-1),
    "matmul_bf16": lambda x: x.bfloat16() @ x.t().bfloat16(),
    "layer_norm": lambda x: nn.functional.layer_norm(x, (16,)),
    "cpu_scalar": lambda x: x * torch.tensor(3.0),
    "to_cpu": lambda x: x.cpu(),
    "factory": lambda x: torch.zeros(3, 5, device="cuda") + x.sum(),
    # The input has 8 * 16 = 128 elements: (batch 2, channels 4, 4x4) images,
    "conv2d": lambda x: nn.functional.conv2d(x.view(2, 4, 4, 4), torch.ones(3, 4, 3, 3, device="cuda")),
    "conv2d_channels_last": lambda x: nn.functional.conv2d(
        x.view(2, 4, 4, 4).to(memory_format=torch.channels_last), torch.ones(3, 4, 3, 3, device="cuda")
    ),
    # and (batch 2, 2 heads, 8 positions, head dim 4) attention inputs.
    "sdpa_causal_half": lambda x: nn.functional.scaled_dot_product_attention(
        *(x.half().view(2, 2, 8, 4),) * 3, is_causal=True
    ),
}


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_ops_on_cuda_fakes_match_eager_cuda(program):
    eager, fake = run_both(program, torch.randn(8, 16, device="cuda"))
    assert is_fake(fake) and metadata(fake) == metadata(eager)


def test_cpu_fake_moved_to_cuda_reports_cuda():
    eager, fake = run_both(lambda x: x.to("cuda"), torch.randn(3, 4))
    assert metadata(fake) == metadata(eager)


def test_backward_on_cuda_fakes_gives_cuda_fake_grads():
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).cuda()
    x = torch.randn(8, 16, device="cuda")
    model(x).sum().backward()
    mode = FakeTensorMode()
    fake_model = mode.from_module(model)
    with mode:
        fake_model(mode.from_real(x)).sum().backward()
    fake_params = dict(fake_model.named_parameters())
    for name, real in model.named_parameters():
        assert metadata(fake_params[name].grad) == metadata(real.grad), name
