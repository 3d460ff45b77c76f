"""`aot_module_simplified`: an FX graph in, a callable running compiled ATen graphs out.

For each way the graph is called (grad mode, and which inputs require grad) a plan is made,
on first need:

1. trace the forward on fakes and functionalize it, to learn which inputs it writes, which
   outputs alias inputs or each other, and which outputs carry gradients;
2. training (some output carries a gradient: grad mode on, or turned on by the graph itself):
   trace the joint forward+backward graph in the caller's grad mode, functionalize it,
   partition it into forward and backward graphs, compile the forward now and the backward
   on first use (runtime.training); outputs viewing one tensor the graph made are rebuilt
   as views of it after the autograd.Function, which returns it too (intermediate_bases);
3. inference otherwise: the functional forward graph alone (runtime.inference).

The plan for the grad mode current at compile time is made at once, so that errors surface
when the backend is called rather than on the first run.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

import torch
import torch.fx as fx
from fake_tensor.mode_stacks import mode_stacks_restored_on_error
from torch.utils._pytree import tree_flatten, tree_unflatten

from .errors import AliasedInputWriteError, UnsupportedProgramError
from .functionalization import functionalize, outputs_with_their_own_history, write_inputs_before_output
from .functionalization.op_semantics import viewed_placeholder
from .functionalization.saved_inputs import clone_saved_views_of_mutated_inputs
from .graph_inputs import ModuleState, fake_inputs, fake_mode_of
from .intermediate_bases import IntermediateBases, reading_geometry_of_written_inputs_views
from .number_outputs import split_number_outputs
from .partitioners import default_partition
from .runtime import GraphEffects, InferencePlan, TrainingPlan, needs_grad_mode
from .runtime.compile_locks import compile_lock
from .runtime.replay import EagerReplay
from .synthetic_bases import merge_aliased_inputs
from .tracing.trace import trace_forward, trace_joint

Compiler = Callable[[fx.GraphModule, list], Callable]

# COMPILER_LOGS=aot_graphs (and compiler's report): the ATen graphs before and after partitioning.
aot_graphs_log = logging.getLogger("compiler.aot_graphs")


def aot_module_simplified(
    gm: fx.GraphModule,
    example_inputs: Sequence[Any],
    fw_compiler: Compiler,
    bw_compiler: Compiler | None = None,
    *,
    decompositions: Mapping[Any, Callable] | None = None,
    partition_fn: Callable | None = None,
    inference_compiler: Compiler | None = None,
    keep_input_mutations: bool = False,
) -> Callable:
    """`keep_input_mutations`: inference graphs end in `copy_` into each input they mutate
    (the compiler writes the new values in place) instead of returning the new values for the
    epilogue to copy back."""
    compilers = dict(
        fw_compiler=fw_compiler,
        bw_compiler=bw_compiler or fw_compiler,
        inference_compiler=inference_compiler or fw_compiler,
        decompositions=decompositions or {},
        partition_fn=partition_fn or default_partition,
        keep_input_mutations=keep_input_mutations,
    )
    numbers = split_number_outputs(gm, example_inputs)
    if numbers is not None:
        return numbers.calling(aot_module_simplified(numbers.tensor_graph, example_inputs, **compilers))
    compiled = AotCompiledGraph(gm, example_inputs, **compilers)
    try:
        compiled.plan_for([*compiled.state.tensors, *example_inputs])
    except AliasedInputWriteError:
        merged = merge_aliased_inputs(gm, example_inputs)
        if merged is None:
            raise
        inner = AotCompiledGraph(merged.graph_module, merged.example_inputs, **compilers)
        inner.plan_for([*inner.state.tensors, *merged.example_inputs])
        return merged.calling(inner)
    return compiled


class AotCompiledGraph:
    def __init__(self, gm, example_inputs, *, fw_compiler, bw_compiler, inference_compiler, decompositions, partition_fn,
                 keep_input_mutations=False):
        self.gm = gm
        self.keep_input_mutations = keep_input_mutations
        self.state = ModuleState(gm)
        self.fw_compiler = fw_compiler
        self.bw_compiler = bw_compiler
        self.inference_compiler = inference_compiler
        self.decompositions = decompositions
        self.partition_fn = partition_fn
        self.fake_mode = fake_mode_of(gm)
        self.fakes = fake_inputs(gm, self.state, example_inputs, self.fake_mode)
        self._plans: dict[tuple[bool, ...] | None, TrainingPlan | InferencePlan] = {}
        # `with torch.enable_grad():` inside a graph called with grad mode off: outputs computed
        # in that block carry gradients, so the inputs' requires_grad picks the plan then too.
        self._enables_grad = any(
            node.args == (True,) for node in gm.graph.find_nodes(op="call_function", target=torch._C._set_grad_enabled)
        )
        # `torch.autograd.grad` inside the graph: it needs the inputs' requires_grad and grad
        # mode while traced, even where no output carries a gradient (the inference plan).
        self._takes_gradients = bool(gm.graph.find_nodes(op="call_function", target=torch.autograd.grad))
        self._output_spec = None
        # The spec when the module returns a flat tuple (of tensors, numbers, None): its
        # outputs are then `tuple(outputs)`, without tree_unflatten's walk (~6 us for 25 outputs).
        self._flat_tuple_spec = None
        # What a plan whose forward raised having written no input calls with the inputs, the
        # random state restored (runtime/replay.py): None runs the captured graph eagerly. A
        # caller may set it, to run more than the graph eagerly (capture: its segment's code).
        self.eager_replay: Callable | None = None
        # Plans are made on first need, possibly by several threads calling at once: tracing
        # swaps fakes into `gm`'s attributes, so one plan is made at a time.
        self._plan_lock = compile_lock()

    def __call__(self, *args):
        inputs = [*self.state.tensors, *args]
        outputs = self.plan_for(inputs)(inputs)
        spec = self._output_spec
        if spec is self._flat_tuple_spec:
            return tuple(outputs)
        return tree_unflatten(outputs, spec)

    # -- plans ------------------------------------------------------------------------------

    def plan_for(self, inputs: Sequence[Any]) -> TrainingPlan | InferencePlan:
        """The plan for these inputs in the current grad mode. Its key: None for inference,
        else (grad mode, *whether each input requires grad)."""
        key = None
        grad_enabled = torch.is_grad_enabled()
        if grad_enabled or self._enables_grad:
            requires_grad = tuple(isinstance(x, torch.Tensor) and x.requires_grad for x in inputs)
            if any(requires_grad):
                key = (grad_enabled, *requires_grad)
        plan = self._plans.get(key)
        if plan is None:
            # An interrupt mid-compile must not leave a tracing mode on (fake_tensor.mode_stacks).
            with self._plan_lock, mode_stacks_restored_on_error():
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._plans[key] = self._make_plan(key)
        return plan

    def _make_plan(self, key: tuple[bool, ...] | None) -> TrainingPlan | InferencePlan:
        if key is None:
            return self._inference_plan()
        grad_enabled, *requires_grad = key
        fakes = [_with_requires_grad(f, r, self.fake_mode) for f, r in zip(self.fakes, requires_grad)]
        # Decompositions change no metadata; this trace only informs the plan.
        graph, outputs, traced_inputs, rewritten = trace_forward(self._run_module, fakes, fake_mode=self.fake_mode)
        analysed = functionalize(graph)
        effects = GraphEffects(analysed.mutated_inputs, analysed.output_aliases)
        _check_effects(effects, fakes)
        own_history = outputs_with_their_own_history(outputs, traced_inputs, effects.output_aliases, grad_enabled)
        effects = _returned_as_computed(effects, own_history)
        effects = reading_geometry_of_written_inputs_views(effects, fakes, outputs, traced_inputs)
        bases = IntermediateBases.of(fakes, outputs, effects)
        effects = bases.rebuilding(effects)
        run = bases.returned_by(self._run_module)

        def graph_outputs(inputs, outputs):
            """The values the functional graph returns: new values of mutated inputs first,
            the outputs, then the bases of outputs rebuilt as their views."""
            return [*(inputs[m] for m in effects.mutated_inputs), *outputs]

        values = graph_outputs(traced_inputs, [*outputs, *bases.bases(outputs)])
        # An input written with grad mode off (an optimizer's parameter update) keeps its
        # autograd history: no gradient flows through its new value.
        written_without_grad = {
            i for i, index in enumerate(effects.mutated_inputs) if index not in rewritten
        }
        differentiable = [
            i for i, value in enumerate(values)
            if i not in effects.regenerated and i not in written_without_grad and _carries_gradient(value)
        ]
        if not differentiable:
            return self._inference_plan(fakes if self._takes_gradients else None, grad_enabled, own_history)
        with self.fake_mode:
            tangents = [torch.empty(values[i].shape, dtype=values[i].dtype, device=values[i].device) for i in differentiable]
        joint, tangents = trace_joint(
            run,
            fakes,
            tangents,
            lambda inputs, outputs: [graph_outputs(inputs, outputs)[i] for i in differentiable],
            grad_enabled=grad_enabled,
            fake_mode=self.fake_mode,
            decompositions=self.decompositions,
        )
        functional = functionalize(joint, alias_checked_outputs=len(outputs))
        if functional.mutated_inputs != effects.mutated_inputs:
            raise UnsupportedProgramError(
                "writes into its inputs differently when gradients are computed",
                "Avoid in-place ops on inputs in code that runs only in the backward.",
            )
        num_outputs = len(values)
        forward_graph, backward_graph = self.partition_fn(
            functional.graph_module, [*fakes, *tangents], num_fwd_outputs=num_outputs
        )
        clone_saved_views_of_mutated_inputs(forward_graph, num_outputs, effects.mutated_inputs)
        if aot_graphs_log.isEnabledFor(logging.DEBUG):
            aot_graphs_log.debug("joint graph (before partitioning):\n%s", functional.graph_module.code)
            aot_graphs_log.debug("forward graph (after partitioning):\n%s", forward_graph.code)
            aot_graphs_log.debug("backward graph (after partitioning):\n%s", backward_graph.code)
        if self.keep_input_mutations:
            forward_graph, effects, num_outputs, differentiable = _write_untracked_inputs_in_forward(
                forward_graph, effects, fakes, values, num_outputs, differentiable
            )
        in_grad_mode = needs_grad_mode(forward_graph)
        forward = self.fw_compiler(forward_graph, _placeholder_values(forward_graph))
        plan = TrainingPlan(
            forward, backward_graph, self.bw_compiler, effects, num_outputs, differentiable, grad_enabled, in_grad_mode,
            saved_views=_saved_views_of_inputs(forward_graph, num_outputs),
        )
        return self._replayed_on_error(plan, forward_graph)

    def _inference_plan(self, fakes: list | None = None, grad_enabled: bool = False,
                        own_history: frozenset[int] = frozenset()) -> InferencePlan:
        """`fakes` (with their requires_grad) and `grad_enabled` for a graph that takes
        gradients itself; by default no input requires grad, and grad mode is off.
        `own_history`: outputs returned as computed, not rebuilt as views (a training trace
        found that no output carries a gradient, these included)."""
        if fakes is None:
            fakes = [_with_requires_grad(f, False, self.fake_mode) for f in self.fakes]
        with torch.set_grad_enabled(grad_enabled):
            graph, outputs, traced_inputs, _ = trace_forward(self._run_module, fakes, fake_mode=self.fake_mode,
                                                             decompositions=self.decompositions)
        functional = functionalize(graph)
        effects = _returned_as_computed(GraphEffects(functional.mutated_inputs, functional.output_aliases), own_history)
        effects = reading_geometry_of_written_inputs_views(effects, fakes, outputs, traced_inputs)
        _check_effects(effects, fakes)
        graph_module = functional.graph_module
        if self.keep_input_mutations and effects.mutated_inputs:
            graph_module, effects, _ = _write_inputs_in_graph(graph_module, effects, range(len(effects.mutated_inputs)))
        if aot_graphs_log.isEnabledFor(logging.DEBUG):
            aot_graphs_log.debug("inference graph:\n%s", graph_module.code)
        forward = self.inference_compiler(graph_module, _placeholder_values(graph_module))
        return self._replayed_on_error(InferencePlan(forward, effects), graph_module)

    def _replayed_on_error(self, plan: TrainingPlan | InferencePlan, graph: fx.GraphModule):
        """`plan`, replaying the capture graph eagerly when its forward raises having written
        none of its inputs (runtime/replay.py); a plan that writes none at all replays only
        where a caller set `eager_replay` (set after the first plan is made: checked per call).
        A forward that may have written inputs before it raised replays only for such a caller,
        its written inputs put back first: copying them at each call is a cost paid only where
        more than the graph would be lost (capture: the Python side effects of its segment)."""
        if _inputs_unwritten_on_error(plan):
            writes = bool(plan.effects.mutated_inputs or plan.effects.written_in_graph)
            plan.on_error = EagerReplay(self._replay, graph.graph, lambda: writes or self.eager_replay is not None)
        else:
            plan.on_error = EagerReplay(self._replay, graph.graph, lambda: self.eager_replay is not None,
                                        restored=plan.effects.written_in_graph)
        return plan

    def _replay(self, *inputs) -> None:
        (self.eager_replay or self._run_module)(*inputs)

    def _run_module(self, *inputs) -> list:
        count = len(self.state.tensors)
        with self.state.swapped(inputs[:count]):
            # forward(), not a call: torch's global module hooks must not see the graph module.
            result = self.gm.forward(*inputs[count:])
        outputs, spec = tree_flatten(result)
        self._output_spec = spec
        if spec.type is tuple and all(child.is_leaf() for child in spec.children()):
            self._flat_tuple_spec = spec
        return outputs


def _returned_as_computed(effects: GraphEffects, positions: frozenset[int]) -> GraphEffects:
    """`effects` handing back the outputs at `positions` as the graph computes them (the views
    the training Function returns: not detached), not rebuilt as views after it
    (functionalization/output_histories.py)."""
    if not positions:
        return effects
    aliases = [None if j in positions else alias for j, alias in enumerate(effects.output_aliases)]
    return replace(effects, output_aliases=aliases, kept_views=effects.kept_views | positions)


def _write_untracked_inputs_in_forward(forward_graph, effects, fakes, values, num_outputs, differentiable):
    """A training forward writing in place the mutated inputs that carry no gradient, neither
    the input nor its new value (a BatchNorm's running stats): one store in the kernel computing
    the value instead of an output the epilogue copies back (a copy launch per buffer per step).
    The plan's output positions after the new values shift down by as many."""
    untracked = [
        i for i, index in enumerate(effects.mutated_inputs)
        if i not in differentiable and not fakes[index].requires_grad and not values[i].requires_grad
    ]
    forward_graph, effects, kept = _write_inputs_in_graph(forward_graph, effects, untracked)
    if not kept:
        return forward_graph, effects, num_outputs, differentiable
    differentiable = [i - sum(k < i for k in kept) for i in differentiable]
    return forward_graph, effects, num_outputs - len(kept), differentiable


def _write_inputs_in_graph(graph_module: fx.GraphModule, effects: GraphEffects, positions) -> tuple:
    """(graph, effects, positions kept): the new values at `positions` among the mutated
    inputs' written into the inputs by the graph itself, except where an output views the
    input with a symbolic geometry: the epilogue reads that view's place off the new value the
    graph returns (runtime/epilogue.py)."""
    viewed = {a.index for a in effects.output_aliases if a is not None and a.of == "input" and a.geometry is None}
    kept = [i for i in positions if effects.mutated_inputs[i] not in viewed]
    if not kept:
        return graph_module, effects, kept
    graph_module = write_inputs_before_output(graph_module, effects.mutated_inputs, kept)
    effects = replace(
        effects,
        mutated_inputs=[index for i, index in enumerate(effects.mutated_inputs) if i not in kept],
        written_in_graph=tuple(effects.mutated_inputs[i] for i in kept),
    )
    return graph_module, effects, kept


def _saved_views_of_inputs(forward_graph: fx.GraphModule, num_outputs: int) -> frozenset[int]:
    """Positions among the forward's saved values of those computed as views (or aliases) of
    its inputs."""
    saved = list(forward_graph.graph.output_node().args[0])[num_outputs:]
    return frozenset(k for k, node in enumerate(saved)
                     if isinstance(node, fx.Node) and node.op != "placeholder" and viewed_placeholder(node) is not None)


def _inputs_unwritten_on_error(plan: TrainingPlan | InferencePlan) -> bool:
    """Whether a forward that raises has written no input: the epilogue writes them after it,
    and a compiler asked to write them itself (keep_input_mutations) says whether it writes
    none before an op that may raise (`inputs_kept_on_error`)."""
    if plan.effects.written_in_graph:
        return bool(getattr(plan.forward, "inputs_kept_on_error", False))
    return True


def _with_requires_grad(value: Any, requires_grad: bool, fake_mode) -> Any:
    if not isinstance(value, torch.Tensor) or value.requires_grad == requires_grad:
        return value
    with fake_mode:
        return value.detach().requires_grad_(requires_grad)


def _carries_gradient(value: Any) -> bool:
    # A view with no grad_fn (one a custom Function marked non-differentiable) requires grad in
    # eager too, yet no gradient reaches anything through it.
    return (isinstance(value, torch.Tensor) and value.requires_grad and (value.is_floating_point() or value.is_complex())
            and not (value.grad_fn is None and value._is_view()))


def _placeholder_values(gm: fx.GraphModule) -> list:
    return [node.meta["val"] for node in gm.graph.find_nodes(op="placeholder")]


def _check_effects(effects: GraphEffects, inputs: Sequence[Any]) -> None:
    """Refuse the input mutations the epilogue could not replay faithfully. (Writes into an
    expanded tensor, input or not, are refused by the fake op that makes them:
    fake_tensor/memory_overlap.py.)"""
    # The functional graph treats inputs as independent values: a write into one input
    # that shares memory with another would not show through the other.
    storages = [x.untyped_storage() if isinstance(x, torch.Tensor) else None for x in inputs]
    for index in effects.mutated_inputs:
        if any(s is not None and s is storages[index] for i, s in enumerate(storages) if i != index):
            raise AliasedInputWriteError(
                f"writes in place into input {index}, which shares memory with another input, and "
                "these inputs cannot be read as views of one base (an input requires grad, or "
                "their dtypes or sizes differ or are symbolic)",
                "Pass tensors that do not overlap, or clone one of them before the call.",
            )
