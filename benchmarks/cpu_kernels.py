"""CPU memory-bound kernels: pointwise chain, layernorm+gelu+residual, softmax.

    python benchmarks/cpu_kernels.py
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from cpu_harness import report, run_workload


class PointwiseChain(torch.nn.Module):
    def forward(self, x, y):
        return torch.tanh(F.gelu(x * 2 + 1) * y)


class LayerNormGeluResidual(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden)

    def forward(self, x, residual):
        return F.gelu(self.norm(x)) + residual


class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def main():
    torch.manual_seed(0)
    results = [
        run_workload("pointwise tanh(gelu(2x+1)*y) 4096^2", PointwiseChain(),
                     [torch.randn(4096, 4096), torch.randn(4096, 4096)]),
        run_workload("layernorm+gelu+residual 64x512x768", LayerNormGeluResidual(768).eval(),
                     [torch.randn(64, 512, 768), torch.randn(64, 512, 768)]),
        run_workload("softmax(-1) 64x1024x1024", Softmax(), [torch.randn(64, 1024, 1024)]),
    ]
    report(results, "cpu_kernels.json")


if __name__ == "__main__":
    main()
