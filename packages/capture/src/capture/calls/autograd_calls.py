"""Autograd run by the captured code itself: `MyFunction.apply(...)` of a custom
torch.autograd.Function, `torch.autograd.grad(...)` and `torch.autograd.backward(...)`.

The first two are recorded as single calls. A backend that differentiates the graph
(aot_autograd) then traces what autograd would do on fake tensors; two things it cannot do
are found here, while capturing, so that the graph breaks there instead (as torch.compile's):

- a Function whose backward cannot run on fake tensors (it reads a value: `.item()`, indexing
  by a saved index tensor, `if grad.sum() > 0`). Its backward is tried on the fakes right after
  the forward; if that fails the Function runs eagerly between two graphs, and autograd calls
  its backward on real values.
- `torch.autograd.grad` without `retain_graph`, which frees the saved tensors of the nodes it
  runs, when the graph hands on a tensor whose history runs through such a node. Eager's
  caller gets that tensor (its `backward()` then raises "Trying to backward through the graph
  a second time"); differentiating the graph's outputs, a backend met the freed tensors while
  compiling. The capture notes the nodes each call freed (`CaptureSession.freed_grad_fns`);
  if a tensor it hands on reaches one, it asks to be run again with every
  `torch.autograd.grad` of the function breaking the graph (`GradientsConsumedByOutputs`), so
  that the call runs eagerly on the real autograd graph, which the caller then holds as eager's.

`torch.autograd.backward` writes the leaves' `.grad` and breaks the graph, as `Tensor.backward()`.
"""

from __future__ import annotations

import dis
import inspect
import sys
import types
from typing import TYPE_CHECKING, Any, Iterable

import torch
from guards import kinds
from guards.sources import AttrSource, HeldObjectSource, ItemSource
from torch.utils._pytree import tree_leaves

from ..errors import CaptureError, Unsupported
from ..values.base import Value
from ..values.constant import is_constant_type
from ..values.tensor import TensorValue
from .registry import rule

if TYPE_CHECKING:
    from ..interpreter.frame import Frame


class AutogradFunctionApply:
    """The graph target for `MyFunction.apply(*args)` of a torch.autograd.Function subclass.

    FX prints call targets by qualified name and cannot print a class as an argument; this
    callable names the function class instead (`MyFunction_apply`) and FX binds it as a
    global of the generated code."""

    def __init__(self, function_class: type):
        self.function_class = function_class
        self.__name__ = f"{function_class.__name__}_apply"
        self.__qualname__ = self.__name__

    def __call__(self, *args, **kwargs):
        return self.function_class.apply(*args, **kwargs)


def record_function_apply(frame: Frame, function_class: type, args: list[Value], kwargs: dict[str, Value]) -> Value:
    _guard_python_state_read(frame.session, function_class)
    result = frame.session.graph.call_function(frame, AutogradFunctionApply(function_class), args, kwargs)
    _try_backward(frame, function_class, _fakes(args, kwargs), _fakes([result], {}))
    return result


