"""Lowerings: one function per ATen overload turning IR inputs into an IR value.

`LOWERINGS[aten.op.overload](*args, **kwargs)` receives IR values for tensors and Python
values (sympy for symbolic sizes) for the rest. Families live in sibling files; an op
absent from the table runs as an aten fallback (`graph.py`).
"""

from __future__ import annotations

from typing import Callable

import torch
from fake_tensor.registries import register_once

LOWERINGS: dict[torch._ops.OpOverload, Callable] = {}


def register_lowering(*aten_ops):
    """Register `fn` for every given overload (a packet registers all of its overloads)."""

    def decorate(fn):
        overloads = [
            overload
            for op in aten_ops
            for overload in ([getattr(op, name) for name in op.overloads()]
                             if isinstance(op, torch._ops.OpOverloadPacket) else [op])
        ]
        return register_once(LOWERINGS, overloads, fn, "lowerings")

    return decorate


from . import pointwise, activations, reductions, views, indexing, creation, extern, matmul_padding, random, scatter, pooling, convolution  # noqa: E402,F401  (fill the table)
