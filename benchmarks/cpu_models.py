"""CPU model inference through the whole stack (`compiler.compile(backend="inductor")`: capture,
aot_autograd, our C++ kernels) vs eager and torch.compile, HF models from configs with random
weights: GPT-2 (1x128), BERT (2x128), ResNet-18-like, ViT-small. A model the stack cannot
compile yet is reported as failed with the reason.

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


def _compile_seconds(compile_fn, model, inputs):
    compiled = compile_fn(model)
    t0 = time.perf_counter()
    with torch.no_grad():
        compiled(**inputs)
    return compiled, time.perf_counter() - t0


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
        ours, cold = _compile_seconds(lambda m: compiler.compile(m, backend="inductor"), model, inputs)
        compiler.reset()
        ours, warm = _compile_seconds(lambda m: compiler.compile(m, backend="inductor"), model, inputs)
        with torch.no_grad():
            torch.testing.assert_close(_first_tensor(ours(**inputs)), expected, rtol=1e-3, atol=1e-3)
    except Exception as error:  # a benchmark row, not a crash: say why
        row["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        traceback.print_exc()
        return row
    torch._dynamo.reset()
    reference, ref_cold = _compile_seconds(torch.compile, model, inputs)
    torch._dynamo.reset()
    reference, ref_warm = _compile_seconds(torch.compile, model, inputs)
    with torch.no_grad():
        medians = interleaved_medians({"eager": lambda: model(**inputs), "torch.compile": lambda: reference(**inputs),
                                       "ours": lambda: ours(**inputs)}, rounds=10, min_seconds=6)
    row.update(eager_ms=medians["eager"], torch_compile_ms=medians["torch.compile"], ours_ms=medians["ours"])
    row.update(
        speedup_vs_eager=row["eager_ms"] / row["ours_ms"], ratio_to_torch_compile=row["torch_compile_ms"] / row["ours_ms"],
        ours_cold_compile_s=cold, ours_warm_compile_s=warm, torch_compile_cold_s=ref_cold, torch_compile_warm_s=ref_warm,
    )
    return row


def main():
    keys = sys.argv[1:] or list(MODELS)
    results = [run_model(k) for k in keys]
    filename = "cpu_models.json" if keys == list(MODELS) else f"cpu_models_{'_'.join(keys)}.json"
    report([r for r in results if "error" not in r], filename, failed=[r for r in results if "error" in r])


if __name__ == "__main__":
    print(f"{THREADS} threads")
    main()
