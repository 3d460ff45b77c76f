"""`GraphBuilder`: the FX graph being recorded, and its inputs.

Every tensor operation met while tracing runs on fake tensors first (so its output's shape,
dtype, device and strides are known) and is then recorded as a node. Graph inputs are
placeholders whose `meta["example_value"]` is the fake tensor; each remembers the source it was
read from, which is how the compiled entry fetches the real value on later calls. Parameters
and buffers of modules are inputs like any other (the graph has no `get_attr` nodes), so
backends such as aot_autograd see them and compute their gradients.
"""

from __future__ import annotations

import operator
import re
import warnings
from dataclasses import dataclass
from typing import Any, Iterator

import torch
import torch.fx
from torch.utils.hooks import RemovableHandle

from fake_tensor import (
    ConstraintViolationError,
    DataDependentError,
    FakeTensorError,
    FakeTensorMode,
    OverlappingWriteError,
)
from guards import ConstantMatch, GuardError, HeldObjectSource, QueryResultSource, StorageOffsetSource
from guards.sources import has_literal_spelling

from .errors import MarkedDimensionError, Unsupported, UserException
from .values.base import Value
from .values.constant import ConstantValue
from .values.containers import ListValue, TupleValue
from .values.exceptions import ExceptionValue
from .values.symbolic import SymValue, contains_symbolic, is_symbolic
from .values.tensor import TensorValue


@dataclass
class GraphInput:
    source: Any
    value: Any  # the real object read at capture time
    node: torch.fx.Node


def placeholder_name(source) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", str(source)).strip("_")
    return name or "input"


