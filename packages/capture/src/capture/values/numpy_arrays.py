"""NumPy arrays while tracing: an ndarray is a traced tensor seen through numpy's API.

As torch.compile does, `x.numpy()` gives an `NdarrayValue` backed by the traced tensor, and
everything numpy does to it (functions, methods, operators, indexing) is recorded as one
graph node, a `NumpyOperation`: the torch._numpy implementation run on tensors (wrapped as
torch._numpy arrays), its array results unwrapped to tensors again. Backends trace through
that Python call like any other, so the graph they see holds torch operations.

An ndarray the compiled function receives is a graph input read as `torch.as_tensor(a)`
(sharing memory, so writes reach the caller's array), guarded as that tensor (its sizes
become symbolic like a tensor input's). An ndarray the function returns or hands to a resume function is rebuilt as a real
ndarray (`tensor.numpy()`). Numpy scalars and dtypes are constants (`NumpyScalarValue`).
"""

from __future__ import annotations

import dataclasses
import operator

import numpy as np
import torch
import torch._numpy as tnp
from guards import kinds
from guards.sources import Source
from torch.utils._pytree import tree_map_only

from ..errors import CaptureError, Unsupported, UserException
from .base import Value
from .constant import ConstantValue
from .containers import ListValue, TupleValue
from .numpy_dtype_oracle import numpy_result_kinds
from .numpy_fixes import FIXED
from .classes import ClassValue
from .tensor import TensorValue

# torch._numpy reads its default dtypes from torch._dynamo.config on first use; set numpy's
# own defaults (float64, complex128, int64) now, so that module is never imported.
tnp._dtypes.set_default_dtype("numpy", "numpy")

# --- graph targets ---------------------------------------------------------------------------


def numpy_dtype(dtype) -> np.dtype:
    """The numpy dtype of a torch._numpy dtype."""
    return np.dtype(dtype.name)


def _from_numpy_world(result):
    """torch._numpy results as graph values: arrays as their tensors, dtypes as numpy's."""
    result = tree_map_only(tnp.ndarray, lambda array: array.tensor, result)
    return tree_map_only(tnp._dtypes.DType, numpy_dtype, result)


class NumpyOperation:
    """A graph target: `fn` (of torch._numpy) called with every tensor argument as a
    torch._numpy array. FX names it after the numpy API it implements: `numpy.sin`,
    `numpy.linalg.norm`, `ndarray.sum` (bound in the graph's code as `numpy_sin`...)."""

    def __init__(self, fn, module: str, name: str, numpy_fn=None):
        self.fn = fn
        # What eager numpy runs for it (the same code when it works on either kind of array).
        self.numpy_fn = numpy_fn or fn
        self.__module__ = module
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        args, kwargs = tree_map_only(torch.Tensor, tnp.ndarray, (args, kwargs))
        return _from_numpy_world(self.fn(*args, **kwargs))

    def __repr__(self) -> str:
        return f"{self.__module__}.{self.__name__}"


_OPERATIONS: dict = {}


def operation_for(fn, module: str, name: str, numpy_fn=None) -> NumpyOperation:
    """One target per numpy API, so that graphs name it once."""
    known = _OPERATIONS.get((module, name))
    if known is None:
        known = _OPERATIONS[module, name] = NumpyOperation(fn, module, name, numpy_fn)
    return known


def _method(name: str):
    return lambda array, *args, **kwargs: getattr(array, name)(*args, **kwargs)


def method_operation(name: str) -> NumpyOperation:
    return operation_for(_method(name), "ndarray", name)


def attribute_operation(name: str) -> NumpyOperation:
    return operation_for(operator.attrgetter(name), "ndarray", name)


def operator_operation(fn) -> NumpyOperation:
    return operation_for(FIXED.get(fn, fn), "ndarray", f"__{fn.__name__.strip('_')}__", fn)


# --- recording -----------------------------------------------------------------------------------

_INPLACE_OPERATORS = frozenset({
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
    operator.ipow, operator.imatmul, operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift,
})  # fmt: skip
# Operations that write into their first argument: the array keeps its dtype.
_UPDATES_IN_PLACE = _INPLACE_OPERATORS | {operator.setitem}


