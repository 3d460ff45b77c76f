"""`CaptureSession`: the state of one capture of one call.

It owns the graph being built (`graph`), the fake tensor mode its operations run in, the
guards collected so far, the side-effect log, and the memo that makes one Python object one
value (so `a is b` and mutations agree across the paths that reach it). `run()` interprets
the function's code on the call's arguments and returns what the compiled entry needs.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import inspect
import os
import sys
import threading
import types
from dataclasses import dataclass
from typing import Any, Callable

import torch
from fake_tensor import FakeTensorMode, ShapeEnv
from guards import kinds
from guards.kinds import shape_guards
from guards.sources import (
    AttrSource, BufferSource, ClosureSource, GlobalSource, GlobalsSource, HeldCellSource, HeldObjectSource, ItemSource, LocalSource,
    ModuleGlobalSource, ModuleGlobalsSource, ParameterSource, StorageOffsetSource, TypeSource,
)

from . import config, instructions  # noqa: F401  (fills the opcode registry)
from .errors import Unsupported
from .graph import GraphBuilder, graph_values_in
from .guard_kinds import DistinctObjects, StoragesApart, StoragesShared, sharing_pattern
from .dynamic import MARK_ATTRIBUTE, STATIC_ATTRIBUTE
from .bytecode import decode
from .calls.autograd_calls import refuse_outputs_through_freed_graph
from .calls.frame_reads import check_reads_of_own_frame
from .interpreter.frame import Frame, StackSnapshot
from .side_effects import SideEffects
from .sources import HeldSource
from .values.base import Value
from .values.cells import ExistingCellValue
from .values.class_lookup import lookup_guards, recording_lookups
from .values.constant import ConstantValue, is_constant_type
from .values.context import ContextExit
from .values.deferred import DeferredCall
from .values.lazy import LazyInput
from .values.symbolic import contains_symbolic
from .wrap import guard_function, wrap

# Modules whose attributes are read without guards: the standard library's own modules, whose
# functions and constants programs do not rebind between calls of a compiled function. torch
# is not one of them: `F.scaled_dot_product_attention = patched` and `mock.patch("torch.xyz")`
# are everyday code, so its attributes are guarded as any other module's.
# Py_TPFLAGS_IMMUTABLETYPE: a builtin or extension type, whose attributes cannot be set.
_IMMUTABLE_TYPE = 1 << 8

_UNGUARDED_MODULES = frozenset({
    "math", "cmath", "operator", "builtins", "functools", "itertools", "collections", "typing", "warnings",
    "inspect", "dataclasses", "enum", "contextlib", "copy", "abc", "types", "re", "logging", "sys",
})  # fmt: skip


def _definition_or_constant(value: Any) -> bool:
    """What an unguarded module holds that programs do not change: its functions, classes and
    constants. Its data (sys.path, sys.argv, warnings.filters, logging.root) changes between
    calls, and a read of it is guarded as any other module's."""
    # sys.modules is read unguarded here: each name the program reads of it is guarded on its
    # own (values.py_modules.SysModulesValue).
    return callable(value) or isinstance(value, (types.ModuleType, tuple)) or is_constant_type(value) or value is sys.modules


# Immutable values whose identity no guard keeps (see CaptureSession.keep_distinct).
_ATOMS = (int, float, bool, complex, str, bytes, type(None))


# torch.compiler.is_compiling() reads a module flag (torch >= 2.5), one for the process: it is
# on while any thread captures. Threads capturing at once each saving and restoring the flag
# would leave it on for good (the last to finish restores what it saw: on), so they count.
_captures = {"running": 0, "flag before": False}
_captures_lock = threading.Lock()


# Captures running on each thread: the flag answers for the process, this for one thread.
_this_thread = threading.local()


def capturing_on_this_thread() -> bool:
    """Whether this thread is inside a capture (in code capture runs for real: a property, a
    folded constant), rather than some other thread."""
    return getattr(_this_thread, "captures", 0) > 0


