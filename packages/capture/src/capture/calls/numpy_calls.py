"""Call rules between numpy and torch: numpy functions traced through torch._numpy (the table
in numpy_table), `Tensor.numpy()` and `torch.from_numpy` / `torch.as_tensor` moving between
tensors and ndarrays, and numpy's classes (scalar types, `np.dtype`, `np.finfo`, `np.iinfo`)
folded to constants. A numpy function outside the table is a graph break naming it
(capture.calls.dispatch)."""

from __future__ import annotations

import numpy as np
import torch

from ..errors import Unsupported
from ..numpy_wrapping import tensor_as_array
from ..values.base import Value
from ..values.constant import ConstantValue
from ..values.factory import constant_args, evaluate_constant_operation
from ..values.containers import SequenceValue
from ..values.numpy_arrays import NdarrayValue, NumpyScalarValue, numpy_operation, operation_for
from ..values.symbolic import SymValue
from ..values.tensor import TensorValue
from .numpy_table import RANDOM_CALLABLES, TORCH_NUMPY_FOR
from .registry import construct_rule, rule
from .torch_ops import record_torch_call


def _traced(numpy_fn, torch_fn):
    target = operation_for(torch_fn, getattr(numpy_fn, "__module__", None) or "numpy", numpy_fn.__name__, numpy_fn)

    def handler(frame, args, kwargs):
        constants = constant_args(args, kwargs)
        if constants is not None:
            # Python numbers in, a numpy scalar out (`np.log(np.exp(1 - d) - 1)`, as VITS
            # computes a constant): folded, so the program keeps eager's np.float64. Traced, it
            # became a 0-d ndarray, which a tensor's __setitem__ refuses.
            positional, keywords = constants
            try:
                result = numpy_fn(*positional, **keywords)
            except Exception:  # noqa: BLE001  (traced instead, which raises the program's error)
                result = None
            if isinstance(result, (np.generic, bool, int, float, complex)):
                return frame.session.wrap(result, None)
        return numpy_operation(frame, target, args, kwargs)

    return handler


for _numpy_fn, _torch_fn in TORCH_NUMPY_FOR.items():
    rule(_numpy_fn)(_traced(_numpy_fn, _torch_fn))


def _refuse_random(fn):
    name = getattr(fn, "__qualname__", None) or fn.__name__

    def handler(frame, args, kwargs):
        raise Unsupported(
            f"numpy.random ({name}) draws from numpy's random state, which a graph cannot share",
            hint="the call runs natively between two graphs, as under torch.compile; use torch's random functions to keep one graph",
        )

    return handler


for _fn in RANDOM_CALLABLES:
    rule(_fn)(_refuse_random(_fn))


@rule(torch.Tensor.numpy, accepts="(self, /, *, force=False)")
def _tensor_numpy(frame, args, kwargs):
    tensor, force = args[0], kwargs.get("force", ConstantValue(False)).as_python_constant()
    fake = tensor.fake
    if not force and (fake.requires_grad or fake.device.type != "cpu"):
        raise Unsupported(
            "Tensor.numpy() of a tensor that requires grad or is not on the CPU (eager raises)",
            hint="call .detach().cpu().numpy(), or numpy(force=True)",
        )
    if force:
        tensor = frame.session.graph.call_method(frame, "detach", [tensor], {})
        if fake.device.type != "cpu":
            tensor = frame.session.graph.call_method(frame, "cpu", [tensor], {})
    return NdarrayValue(tensor)


@rule(tensor_as_array)
def _wrapped_tensor_as_array(frame, args, kwargs):
    """wrap_numpy's conversion: the array is the tensor, gradients and device included."""
    return NdarrayValue(args[0])


@rule(torch.from_numpy)
def _from_numpy(frame, args, kwargs):
    if len(args) == 1 and not kwargs and isinstance(args[0], NdarrayValue):
        return args[0].tensor
    return record_torch_call(frame, torch.from_numpy, args, kwargs)


