"""Constructing torch.nn modules inside the compiled function.

One rule per module class of `torch.nn` (user subclasses keep the generic path, which inlines
their `__init__`). A module whose construction creates no parameters or buffers is built
for real from its constant arguments and traced (capture.values.modules.NewModuleValue). One
that does create them (`nn.Linear(3, 3)`) is refused: its parameters are drawn from the
global random generator on every call, which the graph cannot repeat, so the graph breaks
there and the construction runs natively (torch.compile would trace the initialisation).
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import Unsupported
from ..values.base import NotConstant, Value
from ..values.containers import DictValue, ListValue, TupleValue
from ..values.modules import NewModuleValue
from .registry import construct_rule


def _real(value: Value):
    """The real object a constructor receives for `value`: constants, modules built in the
    trace, and lists, tuples and dicts of them."""
    if isinstance(value, NewModuleValue):
        return value.obj
    if isinstance(value, (ListValue, TupleValue)):
        return value.python_cls(_real(item) for item in value.items)
    if isinstance(value, DictValue):
        return value.python_cls((k, _real(v)) for k, (_, v) in value.entries.items())
    try:
        return value.as_python_constant()
    except NotConstant:
        raise Unsupported(f"constructing a torch.nn module from {value.describe()}, which is not a constant") from None


def _creates_state(cls: type, args: list, kwargs: dict) -> bool:
    """Whether constructing the module makes parameters or buffers: tried on the meta device
    with the random generator's state put back, so the probe allocates and draws nothing."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        probe = cls(*args, **kwargs)
    return any(True for _ in probe.parameters()) or any(True for _ in probe.buffers())


def _construct_module(frame, cls, args, kwargs):
    real_args, real_kwargs = [_real(a) for a in args], {k: _real(v) for k, v in kwargs.items()}
    submodules = [a for a in (*real_args, *real_kwargs.values()) if isinstance(a, nn.Module)]
    if any(s.training is False for s in submodules) or _creates_state(cls, real_args, real_kwargs):
        raise Unsupported(
            f"constructing {cls.__name__} inside the compiled function, which creates parameters or buffers "
            "(initialised from the global random generator on every call)",
            hint="construct the module once outside the compiled function and call it there, or pass it in",
        )
    module = cls(*real_args, **real_kwargs)
    frame.session.keepalive(module)
    value = NewModuleValue(module)
    frame.session.wrapped[id(module)] = (module, value)
    return value


_MODULE_CLASSES = {v for v in vars(nn).values() if isinstance(v, type) and issubclass(v, nn.Module)}
construct_rule(*sorted(_MODULE_CLASSES, key=lambda c: c.__qualname__))(_construct_module)
