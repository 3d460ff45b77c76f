"""Peak CPU memory of one step: eager vs torch.compile (CPU inductor) vs ours, on small CPU
analogues of the GPU suite's rows (gpu_models.py): what the GPU's `max_memory_allocated` shows
comes from the same memory plan, partition and constants on the CPU.

Peak is measured by torch.profiler's allocator events (profile_memory=True): every allocation
and free of the CPU allocator, whoever makes it (our wrapper, C++ kernels' externs, autograd),
summed in time order. It is the peak of bytes allocated during the step above what was live
before it (weights and inputs are live before and not counted; outputs are). `held` is what a
compiled module keeps between calls beyond eager: bytes allocated by the first (compiling) call
and never freed, measured the same way.

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' :) HF_HUB_OFFLINE=1 python benchmarks/cpu_memory.py [llama_infer ...]
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

# This folder's guards.py (a benchmark) would shadow the `guards` package that `compiler` imports.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

from inductor.runtime.cpu_memory import allocation_peak  # noqa: E402


# ----------------------------------------------------------------------------------- models


def _llama(dtype):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=256, intermediate_size=704, num_hidden_layers=2, num_attention_heads=8,
                         num_key_value_heads=2, vocab_size=4000, max_position_embeddings=512)
    return LlamaForCausalLM(config).to(dtype)


def _bottleneck(cin, mid, stride):
    class Bottleneck(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
                nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
                nn.Conv2d(mid, mid * 4, 1, bias=False), nn.BatchNorm2d(mid * 4))
            self.skip = nn.Sequential(nn.Conv2d(cin, mid * 4, 1, stride, bias=False), nn.BatchNorm2d(mid * 4))

        def forward(self, x):
            return torch.relu(self.body(x) + self.skip(x))

    return Bottleneck()


def _resnet():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 32, 7, 2, 3, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
        _bottleneck(32, 16, 1), _bottleneck(64, 32, 2), _bottleneck(128, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100))


def _mobile():
    def block(cin, expand, cout, stride):
        mid = cin * expand
        return nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.Hardswish(),
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.Hardswish(),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish(),
        block(16, 4, 24, 2), block(24, 4, 40, 2), block(40, 6, 80, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(80, 100), nn.Hardswish())


def _train_step(model, loss_of):
    def step(target, *args):
        for p in model.parameters():
            p.grad = None
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = loss_of(target, *args)
        loss.backward()
        return loss.detach()

    return step


def _infer_step(output, autocast):
    def step(target, *args):
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            return output(target(*args))

    return step


def _next_token_loss(logits, ids):
    return nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())


def llama_infer():
    model = _llama(torch.bfloat16).eval()
    return model, _infer_step(lambda out: out.logits, False), (torch.randint(0, 4000, (4, 128)),)


def llama_train():
    model = _llama(torch.float32).train()
    step = _train_step(model, lambda target, ids: _next_token_loss(target(ids).logits, ids))
    return model, step, (torch.randint(0, 4000, (2, 128)),)


def resnet_train():
    model = _resnet().to(memory_format=torch.channels_last).train()
    images = torch.randn(8, 3, 64, 64).contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, 100, (8,))
    step = _train_step(model, lambda target, x: nn.functional.cross_entropy(target(x).float(), labels))
    return model, step, (images,)


def stem_train():
    """A ResNet stem alone (conv-bn-relu-maxpool): what max-pool's backward saves shows."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 32, 7, 2, 3, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
    model = model.to(memory_format=torch.channels_last).train()
    images = torch.randn(8, 3, 128, 128).contiguous(memory_format=torch.channels_last)
    step = _train_step(model, lambda target, x: target(x).float().square().mean())
    return model, step, (images,)


def mobile_infer():
    model = _mobile().to(memory_format=torch.channels_last).eval()
    images = torch.randn(8, 3, 96, 96).contiguous(memory_format=torch.channels_last)
    return model, _infer_step(lambda out: out, True), (images,)


MODELS = {f.__name__: f for f in (llama_infer, llama_train, resnet_train, stem_train, mobile_infer)}


def _targets(model):
    import compiler

    yield "eager", model
    torch._dynamo.reset()
    yield "torch.compile", torch.compile(model, backend="inductor")
    compiler.reset()
    yield "ours", compiler.compile(model, backend="inductor")


def measure(name: str) -> dict:
    model, step, args = MODELS[name]()
    row = {}
    for who, target in _targets(model):
        _, held = allocation_peak(lambda: step(target, *args))  # first call: compiles
        step(target, *args)
        peak, _ = allocation_peak(lambda: step(target, *args))
        row[who] = (peak, held)
    return row


def main(names):
    print(f"{'model':14} {'who':14} {'peak MiB':>9} {'held MiB':>9}")
    for name in names or MODELS:
        for who, (peak, held) in measure(name).items():
            print(f"{name:14} {who:14} {peak / 2**20:9.2f} {held / 2**20:9.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
