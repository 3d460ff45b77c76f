"""`python -m fake_tensor.demo`: HF GPT-2 (124M parameters) run on fake tensors.

Builds `GPT2LMHeadModel(GPT2Config())` under a FakeTensorMode (random-init code runs on
fakes, so no parameter memory is ever allocated), runs a forward pass on an (8, 1024)
batch of token ids, and prints each top-level module's output shape, the bytes of
parameters, and the bytes of activations the forward creates.
Needs the `demo` extra (transformers).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from .mode import FakeTensorMode


@dataclass
class ForwardReport:
    output_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # in call order
    activation_bytes: dict[str, int] = field(default_factory=dict)  # created inside each module
    parameter_count: int = 0
    parameter_bytes: int = 0
    total_activation_bytes: int = 0


class StorageBytesCounter(TorchDispatchMode):
    """Sums the bytes of every new storage op outputs create (views and in-place results
    reuse a storage and are not counted again). Works on real and on fake tensors."""

    def __init__(self):
        super().__init__()
        self.bytes_created = 0
        self._seen: dict[int, torch.UntypedStorage] = {}  # kept alive: keys are addresses

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                if storage._cdata not in self._seen:
                    self._seen[storage._cdata] = storage
                    self.bytes_created += storage.nbytes()
        return out

    def forget(self, tensors) -> None:
        """Storages that existed before counting started (inputs, parameters) are not new."""
        for t in tensors:
            storage = t.untyped_storage()
            self._seen[storage._cdata] = storage


def top_level_modules(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    """Modules at most two names below the model, counting list indices as no name
    (`transformer.wte`, `transformer.h.3`, `lm_head`), without their containers."""
    candidates = {
        name: module
        for name, module in model.named_modules()
        if name
        and len([p for p in name.split(".") if not p.isdigit()]) <= 2
        and not isinstance(module, torch.nn.ModuleList)
    }
    return {
        name: module
        for name, module in candidates.items()
        if not any(other.startswith(name + ".") for other in candidates)
    }


def run_forward(model: torch.nn.Module, input_ids: torch.Tensor) -> ForwardReport:
    """Run `model(input_ids)` (no grad) recording shapes and bytes; call it inside the mode
    that made the model's tensors (fake or real alike)."""
    report = ForwardReport()
    unique = {p.untyped_storage()._cdata: p for p in model.parameters()}
    report.parameter_count = sum(p.numel() for p in unique.values())
    report.parameter_bytes = sum(p.untyped_storage().nbytes() for p in unique.values())
    counter = StorageBytesCounter()
    counter.forget([*model.parameters(), *model.buffers(), input_ids])
    started: dict[str, int] = {}

    def before(name):
        def hook(module, args):
            started[name] = counter.bytes_created

        return hook

    def after(name):
        def hook(module, args, output):
            first = output if isinstance(output, torch.Tensor) else tree_leaves(output)[0]
            report.output_shapes[name] = tuple(first.shape)
            report.activation_bytes[name] = counter.bytes_created - started[name]

        return hook

    handles = []
    for name, module in top_level_modules(model).items():
        handles.append(module.register_forward_pre_hook(before(name)))
        handles.append(module.register_forward_hook(after(name)))
    try:
        with torch.no_grad(), counter:
            model(input_ids)
    finally:
        for handle in handles:
            handle.remove()
    report.total_activation_bytes = counter.bytes_created
    return report


def _gib(n: int) -> str:
    return f"{n / 2**30:8.2f} GiB" if n >= 2**30 else f"{n / 2**20:8.1f} MiB"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="GPT-2 forward on fake tensors")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import GPT2Config, GPT2LMHeadModel

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mode = FakeTensorMode()
    start = time.perf_counter()
    with mode:
        model = GPT2LMHeadModel(GPT2Config()).eval()
        built = time.perf_counter()
        input_ids = torch.randint(0, model.config.vocab_size, (args.batch, args.seq))
        report = run_forward(model, input_ids)
    done = time.perf_counter()
    rss_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) * 1024

    print(f"GPT2LMHeadModel(GPT2Config()) on fake tensors, input_ids {tuple(input_ids.shape)}")
    print(f"{'module':<20} {'output shape':<22} {'activations created':>20}")
    for name, shape in report.output_shapes.items():
        print(f"{name:<20} {str(shape):<22} {_gib(report.activation_bytes[name]):>20}")
    print(f"parameters:  {report.parameter_count:,} ({_gib(report.parameter_bytes).strip()}, tied weights once)")
    print(f"activations: {_gib(report.total_activation_bytes).strip()} created by the forward pass")
    print(f"time: build {built - start:.2f} s, forward {done - built:.2f} s; "
          f"process peak memory grew by {_gib(max(rss_growth, 0)).strip()} (no tensor data)")


if __name__ == "__main__":
    main()
