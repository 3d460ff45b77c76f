"""Binary TensorIterator ops whose meta kernel lays the output out unlike eager.

torch registers a Python decomposition as the meta kernel of these ops, over the C++
structured one (torch/_meta_registrations.py `activate_meta`). Eager's kernels lay the output
out as TensorIterator does: like the first operand that is not contiguous in the same order
as the others (softplus_backward of a transposed gradient is transposed). The decompositions
build the output with `torch.where(cond_from_self, ...)` or `self * ...`, so it follows the
other operand. A graph traced on the meta layout then fails or reads the wrong elements at
run time: the backward reshapes the gradient with `view`, which eager's transposed gradient
cannot take (HF Doge in training: `exp(A * softplus(dt_proj(v))).transpose(-1, -2)`).

The rule keeps what the meta kernel says of shape and dtype and takes the strides of
`mul(a, b)` on the same two operands, a prims-based meta kernel that lays the output out as
TensorIterator does. Each op below was observed to differ from eager's CPU strides.
"""

from __future__ import annotations

import torch

from .execution import run_on_meta
from .op_rules import bound_arguments, rule_for

aten = torch.ops.aten

# Each with its two tensor operands, by position among the op's arguments.
_OPERANDS = {
    aten.softplus_backward.default: (0, 1),
    aten.elu_backward.default: (0, 5),
    aten.hardsigmoid_backward.default: (0, 1),
    aten.hardswish_backward.default: (0, 1),
    aten.hardtanh_backward.default: (0, 1),
    aten.logit_backward.default: (0, 1),
    aten.xlogy.Tensor: (0, 1),
    aten.special_xlog1py.default: (0, 1),
    aten.copysign.Tensor: (0, 1),
}


@rule_for(*_OPERANDS)
def _tensor_iterator_layout(mode, func, args, kwargs):
    result = run_on_meta(mode, func, args, kwargs)
    values = list(bound_arguments(func, args, kwargs).values())
    first, second = (values[position] for position in _OPERANDS[func])
    if not isinstance(first, torch.Tensor) or not isinstance(second, torch.Tensor):
        return result
    layout = run_on_meta(mode, aten.mul.Tensor, (first, second), {})
    with mode:
        return torch.empty_strided(result.shape, layout.stride(), dtype=result.dtype, device=result.device)

