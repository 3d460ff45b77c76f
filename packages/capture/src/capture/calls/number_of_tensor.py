"""`int(t)` and `float(t)` of a one-element tensor or ndarray, and `t.tolist()`, under capture_scalar_outputs
(on with fullgraph=True, as torch.compile's fullgraph traces `float(x.sum())`): the value is
`t.item()`, an unbacked number computed in the graph, then converted as Python converts it
(int() truncates, float() widens). A bool tensor's item is taken as an int first (0 or 1), so
`float(mask.any())` is 0.0 or 1.0 with no branch on the data.

Without scalar outputs, or when the element count is not known to be 1 (eager raises for
more), the conversion is refused and breaks the graph.

`t.tolist()` is each element's item, nested as the tensor's dims (torch.compile unrolls it the
same way), for a tensor of fixed sizes and at most TOLIST_MAX_ELEMENTS elements: a longer one
would put one graph node per element."""

from __future__ import annotations

import torch

from ..errors import Unsupported
from ..values.base import Value
from ..values.containers import ListValue
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


TOLIST_MAX_ELEMENTS = 64


def tolist(frame, tensor: TensorValue) -> Value | None:
    """`tensor.tolist()` as nested lists of unbacked numbers, or None when capture cannot make
    it (the caller refuses)."""
    fake = tensor.fake
    if not frame.session.fake_mode.allow_scalar_outputs or fake.is_complex():
        return None
    if not all(isinstance(size, int) for size in fake.shape):
        raise Unsupported(f"Tensor.tolist() of a tensor of symbolic size {tuple(fake.shape)}: its length is not fixed")
    if fake.numel() > TOLIST_MAX_ELEMENTS:
        raise Unsupported(
            f"Tensor.tolist() of {fake.numel()} elements: each would be a graph node (at most {TOLIST_MAX_ELEMENTS} are traced)",
            hint="the graph breaks here and the call runs outside it; keep the values a tensor to keep one graph",
        )
    graph = frame.session.graph

    def nested(value: TensorValue, sizes) -> Value:
        if not sizes:
            return graph.call_method(frame, "item", [value], {})
        rows = [graph.call_method(frame, "select", [value, _constant(frame, 0), _constant(frame, i)], {}) for i in range(sizes[0])]
        return ListValue([nested(row, sizes[1:]) for row in rows])

    return nested(tensor, list(fake.shape))


def _constant(frame, obj):
    return frame.session.wrap(obj, None)
