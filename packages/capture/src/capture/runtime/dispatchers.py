"""Dispatchers: the generated functions that pick a compiled function's entry on each call.

A dispatcher has the compiled function's signature, reads the current global state once,
runs the first entry whose state and guard accept the call, else the cache's miss handler,
and runs the chain of tail calls an entry that broke its graph hands back
(capture.runtime.tail_call). A resume function's dispatcher takes its arguments in a list
and passes tail calls on. `inline_dispatch` writes the same choice into a calling entry.
"""

from __future__ import annotations

import inspect
import types
from typing import TYPE_CHECKING, Callable

from guards import current_global_state

from .. import stance
from ..markers import mark_compiled
from .entry import identifier
from .tail_call import TailCall, run_chain, taking_box

if TYPE_CHECKING:
    from .cache import CodeCache


def make_dispatcher(fn: types.FunctionType, table: list, miss: Callable) -> Callable:
    """A function with `fn`'s signature that runs the first entry of `table` whose global
    state equals the current one and whose guard accepts the call, else `miss(args, kwargs)`
    (or `fn` itself under the "force_eager" stance). Generated so that arguments are passed on as
    they arrived (no *args/**kwargs repacking on the hot path). It runs the chain of resume
    functions an entry that broke its graph hands back."""
    signature = inspect.signature(fn, follow_wrapped=False)
    params, forward, positional, keywords, defaults = [], [], [], [], []
    kind = inspect.Parameter
    positional_defaults = len(fn.__defaults__ or ())
    positional_params = [p for p in signature.parameters.values() if p.kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD)]
    first_defaulted = len(positional_params) - positional_defaults
    for p in signature.parameters.values():
        # Defaults are read from `fn` on each call, as Python binds them: a later
        # `fn.__defaults__ = ...` must reach the entries (their guards check the value).
        default = _DEFAULT if p.default is not kind.empty else kind.empty
        bare = p.replace(default=default, annotation=kind.empty)
        params.append(bare)
        if default is _DEFAULT:
            if p.kind is kind.KEYWORD_ONLY:
                defaults.append(f"    if {p.name} is __DEFAULT:\n        {p.name} = __fn.__kwdefaults__[{p.name!r}]\n")
            else:
                index = positional_params.index(p) - first_defaulted
                defaults.append(f"    if {p.name} is __DEFAULT:\n        {p.name} = __fn.__defaults__[{index}]\n")
        if p.kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD):
            forward.append(p.name)
            positional.append(p.name)
        elif p.kind is kind.VAR_POSITIONAL:
            forward.append(f"*{p.name}")
            positional.append(f"*{p.name}")
        elif p.kind is kind.KEYWORD_ONLY:
            forward.append(f"{p.name}={p.name}")
            keywords.append(f"{p.name!r}: {p.name}")
        else:
            forward.append(f"**{p.name}")
            keywords.append(f"**{p.name}")
    call = ", ".join(forward)
    miss_call = f"__miss(({''.join(a + ', ' for a in positional)}), {{{', '.join(keywords)}}})"
    # The chain holds what the rest of the function needs; eager's frame would drop the
    # others at their `del` (an argument passed as a temporary dies there).
    names = list(signature.parameters)
    released = f"        del {', '.join(names)}\n" if names else ""
    name = f"dispatch_{identifier(fn.__name__)}"
    body = (
        f"    if __forced_eager[0]:\n"
        f"        return __fn({call})\n"
        f"    __state = __current_global_state()\n"
        f"    for __entry_state, __guard, __entry in __table:\n"
        f"        if __entry_state == __state and __guard({call}):\n"
        f"            __result = __entry({call})\n"
        f"            break\n"
        f"    else:\n"
        f"        __result = {miss_call}\n"
        f"    if __result.__class__ is __TailCall:\n"
        f"{released}"
        f"        return __run_chain(__result)\n"
        f"    return __result\n"
    )
    source = f"def {name}{inspect.Signature(params)}:\n" + "".join(defaults) + body
    namespace = {
        "__table": table, "__miss": miss, "__TailCall": TailCall, "__run_chain": run_chain, "__current_global_state": current_global_state,
        "__forced_eager": stance.forced_eager, "__fn": fn, "__DEFAULT": _DEFAULT,
    }
    exec(compile(source, f"<capture dispatcher {name}>", "exec"), namespace)
    dispatcher = namespace[name]
    # A call that does not fit the signature fails binding the dispatcher's own parameters:
    # CPython names the function by its __qualname__ in that TypeError, which must be fn's.
    dispatcher.__qualname__ = fn.__qualname__
    return mark_compiled(dispatcher)


def make_tail_dispatcher(fn: types.FunctionType, table: list, miss: Callable) -> Callable:
    """The dispatcher of a resume function (positional parameters only), called by a tail
    call with its arguments in a list: the guards read them from the list, the entry (or `fn`),
    which takes the list (the cache puts entries taking it in `table`), empties it, so that its
    frame alone holds them (capture.runtime.tail_call). Tail calls the entry returns are passed on."""
    name = f"dispatch_{identifier(fn.__name__)}"
    source = (
        f"def {name}(__args):\n"
        f"    if __forced_eager[0]:\n"
        f"        return __fn(__args)\n"
        f"    __state = __current_global_state()\n"
        f"    for __entry_state, __guard, __entry in __table:\n"
        f"        if __entry_state == __state and __guard(*__args):\n"
        f"            return __entry(__args)\n"
        f"    return __miss(__args)\n"
    )
    namespace = {"__table": table, "__miss": miss, "__current_global_state": current_global_state,
                 "__forced_eager": stance.forced_eager, "__fn": taking_box(fn)}
    exec(compile(source, f"<capture dispatcher {name}>", "exec"), namespace)
    return mark_compiled(namespace[name])


_NO_ENTRY = object()


def inline_dispatch(cache: CodeCache, arguments: list[str], name_for: Callable, fresh_name: Callable) -> tuple[list[str], str]:
    """(lines, result name): a call of `cache`'s function with `arguments` (one expression per
    parameter, positionally), choosing the entry as its dispatcher does but inside the calling
    entry, without the dispatcher's frame. Recursion through compiled callees then takes one
    Python frame per level, as eager's does, not two (RecursionError at eager's depth). A miss,
    the "force_eager" stance and everything else go through the dispatcher."""
    result, state, entry_state, guard, entry = (fresh_name() for _ in range(5))
    call = ", ".join(arguments)
    no_entry = name_for(_NO_ENTRY, "no_entry")
    lines = [
        f"{result} = {no_entry}",
        f"if not {name_for(stance.forced_eager, 'forced_eager')}[0]:",
        f"    {state} = {name_for(current_global_state, 'current_global_state')}()",
        f"    for {entry_state}, {guard}, {entry} in {name_for(cache._table, f'entries_{identifier(cache.fn.__name__)}')}:",
        f"        if {entry_state} == {state} and {guard}({call}):",
        f"            {result} = {entry}({call})",
        "            break",
        f"if {result} is {no_entry}:",
        f"    {result} = {name_for(cache.dispatch, cache.fn.__name__)}({call})",
        f"elif {result}.__class__ is {name_for(TailCall, 'TailCall')}:",
        f"    {result} = {name_for(run_chain, 'run_chain')}({result})",
    ]
    return lines, result


class _Default:
    """The default of every defaulted parameter of a dispatcher: the dispatcher then reads the
    function's own default (spelled `__DEFAULT` in the generated signature)."""

    def __repr__(self) -> str:
        return "__DEFAULT"


_DEFAULT = _Default()
