"""Running generated kernels in Triton's interpreter (TRITON_INTERPRET=1, CPU tensors): the
things the interpreter of Triton 3.6 lacks for them.

    NumpyLibdevice                 libdevice calls return None there: the same functions, by numpy
    accept_one_element_indices     `range(0, rnumel, RBLOCK)` over a kernel argument, with NumPy >= 2.4
    round_bfloat16_to_nearest      float32 -> bfloat16 casts truncate there; GPUs and eager round
    type_comparisons_as_int1       a comparison's result is typed as its operands there
    make_bfloat16_constants        it has no bfloat16 constants (`tl.full(..., tl.bfloat16)`)
    unsigned_all_ones              `~x` of an unsigned integer raises there (-1 as a uint8)
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
