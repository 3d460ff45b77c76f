"""What ops on fakes cost: per-op times, and a GPT-2 forward on fakes (first and repeated).

    python packages/fake_tensor/tests/time_fake_ops.py [--repeat 5]

The GPT-2 forward (HF GPT2LMHeadModel(GPT2Config()), a (8, 1024) batch, no grad) is timed
first in a fresh process, then as the best of `--repeat` further forwards. Each op is timed
on its first call with its argument metadata (the meta kernel runs; for most ops a Python
kernel from torch._refs or torch._decomp) and on later calls with arguments of the same
metadata (served by fake_tensor.meta_output_cache). Times are
wall-clock and vary with machine load: compare runs made side by side.
"""

from __future__ import annotations

import argparse
import collections
import os
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from fake_tensor import FakeTensorMode


def _ops(mode):
    # Sizes GPT-2 does not use, so that the first calls here are first calls.
    x = mode.from_real(torch.empty(4, 256, 384))
    w = mode.from_real(torch.empty(384, 384))
    b = mode.from_real(torch.empty(384))
    x2 = x.view(1024, 384)
    heads = x.view(4, 256, 6, 64).transpose(1, 2)
    return {
        "add": lambda: x + x,
        "add_broadcast": lambda: x + b,
        "mul_scalar": lambda: x * 0.5,
        "tanh": lambda: torch.tanh(x),
        "pow_scalar": lambda: x.pow(3.0),
        "where": lambda: torch.where(x > 0, x, 0.0),
        "to_half": lambda: x.half(),
        "addmm": lambda: torch.addmm(b, x2, w),
        "layer_norm": lambda: torch.nn.functional.layer_norm(x, (384,), b, b),
        "softmax": lambda: torch.softmax(x, -1),
        "sum_dim": lambda: x.sum(-1),
        "sdpa_causal": lambda: torch.nn.functional.scaled_dot_product_attention(heads, heads, heads, is_causal=True),
        "view": lambda: x.view(4, 256, 6, 64),
        "transpose": lambda: x.transpose(1, 2),
        "empty": lambda: torch.empty(8, 1024),
    }


def time_ops(repeat: int) -> None:
    mode = FakeTensorMode()
    with torch.no_grad(), mode:
        for name, op in _ops(mode).items():
            start = time.perf_counter()
            op()
            first = time.perf_counter() - start
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(20):
                    op()
                times.append((time.perf_counter() - start) / 20)
            print(f"  {name:<14} first call {first * 1e6:8.0f} us   repeated {min(times) * 1e6:8.1f} us")


class _CountOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[func] += 1
        return func(*args, **(kwargs or {}))


def time_gpt2(repeat: int) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import GPT2Config, GPT2LMHeadModel

    mode = FakeTensorMode()
    with torch.no_grad(), mode:
        model = GPT2LMHeadModel(GPT2Config()).eval()
        ids = torch.randint(0, model.config.vocab_size, (8, 1024))
        start = time.perf_counter()
        model(ids)
        first = time.perf_counter() - start
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            model(ids)
            times.append(time.perf_counter() - start)
    counter = _CountOps()
    with torch.no_grad(), mode, counter:
        model(ids)
    ops = sum(counter.counts.values())
    print(f"  GPT-2 forward on fakes ({ops} ATen ops): first {first * 1e3:.0f} ms, "
          f"repeated {min(times) * 1e3:.0f} ms ({min(times) / ops * 1e6:.0f} us/op)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    time_gpt2(args.repeat)  # first: its first forward must not meet ops already seen
    print("per op (fakes standing for CPU tensors, no grad):")
    time_ops(args.repeat)


if __name__ == "__main__":
    main()
