"""The weight casts of an autocast model (ConvNeXt-tiny's 108 weights and biases, fp32 -> bf16) as
combo kernels of several sizes, beside separate kernels, eager and torch.compile: GPU kernel time
per call (torch.profiler) and wall median (triton.testing.do_bench). It chose
`combo_planning.MAX_COMBO_MEMBERS`: each program of a combo walks the members before it.

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' :) python benchmarks/gpu_combo_casts.py [--members 32,16,8]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import torch


def convnext_tiny_weights() -> list[torch.Tensor]:
    sizes = []
    for dim in [96] * 3 + [192] * 3 + [384] * 9 + [768] * 3:  # one entry per block
        sizes += [(dim, 1, 7, 7), (dim,), (4 * dim, dim), (4 * dim,), (dim, 4 * dim), (dim,)]
    return [torch.randn(*size, device="cuda") for size in sizes]


def casts(*weights):
    return [w.to(torch.bfloat16) for w in weights]


def kernel_ms(fn) -> tuple[float, int]:
    """GPU time per call and kernels per call, over 10 calls."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sum(e.device_time for e in kernels) / 10 / 1000, len(kernels) // 10


def report(name: str, fn) -> None:
    from triton.testing import do_bench

    gpu_ms, launches = kernel_ms(fn)
    wall_ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
    print(f"{name:28s} kernels {gpu_ms:.3f} ms  launches {launches:3d}  wall {wall_ms:.3f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", default="32,16,8", help="combo member caps to compare")
    options = parser.parse_args()
    import compiler
    import inductor.compile_fx  # noqa: F401  (the module, which the package's function name hides)
    from inductor.codegen.triton import combo_planning

    compile_fx = sys.modules["inductor.compile_fx"]
    torch.manual_seed(0)
    weights = convnext_tiny_weights()
    print(f"{len(weights)} casts, {sum(w.numel() for w in weights) * 4 / 1e6:.0f} MB of float32")
    report("eager", lambda: casts(*weights))
    reference = torch.compile(casts)
    report("torch.compile", lambda: reference(*weights))
    cap, combine = combo_planning.MAX_COMBO_MEMBERS, compile_fx.combine_small_kernels
    variants = [(f"ours, combos of {n}", int(n)) for n in options.members.split(",")] + [("ours, no combos", None)]
    for label, members in variants:
        os.environ["PTC_INDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()  # compiled anew, not from the cache
        if members is None:
            compile_fx.combine_small_kernels = lambda steps, *args, **kwargs: steps
        else:
            combo_planning.MAX_COMBO_MEMBERS = members
        try:
            fn = compiler.compile(lambda *ws: casts(*ws), backend="inductor")
            report(label, lambda: fn(*weights))
        finally:
            combo_planning.MAX_COMBO_MEMBERS, compile_fx.combine_small_kernels = cap, combine
            compiler.reset()


if __name__ == "__main__":
    main()