def _count_capture(change: int) -> None:
    _this_thread.captures = max(getattr(_this_thread, "captures", 0) + change, 0)
    if not hasattr(torch.compiler, "_is_compiling_flag"):
        return
    with _captures_lock:
        if _captures["running"] == 0:
            _captures["flag before"] = torch.compiler._is_compiling_flag
        # Never below zero: a capture that forked ends in the child too, which counts none.
        _captures["running"] = max(_captures["running"] + change, 0)
        torch.compiler._is_compiling_flag = True if _captures["running"] else _captures["flag before"]


def _no_captures_in_forked_child() -> None:
    # The threads capturing at the fork do not exist in the child: the flag they held on
    # would stay on there for good.
    _captures_lock._at_fork_reinit()
    if _captures["running"]:
        _captures["running"] = 0
        torch.compiler._is_compiling_flag = _captures["flag before"]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_no_captures_in_forked_child)


@contextlib.contextmanager
def _capturing(exporting: bool):
    """While tracing: `torch.compiler.is_compiling()` (and, under `export`,
    `torch.compiler.is_exporting()`) is True for code capture runs for real (properties,
    constant folding), and the global state the traced code changes (grad mode, autocast) is
    put back however tracing ends."""
    exporting_flag = getattr(torch.compiler, "_is_exporting_flag", False)
    grad_enabled = torch.is_grad_enabled()
    autocast_state = {d: (torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in ("cpu", "cuda")}
    _count_capture(+1)
    if exporting:
        torch.compiler._is_exporting_flag = True
    try:
        yield
    finally:
        _count_capture(-1)
        if exporting:
            torch.compiler._is_exporting_flag = exporting_flag
        torch._C._set_grad_enabled(grad_enabled)
        for device, (enabled, dtype) in autocast_state.items():
            torch.set_autocast_enabled(device, enabled)
            torch.set_autocast_dtype(device, dtype)


def _autocast_state() -> dict:
    return {device: (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)) for device in ("cpu", "cuda")}


def _written(fake: torch.Tensor) -> bool:
    """Whether the trace wrote to `fake` (or a view of it). Inference tensors keep no version
    counter: taken as written."""
    if fake.is_inference():
        return True
    return fake._version > 0


def _has_marked_tensor(tree) -> bool:
    """Whether a tensor in the arguments' lists, tuples and dicts was marked dynamic. Walked
    with a record of the containers seen: an argument may hold itself (`l.append(l)`). By
    type(), not isinstance, which would read `__class__` through an object's own
    __getattribute__."""
    pending, seen = [tree], set()
    while pending:
        node = pending.pop()
        kind = type(node)
        if issubclass(kind, torch.Tensor):
            if hasattr(node, MARK_ATTRIBUTE):
                return True
        elif issubclass(kind, (list, tuple, dict)) and id(node) not in seen:
            seen.add(id(node))
            pending.extend(node.values() if isinstance(node, dict) else node)
    return False


@dataclass
class CaptureResult:
    graph: torch.fx.Graph
    inputs: list  # GraphInput
    outputs: list  # TensorValue, in graph output order
    return_value: Value | None  # None when the capture stopped at a graph break
    guards: list
    side_effects: SideEffects
    # Where the outermost frame stopped (a graph break), with its stack and locals.
    stopped: StackSnapshot | None = None
    # Adds to `guards` the shape guards taken since (by the backend, while it compiles).
    add_shape_guards: Callable[[], None] = lambda: None


