"""`AtenRecorder`: a dispatch mode that writes every ATen call it sees into an FX graph.

Ops reach a `TorchDispatchMode` below autograd, so while the mode is active both the
forward ops of a function and the ops its backward formulas run (through
`torch.autograd.grad`) arrive here, one ATen overload at a time. Each call runs on the values
it was given (fake tensors when tracing for real) and is recorded with its arguments
replaced by the graph nodes that produced them. The graph is recorded as it ran: in-place
ops, views and `detach` included; `functionalization` removes them afterwards.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Mapping

import torch
import torch.fx as fx
from fake_tensor import OverlappingWriteError
from torch.utils._python_dispatch import TorchDispatchMode

from ..decompositions import NEVER_DECOMPOSED, required_decompositions
from ..errors import TracingError, UnsupportedProgramError, not_the_ops_failure
from ..functionalization.op_semantics import is_view, out_of_place_view, restrides_in_place_only
from .arguments import map_arguments
from .symbolic import SymbolicValues

aten = torch.ops.aten
Decompositions = Mapping[Any, Callable]


class AtenRecorder(TorchDispatchMode):
    """Records ATen calls on the tensors it tracks; `placeholder` makes a tensor tracked."""

    def __init__(
        self,
        decompositions: Decompositions | None = None,
        constant_to_trace_value: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ):
        super().__init__()
        self.graph = fx.Graph()
        self.decompositions = {**required_decompositions(), **dict(decompositions or {})}
        for op in NEVER_DECOMPOSED:
            self.decompositions.pop(op, None)
        # Turns a real tensor constant into the kind of value the trace runs on (a fake).
        self._constant_to_trace_value = constant_to_trace_value
        # id -> (tensor, node). The tensor is held so that its id cannot be reused by another
        # tensor while the trace lives.
        self._nodes: dict[int, tuple[torch.Tensor, fx.Node]] = {}
        self.constants: dict[str, torch.Tensor] = {}
        self._constant_trace_values: dict[int, torch.Tensor] = {}
        self._viewed: set[int] = set()  # ids of tracked tensors some view was taken of
        self.symbols = SymbolicValues(self.graph)
        self._assumptions: list = []  # the shape env's runtime_asserts, once watched
        self._asserted = 0  # how many of them have nodes

    # -- graph inputs and outputs ---------------------------------------------------------

    def placeholder(self, name: str, value: Any) -> fx.Node:
        node = self.graph.placeholder(name)
        node.meta["val"] = value
        if isinstance(value, torch.Tensor):
            self._nodes[id(value)] = (value, node)
        self.symbols.bind_input(node, value)
        return node

    def watch_runtime_asserts(self, assumptions: list) -> None:
        """Check, in the graph, each condition appended to `assumptions` (a ShapeEnv's
        `runtime_asserts`: what the traced code assumed of data-dependent values) from now on,
        before the next op is recorded: where eager's `torch._check(k + 4 <= n)` raises before
        `x[k:k + 4]` is read, the compiled graph must too, not after a kernel has read past
        the end of x."""
        self._assumptions, self._asserted = assumptions, len(assumptions)

    def flush_runtime_asserts(self) -> None:
        if len(self._assumptions) > self._asserted:
            new = self._assumptions[self._asserted :]
            self._asserted = len(self._assumptions)
            self._assert_at_runtime(new)

    def _assert_at_runtime(self, assumptions: list) -> None:
        """`aten._assert_scalar` nodes for conditions (fake_tensor Guards over the trace's
        symbols) that the graph must check when it runs."""
        for assumption in assumptions:
            condition = self.symbols.node_for_expr(assumption.expr)
            # The origin's frame is aot_autograd's own (it runs the captured graph): not named.
            message = (
                f"runtime assertion {assumption.expr} failed: the compiled graph assumed it of a "
                f"data-dependent value (a torch._check, or a kernel's own check)"
            )
            node = self.graph.call_function(torch.ops.aten._assert_scalar.default, (condition, message))
            node.meta["val"] = None

    def output(self, values: list) -> fx.Node:
        return self.graph.output(tuple(self._as_arg(v) for v in values))

    def node_of(self, tensor: torch.Tensor) -> fx.Node | None:
        entry = self._nodes.get(id(tensor))
        return entry[1] if entry is not None else None

    # -- recording ------------------------------------------------------------------------

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is aten.lift_fresh.default:
            # `torch.tensor(data)` makes its tensor from the data, then lifts it: eager gets a
            # new tensor on every call, but the trace's data tensor becomes a constant of the
            # graph, which a plain lift would hand out (and let the program mutate) call after
            # call. A copy keeps each call's tensor its own.
            func = aten.lift_fresh_copy.default
        self.flush_runtime_asserts()
        query = _METADATA_QUERIES.get(func)
        if query is not None:
            return _answer_metadata_query(func, query(args[0]))
        decomposed = self._decompose(func, args, kwargs)
        if decomposed is not NotImplemented:
            return decomposed
        node_args, node_kwargs = self._as_arg(args), self._as_arg(kwargs)
        run_args, run_kwargs = self._with_constants_as_trace_values((args, kwargs))
        view = out_of_place_view(func)
        if view is not None and node_args[0].op != "placeholder" and not (
                args[0].requires_grad and id(args[0]) in self._viewed):
            return self._in_place_view(func, view, run_args, run_kwargs, node_args, node_kwargs)
        restride_only = restrides_in_place_only(func, run_args)
        try:
            out = func(*run_args, **run_kwargs)
        except OverlappingWriteError as cause:  # eager writes in place; no functional graph computes the same
            raise UnsupportedProgramError(
                f"writes with {func} into memory that its arguments share ({cause.why})",
                "Clone the overlapping argument, or make the write outside the compiled function.",
            ) from cause
        except Exception as cause:  # every other failure of an op on fakes is reported the same way
            if not_the_ops_failure(func, cause):
                raise
            raise TracingError(func, cause) from cause
        node = self.graph.call_function(func, node_args, node_kwargs)
        node.meta["val"] = out
        if is_view(func):
            self._viewed.add(id(args[0]))
        if restride_only:
            node.meta["restride_only"] = True
        self._bind_outputs(node, out)
        return out

    def _in_place_view(self, func, view, args, kwargs, node_args, node_kwargs):
        """`x.squeeze_(0)` on a tensor the trace made (aten.linear's own kernel does it to the
        result for a 1-d input): the tensor object is from here on the view `x.squeeze(0)`,
        recorded as such, and x's node keeps a fake with its geometry from before. On a graph
        input, the caller's tensor would change shape, and on a tensor that requires grad and
        has views, autograd's backward of those views (traced here on fakes) goes wrong:
        both are recorded as they are, for functionalization to refuse."""
        tensor = args[0]
        before = self.node_of(tensor)
        before.meta["val"] = tensor.as_strided(tensor.size(), tensor.stride(), tensor.storage_offset())
        try:
            out = func(*args, **kwargs)
        except Exception as cause:  # noqa: BLE001  (reported as any op's failure)
            if not_the_ops_failure(func, cause):
                raise
            raise TracingError(func, cause) from cause
        node = self.graph.call_function(view, node_args, node_kwargs)
        node.meta["val"] = out
        self._nodes[id(tensor)] = (tensor, node)
        self.symbols.bind_output(node, out)
        return out

    def _decompose(self, func, args, kwargs):
        """Run `func` through a decomposition when one applies; NotImplemented otherwise.

        The mode is re-entered so that the ops a decomposition calls are recorded instead.
        """
        decomposition = self.decompositions.get(func)
        with self:
            if decomposition is not None:
                out = decomposition(*args, **kwargs)
                if out is not NotImplemented:
                    return out
            # A CompositeImplicitAutograd op reaches a dispatch mode only when it is called
            # below autograd (from inside another decomposition); its own decomposition is
            # what eager runs then too.
            return func.decompose(*args, **kwargs)

    def _bind_outputs(self, node: fx.Node, out: Any) -> None:
        if isinstance(out, torch.Tensor):
            self._track(out, node)
            self.symbols.bind_output(node, out)
        elif isinstance(out, (tuple, list)):
            for index, item in enumerate(out):
                if isinstance(item, torch.Tensor):
                    item_node = self.graph.call_function(operator.getitem, (node, index))
                    item_node.meta["val"] = item
                    self._track(item, item_node)
                    self.symbols.bind_output(item_node, item)
        else:
            self.symbols.bind_output(node, out)  # `.item()`: the node is the number

    def _track(self, tensor: torch.Tensor, node: fx.Node) -> None:
        # An in-place or out= op returns the tensor it wrote to, which keeps the node that
        # made it: functionalization reads the mutation off the op's schema instead.
        if id(tensor) not in self._nodes:
            self._nodes[id(tensor)] = (tensor, node)

    # -- mapping values to graph arguments ------------------------------------------------

    def _as_arg(self, value: Any) -> Any:
        def convert(leaf):
            if isinstance(leaf, torch.Tensor):
                return self._tensor_arg(leaf)
            if isinstance(leaf, torch.SymInt | torch.SymFloat | torch.SymBool):
                return self.symbols.node_for(leaf)
            return leaf

        return map_arguments(value, convert)

    def _tensor_arg(self, tensor: torch.Tensor) -> fx.Node:
        node = self.node_of(tensor)
        if node is not None:
            return node
        return self._lift_constant(tensor)

    def _lift_constant(self, tensor: torch.Tensor) -> fx.Node:
        """A tensor the trace did not make (a constant the function closed over) becomes an
        attribute of the traced module, read with `get_attr`."""
        name = f"_tensor_constant{len(self.constants)}"
        self.constants[name] = tensor
        node = self.graph.get_attr(name)
        trace_value = tensor
        if self._constant_to_trace_value is not None:
            trace_value = self._constant_to_trace_value(tensor)
            self._constant_trace_values[id(tensor)] = trace_value
        node.meta["val"] = trace_value
        self._nodes[id(tensor)] = (tensor, node)
        return node

    def _with_constants_as_trace_values(self, value: Any) -> Any:
        if not self._constant_trace_values:
            return value
        return map_arguments(
            value,
            lambda leaf: self._constant_trace_values.get(id(leaf), leaf) if isinstance(leaf, torch.Tensor) else leaf,
        )

    def graph_module(self, root: torch.nn.Module | None = None) -> fx.GraphModule:
        root = root if root is not None else torch.nn.Module()
        for name, tensor in self.constants.items():
            root.register_buffer(name, tensor)
        return fx.GraphModule(root, self.graph)


def _answer_metadata_query(func, answer):
    """C++ backward formulas (masked_select's) ask for sizes through the dispatcher and read
    the answer as plain ints. Static sizes are answered; symbolic ones would be specialized
    after capture chose its guards, so a later call of another size would reuse a wrong
    graph: refused instead."""
    values = answer if isinstance(answer, list) else [answer]
    if any(isinstance(v, torch.SymInt) and v.node.is_symbolic() for v in values):
        raise UnsupportedProgramError(
            f"differentiates an op whose backward formula reads symbolic sizes as plain ints ({func})",
            "Mark the dimensions involved static, or compute that part without gradients.",
        )
    return answer


_METADATA_QUERIES = {
    torch.ops.aten.size.default: lambda t: list(t.shape),
    torch.ops.aten.stride.default: lambda t: list(t.stride()),
    torch.ops.aten.storage_offset.default: lambda t: t.storage_offset(),
}