def _try_backward(frame: Frame, function_class: type, inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> None:
    """Run the Function's backward on the fakes its forward just made, as a backend tracing
    the graph's gradients will; refuse the call if that fails. `retain_graph` keeps the fake
    autograd graph for the program's own use (a `torch.autograd.grad` later in the trace)."""
    inputs = [t for t in inputs if t.requires_grad]
    outputs = [t for t in outputs if t.requires_grad and t.grad_fn is not None]
    if not (inputs and outputs and torch.is_grad_enabled()):
        return  # no gradient will be asked of it: the backend does not trace the backward
    name = function_class.__qualname__
    try:
        with frame.session.fake_mode:
            tangents = [torch.ones_like(t) for t in outputs]
            torch.autograd.grad(outputs, inputs, tangents, allow_unused=True, retain_graph=True)
    except Exception as err:  # noqa: BLE001  (whatever stops it, eager's backward meets on real values)
        reason = str(err).splitlines()[0] if str(err) else ""
        raise Unsupported(
            f"the backward of the autograd.Function {name} cannot be traced ({type(err).__name__}: {reason})",
            hint=f"the graph breaks around {name}.apply, which runs eagerly (its backward too); "
            "a backward that reads values from tensors (.item(), indexing by a saved index tensor, "
            "branching on a tensor) cannot be compiled",
        ) from err


def _guard_python_state_read(session, function_class: type) -> None:
    """The Function's methods run natively (on fakes here, and in the backend's trace), not
    interpreted: the Python numbers, strings and flags they read from globals, closure cells
    and attribute or constant-key item chains on them (`g * SCALE`, `g * config.SCALE`,
    `g * CONFIG["scale"]`) are baked into the graph. Guard each, as a read by traced code is,
    in those methods and in the functions they call by such a name, and the methods themselves. Reads through `ctx` (set by the forward
    itself) or through a local name are not followed."""
    seen: set = set()
    held = HeldObjectSource(f"class {function_class.__qualname__}", id(function_class), function_class)
    for name in ("forward", "setup_context", "backward"):
        method = inspect.getattr_static(function_class, name, None)
        fn = getattr(method, "__func__", method)
        # The methods themselves, which a program may replace between calls (a patched backward).
        if isinstance(method, classmethod):
            session.add_guard(kinds.IdentityMatch(AttrSource(AttrSource(held, name), "__func__"), fn))
        elif fn is not None:
            session.add_guard(kinds.IdentityMatch(AttrSource(held, name), getattr(function_class, name)))
        _guard_reads_of(session, fn, seen)


_NO_KEY = object()


def _guard_reads_of(session, fn: Any, seen: set, depth: int = 0) -> None:
    fn = inspect.unwrap(fn) if callable(fn) else fn  # once_differentiable's functools.wraps wrapper
    if not isinstance(fn, types.FunctionType) or fn in seen or depth > 4 or _torch_code(fn):
        return
    seen.add(fn)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    read = None  # (value, source) of the name, attribute or item chain just loaded
    key = _NO_KEY  # a constant loaded right after a dict: `CONFIG["scale"]`
    for inst in _instructions(fn.__code__):
        if inst.opname == "LOAD_ATTR" and read is not None and not (sys.version_info >= (3, 12) and inst.arg & 1):
            read = _static_attribute(*read, inst.argval)
        elif inst.opname == "LOAD_CONST" and read is not None and type(read[0]) is dict:
            key = inst.argval
            continue
        elif inst.opname == "BINARY_SUBSCR" and key is not _NO_KEY and is_constant_type(key) and key in read[0]:
            read = read[0][key], ItemSource(read[1], key)
        else:
            read = _name_read(session, fn, cells, inst)
        key = _NO_KEY
        if read is None:
            continue
        value, source = read
        if is_constant_type(value):
            session.add_guard(kinds.ConstantMatch(source, value))
        elif isinstance(value, types.FunctionType):
            _guard_reads_of(session, value, seen, depth + 1)


def _torch_code(fn: types.FunctionType) -> bool:
    """torch's own Python functions (`torch.nn.functional.*`): their reads are torch's."""
    module = fn.__globals__.get("__name__")
    return isinstance(module, str) and (module == "torch" or module.startswith("torch."))


def _name_read(session, fn: types.FunctionType, cells: dict, inst: dis.Instruction) -> tuple[Any, Any] | None:
    """(value, source) of a global or closure cell `inst` loads, if a guard can name it."""
    if inst.opname == "LOAD_GLOBAL" and inst.argval in fn.__globals__:
        source = session.global_source(fn.__globals__, inst.argval)
        return None if source is None else (fn.__globals__[inst.argval], source)
    if inst.opname == "LOAD_DEREF" and inst.argval in cells:
        cell = cells[inst.argval]
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: a NameError when read, nothing to guard
            return None
        return value, AttrSource(HeldObjectSource(f"cell {inst.argval} of {fn.__qualname__}", id(cell), cell), "cell_contents")
    return None


def _static_attribute(owner: Any, source: Any, name: str) -> tuple[Any, Any] | None:
    """`owner.name` (`config.SCALE`, `Defaults.EPS`, `settings.scale`) read without running a
    descriptor or `__getattr__`; None where a plain read is not what Python would do."""
    plain = isinstance(owner, (types.ModuleType, type)) or (
        type(owner).__getattribute__ is object.__getattribute__ and not hasattr(type(owner), "__getattr__")
    )
    if not plain:
        return None
    try:
        value = inspect.getattr_static(owner, name)
    except AttributeError:
        return None
    return value, AttrSource(source, name)


def _instructions(code: types.CodeType):
    """`code`'s instructions and those of the code nested in it (3.11's comprehensions)."""
    yield from dis.get_instructions(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _instructions(const)


def _fakes(args: Iterable[Value], kwargs: dict[str, Value]) -> list[torch.Tensor]:
    """The fake tensors in these values (inside tuples and lists too)."""
    leaves = tree_leaves(([a.as_fake() for a in args], {k: v.as_fake() for k, v in kwargs.items()}))
    return [t for t in leaves if isinstance(t, torch.Tensor)]


# --- torch.autograd.backward and torch.autograd.grad ------------------------------------------


@rule(torch.autograd.backward)
def _autograd_backward(frame: Frame, args: list[Value], kwargs: dict[str, Value]) -> Value:
    # As Tensor.backward(): it writes the leaves' .grad, which a graph (its inputs' values
    # traced as detached aliases by aot_autograd) cannot hold.
    raise Unsupported(
        "torch.autograd.backward() runs autograd into the leaves' .grad, which cannot be part of a graph",
        hint="the graph breaks here and the call runs outside it",
    )

_GRAD_SIGNATURE = inspect.signature(torch.autograd.grad)


class GradientsConsumedByOutputs(CaptureError):
    """The graph hands on a tensor whose history a `torch.autograd.grad` it ran has freed:
    capture the function again with every such call breaking the graph (runtime.cache)."""


@rule(torch.autograd.grad)
def _autograd_grad(frame: Frame, args: list[Value], kwargs: dict[str, Value]) -> Value:
    session = frame.session
    if session.breaks_at_autograd_grad:
        raise Unsupported(
            "torch.autograd.grad frees the autograd graph it walks, and the function hands on a tensor "
            "computed through that graph (whose backward eager then refuses)",
            hint="the graph breaks here and the call runs eagerly on the real autograd graph; "
            "pass retain_graph=True (or return no tensor computed before the call) to keep one graph",
        )
    bound = _GRAD_SIGNATURE.bind(*args, **kwargs).arguments
    walked = set() if _retains_graph(bound) else walked_nodes(_fakes([bound["outputs"]], {}), _fakes([bound["inputs"]], {}))
    functions_saving = {node for node in walked if _function_saving_tensors(node)}
    result = session.graph.call_function(frame, torch.autograd.grad, args, kwargs)
    session.freed_grad_fns |= {node for node in walked if node in functions_saving or _lost_saved_tensors(node)}
    return result


def _retains_graph(bound: dict[str, Value]) -> bool:
    """`retain_graph` (default: `create_graph`), False unless known to be on."""
    retain = bound.get("retain_graph")
    if retain is None or (retain.is_python_constant() and retain.as_python_constant() is None):
        retain = bound.get("create_graph")
    return retain is not None and retain.is_python_constant() and bool(retain.as_python_constant())


def walked_nodes(outputs: list[torch.Tensor], inputs: list[torch.Tensor]) -> set:
    """The autograd nodes `torch.autograd.grad(outputs, inputs)` runs (freeing their saved
    tensors, without `retain_graph`): those on a path from an output to an input's gradient edge
    (the engine runs no others, and stops at the inputs' own nodes)."""
    stops = {torch.autograd.graph.get_gradient_edge(t).node for t in inputs if t.requires_grad}
    reaches: dict[Any, bool] = {}
    pending = [(t.grad_fn, False) for t in outputs if t.grad_fn is not None]
    while pending:  # depth first, children before their parent (graphs can be deep)
        node, children_done = pending.pop()
        if children_done:
            reaches[node] = any(reaches.get(child, False) for child, _ in node.next_functions if child is not None)
            continue
        if node in reaches:
            continue
        if node in stops:
            reaches[node] = True
            continue
        reaches[node] = False
        pending.append((node, True))
        pending.extend((child, False) for child, _ in node.next_functions if child is not None and child not in reaches)
    return {node for node, reached in reaches.items() if reached and node not in stops}


def _function_saving_tensors(node) -> bool:
    """A custom autograd.Function's node that saved tensors (after the walk, asking raises
    whether it saved any or not)."""
    return isinstance(node, torch.autograd.function.BackwardCFunction) and len(node._raw_saved_tensors) > 0


def _lost_saved_tensors(node) -> bool:
    """A built-in node whose saved tensors the walk freed: reading one raises. Nodes saving
    none (SumBackward0 keeps only sizes) still work, in eager and in a backend's trace alike."""
    if isinstance(node, torch.autograd.function.BackwardCFunction):
        return False
    for name in dir(node):
        if name.startswith("_saved_"):
            try:
                getattr(node, name)
            except RuntimeError:
                return True
    return False


def refuse_outputs_through_freed_graph(freed: set, outputs: list[Value]) -> None:
    """Raise GradientsConsumedByOutputs if a tensor the graph hands on (returns, writes
    somewhere, passes to a resume function) has a history through `freed`: differentiating
    it, a backend would meet the freed tensors."""
    if not freed:
        return
    seen: set = set()
    pending = [v.fake.grad_fn for v in outputs if isinstance(v, TensorValue) and v.fake.grad_fn is not None]
    while pending:
        node = pending.pop()
        if node in freed:
            raise GradientsConsumedByOutputs(
                "the function hands on (returns or stores) a tensor computed through an autograd graph a "
                "torch.autograd.grad call in it frees; pass retain_graph=True to that call"
            )
        if node in seen:
            continue
        seen.add(node)
        pending.extend(child for child, _ in node.next_functions if child is not None)
