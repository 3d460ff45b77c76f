"""Running generated kernels in Triton's interpreter (TRITON_INTERPRET=1, CPU tensors): the
things the interpreter of Triton 3.6 lacks for them.

    NumpyLibdevice                 libdevice calls return None there: the same functions, by numpy
    accept_one_element_indices     `range(0, rnumel, RBLOCK)` over a kernel argument, with NumPy >= 2.4
    round_bfloat16_to_nearest      float32 -> bfloat16 casts truncate there; GPUs and eager round
    type_comparisons_as_int1       a comparison's result is typed as its operands there
    make_bfloat16_constants        it has no bfloat16 constants (`tl.full(..., tl.bfloat16)`)
    unsigned_all_ones              `~x` of an unsigned integer raises there (-1 as a uint8)
    fold_whole_slices              its tl.reduce with a combine function of ours calls it once
                                   per element; ours: once per position along the axis
    numpy_dtypes_built_once        it builds its table of numpy dtypes again for every lookup
"""

from __future__ import annotations

import math

import numpy as np
import torch
import triton.language as tl
from triton.runtime.interpreter import TensorHandle


class NumpyLibdevice:
    """libdevice for the interpreter: kernels there hold numpy arrays, so each libdevice
    function becomes its numpy counterpart applied to the array inside the tensor."""

    _FUNCTIONS = {
        "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
        "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
        "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos,
        "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor,
        "ceil": np.ceil, "trunc": np.trunc, "nearbyint": np.rint, "rint": np.rint, "abs": np.abs,
        "erf": np.vectorize(math.erf, otypes=[np.float64]), "erfc": np.vectorize(math.erfc, otypes=[np.float64]),
        "lgamma": np.vectorize(lambda v: math.lgamma(v) if v > 0 or v != math.floor(v) else math.inf,
                               otypes=[np.float64]),
        "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "fmod": np.fmod, "pow": np.power,
    }

    def __getattr__(self, name):
        function = self._FUNCTIONS[name]

        def apply(*args):
            first = next(a for a in args if isinstance(a, tl.tensor))
            arrays = [a.handle.data if isinstance(a, tl.tensor) else a for a in args]
            with np.errstate(all="ignore"):
                data = np.asarray(function(*arrays)).astype(first.handle.data.dtype)
            return tl.tensor(TensorHandle(data, first.handle.dtype.scalar), first.type)

        return apply


