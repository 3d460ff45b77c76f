"""Autograd run by the captured code itself: `MyFunction.apply(...)` of a custom
torch.autograd.Function, `torch.autograd.grad(...)` and `torch.autograd.backward(...)`.

The first two are recorded as single calls. A Function's methods run natively, never
interpreted: what they read or change outside themselves is scanned first (function_bodies.py:
reads guarded, side effects and unguardable reads break the graph around the call). A backend
that differentiates the graph (aot_autograd) then traces what autograd would do on fake tensors;
two things it cannot do are found here, while capturing, so that the graph breaks there
instead:

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

A Function returning its input or a view of it stays in the graph: autograd hands back a view
with the Function's backward (aot_autograd returns that output as the graph computes it, not
rebuilt from the input: its functionalization/output_histories.py), or, returning the input
itself where no gradient is recorded (grad mode off, or the output marked non-differentiable)
and the input requires grad, a detached alias of it, which the call's target makes explicit for
a backend tracing it on fakes that do not require grad (`AutogradFunctionApply.detached`).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Iterable

import torch
from torch.utils._pytree import tree_flatten, tree_leaves, tree_unflatten

from ..errors import CaptureError, Unsupported
from ..values.base import Value
from ..values.tensor import TensorValue
from .function_bodies import scan_function_class
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
        # Positions among the result's leaves of inputs handed back detached (_detached_inputs).
        self.detached: frozenset[int] = frozenset()

    def __call__(self, *args, **kwargs):
        result = self.function_class.apply(*args, **kwargs)
        if not self.detached:
            return result
        leaves, spec = tree_flatten(result)
        return tree_unflatten([leaf.detach() if i in self.detached else leaf for i, leaf in enumerate(leaves)], spec)


def record_function_apply(frame: Frame, function_class: type, args: list[Value], kwargs: dict[str, Value]) -> Value:
    scan_function_class(frame.session, function_class, [_python_type(a) for a in args])  # before it runs on fakes
    target = AutogradFunctionApply(function_class)
    result = frame.session.graph.call_function(frame, target, args, kwargs)
    target.detached = _detached_inputs(_fakes(args, kwargs), tree_leaves(result.as_fake()))
    _try_backward(frame, function_class, _fakes(args, kwargs), _fakes([result], {}))
    return result


def _python_type(value: Value) -> type:
    try:
        return value.python_type()
    except Unsupported:
        return object  # unknown: scanned as an object the forward must not change


def _detached_inputs(inputs: list[torch.Tensor], leaves: list[Any]) -> frozenset[int]:
    """Positions among `leaves` (the result on the capture's fakes, which require grad as the
    real values do) of inputs the Function handed back detached: a Function returning an input
    (marked dirty or not) with no gradient recorded (grad mode off, or the output marked
    non-differentiable) gives a detached alias of it where the input requires grad (a view of
    it, or the input, otherwise, as when recorded). A backend tracing the call on fakes that do not require
    grad (aot_autograd's inference trace) would get a view, which a compiled graph hands back
    requiring grad, rebuilt from the input: the call detaches these itself."""
    return frozenset(
        i for i, out in enumerate(leaves)
        if isinstance(out, torch.Tensor) and not out.requires_grad and not out._is_view()
        and any(t.requires_grad and out is not t and _same_storage(out, t) for t in inputs)
    )


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return a.untyped_storage()._cdata == b.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError):  # no storage to compare (sparse, nested)
        return False


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
