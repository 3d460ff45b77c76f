"""Real tensor -> fake tensor, keeping everything but the data.

Per mode, one `RealToFake` remembers every tensor it converted and every real storage it
has seen, so that two real tensors sharing a storage become two fakes sharing one fake
storage. A real view (`t._base` set) is rebuilt as a view of its converted base, so
autograd's view tracking, version counter and gradient flow match the real tensor's.

The memo does not keep real tensors alive (a captured graph keeps its fakes for as long as
it lives, and must not keep the first call's inputs with them): see `WeakMemo`.
"""

from __future__ import annotations

import weakref

import torch

from .errors import FakeModeMismatchError, FakeTensorError, UnsupportedTensorKindError
from .tensor import FakeTensor, meta_storage_of


class WeakMemo:
    """A dict keyed by an object's address whose entries die with the object.

    Keys are addresses (`id(tensor)`, a storage's `_cdata`) because tensors compare
    elementwise and cannot be dict keys. An address is reused once its object is freed, so
    each entry holds a weak reference whose callback drops the entry when the object dies:
    the callback runs during deallocation, before the address can be reused, and a lookup
    also checks that the entry's object is the one asked about.

    Storages qualify because torch keeps one Python object per live storage (it survives
    while any tensor uses the storage), so its weak reference dies exactly with the storage.
    """

    def __init__(self):
        self._entries: dict[int, tuple[weakref.ref, object]] = {}

    def get(self, key: int, obj: object):
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return None

    def put(self, key: int, obj: object, value: object) -> None:
        entries = self._entries

        def drop(ref, key=key):
            # Only our own entry: a newer object at the same address may have replaced it.
            if entries.get(key, (None,))[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(obj, drop), value)


def check_tensor_kind(tensor: torch.Tensor) -> None:
    """Raises UnsupportedTensorKindError for a tensor no fake can stand for: a fake has one
    dense strided layout, plain dtypes and no lazy negation or conjugation bit."""
    if tensor.layout != torch.strided:
        raise UnsupportedTensorKindError(
            f"{tensor.layout} tensors (one of shape {tuple(tensor.shape)} was given)",
            "Convert it to a dense one first (t.to_dense()).",
        )
    if tensor.is_nested:  # a strided layout, but no sizes or strides to read
        raise UnsupportedTensorKindError(
            "nested tensors of the strided layout", "Use the jagged layout (layout=torch.jagged)."
        )
    if tensor.is_quantized:
        raise UnsupportedTensorKindError(f"quantized tensors ({tensor.dtype})", "Dequantize it first (t.dequantize()).")
    if tensor.is_neg() or tensor.is_conj():
        # Kernels reading its memory would miss the sign; a fake would answer is_conj() wrongly.
        bit = "negation" if tensor.is_neg() else "conjugation"
        raise UnsupportedTensorKindError(
            f"tensors with the lazy {bit} bit set (a view such as z.conj() or z.conj().imag)",
            "Materialize it first (t.resolve_neg() / t.resolve_conj()).",
        )


