"""`Dim`: a named dynamic dimension with an allowed range, and the error for contradicting one.

`Dim("seq", max=4096)` says "this size varies, between min and max". Tensors that use the
same Dim (same name) share one symbol. The ShapeEnv analyses sizes >= 2 only (0 and 1 are
specialized, as in torch), so a range starting below 2 is analysed from 2.
"""

from __future__ import annotations

import dataclasses
import math

from fake_tensor.errors import FakeTensorError


@dataclasses.dataclass(frozen=True)
class Dim:
    name: str
    min: int = 0
    max: int | float = math.inf

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"Dim name {self.name!r} must be a Python identifier")
        if self.min > self.max:
            raise ValueError(f"Dim({self.name!r}) has min {self.min} > max {self.max}")

    def allows(self, size: int) -> bool:
        return self.min <= size <= self.max

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        bounds = []
        if self.min != 0:
            bounds.append(f"min={self.min}")
        if self.max != math.inf:
            bounds.append(f"max={self.max}")
        return f"Dim({', '.join([repr(self.name), *bounds])})"


class _Unbacked:
    """The `dynamic_dims` spec `UNBACKED`: the size becomes an unbacked symbol (`u0`), traced
    without its example value, so 0 and 1 do not specialize and nothing is guarded on it."""

    def __repr__(self) -> str:
        return "UNBACKED"


UNBACKED = _Unbacked()


class ConstraintViolationError(FakeTensorError):
    """The code, or the example sizes, contradict a declared `Dim`."""
