"""Lowerings: one function per ATen overload turning IR inputs into an IR value.

`LOWERINGS[aten.op.overload](*args, **kwargs)` receives IR values for tensors and Python
values (sympy for symbolic sizes) for the rest. Families live in sibling files; an op
absent from the table runs as an aten fallback (`graph.py`).
"""

from __future__ import annotations

from typing import Callable

import torch

LOWERINGS: dict[torch._ops.OpOverload, Callable] = {}


def register_lowering(*aten_ops):
    """Register `fn` for every given overload (a packet registers all of its overloads)."""

    def decorate(fn):
        for op in aten_ops:
            overloads = [getattr(op, name) for name in op.overloads()] if isinstance(op, torch._ops.OpOverloadPacket) else [op]
            for overload in overloads:
                if overload in LOWERINGS:
                    raise ValueError(f"two lowerings for {overload}: {LOWERINGS[overload]} and {fn}")
                LOWERINGS[overload] = fn
        return fn

    return decorate


from . import pointwise, activations, reductions, views, indexing, creation, extern, matmul_padding, random, scatter  # noqa: E402,F401  (fill the table)