def _numpy_name(value: Value):
    """A dtype argument in the spelling torch._numpy accepts (np.float32 -> "float32")."""
    if isinstance(value, ClassValue) and (issubclass(value.cls, np.generic) or value.cls in (bool, int, float, complex)):
        return np.dtype(value.cls).name
    if isinstance(value, ConstantValue) and isinstance(value.value, np.dtype):
        return value.value.name
    return None


def _argument(frame, value: Value) -> Value:
    """`value` as an argument of a NumpyOperation: arrays as their tensors, numpy dtypes as
    names, numpy scalars as 0-d tensors (NEP 50: they are not weak like Python numbers)."""
    if isinstance(value, NdarrayValue):
        return value.tensor
    if isinstance(value, TensorValue) and value.fake.requires_grad:
        raise Unsupported("a numpy function called on a tensor that requires grad (eager numpy refuses it)")
    name = _numpy_name(value)
    if name is not None:
        return ConstantValue(name)
    if isinstance(value, ConstantValue) and isinstance(value.value, np.generic):
        # np.float64 is also a Python float: wrapped as a plain constant, it arrives here too.
        scalar = value.value
        held = torch.tensor(scalar.item(), dtype=getattr(torch, scalar.dtype.name))
        frame.session.keepalive(held)
        return frame.session.wrap(held, None)
    if type(value) in (ListValue, TupleValue):
        items = [_argument(frame, item) for item in value.items]
        return ListValue(items) if isinstance(value, ListValue) else TupleValue(items, python_cls=value.python_cls)
    return value


def _as_numpy_result(value: Value) -> Value:
    if isinstance(value, TensorValue):
        return NdarrayValue(value)
    if type(value) in (ListValue, TupleValue):
        items = [_as_numpy_result(item) for item in value.items]
        if isinstance(value, ListValue):
            return ListValue(items)
        cls = tuple if value.python_cls is torch.Size else value.python_cls
        return TupleValue(items, python_cls=cls)
    return value


