"""Turning `infer_shapes` arguments and `dynamic_shapes` into fakes with symbolic sizes.

`dynamic_shapes` follows torch.export: a dict keyed by parameter name, or a tuple/list in
parameter order; each entry mirrors its argument (a tensor gets a dict dim -> Dim or a
tuple/list with a Dim or None per dim; a list/tuple/dict of tensors gets a list/tuple/dict
of those; None means static). TensorSpec shapes may hold Dims directly.

Real tensors keep their sizes as the example values of their Dims. For TensorSpecs (and
fakes) the example values are chosen here: distinct per Dim and unlike every static size in
the inputs, so that no comparison between a dynamic size and another size succeeds by
coincidence (which would specialize the Dim).
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping

import torch

from fake_tensor.analysis.tensor_spec import TensorSpec
from fake_tensor.symbolic import ConstraintViolationError, Dim, ShapeEnv
from fake_tensor.tensor import is_fake

# Example sizes tried first for a Dim: small primes, unlikely to equal a model's own sizes.
_PREFERRED_HINTS = (17, 13, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)


def _is_leaf(value) -> bool:
    return isinstance(value, (torch.Tensor, TensorSpec))


def _dims_of_entry(entry, ndim: int, where: str) -> dict[int, Dim]:
    """A leaf's dynamic_shapes entry (None, dict dim -> Dim, or per-dim sequence) as a dict."""
    if entry is None:
        return {}
    if isinstance(entry, Mapping):
        items = entry.items()
    elif isinstance(entry, (tuple, list)):
        if len(entry) != ndim:
            raise ValueError(f"dynamic_shapes for {where} has {len(entry)} entries but the tensor has {ndim} dims")
        items = enumerate(entry)
    else:
        raise TypeError(f"dynamic_shapes for {where} must be a dict dim -> Dim, or a tuple/list, got {entry!r}")
    dims = {}
    for dim, spec in items:
        if spec is None:
            continue
        if not isinstance(spec, Dim):
            raise TypeError(f"dynamic_shapes for {where} dim {dim}: expected a Dim or None, got {spec!r}")
        dims[dim % ndim] = spec
    return dims


def _walk(value, spec, where: str):
    """(path, leaf, dict dim -> Dim) for every tensor/TensorSpec in `value`, with its spec."""
    if _is_leaf(value):
        ndim = len(value.shape)
        dims = _dims_of_entry(spec, ndim, where)
        if isinstance(value, TensorSpec):
            dims = {**value.dims, **dims}
        yield where, value, dims
    elif isinstance(value, (tuple, list)):
        specs = spec if spec is not None else [None] * len(value)
        if not isinstance(specs, (tuple, list)) or len(specs) != len(value):
            raise ValueError(f"dynamic_shapes for {where} must mirror its {len(value)} elements, got {spec!r}")
        for i, (item, item_spec) in enumerate(zip(value, specs)):
            yield from _walk(item, item_spec, f"{where}[{i}]")
    elif isinstance(value, Mapping):
        specs = spec if spec is not None else {}
        for key, item in value.items():
            yield from _walk(item, specs.get(key), f"{where}[{key!r}]")
    elif spec is not None:
        raise ValueError(f"dynamic_shapes gives {spec!r} for {where}, which holds no tensor")


def _per_parameter_specs(bound: inspect.BoundArguments, dynamic_shapes) -> dict[str, object]:
    names = list(bound.arguments)
    if dynamic_shapes is None:
        return {}
    if isinstance(dynamic_shapes, Mapping):
        unknown = set(dynamic_shapes) - set(names)
        if unknown:
            raise ValueError(
                f"dynamic_shapes names {sorted(unknown)}, which are not arguments of this call "
                f"(arguments: {names})"
            )
        return dict(dynamic_shapes)
    if isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(names):
            raise ValueError(
                f"dynamic_shapes has {len(dynamic_shapes)} entries but the call has {len(names)} "
                f"arguments ({names}); give one entry (or None) per argument"
            )
        return dict(zip(names, dynamic_shapes))
    raise TypeError(f"dynamic_shapes must be a dict or a tuple/list, got {type(dynamic_shapes).__name__}")


