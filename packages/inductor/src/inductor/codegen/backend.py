"""What a kernel target is: one `KernelBackend` object per target (`cpp/`, `triton/`), which
prints kernels, builds them into cache entries, says how the wrapper loads and calls each
one, and declares what the rest of the compiler may ask of it (as tinygrad's `Renderer`
declares its own). A new target is a new folder beside those two and an entry in targets.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..size_questions import SizeQuestions


@dataclass(frozen=True)
class KernelCall:
    """One generated kernel, built: how the wrapper loads and calls it, and its source as data
    (the graph's cache entry keeps it, so a warm start can rebuild the kernel without codegen)."""

    load: str                # Python expression, run once at import, giving the callable
    imports: str             # the import line `load` needs
    args: list               # buffer names, then Python expressions over the size symbols
    takes_pointers: bool     # C++ takes `t.data_ptr()`; Triton takes the tensors
    entry: tuple[str, str]   # the cache entry `load` reads, (kind, key): a warm start checks it
    source: str              # the kernel's source, as built into `entry`
    symbol: str              # the function `load` reads from the entry


class KernelBackend:
    """A kernel target. Capabilities are class attributes, read by the passes that need them."""

    name: str                                   # also the cache entry kind its kernels are built into
    in_kernel_random: bool = False              # draws random numbers inside kernels (lowering/random.py)
    combo_kernels: bool = False                 # runs small pointwise kernels as one launch (triton/combo_planning.py)
    split_reductions_on: frozenset[str] = frozenset()  # device types whose long reductions split (passes/split_reductions.py)
    pointer_arguments: bool = False             # kernels take data pointers rather than tensors
    welford_variance: bool = False              # prints the welford_* reductions: var/std in one pass (lowering/reductions.py)

    def kernel_calls(self, kernels: list, buffers: dict, size_hints: dict, tuning: str,
                     sizes: SizeQuestions) -> dict[str, KernelCall]:
        """Print and build `kernels` (FusedKernel or ComboKernel steps): {kernel name: KernelCall}.
        `size_hints`: each size symbol with its value in the example inputs; `sizes`: what the
        printer may ask about symbolic sizes (an answer may guard the caller's entry)."""
        raise NotImplementedError

    def rebuild(self, source: str, symbol: str) -> str:
        """Build a kernel from its stored source again (its cache entry went missing): the key."""
        raise NotImplementedError

    def environment(self, devices: list[torch.device]) -> list[str]:
        """What besides a kernel's source decides its built code (toolchain, hardware), for the
        graph cache key; `devices`: those the graph's inputs are on."""
        return []

    def splits_reductions(self, device: torch.device) -> bool:
        return device.type in self.split_reductions_on
