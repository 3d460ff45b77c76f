"""CPU model inference through the whole stack (`compiler.compile(backend="inductor")`: capture,
aot_autograd, our C++ kernels) vs eager and torch.compile, HF models from configs with random
weights: GPT-2 (1x128), BERT (2x128), ResNet-18-like, ViT-small. A model the stack cannot
compile yet is reported as failed with the reason.

Compile time is the first call minus a steady-state call (what compiling added to it), cold
(empty caches) and warm (ours: `compiler.reset()` then the on-disk graph cache; torch.compile:
`torch._dynamo.reset()`). Ours is split into inductor (lowering, scheduling, C++ generation
and g++) and the rest (capture, aot_autograd tracing and partitioning, guards).

    HF_HUB_OFFLINE=1 python benchmarks/cpu_models.py [gpt2 bert resnet vit]
"""

from __future__ import annotations

import os
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from cpu_harness import THREADS, interleaved_medians, report  # noqa: E402

# This folder's guards.py (a benchmark) would shadow the `guards` package that `compiler` imports.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel(GPT2Config()).eval(), {"input_ids": torch.randint(0, 50257, (1, 128))}


def bert():
    from transformers import BertConfig, BertModel

    return BertModel(BertConfig()).eval(), {"input_ids": torch.randint(0, 30522, (2, 128))}


def resnet():
    from transformers import ResNetConfig, ResNetModel

    config = ResNetConfig(depths=[2, 2, 2, 2], hidden_sizes=[64, 128, 256, 512], layer_type="basic")
    return ResNetModel(config).eval(), {"pixel_values": torch.randn(1, 3, 224, 224)}


def vit():
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536)
    return ViTModel(config).eval(), {"pixel_values": torch.randn(1, 3, 224, 224)}


MODELS = {"gpt2": ("GPT-2 1x128", gpt2), "bert": ("BERT-base 2x128", bert),
          "resnet": ("ResNet-18-like 1x224", resnet), "vit": ("ViT-small 1x224", vit)}


def _first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "last_hidden_state"):
        return out.last_hidden_state
    if hasattr(out, "logits"):
        return out.logits
    return out[0]


def _first_call_seconds(compile_fn, model, inputs):
    compiled = compile_fn(model)
    t0 = time.perf_counter()
    with torch.no_grad():
        compiled(**inputs)
    return compiled, time.perf_counter() - t0


def _inductor_seconds() -> float:
    from inductor import metrics

    return metrics.counters.codegen_seconds


def run_model(key):
    import compiler
    import torch._dynamo

    name, build = MODELS[key]
    torch.manual_seed(0)
    model, inputs = build()
    with torch.no_grad():
        expected = _first_tensor(model(**inputs))
    row = {"workload": name}
    try:
        compiler.reset()
        before = _inductor_seconds()
        ours, cold = _first_call_seconds(lambda m: compiler.compile(m, backend="inductor"), model, inputs)
        cold_inductor = _inductor_seconds() - before
        compiler.reset()
        ours, warm = _first_call_seconds(lambda m: compiler.compile(m, backend="inductor"), model, inputs)
        with torch.no_grad():
            torch.testing.assert_close(_first_tensor(ours(**inputs)), expected, rtol=1e-3, atol=1e-3)
    except Exception as error:  # a benchmark row, not a crash: say why
        row["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        traceback.print_exc()
        return row
    torch._dynamo.reset()
    reference, ref_cold = _first_call_seconds(torch.compile, model, inputs)
    torch._dynamo.reset()
    reference, ref_warm = _first_call_seconds(torch.compile, model, inputs)
    with torch.no_grad():
        medians = interleaved_medians({"eager": lambda: model(**inputs), "torch.compile": lambda: reference(**inputs),
                                       "ours": lambda: ours(**inputs)}, rounds=10, min_seconds=6)
    row.update(eager_ms=medians["eager"], torch_compile_ms=medians["torch.compile"], ours_ms=medians["ours"])
    ours_call, ref_call = row["ours_ms"] / 1e3, row["torch_compile_ms"] / 1e3
    row.update(
        speedup_vs_eager=row["eager_ms"] / row["ours_ms"], ratio_to_torch_compile=row["torch_compile_ms"] / row["ours_ms"],
        ours_cold_compile_s=cold - ours_call, ours_warm_compile_s=warm - ours_call,
        ours_cold_inductor_s=cold_inductor, ours_cold_capture_aot_s=cold - ours_call - cold_inductor,
        torch_compile_cold_s=ref_cold - ref_call, torch_compile_warm_s=ref_warm - ref_call,
    )
    return row


def main():
    keys = sys.argv[1:] or list(MODELS)
    results = [run_model(k) for k in keys]
    filename = "cpu_models.json" if keys == list(MODELS) else f"cpu_models_{'_'.join(keys)}.json"
    done = [r for r in results if "error" not in r]
    report(done, filename, failed=[r for r in results if "error" in r])
    print("ours, cold compile:  " + "; ".join(
        f"{r['workload']} {r['ours_cold_compile_s']:.1f}s = inductor {r['ours_cold_inductor_s']:.1f}s + capture/aot/guards "
        f"{r['ours_cold_capture_aot_s']:.1f}s" for r in done))


if __name__ == "__main__":
    print(f"{THREADS} threads")
    main()
