"""Decomposition tables: which ATen ops the tracer replaces by smaller ATen programs.

`default_decompositions()` is what `aot_eager_decomp_partition` (and a code generator like
inductor) wants: torch's core-ATen table plus ops that table keeps whole because they are
core ATen ops, though a compiler fuses their parts better than it calls them; random ops
stay whole.
`required_decompositions()` are always applied: ops whose in-place effects their schema
hides and that have no functional twin (cuDNN's batch norm), rewritten into ops that do.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch
from torch._decomp import _core_aten_decompositions_post_autograd, get_decompositions

aten = torch.ops.aten

_BEYOND_CORE = [
    aten.gelu,
    aten.native_layer_norm,
    aten._softmax,
    aten._log_softmax,
    aten.addmm,
]

_REQUIRED = [aten.cudnn_batch_norm, aten.cudnn_batch_norm_backward]

# Kept whatever a table says: core ATen turns `detach` into `alias`, a view with the base's
# autograd history, and functionalization must see the detach to hand an output back without
# it (`return x.detach()` under inductor required grad).
NEVER_DECOMPOSED = (aten.detach.default,)


@functools.cache
def _default_table() -> dict[Any, Callable]:
    # The post-autograd core table: what `core_aten_decompositions()` holds for ATen ops,
    # without the entries it adds for CompositeImplicitAutograd ops (which never reach a
    # dispatch mode below autograd, and which it builds through torch.export's internals).
    table = {**_core_aten_decompositions_post_autograd(), **get_decompositions(_BEYOND_CORE)}
    # A random op's decomposition draws its numbers differently from the op's kernel
    # (`native_dropout` becomes `rand_like(x) > p`, eager's kernel calls bernoulli): the
    # compiled program would no longer draw eager's dropout masks under the same seed.
    return {op: fn for op, fn in table.items() if torch.Tag.nondeterministic_seeded not in op.tags}


def default_decompositions() -> dict[Any, Callable]:
    return dict(_default_table())


def required_decompositions() -> dict[Any, Callable]:
    return get_decompositions(_REQUIRED)
