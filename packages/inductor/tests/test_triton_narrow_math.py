"""The Triton printer widens float16/bfloat16 operands of math calls to float32 and rounds the
result back: libdevice has no such overloads (the JIT rejected `libdevice.cos` of a bfloat16 in a
Llama training step's rotary kernel), and eager computes them in float32 too.

The printer's pointwise half runs here on a stand-in kernel that records the lines it prints, so
any lowering that hands it a narrow value is covered, not only the ones that widen first."""

from __future__ import annotations

import re

import pytest
import torch

from inductor.codegen.triton.pointwise_ops import PointwiseOps
from inductor.codegen.triton.values import TritonValue


class RecordingKernel(PointwiseOps):
    def __init__(self):
        self.lines, self.dtypes = [], {}

    def _new(self, text, dtype, dims):
        name = f"tmp{len(self.lines)}"
        self.lines.append(f"{name} = {text}")
        self.dtypes[name] = dtype
        return TritonValue(name, dtype, dims)

    def _tensor(self, value):
        return value


def _call_arguments(kernel, fn_pattern):
    """dtypes of the variables passed to each printed call matching `fn_pattern`."""
    found = []
    for line in kernel.lines:
        match = re.search(fn_pattern + r"\(([^)]*)\)", line)
        if match:
            found.append([kernel.dtypes[arg.strip().lstrip("-")] for arg in match.group(1).split(",")])
    return found


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ["cos", "sin", "exp", "log1p", "tanh", "erf", "rsqrt", "sqrt", "sigmoid", "floor"])
def test_narrow_unary_math_is_computed_in_float32_and_rounded_back(name, dtype):
    kernel = RecordingKernel()
    result = getattr(kernel, name)(TritonValue("x", dtype))
    kernel.dtypes["x"] = dtype
    assert result.dtype == dtype
    calls = _call_arguments(kernel, r"(?:libdevice\.\w+|tl\.sqrt_rn)")
    assert calls and all(arg == torch.float32 for args in calls for arg in args), kernel.lines


@pytest.mark.parametrize("name", ["atan2", "pow", "hypot", "mod", "floordiv"])
def test_narrow_binary_math_is_computed_in_float32_and_rounded_back(name):
    kernel = RecordingKernel()
    kernel.dtypes.update(a=torch.bfloat16, b=torch.bfloat16)
    result = getattr(kernel, name)(TritonValue("a", torch.bfloat16), TritonValue("b", torch.bfloat16))
    assert result.dtype == torch.bfloat16
    calls = _call_arguments(kernel, r"(?:libdevice|helpers)\.\w+")
    assert calls and all(arg == torch.float32 for args in calls for arg in args), kernel.lines


def test_float32_math_is_printed_without_casts():
    kernel = RecordingKernel()
    kernel.cos(TritonValue("x", torch.float32))
    assert kernel.lines == ["tmp0 = libdevice.cos(x)"]
