"""Meta kernels that cannot take symbolic sizes run on the sizes' example values instead.

Some C++ meta kernels read sizes as plain ints (`fractional_max_pool3d`'s): on a meta tensor
with symbolic sizes that fails inside torch, with an internal assert or "Cannot call
sizes() on tensor with symbolic sizes/strides". Such a call is rerun on fakes of the
arguments' example geometry; reading each symbolic size as an int records the guard that it
equals its example value, so the (static) result is claimed only for those sizes, and a
caller sees a specialization it can report (infer_shapes names the op and the Dim), never a
shape that is wrong elsewhere.

Only ops whose outputs are fresh tensors or `self` unchanged (the ones `meta_output_cache`
serves) are rerun this way: an op that aliases or re-shapes its arguments would act on the
stand-ins instead of the fakes.
"""

from __future__ import annotations

import torch

from .tensor import FakeTensor

_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)

# What torch says when a kernel reads symbolic sizes as ints (torch/csrc's arg parser and
# c10's TensorImpl); the texts are stable across torch 2.11-2.13.
_MESSAGES = (
    "dispatch_on_subclass called with NO overloaded args",
    "on tensor with symbolic sizes/strides",
)


def needs_concrete_sizes(error: RuntimeError) -> bool:
    message = str(error)
    return any(m in message for m in _MESSAGES)


def run_specialized(mode, func, args, kwargs, run):
    """`run(mode, func, args, kwargs)` on stand-ins of the example sizes (guarding them)."""
    with mode:
        static_args = [_specialized(a) for a in args]
        static_kwargs = {name: _specialized(v) for name, v in kwargs.items()}
    result = run(mode, func, static_args, static_kwargs)
    if static_args and result is static_args[0]:  # a plain in-place op returns `self`, whose geometry it kept
        return args[0]
    return result


def _specialized(value):
    if isinstance(value, _SYMBOLIC):
        return _concrete(value)
    if isinstance(value, FakeTensor) and _is_symbolic(value):
        # int() on a SymInt records the guard that it equals its example value.
        sizes = [int(s) for s in value.shape]
        strides = [int(s) for s in value.stride()]
        return torch.empty_strided(sizes, strides, dtype=value.dtype, device=value.device)
    if isinstance(value, (list, tuple)):
        return type(value)(_specialized(v) for v in value)
    return value


def _concrete(value):
    return {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(value)](value)


def _is_symbolic(t: torch.Tensor) -> bool:
    return any(isinstance(s, torch.SymInt) for s in (*t.shape, *t.stride()))
