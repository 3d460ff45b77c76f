"""Fake tensors: run PyTorch ops on metadata only (shapes, dtypes, strides, devices), with sympy-backed symbolic sizes.

Not built yet: see the open issues.
"""

__version__ = "0.0.1"
