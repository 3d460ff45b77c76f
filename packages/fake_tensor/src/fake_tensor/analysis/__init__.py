"""Standalone shape analysis: `infer_shapes(fn, *args, dynamic_shapes=...)` on fakes.

Exports infer_shapes, ShapeReport, TensorSpec, Constraint (and Dim, from fake_tensor.symbolic).
Start at infer.py.
"""

from fake_tensor.analysis.constraints import Constraint
from fake_tensor.analysis.infer import ShapeReport, infer_shapes
from fake_tensor.analysis.tensor_spec import TensorSpec
from fake_tensor.symbolic import Dim

__all__ = ["Constraint", "Dim", "ShapeReport", "TensorSpec", "infer_shapes"]
