"""The cache of one compiled function: a list of (guard function, compiled entry).

A call runs the first entry whose guards accept its arguments. On a miss capture runs again
(logging, on `compiler.recompiles`, which guard of each entry failed) and the new entry is
appended. A recompile caused by a changed size makes that dimension symbolic in later captures,
and one caused by a changed int or float input makes that number symbolic (automatic dynamic
shapes, unless `dynamic=False`). After `config.recompile_limit` entries the
function is run eagerly, with one warning. A resume function missed again inside a loop whose
body breaks runs the rest of that call eagerly instead of capturing once per iteration. The
stance (capture.stance) may run the original instead of any entry, or refuse to capture on a
miss.

Code capture cannot trace breaks the graph (capture.runtime.breaks) unless `fullgraph=True`,
which raises `Unsupported` instead. When no useful break is possible the function is marked
to run eagerly from then on. A function run eagerly still has its callees compiled, as under
torch.compile (capture.runtime.shallow_disable).
"""

from __future__ import annotations

import gc
import inspect
import logging
import os
import sys
import threading
import types
import warnings
import weakref
from typing import TYPE_CHECKING, Callable

import torch
from fake_tensor.mode_stacks import mode_stacks_restored_on_error
from guards import GuardSet, current_global_state
from guards.failure import recompile_reason

from .. import config, logs, stance
from ..calls.autograd_calls import GradientsConsumedByOutputs
from ..errors import Unsupported, UserException
from ..session import CaptureResult, CaptureSession
from ..values.lifetime import end_is_watched
from .automatic_dynamic import changed_dims, changed_numbers, input_numbers, input_shapes
from .compilation import CapturedGraph, Compilation, GraphBreak
from .entry import CompiledEntry, build_entry, identifier, set_compiled_graph
from .dispatchers import make_dispatcher, make_tail_dispatcher
from .shallow_disable import frame_only_runner
from .tail_call import TailCall, run_chain, taking_box, times_called_in_chain

if TYPE_CHECKING:
    from ..bytecode.resume import ResumeCode

recompiles_log = logs.channel("recompiles")
graph_code_log = logs.channel("graph_code")
guards_log = logs.channel("guards")
entry_log = logs.channel("bytecode")
dynamic_log = logs.channel("dynamic")
capture_log = logs.channel("capture")


_SUSPENDING = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE

# Every cache alive, so `reset()` can empty them all (the lock: a set must not grow while
# another thread copies it).
_ALL_CACHES: weakref.WeakSet = weakref.WeakSet()
_ALL_CACHES_LOCK = threading.Lock()


def reset() -> None:
    """Drop every compiled entry; the next call of each compiled function captures again."""
    with _ALL_CACHES_LOCK:
        caches = list(_ALL_CACHES)
    for cache in caches:
        cache.clear()


def _free_locks_in_forked_child() -> None:
    # A thread compiling a function at the moment of a fork holds that function's lock (and
    # its compilation's), and does not exist in the child: there the locks start free, or the
    # child's first call of that function would wait forever. The entry that thread was
    # making was never added, so the child captures it again.
    _ALL_CACHES_LOCK._at_fork_reinit()
    for cache in list(_ALL_CACHES):
        cache._lock._at_fork_reinit()
        cache.compilation._lock._at_fork_reinit()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_free_locks_in_forked_child)


