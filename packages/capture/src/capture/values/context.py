"""Context managers that change PyTorch's global state: grad mode, inference mode, autocast.

Entering one while tracing changes the real state (so fake tensors see the same autograd and
autocast behaviour as eager) and records a node that does the same when the graph runs, the
way FX graphs from torch.compile carry `_set_grad_enabled` and `_enter_autocast` nodes.

A graph break inside such a block ends the graph with the block's exit (so the global state
is back to what it was), runs the refused instruction inside a fresh manager (`rebuilt()`)
and hands that manager to the resume function, which enters it again (capture.bytecode.resume).
"""

from __future__ import annotations

import contextlib

import torch

from ..errors import Unsupported, UserException
from .base import Value
from .constant import ConstantValue


class GlobalStateContext(Value):
    """A context manager over one piece of global state. `enter`/`exit` change it now and
    record the change in the graph."""

    python_cls: type

    def python_type(self):
        return self.python_cls

    def enter(self, frame) -> Value:
        raise NotImplementedError

    def exit(self, frame) -> None:
        raise NotImplementedError

    def rebuilt(self) -> tuple:
        """(callable, args): a call that makes a manager, not yet entered, doing the same."""
        raise NotImplementedError

    def fresh(self) -> GlobalStateContext:
        """A manager with the same settings, not yet entered (what torch's `clone()` gives)."""
        raise NotImplementedError

    def call(self, frame, args, kwargs):
        # `@torch.no_grad()` on a function, or `torch.no_grad()(fn)`: torch's
        # _DecoratorContextManager runs every call of `fn` inside a fresh copy of the manager.
        if len(args) != 1 or kwargs:
            raise Unsupported(f"calling {self.describe()} with other than one function")
        return DecoratedByContext(self.fresh(), args[0])

    def get_attr(self, frame, name):
        # torch's context-manager decorators (`@torch.no_grad()` on a function) enter
        # `manager.clone()`, that is `manager.__class__(...)`, on every call.
        if name == "__class__":
            return frame.session.wrap(self.python_type(), None)
        return super().get_attr(frame, name)

    def reconstruct(self, writer):
        # Bound once: a manager on the stack and in a local is one object, whose `__enter__`
        # stores what its `__exit__` reads (`m = torch.no_grad(); m.__enter__()`).
        fn, args = self.rebuilt()
        arguments = [writer.value(a) if isinstance(a, Value) else writer.constant(a) for a in args]
        return writer.bind(self, f"{writer.constant(fn)}({', '.join(arguments)})")


class ContextExit(Value):
    """The bound `__exit__` of a context manager capture models (what BEFORE_WITH leaves on
    the stack for the end of the block)."""

    def __init__(self, manager: GlobalStateContext):
        super().__init__(None)
        self.manager = manager

    def describe(self):
        return f"{self.manager.describe()}.__exit__"

    def call(self, frame, args, kwargs):
        self.manager.exit(frame)
        return ConstantValue(None)  # never suppresses the exception


class DecoratedByContext(Value):
    """A function decorated with a global-state context manager: each call enters a fresh
    copy of the manager around the call, and exits it however the call ends."""

    def __init__(self, manager: GlobalStateContext, fn: Value):
        super().__init__(None)
        self.manager = manager
        self.fn = fn

    def describe(self):
        return f"{self.fn.describe()} decorated with {self.manager.describe()}"

    def python_type(self):
        return self.fn.python_type()

    def call(self, frame, args, kwargs):
        manager = self.manager.fresh()
        manager.enter(frame)
        try:
            result = self.fn.call(frame, args, kwargs)
        except UserException:
            manager.exit(frame)
            raise
        manager.exit(frame)
        return result

    def get_attr(self, frame, name):
        # torch's decorator is functools.wraps'ed: `__name__`, `__wrapped__` and the like.
        if name == "__wrapped__":
            return self.fn
        return self.fn.get_attr(frame, name)

    def reconstruct(self, writer):
        return f"{writer.value(self.manager.fresh())}({writer.value(self.fn)})"

    def inner_values(self):
        return [self.fn]


def resumable_exit(value: Value) -> bool:
    """Whether the `with` block owning this exit function can be re-entered by a resume
    function (only blocks of the managers modelled here)."""
    return isinstance(value, ContextExit)


