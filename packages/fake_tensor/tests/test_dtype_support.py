"""Fakes standing for CPU tensors raise what eager's CPU kernels raise for dtypes they reject
(meta kernels take every dtype), and nothing more: each call against the real op."""

import re

import pytest
import torch

from fake_tensor import FakeTensorMode

aten = torch.ops.aten

CALLS = {
    "abs_bool": (aten.abs.default, lambda: (torch.tensor([True, False]),)),
    "relu_bool": (aten.relu.default, lambda: (torch.tensor([True, False]),)),
    "frac_int": (aten.frac.default, lambda: (torch.arange(4),)),
    "hypot_uint8": (aten.hypot.default, lambda: (torch.arange(4, dtype=torch.uint8),) * 2),
    "floor_bool_in_place": (aten.floor_.default, lambda: (torch.tensor([True]),)),
    "add_int_float_scalar_in_place": (aten.add_.Scalar, lambda: (torch.arange(3), 1.5)),
    # a value, not a dtype, that eager refuses: remembered for that value alone
    "pow_int_negative_exponent": (aten.pow.Tensor_Scalar, lambda: (torch.arange(3), -1)),
    "pow_int_square": (aten.pow.Tensor_Scalar, lambda: (torch.arange(3), 2)),
    # matrix products over tensors of different dtypes (F.linear of a float64 input)
    "mm_float64_by_float32": (aten.mm.default, lambda: (torch.randn(2, 3, dtype=torch.float64), torch.randn(3, 2))),
    "addmm_float64_input": (aten.addmm.default,
                            lambda: (torch.randn(2), torch.randn(4, 3, dtype=torch.float64), torch.randn(3, 2))),
    "addmm_float64_bias": (aten.addmm.default,
                           lambda: (torch.randn(2, dtype=torch.float64), torch.randn(4, 3), torch.randn(3, 2))),
    "mv_int_by_float": (aten.mv.default, lambda: (torch.arange(6).view(2, 3), torch.randn(3))),
    "dot_float_by_double": (aten.dot.default, lambda: (torch.randn(3), torch.randn(3, dtype=torch.float64))),
    # accepted by eager: no error on fakes either
    "addmm_one_dtype": (aten.addmm.default, lambda: (torch.randn(2), torch.randn(4, 3), torch.randn(3, 2))),
    "mm_ints": (aten.mm.default, lambda: (torch.arange(6).view(2, 3), torch.arange(6).view(3, 2))),
    "abs_int": (aten.abs.default, lambda: (torch.arange(-2, 2),)),
    "add_bool": (aten.add.Tensor, lambda: (torch.tensor([True]), torch.tensor([False]))),
    "mul_int_by_0d_float": (aten.mul.Tensor, lambda: (torch.arange(3), torch.tensor(0.5))),
}


@pytest.mark.parametrize("call", CALLS)
def test_fakes_raise_eagers_dtype_errors(call):
    op, make = CALLS[call]
    try:
        op(*make())
        expected = None
    except (NotImplementedError, RuntimeError) as error:
        expected = error
    mode = FakeTensorMode()
    with mode:
        args = [mode.from_real(a) if isinstance(a, torch.Tensor) else a for a in make()]
        if expected is None:
            op(*args)
        else:
            with pytest.raises(type(expected), match=re.escape(str(expected)[:20])):
                op(*args)