def numpy_operation(frame, target: NumpyOperation, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """Record `target(*args, **kwargs)`; its tensors come back as ndarrays.

    Any error while it runs on fake tensors is a graph break, not the program's exception:
    torch._numpy refuses some arguments numpy takes (NotImplementedError, TypeError), and
    only running numpy itself says what eager does."""

    args = [_argument(frame, a) for a in args]
    kwargs = {k: _argument(frame, v) for k, v in kwargs.items()}
    try:
        result = frame.session.graph.call_function(frame, target, args, kwargs)
        if target.numpy_fn not in _UPDATES_IN_PLACE:
            result = with_numpy_dtypes(frame, target, args, kwargs, result)
    except CaptureError:
        raise
    except Exception as err:  # the program's exception (UserException) or torch._numpy's own
        cause = (err.__cause__ or err.value.describe()) if isinstance(err, UserException) else err
        raise Unsupported(
            f"{target!r} (numpy traced through torch._numpy) failed on fake tensors: {cause!r}",
            hint="the graph breaks and numpy runs the call natively",
        ) from None
    return _as_numpy_result(result)


def with_numpy_dtypes(frame, target: NumpyOperation, args, kwargs, result: Value) -> Value:
    """`result` with the dtypes eager numpy gives. torch._numpy differs from numpy in places
    (`np.cumsum(int8)` stays int8 there, int64 in numpy; `np.median(a)` is 1-d, not 0-d):
    numpy itself, run on small stand-in arrays of the same dtypes, says which dtype and how
    many dimensions each result has. A result torch._numpy computed at least as wide is cast
    to numpy's dtype; a narrower one would have lost precision or overflowed already, and a
    wrong number of dimensions is not something to patch up, so those break the graph."""
    expected = numpy_result_kinds(target.numpy_fn, args, kwargs)
    if expected is None:
        return result  # numpy refused the stand-ins (a singular matrix, an index out of them)
    got = [v for v in _leaves(result) if isinstance(v, TensorValue)]
    if len(got) != len(expected):
        return result
    casts = {}
    for value, (dtype, ndim) in zip(got, expected):
        produced = np.dtype(str(value.fake.dtype).removeprefix("torch."))
        if value.fake.dim() != ndim:
            raise Unsupported(
                f"{target!r}: torch._numpy gives a {value.fake.dim()}-d result where numpy gives {ndim}-d",
                hint="the graph breaks and numpy runs the call natively",
            )
        if produced == dtype:
            continue
        if not np.can_cast(dtype, produced, casting="safe"):
            raise Unsupported(
                f"{target!r}: torch._numpy computes a {produced} result where numpy gives {dtype}",
                hint="the graph breaks and numpy runs the call natively",
            )
        casts[id(value)] = frame.session.graph.call_function(frame, method_operation("astype"), [value, ConstantValue(dtype.name)], {})
    return _replace_leaves(result, casts) if casts else result


def _leaves(value: Value) -> list[Value]:
    if type(value) in (ListValue, TupleValue):
        return [leaf for item in value.items for leaf in _leaves(item)]
    return [value]


def _replace_leaves(value: Value, replacements: dict) -> Value:
    if type(value) in (ListValue, TupleValue):
        items = [_replace_leaves(item, replacements) for item in value.items]
        return ListValue(items) if isinstance(value, ListValue) else TupleValue(items, python_cls=value.python_cls)
    return replacements.get(id(value), value)


# --- values ----------------------------------------------------------------------------------------

# ndarray attributes that leave the numpy-on-tensors model (memory, buffers, C views).
_REFUSED_ATTRIBUTES = frozenset({"base", "ctypes", "data", "flags", "flat", "__array_interface__"})


class NdarrayValue(Value):
    """A numpy ndarray backed by the traced tensor `tensor`. `source` is where an ndarray the
    frame received is read from (returned unchanged, it is that very object)."""

    def __init__(self, tensor: TensorValue, source=None):
        super().__init__(source)
        self.tensor = tensor

    def python_type(self) -> type:
        return np.ndarray

    def describe(self) -> str:
        fake = self.tensor.fake
        shape = "x".join(str(s) for s in fake.shape)
        return f"a numpy ndarray ({str(fake.dtype).removeprefix('torch.')}[{shape}])"

    def as_fake(self):
        raise Unsupported(
            f"{self.describe()} passed to a torch operation, which takes tensors",
            hint="convert it with torch.from_numpy / torch.as_tensor / torch.tensor",
        )

    as_node_arg = as_fake

    def get_attr(self, frame, name):
        if name in _REFUSED_ATTRIBUTES:
            raise Unsupported(f"ndarray.{name}, which exposes memory capture does not model")
        attribute = getattr(tnp.ndarray, name, None)
        if attribute is None:
            raise Unsupported(f"ndarray.{name}, which torch._numpy does not implement")
        if callable(attribute):
            return NdarrayMethodValue(self, name)
        return numpy_operation(frame, attribute_operation(name), [self], {})

    def has_attr(self, frame, name):
        return hasattr(np.ndarray, name)

    def get_item(self, frame, key):
        return numpy_operation(frame, operator_operation(operator.getitem), [self, key], {})

    def set_item(self, frame, key, value):
        numpy_operation(frame, operator_operation(operator.setitem), [self, key, value], {})

    def length(self, frame):
        return self.tensor.length(frame)

    def unpack(self, frame):
        return [NdarrayValue(item) if isinstance(item, TensorValue) else item for item in self.tensor.unpack(frame)]

    def truth(self, frame):
        raise Unsupported(
            "branching on the value of a numpy array (data-dependent control flow)",
            hint="use np.where, or move the condition outside the compiled function",
        )

    def reconstruct(self, writer):
        # An ndarray the frame received is that object; one the trace made shares the memory of
        # the graph's tensor, as `Tensor.numpy()` does.
        if self.source is not None:
            return writer.source(self.source)
        return f"{writer.value(self.tensor)}.numpy(force=True)"

    def inner_values(self):
        return [self.tensor]


class NdarrayMethodValue(Value):
    """`array.name`, bound: calling it records the torch._numpy method."""

    def __init__(self, array: NdarrayValue, name: str):
        super().__init__()
        self.array = array
        self.name = name

    def describe(self) -> str:
        return f"method ndarray.{self.name}"

    def call(self, frame, args, kwargs):
        if self.name.startswith("__") and any(isinstance(v, TensorValue) for v in [*args, *kwargs.values()]):
            raise _ndarray_dunder_with_tensor(self.name)
        return numpy_operation(frame, method_operation(self.name), [self.array, *args], kwargs)


class NumpyScalarValue(ConstantValue):
    """A numpy scalar (np.float32(0.5), an eps of np.finfo): a constant whose Python
    operations fold with numpy's own rules; a torch operation receives it as the Python
    number, as eager torch converts it."""

    def as_fake(self):
        return self.value.item()

    def as_node_arg(self):
        return self.value.item()


# --- inputs --------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, repr=False)
class TensorOfArraySource(Source):
    """The tensor a graph reads from an ndarray input: `torch.as_tensor(base)` (same memory).

    Spelled with `__import__('torch')` because both the compiled entry and the guard function
    evaluate it, and neither has `torch` among its names (nor has the scope automatic dynamic
    shapes evaluate sources in): it is then a tensor source like any other, guarded by
    TensorMatch and shape guards, whose sizes may become symbolic."""

    base: Source

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_tensor"

    def __str__(self) -> str:
        return self.code(str(self.base))

    def code(self, base: str) -> str:
        return f"__import__('torch').as_tensor({base})"


def wrap_ndarray(session, array: np.ndarray, source) -> NdarrayValue:
    """An ndarray the frame receives (or a constant one): a graph input, guarded and made
    dynamic as the tensor it is read as."""
    if type(array) is not np.ndarray:
        # np.ma.MaskedArray, np.matrix, ...: their operations are not ndarray's.
        raise Unsupported(f"an instance of the ndarray subclass {type(array).__qualname__}")
    if array.dtype.hasobject or array.dtype.kind not in "biufc":
        raise Unsupported(f"a numpy array of dtype {array.dtype}, which has no torch dtype")
    if any(stride < 0 or stride % array.itemsize for stride in array.strides):
        raise Unsupported("a numpy array with negative or unaligned strides, which torch.as_tensor refuses")
    if source is None:
        # A constant array: the graph holds a copy (writes by the graph must not reach it).
        tensor = torch.tensor(array)
        session.keepalive(tensor)
        return NdarrayValue(session.wrap(tensor, None))
    session.add_guard(kinds.TypeMatch(source, type(array)))
    tensor = torch.as_tensor(array)
    session.keepalive(tensor)
    tensor_source = TensorOfArraySource(source)
    value = session.graph.add_input(tensor, tensor_source, session.dynamic_dims_of(tensor, tensor_source))
    # Symbolic sizes and strides are left to the shape guards, as for tensor inputs.
    session.add_guard(kinds.TensorMatch.of(tensor_source, tensor, sizes=value.fake.shape, strides=value.fake.stride()))
    return NdarrayValue(value, source)


@dataclasses.dataclass(frozen=True, repr=False)
class ScalarItemSource(Source):
    """`base.item()`: the Python number a numpy scalar holds (what its guard compares)."""

    base: Source

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_item"

    def __str__(self) -> str:
        return self.code(str(self.base))

    def code(self, base: str) -> str:
        return f"{base}.item()"


def wrap_numpy_constant(session, obj, source) -> ConstantValue:
    """Numpy scalars, dtypes, finfo/iinfo: immutable constants. Read from the frame, a scalar
    is guarded by its type and value (`s.item() == 1.5`), the others by identity."""
    if isinstance(obj, np.generic):
        if source is not None:
            session.add_guard(kinds.TypeMatch(source, type(obj)))
            session.add_guard(kinds.ConstantMatch(ScalarItemSource(source), obj.item()))
        return NumpyScalarValue(obj, source)
    if source is not None:
        session.add_guard(kinds.IdentityMatch(source, obj))
    return ConstantValue(obj, source)


def numpy_operator(frame, fn, *operands: Value) -> Value:
    """A Python operator with an ndarray operand: numpy's, or torch's when a tensor is on
    its left (torch's operator then sees the ndarray as a tensor)."""
    if any(isinstance(v, TensorValue) for v in operands):
        if isinstance(operands[0], NdarrayValue):
            raise _ndarray_dunder_with_tensor(fn.__name__)
        tensors = [v.tensor if isinstance(v, NdarrayValue) else v for v in operands]
        return frame.session.graph.call_function(frame, fn, tensors, {})
    return numpy_operation(frame, operator_operation(fn), list(operands), {})


def _ndarray_dunder_with_tensor(name: str) -> Unsupported:
    # ndarray's operator methods return NotImplemented for a tensor (whose
    # __array_priority__ is higher); what Python does next (the tensor's reflected
    # method, a TypeError for `+`) is left to eager.
    return Unsupported(f"ndarray {name} with a tensor operand (numpy's operator gives way to torch's; eager decides)")