class GraphBuilder:
    def __init__(self, fake_mode: FakeTensorMode, wrap):
        # `wrap(obj, source)` turns Python results (sizes, flags, dtypes) into values.
        self._wrap = wrap
        self.fx = torch.fx.Graph()
        self.fake_mode = fake_mode
        self.inputs: list[GraphInput] = []
        # Inputs by the id of their tensor, or (numbers) by their source.
        self._known_inputs: dict = {}
        self._first_op: torch.fx.Node | None = None

    # --- inputs -----------------------------------------------------------------------------
    def add_input(self, real: torch.Tensor, source, dynamic_dims=None) -> TensorValue:
        """A graph input for a real tensor read from `source` (symbolic in `dynamic_dims`);
        the same tensor reached by two paths is one input."""
        known = self._known_inputs.get(id(real))
        if known is not None:
            return known
        try:
            fake = self.fake_mode.from_real(real, dynamic_dims=dynamic_dims or None, source=source)
        except ConstraintViolationError as err:
            raise MarkedDimensionError(str(err)) from None
        node = self._placeholder(source)
        node.meta["example_value"] = fake
        self.inputs.append(GraphInput(source, real, node))
        value = TensorValue(node, fake, source=source, python_cls=type(real), real=real)
        self._known_inputs[id(real)] = value
        return value

    def add_number_input(self, real: int | float, source) -> SymValue:
        """A graph input for a Python int or float read from `source`, symbolic in the
        ShapeEnv (capture.values.changing_number); one input per source."""
        known = self._known_inputs.get(source)
        if known is not None:
            return known
        symbol = self.fake_mode.shape_env.scalar(real, source)
        node = self._placeholder(source)
        node.meta["example_value"] = symbol
        self.inputs.append(GraphInput(source, real, node))
        value = self._known_inputs[source] = SymValue(node, symbol, source=source)
        return value

    def _placeholder(self, source) -> torch.fx.Node:
        # Placeholders come before every operation, whenever the input is first read.
        if self._first_op is None:
            node = self.fx.placeholder(placeholder_name(source))
        else:
            with self.fx.inserting_before(self._first_op):
                node = self.fx.placeholder(placeholder_name(source))
        node.meta["source"] = source
        return node

    # --- operations ---------------------------------------------------------------------------
    def call_function(self, frame, target, args: list[Value], kwargs: dict[str, Value]) -> Value:
        return self._record(frame, "call_function", target, args, kwargs)

    def call_method(self, frame, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        return self._record(frame, "call_method", name, args, kwargs)

    def _record(self, frame, kind, target, args, kwargs) -> Value:
        fake_args = [as_fake(a) for a in args]
        fake_kwargs = {k: as_fake(v) for k, v in kwargs.items()}
        if isinstance(fake_kwargs.get("out"), torch.Tensor):
            self._refuse_resizing_an_input(kind, target, fake_args, fake_kwargs)
        _refuse_mask_write_needing_gradient(target, fake_args, fake_kwargs)
        env = self.fake_mode.shape_env
        if env is not None and frame is not None and (self.fake_mode.allow_scalar_outputs or self.fake_mode.allow_dynamic_output_shape_ops):
            # Unbacked symbols made here name the user's line (the Python stack has only ours).
            where = frame.location()
            with env.attributing_to(f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno} in {where.function}: {where.source_line}"):
                result = self._run_on_fakes(kind, target, fake_args, fake_kwargs)
        else:
            result = self._run_on_fakes(kind, target, fake_args, fake_kwargs)
        if isinstance(result, RemovableHandle):
            # A hook registered (torch.autograd.graph.register_multi_grad_hook, a grad_fn's
            # register_hook): on the fake tensors only, so the graph would drop it.
            name = _target_name(target)
            raise Unsupported(
                f"{name} registers a hook, which cannot be part of a graph",
                hint="the graph breaks here and the call runs outside it",
            )
        if result is not None and not _contains_tensor(result) and not contains_symbolic(result):
            # A metadata query (static sizes, flags, dtypes): its answer is a constant.
            # Operations that return None (`x[0] = v`) are kept for what they do, and
            # symbolic sizes need the node that computes them.
            if target in ("storage_offset", torch.Tensor.storage_offset):
                self._guard_storage_offsets(frame, fake_args[0])
            elif kind == "call_function" and frame is not None:
                _guard_state_query(frame, target, fake_args, fake_kwargs, result)
            return self.wrap_metadata(result)
        node = self._create_node(
            kind,
            target,
            tuple(as_node_arg(a) for a in args),
            {k: as_node_arg(v) for k, v in kwargs.items()},
        )
        if frame is not None:
            node.meta["stack"] = frame.user_stack()
        return self.wrap_result(node, result)

    def _refuse_resizing_an_input(self, kind, target, fake_args, fake_kwargs) -> None:
        """An op given `out=` a graph input (or a view of one) of another shape than its
        result resizes it. Eager's caller then sees the new size; a graph cannot change its
        input's size (aot_autograd copies values back into the input as it was), so the call
        runs outside the graph. Tried first on a stand-in, so the input's fake keeps its size."""
        out = fake_kwargs["out"]
        if not self._inputs_sharing_memory(out):
            return
        with self.fake_mode:
            stand_in = torch.empty_strided(out.shape, out.stride(), dtype=out.dtype, device=out.device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # eager's "an output with one or more elements was resized"
            self._run_on_fakes(kind, target, fake_args, {**fake_kwargs, "out": stand_in})
        if stand_in.shape != out.shape:
            name = _target_name(target)
            raise Unsupported(
                f"{name}(..., out=) resizes its out= tensor, a graph input of shape {tuple(out.shape)}, "
                f"to {tuple(stand_in.shape)}",
                hint="the graph breaks here and the call runs outside it; pass an out= tensor of the result's shape",
            )

    def _guard_storage_offsets(self, frame, fake: torch.Tensor) -> None:
        """Tensor guards leave storage offsets free (a kernel reads from the data pointer), so
        an answer that depends on them is guarded here: the offset of each input sharing
        `fake`'s memory, as a view's offset is its base's plus its own."""
        for node, value in self._inputs_sharing_memory(fake):
            offset = value.storage_offset()
            if type(offset) is int:
                frame.session.add_guard(ConstantMatch(StorageOffsetSource(node.meta["source"]), offset))

    def _inputs_sharing_memory(self, fake: torch.Tensor) -> list[tuple[torch.fx.Node, torch.Tensor]]:
        """The graph inputs (placeholder, example value) whose memory `fake` shares."""
        storage = fake.untyped_storage()._cdata
        return [(node, value) for node in self.fx.find_nodes(op="placeholder")
                if isinstance(value := node.meta.get("example_value"), torch.Tensor)
                and value.untyped_storage()._cdata == storage]

    def record_effect(self, target, *args) -> torch.fx.Node:
        """A node kept for what it does, not what it returns (grad mode, autocast)."""
        node = self._create_node("call_function", target, args, {})
        node.meta["effect"] = True
        return node

    def _create_node(self, kind, target, args, kwargs) -> torch.fx.Node:
        node = self.fx.create_node(kind, target, args, kwargs)
        if self._first_op is None:
            self._first_op = node
        return node

    def _run_on_fakes(self, kind, target, args, kwargs):
        name = _target_name(target)
        try:
            with self.fake_mode:
                if kind == "call_method":
                    return getattr(args[0], target)(*args[1:], **kwargs)
                return target(*args, **kwargs)
        except DataDependentError as err:
            raise Unsupported(
                f"{name} depends on the data of a tensor ({err})",
                hint="keep the computation in tensors, or move it outside the compiled function",
            ) from err
        except OverlappingWriteError as err:
            # The op runs on fakes; it is its in-place result a graph cannot reproduce.
            raise Unsupported(f"{name} runs only as eager runs it: {err}") from err
        except FakeTensorError as err:
            raise Unsupported(f"{name} cannot run on fake tensors: {err}") from err
        except (RuntimeError, TypeError, ValueError, IndexError) as err:
            # What eager would raise too (a shape mismatch, a bad argument): it is the user's
            # exception, and it travels through the traced program's own handlers.
            raise UserException(ExceptionValue.from_real(err)) from err

    # --- results --------------------------------------------------------------------------------
    def wrap_result(self, node: torch.fx.Node, result) -> Value:
        if isinstance(result, torch.Tensor):
            node.meta["example_value"] = result
            return TensorValue(node, result)
        if is_symbolic(result):
            node.meta["example_value"] = result
            return SymValue(node, result)
        if isinstance(result, (tuple, list)):
            node.meta["example_value"] = result
            items = []
            for i, item in enumerate(result):
                if _contains_tensor(item) or contains_symbolic(item):
                    getitem = self._create_node("call_function", operator.getitem, (node, i), {})
                    items.append(self.wrap_result(getitem, item))
                else:
                    items.append(self.wrap_metadata(item))
            if isinstance(result, list):
                return ListValue(items)
            return TupleValue(items, python_cls=type(result))
        if result is None:
            return ConstantValue(None)
        raise Unsupported(f"an operation returned {type(result).__name__}, which capture cannot track")

    def wrap_metadata(self, value) -> Value:
        """A Python value computed from fake tensors' metadata (sizes, dtypes, flags)."""
        return self._wrap(value, None)

    # --- finishing ------------------------------------------------------------------------------
    def set_output(self, values: list[Value]) -> None:
        self.fx.output(tuple(v.node for v in values))
        self._drop_unused_reads()

    def _drop_unused_reads(self) -> None:
        """Remove reads nobody used (`x.shape[1]` of a size that was only unpacked): they are
        pure, so nothing else could depend on them."""
        for node in reversed(list(self.fx.nodes)):
            pure = (node.op == "call_function" and node.target in (operator.getitem, getattr)) or (
                node.op == "call_method" and node.target in ("size", "stride", "dim")
            )
            if pure and not node.users:
                self.fx.erase_node(node)


def _contains_tensor(obj) -> bool:
    if isinstance(obj, torch.Tensor):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_contains_tensor(x) for x in obj)
    if isinstance(obj, dict):
        return any(_contains_tensor(x) for x in obj.values())
    return False


def graph_values_in(value: Value) -> Iterator[Value]:
    """The graph-computed tensors and symbolic sizes that rebuilding `value` needs."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, TensorValue):
            if v.node.op != "placeholder":
                yield v
            stack.extend(v.inner_values())  # the Python attributes set on it (`t.k = n`)
        elif isinstance(v, SymValue):
            if v.node.op != "placeholder":
                yield v
        else:
            stack.extend(v.inner_values())


def as_fake(value: Value):
    """The object an operation on fake tensors receives for `value`."""
    return value.as_fake()


def as_node_arg(value: Value):
    """What the FX node records for `value`: nodes for tensors, Python data otherwise."""
    return value.as_node_arg()


def _guard_state_query(frame, target, args: list, kwargs: dict, result) -> None:
    """A torch function given no tensor answers from process state or from its arguments
    alone (`torch.backends.cuda.flash_sdp_enabled()`, `torch.get_autocast_cpu_dtype()`):
    no tensor guard covers it, so the entry holds while the same call answers the same."""
    arguments = [*args, *kwargs.values()]
    if not all(has_literal_spelling(value) for value in arguments):
        return  # tensors, sizes, dtypes: a metadata query the tensor guards cover, or unspellable
    call = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    name = getattr(target, "__qualname__", repr(target))
    query = QueryResultSource(HeldObjectSource(f"function {name}", id(target), target), call)
    try:
        guard = ConstantMatch(query, result)
    except GuardError:
        return  # an object, not a constant: its identity is of this call only
    frame.session.add_guard(guard)


def _target_name(target) -> str:
    """How messages name a recorded call: a method by its name, a function by `__name__`."""
    return target if isinstance(target, str) else getattr(target, "__name__", repr(target))


# Writes through a boolean mask whose values need a gradient: a graph break.
#
# `x[mask] = values` (index_put with a bool or uint8 index) runs on fake tensors, but the
# gradient of `values` is `grad[mask]`, whose row count is the mask's number of true elements:
# no backward graph can be traced for it (aot_autograd's joint trace fails on the data-dependent
# size). torch.compile breaks the graph at such a write (its backend fails on aten.nonzero and
# dynamo retries with a break there); so does capture, before recording it, so that the write
# runs eagerly with autograd's own backward (HF Higgs Audio v2 in training:
# `hidden_states[audio_token_mask] += audio_mlp(...)`).
# Each takes (tensor, indices, values), as `x[indices] = values` does.
_INDEX_PUTS = frozenset({
    operator.setitem, torch.index_put, torch.index_put_, torch.Tensor.index_put, torch.Tensor.index_put_,
    "index_put", "index_put_",
})
_MASK_DTYPES = (torch.bool, torch.uint8)


def _refuse_mask_write_needing_gradient(target, fake_args: list, fake_kwargs: dict) -> None:
    if target not in _INDEX_PUTS or not torch.is_grad_enabled():
        return
    indices = fake_args[1] if len(fake_args) > 1 else fake_kwargs.get("indices")
    values = fake_args[2] if len(fake_args) > 2 else fake_kwargs.get("values")
    if not (isinstance(values, torch.Tensor) and values.requires_grad) or not _has_mask(indices):
        return
    raise Unsupported(
        "writing a tensor that needs a gradient through a boolean mask (x[mask] = values): the "
        "gradient of the values is grad[mask], whose size depends on the mask's data",
        hint="the graph breaks here and the write runs eagerly; index with mask.nonzero() outside "
        "the compiled code to keep it in the graph",
    )


def _has_mask(indices) -> bool:
    if isinstance(indices, torch.Tensor):
        return indices.dtype in _MASK_DTYPES
    if isinstance(indices, (tuple, list)):
        return any(_has_mask(index) for index in indices)
    return False
