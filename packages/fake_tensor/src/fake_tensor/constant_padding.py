"""constant_pad_nd with symbolic pads: the output layout eager's kernel picks.

Eager's kernel (aten/src/ATen/native/PadNd.cpp) returns `narrow(...).clone()` when no pad is
positive, which keeps the input's dimension order (a permuted gradient stays permuted), and
otherwise a new tensor in the input's suggested memory format. torch's meta kernel takes the
first branch only when every pad is a plain int, so a symbolic pad (a backward cutting off
what the forward padded to a multiple of a block length: LongT5's local attention, after a
new sequence length made it dynamic) got the contiguous layout where eager's result is
permuted, and the backward's `view` of it failed at run time.

Here the branch is eager's: each pad's sign is decided (with a guard, as eager's branch depends
on it) when the two layouts can differ, that is when the input is not contiguous in its
suggested memory format.
"""

from __future__ import annotations

import torch
from torch._prims_common import suggest_memory_format

from .execution import run_on_meta
from .op_rules import bound_arguments, rule_for

aten = torch.ops.aten


@rule_for(aten.constant_pad_nd.default)
def _constant_pad_nd(mode, func, args, kwargs):
    bound = bound_arguments(func, args, kwargs)
    x, pad = bound["self"], list(bound["pad"])
    symbolic = any(isinstance(p, torch.SymInt) for p in pad)
    if not symbolic or x.is_contiguous(memory_format=suggest_memory_format(x)) or not all(p <= 0 for p in pad):
        return run_on_meta(mode, func, args, kwargs)
    with mode:
        cut = x
        for i in range(len(pad) // 2):
            dim = x.dim() - 1 - i
            before, after = pad[2 * i], pad[2 * i + 1]
            cut = cut.narrow(dim, -before, cut.shape[dim] + before + after)
        return cut.clone()
