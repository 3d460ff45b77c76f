"""`optimize(fn_or_module, backend)`: the compiled callable a user gets back.

For a function, a wrapper that runs the function's cache (`runtime.CodeCache`). For a
DistributedDataParallel module, a `DDPOptimizedModule` (DDP's forward runs natively around
the compiled inner module, capture.distributed). For any other nn.Module, an
`OptimizedModule`: an nn.Module holding the original as `_orig_mod` (so `state_dict` keys
read `_orig_mod.…`, as with torch.compile), forwarding attribute reads to it, whose `forward`
runs the cache of the original's `forward` with the original as `self`.
"""

from __future__ import annotations

import functools
import types
import warnings
from typing import Any, Callable

from torch import nn

from .distributed import InnerForward, is_ddp
from .markers import frame_only_disabled, is_disabled
from .runtime.shallow_disable import frame_only_runner
from .errors import CaptureError
from .runtime import CodeCache
from .runtime.compilation import Compilation
from .module_call import hooked_call, hooked_call_of
from .values.modules import has_hooks
from .values.class_lookup import python_dunder


def function_and_self(fn: Any) -> tuple[types.FunctionType, Any]:
    """The Python function to capture and the object bound as its first argument, if any.

    Like torch.compile, any callable: an object whose class defines `__call__` in Python is
    captured through it; anything else callable (a builtin, a C function such as torch.sin, a
    class) through a Python function that calls it."""
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        return fn.__func__, fn.__self__
    if isinstance(fn, types.FunctionType):
        return fn, None
    call = python_dunder(type(fn), "__call__")
    if call is not None:
        return call, fn
    if callable(fn):
        return _calling(fn), None
    raise CaptureError(f"capture.optimize expects a callable or an nn.Module, got {type(fn).__name__}")


def _calling(fn: Any) -> types.FunctionType:
    """A Python function that calls `fn`, which capture then traces like any other."""

    def call(*args, **kwargs):
        return fn(*args, **kwargs)

    call.__name__ = getattr(fn, "__name__", type(fn).__name__)
    call.__qualname__ = getattr(fn, "__qualname__", call.__name__)
    return call


_NEVER = object()  # no forward is this one

# The wrapper's own state; every other attribute written through the wrapper is the model's.
_WRAPPER_ATTRIBUTES = frozenset({"_orig_mod", "_cache", "_warned_hooks", "_instance_forward", "_bound", "_bound_to",
                                 "_compile_again", "forward", "__dict__"})


