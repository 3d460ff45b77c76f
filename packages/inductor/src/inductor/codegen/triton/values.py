"""What the Triton printer knows about a value it has emitted, and where a value may be reused."""

from __future__ import annotations

import torch


class TritonValue:
    """A Triton expression (usually a variable), its torch dtype, and the block axes it varies along.
    `literal` holds the Python value of a constant printed inline."""

    __slots__ = ("text", "dtype", "dims", "literal")

    def __init__(self, text: str, dtype: torch.dtype, dims=frozenset(), literal=None):
        self.text, self.dtype, self.dims, self.literal = text, dtype, frozenset(dims), literal

    def __str__(self):
        return self.text


class Scope:
    """Common subexpressions and register-forwarded stores valid in one region of the kernel."""

    def __init__(self):
        self.cse: dict[str, TritonValue] = {}
        self.stored: dict[str, tuple] = {}   # buffer -> (index, value)
        self.welford: dict[tuple, tuple] = {}  # welford inputs' texts -> (mean, m2, weight)
