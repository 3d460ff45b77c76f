"""The C++/OpenMP target: `kernel.py` prints a FusedKernel as one `extern "C"` function
(`expressions.py` spells indices and constants, `loop_order.py` picks column-reduction tiling),
`backend.py` builds those and describes their calls (`CPP`, its KernelBackend)."""

from .backend import CPP, CppBackend
from .kernel import CppKernel

__all__ = ["CPP", "CppBackend", "CppKernel"]