class OptimizedModule(nn.Module):
    """A compiled nn.Module; the original is `_orig_mod`.

    Calls run the module's forward as calling it would: its class's, or one set on the
    instance, also after compiling (`mod.forward = other`, `mod.__class__ = Other`), as
    torch.compile does."""

    def __init__(self, mod: nn.Module, cache: CodeCache, *, follows_forward: bool = True):
        super().__init__()
        self._orig_mod = mod
        self._cache = cache
        self._warned_hooks = False
        # Kept out of nn.Module's registries (a module is not a submodule of this one twice).
        # A class with its own __call__ is compiled through it, whatever its forward.
        self.__dict__["_instance_forward"] = mod.__dict__.get("forward") if follows_forward else _NEVER
        self.__dict__["_bound"] = mod
        # How to compile a module again (optimize, or compiler.compile, sets it): a copy or
        # an unpickled one is the original's copy compiled afresh, as torch.compile's
        # OptimizedModule reduces to (original, compile context). Its caches hold code and
        # guards, neither of which pickles.
        self.__dict__["_compile_again"] = None

    def __reduce__(self):
        if self._compile_again is None:
            raise TypeError(f"{type(self).__name__} made outside capture.optimize cannot be copied or pickled")
        return (_compiled_again, (self._compile_again, self._modules["_orig_mod"]))

    def __getattr__(self, name: str):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)

    # `compiled.scale = 3`, `del compiled.extra`, `compiled.training = False` change the model
    # the compiled code reads, as torch.compile's OptimizedModule does; on the wrapper they
    # would shadow the model's attribute for the user's reads and leave the calls on the old one.
    def __setattr__(self, name: str, value) -> None:
        if name in _WRAPPER_ATTRIBUTES or hasattr(type(self), name) or "_modules" not in self.__dict__:
            return super().__setattr__(name, value)
        setattr(self._modules["_orig_mod"], name, value)

    def __delattr__(self, name: str) -> None:
        if name in _WRAPPER_ATTRIBUTES or hasattr(type(self), name):
            return super().__delattr__(name)
        delattr(self._modules["_orig_mod"], name)

    # Members registered through the wrapper are the model's too (nn.Module's methods would file
    # them in the wrapper's registries, where the model's forward never looks).
    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Register `tensor` as a buffer of the original module."""
        self._modules["_orig_mod"].register_buffer(name, tensor, persistent)

    def register_parameter(self, name: str, param) -> None:
        """Register `param` as a parameter of the original module."""
        self._modules["_orig_mod"].register_parameter(name, param)

    def add_module(self, name: str, module) -> None:
        """Register `module` as a submodule of the original module."""
        self._modules["_orig_mod"].add_module(name, module)

    register_module = add_module

    @property
    def training(self) -> bool:
        return self._modules["_orig_mod"].training

    @training.setter
    def training(self, mode: bool) -> None:
        # nn.Module.__init__ sets it before `_orig_mod` exists: the model's own mode stands.
        modules = self.__dict__.get("_modules")
        if modules and "_orig_mod" in modules:
            modules["_orig_mod"].training = mode

    def forward(self, *args, **kwargs):
        mod = self._modules["_orig_mod"]
        instance_forward = self._instance_forward
        if instance_forward is not _NEVER and (
            mod.__dict__.get("forward") is not instance_forward
            # The class's forward, when no instance one: another after `mod.__class__ = Other`
            # or `type(mod).forward = f`.
            or (instance_forward is None and type(mod).forward is not self._cache.fn)
        ):
            self._follow_forward(mod)
        bound = self._bound
        if has_hooks(mod):
            if hooked_call(mod):
                # Forward hooks are captured with the forward (capture.module_call).
                return self._cache.compilation.cache(hooked_call_of(type(mod))).dispatch(mod, *args, **kwargs)
            if self._cache.fn is type(mod).forward:
                return self._call_around_compiled_forward(mod, args, kwargs)
            # A class with its own __call__ (compiled whole), or a forward set on the
            # instance, and backward hooks.
            if not self._warned_hooks:
                self._warned_hooks = True
                warnings.warn(f"{type(mod).__name__} has backward hooks; it runs eagerly", stacklevel=2)
            return mod(*args, **kwargs)
        if bound is None:
            return self._cache.dispatch(*args, **kwargs)  # a plain function set as `mod.forward`
        return self._cache.dispatch(bound, *args, **kwargs)

    def _follow_forward(self, mod: nn.Module) -> None:
        """The forward set on (or deleted from) the instance since the last call is compiled
        from now on, with the same compilation (a function seen before keeps its cache)."""
        forward = mod.__dict__.get("forward")
        compilation = self._cache.compilation
        if forward is None:
            function, bound = type(mod).forward, mod
        else:
            function, bound = function_and_self(forward)
        self._cache = compilation.cache(function)
        self.__dict__.update(_instance_forward=forward, _bound=bound)

    def _call_around_compiled_forward(self, mod: nn.Module, args, kwargs):
        """Backward hooks (register_full_backward_hook / _pre_hook) run in Module.__call__, which
        wraps the forward's inputs and outputs in autograd nodes that call them: that runs
        natively around the compiled forward, so the forward stays compiled and the hooks see
        eager's gradients. (torch.compile breaks the graph there instead: "Module-level
        backwards hooks require compiled autograd", and runs the module eagerly.) Forward hooks
        registered with them run natively too."""
        dispatch = self._cache.dispatch
        with InnerForward(mod, lambda *a, **k: dispatch(mod, *a, **k)):
            return mod(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        # The wrapper itself never has hooks of its own worth running through
        # Module._call_impl (a few microseconds per call): go straight to forward.
        if has_hooks(self):
            return super().__call__(*args, **kwargs)
        return self.forward(*args, **kwargs)


def _compiled_again(compile_again: Callable, mod: nn.Module) -> OptimizedModule:
    return compile_again(mod)


class DDPOptimizedModule(OptimizedModule):
    """A compiled DistributedDataParallel: DDP's forward runs natively, calling the compiled
    forward of the module it wraps (capture.distributed.ddp); `_cache` is that forward's."""

    def __init__(self, ddp: nn.Module, compilation: Compilation):
        inner = ddp.module
        # The inner module's forward: its class's, or one set on the instance (bound or not).
        function, bound = function_and_self(inner.__dict__.get("forward") or type(inner).forward)
        super().__init__(ddp, CodeCache(function, compilation=compilation))
        # Kept out of nn.Module's registries: the inner module is not a submodule of this one.
        self.__dict__["_bound_to"] = bound if bound is not None else (inner if "forward" not in inner.__dict__ else None)

    def forward(self, *args, **kwargs):
        ddp = self._modules["_orig_mod"]
        dispatch, bound = self._cache.dispatch, self._bound_to
        if bound is None:
            compiled_forward = dispatch
        else:
            def compiled_forward(*a, **k):
                return dispatch(bound, *a, **k)
        with InnerForward(ddp.module, compiled_forward):
            return ddp(*args, **kwargs)


