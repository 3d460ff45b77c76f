"""The compiled entry: one generated Python function per cache entry, with the signature of
the compiled function, that

1. reads the graph's inputs from its arguments, globals and closure (the sources recorded
   while tracing: `x`, `self._modules['h']._modules['0']._parameters['weight']`),
2. calls the backend's compiled graph (unless the graph has no operations), putting back the
   grad mode and autocast state it switched when it raises (global_state.py),
3. replays the side effects the traced code had on objects outside it (when the graph raises
   having left nothing visible, it runs the segment's own code eagerly instead, which makes
   eager's side effects before eager's error: segment_rerun.py),
4. rebuilds and returns the value the function returns, or, for an entry that breaks its
   graph, writes the `tail` (capture.runtime.breaks): rebuild the stack and live locals, run
   the refused instruction natively, and hand over to the resume function.

Its source is kept on the entry (`entry.source`) so users can read exactly what runs.
"""

from __future__ import annotations

import collections

import inspect
import itertools
import linecache
import re
import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from ..session import CaptureResult
from ..values.collection_types import DequeValue
from ..values.containers import DictValue, ListValue
from ..side_effects import DELETED
from .reconstruct import ExpressionWriter
from .global_state import GlobalModes
from .segment_rerun import SegmentRerun, request_rerun


class _EntryRoots:
    """How sources' roots are spelled inside the entry (guards.sources.RootNames)."""

    def __init__(self, writer_ref: list, fn: types.FunctionType):
        self._writer_ref = writer_ref
        self._fn = fn
        self._cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))

    def parameter(self, name: str) -> str:
        return name

    def globals_dict(self) -> str:
        return self._writer_ref[0].name_for(self._fn.__globals__, "globals")

    def module_globals(self, module: str) -> str:
        return self._writer_ref[0].name_for(vars(sys.modules[module]), f"globals_{module}")

    def held(self, obj: object, hint: str) -> str:
        return self._writer_ref[0].name_for(obj, hint)

    def closure_cell(self, name: str) -> str:
        return self._writer_ref[0].name_for(self._cells[name], f"cell_{name}")


@dataclass
class CompiledEntry:
    function: Callable  # the generated entry, same signature as the compiled function
    source: str
    graph_module: torch.fx.GraphModule
    compiled_graph: Callable | None  # None when the graph has no operations
    guard: Callable  # the guard function (same signature); .source, .why(...), .guards
    # (source, sizes) of the tensor inputs, None for symbolic sizes (automatic dynamic shapes).
    input_shapes: list = field(default_factory=list)
    # (source, value) of the int and float inputs its guards pin (capture.runtime.automatic_dynamic).
    input_numbers: list = field(default_factory=list)
    graph_name: str | None = None  # the name the entry calls the compiled graph by (None: no call)
    rerun: SegmentRerun | None = None  # runs its code eagerly when the graph raises (segment_rerun.py)
    modes: GlobalModes | None = None  # puts back grad mode and autocast when the graph raises (global_state.py)

    @property
    def op_count(self) -> int:
        return sum(1 for n in self.graph_module.graph.nodes if n.op in ("call_function", "call_method"))


_counter = itertools.count()


def identifier(name: str) -> str:
    """`name` made usable as a Python identifier (`<lambda>` -> `lambda`)."""
    return re.sub(r"\W", "_", name, flags=re.ASCII).strip("_") or "fn"


def entry_signature(fn: types.FunctionType) -> str:
    """`(a, b, *args, c, **kwargs)`: the compiled function's parameters, without defaults
    (the dispatcher binds them) or annotations."""
    params = [
        p.replace(default=inspect.Parameter.empty, annotation=inspect.Parameter.empty)
        for p in inspect.signature(fn, follow_wrapped=False).parameters.values()
    ]
    return str(inspect.Signature(params))


