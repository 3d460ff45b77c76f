"""The Triton backend's code generator: `kernel.py` prints a FusedKernel as a `@triton.jit`
module (its ops handler split over `memory.py`, `pointwise_ops.py` and `reductions.py`), and
`calls.py` writes those modules to the cache and describes their calls to the wrapper."""

from .calls import triton_kernel_calls
from .kernel import TritonKernel

__all__ = ["TritonKernel", "triton_kernel_calls"]