class CaptureSession:
    """`dynamic=True` makes every dimension (of size >= 2) of the tensors the call receives
    symbolic, except parameters and buffers; tensors marked with `mark_dynamic` are symbolic
    in the marked dimensions whatever `dynamic` says, `mark_static` keeps dimensions static,
    and `automatic_dims` (source -> dims) lists dimensions earlier calls saw change size;
    ints and floats read from `changing_numbers` (sources) are symbolic graph inputs
    (capture.values.changing_number).

    With `stop_step` the outermost frame stops before running that step (a graph break):
    the graph then returns the values `live_values(snapshot)` needs (the stack and live
    locals a resume function receives), and `with` blocks of global state still open there
    are exited at the end of the graph."""

    def __init__(
        self,
        fn: types.FunctionType,
        args: tuple,
        kwargs: dict,
        *,
        exporting: bool = False,
        dynamic: bool = False,
        automatic_dims: dict | None = None,
        changing_numbers: set | None = None,
        stop_step: int | None = None,
        live_values: Callable[[StackSnapshot, CaptureSession], list[Value]] | None = None,
        fullgraph: bool = False,
        breaks_at_autograd_grad: bool = False,
    ):
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.root_globals = fn.__globals__
        self.exporting = exporting
        self.dynamic = dynamic
        self.automatic_dims = automatic_dims or {}
        self.changing_numbers = changing_numbers or set()
        self.stop_step = stop_step
        self.live_values = live_values
        # Autograd nodes a `torch.autograd.grad` of the trace freed, and whether such calls
        # break the graph instead (capture.calls.autograd_calls).
        self.freed_grad_fns: set = set()
        self.breaks_at_autograd_grad = breaks_at_autograd_grad
        # Symbolic sizes cost: fake tensors then run under the Python dispatcher (about 3x
        # slower per op), so a ShapeEnv exists only when some size will be symbolic.
        # Data-dependent sizes and `.item()` stay in the graph as unbacked symbols when the
        # settings ask, and always with fullgraph=True (a break is no option there; torch
        # does the same).
        scalar_outputs = config.capture_scalar_outputs or fullgraph
        dynamic_output_shapes = config.capture_dynamic_output_shape_ops or fullgraph
        unbacked = scalar_outputs or dynamic_output_shapes
        symbolic = dynamic or self.automatic_dims or self.changing_numbers or unbacked or _has_marked_tensor((args, kwargs))
        self.shape_env = ShapeEnv() if symbolic else None
        self.fake_mode = FakeTensorMode(
            shape_env=self.shape_env,
            allow_dynamic_output_shape_ops=dynamic_output_shapes,
            allow_scalar_outputs=scalar_outputs,
        )
        self.graph = GraphBuilder(self.fake_mode, self.wrap)
        self.side_effects = SideEffects()
        self.guards: list = []
        self._guard_set: set = set()
        self.wrapped: dict[int, tuple[Any, Value]] = {}
        # lru_cache'd calls made in this trace, by (id of the wrapper, constant arguments).
        self.cached_call_results: dict[tuple[int, Any], Value] = {}
        self._held_count = 0
        self._keepalive: list[Any] = []
        self._globals_sources: dict[int, Any] = {id(self.root_globals): None}
        # Per class, the type of the first instance met with a source: its methods are read
        # (and guarded) through it, once per class (class_attribute_source). By id: a class's
        # hash and == are its metaclass's, user code that may refuse to hash (`__eq__` alone)
        # or call two classes equal. The classes live as long as the trace (keepalive).
        self._class_sources: dict[int, Any] = {}
        # Inputs told apart by identity, by id of their value: tensors used as dict keys or set
        # members (capture.values.tensor.register_input_key), objects `is` or id() found
        # different (tell_apart); and the one guard that keeps them distinct objects.
        self.distinct_inputs: dict[int, Value] = {}
        # Objects from the frame whose hash (user code) a guard checks already, by id
        # (values.key_hashes): the objects are kept alive by the values holding them.
        self.hashes_guarded: set[int] = set()
        # How to leave the global-state managers the trace has entered for real and not left.
        self.open_contexts: list[Callable[[], None]] = []
        self._distinct_sources: list = []
        self._distinct: DistinctObjects | None = None

    # --- values ---------------------------------------------------------------------------------
    def wrap(self, obj: Any, source) -> Value:
        return wrap(self, obj, source)

    def add_guard(self, guard) -> None:
        if guard not in self._guard_set:
            self._guard_set.add(guard)
            self.guards.append(guard)

    def tell_apart(self, a, b) -> None:
        """The trace answered that `a` and `b` are different objects (`a is b`, `id(a) ==
        id(b)`): where both came from the frame, the entry holds only while they still are.
        Values of different types (each guarded by type) cannot be one object."""
        if a.source is not None and b.source is not None and a.python_type() is b.python_type():
            self.keep_distinct(a)
            self.keep_distinct(b)

    def keep_distinct(self, value) -> None:
        """`value` is told apart from others by identity (a dict key by identity, an id()): if
        it came from the frame, guard it distinct from every other such input. Not a number or
        string: which equal ones are one object is the interpreter's choice (cached small ints),
        guarded by value instead; two changing ints equal in the capturing call would fail the
        guard at once."""
        if value.python_type() in _ATOMS:
            return
        if value.source is not None and not isinstance(value.source, HeldSource) and id(value) not in self.distinct_inputs:
            self.distinct_inputs[id(value)] = value
            self.guard_distinct(value.source)

    def guard_distinct(self, source) -> None:
        """Add `source` to the objects guarded pairwise distinct (one guard, grown in place)."""
        self._distinct_sources.append(source)
        if len(self._distinct_sources) < 2:
            return
        previous = self._distinct
        self._distinct = DistinctObjects(tuple(self._distinct_sources))
        if previous is None:
            self.guards.append(self._distinct)
        else:
            self.guards[self.guards.index(previous)] = self._distinct
            self._guard_set.discard(previous)
        self._guard_set.add(self._distinct)

    def keepalive(self, obj: Any) -> None:
        self._keepalive.append(obj)

    def hold(self, obj: Any, stem: str) -> HeldSource:
        """A source for an object no frame input leads to: the entry keeps the object."""
        self._held_count += 1
        return HeldSource(obj, f"{stem}_{self._held_count}")

    def dynamic_dims_of(self, tensor: torch.Tensor, source) -> dict | list[int]:
        """The dimensions of an input tensor that are symbolic in this capture (a dict dim ->
        fake_tensor.Dim when they were marked)."""
        if self.shape_env is None:
            return []
        marked = getattr(tensor, MARK_ATTRIBUTE, None)
        if marked is not None:
            return marked
        if isinstance(tensor, torch.nn.Parameter) or isinstance(source, (ParameterSource, BufferSource)):
            return []
        static = getattr(tensor, STATIC_ATTRIBUTE, ())
        if self.dynamic:
            candidates = range(tensor.dim())
        else:
            candidates = sorted(self.automatic_dims.get(source, ()))
        # Sizes 0 and 1 specialize (as in torch.compile): broadcasting depends on them. Dims an
        # earlier call saw change may lie past this tensor's rank (the same argument once had
        # more dims): those do not apply.
        return [dim for dim in candidates if dim < tensor.dim() and dim not in static and tensor.shape[dim] >= 2]

    # --- sources ----------------------------------------------------------------------------------
    def global_source(self, f_globals: dict, name: str):
        if f_globals is self.root_globals:
            return GlobalSource(name)
        namespace = self.globals_dict_source(f_globals)
        if isinstance(namespace, ModuleGlobalsSource):
            return ModuleGlobalSource(namespace.module, name)
        return ItemSource(namespace, name) if namespace is not None else None

    def globals_dict_source(self, f_globals: dict):
        """The source of a globals dict itself (None where no path reaches it)."""
        if f_globals is self.root_globals:
            return GlobalsSource()
        module = f_globals.get("__name__")
        if isinstance(module, str) and getattr(sys.modules.get(module), "__dict__", None) is f_globals:
            # A function of an imported module: its globals are that module's, wherever the
            # trace found the function (a submodule's forward has no source of its own).
            return ModuleGlobalsSource(module)
        return self._globals_sources.get(id(f_globals))

    def guard_name_lookup(self, f_globals: dict, f_builtins: dict, name: str):
        """Guards that `name` still resolves as it did: to the builtin (no global of that name
        shadows it since), or to nothing at all (the NameError the trace raised). Returns the
        builtin's source, if it is found there."""
        namespace = self.globals_dict_source(f_globals)
        if namespace is not None:
            self.add_guard(kinds.KeyAbsent(namespace, name))
        if f_builtins is not vars(builtins):
            return None  # exec() with builtins of its own: nothing names them
        if name not in f_builtins:
            self.add_guard(kinds.KeyAbsent(ModuleGlobalsSource("builtins"), name))
            return None
        return ModuleGlobalSource("builtins", name)

    def entered_function(self, function: Value) -> None:
        """Remember a path to the globals of an inlined function (for guards on them)."""
        f_globals = function.f_globals
        if id(f_globals) not in self._globals_sources and function.source is not None:
            self._globals_sources[id(f_globals)] = AttrSource(function.source, "__globals__")
            self.keepalive(f_globals)

    def class_attribute_source(self, instance_source, cls: type, name: str):
        """`type(instance).name` for an attribute found on `cls` (a module's forward, a helper
        method, a property, class data): read through the first instance of `cls` the trace
        met with a source, or the class's own source, so that patching the class
        (`Attention.forward = f`, a common way to swap in a kernel) is seen, with one guard per
        class rather than one per instance. A class no source reaches (that of an object made
        in the trace, found on another object) is held by the guard itself. None for a class
        nothing can change (a builtin type)."""
        if cls.__flags__ & _IMMUTABLE_TYPE:
            return None
        if instance_source is not None and not isinstance(instance_source, HeldSource):
            self._note_class_source(cls, TypeSource(instance_source))
        base = self._class_sources.get(id(cls))
        if base is None:
            base = HeldObjectSource(f"class {cls.__qualname__}", id(cls), cls)
            self._note_class_source(cls, base)
        return AttrSource(base, name)

    def saw_class(self, cls: type, source) -> None:
        """A class the trace reached through `source`: its attributes are read through it."""
        if not isinstance(source, HeldSource):
            self._note_class_source(cls, source)

    def _note_class_source(self, cls: type, source) -> None:
        if id(cls) not in self._class_sources:
            self.keepalive(cls)
            self._class_sources[id(cls)] = source

    def guard_function(self, fn: types.FunctionType, source) -> None:
        guard_function(self, fn, source)

    def closure_source(self, function: Value, index: int):
        if function.source is None:
            # A function found on a class (a decorated forward's wrapper): its cell itself.
            fn = function.fn
            cell = fn.__closure__[index]
            return HeldCellSource(f"{fn.__qualname__}.{fn.__code__.co_freevars[index]}", id(cell), cell)
        return AttrSource(ItemSource(AttrSource(function.source, "__closure__"), index), "cell_contents")

    def module_attribute_source(self, module_value: Value, name: str, value: Any):
        if module_value.source is None:
            return None
        if module_value.module.__name__.partition(".")[0] in _UNGUARDED_MODULES and _definition_or_constant(value):
            return None
        return AttrSource(module_value.source, name)

    # --- running ----------------------------------------------------------------------------------
    def run(self) -> CaptureResult:
        with _capturing(self.exporting), recording_lookups() as lookups:
            try:
                result = self._run(self.args, self.kwargs)
                for guard in lookup_guards(lookups):
                    self.add_guard(guard)
                return result
            finally:
                # Managers the trace entered for real and did not leave (it stopped inside).
                while self.open_contexts:
                    self.open_contexts.pop()()
                # The memo of wrapped objects only serves the trace. Its values (and closures
                # over this session) form cycles with the session, which would keep every
                # object the trace met alive until the cyclic collector runs: one the program
                # drops right after the call would outlive it (a weak reference still answering
                # it, a __del__ late), where eager frees it at once.
                self.wrapped.clear()

    def _run(self, args: tuple, kwargs: dict) -> CaptureResult:
        fn = self.fn
        code = fn.__code__
        check_reads_of_own_frame(code, fn.__globals__)
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
        bound.apply_defaults()
        parameters = inspect.signature(fn, follow_wrapped=False).parameters
        locals_: dict[str, Value] = {}
        for name, value in bound.arguments.items():
            kind = parameters[name].kind
            source = LocalSource(name)
            if kind is inspect.Parameter.VAR_POSITIONAL:
                locals_[name] = self.wrap(tuple(value), source)
            elif kind is inspect.Parameter.VAR_KEYWORD:
                locals_[name] = self.wrap(dict(value), source)
                self.side_effects.private(locals_[name])
            else:
                locals_[name] = LazyInput(value, source)
        cells = {
            name: ExistingCellValue(cell, ClosureSource(name))
            for name, cell in zip(code.co_freevars, fn.__closure__ or ())
        }
        for name in decode(code).passed_cells:
            # A resume function's cell variables arrive as the cells themselves.
            value = locals_.pop(name)
            cells[name] = ExistingCellValue(value.obj, AttrSource(value.source, "cell_contents"), value.source)
        for guard in kinds.global_state_guards():
            self.add_guard(guard)
        # The compiled function itself may get another body (`f.__code__ = g.__code__`).
        self.add_guard(kinds.IdentityMatch(AttrSource(HeldObjectSource(f"function {fn.__qualname__}", id(fn), fn), "__code__"), code))
        frame = Frame(self, code, fn.__globals__, locals_, cells)
        frame.stop_step = self.stop_step
        grad_enabled_at_entry = torch.is_grad_enabled()
        autocast_at_entry = _autocast_state()
        return_value = frame.run()
        stopped = frame.stopped
        if stopped is not None:
            # The graph ends with the global state as it was before the open `with` blocks;
            # the resume function enters them again.
            for value in reversed(stopped.stack):
                if isinstance(value, ContextExit):
                    value.manager.exit(frame)
        self._hand_over_grad_mode(grad_enabled_at_entry)
        self._hand_over_autocast(autocast_at_entry)
        self._keep_inputs_apart_if_mutated()
        if stopped is not None:
            outputs = self._collect_outputs(self.live_values(stopped, self))
        else:
            outputs = self._collect_outputs([return_value])
        refuse_outputs_through_freed_graph(self.freed_grad_fns, outputs)
        self.graph.set_output(outputs)
        self.add_shape_guards()
        return CaptureResult(
            graph=self.graph.fx,
            inputs=self.graph.inputs,
            outputs=outputs,
            return_value=return_value,
            guards=self.guards,
            side_effects=self.side_effects,
            stopped=stopped,
            add_shape_guards=self.add_shape_guards,
        )

    def _keep_inputs_apart_if_mutated(self) -> None:
        """A graph that writes to an input tensor (its fake's version counter moved, through
        it or a view of it) holds only while that tensor shares memory with the other tensor
        inputs as at capture: a backend that functionalizes the graph orders the write and
        the reads of the other inputs as if they could not alias (`x[:4]` and `x[2:6]`, tied
        weights of one module instance, untied in the next), unless it saw them share
        (aot_autograd then reads them as views of one base, at their storage offsets). A
        graph that writes to no input computes the same from aliased inputs, and its entry
        pays no guard for them. The same tensor reached by two paths is one input, guarded so
        by SameObject. Tensors the entry holds (HeldSource: no frame input leads to them) are
        no guard's: each call sees the same object."""
        tensors = [i for i in self.graph.inputs if isinstance(i.value, torch.Tensor) and not isinstance(i.source, HeldSource)]
        written = [i for i in tensors if _written(i.node.meta["example_value"])]
        if not written:
            return
        written_ids = {id(i) for i in written}
        inputs = [*written, *(i for i in tensors if id(i) not in written_ids)]
        pattern = sharing_pattern([i.value for i in inputs])
        if pattern == tuple(range(len(inputs))):
            self.add_guard(StoragesApart(*(tuple(i.source for i in part) for part in (written, inputs[len(written) :]))))
            return
        users = collections.Counter(pattern)
        shared = [i for i, first in zip(inputs, pattern) if users[first] > 1]
        if any(contains_symbolic(tuple(i.node.meta["example_value"].shape)) for i in shared):
            # Symbolic fakes do not share storages (fake_tensor), so a backend could not see
            # that the write shows through the other inputs.
            raise Unsupported(
                "a tensor written in place shares memory with another input, and their sizes are dynamic",
                hint="pass tensors that do not share memory, or mark their sizes static (compiler.mark_static)",
            )
        self.add_guard(StoragesShared(tuple(i.source for i in inputs), pattern))
        for i in shared:
            self.add_guard(kinds.ConstantMatch(StorageOffsetSource(i.source), i.value.storage_offset()))

    def _hand_over_grad_mode(self, at_entry: bool) -> None:
        """Grad mode changed outside a `with` block (`torch.set_grad_enabled(False)` as a call,
        a manager's `__enter__` called by hand) and left so: the graph ends with the mode it
        started in and the entry sets the new one after the graph has run. A graph whose last
        node switches the mode is not enough: a backend that traces the graph (aot_autograd)
        runs that node while compiling, not on every call, as torch.compile's graphs likewise
        end in the mode they began with."""
        now = torch.is_grad_enabled()
        if now == at_entry:
            return
        self.graph.record_effect(torch._C._set_grad_enabled, at_entry)
        setter = DeferredCall(torch._C._set_grad_enabled, None, "set_grad_enabled")
        self.side_effects.defer_call(setter, [ConstantValue(now)], {})

    def _hand_over_autocast(self, at_entry: dict) -> None:
        """Autocast switched outside a `with` block (`torch.set_autocast_enabled` called, a
        manager's `__enter__` called by hand) and left so: handed over like grad mode."""
        for device, (enabled, dtype) in _autocast_state().items():
            if (enabled, dtype) == at_entry[device]:
                continue
            self.graph.record_effect(torch.set_autocast_enabled, device, at_entry[device][0])
            self.graph.record_effect(torch.set_autocast_dtype, device, at_entry[device][1])
            for setter, value in ((torch.set_autocast_enabled, enabled), (torch.set_autocast_dtype, dtype)):
                call = DeferredCall(setter, None, setter.__name__)
                self.side_effects.defer_call(call, [ConstantValue(device), ConstantValue(value)], {})

    def add_shape_guards(self) -> None:
        """The guards the ShapeEnv took so far (on symbolic sizes), added to `guards`."""
        env = self.shape_env
        if env is not None:
            for guard in shape_guards(env.produce_guards(), env.symbol_sources, env.place_checks()):
                self.add_guard(guard)

    def _collect_outputs(self, values: list[Value]) -> list:
        """Every tensor the entry needs from the graph: in `values` (what it returns, or
        hands to a resume function) and in the values side effects write back, each once."""
        seen: dict[int, Any] = {}
        roots = list(values)
        effects = self.side_effects
        for write in effects.attribute_writes.values():
            roots.extend(write.values.values())
        roots.extend(v for _, _, v, _ in effects.global_writes.values())
        roots.extend(v for _, _, v in effects.cell_writes.values())
        roots.extend(effects.mutated_containers.values())
        for _, args, kwargs in effects.deferred_calls:
            roots.extend(args)
            roots.extend(kwargs.values())
        for root in roots:
            for value in graph_values_in(root):
                seen.setdefault(id(value.node), value)
        return list(seen.values())
