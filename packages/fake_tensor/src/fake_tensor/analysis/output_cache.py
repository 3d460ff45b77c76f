"""Reusing an op's output metadata when the same op meets the same input metadata again.

With symbolic sizes most meta kernels run as Python (torch._refs / prims under the Python
dispatcher), about 20 ms per op; a transformer repeats one block's ops layer after layer on
inputs of identical metadata. For such ops the outputs' metadata (symbolic sizes and
strides, dtype, device) is a function of the inputs' metadata, and any guard the first run
recorded was recorded then: the later runs would ask the same questions. So a repeat
creates fresh outputs of the recorded metadata instead of running the kernel.

Only functional ops qualify: no mutated argument and no output aliasing an input (views and
in-place ops keep their aliasing through the fake mode), every output a fresh tensor at
storage offset 0, and every argument hashable metadata.
"""

from __future__ import annotations

import dataclasses

import torch
from torch.utils._pytree import tree_flatten

_HASHABLE_SCALARS = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout, torch.memory_format)


@dataclasses.dataclass(frozen=True)
class _OutputMetadata:
    sizes: tuple
    strides: tuple
    dtype: torch.dtype
    device: torch.device


def _functional(func) -> bool:
    schema = func._schema
    return not schema.is_mutable and all(r.alias_info is None for r in schema.returns)


def _key_part(leaf):
    if isinstance(leaf, torch.Tensor):
        return (
            "tensor",
            tuple(_expr(s) for s in leaf.shape),
            tuple(_expr(s) for s in leaf.stride()),
            _expr(leaf.storage_offset()),
            leaf.dtype,
            leaf.device,
            leaf.layout,
        )
    if isinstance(leaf, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return ("symbolic", leaf.node.expr)
    if isinstance(leaf, _HASHABLE_SCALARS):
        return (type(leaf), leaf)
    raise TypeError  # not metadata we can key on


def _expr(value):
    return value.node.expr if isinstance(value, torch.SymInt) else value


class OutputCache:
    def __init__(self):
        self._entries: dict[tuple, tuple[_OutputMetadata, ...] | _OutputMetadata] = {}

    def key(self, func, args, kwargs) -> tuple | None:
        if not _functional(func):
            return None
        leaves, spec = tree_flatten((args, kwargs))
        try:
            parts = tuple(_key_part(leaf) for leaf in leaves)
        except TypeError:
            return None
        # Factories called without a dtype take the default dtype inside the kernel.
        return (func, spec, parts, torch.get_default_dtype())

    def replay(self, key):
        """Fresh outputs of the recorded metadata, or None when `key` was not recorded.

        Called from a dispatch mode above the FakeTensorMode, so the factory calls below
        reach the FakeTensorMode and make fakes.
        """
        entry = self._entries.get(key)
        if entry is None:
            return None
        if isinstance(entry, tuple):
            return tuple(_empty_like_metadata(m) for m in entry)
        return _empty_like_metadata(entry)

    def record(self, key, out) -> None:
        outputs = out if isinstance(out, tuple) else (out,)
        if not all(isinstance(o, torch.Tensor) and o.storage_offset() == 0 for o in outputs):
            return
        metadata = tuple(_OutputMetadata(tuple(o.shape), o.stride(), o.dtype, o.device) for o in outputs)
        self._entries[key] = metadata if isinstance(out, tuple) else metadata[0]


def _empty_like_metadata(m: _OutputMetadata) -> torch.Tensor:
    return torch.empty_strided(m.sizes, m.strides, dtype=m.dtype, device=m.device)
