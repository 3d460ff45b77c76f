"""The cache of one compiled function: a list of (guard function, compiled entry).

A call runs the first entry whose guards accept its arguments. On a miss capture runs again
(logging, on `compiler.recompiles`, which guard of each entry failed) and the new entry is
appended. After `config.recompile_limit` entries the function is run eagerly, with one warning.
"""

from __future__ import annotations

import inspect
import logging
import types
import warnings
import weakref
from typing import Callable

import torch
from guards import GuardSet
from guards.failure import recompile_reason

from .. import config
from ..interpreter.frame import UserException
from ..session import CaptureSession
from .entry import CompiledEntry, build_entry, identifier

recompiles_log = logging.getLogger("compiler.recompiles")
graph_code_log = logging.getLogger("compiler.graph_code")
guards_log = logging.getLogger("compiler.guards")
entry_log = logging.getLogger("compiler.bytecode")
capture_log = logging.getLogger("capture")


# Every cache alive, so `reset()` can empty them all.
_ALL_CACHES: weakref.WeakSet = weakref.WeakSet()


def reset() -> None:
    """Drop every compiled entry; the next call of each compiled function captures again."""
    for cache in list(_ALL_CACHES):
        cache.clear()


class CodeCache:
    def __init__(self, fn: types.FunctionType, backend: Callable, *, dynamic: bool = False):
        _ALL_CACHES.add(self)
        self.fn = fn
        self.backend = backend
        self.dynamic = dynamic
        self.entries: list[CompiledEntry] = []
        self._warned_limit = False

        # (guard, entry function) pairs read by `dispatch` on every call.
        self._table: list[tuple[Callable, Callable]] = []
        self.dispatch = make_dispatcher(fn, self._table, self._miss)

    def __call__(self, *args, **kwargs):
        return self.dispatch(*args, **kwargs)

    def add(self, entry: CompiledEntry) -> None:
        self.entries.append(entry)
        self._table.append((entry.guard, entry.function))

    def clear(self) -> None:
        self.entries.clear()
        self._table.clear()
        self._warned_limit = False

    def _miss(self, args, kwargs):
        if len(self.entries) >= config.recompile_limit:
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(
                    f"{self.fn.__qualname__} hit the recompile limit ({config.recompile_limit} "
                    f"entries); it now runs eagerly. Last reason:\n"
                    + recompile_reason([e.guard for e in self.entries], *args, **kwargs),
                    stacklevel=3,
                )
            return self.fn(*args, **kwargs)
        if self.entries and recompiles_log.isEnabledFor(logging.INFO):
            recompiles_log.info(
                "recompiling %s (%s:%d):\n%s",
                self.fn.__qualname__,
                self.fn.__code__.co_filename,
                self.fn.__code__.co_firstlineno,
                recompile_reason([e.guard for e in self.entries], *args, **kwargs),
            )
        try:
            entry = self.capture(args, kwargs)
        except UserException as exc:
            # The traced program raises on these inputs; running it eagerly raises the same
            # exception from the user's own code.
            capture_log.debug("%s raised while tracing; running it eagerly: %s", self.fn.__qualname__, exc)
            return self.fn(*args, **kwargs)
        self.add(entry)
        return entry.function(*args, **kwargs)

    def capture(self, args, kwargs) -> CompiledEntry:
        result = CaptureSession(self.fn, args, kwargs, dynamic=self.dynamic).run()
        graph_module = torch.fx.GraphModule(torch.nn.Module(), result.graph)
        graph_code_log.debug("captured graph of %s:\n%s", self.fn.__qualname__, graph_module.code)
        compiled = self.backend(graph_module, [i.value for i in result.inputs])
        guard = GuardSet(result.guards).compile(self.fn, name=f"guards_{identifier(self.fn.__code__.co_name)}")
        guards_log.debug("%s", guard.source)
        entry = build_entry(self.fn, result, compiled, graph_module, guard)
        entry.function.__defaults__ = self.fn.__defaults__
        entry.function.__kwdefaults__ = self.fn.__kwdefaults__
        entry_log.debug("%s", entry.source)
        return entry


def make_dispatcher(fn: types.FunctionType, table: list, miss: Callable) -> Callable:
    """A function with `fn`'s signature that runs the first entry of `table` whose guard
    accepts the call, else `miss(args, kwargs)`. Generated so that arguments are passed on as
    they arrived (no *args/**kwargs repacking on the hot path)."""
    signature = inspect.signature(fn, follow_wrapped=False)
    params, forward, positional, keywords = [], [], [], []
    kind = inspect.Parameter
    for p in signature.parameters.values():
        bare = p.replace(default=kind.empty, annotation=kind.empty)
        params.append(bare)
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
    name = f"dispatch_{identifier(fn.__code__.co_name)}"
    source = (
        f"def {name}{inspect.Signature(params)}:\n"
        f"    for __guard, __entry in __table:\n"
        f"        if __guard({call}):\n"
        f"            return __entry({call})\n"
        f"    return __miss(({''.join(a + ', ' for a in positional)}), {{{', '.join(keywords)}}})\n"
    )
    namespace = {"__table": table, "__miss": miss}
    exec(compile(source, f"<capture dispatcher {name}>", "exec"), namespace)
    dispatch = namespace[name]
    dispatch.__defaults__ = fn.__defaults__
    dispatch.__kwdefaults__ = fn.__kwdefaults__
    return dispatch
