"""How long infer_shapes takes on HF GPT-2 (12 layers, config-built, random weights) with
dynamic batch and sequence length, beside a plain FakeTensorMode run with a ShapeEnv and a
static-shape fake run of the same forward.

    HF_HUB_OFFLINE=1 python packages/fake_tensor/tests/analysis/time_gpt2.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from fake_tensor import Dim, FakeTensorMode, ShapeEnv, TensorSpec, infer_shapes


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
    start = time.perf_counter()
    with torch.device("meta"):
        meta_model = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval()
    print(f"build GPT-2 (12 layers) on the meta device: {time.perf_counter() - start:.2f} s")
    spec = TensorSpec((Dim("batch"), Dim("seq", max=1024)), torch.long)

    def dynamic():
        with torch.no_grad():
            return infer_shapes(model, spec)

    def dynamic_meta():
        with torch.no_grad():
            return infer_shapes(meta_model, spec)

    def dynamic_mode():
        # What capture and aot_autograd run: a FakeTensorMode with a ShapeEnv, no analysis.
        mode = FakeTensorMode(shape_env=ShapeEnv())
        fake_model = mode.from_module(model)
        ids = mode.from_real(torch.zeros(4, 64, dtype=torch.long), dynamic_dims=[0, 1], source="ids")
        with mode, torch.no_grad():
            return fake_model(ids)

    def static():
        mode = FakeTensorMode()
        fake_model = mode.from_module(model)
        ids = mode.from_real(torch.zeros(8, 1024, dtype=torch.long))
        with mode, torch.no_grad():
            return fake_model(ids)

    start = time.perf_counter()
    report = dynamic()
    print(f"infer_shapes, first call in this process (sympy and torch caches cold): {time.perf_counter() - start:.2f} s")
    print(report)
    runs = (
        ("infer_shapes, dynamic batch and seq", dynamic),
        ("infer_shapes, dynamic batch and seq, model built on meta", dynamic_meta),
        ("FakeTensorMode(shape_env) forward, dynamic batch and seq, no infer_shapes", dynamic_mode),
        ("static fake forward (8, 1024), no infer_shapes", static),
    )
    for name, fn in runs:
        times = _timed(fn, options.repeat)
        print(f"{name}: median {statistics.median(times):.2f} s, min {min(times):.2f} s over {len(times)} runs")


if __name__ == "__main__":
    main()