def optimize(fn_or_module: Any, backend: Callable, *, fullgraph: bool = False, dynamic: bool | None = None,
             recompile_limit: int | None = None):
    """Compile `fn_or_module` with `backend(gm, example_inputs) -> callable`.

    Code capture cannot trace breaks the graph: the graph so far runs, then that code runs
    natively, then the rest is captured as a function of its own; `fullgraph=True` raises
    `capture.Unsupported` at the first such place instead. `dynamic=True` traces the sizes
    of the inputs (not of parameters) as symbols, so one entry serves many shapes;
    `dynamic=None` starts static and makes a dimension symbolic once a call changes its size;
    `dynamic=False` never does (`mark_dynamic` dimensions are symbolic in every case).
    `recompile_limit`: entries per function before its calls run eagerly (None:
    `config.recompile_limit`); with `fullgraph=True`, reaching it raises RecompileError.
    """
    if isinstance(fn_or_module, (types.FunctionType, types.MethodType)) and is_disabled(fn_or_module):
        frame_only = frame_only_disabled(fn_or_module)
        if frame_only is None:
            return fn_or_module
        # Its own frame runs natively; what it calls is compiled with this backend.
        return frame_only_runner(frame_only, Compilation(backend, make_cache=CodeCache, dynamic=dynamic,
                                                         fullgraph=fullgraph, recompile_limit=recompile_limit))
    if isinstance(fn_or_module, functools.partial):
        # Its function is compiled; the bound arguments are arguments of every call.
        compiled = optimize(fn_or_module.func, backend, fullgraph=fullgraph, dynamic=dynamic,
                            recompile_limit=recompile_limit)
        return functools.partial(compiled, *fn_or_module.args, **fn_or_module.keywords)
    compilation = Compilation(backend, make_cache=CodeCache, dynamic=dynamic, fullgraph=fullgraph,
                              recompile_limit=recompile_limit)
    if isinstance(fn_or_module, nn.Module):
        compiled = _optimized_module(fn_or_module, compilation)
        compiled.__dict__["_compile_again"] = functools.partial(optimize, backend=backend, fullgraph=fullgraph,
                                                                dynamic=dynamic, recompile_limit=recompile_limit)
        return compiled
    function, bound = function_and_self(fn_or_module)
    cache = CodeCache(function, compilation=compilation)
    if bound is not None:
        dispatch = cache.dispatch

        @functools.wraps(function)
        def compiled_method(*args, **kwargs):
            return dispatch(bound, *args, **kwargs)

        compiled_method._capture_cache = cache
        return compiled_method
    compiled_function = functools.update_wrapper(cache.dispatch, function)
    compiled_function._capture_cache = cache
    return compiled_function


def _optimized_module(mod: nn.Module, compilation: Compilation) -> OptimizedModule:
    if is_ddp(mod):
        return DDPOptimizedModule(mod, compilation)
    call = python_dunder(type(mod), "__call__")
    if call is not nn.Module.__dict__["__call__"]:
        # Calling the compiled module runs the class's own __call__, as calling the module
        # does (torch.compile compiles `module.__call__`).
        return OptimizedModule(mod, CodeCache(call, compilation=compilation), follows_forward=False)
    compiled = OptimizedModule(mod, CodeCache(type(mod).forward, compilation=compilation))
    if "forward" in mod.__dict__:
        compiled._follow_forward(mod)
    return compiled
