"""The training path: compiled forward and backward graphs behind one autograd.Function.

The forward graph returns (*graph outputs, *saved tensors, *saved sizes); the Function saves
the tensors with `save_for_backward` and the sizes (Python ints at run time, SymInts in the
traced graphs) on `ctx`, and returns the graph outputs. Outputs that are rebuilt as views by
the epilogue are returned as None (autograd reaches their bases directly); outputs that do
not carry gradients are marked non-differentiable; other outputs that are views (of a tensor
that dies in the graph) are returned detached, so that autograd lets the caller write into
them. The backward graph is compiled the first time a gradient is asked for.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch
import torch.fx as fx
from fake_tensor.mode_stacks import mode_stacks_restored_on_error

from .replay import EagerReplay

from ..errors import DoubleBackwardError
from .autocast import without_autocast
from .compile_locks import compile_lock
from .epilogue import GraphEffects

Compiler = Callable[[fx.GraphModule, list], Callable]

# Kernels whose outputs depend on grad mode, not only on their arguments: mkldnn's LSTM layer
# (CPU `nn.LSTM`) returns the workspace its backward reads only while grad mode is on. The
# joint trace ran them with it on; an autograd.Function's forward runs with it off.
GRAD_MODE_KERNELS = frozenset({torch.ops.aten.mkldnn_rnn_layer.default})


def needs_grad_mode(graph: fx.GraphModule) -> bool:
    return any(node.target in GRAD_MODE_KERNELS for node in graph.graph.nodes)


@dataclass
class TrainingPlan:
    forward: Callable[..., Sequence[Any]]
    backward_graph: fx.GraphModule
    backward_compiler: Compiler
    effects: GraphEffects
    num_outputs: int  # graph outputs before the saved values
    differentiable: list[int]  # graph outputs whose gradients are the tangents, in order
    # Grad mode of the calls this plan serves; off, the graph turns it on itself part-way.
    grad_enabled: bool = True
    # The forward graph calls GRAD_MODE_KERNELS: it runs with grad mode on, on detached inputs.
    forward_in_grad_mode: bool = False
    # Positions among the saved tensors of views of inputs the forward makes (runtime: _saveable).
    saved_views: frozenset[int] = frozenset()
    num_saved_tensors: int = field(init=False)
    # Runs the graph eagerly when the forward raises having written no input (replay.py), or None.
    on_error: EagerReplay | None = field(default=None, init=False)
    _backward: Callable | None = field(default=None, init=False)
    # Backwards of several threads' calls may reach the first compile together.
    _backward_lock: threading.Lock = field(default_factory=compile_lock, init=False, repr=False)

    def __post_init__(self) -> None:
        placeholders = self.backward_graph.graph.find_nodes(op="placeholder")
        saved = placeholders[: len(placeholders) - len(self.differentiable)]
        self.num_saved_tensors = sum(isinstance(p.meta.get("val"), torch.Tensor) for p in saved)
        regenerated = set(self.effects.regenerated)
        self.views_returned = self.effects.views_returned
        self.non_differentiable = [
            i for i in range(self.num_outputs) if i not in regenerated and i not in self.differentiable
        ]
        self.tangents_reaching = _tangents_reaching_outputs(self.backward_graph, len(self.differentiable))

    def compiled_backward(self) -> Callable:
        if self._backward is None:
            with self._backward_lock, mode_stacks_restored_on_error():
                if self._backward is None:
                    placeholders = self.backward_graph.graph.find_nodes(op="placeholder")
                    self._backward = self.backward_compiler(self.backward_graph, [p.meta["val"] for p in placeholders])
        return self._backward

    def __call__(self, inputs: Sequence[Any]) -> list:
        call = _Call(self)
        replay = self.on_error
        snapshot = replay.snapshot(inputs) if replay is not None else None
        try:
            if self.grad_enabled:
                outputs = _CompiledFunction.apply(call, *inputs)
            else:
                # The graph turns grad mode on part-way; the Function records its outputs only
                # with it on. Those computed before (non-differentiable) stay without history.
                with torch.enable_grad():
                    outputs = _CompiledFunction.apply(call, *inputs)
        except Exception:
            if replay is not None:
                replay(inputs, snapshot)
            raise
        return self.effects.apply(inputs, outputs, call.raw)


class _Call:
    """One call's link between the wrapper and the Function: the plan in, and the graph's own
    values of the outputs the epilogue rebuilds as views out."""

    def __init__(self, plan: TrainingPlan):
        self.plan = plan
        self.raw: dict[int, Any] = {}


class _CompiledFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, call: _Call, *inputs):
        plan = call.plan
        with without_autocast():
            if plan.forward_in_grad_mode:
                with torch.enable_grad():
                    results = plan.forward(*(_detached(i) for i in inputs))
            else:
                results = plan.forward(*inputs)
        outputs = list(results[: plan.num_outputs])
        saved = results[plan.num_outputs :]
        ctx.plan = plan
        # Outputs the loss does not reach get no gradient (None, not zeros) so that, as in
        # eager, inputs reached only through them get none either (an optimizer skips those).
        ctx.set_materialize_grads(False)
        ctx.tangent_layouts = [(o.shape, o.dtype, o.device) for o in (outputs[i] for i in plan.differentiable)]
        ctx.save_for_backward(*_saveable(saved[: plan.num_saved_tensors], plan.saved_views))
        ctx.saved_sizes = saved[plan.num_saved_tensors :]
        for i in plan.effects.regenerated:
            call.raw[i] = outputs[i]
            outputs[i] = None
        for i, output in enumerate(outputs):
            if isinstance(output, torch.Tensor) and output._is_view() and i not in plan.views_returned:
                # A view of a tensor that dies in the graph (linear's 3-d result views its
                # addmm; or a compiler's layout): autograd refuses in-place ops on a view a
                # Function returns, which eager allows (intermediate_bases.py). `detach` keeps
                # the storage and version counter, so saved tensors still notice writes.
                outputs[i] = output.detach()
        ctx.mark_non_differentiable(*(o for i in plan.non_differentiable if isinstance(o := outputs[i], torch.Tensor)))
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        plan = ctx.plan
        # Tangents were traced contiguous; autograd may hand over any layout (an expanded
        # scalar from `.sum().backward()`), or None for an output the loss does not reach.
        tangents, missing = [], 0
        for k, i in enumerate(plan.differentiable):
            if grads[i] is None:
                missing |= 1 << k
                shape, dtype, device = ctx.tangent_layouts[k]
                tangents.append(torch.zeros(shape, dtype=dtype, device=device))
            else:
                tangents.append(grads[i].contiguous())
        # Read only where something was saved: autograd refuses the read once it has freed the
        # graph, and eager runs a second backward through a graph that saved no tensor.
        saved = ctx.saved_tensors if plan.num_saved_tensors else ()
        args = [*saved, *ctx.saved_sizes, *tangents]
        del saved
        del tangents
        if not torch._C._autograd._get_current_graph_task_keep_graph():
            # Autograd would drop the saved activations only after this returns; dropped now,
            # `args` holds the last reference and the backward can free each after its last use.
            ctx.maybe_clear_saved_tensors()
        backward = plan.compiled_backward()
        with without_autocast():
            if torch.is_grad_enabled():
                input_grads = _GradientsWithoutBackward.apply(backward, *args)
            else:
                input_grads = _call_boxed(backward, args)
        if missing:
            input_grads = [None if reaching and not reaching & ~missing else grad
                           for grad, reaching in zip(input_grads, plan.tangents_reaching)]
        return (None, *input_grads)


def _tangents_reaching_outputs(graph: fx.GraphModule, num_tangents: int) -> list[int]:
    """For each output of the backward graph (an input's gradient), the tangents it is
    computed from, as a bit set over their positions (the graph's last placeholders)."""
    placeholders = graph.graph.find_nodes(op="placeholder")
    first_tangent = len(placeholders) - num_tangents
    reaching: dict[fx.Node, int] = {p: 1 << (k - first_tangent) if k >= first_tangent else 0
                                    for k, p in enumerate(placeholders)}
    for node in graph.graph.nodes:
        if node.op != "placeholder":
            reaching[node] = 0
            for used in node.all_input_nodes:
                reaching[node] |= reaching[used]
    outputs = graph.graph.output_node().args[0]
    return [reaching[out] if isinstance(out, fx.Node) else 0 for out in outputs]


def _saveable(saved, views):
    """The saved tensors, those at `views` (views of inputs the forward made: a weight's
    transpose, an alias a recomputation reads, partitioners/min_cut.py) detached: they keep the
    input's storage of this call after `weight.data = new`, as eager's saved views do, even where
    a compiler hands back the input object itself (an identity view). The version counter
    stays, so a later write into the weight makes the backward raise eager's 'modified by an
    inplace operation' (saved as views made under no_grad, autograd raised 'A view was created
    in no_grad mode' instead)."""
    return [t.detach() if k in views else t for k, t in enumerate(saved)]


def _detached(value):
    """A tensor input without its history (writes into it still reach the caller's tensor), so
    that ops run with grad mode on record nothing."""
    return value.detach() if isinstance(value, torch.Tensor) and value.requires_grad else value


def _call_boxed(compiled: Callable, args: list):
    """A compiled graph with `call_boxed` (inductor's) takes the list itself and empties it, so
    that an argument dies at its last use in the graph; any other callable gets them spread."""
    boxed = getattr(compiled, "call_boxed", None)
    return boxed(args) if boxed is not None else compiled(*args)


class _GradientsWithoutBackward(torch.autograd.Function):
    """Runs the compiled backward under `create_graph=True`: its results carry a node whose
    own backward raises, since the backward graph has no backward of its own."""

    @staticmethod
    def forward(ctx, backward, *args):
        return tuple(backward(*args))

    @staticmethod
    def backward(ctx, *grads):
        raise DoubleBackwardError()