def _choose_hints(leaves) -> dict[str, int]:
    """Example size per Dim name: real sizes where a real tensor gives one, else chosen."""
    fixed: dict[str, int] = {}
    avoid: set[int] = set()
    wanted: dict[str, Dim] = {}
    for where, value, dims in leaves:
        chosen_here = isinstance(value, TensorSpec) or is_fake(value)
        for d, size in enumerate(value.shape):
            if d in dims:
                if chosen_here:
                    wanted.setdefault(dims[d].name, dims[d])
                else:
                    fixed.setdefault(dims[d].name, int(size))
            elif isinstance(size, int):
                avoid.add(size)
    hints = dict(fixed)
    for name, dim in wanted.items():
        if name in hints:
            continue
        taken = avoid | set(hints.values())
        start = max(dim.min, 2)
        fallback = range(start, int(min(dim.max, start + 10_000)) + 1)
        candidates = itertools.chain(_PREFERRED_HINTS, fallback)
        hint = next((c for c in candidates if dim.allows(c) and c >= 2 and c not in taken), None)
        if hint is None:
            hint = next((c for c in fallback if dim.allows(c)), None)
        if hint is None:
            raise ConstraintViolationError(f"{dim!r} allows no size >= 2, so it cannot be dynamic")
        hints[name] = hint
    return hints


def _fake_from_metadata(mode, env: ShapeEnv, shape, stride, dtype, device, dims, where: str):
    meta = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    sizes, strides, offset = env.symbolic_sizes_strides(meta, dims, where)
    with mode:
        return torch.empty_strided(sizes, strides, dtype=dtype, device=device)


def _fake_leaf(mode, env: ShapeEnv, value, dims: dict[int, Dim], hints: dict[str, int], where: str):
    if isinstance(value, TensorSpec):
        shape = [hints[e.name] if isinstance(e, Dim) else e for e in value.shape]
        shape = [hints[dims[d].name] if d in dims else s for d, s in enumerate(shape)]
        stride = torch.empty(shape, device="meta").stride()
        return _fake_from_metadata(mode, env, shape, stride, value.dtype, value.device, dims, where)
    if is_fake(value):
        if not dims:
            return _fake_from_metadata(mode, env, value.shape, value.stride(), value.dtype, value.device, {}, where)
        shape = [hints[dims[d].name] if d in dims else s for d, s in enumerate(value.shape)]
        stride = torch.empty(shape, device="meta").stride() if value.is_contiguous() else value.stride()
        return _fake_from_metadata(mode, env, shape, stride, value.dtype, value.device, dims, where)
    return mode.from_real(value, dynamic_dims=dims or None, source=where)


def _signature_of(fn, args: tuple, kwargs: dict) -> inspect.Signature:
    try:
        return inspect.signature(fn)
    except (ValueError, TypeError):
        # Builtins such as torch.add have no Python signature: name positionals arg0, arg1...
        positional = [inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(len(args))]
        keyword = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in kwargs]
        return inspect.Signature(positional + keyword)


def fake_arguments(mode, fn, args: tuple, kwargs: dict, dynamic_shapes):
    """(args, kwargs) of `fn` with every tensor/TensorSpec replaced by a fake, Dims made symbolic."""
    bound = _signature_of(fn, args, kwargs).bind(*args, **kwargs)
    specs = _per_parameter_specs(bound, dynamic_shapes)
    leaves = [leaf for name, value in bound.arguments.items() for leaf in _walk(value, specs.get(name), name)]
    hints = _choose_hints(leaves)
    fakes = {id(value): _fake_leaf(mode, mode.shape_env, value, dims, hints, where) for where, value, dims in leaves}
    _check_every_dim_is_dynamic(mode.shape_env, leaves)

    def replace(value):
        if _is_leaf(value):
            return fakes[id(value)]
        if isinstance(value, (tuple, list)):
            return type(value)(replace(v) for v in value)
        if isinstance(value, Mapping):
            return type(value)({k: replace(v) for k, v in value.items()})
        return value

    return tuple(replace(a) for a in bound.args), {k: replace(v) for k, v in bound.kwargs.items()}


def _check_every_dim_is_dynamic(env: ShapeEnv, leaves) -> None:
    declared = {dim.name for dim in env.declared.values()}
    for where, value, dims in leaves:
        for d, dim in dims.items():
            if dim.name not in declared:
                raise ConstraintViolationError(
                    f"{where} has size {value.shape[d]} at dim {d}, declared as {dim!r}: sizes 0 "
                    f"and 1 are specialized, so this example cannot stand for other sizes. Give "
                    f"an example of size >= 2 (or a TensorSpec)."
                )
