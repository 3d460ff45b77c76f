"""Queries of a tensor's own metadata (`aten.size`, `aten.sym_stride`, `aten.numel`...),
answered from the fake itself.

Composite C++ kernels (`cov`, `kron`, `linalg.norm`...) reach these as ATen ops when an
argument is a tensor subclass. Running them as meta kernels is not only slower: the inner
meta tensor of a fake with symbolic sizes is not a subclass, and torch's argument parser
fails on it with an internal assert ("dispatch_on_subclass called with NO overloaded
args"). A fake carries the answer already, symbolic where its sizes are: a caller that
needs a concrete int converts the SymInt, which records the guard that conversion implies.
"""

from __future__ import annotations

import torch

from .op_rules import rule_for

aten = torch.ops.aten

_QUERIES = {
    aten.size.default: lambda t: tuple(t.shape),
    aten.sym_size.default: lambda t: tuple(t.shape),
    aten.size.int: lambda t, dim: t.shape[dim],
    aten.sym_size.int: lambda t, dim: t.shape[dim],
    aten.stride.default: lambda t: t.stride(),
    aten.sym_stride.default: lambda t: t.stride(),
    aten.stride.int: lambda t, dim: t.stride(dim),
    aten.sym_stride.int: lambda t, dim: t.stride(dim),
    aten.numel.default: lambda t: t.numel(),
    aten.sym_numel.default: lambda t: t.numel(),
    aten.storage_offset.default: lambda t: t.storage_offset(),
    aten.sym_storage_offset.default: lambda t: t.storage_offset(),
    aten.dim.default: lambda t: t.dim(),
}


def _answer_from_the_tensor(mode, func, args, kwargs):
    return _QUERIES[func](*args, **kwargs)


rule_for(*_QUERIES)(_answer_from_the_tensor)