def build_entry(
    fn: types.FunctionType, result: CaptureResult, graph_module, guard, *, calls_graph: bool = True, tail=None
) -> CompiledEntry:
    """The entry for `result`. With `calls_graph` it calls the compiled graph, which the
    caller binds afterwards with `set_compiled_graph` (the entry is built first, so that a
    break whose values cannot be rebuilt fails before the backend runs). `tail(writer) ->
    (rebuilding lines, handing-over lines)`, if given, ends the entry instead of returning
    the value."""
    namespace: dict[str, Any] = {}
    writer_ref: list = []
    parameters = inspect.signature(fn, follow_wrapped=False).parameters
    writer = ExpressionWriter(_EntryRoots(writer_ref, fn), result.outputs, namespace, reserved=parameters)
    writer_ref.append(writer)

    body: list[str] = []
    graph_name = rerun = modes = None
    if calls_graph:
        graph_name = writer.name_for(graph_module, "compiled_graph")
        writer.plan_reads([i.source for i in result.inputs])
        inputs = [writer.source(i.source) for i in result.inputs]
        body.extend(writer.lines)
        writer.lines.clear()
        call = f"{graph_name}({', '.join(inputs)})"
        rerun = SegmentRerun(fn, graph_module.graph) if result.side_effects else None
        modes = GlobalModes(graph_module.graph)
        if rerun is not None or modes.saves:
            outputs = writer.outputs_name if result.outputs else None
            body.extend(_call_recovering(writer, fn, rerun, modes, inputs, call, outputs))
        else:
            body.append(f"{writer.outputs_name} = {call}" if result.outputs else call)
    # What the entry hands on is read before the side effects are replayed: a value read
    # through a source names the object the trace saw at entry, and a replayed write may
    # change what that source leads to (`d["k"] = x` then returning x, read as `d["k"]`).
    if tail is not None:
        rebuilt, run = tail(writer)
        body.extend(rebuilt)
        body.extend(_side_effect_lines(writer, result))
        body.extend(_release_unused(body, run, parameters))
        body.extend(run)
    else:
        returned = writer.value(result.return_value)
        body.extend(writer.lines)
        writer.lines.clear()
        effects = _side_effect_lines(writer, result)
        if effects:
            value = writer.temporary("_returned")
            body.append(f"{value} = {returned}")
            body.extend(effects)
            returned = value
        body.append(f"return {returned}")

    name = f"compiled_{identifier(fn.__name__)}_{next(_counter)}"
    source = f"def {name}{entry_signature(fn)}:\n" + "".join(f"    {line}\n" for line in body)
    filename = f"<capture entry {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)
    weakref.finalize(namespace[name], linecache.cache.pop, filename, None)  # lines live as long as the entry
    # The entry keeps what it reads by name, not the capture's values (which hold the first
    # call's arguments).
    return CompiledEntry(namespace[name], source, graph_module, None, guard, graph_name=graph_name, rerun=rerun,
                         modes=modes)


_ASSIGNED = re.compile(r"([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*),? = ")
_NAME = re.compile(r"[A-Za-z_]\w*")


def _release_unused(body: list[str], run: list[str], parameters) -> list[str]:
    """`del` of the entry's locals that the handing-over lines do not read. Eager's frame has
    dropped those objects by the refused instruction (a `del`, a rebinding, or they were
    never its locals: the graph's inputs and outputs): the instruction, and the resume
    function the entry hands over to, must not see them alive (capture.runtime.tail_call).
    Only names bound on every path are deleted: parameters and unindented assignments."""
    bound = dict.fromkeys(parameters)
    for line in body:
        match = _ASSIGNED.match(line)
        if match:
            bound.update(dict.fromkeys(match.group(1).split(", ")))
    read = {name for line in run for name in _NAME.findall(line)}
    unused = [name for name in bound if name not in read]
    return [f"del {', '.join(unused)}"] if unused else []


