"""Which callables are torch operations (recorded as one graph node rather than inlined) and
how a call of one is recorded.

Torch's own Python functions (`torch.nn.functional.*`, `torch.functional.*`) are recorded as
single calls, like torch.compile does: backends trace into them at the ATen level. The forward
methods of `torch.nn` modules are the exception: they are inlined, so the graph holds the
functional calls they make.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any

import torch
from torch.fx.node import _get_qualified_name

from ..errors import Unsupported
from ..values.base import Value
from ..values.classes import ClassValue
from .autograd_calls import record_function_apply

# Python code under torch that capture interprets instead of recording as one call.
_INLINED_TORCH_MODULES = (
    "torch.nn.modules.",
    "torch.nn.utils.parametrize",
    # The wrappers `@torch.no_grad()`, `@torch.inference_mode()` and `@torch.autocast(...)`
    # put around user functions, and the `clone()` they call on their manager.
    "torch.utils._contextlib",
    "torch.autograd.grad_mode",
    "torch.amp.autocast_mode",
    # Optimizers: `step()` is Python over foreach ops, traced into one graph as torch.compile does.
    "torch.optim.",
    # Functions over parameters that read `.grad` or assign `.data` (clip_grad_norm_,
    # vector_to_parameters): recorded as one call, a backend tracing it sees tensors with
    # neither (aot_autograd traces detached aliases), so the gradients went unclipped.
    "torch.nn.utils.clip_grad",
    "torch.nn.utils.convert_parameters",
    # Test helpers (op_db's lambdas such as `lambda x, *args: x.contiguous(*args)`) are user code
    # written under torch; a lambda recorded as one call has no importable name for the graph.
    "torch.testing.",
)

_TENSOR_BASE = torch._C.TensorBase


def _torch_module(name: str | None) -> bool:
    return bool(name) and (name == "torch" or name.startswith("torch."))


def is_tensor_method(fn: Any) -> bool:
    """`torch.Tensor.add` and friends, reached unbound (`torch.Tensor.add(x, y)`) or bound to a
    tensor through attribute access."""
    if getattr(fn, "__objclass__", None) is _TENSOR_BASE:
        return True
    return isinstance(fn, types.FunctionType) and fn.__module__ == "torch._tensor"


def is_torch_operation(fn: Any) -> bool:
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    if isinstance(fn, type):
        return False
    if is_tensor_method(fn):
        return True
    if isinstance(fn, types.FunctionType):
        # The module the code lives in: functools.wraps copies __module__ from the wrapped
        # function, so a torch decorator around user code would look like user code.
        module = fn.__globals__.get("__name__")
        return _torch_module(module) and not module.startswith(_INLINED_TORCH_MODULES) and _printable(fn)
    module = getattr(fn, "__module__", None)
    if isinstance(fn, types.BuiltinFunctionType):
        return _torch_module(module) or _torch_module(getattr(getattr(fn, "__self__", None), "__name__", None))
    return False


@functools.lru_cache(maxsize=4096)
def _printable(fn: types.FunctionType) -> bool:
    """Whether the graph can name `fn`: FX prints a call by `module.name`, which must lead back
    to `fn`. A closure torch returns as a wrapper (torch.compiler.nested_compile_region's
    `inner`, in a module whose name a same-named object shadows) does not; recorded, the graph
    failed on every call. Such code is interpreted like user code instead. Methods are left
    alone: their calls are recorded through their own targets (autograd_calls.AutogradFunctionApply)."""
    if "<locals>" not in fn.__qualname__:
        return True
    try:
        path = _get_qualified_name(fn)
    except Exception:  # noqa: BLE001  (FX cannot name it at all)
        return False
    obj: Any = sys.modules.get(path.split(".")[0])
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
    # A functools.wraps wrapper found by that name calls `fn` too (torch re-wraps a few).
    return obj is fn or getattr(obj, "__wrapped__", None) is fn


def record_torch_call(frame, fn: Any, args: list[Value], kwargs: dict[str, Value]) -> Value:
    graph = frame.session.graph
    requires_grad = kwargs.get("requires_grad")
    if requires_grad is not None and not (requires_grad.is_python_constant() and requires_grad.as_python_constant() is False):
        # `torch.ones(n, requires_grad=True)` makes a new autograd leaf, which a graph cannot
        # hold (see the rule for Tensor.requires_grad_): the call runs outside the graph.
        raise Unsupported(
            f"{getattr(fn, '__name__', fn)}(..., requires_grad=True) makes a new autograd leaf, which cannot be part of a graph",
            hint="the graph breaks here and the call runs outside it; create the tensor before the compiled function to keep one graph",
        )
    if is_tensor_method(fn):
        return graph.call_method(frame, fn.__name__, args, kwargs)
    if fn is torch.autograd.Function.apply.__func__ and args and isinstance(args[0], ClassValue):
        return record_function_apply(frame, args[0].cls, args[1:], kwargs)
    return graph.call_function(frame, fn, args, kwargs)
