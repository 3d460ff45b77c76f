"""`TensorSpec`: describe an input by shape, dtype and device instead of giving a tensor.

    TensorSpec((Dim("batch"), Dim("seq", max=1024)), dtype=torch.long)

Shape entries are ints or Dims; a Dim entry makes that dimension dynamic.
"""

from __future__ import annotations

import dataclasses

import torch

from fake_tensor.symbolic import Dim


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int | Dim, ...]
    dtype: torch.dtype = torch.float32
    device: str | torch.device = "cpu"

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(self.shape))
        for entry in self.shape:
            if not isinstance(entry, (int, Dim)):
                raise TypeError(f"TensorSpec shape entries are ints or Dims, got {entry!r}")

    @property
    def dims(self) -> dict[int, Dim]:
        return {i: entry for i, entry in enumerate(self.shape) if isinstance(entry, Dim)}

    def __str__(self) -> str:
        shape = ", ".join(str(entry) for entry in self.shape)
        return f"TensorSpec(({shape}), {self.dtype}, {self.device})"
