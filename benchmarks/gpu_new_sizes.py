"""What a new size costs under dynamic shapes (issue 18): GPT-2 (bf16, batch 8) compiled by us
and called at new sequence lengths, each new length's first call timed and explained by what
it did on the host: block-size timings (`_fastest`), Triton compiles (`JITFunction._do_compile`)
and launches through Triton's own path instead of a compiled binary.

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' :) python benchmarks/gpu_new_sizes.py --out $OUT/new_sizes.json

The second length makes the sizes symbolic (a recompile); after it, a new length should time
nothing and compile nothing. Runs in fresh cache directories, as a first run does.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time

# Python puts this script's folder first on sys.path, where benchmarks/guards.py would shadow
# our `guards` package: look our packages up on PYTHONPATH / site-packages instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
for variable in ("PTC_INDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
    os.environ[variable] = tempfile.mkdtemp(prefix=f"new_sizes_{variable.lower()}_")

LENGTHS = [64, 96, 128, 200, 256, 384, 100, 512]


def _count_calls(counts, owner, name, counted=lambda result: True):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        counts[name] += bool(counted(result))
        return result

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="new_sizes.json")
    parser.add_argument("--batch", type=int, default=8)
    options = parser.parse_args()

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    from triton.runtime.jit import JITFunction

    import compiler
    from inductor.runtime import triton_launch

    counts = collections.Counter()
    _count_calls(counts, triton_launch.TritonLauncher, "_fastest")
    _count_calls(counts, JITFunction, "_do_compile")
    _count_calls(counts, triton_launch.TritonLauncher, "_binary", counted=lambda kernel: kernel is None)

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)).cuda().to(torch.bfloat16).eval()
    compiled = compiler.compile(model, backend="inductor")
    rows = []
    with torch.no_grad():
        for length in LENGTHS:
            ids = torch.randint(0, 50257, (options.batch, length), device="cuda")
            before = dict(counts)
            torch.cuda.synchronize()
            start = time.perf_counter()
            out = compiled(ids).logits
            torch.cuda.synchronize()
            first = time.perf_counter() - start
            start = time.perf_counter()
            compiled(ids)
            torch.cuda.synchronize()
            second = time.perf_counter() - start
            expected = model(ids).logits
            error = ((out.float() - expected.float()).abs().max() / expected.float().abs().max().clamp_min(1)).item()
            row = {"length": length, "first_call_s": round(first, 4), "second_call_s": round(second, 4),
                   "max_rel_error": error,
                   "timings": counts["_fastest"] - before.get("_fastest", 0),
                   "triton_compiles": counts["_do_compile"] - before.get("_do_compile", 0),
                   "triton_path_launches": counts["_binary"] - before.get("_binary", 0)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(options.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "batch": options.batch, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
