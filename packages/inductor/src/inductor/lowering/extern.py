"""Ops that run as aten calls from the wrapper: matmul/conv/attention externs, random ops not
drawn in kernel (lowering/random.py; they draw eager's numbers), and the fallback for any other
op without a lowering (logged as a performance hint, never an error)."""

from __future__ import annotations

import contextlib

import sympy
import torch
import torch.utils._pytree as pytree
from fake_tensor import FakeTensorMode

from .. import logs
from ..context import current_graph
from ..ir import ExternKernel, IRNode, Layout, MultiOutput
from . import LOWERINGS, register_lowering

aten = torch.ops.aten
perf_hints = logs.channel("perf_hints")

# Ops better served by aten's own kernels (BLAS, oneDNN, flash attention) than by generated loops.
# (mm, addmm, bmm and baddbmm are registered by matmul_padding.py, which may pad them first;
# max-pool by pooling.py, which keeps large windows here; convolution and its backward by
# convolution.py.)
EXTERN_OPS = """
scaled_dot_product_attention
_scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_flash_attention_for_cpu_backward
_scaled_dot_product_efficient_attention _scaled_dot_product_efficient_attention_backward
_scaled_dot_product_flash_attention _scaled_dot_product_flash_attention_backward
_adaptive_avg_pool2d avg_pool2d
""".split()


def layout_of(value, graph, device=None) -> Layout:
    """Layout of a meta value on its device; meta tensors (a meta re-run, or shape propagation
    without fake tensors) take `device` when it is a real one, else the graph's."""
    for candidate in (value.device, device, graph.device):
        if candidate is not None and candidate.type != "meta":
            break
    return Layout(
        candidate, value.dtype,
        tuple(graph.sympify(s) for s in value.shape), tuple(graph.sympify(s) for s in value.stride()),
    )


class _Symbolic(Exception):
    """An argument's layout has symbolic sizes: a meta run cannot stand for every size."""


def _meta_argument(value, on_device: bool = False):
    """A tensor laid out as the buffer the wrapper will pass, on the meta device (or, inside a
    FakeTensorMode, a fake one on the buffer's device); raises _Symbolic if it cannot be."""
    if isinstance(value, IRNode):
        layout = value.layout
        if not all(isinstance(e, sympy.Integer) for e in (*layout.size, *layout.stride)):
            raise _Symbolic
        return torch.empty_strided([int(s) for s in layout.size], [int(s) for s in layout.stride],
                                   dtype=layout.dtype, device=layout.device if on_device else "meta")
    if isinstance(value, sympy.Basic):
        if not isinstance(value, sympy.Integer):
            raise _Symbolic
        return int(value)
    return value


def output_value(op, args, kwargs, val):
    """What the op returns for the buffers the wrapper will pass it.

    The node's meta value was computed for the inputs as the traced graph had them; inductor may
    pass others (a lazy permute realized densely, a view realized as a copy), and ops such as
    attention and convolution lay their outputs out after their inputs. Re-running the op on fake
    tensors laid out like the realized inputs, on their device, gives the strides it will really
    return: fake_tensor answers as the device's kernel chooses (a convolution over channels-last
    input returns channels-last on CPU and CUDA, where torch's meta kernel says row-major). Then
    meta tensors; then the node's value (symbolic layouts, factories, ops with neither); the
    wrapper checks strides and dtypes at run time either way (`wrapper_support.with_layout`)."""
    if "device" in kwargs or not any(isinstance(a, IRNode) for a in pytree.tree_leaves((args, kwargs))):
        return val
    for on_device in (True, False):
        try:
            result = _rerun(op, args, kwargs, on_device)
        except Exception:  # noqa: BLE001  (no rule, symbolic layout, a data-dependent op: try the next)
            continue
        if _same_shapes(result, val):
            return result
    return val


def _rerun(op, args, kwargs, on_device: bool):
    """`op` on stand-ins for the realized arguments: fakes on their device, or meta tensors."""
    with FakeTensorMode() if on_device else contextlib.nullcontext():
        tensor_args, tensor_kwargs = pytree.tree_map(lambda v: _meta_argument(v, on_device), (list(args), dict(kwargs)))
        return op(*tensor_args, **tensor_kwargs)


def _same_shapes(a, b) -> bool:
    leaves_a, spec_a = pytree.tree_flatten(a)
    leaves_b, spec_b = pytree.tree_flatten(b)
    if spec_a != spec_b:
        return False
    for x, y in zip(leaves_a, leaves_b):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor) and (
            x.dtype != y.dtype or not all(type(n) is int for n in y.shape) or tuple(x.shape) != tuple(y.shape)
        ):
            return False
    return True