class RealToFake:
    def __init__(self, mode):
        self.mode = mode
        self._fakes = WeakMemo()  # id(real tensor) -> its fake
        self._storages = WeakMemo()  # real storage's _cdata -> the fake storage standing for it

    def convert(self, tensor: torch.Tensor, *, dynamic_dims=None, source=None, meta_device=None) -> FakeTensor:
        """`meta_device`: the device a tensor on the meta device stands for (else meta)."""
        if isinstance(tensor, FakeTensor):
            if tensor.fake_mode is not self.mode:
                raise FakeModeMismatchError("from_real")
            return tensor
        known = self._fakes.get(id(tensor), tensor)
        if known is not None:
            return known
        check_tensor_kind(tensor)
        fake = self._convert(tensor, dynamic_dims, source, meta_device)
        self._fakes.put(id(tensor), tensor, fake)
        return fake

    def _convert(self, real: torch.Tensor, dynamic_dims, source, meta_device) -> FakeTensor:
        if dynamic_dims is None and real._is_view() and real._base.dtype == real.dtype:
            fake = self._view_of_converted_base(real, meta_device)
        else:
            device = meta_device if meta_device is not None and real.device.type == "meta" else real.device
            fake = self._on_fake_storage(real, dynamic_dims, source, device)
            if real.requires_grad:
                fake = self._with_autograd_state(real, fake)
        if isinstance(real, torch.nn.Parameter):
            # For a tensor subclass, Parameter(...) returns a detached alias marked
            # `_is_param`, which isinstance(x, nn.Parameter) accepts.
            fake = torch.nn.Parameter(fake, requires_grad=real.requires_grad)
        if real.is_leaf and real.grad is not None:
            fake.grad = self.convert(real.grad, meta_device=meta_device)
        return fake

    def _view_of_converted_base(self, real: torch.Tensor, meta_device) -> FakeTensor:
        base = self.convert(real._base, meta_device=meta_device)
        # A view made under no_grad has no grad_fn (it is a leaf), yet requires grad when its
        # base does: making the fake view under the same grad mode reproduces both.
        with torch.set_grad_enabled(not real.is_leaf), self.mode:
            view = base.as_strided(real.size(), real.stride(), real.storage_offset())
        if real.requires_grad and not view.requires_grad:
            view.requires_grad_(True)  # a leaf view of a base not requiring grad
        return view

    def _on_fake_storage(self, real: torch.Tensor, dynamic_dims, source, device) -> FakeTensor:
        real_storage = real.untyped_storage()
        if dynamic_dims is not None:
            meta = self._symbolic_meta(real, dynamic_dims, source)
            return FakeTensor(self.mode, meta, device)
        fake_storage = self._storages.get(real_storage._cdata, real_storage)
        with torch._C._DisableTorchDispatch():
            if fake_storage is not None:
                meta_storage = meta_storage_of(fake_storage)
            else:
                meta_storage = torch.UntypedStorage(real_storage.nbytes(), device="meta")
            meta = torch.empty(0, dtype=real.dtype, device="meta").set_(
                meta_storage, real.storage_offset(), real.size(), real.stride()
            )
        fake = FakeTensor(self.mode, meta, device, storage=fake_storage)
        if fake_storage is None:
            self._storages.put(real_storage._cdata, real_storage, fake.untyped_storage())
        return fake

    def _symbolic_meta(self, real: torch.Tensor, dynamic_dims, source) -> torch.Tensor:
        if self.mode.shape_env is None:
            raise FakeTensorError(
                "from_real(..., dynamic_dims=...) needs a FakeTensorMode(shape_env=ShapeEnv())"
            )
        sizes, strides, offset = self.mode.shape_env.symbolic_sizes_strides(real, dynamic_dims, source)
        # A fresh storage just large enough for the (symbolic) geometry. Symbolic fakes do
        # not alias other converted tensors.
        if real.numel() == 0:
            needed = offset
        else:
            needed = offset + 1 + sum((size - 1) * stride for size, stride in zip(sizes, strides))
        with torch._C._DisableTorchDispatch():
            return torch.empty(needed, dtype=real.dtype, device="meta").as_strided(sizes, strides, offset)

    def _with_autograd_state(self, real: torch.Tensor, fake: FakeTensor) -> FakeTensor:
        fake.requires_grad_(True)
        if real.is_leaf:
            return fake
        # A non-leaf gets a grad_fn of its own; it keeps the geometry and storage of `fake`.
        with torch.enable_grad(), self.mode:
            non_leaf = fake.clone()
        with torch._C._DisableTorchDispatch():
            non_leaf._meta = torch.empty(0, dtype=real.dtype, device="meta").set_(fake._meta)
        non_leaf._point_at(fake.untyped_storage())
        return non_leaf
