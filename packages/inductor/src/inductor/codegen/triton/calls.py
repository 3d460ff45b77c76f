"""How a graph's Triton kernels reach the wrapper: print each one, write it to the cache as a
real module (Triton's JIT reads the source of what it compiles), and describe its call.

    triton/<hash>/<function>.py               one kernel module, named by the hash of its source
    triton/<hash>/<function>.autotune.json    the block sizes chosen for it, per GPU and size
                                              (beside the entry: not in its manifest)

Identical kernels (the same layer repeated through a model) print identically, so they share
one file, one compiled binary and one autotuning.
"""

from __future__ import annotations

import re

from ... import cache
from ...ir import ComboKernel
from ...runtime.triton_launch import load_triton_kernel, precompile
from ..wrapper import KernelCall, pyexpr
from .combo import combo_module
from .kernel import TritonKernel

IMPORT = "from inductor.runtime.triton_launch import load_triton_kernel"


def store_kernel_module(source: str, function_name: str) -> str:
    """The cache key of the module holding `source`, writing it unless the cache has it intact."""
    key = cache.digest(source)
    if cache.entry("triton", key) is None:
        cache.publish("triton", key, {f"{function_name}.py": source})
    return key


def rebuild_kernel_module(source: str) -> str:
    """`store_kernel_module` for a module's source alone: its kernel is its last function
    (a combo's members come before it)."""
    return store_kernel_module(source, re.findall(r"^def (\w+)\(", source, re.M)[-1])


class PrintedCombo:
    """A ComboKernel printed: its members' TritonKernels and the module running them."""

    def __init__(self, kernel: ComboKernel, buffers: dict, size_symbols: set):
        members = [TritonKernel(m, buffers, size_symbols) for m in kernel.members]
        self.source, self.function_name = combo_module(members)
        self.wrapper_args = [arg for m in members for arg in m.wrapper_args]
        self.numels = [n for m in members for n in m.numels]


def triton_kernel_calls(kernels, buffers: dict, size_symbols: set, mode: str) -> tuple[dict, dict]:
    """({kernel name: KernelCall}, {kernel name: source}) for the wrapper and the logs.

    On a GPU, kernels with static sizes are compiled here, all at once (runtime/triton_launch.py)."""
    calls, sources, ahead = {}, {}, []
    for kernel in kernels:
        printer = PrintedCombo if isinstance(kernel, ComboKernel) else TritonKernel
        printed = printer(kernel, buffers, size_symbols)
        key = store_kernel_module(printed.source, printed.function_name)
        numels = [int(n) for n in printed.numels if n.is_Integer]
        if kernel.device.type == "cuda" and len(numels) == len(printed.numels):
            ahead.append((load_triton_kernel(key, printed.function_name, mode), tuple(numels)))
        calls[kernel.name] = KernelCall(
            load=f"load_triton_kernel({key!r}, {printed.function_name!r}, {mode!r})",
            imports=IMPORT,
            entry=("triton", key),
            args=[*printed.wrapper_args, *(pyexpr(n) for n in printed.numels)],
            takes_pointers=False,
        )
        sources[kernel.name] = printed.source
    if ahead:
        precompile(ahead)
    return calls, sources