def extern_call(op, args, kwargs, *, is_fallback: bool, traced=None):
    """Register `op(*args, **kwargs)` as a wrapper-level call; outputs laid out as `output_value` says.

    `traced` is what the op returns as traced, by default the current node's value; a lowering
    that changes the sizes of the op's inputs (a padded matmul) passes a meta tensor of the
    result's new size instead."""
    graph = current_graph()
    args = graph.realize_tree(args)
    kwargs = graph.realize_tree(kwargs)
    current = graph.current_val()
    traced = current if traced is None else traced
    val = output_value(op, args, kwargs, traced)
    aliases = any(r.alias_info is not None for r in op._schema.returns)
    device = kwargs.get("device") or getattr(current, "device", None)  # a factory says its device
    layout = layout_of(val, graph, device) if isinstance(val, torch.Tensor) else None
    kernel = ExternKernel(graph.new_name(), layout, str_op(op), tuple(args), kwargs, is_fallback, aliases)
    if isinstance(val, torch.Tensor):
        return graph.register_extern(kernel)
    parent = graph.register_extern(kernel)
    return _outputs(graph, parent, val, traced, ())


def _outputs(graph, parent, val, traced, path):
    """MultiOutputs for the tensors of `val`; `traced` (same structure) says each one's device."""
    if isinstance(val, torch.Tensor):
        return graph.register_extern(MultiOutput(graph.new_name(), layout_of(val, graph, traced.device), parent, path))
    if isinstance(val, (list, tuple)):
        return type(val)(_outputs(graph, parent, item, t, (*path, k)) for k, (item, t) in enumerate(zip(val, traced)))
    return val


def str_op(op) -> str:
    """A Python expression naming the overload: `torch.ops.aten.mm.default`."""
    return f"torch.ops.{op.namespace}.{op._schema.name.split('::')[1]}.{op._overloadname}"


def extern(op, args, kwargs):
    return extern_call(op, args, kwargs, is_fallback=False)


def fallback(op, args, kwargs):
    if torch.Tag.nondeterministic_seeded in op.tags:
        # Random ops not drawn in kernel (lowering/random.py) are aten calls by design: they draw
        # from torch's generator in graph order, as eager does, so one seed gives eager's
        # numbers. They write nothing else.
        return extern_call(op, args, kwargs, is_fallback=False)
    perf_hints.info("inductor: no lowering for %s; it runs as an aten call between kernels", op)
    return extern_call(op, args, kwargs, is_fallback=True)


@register_lowering(aten._assert_scalar.default)
def assert_scalar(condition, message):
    """A runtime assertion on sizes or numbers (`torch._check` on a data-dependent value): the
    wrapper evaluates the condition when the graph runs and the aten op raises if it is false."""
    graph = current_graph()
    op = aten._assert_scalar.default
    graph.register_extern(
        ExternKernel(graph.new_name(), None, str_op(op), (condition, message), {}, False, False, is_check=True)
    )


def _tensor_check(op):
    """A check of a tensor's values (`_linalg_check_errors` on a factorization's `info`:
    linalg.cholesky, inv, solve raise on a matrix they cannot factor; `_assert_async` on a
    condition): the aten op runs between the kernels, after the value it reads, and raises
    eager's error. Nothing after it runs first (is_check)."""

    def lowering(*args, **kwargs):
        graph = current_graph()
        args, kwargs = graph.realize_tree(args), graph.realize_tree(kwargs)
        graph.register_extern(ExternKernel(graph.new_name(), None, str_op(op), tuple(args), kwargs, False, False,
                                           is_check=True))

    return lowering


for _check in (aten._assert_async.default, aten._assert_async.msg, aten._linalg_check_errors.default):
    register_lowering(_check)(_tensor_check(_check))


# Overloads lowered to an extern call, which reads its tensor arguments from memory (the
# matmuls join from matmul_padding.py); with the ops that have no lowering (fallbacks).
EXTERN_OVERLOADS: set = set()


def reads_arguments_from_memory(target) -> bool:
    """Whether a node calling `target` takes its tensor arguments as buffers in memory."""
    return isinstance(target, torch._ops.OpOverload) and (target in EXTERN_OVERLOADS or target not in LOWERINGS)


for _name in EXTERN_OPS:
    if hasattr(aten, _name):
        # getattr, not aten.__getattr__: the latter builds a fresh packet whose overloads are
        # different objects from the ones graphs hold, so table lookups would miss.
        _overload = getattr(aten, _name).default
        register_lowering(_overload)(lambda *args, _op=_overload, **kwargs: extern(_op, args, kwargs))
        EXTERN_OVERLOADS.add(_overload)
