"""How long infer_shapes takes on HF GPT-2 (12 layers, config-built, random weights) with
dynamic batch and sequence length, beside a static-shape fake run of the same forward.

    HF_HUB_OFFLINE=1 python packages/fake_tensor/tests/analysis/time_gpt2.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from fake_tensor import Dim, FakeTensorMode, TensorSpec, infer_shapes


def _timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import transformers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()

    torch.manual_seed(0)
    start = time.perf_counter()
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval()
    print(f"build GPT-2 (12 layers, real weights on CPU): {time.perf_counter() - start:.2f} s")

    def dynamic():
        with torch.no_grad():
            return infer_shapes(model, TensorSpec((Dim("batch"), Dim("seq", max=1024)), torch.long))

    def static():
        mode = FakeTensorMode()
        fake_model = mode.from_module(model)
        ids = mode.from_real(torch.zeros(8, 1024, dtype=torch.long))
        with mode, torch.no_grad():
            return fake_model(ids)

    report = dynamic()
    print(report)
    for name, fn in (("infer_shapes, dynamic batch and seq", dynamic), ("static fake forward (8, 1024)", static)):
        times = _timed(fn, options.repeat)
        print(f"{name}: median {statistics.median(times):.2f} s, min {min(times):.2f} s over {len(times)} runs")


if __name__ == "__main__":
    main()
