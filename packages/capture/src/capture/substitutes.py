"""Telling capture how to treat a function it cannot (or should not) trace, through call rules.

`substitute_in_graph(original)(polyfill)`: a call of `original` (typically a C function
capture cannot trace into) is traced as a call of `polyfill`, a Python function that does the
same; called outside capture, the returned function runs `original`.
`assume_constant_result(fn)`: a call of `fn` on constant arguments runs now, while tracing,
and its result is a constant of the graph (no guard checks it later: the user vouches for it).
A function carrying torch.compile's mark for it (`fn._dynamo_marked_constant = True`, as
transformers marks its install probes) is treated the same, unregistered.
`forbid_tracing(target, reason)`: reaching a call of `target` while tracing is an error.

Both register a call rule (capture.calls.registry), as capture's own rules for builtins are.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable

from .calls.registry import MARK_RULES, construct_rule, rule
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
