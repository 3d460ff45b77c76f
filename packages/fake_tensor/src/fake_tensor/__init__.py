"""Fake tensors: run PyTorch ops on metadata only (shapes, dtypes, strides, devices), with sympy-backed symbolic sizes.

`FakeTensorMode` (context manager; `from_real`, `from_module`), `FakeTensor`, `is_fake`,
and the errors (`FakeTensorError`, `DataDependentError`, `UnsupportedFakeOpError`...).
"""

__version__ = "0.1.0"

from .errors import (
    DataDependentError,
    DeviceMismatchError,
    FakeModeMismatchError,
    FakeTensorError,
    GuardOnDataDependentError,
    OverlappingWriteError,
    RealTensorInputError,
    StaticSizesRequiredError,
    UnsupportedFakeOpError,
    UnsupportedTensorKindError,
)
from .conversion import check_tensor_kind
from .mode import FakeTensorMode
from .tensor import FakeTensor, is_fake
from .symbolic import UNBACKED, ConstraintViolationError, Dim, ShapeEnv, SymNode
from .analysis import ShapeReport, TensorSpec, infer_shapes

__all__ = [
    "ConstraintViolationError", "DataDependentError", "DeviceMismatchError", "Dim", "FakeModeMismatchError",
    "FakeTensor", "FakeTensorError", "FakeTensorMode", "GuardOnDataDependentError", "OverlappingWriteError", "RealTensorInputError",
    "ShapeEnv", "ShapeReport", "StaticSizesRequiredError", "SymNode", "TensorSpec", "UNBACKED",
    "UnsupportedFakeOpError", "UnsupportedTensorKindError", "check_tensor_kind", "infer_shapes", "is_fake",
]
