"""Tracing a function to ATen: its forward alone, or forward and backward as one graph.

Both run `fn` on fake tensors under an `AtenRecorder`. The joint trace also calls
`torch.autograd.grad` inside the recorder, so the backward formulas' ATen ops land in the
same graph after the forward's, reading the tangents (the gradients of the outputs) from
placeholders of their own. Placeholders are named `primals_<i>` and `tangents_<i>`.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx
import torch.utils._python_dispatch
from torch.overrides import TorchFunctionMode

from .recorder import AtenRecorder, Decompositions
from .tensor_data import SymbolicTensorData


class NativeDropout(TorchFunctionMode):
    """Training-mode dropout traced as `native_dropout`, as CUDA's kernel (and torch's Python
    dispatcher) route it. On CPU, dropout is otherwise a composite of bernoulli, div and mul, and
    its backward reads the float mask (4 bytes an element); native_dropout's reads a bool one.
    Both draw the same numbers under one seed (bernoulli over the input's shape)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.nn.functional.dropout, torch.dropout):
            names = ("input", "p", "training" if func is torch.nn.functional.dropout else "train", "inplace")
            bound = {**dict(zip(names, args)), **kwargs}
            x, p = bound["input"], bound.get("p", 0.5)
            training = bound.get("training", bound.get("train", True))
            if training and not bound.get("inplace", False) and 0 < p < 1 and x.dtype.is_floating_point:
                return torch.native_dropout(x, p, True)[0]
        return func(*args, **kwargs)


class OneHotChecks(TorchFunctionMode):
    """one_hot's checks of its classes, as ATen checks ahead of the ops tracing records.

    Eager's kernel raises for a class below 0 or not below num_classes; on fake tensors the
    kernel takes its functional path (eq against an arange) with no check, and torch's
    Python-dispatcher decomposition that adds them runs only at symbolic sizes: a compiled
    one_hot(arange(5), 4) returned a row of zeros. The checks are `_assert_async`, kept by
    dead-code removal (functionalization.dead_code), with eager's messages, in eager's order."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.nn.functional.one_hot:
            bound = {**dict(zip(("input", "num_classes"), args)), **kwargs}
            x, classes = bound["input"], bound.get("num_classes", -1)
            if isinstance(x, torch.Tensor) and x.dtype == torch.int64:  # else eager's own error
                torch._assert_async(torch.all(x >= 0), "Class values must be non-negative.")
                if classes != -1:  # -1: as many classes as the largest value needs
                    torch._assert_async(torch.all(x < classes), "Class values must be smaller than num_classes.")
        return func(*args, **kwargs)


def _traced_inputs(values: Sequence[Any], fake_mode) -> tuple[list, list]:
    """(leaves, what the function is called with) for the graph inputs.

    Each tensor input is given as a fresh alias (`detach()`), so that tracing never changes
    the caller's fakes (an in-place op can make a tensor require grad). One that requires
    grad is a leaf, and the function gets a non-leaf copy of it: the function may write into
    it (as it may into a non-leaf real input) while gradients are taken with respect to the
    leaf. Both are made outside the recorder, so they are not part of the graph.
    """
    leaves, traced = [], []
    with fake_mode, torch.enable_grad():
        for value in values:
            if isinstance(value, torch.Tensor):
                leaf = value.detach().requires_grad_(value.requires_grad)
                leaves.append(leaf)
                traced.append(_copy_with_history(leaf) if value.requires_grad else leaf)
            else:
                leaves.append(value)
                traced.append(value)
    return leaves, traced


def _copy_with_history(leaf: torch.Tensor) -> torch.Tensor:
    """A copy of `leaf` computed from it (for autograd), with its strides: `clone()` makes a
    non-dense tensor contiguous, and code that tests contiguity (ravel's `contiguous().view`)
    would trace another program than the one the real strided input runs. An expanded leaf
    gets a view instead: no copy has its strides (copying into memory where elements repeat
    is refused, on fakes as in eager), and nothing writes into it (eager refuses such writes,
    or capture runs them outside the graph: fake_tensor's memory_overlap.py), so a view
    serves, and gives each of its elements its own gradient as eager does."""
    if any(stride == 0 and size > 1 for size, stride in zip(leaf.shape, leaf.stride())):
        return leaf.view(leaf.shape)
    copy = leaf.clone()
    if copy.stride() != leaf.stride():
        copy = torch.empty_strided(leaf.shape, leaf.stride(), dtype=leaf.dtype, device=leaf.device).copy_(leaf)
    return copy


def trace_forward(
    fn: Callable[..., list],
    inputs: Sequence[Any],
    *,
    fake_mode,
    decompositions: Decompositions | None = None,
) -> tuple[fx.GraphModule, list, list]:
    """(graph of `fn`, its fake outputs, the values `fn` was called with, the positions of
    those whose autograd history `fn` changed: inputs written in place with grad mode on)."""
    recorder = AtenRecorder(decompositions, fake_mode.from_real)
    _, traced_inputs = _traced_inputs(inputs, fake_mode)
    history = [getattr(value, "grad_fn", None) for value in traced_inputs]
    for index, value in enumerate(traced_inputs):
        recorder.placeholder(f"primals_{index + 1}", value)
    # SymbolicTensorData before NativeDropout: see tensor_data.py.
    with fake_mode, recorder, SymbolicTensorData(), NativeDropout(), OneHotChecks(), _runtime_asserts(recorder, fake_mode):
        outputs = fn(*traced_inputs)
    recorder.output(outputs)
    rewritten = {i for i, value in enumerate(traced_inputs) if getattr(value, "grad_fn", None) is not history[i]}
    return recorder.graph_module(), outputs, traced_inputs, rewritten


def trace_joint(
    fn: Callable[..., list],
    primals: Sequence[Any],
    tangents: Sequence[torch.Tensor],
    differentiable: Callable[[list, list], list[torch.Tensor]],
    *,
    grad_enabled: bool = True,
    fake_mode,
    decompositions: Decompositions | None = None,
) -> fx.GraphModule:
    """The graph returning (*outputs of `fn`, *gradient of each primal or None), and the
    tangents it takes (`tangents`, or fakes sized as this trace's outputs where they differ).

    `differentiable(inputs, outputs)` picks the tensors the tangents are the gradients of,
    in the order of `tangents`. `fn` runs in grad mode `grad_enabled`: off, only what it
    computes after turning grad mode on itself has gradients.
    """
    recorder = AtenRecorder(decompositions, fake_mode.from_real)
    leaves, traced_inputs = _traced_inputs(primals, fake_mode)
    for index, value in enumerate(traced_inputs):
        recorder.placeholder(f"primals_{index + 1}", value)
    needs_grad = [isinstance(p, torch.Tensor) and p.requires_grad for p in primals]
    wrt = [leaf for leaf, needed in zip(leaves, needs_grad) if needed]
    with (fake_mode, recorder, torch.set_grad_enabled(grad_enabled), SymbolicTensorData(), NativeDropout(),
          OneHotChecks(), _runtime_asserts(recorder, fake_mode)):
        outputs = fn(*traced_inputs)
        targets = differentiable(traced_inputs, outputs)
        tangents = _tangents_for(targets, tangents, fake_mode)
        first_op = next((n for n in recorder.graph.nodes if n.op != "placeholder"), None)
        with recorder.graph.inserting_before(first_op):
            for index, value in enumerate(tangents):
                recorder.placeholder(f"tangents_{index + 1}", value)
        grads = iter(torch.autograd.grad(targets, wrt, tangents, allow_unused=True) if targets else [None] * len(wrt))
    input_grads = [next(grads) if needed else None for needed in needs_grad]
    recorder.output([*outputs, *input_grads])
    return recorder.graph_module(), tangents


@contextlib.contextmanager
def _runtime_asserts(recorder: AtenRecorder, fake_mode):
    """What the traced code assumed about data-dependent values (`torch._check(n >= 1)` on an
    `.item()`; the ShapeEnv's `runtime_asserts`) becomes `aten._assert_scalar` nodes, each
    before the first op recorded after it was assumed, so the compiled graph fails where
    eager would instead of computing on a false assumption."""
    env = fake_mode.shape_env
    if env is not None:
        recorder.watch_runtime_asserts(env.runtime_asserts)
    yield
    recorder.flush_runtime_asserts()


def _tangents_for(targets: list, tangents: Sequence[torch.Tensor], fake_mode) -> list[torch.Tensor]:
    """The tangents, sized as this trace's outputs. A data-dependent size (nonzero's row
    count) is a fresh unbacked symbol in every trace, so a tangent made from an earlier
    trace's output has another symbol than the output it is the gradient of."""
    fresh = list(tangents)
    for index, (target, tangent) in enumerate(zip(targets, tangents)):
        if not _same_sizes(target.shape, tangent.shape):
            with torch.utils._python_dispatch._disable_current_modes(), fake_mode:
                fresh[index] = torch.empty(target.shape, dtype=tangent.dtype, device=tangent.device)
    return fresh


def _same_sizes(a, b) -> bool:
    # Compared as expressions: `==` on symbolic sizes would ask the ShapeEnv (and guard).
    def expr(size):
        return size.node.expr if isinstance(size, torch.SymInt) else size

    return len(a) == len(b) and all(expr(x) == expr(y) for x, y in zip(a, b))