def _call_recovering(
    writer: ExpressionWriter,
    fn: types.FunctionType,
    rerun: SegmentRerun | None,
    modes: GlobalModes,
    inputs: list[str],
    call: str,
    outputs: str | None,
) -> list[str]:
    """The graph's call, which, when it raises, puts back the global modes it switched
    (global_state.py), then, for an entry with side effects (`rerun`), runs `fn` eagerly where
    the graph left nothing visible (segment_rerun.py): the side effects, replayed after the
    call, would otherwise be lost. For a graph that writes inputs or draws, and may raise, the
    inputs it writes and the generators' states are copied first, to be put back before the
    rerun."""
    error, called = writer.temporary("_error"), writer.temporary("_outs")
    lines, handler = [], []
    if modes.saves:
        name, saved = writer.name_for(modes, "global_modes"), writer.temporary("_modes")
        lines.append(f"{saved} = {name}.save()")
        handler.append(f"    {name}.restore({saved})")
    if rerun is not None:
        name, snapshot = writer.name_for(rerun, "rerun_segment"), "None"
        if rerun.snapshots:
            snapshot = writer.temporary("_snapshot")
            lines.append(f"{snapshot} = {name}.snapshot({''.join(inputs[k] + ', ' for k in rerun.effects.written)})")
        handler.append(f"    {name}({error}, {snapshot}, {_arguments(fn)})")
    lines += [
        "try:",
        f"    {called} = {call}" if outputs else f"    {call}",
        f"except BaseException as {error}:",
        *handler,
        "    raise",
    ]
    # Unindented, so that a break's tail sees the outputs bound on every path (_release_unused).
    return [*lines, f"{outputs} = {called}", f"del {called}"] if outputs else lines


def _arguments(fn: types.FunctionType) -> str:
    """The entry's parameters passed on as `fn` takes them."""
    kind = inspect.Parameter
    spelled = {kind.VAR_POSITIONAL: "*{}", kind.KEYWORD_ONLY: "{0}={0}", kind.VAR_KEYWORD: "**{}"}
    parameters = inspect.signature(fn, follow_wrapped=False).parameters.values()
    return ", ".join(spelled.get(p.kind, "{}").format(p.name) for p in parameters)


def set_compiled_graph(entry: CompiledEntry, compiled_graph: Callable) -> None:
    """Bind the backend's compiled graph to the name the entry calls it by. A compiled graph
    that would run the captured graph again eagerly after raising (its `eager_replay`) lets
    an entry with side effects run its whole segment instead (segment_rerun.py)."""
    if hasattr(compiled_graph, "eager_replay"):
        # aot_autograd's graph: traced, it switches no mode at call time, and puts back what
        # it wrote before it replays.
        if entry.modes is not None:
            entry.modes.saves = False
        if entry.rerun is not None:
            compiled_graph.eager_replay = request_rerun
            entry.rerun.snapshots = False
    entry.compiled_graph = compiled_graph
    entry.function.__globals__[entry.graph_name] = compiled_graph


# An expression no replayed write can change: a local of the entry (a parameter, a temporary)
# or a literal; and the graph's outputs, `outs[0]`.
_SETTLED = re.compile(r"[A-Za-z_]\w*|-?\d+(\.\d*)?|'[^'\\]*'")


