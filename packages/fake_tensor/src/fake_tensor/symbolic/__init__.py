"""Symbolic sizes: `ShapeEnv` (symbols, ranges, guards), our sympy `SymNode` behind torch.SymInt.

Exports ShapeEnv, SymNode, Dim, UNBACKED, ConstraintViolationError, ValueRange, Guard, print_python, and
the functions every layer builds and prints (FloorDiv, PythonMod, RoundToInt, TruncToInt, ToFloat, and
FLOAT_OPERATIONS: Python's float operators in the program's order, FloatAdd, FloatTrueDiv, ...);
`printing.py` holds the one sympy printer every layer spells them with.
Start at shape_env/__init__.py: its docstring is the API.
"""

from fake_tensor.symbolic.dim import UNBACKED, ConstraintViolationError, Dim
from fake_tensor.symbolic.functions import FLOAT_OPERATIONS, FloorDiv, PythonMod, RoundToInt, ToFloat, TruncToInt
from fake_tensor.symbolic.guard_printer import print_python
from fake_tensor.symbolic.shape_env import Guard, ShapeEnv
from fake_tensor.symbolic.sym_node import SymNode
from fake_tensor.symbolic.value_ranges import ValueRange

__all__ = [
    "ConstraintViolationError", "Dim", "FLOAT_OPERATIONS", "FloorDiv", "Guard", "PythonMod", "RoundToInt", "ShapeEnv",
    "SymNode", "ToFloat", "TruncToInt", "UNBACKED", "ValueRange", "print_python",
]
