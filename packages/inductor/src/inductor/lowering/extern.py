"""Ops that run as aten calls from the wrapper: matmul/conv/attention externs, and the fallback
for any op without a lowering (logged as a performance hint, never an error)."""

from __future__ import annotations

import logging

import torch

from ..context import current_graph
from ..ir import ExternKernel, Layout, MultiOutput
from . import register_lowering

aten = torch.ops.aten
perf_hints = logging.getLogger("compiler.perf_hints")

# Ops better served by aten's own kernels (BLAS, oneDNN, flash attention) than by generated loops.
EXTERN_OPS = """
mm bmm addmm baddbmm convolution convolution_backward scaled_dot_product_attention
_scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_flash_attention_for_cpu_backward
_scaled_dot_product_efficient_attention _scaled_dot_product_efficient_attention_backward
_scaled_dot_product_flash_attention _scaled_dot_product_flash_attention_backward
max_pool2d_with_indices max_pool2d_with_indices_backward _adaptive_avg_pool2d avg_pool2d
""".split()


def layout_of(value, graph) -> Layout:
    """Layout of a meta value; meta tensors (shape propagation without fake tensors) take the graph's device."""
    return Layout(
        value.device if value.device.type != "meta" else graph.device, value.dtype,
        tuple(graph.sympify(s) for s in value.shape), tuple(graph.sympify(s) for s in value.stride()),
    )


def extern_call(op, args, kwargs, *, is_fallback: bool):
    """Register `op(*args, **kwargs)` as a wrapper-level call; outputs shaped like the node's meta value."""
    graph = current_graph()
    args = graph.realize_tree(args)
    kwargs = graph.realize_tree(kwargs)
    val = graph.current_val()
    aliases = any(r.alias_info is not None for r in op._schema.returns)
    layout = layout_of(val, graph) if isinstance(val, torch.Tensor) else None
    kernel = ExternKernel(graph.new_name(), layout, str_op(op), tuple(args), kwargs, is_fallback, aliases)
    if isinstance(val, torch.Tensor):
        return graph.register_extern(kernel)
    parent = graph.register_extern(kernel)
    return _outputs(graph, parent, val, ())


def _outputs(graph, parent, val, path):
    if isinstance(val, torch.Tensor):
        return graph.register_extern(MultiOutput(graph.new_name(), layout_of(val, graph), parent, path))
    if isinstance(val, (list, tuple)):
        return type(val)(_outputs(graph, parent, item, (*path, k)) for k, item in enumerate(val))
    return val


def str_op(op) -> str:
    """A Python expression naming the overload: `torch.ops.aten.mm.default`."""
    return f"torch.ops.{op.namespace}.{op._schema.name.split('::')[1]}.{op._overloadname}"


def extern(op, args, kwargs):
    return extern_call(op, args, kwargs, is_fallback=False)


def fallback(op, args, kwargs):
    perf_hints.info("inductor: no lowering for %s; it runs as an aten call between kernels", op)
    return extern_call(op, args, kwargs, is_fallback=True)


for _name in EXTERN_OPS:
    if hasattr(aten, _name):
        # getattr, not aten.__getattr__: the latter builds a fresh packet whose overloads are
        # different objects from the ones graphs hold, so table lookups would miss.
        _overload = getattr(aten, _name).default
        register_lowering(_overload)(lambda *args, _op=_overload, **kwargs: extern(_op, args, kwargs))
