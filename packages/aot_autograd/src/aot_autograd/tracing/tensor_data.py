"""`torch.tensor(data)` of data holding symbolic numbers, traced as ops on those numbers.

Torch converts such data in C++, reading each SymInt as a plain int: the trace would hold a
constant of the example value (and guard the symbol to it), and torch 2.13 keeps only the low
32 bits of the value there (`torch.tensor([s])` at s = 2**40 is 0). Each number here becomes
`aten.scalar_tensor(number)`, stacked into the data's shape, as torch.compile's capture rewrites
the call.

A torch-function mode runs each function it intercepts with itself popped off the mode stack,
so the calls a torch function written in Python makes inside (unravel_index's
`torch.tensor(shape)`, at the graph's symbolic sizes) would reach torch's conversion unseen.
The mode therefore runs such a function's body with itself pushed again, skipping only the
function's own re-dispatch (`torch.overrides.redispatch_function`). That skip passes over
every mode still on the stack, so this one is entered before the trace's other torch-function
modes: it is the last to see a call, when they have had theirs. Torch before 2.12 has no such
skip: there the function runs as a copy whose `has_torch_function*` names (module globals in
torch's Python files) answer False, which skips the same one check.
"""

from __future__ import annotations

from types import FunctionType

import torch
from torch.overrides import TorchFunctionMode

_SYMBOLIC = (torch.SymInt, torch.SymFloat)
_FACTORIES = (torch.tensor, torch.as_tensor)
_OWN_DISPATCH_CHECKS = ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic")


def _redispatch_by_copy(func, types, args, kwargs):
    """`redispatch_function` for a torch without it (2.11): `func`'s code run with globals
    where its own dispatch check finds nothing to dispatch to. The globals are copied per call,
    so the function sees its module as it is now."""
    namespace = dict(func.__globals__)
    namespace.update(dict.fromkeys(_OWN_DISPATCH_CHECKS, lambda *_: False))
    copy = FunctionType(func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    return copy(*args, **kwargs)


_redispatch = getattr(torch.overrides, "redispatch_function", _redispatch_by_copy)


class SymbolicTensorData(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        # The Python torch functions whose bodies run with this mode pushed again. A body may
        # reach its own function once more (Tensor.unflatten's `super().unflatten(...)` comes
        # back as Tensor.unflatten): that call runs with the mode off, as before.
        self._running: list = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _FACTORIES and args and _holds_symbols(args[0]) and set(kwargs) <= {"dtype", "device"}:
            dtype = kwargs.get("dtype") or _inferred_dtype(args[0])
            return _tensor_of(args[0], dtype, kwargs.get("device"))
        if isinstance(func, FunctionType) and func not in self._running:
            self._running.append(func)
            try:
                with self:
                    return _redispatch(func, types, args, kwargs)
            finally:
                self._running.pop()
        return func(*args, **kwargs)


def _numbers(data) -> list:
    if isinstance(data, (list, tuple)):
        return [number for item in data for number in _numbers(item)]
    return [data]


def _holds_symbols(data) -> bool:
    if not isinstance(data, (list, tuple, *_SYMBOLIC)):
        return False
    numbers = _numbers(data)
    return any(isinstance(n, _SYMBOLIC) for n in numbers) and all(
        isinstance(n, (int, float, *_SYMBOLIC)) and not isinstance(n, bool) for n in numbers)


def _inferred_dtype(data) -> torch.dtype:
    """As torch.tensor infers it: the default float dtype if any number is a float, else int64."""
    if any(isinstance(n, (float, torch.SymFloat)) for n in _numbers(data)):
        return torch.get_default_dtype()
    return torch.int64


def _tensor_of(data, dtype: torch.dtype, device) -> torch.Tensor:
    if not isinstance(data, (list, tuple)):
        return torch.scalar_tensor(data, dtype=dtype, device=device)
    return torch.stack([_tensor_of(item, dtype, device) for item in data])
