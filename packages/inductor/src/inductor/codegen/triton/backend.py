"""The Triton target: print each kernel, write it to the cache as a real module (Triton's JIT
reads the source of what it compiles), and describe its call.

    triton/<hash>/<function>.py               one kernel module, named by the hash of its source
    triton/<hash>/<function>.autotune.json    the block sizes timed for it, per GPU and size bucket,
                                              and the heuristic row that won, per GPU and mode,
                                              which serves other buckets (beside the entry: not
                                              in its manifest)

Identical kernels (the same layer repeated through a model) print identically, so they share
one file, one compiled binary and one autotuning.
"""

from __future__ import annotations

import functools
import importlib.metadata

import sympy
import torch

from ... import cache
from ...ir import ComboKernel
from ...runtime.triton_launch import load_triton_kernel, precompile
from ..backend import KernelBackend, KernelCall
from ..wrapper import pyexpr
from .combo import combo_module
from .kernel import TritonKernel

IMPORT = "from inductor.runtime.triton_launch import load_triton_kernel"


def store_kernel_module(source: str, function_name: str) -> str:
    """The cache key of the module holding `source`, writing it unless the cache has it intact."""
    key = cache.digest(source)
    if cache.entry("triton", key) is None:
        cache.publish("triton", key, {f"{function_name}.py": source})
    return key


class PrintedCombo:
    """A ComboKernel printed: its members' TritonKernels and the module running them."""

    def __init__(self, kernel: ComboKernel, buffers: dict, size_symbols: set, sizes):
        members = [TritonKernel(m, buffers, size_symbols, sizes) for m in kernel.members]
        self.source, self.function_name = combo_module(members)
        # The combo's parameters: every member's pointers, then every member's offsets (combo.py).
        self.wrapper_args = [arg for m in members for arg in m.args] + [v for m in members for v in m.offset_values]
        self.numels = [n for m in members for n in m.numels]


class TritonBackend(KernelBackend):
    # Philox in the kernel (torch.compile's default; options.fallback_random turns it off), combo
    # launches for small pointwise kernels, split reductions on GPUs only (the interpreter on
    # CPU has no SMs to fill), and variances in one Welford pass (triton/reductions.py).
    name = "triton"
    in_kernel_random = True
    combo_kernels = True
    split_reductions_on = frozenset({"cuda"})
    welford_variance = True
    compiles_ahead_on = frozenset({"cuda"})  # the interpreter has nothing to compile

    def kernel_calls(self, kernels, buffers: dict, size_hints: dict, tuning: str, sizes) -> dict[str, KernelCall]:
        """On a GPU, kernels are compiled here, all at once (runtime/triton_launch.py). A kernel
        with symbolic sizes compiles at their example values: its size parameters are not
        specialized (codegen/triton/module_text.py), so that binary serves every size."""
        calls, ahead, compiling = {}, [], set()
        hints = {symbol.name: hint for symbol, hint in size_hints.items()}
        for kernel in kernels:
            printer = PrintedCombo if isinstance(kernel, ComboKernel) else TritonKernel
            printed = printer(kernel, buffers, set(size_hints), sizes)
            key = store_kernel_module(printed.source, printed.function_name)
            if kernel.device.type in self.compiles_ahead_on:
                ints = [hints[a] if a in hints else int(a) for a in printed.wrapper_args if a in hints or a.isdecimal()]
                ints += [int(sympy.sympify(n).xreplace(size_hints)) for n in printed.numels]
                # Kernels sharing a source (every weight's update) compile once: the other
                # launchers find the binary in Triton's cache at their first launch.
                if (key, tuple(ints)) not in compiling:
                    compiling.add((key, tuple(ints)))
                    ahead.append((load_triton_kernel(key, printed.function_name, tuning), tuple(ints)))
            calls[kernel.name] = KernelCall(
                load=f"load_triton_kernel({key!r}, {printed.function_name!r}, {tuning!r})",
                imports=IMPORT,
                entry=(self.name, key),
                args=[*printed.wrapper_args, *(pyexpr(n) for n in printed.numels)],
                takes_pointers=self.pointer_arguments,
                source=printed.source,
                symbol=printed.function_name,
            )
        if ahead:
            precompile(ahead)
        return calls

    def rebuild(self, source: str, symbol: str) -> str:
        return store_kernel_module(source, symbol)

    def environment(self, devices) -> list[str]:
        cuda = sorted({d for d in devices if d.type == "cuda"}, key=str)
        return [_triton_version(), *(_gpu_architecture(device) for device in cuda)]


@functools.lru_cache(maxsize=None)
def _triton_version() -> str:
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return "no triton"


@functools.lru_cache(maxsize=None)
def _gpu_architecture(device: torch.device) -> str:
    return f"{torch.cuda.get_device_name(device)} sm{torch.cuda.get_device_capability(device)}"


TRITON = TritonBackend()
