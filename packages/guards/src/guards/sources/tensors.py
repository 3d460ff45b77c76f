"""Sources of tensor metadata: sizes, strides and storage offset."""

from __future__ import annotations

from ..errors import SourceError
from .base import ReadOfBase, Source, _source_value
from .chains import ItemSource


@_source_value
class ShapeSource(Source):
    """A tensor's sizes, `base.size()`; read as `base.shape` (same torch.Size, no call)."""

    base: Source

    def __str__(self) -> str:
        return f"{self.base}.size()"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}_size"

    def code(self, base: str) -> str:
        return f"{base}.shape"


@_source_value
class StrideSource(ReadOfBase):
    """A tensor's strides, `base.stride()`."""

    base: Source
    hint_suffix = "stride"

    def code(self, base: str) -> str:
        return f"{base}.stride()"


@_source_value
class StorageOffsetSource(ReadOfBase):
    """A tensor's storage offset, `base.storage_offset()`."""

    base: Source
    hint_suffix = "offset"

    def code(self, base: str) -> str:
        return f"{base}.storage_offset()"


_TENSOR_PROPERTIES = {"size": ShapeSource, "stride": StrideSource}


def tensor_property_source(tensor: Source, prop: str, dim: int | None = None) -> Source:
    """The source of one size, stride or the storage offset of a tensor.

    Matches fake_tensor's `ShapeEnv.symbol_sources` entries `(source, prop, dim)` with prop in
    "size", "stride", "storage_offset".
    """
    if prop == "storage_offset":
        return StorageOffsetSource(tensor)
    if prop not in _TENSOR_PROPERTIES or dim is None:
        raise SourceError(f"unknown tensor property {prop!r} (dim {dim}) for {tensor}")
    return ItemSource(_TENSOR_PROPERTIES[prop](tensor), dim)
