"""Running one ATen op on fakes: unwrap to meta, run the meta kernel, wrap the results.

The steps, in order:
1. each FakeTensor argument becomes its inner meta tensor; a real 0-dim CPU tensor becomes a
   fake first (eager lets it mix with any device); any other real tensor is an error;
   `device=` arguments become `meta` (remembering the device asked for);
2. the output device is decided by `devices.output_device` (eager's rule);
3. the meta kernel runs with Python dispatch disabled, so no mode sees the meta tensors;
   an op without a meta kernel is decomposed (torch._decomp's table, else its
   CompositeImplicitAutograd kernel) and the pieces run on fakes again;
4. results are wrapped: an output that *is* an input's meta tensor (in-place, `out=`)
   returns that input fake; an output sharing an input's meta storage (a view) becomes a
   fake sharing that input's wrapper storage; inputs an op mutated get their new geometry.
"""

from __future__ import annotations

import torch
from torch._decomp import decomposition_table
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from .devices import normalize_device, output_device
from .errors import FakeModeMismatchError, RealTensorInputError, UnsupportedFakeOpError
from .op_rules import rule_of
from .tensor import FakeTensor, meta_storage_of

META = torch.device("meta")

_TAKES_DEVICE_KWARG: dict[torch._ops.OpOverload, bool] = {}


def run_op(mode, func, args, kwargs):
    rule = rule_of(func)
    if rule is not None:
        return rule(mode, func, args, kwargs)
    return run_on_meta(mode, func, args, kwargs)


def run_on_meta(mode, func, args, kwargs):
    flat, spec = tree_flatten((args, kwargs))
    inputs: list[FakeTensor] = []
    devices: list[tuple[torch.device, bool]] = []
    storage_args: list[torch.UntypedStorage] = []
    explicit_device = None
    meta_flat = []
    for leaf in flat:
        if isinstance(leaf, torch.Tensor):
            fake = _as_own_fake(mode, func, leaf)
            inputs.append(fake)
            devices.append((fake.device, fake.dim() == 0 and fake.device.type == "cpu"))
            meta_flat.append(fake._meta)
        elif isinstance(leaf, torch.UntypedStorage):
            meta_flat.append(_meta_storage(func, leaf))
            storage_args.append(leaf)
        elif isinstance(leaf, torch.device):
            explicit_device = normalize_device(leaf)
            meta_flat.append(META)
        else:
            meta_flat.append(leaf)
    meta_args, meta_kwargs = tree_unflatten(meta_flat, spec)
    if _takes_device_kwarg(func):
        meta_kwargs["device"] = META
    device = output_device(func, devices, explicit_device)

    # meta storage -> fake storage, taken before the op: `set_` may move an input onto
    # another input's storage.
    fake_storages: dict[int, torch.UntypedStorage] = {}
    for fake in inputs:
        fake_storages.setdefault(_storage_key(fake._meta), fake.untyped_storage())
    for storage in storage_args:
        fake_storages.setdefault(meta_storage_of(storage)._cdata, storage)

    try:
        with torch._C._DisableTorchDispatch():
            result = func(*meta_args, **meta_kwargs)
    except NotImplementedError as missing_kernel:
        return _run_decomposed(mode, func, args, kwargs, missing_kernel)

    if func._schema.is_mutable:
        for fake in inputs:
            fake._sync_geometry_from_meta(fake_storages.get(_storage_key(fake._meta), fake.untyped_storage()))
    same_tensor = {id(fake._meta): fake for fake in inputs}

    def wrap(out):
        if not isinstance(out, torch.Tensor):
            return out
        fake = same_tensor.get(id(out))
        if fake is not None:
            return fake
        key = _storage_key(out)
        fake = FakeTensor(mode, out, device, storage=fake_storages.get(key))
        fake_storages.setdefault(key, fake.untyped_storage())
        return fake

    return tree_map(wrap, result)


def _as_own_fake(mode, func, tensor: torch.Tensor) -> FakeTensor:
    if isinstance(tensor, FakeTensor):
        if tensor.fake_mode is not mode:
            raise FakeModeMismatchError(func)
        return tensor
    if tensor.dim() == 0 and tensor.device.type == "cpu":
        return mode.from_real(tensor)
    raise RealTensorInputError(func, tensor)


def _meta_storage(func, storage: torch.UntypedStorage) -> torch.UntypedStorage:
    meta = meta_storage_of(storage)
    if meta is None:
        raise RealTensorInputError(func, storage)
    return meta


def _storage_key(meta: torch.Tensor) -> int:
    return meta.untyped_storage()._cdata


def _takes_device_kwarg(func) -> bool:
    """Factories (`empty`, `arange`, `full`...) take a keyword-only `device`; when it is
    omitted eager uses the default device, so the meta call must be told `meta` explicitly."""
    try:
        return _TAKES_DEVICE_KWARG[func]
    except KeyError:
        takes = any(a.name == "device" and a.kwarg_only for a in func._schema.arguments)
        _TAKES_DEVICE_KWARG[func] = takes
        return takes


def _run_decomposed(mode, func, args, kwargs, missing_kernel: NotImplementedError):
    decomposition = decomposition_table.get(func)
    if decomposition is None and torch._C._dispatch_has_kernel_for_dispatch_key(
        func.name(), "CompositeImplicitAutograd"
    ):
        decomposition = func.decompose
    if decomposition is None:
        raise UnsupportedFakeOpError(func, missing_kernel) from missing_kernel
    with mode:
        result = decomposition(*args, **kwargs)
    if result is NotImplemented:
        raise UnsupportedFakeOpError(func, missing_kernel) from missing_kernel
    return result
