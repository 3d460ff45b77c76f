"""Marks on functions that steer capture.

`disable(fn)`: `fn` is never traced; called from compiled code it runs natively (the graph
breaks around the call), and `optimize(disable(fn))` returns it as it is.
`disable(fn, recursive=False)`: only `fn`'s own frame runs natively; the functions and modules
it calls are still compiled (capture.runtime.shallow_disable).
Code under torch.distributed and torch.nn.parallel is marked by where it lives
(`runs_natively`): it always runs natively.
`allow_in_graph(fn)`: a call of `fn` becomes one node of the graph instead of being inlined;
`fn` must work on fake tensors (it runs on them while tracing) and have no side effects.
Capture itself marks the dispatchers of compiled functions (`mark_compiled`): traced code
that reaches one calls it between graphs instead of tracing capture's own machinery.
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from typing import Any, Callable

_DISABLED_ATTRIBUTE = "_capture_disabled"
# On a `disable(fn, recursive=False)` wrapper: the function whose frame alone runs natively.
_SHALLOW_ATTRIBUTE = "_capture_disabled_frame_only"
# Set on the dispatchers of compiled functions: traced code calls them, never traces them.
_COMPILED_ATTRIBUTE = "_capture_compiled"
_ALLOWED_IN_GRAPH: weakref.WeakSet = weakref.WeakSet()


def disable(fn: Callable | None = None, recursive: bool = True):
    """Return `fn` wrapped so that capture never traces it (usable as a decorator, with or
    without parentheses). Called from compiled code, the graph breaks around the call.

    `recursive=True` (the default): nothing `fn` calls is compiled either.
    `recursive=False`: only `fn`'s own frame runs natively; the user functions and modules it
    calls (at call sites like `helper(x)` or `self.layer(x)`) are compiled with the backend of
    the compiled code that called `fn` — or, for `optimize(disable(fn, recursive=False))`,
    with that backend. Called outside compiled code it simply runs, as torch's does."""
    if fn is None:
        return functools.partial(disable, recursive=recursive)

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        return fn(*args, **kwargs)

    setattr(disabled, _DISABLED_ATTRIBUTE, True)
    if not recursive:
        setattr(disabled, _SHALLOW_ATTRIBUTE, fn)
    return disabled


def frame_only_disabled(fn: Any) -> Callable | None:
    """For a `disable(f, recursive=False)` wrapper: `f` (whose callees are still compiled).
    torch.compiler.disable(f, recursive=False) wrappers mean the same and answer `f` too."""
    original = getattr(fn, _SHALLOW_ATTRIBUTE, None)
    if original is None and getattr(fn, "_torchdynamo_disable_recursive", True) is False:
        original = getattr(fn, "_torchdynamo_orig_callable", None)
    return original


# Python code under torch that always runs natively, between graphs: torch.distributed's
# collectives, DDP's and FSDP's hooks and state machines work on real process groups and
# tensors (torch.compile skips these files too); torch.func's transforms (vmap, grad, jacrev,
# hessian...) wrap tensors in batched and gradient levels that fake tensors do not model
# (recorded, the closure `vmap(f)` returns had no importable name for the graph; interpreted,
# `vmap(torch.dot)` runs torch.dot on the unbatched 2-D inputs).
# torch.func.functional_call is plain Python over a module's parameters: it is interpreted.
# The control-flow operators (torch.cond, while_loop, map, scan, associative_scan) and
# flex_attention run their branches (score_mod) through torch.compile when called outside it:
# recorded, that ran on our fake tensors while tracing and failed (every backend); capture has
# no subgraph operators of its own.
_NATIVE_TORCH_MODULES = (
    "torch.distributed.", "torch.nn.parallel.",
    "torch._functorch.apis", "torch._functorch.vmap", "torch._functorch.eager_transforms",
    "torch._higher_order_ops.cond", "torch._higher_order_ops.while_loop", "torch._higher_order_ops.map",
    "torch._higher_order_ops.scan", "torch._higher_order_ops.associative_scan",
    "torch.nn.attention.flex_attention",
)


def runs_natively(fn: Any) -> bool:
    """A torch function capture neither inlines nor records: the graph breaks around its call."""
    code_module = getattr(fn, "__globals__", {}).get("__name__") if isinstance(fn, types.FunctionType) else None
    module = code_module or getattr(fn, "__module__", None) or ""
    return module.startswith(_NATIVE_TORCH_MODULES)


def is_disabled(fn: Any) -> bool:
    # torch.compiler.disable marks its wrappers with `_torchdynamo_disable`: code written for
    # torch.compile means the same by it.
    if getattr(fn, _DISABLED_ATTRIBUTE, False) or getattr(fn, "_torchdynamo_disable", False):
        return True
    return is_disabled_by_torch(fn)


def undo_dynamo_optimizer_patch(fn: Any) -> Any:
    """What `fn` stood for before importing torch._dynamo wrapped it: Dynamo replaces every
    optimizer's `_init_group` by a disabled wrapper (it traces the method by its own rule),
    and each fused implementation (`torch.optim.adam._fused_adam`) by another, which would
    break our graph of `optimizer.step()` whenever torch._dynamo was imported in the process
    (and only then: a fused AdamW step compiled with fullgraph=True failed or not by import
    order). Any other function is returned as it is."""
    func = getattr(fn, "__func__", fn)
    inner = getattr(func, "__wrapped__", None)
    if not (getattr(func, "_torchdynamo_disable", False) and inspect.isfunction(inner)):
        return fn
    patched = inner.__name__ == "_init_group" or inner.__name__.startswith("_fused_")
    if not patched or not inner.__module__.startswith("torch.optim."):
        return fn
    owner = getattr(fn, "__self__", None)
    return types.MethodType(inner, owner) if owner is not None else inner


def is_disabled_by_torch(fn: Any) -> bool:
    """The wrapper `torch._compile._disable_dynamo` puts around torch's own functions that
    torch.compile must not trace (`Optimizer.zero_grad`, `state_dict`, ...). It marks nothing
    until its first call, so it is known by its code: functools.wraps gives it the wrapped
    function's names, not its globals."""
    globals_ = getattr(fn, "__globals__", None)
    return globals_ is not None and globals_.get("__name__") == "torch._compile" and fn.__code__.co_name == "inner"


def mark_compiled(fn: Callable) -> Callable:
    setattr(fn, _COMPILED_ATTRIBUTE, True)
    return fn


def is_compiled(fn: Any) -> bool:
    return bool(getattr(fn, _COMPILED_ATTRIBUTE, False))


def allow_in_graph(fn: Callable) -> Callable:
    """Record calls of `fn` as single graph nodes; returns `fn`."""
    _ALLOWED_IN_GRAPH.add(fn)
    return fn


def is_allowed_in_graph(fn: Any) -> bool:
    try:
        return fn in _ALLOWED_IN_GRAPH
    except TypeError:  # neither hashable nor weakly referable: never registered
        return False
