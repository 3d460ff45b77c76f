"""Inductor: lowers ATen graphs to a loop-level IR, fuses, and writes Triton (GPU) and C++ (CPU) kernels.

Not built yet: see the open issues.
"""

__version__ = "0.0.1"