def _side_effect_lines(writer: ExpressionWriter, result: CaptureResult) -> list[str]:
    """The replay of the side effects: every object written to and every value written is read
    first, then the writes run. A write may change what a later read's source leads to:
    `o.a, o.b = o.b, o.a` records o.a <- `L['o'].b` and o.b <- `L['o'].a`, and `old = o.inner;
    o.inner = New(); old.k = 1` writes to the object `L['o'].inner` named before the call."""
    effects = result.side_effects
    reads: list[str] = []
    writes: list[str] = []

    def flush() -> None:
        # Lines the writer emitted to rebuild values are reads too.
        reads.extend(writer.lines)
        writer.lines.clear()

    def settled(expression: str) -> str:
        flush()
        if _SETTLED.fullmatch(expression) or re.fullmatch(rf"{writer.outputs_name}\[\d+\]", expression):
            return expression
        name = writer.temporary("_r")
        reads.append(f"{name} = {expression}")
        return name

    def read(value) -> str:
        return settled(writer.value(value))

    for container in effects.mutated_containers.values():
        target = settled(writer.source(container.source))
        if isinstance(container, DequeValue):
            # A deque has no slice assignment: refill it.
            items = ", ".join(read(v) for v in container.items)
            writes += [f"{target}.clear()", f"{target}.extend([{items}])"]
        elif isinstance(container, ListValue):
            items = ", ".join(read(v) for v in container.items)
            if container.python_cls is list:
                writes.append(f"{target}[:] = [{items}]")
            else:  # list's own slice assignment, never a subclass's __setitem__
                writes.append(f"{writer.constant(list.__setitem__)}({target}, slice(None), [{items}])")
        elif isinstance(container, DictValue):
            pairs = [(read(k), read(v)) for k, v in container.entries.values()]
            writes += _refill_dict(writer, container.python_cls, target, pairs)
        elif container.entries.log is not None:
            # A set: its changes one by one, so that it ends laid out as eager leaves it.
            for method, value in container.entries.log:
                writes.append(f"{target}.{method}({'' if value is None else read(value)})")
        else:
            items = ", ".join(read(v) for v in container.entries.values())
            writes += [f"{target}.clear()", f"{target}.update([{items}])"]
    for write in effects.attribute_writes.values():
        target = read(write.target)
        for attr, value in write.values.items():
            if value is DELETED or attr in write.readded:
                # It may have been set by this very call first: present or not, it ends up absent
                # (and one set again after that goes to the end of the __dict__).
                writes.append(f"vars({target}).pop({attr!r}, None)")
            if value is DELETED:
                continue
            if attr in write.raw:
                writes.append(f"object.__setattr__({target}, {attr!r}, {read(value)})")
            elif attr.isidentifier():
                writes.append(f"{target}.{attr} = {read(value)}")
            else:
                writes.append(f"setattr({target}, {attr!r}, {read(value)})")
    for f_globals, attr, value, module in effects.global_writes.values():
        if module is not None and module.source is not None:
            # Through the source: a later call may pass another module (guards allow it).
            writes.append(f"vars({read(module)})[{attr!r}] = {read(value)}")
        else:
            writes.append(f"{writer.name_for(f_globals, 'globals')}[{attr!r}] = {read(value)}")
    for _, source, value in effects.cell_writes.values():
        # Through the source (`C['k']`, or a resume function's cell parameter `k.cell_contents`):
        # the cell seen at capture belongs to that call's frame; later calls bring their own.
        value_name = read(value)
        target = writer.source(source)
        flush()
        writes.append(f"{target} = {value_name}")
    for fn, args, kwargs in effects.deferred_calls:
        arguments = [read(a) for a in args] + [f"{k}={read(v)}" for k, v in kwargs.items()]
        writes.append(f"{writer.name_for(fn.fn, fn.name)}({', '.join(arguments)})")
    return reads + writes


def _refill_dict(writer, cls: type, target: str, pairs: list[tuple[str, str]]) -> list[str]:
    """Statements that give the real dict `target` the traced contents. A subclass's own
    clear/update/__setitem__ are the program's and already ran in the trace (an override that
    doubles the value would double it again): the base class's methods refill it. OrderedDict's
    order lives beside the dict's, so its own clear and __setitem__ keep the two in step."""
    if cls is dict:
        return [f"{target}.clear()", f"{target}.update({{{', '.join(f'{k}: {v}' for k, v in pairs)}}})"]
    base = collections.OrderedDict if issubclass(cls, collections.OrderedDict) else dict
    setitem = writer.constant(base.__setitem__)
    return [f"{writer.constant(base.clear)}({target})", *(f"{setitem}({target}, {k}, {v})" for k, v in pairs)]
