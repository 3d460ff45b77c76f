"""The main job: compile a real model, say what happened and how fast it runs.

    python -m compiler.demo                    # HF GPT-2 (full size, random weights), CPU
    python -m compiler.demo --model bert|llama|resnet|vit [--backend inductor] [--device cuda]

Models are built from their transformers configs with random weights (nothing is downloaded).
The report: each captured graph and graph break, the kernels inductor generated, compile
time, the largest difference from eager, and eager vs compiled time with the speedup.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import torch

import compiler


@dataclass
class ModelCase:
    build: Callable[[], torch.nn.Module]
    example: Callable[[argparse.Namespace], dict]   # keyword arguments of one forward call
    output: Callable[[object], torch.Tensor]        # the tensor compared with eager


def _transformers():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import transformers
    except ImportError:
        sys.exit("compiler.demo needs transformers: pip install transformers")
    transformers.logging.set_verbosity_error()
    return transformers


def _tokens(vocab_size: int):
    return lambda args: {"input_ids": torch.randint(0, vocab_size, (args.batch, args.seq))}


def _images(size: int):
    return lambda args: {"pixel_values": torch.randn(args.batch, 3, size, size)}


def _cases() -> dict[str, ModelCase]:
    t = _transformers()
    llama = t.LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                          num_attention_heads=8, num_key_value_heads=4, vocab_size=32000)
    resnet = t.ResNetConfig(embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2],
                            layer_type="basic", num_labels=1000)
    vit = t.ViTConfig(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                      image_size=224, patch_size=16, num_labels=1000)
    return {
        "gpt2": ModelCase(lambda: t.GPT2LMHeadModel(t.GPT2Config()), _tokens(50257), lambda o: o.logits),
        "bert": ModelCase(lambda: t.BertModel(t.BertConfig()), _tokens(30522), lambda o: o.last_hidden_state),
        "llama": ModelCase(lambda: t.LlamaForCausalLM(llama), _tokens(32000), lambda o: o.logits),
        "resnet": ModelCase(lambda: t.ResNetForImageClassification(resnet), _images(224), lambda o: o.logits),
        "vit": ModelCase(lambda: t.ViTForImageClassification(vit), _images(224), lambda o: o.logits),
    }


@dataclass
class CompileLog:
    """What the backend saw: one entry per captured graph, with its compile time."""

    backend: Callable
    graphs: list[tuple[int, float]] = field(default_factory=list)   # (ops, seconds)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        ops = sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))
        number = len(self.graphs) + 1
        print(f"  graph {number}: {ops} ops captured; compiling ...", end="", flush=True)
        start = time.perf_counter()
        compiled = self.backend(gm, example_inputs)
        elapsed = time.perf_counter() - start
        self.graphs.append((ops, elapsed))
        print(f" {elapsed:.1f} s", flush=True)
        return compiled


def _interleaved_medians(first, second, repeats: int) -> tuple[float, float]:
    """Median seconds per call of each function, alternating them every repetition so that
    drift (CPU frequency, other load on the machine) hits both equally."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, bucket in zip((first, second), times):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


# Fused kernels reorder float32 reductions, so outputs differ from eager by rounding only.
ATOL = RTOL = 1e-3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m compiler.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2", choices=["gpt2", "bert", "llama", "resnet", "vit"])
    parser.add_argument("--backend", default="inductor", help="any name from compiler.list_backends()")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, default=128, help="tokens per sequence (language models)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    case = _cases()[args.model]
    print(f"building {args.model} from its config (random weights) on {args.device} ...", flush=True)
    model = case.build().eval().to(args.device)
    inputs = {k: v.to(args.device) for k, v in case.example(args).items()}
    params = sum(p.numel() for p in model.parameters())
    shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in inputs.items())
    print(f"  {params / 1e6:.1f}M parameters; input {shapes}; {torch.get_num_threads()} CPU threads")

    log = CompileLog(compiler.lookup_backend(args.backend))
    compiled = compiler.compile(model, backend=log)
    kernels_before = _inductor_metrics()

    print(f"compiling with backend={args.backend!r} (first call: capture + compile) ...", flush=True)
    with torch.no_grad():
        start = time.perf_counter()
        out = case.output(compiled(**inputs))
        compile_seconds = time.perf_counter() - start
        expected = case.output(model(**inputs))
        sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)

        def run_eager():
            model(**inputs)
            sync()

        def run_compiled():
            compiled(**inputs)
            sync()

        for _ in range(2):
            run_eager(), run_compiled()
        eager, ours = _interleaved_medians(run_eager, run_compiled, args.repeats)
        matches = torch.allclose(out, expected, atol=ATOL, rtol=RTOL)

    _report(args, log, kernels_before, compile_seconds, (out - expected).abs().max().item(), matches, eager, ours)


def _inductor_metrics() -> dict:
    try:
        from inductor import metrics
    except ImportError:
        return {}
    return metrics.snapshot()


def _report(args, log: CompileLog, kernels_before: dict, compile_seconds: float, max_diff: float,
            matches: bool, eager: float, ours: float) -> None:
    after = _inductor_metrics()
    print()
    print(f"graphs captured     {len(log.graphs)} ({len(log.graphs) - 1} graph breaks)")
    for number, (ops, seconds) in enumerate(log.graphs, 1):
        print(f"  graph {number}         {ops} ops, backend compile {seconds:.2f} s")
    if after:
        generated = after["kernels_generated"] - kernels_before.get("kernels_generated", 0)
        graphs = after["graphs_compiled"] - kernels_before.get("graphs_compiled", 0)
        hits = after["graph_cache_hits"] - kernels_before.get("graph_cache_hits", 0)
        print(f"kernels generated   {generated} in {graphs} ATen graphs ({hits} loaded from the on-disk cache)")
    print(f"compile time        {compile_seconds:.2f} s (first call, capture included)")
    verdict = "yes" if matches else "NO"
    print(f"matches eager       {verdict} (max abs diff {max_diff:.2e}; atol={ATOL:g}, rtol={RTOL:g})")
    print(f"eager               {eager * 1e3:.2f} ms / call (median of {args.repeats}, interleaved)")
    print(f"compiled            {ours * 1e3:.2f} ms / call")
    print(f"speedup             {eager / ours:.2f}x")


if __name__ == "__main__":
    main()
