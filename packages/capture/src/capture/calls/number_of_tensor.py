"""`int(t)` and `float(t)` of a one-element tensor or ndarray, under capture_scalar_outputs
(on with fullgraph=True, as torch.compile's fullgraph traces `float(x.sum())`): the value is
`t.item()`, an unbacked number computed in the graph, then converted as Python converts it
(int() truncates, float() widens). A bool tensor's item is taken as an int first (0 or 1), so
`float(mask.any())` is 0.0 or 1.0 with no branch on the data.

Without scalar outputs, or when the element count is not known to be 1 (eager raises for
more), the conversion is refused and breaks the graph."""

from __future__ import annotations

import torch

from ..errors import Unsupported
from ..values.base import Value
from ..values.numpy_arrays import NdarrayValue
from ..values.symbolic import SymValue
from ..values.tensor import TensorValue


def number_of_tensor(frame, cls: type, value: Value) -> Value | None:
    """`cls(value)` (int or float) of a tensor or ndarray as an unbacked number, or None when
    capture cannot make it one (the caller refuses)."""
    tensor = value.tensor if isinstance(value, NdarrayValue) else value
    if cls not in (int, float) or not isinstance(tensor, TensorValue):
        return None
    if not frame.session.fake_mode.allow_scalar_outputs:
        return None
    numel = tensor.fake.numel()
    if not isinstance(numel, int) or numel != 1 or tensor.fake.is_complex():
        return None
    graph = frame.session.graph
    if tensor.fake.dtype is torch.bool:
        tensor = graph.call_method(frame, "to", [tensor, _constant(frame, torch.int64)], {})
    item = graph.call_method(frame, "item", [tensor], {})
    if not isinstance(item, SymValue):
        raise Unsupported(f"{cls.__name__}() of {value.describe()}: its item is {item.describe()}")
    if item.python_type() is cls:
        return item
    convert = {int: torch.sym_int, float: torch.sym_float}[cls]
    return graph.call_function(frame, convert, [item], {})


def _constant(frame, obj):
    return frame.session.wrap(obj, None)
