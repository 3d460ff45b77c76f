"""`torch._foreach_*` ops as one per-tensor op per list element, so that an optimizer step
(`torch.optim` with foreach=True) lowers to fused pointwise kernels instead of a chain of
aten calls, each writing a fresh list of tensors.

Eager's foreach kernels compute each element exactly as the per-tensor op does (the slow path
is that loop), so the values agree. An in-place variant (`_foreach_add_`) becomes the functional
per-tensor op followed by `copy_` into the element: functionalization turns that into a new
value for the input, which the compiled graph writes back in place.

A `Tensor` overload means a different thing per op: `_foreach_add.Tensor` adds one (0-d)
tensor to every element, `_foreach_addcdiv.Tensor` takes a 1-D tensor of one scalar per element.
"""

from __future__ import annotations

from typing import Callable

import torch

aten = torch.ops.aten


def _zip(*lists):
    return zip(*lists, strict=True)


# name -> {overload: per-list function returning the new values}
def _binary(method: str, with_scalar: str | None = None) -> dict[str, Callable]:
    """`with_scalar`: the method taking a Python number, where `method` takes only tensors."""
    def scalar(xs, other, **kw):
        name = with_scalar if with_scalar and not isinstance(other, torch.Tensor) else method
        return [getattr(x, name)(other, **kw) for x in xs]

    def lists(xs, others, **kw):
        return [getattr(x, with_scalar if with_scalar and not isinstance(o, torch.Tensor) else method)(o, **kw)
                for x, o in _zip(xs, others)]

    return {"Scalar": scalar, "Tensor": scalar, "List": lists, "ScalarList": lists}


def _pointwise3(method: str) -> dict[str, Callable]:
    def scalar(xs, t1, t2, value=1):
        return [getattr(x, method)(a, b, value=value) for x, a, b in _zip(xs, t1, t2)]

    def scalar_list(xs, t1, t2, scalars):
        return [getattr(x, method)(a, b, value=s) for x, a, b, s in _zip(xs, t1, t2, scalars)]

    def tensor(xs, t1, t2, scalars):
        # One scalar per element, read from a 1-D tensor: torch._refs' formula with a 0-d value.
        combine = torch.mul if method == "addcmul" else torch.div
        return [x + scalars[k] * combine(a, b) for k, (x, a, b) in enumerate(_zip(xs, t1, t2))]

    return {"Scalar": scalar, "ScalarList": scalar_list, "Tensor": tensor}


def _lerp():
    def scalar(xs, ends, weight):
        return [torch.lerp(x, e, weight) for x, e in _zip(xs, ends)]

    def lists(xs, ends, weights):
        return [torch.lerp(x, e, w) for x, e, w in _zip(xs, ends, weights)]

    return {"Scalar": scalar, "List": lists, "ScalarList": lists}


def _unary(method: str) -> dict[str, Callable]:
    return {"default": lambda xs: [getattr(x, method)() for x in xs]}


FOREACH = {
    **{name: _binary(name) for name in ("add", "sub", "mul", "div", "pow")},
    "maximum": _binary("maximum", "clamp_min"),
    "minimum": _binary("minimum", "clamp_max"),
    **{name: _pointwise3(name) for name in ("addcmul", "addcdiv")},
    "lerp": _lerp(),
    **{name: _unary(name) for name in ("sqrt", "neg", "abs", "exp", "log", "reciprocal", "sign", "sigmoid", "rsqrt")},
}


def _in_place(compute: Callable, tensor_per_element: bool) -> Callable:
    """The in-place op: eager's loop writes each element before it computes the next, so where
    elements share memory (a tensor listed twice, overlapping views) a later one reads an
    earlier one's write. Each element is computed alone from its own arguments: the lists'
    items at its position, and with `tensor_per_element` its item of a 1-D tensor argument."""
    def run(xs, *args, **kwargs):
        def own(value, k):
            if isinstance(value, (list, tuple)) and len(value) == len(xs):
                return [value[k]]
            return value[k:k + 1] if tensor_per_element and isinstance(value, torch.Tensor) else value

        for k, x in enumerate(xs):
            [value] = compute([x], *(own(a, k) for a in args), **{n: own(v, k) for n, v in kwargs.items()})
            x.copy_(value)

    return run


def foreach_decompositions() -> dict:
    table = {}
    for name, overloads in FOREACH.items():
        for overload, compute in overloads.items():
            functional = getattr(getattr(aten, f"_foreach_{name}"), overload, None)
            in_place = getattr(getattr(aten, f"_foreach_{name}_", None), overload, None)
            if functional is not None:
                table[functional] = compute
            if in_place is not None:
                table[in_place] = _in_place(compute, tensor_per_element=overload == "Tensor" and name in ("addcmul", "addcdiv"))
    return table
