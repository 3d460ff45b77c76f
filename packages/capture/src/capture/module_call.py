"""`call_with_forward_hooks(module, *args, **kwargs)`: what `module(*args, **kwargs)` does
when the module has forward hooks, written as plain Python that capture traces.

nn.Module._call_impl is C-adjacent machinery (tracing state, backward-hook wrappers, global
hook dicts, `_compiled_call_impl`); the forward-hook part of it is this function. Capture
inlines it for a module with forward hooks, so hooks that are plain Python land in the graph;
a hook capture cannot trace (torch.distributed's FSDP hooks, a hook that prints) breaks the
graph there, the hook runs natively, and the rest (the forward, the later hooks) is captured
by the resume function. The same function is what a compiled module with hooks runs
(`capture.optimize`), and what a module call that broke runs as its own frame.

Global hooks (`register_module_forward_hook`) run natively, the graph breaking around each:
no input of the compiled function leads to them, so what they read could not be guarded nor
what they write replayed. Entries that read the global hook dicts are guarded on them.

Hook order and results follow torch 2.x `Module._call_impl`: global pre-hooks then the
module's, each `hook(module, args)` (or `hook(module, args, kwargs)` when registered
`with_kwargs=True`) may replace the arguments; after `forward`, global forward hooks then the
module's, each `hook(module, args, [kwargs,] output)` may replace the output. A module with a
hook registered `always_call=True` (run even when forward raises) is called natively.
"""

from __future__ import annotations

import types

from torch.nn.modules import module as _torch_module

from .type_keys import WeakTypeTable
from .markers import disable

# A module's own hook dicts: any non-empty one makes `module(x)` do more than `forward(x)`.
HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
# torch's global ones, which apply to every module; torch registers into them in place.
GLOBAL_HOOK_DICTS = {
    name: getattr(_torch_module, name)
    for name in ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks", "_global_backward_pre_hooks")
}


def has_backward_hooks(module) -> bool:
    """Backward hooks need `nn.Module.__call__`'s BackwardHook wrapping of inputs and outputs,
    which this function does not reproduce: such a module is called natively."""
    return bool(
        module._backward_hooks or module._backward_pre_hooks
        or _torch_module._global_backward_hooks or _torch_module._global_backward_pre_hooks
    )  # fmt: skip


def hooked_call(module) -> bool:
    """Whether calling `module` means `call_with_forward_hooks` rather than its forward alone."""
    return bool(
        module._forward_hooks or module._forward_pre_hooks
        or _torch_module._global_forward_hooks or _torch_module._global_forward_pre_hooks
    ) and not has_backward_hooks(module)  # fmt: skip


_PER_CLASS = WeakTypeTable()


def hooked_call_of(cls: type) -> types.FunctionType:
    """`call_with_forward_hooks` as a function of its own for modules of class `cls`: a
    compiled function keeps one cache, whose recompile limit and automatic dynamic shapes
    would otherwise mix every hooked module of a model (an FSDP model hooks them all)."""
    fn = _PER_CLASS.get(cls)
    if fn is None:
        fn = types.FunctionType(call_with_forward_hooks.__code__, call_with_forward_hooks.__globals__,
                                f"call_{cls.__name__}_with_forward_hooks")
        fn.__qualname__ = fn.__name__
        _PER_CLASS[cls] = fn
    return fn


@disable
def _natively(hook, *args):
    return hook(*args)


def _module_call(module, args, kwargs):
    return module(*args, **kwargs)


def call_with_forward_hooks(module, *args, **kwargs):
    if module._forward_hooks_always_called or _torch_module._global_forward_hooks_always_called:
        # A hook registered with always_call=True also runs when forward (or a hook) raises,
        # which nn.Module.__call__ arranges around the whole call: it runs natively.
        return _natively(_module_call, module, args, kwargs)
    # Index loops, not `for` loops: a hook that breaks the graph leaves no iterator on the
    # stack, which a resume function could not be handed. A global hook is called natively (the
    # graph breaks around it): no input of the compiled function leads to it, so what it reads
    # could not be guarded, nor what it writes (a list in its closure) replayed. The break is
    # made here, in this per-class function, not in a helper shared by every module class:
    # a shared helper's one cache filled up with an entry per class, grad mode and size.
    pre_hooks = (*_torch_module._global_forward_pre_hooks.items(), *module._forward_pre_hooks.items())
    global_count = len(_torch_module._global_forward_pre_hooks)
    i = 0
    while i < len(pre_hooks):
        hook_id, hook = pre_hooks[i]
        i += 1
        if hook_id in module._forward_pre_hooks_with_kwargs:
            replaced = _natively(hook, module, args, kwargs) if i <= global_count else hook(module, args, kwargs)
            if replaced is not None:
                if not (isinstance(replaced, tuple) and len(replaced) == 2):
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {replaced}."
                    )
                args, kwargs = replaced
        else:
            replaced = _natively(hook, module, args) if i <= global_count else hook(module, args)
            if replaced is not None:
                args = replaced if isinstance(replaced, tuple) else (replaced,)
    result = module.forward(*args, **kwargs)
    hooks = (*_torch_module._global_forward_hooks.items(), *module._forward_hooks.items())
    global_count = len(_torch_module._global_forward_hooks)
    i = 0
    while i < len(hooks):
        hook_id, hook = hooks[i]
        i += 1
        if hook_id in module._forward_hooks_with_kwargs or hook_id in _torch_module._global_forward_hooks_with_kwargs:
            replaced = _natively(hook, module, args, kwargs, result) if i <= global_count else hook(module, args, kwargs, result)
        else:
            replaced = _natively(hook, module, args, result) if i <= global_count else hook(module, args, result)
        if replaced is not None:
            result = replaced
    return result
