"""`FakeTensor`: a tensor that has metadata (sizes, strides, dtype, device) but no data.

A FakeTensor is a `_make_wrapper_subclass` wrapper around a tensor on the meta device. Ops
on it dispatch (via `__torch_dispatch__`) to its `FakeTensorMode`, which runs the op's meta
kernel on the inner meta tensors and wraps the results. The wrapper reports the device the
tensor stands for (`cpu`, `cuda:0`...), while the inner tensor always lives on `meta`.

Aliasing is kept at two levels that always agree: fakes that alias share one meta storage
(their inner tensors are meta views of each other) and one wrapper storage (so
`a.untyped_storage()` identity, `torch._C._is_alias_of`, and storage-based alias analysis
work on fakes exactly as on real tensors). Wrapper storages never own memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .errors import DataDependentError, FakeModeMismatchError

if TYPE_CHECKING:
    from .mode import FakeTensorMode

# Redispatching `set_` straight to the Meta kernel changes a wrapper's storage, offset, sizes
# and strides without touching data, autograd, or the version counter, whatever device the
# wrapper reports (a CUDA-reporting fake needs no CUDA runtime for it).
_META_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.Meta)
_set_storage = torch.ops.aten.set_.source_Storage_storage_offset


class FakeTensor(torch.Tensor):
    """A tensor without data. `.device` is the device it stands for; `fake_mode` made it."""

    _meta: torch.Tensor
    fake_mode: "FakeTensorMode"

    @staticmethod
    def __new__(
        cls,
        fake_mode: "FakeTensorMode",
        meta: torch.Tensor,
        device: torch.device,
        *,
        storage: torch.UntypedStorage | None = None,
    ) -> "FakeTensor":
        assert meta.device.type == "meta", meta.device
        fake = torch.Tensor._make_wrapper_subclass(
            cls,
            meta.size(),
            meta.stride(),
            storage_offset=meta.storage_offset(),
            dtype=meta.dtype,
            layout=meta.layout,
            device=device,
            storage_size=meta.untyped_storage().nbytes(),
        )
        if meta.is_conj():
            torch._C._set_conj(fake, True)
        if meta.is_neg():
            torch._C._set_neg(fake, True)
        fake._meta = meta
        fake.fake_mode = fake_mode
        if storage is not None:
            fake._point_at(storage)
        else:
            # Storage objects keep their Python object (and its attributes) for as long as
            # they live, so ops taking a storage argument (`set_`) can find its meta twin.
            fake.untyped_storage()._meta_storage = meta.untyped_storage()
        return fake

    # Torch functions reach `__torch_dispatch__` as ATen ops; nothing to do at that level.
    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        # Reached only when no FakeTensorMode is active (an active mode is called first):
        # the fakes' own mode runs the op, as it would if it were active. Symbolic sizes
        # need the Python dispatcher, which entering the mode turns on.
        mode = _mode_of_fakes(func, args, kwargs)
        if mode.shape_env is not None:
            with mode:
                return func(*args, **(kwargs or {}))
        return mode.__torch_dispatch__(func, types, args, kwargs)

    def _point_at(self, storage: torch.UntypedStorage) -> None:
        """Make this wrapper use the (fake) `storage`, with its inner tensor's geometry:
        at creation, and after an op that may have changed the inner tensor's geometry."""
        meta = self._meta
        _set_storage.redispatch(_META_KEYS, self, storage, meta.storage_offset(), meta.size(), meta.stride())

    def __repr__(self, *, tensor_contents=None) -> str:
        extras = ""
        if self.grad_fn is not None:
            extras = f", grad_fn=<{type(self.grad_fn).__name__}>"
        elif self.requires_grad:
            extras = ", requires_grad=True"
        return (
            f"FakeTensor(size={tuple(self.shape)}, dtype={self.dtype}, "
            f"device='{self.device}'{extras})"
        )

    # Reading values into Python: refuse with the same error ops like `.item()` raise.
    def tolist(self):
        raise DataDependentError("Tensor.tolist", "it returns the tensor's values as Python numbers")

    def numpy(self, *, force: bool = False):
        raise DataDependentError("Tensor.numpy", "it returns the tensor's values as a NumPy array")

    def __array__(self, dtype=None, copy=None):
        raise DataDependentError("Tensor.__array__", "it returns the tensor's values as a NumPy array")

    def __deepcopy__(self, memo):
        # The default copies the storage's bytes, which a fake does not have.
        if id(self) in memo:
            return memo[id(self)]
        with torch.no_grad():
            copy = self.clone()
        copy.requires_grad_(self.requires_grad)
        if getattr(self, "_is_param", False):
            copy = torch.nn.Parameter(copy, requires_grad=self.requires_grad)
        memo[id(self)] = copy
        return copy


def meta_storage_of(storage: torch.UntypedStorage) -> torch.UntypedStorage | None:
    """The meta storage behind a fake's storage; None for a storage that is not a fake's."""
    return getattr(storage, "_meta_storage", None)


def is_fake(x: object) -> bool:
    """True for a FakeTensor (including fake parameters)."""
    return isinstance(x, FakeTensor)


def _mode_of_fakes(func, args, kwargs) -> "FakeTensorMode":
    modes = {fake.fake_mode for fake in _fakes_in(args)} | {fake.fake_mode for fake in _fakes_in((kwargs or {}).values())}
    if len(modes) > 1:
        raise FakeModeMismatchError(func)
    assert modes, f"{func} dispatched to FakeTensor without a fake argument"
    return modes.pop()


def _fakes_in(arguments):
    # ATen arguments nest at most as lists of tensors.
    for value in arguments:
        if isinstance(value, FakeTensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, FakeTensor))
