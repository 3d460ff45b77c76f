"""Host time per call of a compiled model whose kernels cost next to nothing (issue 18's
host-bound GPU rows, measured on CPU): ours vs torch.compile vs eager, and where ours spends it.

    python benchmarks/host_overhead.py [--model mlp|conv|decoder] [--device cpu|cuda] [--profile] [--cuda-graph-bookkeeping]

Models (inference, no_grad, one torch thread, tiny tensors so aten calls and C++ kernels are
cheap next to the Python around them):
  mlp   40 x (Linear(8, 8), LayerNorm, GELU) with a residual: 161 parameters, 40 addmm calls
  conv  a stem and 20 blocks of depthwise conv, BatchNorm, Hardswish, 1x1 conv, BatchNorm
        on 1x3x4x4 inputs (244 parameters and buffers; MobileNet's shapes of weights)
  decoder  gpu_models.py's `decode_default` model (HF GPT-2, 12 layers, dropout off, its KV
        cache returned) at width 64 and vocabulary 512, on one 8-token sequence: the same
        graph, kernel count, 148 parameters, 25 outputs and ~1170-check guard
`--device cuda` runs the same models on the GPU, where each kernel is a Triton launch (ours
and torch.compile's) that waits on nothing: the host time per call is then what a host-bound
GPU row pays, launches included. Columns: CPU microseconds per call (process time, the minimum over 20 rounds of 100 calls,
so load from other processes skews it less), and our guard function alone. --profile prints
cProfile's top entries for ours. --cuda-graph-bookkeeping times a reduce-overhead replay's
host work (runtime/cuda_graphs.py) with a stand-in CUDA graph whose replay does nothing: 148
inputs read in place (GPT-2's parameters), one copied input and 25 outputs (decode's logits
and key/value caches).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

# This folder holds guards.py, which would shadow the `guards` package as a script.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch  # noqa: E402
from torch import nn  # noqa: E402


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False)
        self.bn = nn.BatchNorm2d(c)
        self.act = nn.Hardswish()
        self.pw = nn.Conv2d(c, c, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return x + self.bn2(self.pw(self.act(self.bn(self.conv(x)))))


class ConvNet(nn.Module):
    def __init__(self, depth=20, c=4):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(c) for _ in range(depth)])
        self.head = nn.Linear(c, 10)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


class Mlp(nn.Module):
    def __init__(self, depth=40, c=8):
        super().__init__()
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(c, c), nn.LayerNorm(c), nn.GELU()) for _ in range(depth)])

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x


def tiny_decoder():
    import transformers

    config = transformers.GPT2Config(n_embd=64, n_layer=12, n_head=4, vocab_size=512, n_positions=64, bos_token_id=0,
                                     eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return transformers.GPT2LMHeadModel(config), torch.randint(0, 512, (1, 8))


MODELS = {"mlp": lambda: (Mlp(), torch.randn(2, 8)), "conv": lambda: (ConvNet(), torch.randn(1, 3, 4, 4)),
          "decoder": tiny_decoder}


def _compared(output):
    return getattr(output, "logits", output)  # a ModelOutput: its logits (the cache is an object)


def per_call_us(fn, *args, number=100, repeat=20) -> float:
    for _ in range(20):
        fn(*args)
    rounds = []
    for _ in range(repeat):
        _synchronize()
        start = time.process_time()
        for _ in range(number):
            fn(*args)
        rounds.append((time.process_time() - start) / number * 1e6)
    return min(rounds)


def _synchronize():
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


def model_rows(name: str, profile: bool, device: str) -> None:
    import compiler

    torch.manual_seed(0)
    model, x = MODELS[name]()
    model, x = model.eval().to(device), x.to(device)
    with torch.no_grad():
        ours, theirs = compiler.compile(model), torch.compile(model)
        for compiled in (ours, theirs):
            torch.testing.assert_close(_compared(compiled(x)), _compared(model(x)), rtol=1e-4, atol=1e-5)
        guard = ours._cache.entries[0].guard
        print(f"{name} on {device}: load average {os.getloadavg()[0]:.2f}, torch {torch.__version__}")
        for label, fn, args in [("eager", model, (x,)), ("torch.compile", theirs, (x,)), ("ours", ours, (x,)),
                                ("ours: guard function alone", guard, (model, x))]:
            print(f"  {label:28s} {per_call_us(fn, *args):9.1f} us")
        if profile:
            cProfile.runctx("for _ in range(200): ours(x)", globals(), {"ours": ours, "x": x}, "/tmp/host_overhead.prof")
            pstats.Stats("/tmp/host_overhead.prof").sort_stats("tottime").print_stats(20)


def cuda_graph_bookkeeping() -> None:
    from inductor.runtime.cuda_graphs import CudaGraphRunner

    class Replayed:
        def replay(self):
            pass

    parameters = [torch.randn(8) for _ in range(148)]
    outputs = tuple(torch.randn(4) for _ in range(25))

    def graph(*args):
        return outputs

    graph.size_key = lambda args: ()
    runner = CudaGraphRunner(graph)
    runner._capture = lambda static_inputs: (Replayed(), outputs)
    ids = torch.zeros(1, 1, dtype=torch.long)
    for _ in range(3):
        runner(torch.zeros(1, 1, dtype=torch.long), *parameters)
    print(f"reduce-overhead replay, host work only: {per_call_us(runner, ids, *parameters):9.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cuda-graph-bookkeeping", action="store_true")
    options = parser.parse_args()
    torch.set_num_threads(1)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if options.cuda_graph_bookkeeping:
        cuda_graph_bookkeeping()
    else:
        model_rows(options.model, options.profile, options.device)


if __name__ == "__main__":
    main()
