"""Telling capture how to treat a function it cannot (or should not) trace, through call rules.

`substitute_in_graph(original)(polyfill)`: a call of `original` (typically a C function
capture cannot trace into) is traced as a call of `polyfill`, a Python function that does the
same; called outside capture, the returned function runs `original`.
`assume_constant_result(fn)`: a call of `fn` on constant arguments runs now, while tracing,
and its result is a constant of the graph (no guard checks it later: the user vouches for it).
A function carrying torch.compile's mark for it (`fn._dynamo_marked_constant = True`, as
transformers marks its install probes) is treated the same, unregistered.
`nested_compile_region(fn)`: torch.compiler's mark for a region compiled once and reused; here
the region is traced inline at every call, as without the mark (torch's own mark, set by
`torch.compiler.nested_compile_region`, is read the same way). Reusing one compiled region is
not implemented: the mark changes nothing but the code it lets run.
`forbid_tracing(target, reason)`: reaching a call of `target` while tracing is an error.

Both register a call rule (capture.calls.registry), as capture's own rules for builtins are.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable

from .calls.registry import MARK_RULES, construct_rule, rule, rule_named
from .errors import CaptureError, Unsupported
from .values.factory import constant_args, evaluate_constant_operation


def _signature(fn: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # C functions without a text signature
        return None


def substitute_in_graph(original_fn: Callable, *, can_constant_fold_through: bool = False,
                        skip_signature_check: bool = False) -> Callable[[Callable], Callable]:
    """Register the decorated function as what capture traces in place of `original_fn`.

    With `can_constant_fold_through`, a call whose arguments are all constants runs
    `original_fn` now and its result is a constant. Unless `skip_signature_check`, the two
    signatures must agree where both are known (a TypeError otherwise)."""

    def register(polyfill: Callable) -> Callable:
        original_signature, polyfill_signature = _signature(original_fn), _signature(polyfill)
        if not skip_signature_check and None not in (original_signature, polyfill_signature):
            if original_signature != polyfill_signature:
                raise TypeError(
                    f"substitute_in_graph: {polyfill.__qualname__}{polyfill_signature} does not have the signature "
                    f"of {getattr(original_fn, '__qualname__', original_fn)}{original_signature} "
                    "(skip_signature_check=True allows it)"
                )

        @rule(original_fn)
        def trace_polyfill(frame, args, kwargs):
            if can_constant_fold_through:
                constants = constant_args(args, kwargs)
                if constants is not None:
                    positional, keywords = constants
                    return evaluate_constant_operation(frame, lambda: original_fn(*positional, **keywords), ())
            return frame.session.wrap(polyfill, None).call(frame, list(args), dict(kwargs))

        @functools.wraps(polyfill)
        def eager(*args, **kwargs):
            return original_fn(*args, **kwargs)

        eager.__compiler_substitute_for__ = original_fn
        return eager

    return register


def assume_constant_result(fn: Callable) -> Callable:
    """Calls of `fn` (with constant arguments) are evaluated while tracing and their result
    is a constant of the graph; returns `fn`. Nothing checks later that the result would still
    be the same. Functions marked for torch.compile's own `assume_constant_result`
    (`fn._dynamo_marked_constant = True`, as transformers marks its install probes) are
    evaluated the same way without this call."""
    rule(fn)(_evaluated_now(fn))
    return fn


def _evaluated_now(fn: Callable) -> Callable:
    def evaluate_now(frame, args, kwargs):
        constants = constant_args(args, kwargs)
        if constants is None:
            raise Unsupported(
                f"call to {fn.__qualname__} (assume_constant_result) with arguments that are not constants",
                hint="call it with Python constants, or remove the mark to trace it",
            )
        positional, keywords = constants
        return evaluate_constant_operation(frame, lambda: fn(*positional, **keywords), ())

    return evaluate_now


# torch.compile's own mark for assume_constant_result, which transformers sets on its install
# probes (`is_mambapy_available`, which calls importlib.util.find_spec): traced, find_spec read
# sys.modules while imports changed it (Zamba, VITS, NLLB-MoE).
MARK_RULES["_dynamo_marked_constant"] = _evaluated_now


# The attribute torch's mark_compile_region sets on its wrapper: the function it wraps.
_REGION_MARK = "__marked_compile_region_fn__"


def nested_compile_region(fn: Callable | None = None, *, options=None, max_reuse_entries: int = 8,
                          reuse_hash_fn: Callable | None = None):
    """torch.compiler.nested_compile_region: `fn` marked as a region to compile once and reuse
    (usable as a decorator with or without arguments). Called eagerly it is `fn`; traced, it is
    inlined like any function. `options`, `max_reuse_entries` and `reuse_hash_fn` are accepted
    for torch's signature: region reuse is not implemented."""
    if fn is None:
        return functools.partial(
            nested_compile_region, options=options, max_reuse_entries=max_reuse_entries, reuse_hash_fn=reuse_hash_fn
        )

    @functools.wraps(fn)
    def region(*args, **kwargs):
        return fn(*args, **kwargs)

    setattr(region, _REGION_MARK, fn)
    return region


def _inlined_region(wrapper: Callable) -> Callable:
    """The rule for a nested compile region's wrapper (ours or torch's, whose body calls a
    placeholder that raises while compiling): trace the function it marks."""
    fn = wrapper
    while getattr(fn, _REGION_MARK, None) is not None:
        fn = getattr(fn, _REGION_MARK)

    def trace_region(frame, args, kwargs):
        return frame.session.wrap(fn, None).call(frame, list(args), dict(kwargs))

    return trace_region


MARK_RULES[_REGION_MARK] = _inlined_region


@rule_named("torch._higher_order_ops.invoke_subgraph.invoke_subgraph_placeholder")
def _region_placeholder(frame, args, kwargs):
    """torch's region wrapper calls `invoke_subgraph_placeholder(fn, *args)`, which raises while
    compiling; reached when the wrapper runs as its own frame (a graph break inside the region):
    trace `fn(*args)`."""
    fn, *rest = args
    return fn.call(frame, rest, dict(kwargs))


def forbid_tracing(target: Callable, reason: str) -> None:
    """Tracing a call of `target` (or, for a class, constructing one) raises `CaptureError(reason)`
    at once, instead of tracing it or breaking the graph around it: for functions that change
    how compiled code runs (`compiler.set_stance`), as torch.compile forbids them."""

    def refuse(frame, *_):
        raise CaptureError(reason)

    if isinstance(target, type):
        construct_rule(target)(refuse)
    else:
        rule(target)(refuse)