class GradModeContext(GlobalStateContext):
    """torch.no_grad(), torch.enable_grad(), torch.set_grad_enabled(mode)."""

    def __init__(self, enabled: bool, python_cls: type, applied_now: bool = False, previous: bool | None = None):
        super().__init__(None)
        self.enabled = enabled
        self.python_cls = python_cls
        # set_grad_enabled changes the mode when constructed, not when entered.
        self.applied_now = applied_now
        self.previous = previous

    def describe(self):
        return f"{self.python_cls.__name__}({self.enabled})"

    @staticmethod
    def apply(frame, enabled: bool) -> bool:
        previous = torch.is_grad_enabled()
        torch._C._set_grad_enabled(enabled)
        frame.session.graph.record_effect(torch._C._set_grad_enabled, enabled)
        return previous

    def enter(self, frame):
        if not self.applied_now:
            self.previous = self.apply(frame, self.enabled)
        return ConstantValue(None)

    def exit(self, frame):
        self.apply(frame, self.previous)

    def rebuilt(self):
        # set_grad_enabled(mode) as a `with` restores the mode on exit, like these two.
        return (torch.enable_grad if self.enabled else torch.no_grad), ()

    def fresh(self):
        return GradModeContext(self.enabled, self.python_cls)

    def call(self, frame, args, kwargs):
        if self.applied_now:
            # set_grad_enabled(mode) used as a decorator puts back the mode its construction
            # changed: only the decorated function's calls run in `mode`.
            self.apply(frame, self.previous)
        return super().call(frame, args, kwargs)


class InferenceModeContext(GlobalStateContext):
    python_cls = torch.inference_mode

    def __init__(self, enabled: bool):
        super().__init__(None)
        self.enabled = enabled
        self._real = None
        self._node = None

    def describe(self):
        return f"inference_mode({self.enabled})"

    def enter(self, frame):
        enter = torch.autograd.grad_mode._enter_inference_mode
        self._real = enter(self.enabled)
        self._node = frame.session.graph.record_effect(enter, self.enabled)
        # Inference mode has no setter to put back: a trace that stops inside the block
        # (refused under fullgraph, say) leaves it through this.
        frame.session.open_contexts.append(self._leave_real)
        return ConstantValue(None)

    def exit(self, frame):
        exit_ = torch.autograd.grad_mode._exit_inference_mode
        self._leave_real()
        frame.session.open_contexts.remove(self._leave_real)
        frame.session.graph.record_effect(exit_, self._node)

    def _leave_real(self):
        torch.autograd.grad_mode._exit_inference_mode(self._real)

    def rebuilt(self):
        return torch.inference_mode, (self.enabled,)

    def fresh(self):
        return InferenceModeContext(self.enabled)

    def get_attr(self, frame, name):
        if name == "mode":
            return ConstantValue(self.enabled)
        return super().get_attr(frame, name)


class AutocastContext(GlobalStateContext):
    python_cls = torch.autocast

    def __init__(self, device_type: str, dtype, enabled: bool, cache_enabled):
        super().__init__(None)
        self.args = (device_type, dtype, enabled, cache_enabled)
        self._real = None
        self._node = None

    def describe(self):
        return f"autocast{self.args}"

    def enter(self, frame):
        enter = torch.amp.autocast_mode._enter_autocast
        self._real = enter(*self.args)
        self._node = frame.session.graph.record_effect(enter, *self.args)
        return ConstantValue(None)

    def exit(self, frame):
        exit_ = torch.amp.autocast_mode._exit_autocast
        exit_(self._real)
        frame.session.graph.record_effect(exit_, self._node)

    def rebuilt(self):
        return torch.autocast, self.args

    def fresh(self):
        return AutocastContext(*self.args)


class NullContext(GlobalStateContext):
    """contextlib.nullcontext(value)."""

    def __init__(self, value: Value, python_cls: type):
        super().__init__(None)
        self.value = value
        self.python_cls = python_cls

    def describe(self):
        return "nullcontext"

    def enter(self, frame):
        return self.value

    def exit(self, frame):
        pass

    def rebuilt(self):
        return contextlib.nullcontext, (self.value,)

    def fresh(self):
        return self
