"""Running one ATen op on fakes: unwrap to meta, run the meta kernel, wrap the results.

An op that writes an argument is first checked for the writes eager refuses because the
written memory overlaps what the op reads (memory_overlap.py; meta kernels skip that). An op
with an entry in `op_rules` runs that rule instead (which usually calls `run_on_meta`
itself). `run_on_meta` does, in order:
1. each FakeTensor argument becomes its inner meta tensor; a real 0-dim CPU tensor becomes a
   fake first (eager lets it mix with any device); any other real tensor is an error;
   `device=` arguments become `meta` (remembering the device asked for);
2. the output device is decided by `devices.output_device` (eager's rule);
3. a call the op's `meta_output_cache` has seen (equal argument metadata; with a ShapeEnv,
   equal size expressions) returns fresh fakes of the recorded metadata, or `self` for
   in-place ops;
4. otherwise the meta kernel runs with Python dispatch disabled, so no mode sees the meta tensors;
   an op without a meta kernel is decomposed (torch._decomp's table, else its
   CompositeImplicitAutograd kernel) and the pieces run on fakes again; a kernel that
   cannot take symbolic sizes reruns on their example values (`specialization.py`);
5. results are wrapped: an output that *is* an input's meta tensor (in-place, `out=`)
   returns that input fake; an output sharing an input's meta storage (a view) becomes a
   fake sharing that input's wrapper storage; inputs an op mutated get their new geometry.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch._decomp import decomposition_table
from torch.autograd.graph import increment_version

from . import dtype_support, memory_overlap, meta_output_cache, specialization
from .devices import normalize_device, output_device
from .errors import FakeModeMismatchError, RealTensorInputError, UnsupportedFakeOpError, UnsupportedTensorKindError
from .op_rules import rule_of
from .tensor import FakeTensor, meta_storage_of

META = torch.device("meta")
_PLAIN_ARGUMENTS = frozenset({int, float, bool, complex, str, type(None), torch.dtype, torch.layout, torch.memory_format})


_QUANTIZED_DTYPES = frozenset({torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4})


def run_op(mode, func, args, kwargs):
    facts = _facts_of(func)
    for position, name in facts.dtype_arguments:
        dtype = args[position] if position < len(args) else kwargs.get(name)
        if dtype in _QUANTIZED_DTYPES:
            raise UnsupportedTensorKindError(f"quantized tensors ({func} makes a {dtype} one)", "Run this op eagerly.")
    if facts.writes_data:
        # Before the write, as eager checks (meta kernels skip it): memory_overlap.py.
        memory_overlap.check_writes(func, facts.writes_data, args, kwargs)
    rule = rule_of(func)
    result = rule(mode, func, args, kwargs) if rule is not None else run_on_meta(mode, func, args, kwargs)
    for position, name in facts.written_lists:
        written = args[position] if position < len(args) else kwargs.get(name, ())
        for tensor in written:
            # Eager's foreach kernels write each item through its own in-place op, which
            # moves that tensor's version counter (once per listing); the autograd layer
            # above us moves none for a list, and capture reads versions to see writes.
            increment_version(tensor)
    return result


def run_on_meta(mode, func, args, kwargs):
    facts = _facts_of(func)
    unwrapped = _Unwrapped(mode, func)
    meta_args = unwrapped.of(args)
    meta_kwargs = unwrapped.of(kwargs)
    if facts.takes_device_kwarg:
        meta_kwargs["device"] = META
    device = output_device(func, unwrapped.devices, unwrapped.explicit_device)
    if facts.checks_dtypes and unwrapped.inputs:
        dtype_support.check(func, args, kwargs, unwrapped.inputs)

    cache = facts.output_cache
    if cache is not None and mode.shape_env is not None:
        cache = meta_output_cache.symbolic_output_cache(mode.shape_env, func, cache)
    key = cache.key(meta_args, meta_kwargs) if cache is not None else None
    if key is not None:
        with torch._C._DisableTorchDispatch():
            replayed = cache.replay(key)
        if replayed is meta_output_cache.RETURNS_SELF:
            return unwrapped.inputs[0]
        if replayed is not None:
            return _wrap_fresh(mode, replayed, device)

    # meta storage -> fake storage, taken before the op (`set_` may move an input onto
    # another input's storage). Not skipped for ops whose schema promises fresh outputs:
    # some return views anyway (unsafe_split).
    fake_storages: dict[int, torch.UntypedStorage] = {}
    for fake in unwrapped.inputs:
        fake_storages.setdefault(_storage_key(fake._meta), fake.untyped_storage())
    for storage in unwrapped.storages:
        fake_storages.setdefault(meta_storage_of(storage)._cdata, storage)

    try:
        with torch._C._DisableTorchDispatch():
            result = func(*meta_args, **meta_kwargs)
            if not unwrapped.inputs:
                result = _numbers_result_to_meta(result)
            if key is not None:
                cache.record(key, meta_args, meta_kwargs, result)
    except NotImplementedError as missing_kernel:
        return _run_decomposed(mode, func, args, kwargs, missing_kernel)
    except RuntimeError as error:
        if mode.shape_env is None or facts.output_cache is None or not specialization.needs_concrete_sizes(error):
            raise
        return specialization.run_specialized(mode, func, args, kwargs, run_on_meta)

    if facts.may_change_geometry:
        # Re-pointed without comparing first: comparing symbolic sizes would record guards.
        for fake in unwrapped.inputs:
            fake._point_at(fake_storages.get(_storage_key(fake._meta), fake.untyped_storage()))
    same_tensor = {id(fake._meta): fake for fake in unwrapped.inputs}

    def wrap(out):
        if isinstance(out, torch.Tensor):
            fake = same_tensor.get(id(out))
            if fake is not None:
                return fake
            key = _storage_key(out)
            fake = FakeTensor(mode, out, device, storage=fake_storages.get(key))
            fake_storages.setdefault(key, fake.untyped_storage())
            return fake
        if isinstance(out, (list, tuple)):
            return type(out)(wrap(x) for x in out)
        return out

    return wrap(result)


def _numbers_result_to_meta(out):
    """An op given Python numbers where it takes tensors (`torch.div(n, 4, rounding_mode=...)` of
    two ints, as Longformer computes its chunk count) ran on the CPU tensors ATen wrapped them
    into, as eager does: its result keeps only its metadata, on meta."""
    if isinstance(out, torch.Tensor) and out.device.type != "meta":
        return torch.empty_strided(out.shape, out.stride(), dtype=out.dtype, device=META)
    if isinstance(out, (list, tuple)):
        return type(out)(_numbers_result_to_meta(x) for x in out)
    return out


def _wrap_fresh(mode, out, device):
    """Fakes around meta outputs that alias nothing (replayed by the output cache)."""
    if isinstance(out, torch.Tensor):
        return FakeTensor(mode, out, device)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap_fresh(mode, x, device) for x in out)
    return out


class _Unwrapped:
    """Replaces fakes by their meta tensors (and fake storages and devices by meta ones) in an
    op's arguments, collecting what deciding the output device and aliasing needs. ATen
    arguments nest at most as lists of tensors, so this is faster than a pytree walk."""

    def __init__(self, mode, func):
        self.mode, self.func = mode, func
        self.inputs: list[FakeTensor] = []
        self.devices: list[tuple[torch.device, bool]] = []
        self.storages: list[torch.UntypedStorage] = []
        self.explicit_device: torch.device | None = None

    def of(self, value):
        if type(value) in _PLAIN_ARGUMENTS:  # most arguments: checked first, and cheaply
            return value
        if isinstance(value, torch.Tensor):
            fake = _as_own_fake(self.mode, self.func, value)
            self.inputs.append(fake)
            device = fake.device
            self.devices.append((device, device.type == "cpu" and fake.dim() == 0))
            return fake._meta
        if isinstance(value, (list, tuple)):
            if _PLAIN_ARGUMENTS.issuperset(map(type, value)):  # sizes, dims
                return value
            return type(value)([self.of(x) for x in value])
        if isinstance(value, dict):
            return {k: self.of(v) for k, v in value.items()}
        if isinstance(value, torch.device):
            self.explicit_device = normalize_device(value)
            return META
        if isinstance(value, torch.UntypedStorage):
            self.storages.append(value)
            return _meta_storage(self.func, value)
        return value


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


@dataclass(frozen=True)
class _OpFacts:
    # Factories (`empty`, `arange`, `full`...) take a keyword-only `device`; when it is
    # omitted eager uses the default device, so the meta call must be told `meta` explicitly.
    takes_device_kwarg: bool
    # Ops that can change a tensor argument's sizes, strides, offset or storage: in-place
    # view ops (`t_`), resizes and `set_`, and `out=` ops (which resize a wrongly sized
    # `out`). Plain in-place ops (`add_`) cannot.
    may_change_geometry: bool
    # The op's recorded calls, when a repeated call may reuse the first one's outputs.
    output_cache: meta_output_cache.OutputCache | None
    # (position, name) of each `Tensor(a!)[]` argument: the lists a foreach op writes.
    written_lists: tuple[tuple[int, str], ...]
    # Pointwise ops, whose CPU kernels reject some integer and bool dtypes (dtype_support.py).
    checks_dtypes: bool
    # Names of the arguments whose elements the op writes (in-place `self`, `out=`, foreach
    # lists); not those an in-place view op only re-shapes (`t_`).
    writes_data: frozenset[str]
    # (position, name) of the `dtype` argument: one naming a quantized dtype makes a quantized
    # tensor, which torch's meta kernels describe as float32 (quantize_per_tensor).
    dtype_arguments: tuple[tuple[int, str], ...]


_FACTS: dict[torch._ops.OpOverload, _OpFacts] = {}

_RESIZING_OPS = {"aten::resize_", "aten::resize_as_", "aten::set_", "aten::_resize_output_", "aten::resize"}


def _facts_of(func) -> _OpFacts:
    try:
        return _FACTS[func]
    except KeyError:
        schema = func._schema
        may_change_geometry = (
            torch.Tag.inplace_view in func.tags
            or schema.name in _RESIZING_OPS
            or any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)
        )
        facts = _OpFacts(
            takes_device_kwarg=any(a.name == "device" and a.kwarg_only for a in schema.arguments),
            may_change_geometry=may_change_geometry,
            output_cache=meta_output_cache.output_cache_for(schema, may_change_geometry),
            written_lists=tuple(
                (position, a.name) for position, a in enumerate(schema.arguments)
                if a.alias_info is not None and a.alias_info.is_write and isinstance(a.type, torch.ListType)
            ),
            checks_dtypes=dtype_support.probes(func),
            writes_data=frozenset(
                a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write
            ) if torch.Tag.inplace_view not in func.tags else frozenset(),
            dtype_arguments=tuple(
                (position, a.name) for position, a in enumerate(schema.arguments)
                if a.name == "dtype"  # the schema types a ScalarType as int; the name is the convention
            ),
        )
        _FACTS[func] = facts
        return facts


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