class CodeCache:
    """`fn`'s compiled entries. `resume` is set when `fn` is a resume function (made from the
    code of `original`)."""

    def __init__(
        self,
        fn: types.FunctionType,
        compilation: Compilation,
        *,
        resume: ResumeCode | None = None,
        original: types.FunctionType | None = None,
    ):
        with _ALL_CACHES_LOCK:
            _ALL_CACHES.add(self)
        self.fn = fn
        self.compilation = compilation
        self.resume = resume
        self.original = original or fn
        self.entries: list[CompiledEntry] = []
        self.run_eagerly = False
        # Dimensions of inputs (by source) seen with different sizes: symbolic from now on.
        self.automatic_dims: dict = {}
        # Number inputs (by source) seen with different values: symbolic from now on.
        self.changing_numbers: set = set()
        # Its `torch.autograd.grad` calls break the graph (calls.autograd_calls).
        self.breaks_at_autograd_grad = False
        self._warned_limit = False
        self._lock = threading.RLock()

        # (global state, guard, entry function) triples read by the dispatchers on every call:
        # the global state (grad mode, autocast...) is read once per call and compared with
        # each entry's tuple, rather than checked setting by setting in every guard function.
        self._table: list[tuple[tuple | None, Callable, Callable]] = []
        # A resume function's runs (its entries, itself, its eager runner) as functions taking
        # their arguments in a list they empty (tail_call.taking_box), made once each.
        self._boxed: dict[Callable, Callable] = {}
        if resume is None:
            self.dispatch = make_dispatcher(fn, self._table, self._miss)
        else:
            # Called by tail calls only, with its arguments in a list it empties (tail_call).
            self.dispatch_tail = make_tail_dispatcher(fn, self._table, self._miss_boxed)
        self._loop_runs_eagerly = False
        self._eager_runner: Callable | None = None
        compilation.adopt(self)

    @property
    def backend(self) -> Callable:
        return self.compilation.backend

    def __call__(self, *args, **kwargs):
        if self.resume is not None:
            return run_chain(TailCall(self.dispatch_tail, list(args)))
        return self.dispatch(*args, **kwargs)

    def add(self, entry: CompiledEntry) -> None:
        self.entries.append(entry)
        self._table.append((entry.guard.global_state, entry.guard, self._runner(entry.function)))

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()
            self._table.clear()
            self._boxed.clear()
            self._warned_limit = False
            self._loop_runs_eagerly = False
            self.run_eagerly = False
            self.automatic_dims.clear()
            self.changing_numbers.clear()

    def _miss(self, args, kwargs):
        # One compile at a time per function: threads missing together would each capture,
        # race past the recompile limit and append duplicate entries. Whoever waited finds
        # the entry the first thread added. The function runs outside the lock (it may call
        # itself, or take as long as it likes).
        with self._lock:
            run = self._function_for(args, kwargs)
        return run(*args, **kwargs)

    def _miss_boxed(self, box: list):
        with self._lock:
            captures = len(self._table)
            older_collections = _older_generation_collections()
            run = self._function_for(tuple(box), {})
            if len(self._table) != captures and any(end_is_watched(arg) for arg in box):
                # The capture's values (in reference cycles) still hold the arguments: the
                # entry's `del` of one whose end is watched must free it, as eager's does.
                _collect_since(older_collections)
        return self._runner(run)(box)

    def _runner(self, fn: Callable) -> Callable:
        """What runs `fn`: itself, or for a resume function `fn` taking its arguments' list."""
        if self.resume is None:
            return fn
        boxed = self._boxed.get(fn)
        if boxed is None:
            boxed = self._boxed[fn] = taking_box(fn)
        return boxed

    def _eager(self) -> Callable:
        """The function run natively; as under torch.compile, the functions it calls are still
        compiled (torch skips the frame, its frame-evaluation hook still sees the callees)."""
        if self._eager_runner is None:
            try:
                self._eager_runner = frame_only_runner(self.fn, self.compilation)
            except Exception as error:  # the last resort must not fail: run the original as it is
                capture_log.warning("%s runs eagerly with its callees uncompiled: rewriting its call sites failed: %s",
                                    self.fn.__qualname__, error)
                self._eager_runner = self.fn
        return self._eager_runner

    def _function_for(self, args, kwargs) -> Callable:
        """What runs this call: an entry accepting it (added by another thread while this
        one waited), a new entry, or `fn` run eagerly (`_eager`, or `fn` itself)."""
        if self.run_eagerly:
            return self._eager()
        if torch._C._len_torch_dispatch_stack():
            # A TorchDispatchMode the caller entered (a FLOP counter, a debugging mode) sees
            # every ATen op of an eager call, which compiled kernels skip: such calls run
            # eagerly, as under torch.compile. (No entry accepts them: see TorchDispatchModes.)
            return self.fn
        state = current_global_state()
        for entry_state, guard, function in self._table:
            if entry_state == state and guard(*args, **kwargs):
                return function
        current = stance.current_stance()
        if current == "eager_on_recompile":
            return self.fn
        if current == "fail_on_recompile":
            self._refuse_recompile(args, kwargs)
        if self.fn.__code__.co_flags & _SUSPENDING:
            # Calling it only creates a generator or coroutine, whose frame leaves and
            # re-enters at every `yield`: nothing a graph could hold.
            self.run_eagerly = True
            self.compilation.breaks.append(
                GraphBreak(self.fn.__qualname__, "generator and coroutine functions run eagerly", outcome="eager")
            )
            return self._eager()
        limit = self.compilation.recompile_limit or config.recompile_limit
        if len(self._table) >= limit:
            if self.compilation.fullgraph or not self._warned_limit:
                self._warned_limit = True
                code = self.fn.__code__
                setting = ("compile(recompile_limit=...)" if self.compilation.recompile_limit
                           else "capture.config.recompile_limit")
                reason = recompile_reason([e.guard for e in self.entries], *args, **kwargs)
                where = f"{self.fn.__qualname__} ({code.co_filename}:{code.co_firstlineno}) hit the recompile limit"
                if self.compilation.fullgraph:
                    # As torch.compile's FailOnRecompileLimitHit: a whole-graph compile does not
                    # quietly become eager code.
                    raise stance.RecompileError(
                        f"{where} ({setting} = {limit} entries) with fullgraph=True. Last reason:\n{reason}"
                    )
                message = (
                    f"{where} ({setting} = {limit} entries); calls its entries do not accept now run "
                    f"eagerly. Last reason:\n{reason}"
                )
                recompiles_log.info("%s", message)
                warnings.warn(message, stacklevel=4)
            return self._eager()
        if self.entries:
            if self._loop_runs_eagerly and self._repeating_in_chain():
                return self._eager()  # decided once (below): later calls skip the reasoning
            newly_dynamic = self._learn_dynamic(args, kwargs)
            if self._looping(newly_dynamic):
                self._say_loop_runs_eagerly(args, kwargs)
                self._loop_runs_eagerly = True
                return self._eager()
            self._log_recompile(args, kwargs)
        # An interrupt mid-compile must not leave a fake-tensor mode on (fake_tensor.mode_stacks).
        with logs.phase("capture", self.fn.__qualname__), mode_stacks_restored_on_error():
            try:
                entry = self._capture(args, kwargs)
            except GradientsConsumedByOutputs:
                # A graph ran torch.autograd.grad and hands on a tensor whose history that call
                # freed: capture again, the calls breaking the graph (calls.autograd_calls).
                self.breaks_at_autograd_grad = True
                entry = self._capture(args, kwargs)
        if not isinstance(entry, CompiledEntry):
            return entry
        self.add(entry)
        # A guard whose reads have effects (a bounded lru_cache's call, which counts a hit as the
        # program's own call) is not run for this check: the capture made that call already.
        if not _reads_with_effects(entry.guard) and not entry.guard(*args, **kwargs):
            self._warn_guard_never_passes(entry, args, kwargs)
        return entry.function

    def _capture(self, args, kwargs) -> CompiledEntry | Callable:
        """A new entry for this call, or what runs it instead: the function itself (the traced
        program raises on these inputs) or the function run eagerly (no graph could be made)."""
        session = self.new_session(args, kwargs)
        try:
            return self.finish(session.run())
        except UserException as exc:
            # The traced program raises on these inputs; running it eagerly raises the same
            # exception from the user's own code. Inputs passing the same guards would raise
            # again: they run eagerly too, without capturing again.
            capture_log.debug("%s raised while tracing; running it eagerly: %s", self.fn.__qualname__, exc)
            session.add_shape_guards()
            guard = compile_guards(self.fn, session.guards)
            self._table.append((guard.global_state, guard, self._runner(self.fn)))
            return self.fn
        except Unsupported as err:
            if self.compilation.fullgraph:
                raise
            from .breaks import compile_break

            entry = compile_break(self, err, args, kwargs)
            if entry is None:
                self.run_eagerly = True
                return self._eager()
            return entry

    def _warn_guard_never_passes(self, entry: CompiledEntry, args, kwargs) -> None:
        # Nothing ran between the capture and this check: a guard failing here fails on every
        # call (an identity guard on an object made anew at each read), so each call would
        # capture again until the recompile limit. A capture bug, said where it happens.
        code = self.fn.__code__
        warnings.warn(
            f"Guards that fail on the inputs they were captured for: {self.fn.__qualname__} "
            f"({code.co_filename}:{code.co_firstlineno}) would capture again on every call (a compiler bug; "
            f"please report it): {entry.guard.why(*args, **kwargs)}",
            RuntimeWarning,
            stacklevel=4,
        )

    def _refuse_recompile(self, args, kwargs) -> None:
        code = self.fn.__code__
        message = (
            f"Detected recompile when the compiler's stance is 'fail_on_recompile': {self.fn.__qualname__} "
            f"({code.co_filename}:{code.co_firstlineno}) "
        )
        if self.entries:
            message += "would capture again:\n" + recompile_reason([e.guard for e in self.entries], *args, **kwargs)
        else:
            message += "has no compiled entry yet"
        raise stance.RecompileError(message)

    def _log_recompile(self, args, kwargs) -> None:
        if recompiles_log.isEnabledFor(logging.INFO):
            recompiles_log.info(
                "recompiling %s (%s:%d):\n%s",
                self.fn.__qualname__,
                self.fn.__code__.co_filename,
                self.fn.__code__.co_firstlineno,
                recompile_reason([e.guard for e in self.entries], *args, **kwargs),
            )

    def _learn_dynamic(self, args, kwargs) -> bool:
        """Make the sizes and numbers this miss changed symbolic; whether any became so."""
        learned = False
        if self.compilation.dynamic is not False:
            # Under dynamic=True too: numbers read through an argument (the items of a tuple
            # it holds) start specialized, and become symbolic once they change.
            for source in changed_numbers(self.fn, self.entries, args, kwargs) - self.changing_numbers:
                self.changing_numbers.add(source)
                learned = True
                dynamic_log.info("%s: the number %s changes between calls; now symbolic", self.fn.__qualname__, source)
        if self.compilation.dynamic is None and config.automatic_dynamic_shapes:
            for source, dims in changed_dims(self.fn, self.entries, args, kwargs).items():
                known = self.automatic_dims.setdefault(source, set())
                if not dims <= known:
                    known |= dims
                    learned = True
                    dynamic_log.info("%s: dims %s of %s change between calls; now symbolic", self.fn.__qualname__, sorted(known), source)
        return learned

    def _looping(self, newly_dynamic: bool) -> bool:
        """Whether this miss comes round again on every iteration of a loop whose body breaks
        the graph: the resume function ran earlier in this very chain, it has entries for two
        iterations already (a loop's first often differs: a None accumulator, an empty list),
        and nothing of this miss becomes symbolic. What changes is Python state the loop
        advances (a list it appends to, a dict it fills), which its guards pin; capturing
        again would fail the same way next time, up to the recompile limit. torch.compile
        runs a frame whose loop breaks eagerly; here the rest of the function does."""
        return not newly_dynamic and len(self.entries) >= 2 and self._repeating_in_chain()

    def _repeating_in_chain(self) -> bool:
        return self.resume is not None and times_called_in_chain(self.dispatch_tail) > 1

    def _say_loop_runs_eagerly(self, args, kwargs) -> None:
        code = self.fn.__code__
        recompiles_log.info(
            "%s (%s:%d) misses its entries again inside a loop whose body breaks the graph; the rest of "
            "this call runs eagerly (with its callees compiled). Reason:\n%s",
            self.fn.__qualname__, code.co_filename, code.co_firstlineno,
            recompile_reason([e.guard for e in self.entries], *args, **kwargs),
        )

    def new_session(self, args, kwargs, **options) -> CaptureSession:
        return CaptureSession(
            self.fn,
            args,
            kwargs,
            dynamic=bool(self.compilation.dynamic),
            automatic_dims=self.automatic_dims,
            changing_numbers=self.changing_numbers,
            fullgraph=self.compilation.fullgraph,
            breaks_at_autograd_grad=self.breaks_at_autograd_grad,
            **options,
        )

    def finish(self, result: CaptureResult, tail=None) -> CompiledEntry:
        """Build the entry, then compile the captured graph (unless it has no operations);
        `tail` ends a break entry (capture.runtime.breaks)."""
        graph_module = torch.fx.GraphModule(torch.nn.Module(), result.graph)
        name = self.fn.__qualname__
        operations = has_operations(graph_module)
        guard = compile_guards(self.fn, result.guards)
        # Built before the backend runs: a break whose values cannot be rebuilt fails here.
        entry = build_entry(self.fn, result, graph_module, guard, calls_graph=operations, tail=tail)
        entry.function.__defaults__ = self.fn.__defaults__
        entry.function.__kwdefaults__ = self.fn.__kwdefaults__
        entry.input_shapes = input_shapes(result)
        entry.input_numbers = input_numbers(result)
        if operations:
            graph_code_log.debug("captured graph of %s:\n%s", name, graph_module.code)
            try:
                compiled = self.compilation.compile_graph(graph_module, [i.value for i in result.inputs])
            except Exception as error:
                # A backend's error names graph inputs by position: say which values they are.
                error.add_note(_graph_context(self.fn, result.inputs))
                raise
            set_compiled_graph(entry, compiled)
            # The backend reads the same symbolic sizes and may specialize one while it compiles
            # (code generated for that size only): its questions guard the entry too.
            guard_count = len(result.guards)
            result.add_shape_guards()
            if len(result.guards) != guard_count:
                guard = entry.guard = compile_guards(self.fn, result.guards)
            self.compilation.graphs.append(CapturedGraph(name, graph_module, guard))
        guards_log.debug("%s", guard.source)
        entry_log.debug("%s", entry.source)
        return entry


