"""CPU MLP: Linear(1024,4096)-GELU-Linear(4096,1024) at batch 256, inference and a training step
(forward + backward of out.sum()).

    python benchmarks/cpu_mlp.py
"""

from __future__ import annotations

import torch

from cpu_harness import report, run_workload


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024))


def main():
    torch.manual_seed(0)
    model = mlp()
    x = torch.randn(256, 1024)
    results = [
        run_workload("MLP 1024-4096-1024 b256 inference", model, [x]),
        run_workload("MLP 1024-4096-1024 b256 train step", model, [x.clone().requires_grad_()], training=True),
    ]
    report(results, "cpu_mlp.json")


if __name__ == "__main__":
    main()