def accept_one_element_indices():
    """Triton 3.6's interpreter holds a kernel's int arguments as one-element arrays and runs
    `range(0, rnumel, RBLOCK)` through `int(array)`, which NumPy >= 2.4 refuses for arrays
    that are not 0-d; take the element instead."""
    from triton.runtime import interpreter

    patch_tensor = interpreter._patch_lang_tensor

    def patched(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patched


# Triton element types the interpreter may cast to or from bfloat16, as torch dtypes.
_TORCH_DTYPES = {
    "bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "fp64": torch.float64,
    "int1": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
    "uint8": torch.uint8,
}


def round_bfloat16_to_nearest():
    """Triton 3.6's interpreter holds bfloat16 as uint16 bits and casts float32 to it by dropping
    the low 16 bits, and other types (float64, ints) by numpy's astype of the *value* to uint16;
    on a GPU these casts round to nearest even, as eager does. Cast through torch instead, so
    interpreter tests compare bfloat16 kernels with eager bit for bit."""
    from triton.runtime.interpreter import InterpreterBuilder

    cast = InterpreterBuilder.cast_impl

    def through_torch(builder, src, dst_type):
        names = (src.dtype.scalar.name, dst_type.scalar.name)
        if "bf16" not in names or names[0] == names[1] or not all(n in _TORCH_DTYPES for n in names):
            return cast(builder, src, dst_type)
        value = torch.from_numpy(np.ascontiguousarray(src.data))
        if names[0] == "bf16":
            value = value.view(torch.bfloat16)
        value = value.to(_TORCH_DTYPES[names[1]])
        if names[1] == "bf16":
            value = value.view(torch.uint16)
        return TensorHandle(value.numpy(), dst_type.scalar)

    InterpreterBuilder.cast_impl = through_torch  # create_fp_trunc, create_fp_ext... all call it


def type_comparisons_as_int1():
    """Triton 3.6's interpreter computes a comparison with its `binary_op`, which types the
    result as the left operand (fp32 for `x != 0` of a float), although its data is bool. A
    block keeps the bool data, but a 0-d result (of a loaded scalar) splats to a block of that
    type, float32 zeros and ones, which `&` with a bool block then rejects (logical_and of a
    tensor and a 0-d one). Compiled Triton types every comparison int1; so does this."""
    from triton.runtime.interpreter import InterpreterBuilder

    for name in dir(InterpreterBuilder):
        if name.startswith(("create_icmp", "create_fcmp")):
            setattr(InterpreterBuilder, name, _typed_as_int1(getattr(InterpreterBuilder, name)))


def _typed_as_int1(compare):
    def typed(builder, lhs, rhs):
        return TensorHandle(compare(builder, lhs, rhs).data, tl.int1)

    return typed


def make_bfloat16_constants():
    """Triton 3.6's interpreter has no `get_bf16`, which `tl.full(..., tl.bfloat16)` and other
    bfloat16 constants call (torch.ones(dtype=torch.bfloat16), masked_fill of a bfloat16
    tensor). Compiled Triton's builder takes the value as a C float and rounds it to nearest
    even; so does this, keeping the bits as uint16 as the interpreter holds bfloat16."""
    from triton.runtime.interpreter import InterpreterBuilder

    def get_bf16(builder, value):
        bits = torch.tensor([value], dtype=torch.float32).to(torch.bfloat16).view(torch.uint16)
        return TensorHandle(bits.numpy(), tl.bfloat16)

    InterpreterBuilder.get_bf16 = get_bf16


def unsigned_all_ones():
    """Triton 3.6's interpreter builds the all-ones value `~x` xors with as numpy's -1 of the
    type, which NumPy 2 refuses for unsigned types (OverflowError: -1 out of bounds for uint8):
    `~t` of a uint8 tensor failed. Its bits are the type's maximum."""
    from triton.runtime.interpreter import InterpreterBuilder

    signed_all_ones = InterpreterBuilder.get_all_ones_value

    def get_all_ones_value(builder, type):
        name = type.scalar.name
        if name.startswith("uint"):
            return TensorHandle(np.full(1, np.iinfo(np.dtype(name)).max, dtype=name), type.scalar)
        return signed_all_ones(builder, type)

    InterpreterBuilder.get_all_ones_value = get_all_ones_value


def fold_whole_slices():
    """Triton 3.6's interpreter runs a reduction with a combine function it does not know (ours:
    NaN-propagating max/min, argmax/argmin, Welford, prod, any/all) one element at a time:
    `combine(acc[i], x[i, k])` for every i and k, each a Python call of the combine's
    interpreted ops, most of the time of the interpreter tests of reductions. Ours combine
    elementwise, so the same folds run on whole slices across the kept dims instead:
    `combine(acc, x[:, k])` for each k, in the same order, on the same values, stored in arrays
    of the input's dtypes as before: the same bits, R calls instead of X * R."""
    from triton.runtime.interpreter import ReduceOps

    ReduceOps.generic_reduce = _generic_reduce


def numpy_dtypes_built_once():
    """Triton 3.6's interpreter maps a Triton type to a numpy dtype (`_get_np_dtype`, called
    for nearly every interpreted operation) through a dict of 18 dtypes it builds on each call:
    a tenth of the time of the interpreter's reductions. The same table, built once."""
    from triton.runtime import interpreter

    build_table = interpreter._get_np_dtype
    table = {t: build_table(t) for t in (
        tl.int1, tl.float16, tl.float32, tl.float64, tl.int8, tl.uint8, tl.int16, tl.uint16, tl.int32, tl.uint32,
        tl.int64, tl.uint64, tl.bfloat16, tl.float8e5, tl.float8e5b16, tl.float8e4nv, tl.float8e4b8, tl.float8e4b15)}
    pointer = np.dtype(np.uint64)

    def get_np_dtype(tt_dtype):
        if isinstance(tt_dtype, tl.block_type):
            tt_dtype = tt_dtype.element_ty
        return pointer if isinstance(tt_dtype, tl.pointer_type) else table[tt_dtype]

    interpreter._get_np_dtype = get_np_dtype


def _folded(op, acc: list, items: list, dtypes: list, shape) -> list:
    """`op.combine_fn` of the slices `acc` and `items`, each result as an array of `shape` in
    the input's dtype (the interpreter stored each element of a result into such an array)."""
    tensors = [op.to_tensor(a, t) for a, t in zip(acc, dtypes)] + [op.to_tensor(x, t) for x, t in zip(items, dtypes)]
    result = op.combine_fn.fn(*tensors)
    return [_as_array(r, shape, a.dtype) for r, a in zip(result if isinstance(result, tuple) else (result,), acc)]


def _as_array(value, shape, dtype) -> np.ndarray:
    value = np.asarray(value.handle.data if isinstance(value, tl.core.tensor) else value)
    value = value.reshape(shape) if value.size == math.prod(shape) else np.broadcast_to(value, shape)
    return value.astype(dtype)


def _generic_reduce(self, input):
    original_axis = self.axis
    input, axis = self.unravel(input, self.axis)
    data = [arg.handle.data for arg in input]
    dtypes = [arg.dtype for arg in input]
    shape = data[0].shape
    out_shape = shape[:axis] + shape[axis + 1:]
    if shape[axis] == 0:
        acc = [np.zeros(out_shape, dtype=d.dtype) for d in data]
    else:
        acc = [np.take(d, 0, axis=axis).astype(d.dtype) for d in data]
        for k in range(1, shape[axis]):
            acc = _folded(self, acc, [np.take(d, k, axis=axis) for d in data], dtypes, out_shape)
    results = []
    for value, dtype in zip(acc, dtypes):
        if self.keep_dims:
            if original_axis is not None:
                value = np.expand_dims(value, axis)
            else:
                for _ in range(len(shape)):
                    value = np.expand_dims(value, 0)
        elif original_axis is None:
            value = value.item()
        results.append(self.to_tensor(value, dtype))
    return results