def _graph_context(fn: types.FunctionType, inputs: list, shown: int = 8) -> str:
    code = fn.__code__
    names = ", ".join(f"{i} = {graph_input.source}" for i, graph_input in enumerate(inputs[:shown]))
    more = f", ... ({len(inputs)} in all)" if len(inputs) > shown else ""
    return (f"(while compiling the graph captured from {fn.__qualname__}, {code.co_filename}:{code.co_firstlineno};"
            f" its inputs: {names}{more})")


def _reads_with_effects(guard_fn) -> bool:
    return any(guard.reads_with_effects() for guard in guard_fn.guards)


def compile_guards(fn: types.FunctionType, guards: list) -> Callable:
    """The guard function of an entry of `fn`; its global-state guards are left to the
    dispatcher (`guard_fn.global_state`)."""
    return GuardSet(guards).compile(fn, name=f"guards_{identifier(fn.__name__)}", split_global_state=True)


def has_operations(graph_module: torch.fx.GraphModule) -> bool:
    return any(n.op in ("call_function", "call_method") for n in graph_module.graph.nodes)


def _older_generation_collections() -> tuple[int, int]:
    stats = gc.get_stats()
    return stats[1]["collections"], stats[2]["collections"]


def _collect_since(older_collections: tuple[int, int]) -> None:
    """Free the cycles made since `older_collections` was read. Until a collection of the
    middle generation runs, nothing made since has been moved to the oldest one, so collecting
    the two young generations frees it all: a fraction of a millisecond, where a full
    collection walks the whole heap (a second with torch, sympy and a model loaded). A long
    capture, across which the middle generation was collected, needs the full one, as does
    Python 3.14's incremental collector, whose generations work otherwise."""
    young_only = sys.version_info < (3, 14) and _older_generation_collections() == older_collections
    gc.collect(1 if young_only else 2)

