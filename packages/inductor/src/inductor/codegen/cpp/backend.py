"""The C++ target: kernels printed by kernel.py, built with the system compiler into one shared
library each (runtime/cpp_build.py) and called through ctypes with data pointers."""

from __future__ import annotations

from ...runtime import cpp_build
from ..backend import KernelBackend, KernelCall
from .kernel import KERNEL_SYMBOL, CppKernel


class CppBackend(KernelBackend):
    # Random ops stay aten calls (no Philox here); OpenMP already spreads a long reduction
    # over the few cores, so nothing splits; each kernel is its own library.
    name = "cpp"
    pointer_arguments = True

    def kernel_calls(self, kernels, buffers: dict, size_hints: dict, tuning: str, sizes) -> dict[str, KernelCall]:
        # Loops and offsets are int64_t at every size: on a CPU that costs nothing worth a guard.
        printed = [CppKernel(k, buffers, set(size_hints)) for k in kernels]
        libraries = cpp_build.build_all([p.source for p in printed])
        calls = {}
        for k, p, key in zip(kernels, printed, libraries):
            pointers = sum(1 for a in p.signature if a in buffers)
            calls[k.name] = KernelCall(
                load=f"load_kernel({key!r}, {KERNEL_SYMBOL!r}, {pointers}, {len(p.signature) - pointers})",
                imports="from inductor.runtime.cpp_build import load_kernel", args=p.signature,
                takes_pointers=self.pointer_arguments, entry=(self.name, key), source=p.source, symbol=KERNEL_SYMBOL,
            )
        return calls

    def rebuild(self, source: str, symbol: str) -> str:
        return cpp_build.build(source)

    def environment(self, devices) -> list[str]:
        return [cpp_build.toolchain_key()]


CPP = CppBackend()
