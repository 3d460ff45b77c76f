"""The Triton target: `kernel.py` prints a FusedKernel as a `@triton.jit` module (its ops
handler split over `memory.py`, `pointwise_ops.py` and `reductions.py`), and `backend.py`
writes those modules to the cache and describes their calls (`TRITON`, its KernelBackend)."""

from .backend import TRITON, TritonBackend
from .kernel import TritonKernel

__all__ = ["TRITON", "TritonBackend", "TritonKernel"]
