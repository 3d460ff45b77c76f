"""A plain interpreter for guards, written independently of the code generator.

It reads sources the way they print (`L['self'].weight` through ordinary getattr, so
nn.Module.__getattr__ and all) and evaluates each guard kind by its documented meaning. The
generated guard functions must agree with it on every frame.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Mapping

import sympy
import torch
from torch.utils._device import DeviceContext

from guards import kinds, sources


@dataclasses.dataclass
class FrameValues:
    L: Mapping[str, object]
    G: Mapping[str, object] = dataclasses.field(default_factory=dict)
    C: Mapping[str, object] = dataclasses.field(default_factory=dict)  # name -> cell


def read(source: sources.Source, frame: FrameValues) -> object:
    match source:
        case sources.LocalSource(name):
            return frame.L[name]
        case sources.GlobalSource(name):
            return frame.G[name]
        case sources.ClosureSource(name):
            return frame.C[name].cell_contents
        case sources.ModuleGlobalSource(module, name):
            return vars(sys.modules[module])[name]
        case sources.HeldCellSource(cell=cell):
            return cell.cell_contents
        case sources.AttrSource(base, attr):
            return getattr(read(base, frame), attr)
        case sources.ItemSource(base, key):
            return read(base, frame)[key]
        case sources.TypeSource(base):
            return type(read(base, frame))
        case sources.ShapeSource(base):
            return read(base, frame).size()
        case sources.StrideSource(base):
            return read(base, frame).stride()
        case sources.StorageOffsetSource(base):
            return read(base, frame).storage_offset()
        case sources.SubmoduleSource(module, name) | sources.ParameterSource(module, name) | sources.BufferSource(module, name):
            return getattr(read(module, frame), name)
        case sources.ModuleRegistrySource(base, registry):
            return getattr(read(base, frame), registry)
    raise NotImplementedError(type(source))


def _same_constant(value: object, expected: object) -> bool:
    if type(value) is not type(expected):
        return False
    if isinstance(expected, (tuple, list)):
        return len(value) == len(expected) and all(map(_same_constant, value, expected))
    if isinstance(expected, float) and math.isnan(expected):
        return math.isnan(value)
    return value == expected


def _tensor_ok(t: object, g: kinds.TensorMatch) -> bool:
    if type(t) is not g.kind:
        return False
    sizes, strides = t.size(), t.stride()
    if len(sizes) != len(g.sizes) or len(strides) != len(g.strides):
        return False
    if any(e is not None and e != a for e, a in zip(g.sizes, sizes)):
        return False
    if any(e is not None and e != a for e, a in zip(g.strides, strides)):
        return False
    return (
        t.dtype == g.dtype
        and t.device == g.device
        and t.requires_grad == g.requires_grad
        and t.is_inference() == g.is_inference
        and t.is_neg() == g.is_neg
        and t.is_conj() == g.is_conj
    )


def holds(guard: kinds.Guard, frame: FrameValues) -> bool:
    """Whether `guard` holds on `frame`; a source that cannot be read fails it."""
    try:
        return _holds(guard, frame)
    except (AttributeError, LookupError, TypeError, RuntimeError):
        return False


def _holds(guard: kinds.Guard, frame: FrameValues) -> bool:
    match guard:
        case kinds.TypeMatch(source, kind):
            return type(read(source, frame)) is kind
        case kinds.IdentityMatch():
            return read(guard.source, frame) is guard.value
        case kinds.ConstantMatch():
            return _same_constant(read(guard.source, frame), guard.value)
        case kinds.NotNone(source):
            return read(source, frame) is not None
        case kinds.FiniteFloat(source):
            return math.isfinite(read(source, frame))
        case kinds.LengthMatch(source, length):
            return len(read(source, frame)) == length
        case kinds.DictKeysMatch(source, keys):
            return list(read(source, frame).keys()) == list(keys)
        case kinds.HasAttr(source, attr, present):
            return hasattr(read(source, frame), attr) == present
        case kinds.TensorMatch():
            return _tensor_ok(read(guard.source, frame), guard)
        case kinds.ShapeGuard(expr, symbols):
            values = {symbol: sympy.Integer(int(read(source, frame))) for symbol, source in symbols}
            return bool(expr.xreplace(values))
        case kinds.GradMode(enabled):
            return torch.is_grad_enabled() == enabled
        case kinds.InferenceMode(enabled):
            return torch.is_inference_mode_enabled() == enabled
        case kinds.DefaultDtype(dtype):
            return torch.get_default_dtype() == dtype
        case kinds.DeterministicAlgorithms(enabled, warn_only):
            if torch.are_deterministic_algorithms_enabled() != enabled:
                return False
            return not enabled or torch.is_deterministic_algorithms_warn_only_enabled() == warn_only
        case kinds.AutocastState(enabled):
            on = dict(enabled)
            for device in torch._C._autocast_supported_devices():
                if torch.is_autocast_enabled(device) != (device in on):
                    return False
                if device in on and torch.get_autocast_dtype(device) != on[device]:
                    return False
            return True
        case kinds.TorchFunctionModes(modes):
            stack = [torch._C._get_function_stack_at(level) for level in range(torch._C._len_torch_function_stack())]
            found = [(type(mode), mode.device) if type(mode) is DeviceContext else type(mode) for mode in stack]
            return tuple(found) == modes
        case kinds.TorchDispatchModes(depth):
            return torch._C._len_torch_dispatch_stack() == depth
    raise NotImplementedError(type(guard))


def all_hold(guards, frame: FrameValues) -> bool:
    return all(holds(guard, frame) for guard in guards)
