"""GPU benchmark of the inductor backend: eager vs torch.compile vs ours, side by side.

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' :) python benchmarks/gpu_inductor.py --out $OUT/gpu_inductor.json

Workloads (issue 8): a pointwise chain, layernorm+gelu+residual and a softmax (memory-bound,
reported in GB/s too), a Linear-GELU-Linear training step, GPT-2 inference and training,
BERT-base inference, ResNet-50 and ViT-B/16 inference (timm; skipped where timm is absent).
The method (child processes, cold/warm compiles, CUDA-event medians, the options) is
gpu_harness.py's.
"""

from __future__ import annotations

import os
import sys

# Python puts this script's folder first on sys.path, where benchmarks/guards.py would shadow
# our `guards` package (compiler imports it): look our packages up in site-packages instead,
# and the harness up by its path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.append(_HERE)

from gpu_harness import Workload, call, inference, main, training_step  # noqa: E402

WORKLOADS = ["pointwise", "layernorm_gelu_residual", "softmax", "mlp_train", "gpt2_infer", "gpt2_train",
             "bert_infer", "resnet50_infer", "vit_infer"]


# ----------------------------------------------------------------------------------- workloads
# A builder returns a Workload (gpu_harness.py says what its step returns).


def _pointwise(torch):
    def chain(x, y):
        return torch.tanh(torch.nn.functional.gelu(x * 2 + 1) * y)

    x, y = (torch.randn(8192, 8192, device="cuda") for _ in range(2))
    return Workload(call, chain, (x, y), 3 * x.numel() * 4, 1e-4)


def _layernorm_gelu_residual(torch):
    norm = torch.nn.LayerNorm(1024).cuda()

    def block(x, residual):
        return torch.nn.functional.gelu(norm(x)) + residual

    x, residual = (torch.randn(64, 2048, 1024, device="cuda") for _ in range(2))
    return Workload(call, block, (x, residual), 3 * x.numel() * 4, 1e-4)


def _softmax(torch):
    def scaled_softmax(x):
        return torch.softmax(x * 0.125, dim=-1)

    x = torch.randn(64, 16, 1024, 1024, device="cuda", dtype=torch.bfloat16)
    return Workload(call, scaled_softmax, (x,), 2 * x.numel() * 2, 1e-2)


def _mlp_train(torch):
    model = torch.nn.Sequential(torch.nn.Linear(4096, 16384), torch.nn.GELU(), torch.nn.Linear(16384, 4096)).cuda()
    step = training_step(torch, model, lambda target, x: target(x).float().pow(2).mean())
    return Workload(step, model, (torch.randn(8192, 4096, device="cuda"),))


def _gpt2(torch, batch, seq):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import GPT2Config, GPT2LMHeadModel

    # Dropout off: torch.compile draws its own random numbers (ours draws eager's); rows compare with eager.
    config = GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config).cuda()
    return model, torch.randint(0, config.vocab_size, (batch, seq), device="cuda")


def _gpt2_infer(torch):
    model, ids = _gpt2(torch, 16, 512)
    return Workload(inference(torch, lambda out: out.logits), model.to(torch.bfloat16).eval(), (ids,))


def _gpt2_train(torch):
    model, ids = _gpt2(torch, 8, 512)
    step = training_step(torch, model.train(), lambda target, ids: _next_token_loss(torch, target(ids).logits, ids))
    return Workload(step, model, (ids,))


def _next_token_loss(torch, logits, ids):
    """GPT-2's language-model loss, computed outside the compiled model (as the aot tests do)."""
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())


def _bert_infer(torch):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig()).cuda().to(torch.bfloat16).eval()
    ids = torch.randint(0, model.config.vocab_size, (32, 512), device="cuda")
    return Workload(inference(torch, lambda out: out.last_hidden_state), model, (ids,))


def _timm_infer(torch, name, channels_last):
    import timm

    model = timm.create_model(name, pretrained=False).cuda().eval()
    images = torch.randn(64, 3, 224, 224, device="cuda")
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)

    def step(target, images):
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            return target(images)

    return Workload(step, model, (images,))


BUILDERS = {
    "pointwise": _pointwise,
    "layernorm_gelu_residual": _layernorm_gelu_residual,
    "softmax": _softmax,
    "mlp_train": _mlp_train,
    "gpt2_infer": _gpt2_infer,
    "gpt2_train": _gpt2_train,
    "bert_infer": _bert_infer,
    "resnet50_infer": lambda torch: _timm_infer(torch, "resnet50", True),
    "vit_infer": lambda torch: _timm_infer(torch, "vit_base_patch16_224", False),
}


if __name__ == "__main__":
    main(BUILDERS, WORKLOADS, os.path.abspath(__file__), __doc__.splitlines()[0], "gpu_inductor.json")
