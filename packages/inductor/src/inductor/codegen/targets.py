"""Which target prints the kernels of each device: CUDA tensors' kernels are Triton's, CPU
tensors' C++ or Triton's interpreter (options.cpu_backend). Everything a pass asks of a device
(in-kernel random, combo kernels, split reductions, one-pass variance) it asks of that device's KernelBackend here.
"""

from __future__ import annotations

import torch

from ..errors import UnsupportedDevice
from ..size_questions import SizeQuestions
from .backend import KernelBackend, KernelCall
from .cpp import CPP
from .triton import TRITON

BACKENDS: dict[str, KernelBackend] = {backend.name: backend for backend in (CPP, TRITON)}


class KernelTargets:
    """The KernelBackend of each device type, for one compilation's options."""

    def __init__(self, cpu_backend: str = "cpp", fallback_random: bool = False):
        self.by_device = {"cpu": BACKENDS[cpu_backend], "cuda": TRITON}
        # `fallback_random=True` keeps random ops aten calls, which draw eager's numbers under
        # the same seed, on every target.
        self.fallback_random = fallback_random

    @classmethod
    def from_options(cls, options) -> KernelTargets:
        return cls(options.cpu_backend, options.fallback_random)

    def check(self, example_inputs) -> None:
        devices = {x.device.type for x in example_inputs if isinstance(x, torch.Tensor)}
        if devices - set(self.by_device):
            raise UnsupportedDevice(
                f"inductor generates Triton for CUDA tensors and C++ for CPU ones; this graph has {sorted(devices)} "
                "inputs. Use backend='aot_eager' for them."
            )

    def backend(self, device: torch.device) -> KernelBackend:
        return self.by_device[device.type]

    def in_kernel_random(self, device: torch.device) -> bool:
        return not self.fallback_random and self.backend(device).in_kernel_random

    def combo_kernels(self, device: torch.device) -> bool:
        return self.backend(device).combo_kernels

    def splits_reductions(self, device: torch.device) -> bool:
        return self.backend(device).splits_reductions(device)

    def welford_variance(self, device: torch.device) -> bool:
        return self.backend(device).welford_variance

    def kernel_calls(self, kernels: list, buffers: dict, size_hints: dict, tuning: str,
                     sizes: SizeQuestions) -> dict[str, KernelCall]:
        """Each kernel built by its device's backend (a graph may mix CUDA kernels with a CPU
        one, e.g. over a CPU scalar), {name: KernelCall} in kernel order."""
        groups: dict[str, list] = {}
        for kernel in kernels:
            groups.setdefault(self.backend(kernel.device).name, []).append(kernel)
        calls = {}
        for name, group in groups.items():
            calls.update(BACKENDS[name].kernel_calls(group, buffers, size_hints, tuning, sizes))
        return {k.name: calls[k.name] for k in kernels}

    def environment(self, example_inputs) -> list[str]:
        """What besides the graph decides the built kernels: each backend it may use (the CPU one
        always; Triton with CUDA inputs), its toolchain and hardware."""
        devices = [x.device for x in example_inputs if isinstance(x, torch.Tensor)]
        used = [self.by_device["cpu"]]
        if any(d.type == "cuda" for d in devices) and TRITON not in used:
            used.append(TRITON)
        return [part for backend in used for part in backend.environment(devices)]

    def key(self) -> str:
        """The choices that change the generated code, for the graph cache key."""
        return f"cpu={self.by_device['cpu'].name},fallback_random={self.fallback_random}"