def _as_tensor_rule(fn):
    def handler(frame, args, kwargs):
        if not args or not isinstance(args[0], NdarrayValue):
            return record_torch_call(frame, fn, args, _with_numpy_scalar_dtype(args, kwargs))
        tensor = args[0].tensor
        options = {k: v for k, v in kwargs.items() if not (v.is_python_constant() and v.as_python_constant() is None)}
        if set(options) - {"dtype", "device"} or len(args) > 1:
            raise Unsupported(f"{fn.__name__}(ndarray, ...) with arguments capture does not model")
        if options:
            # Converts (a copy) only where dtype or device differ, as `Tensor.to` does.
            return frame.session.graph.call_method(frame, "to", [tensor], options)
        return tensor

    return handler


def _with_numpy_scalar_dtype(args: list[Value], kwargs: dict[str, Value]) -> dict[str, Value]:
    """`kwargs` with the dtype torch infers from numpy scalars in the data made explicit:
    `torch.tensor(np.float64(1.5))` is float64 (np.int32 int32, np.float16 float16), where the
    Python number the graph receives in its place (NumpyScalarValue) would give float32/int64.
    The dtype is torch's own inference on stand-ins of the data (the numpy scalars themselves,
    constants, a number of each symbolic number's type)."""
    dtype = kwargs.get("dtype")
    if not args or (dtype is not None and not (dtype.is_python_constant() and dtype.as_python_constant() is None)):
        return kwargs
    found = []

    def stand_in(value: Value):
        if isinstance(value, SequenceValue) and value.python_type() in (list, tuple):
            return [stand_in(item) for item in value.items]
        if isinstance(value, NumpyScalarValue):
            found.append(value)
            return value.value
        if isinstance(value, SymValue):
            return value.python_type()(1)
        if isinstance(value, ConstantValue) and isinstance(value.value, (bool, int, float, complex)):
            return value.value
        raise LookupError  # a tensor or another object inside: left to the call as it was

    try:
        data = stand_in(args[0])
    except LookupError:
        return kwargs
    if not found:
        return kwargs
    return {**kwargs, "dtype": ConstantValue(torch.tensor(data).dtype)}


for _fn in (torch.as_tensor, torch.asarray):
    rule(_fn)(_as_tensor_rule(_fn))


@rule(torch.tensor)
def _tensor_of(frame, args, kwargs):
    """`torch.tensor(array)`: a copy, in the array's dtype unless told otherwise."""
    if not args or not isinstance(args[0], NdarrayValue):
        return record_torch_call(frame, torch.tensor, args, _with_numpy_scalar_dtype(args, kwargs))
    if len(args) > 1 or set(kwargs) - {"dtype", "device", "requires_grad"}:
        raise Unsupported("torch.tensor(ndarray, ...) with arguments capture does not model")
    graph = frame.session.graph
    requires_grad = kwargs.pop("requires_grad", ConstantValue(False)).as_python_constant()
    copy = graph.call_method(frame, "clone", [args[0].tensor], {})
    options = {k: v for k, v in kwargs.items() if not (v.is_python_constant() and v.as_python_constant() is None)}
    if options:
        copy = graph.call_method(frame, "to", [copy], options)
    if requires_grad:
        copy = graph.call_method(frame, "requires_grad_", [copy], {})
    return copy


def _folded(frame, cls, args: list[Value], kwargs: dict[str, Value]) -> Value:
    constants = constant_args(args, kwargs)
    if constants is None:
        raise Unsupported(f"numpy.{cls.__name__}(...) of values only known when the graph runs")
    positional, keywords = constants
    return evaluate_constant_operation(frame, lambda: cls(*positional, **keywords), ())


@construct_rule(np.dtype, np.finfo, np.iinfo)
def _numpy_constant_class(frame, cls, args, kwargs):
    return _folded(frame, cls, args, kwargs)


@construct_rule(np.generic, subclasses=True)
def _numpy_scalar_type(frame, cls, args, kwargs):
    """`np.float32(0.5)` is a numpy scalar (folded now); `np.float32(array)` casts it."""
    if len(args) == 1 and not kwargs and isinstance(args[0], (NdarrayValue, TensorValue)):
        return numpy_operation(frame, operation_for(_cast_to(np.dtype(cls).name), "numpy", cls.__name__), args, {})
    return _folded(frame, cls, args, kwargs)


def _cast_to(dtype_name: str):
    return lambda array: array.astype(dtype_name)
