"""The graph's outputs in the layout eager gives them (mixed into GraphLowering).

A forward graph's outputs include the values the backward saved: the backward is compiled to
read each with its traced strides, so an output computed in another layout is wrong gradients,
with no error. A caller, too, gets eager's strides. Each output is laid out in the traced
memory order where that is dense, keeps gapped or symbolic traced strides exactly, and a view
of a computed buffer is copied into eager's order where its own differs; a padded matmul's
slice is returned as a strided view where nothing reads it later (inference graphs).
"""

from __future__ import annotations

from collections import Counter

import sympy
import torch

from .ir import (
    Buffer, ComputedBuffer, ExternKernel, GenericView, IRNode, Layout, MultiOutput, Pointwise, ReinterpretView, storage_of,
)
from .layout_optimization import saved_output_orders
from .lowering.matmul_padding import is_padded_slice
from .lowering.views import strided_view
from .memory_order import (
    dense_in_order, memory_order, strided_in_order, strides_match, strides_to_keep, with_dense_strides,
)
from .ops import DependencyCollector, use_handler
from .sizes import loop_vars


class OutputLayouts:
    """Mixed into GraphLowering: the FX `output` node and the layouts of what it returns."""

    def _in_traced_memory_order(self, value, node):
        """An output laid out as the traced (eager) value is, when that is dense: a transposed or
        channels-last input's layout carries through eager's pointwise ops. The caller then gets
        eager's strides, and a graph reading this output later (the backward reading saved
        activations) finds the strides it was traced with."""
        val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        order = memory_order(val)
        if order is None:
            return value
        if isinstance(value, Pointwise):
            return self.realize_in_memory_order(value, order)
        computed = isinstance(value, (Buffer, ReinterpretView)) and isinstance(
            storage_of(value), (ComputedBuffer, ExternKernel, MultiOutput)
        )
        if computed and not strides_match(value.layout, val):
            # Realized earlier in another order (it had several readers), or an extern kernel's
            # result laid out after inputs realized in another order than eager's (a depthwise
            # convolution over a permuted view realized row-major returns row-major where eager's
            # is channels-last: CvT): copy into eager's.
            return self.realize_in_memory_order(Pointwise(value.device, value.dtype, value.size, value.make_loader()), order)
        if computed and tuple(value.layout.stride) != tuple(val.stride()):
            # The same memory, but strides of size-1 dims differ from eager's (a 1x1 convolution's
            # weight gradient computed channels-last, layout_optimization.py): a view with eager's
            # strides, which autograd keeps as the parameter's .grad.
            layout = Layout(value.device, value.dtype, tuple(value.size), tuple(map(sympy.Integer, val.stride())),
                            value.layout.offset)
            return ReinterpretView(storage_of(value), layout)
        return value

    def _in_saved_order(self, value, order):
        """A saved activation dense in `order`, the layout its backward was compiled to read."""
        if not isinstance(value, (Buffer, ReinterpretView)):
            value = self.realize_in_memory_order(value, order)
        elif not dense_in_order(value.layout.size, value.layout.stride, order):
            value = self.realize_in_memory_order(Pointwise(value.device, value.dtype, value.size, value.make_loader()), order)
        return with_dense_strides(value, order)

    def _view_in_traced_order(self, value, node):
        """An output that is a view of a buffer computed here, with its dims in memory in
        another order than eager's (`z` of `w = z.t(); w.add_(y); return z, w`: z's new value
        is the transpose of the add, computed in w's order): copied into eager's. The caller
        sees eager's strides, and aot_autograd rebuilds outputs aliasing this one (w) with
        `as_strided` at their traced strides, which read the wrong elements of another layout."""
        if not isinstance(value, ReinterpretView) or not isinstance(storage_of(value), ComputedBuffer):
            return value
        val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        # Static strides only: with symbolic ones aot_autograd rebuilds the aliases from the
        # graph's own views, which must then stay views of this very buffer.
        order = memory_order(val)
        if order is None or strided_in_order(value.layout, order):
            return value
        return self.realize_in_memory_order(Pointwise(value.device, value.dtype, value.size, value.make_loader()), order)

    def _with_traced_strides(self, value, node):
        """An output buffer (not a view, nor viewed by another output) whose traced strides memory_order does not keep (gapped: the
        copy of a slice; symbolic in another order: a transposed conv's product) computed into
        memory with those very strides. The backward is compiled to read each saved value with
        its traced strides: a row-major copy made it read (27, 9, 1)-apart elements of a
        (3, 1, 1) tensor (kimi_linear's chunked attention) and (64*s0, 1, s0)-apart ones of a
        (64*s0, 64, 1) one (squeezebert at a new length): wrong gradients. torch.compile keeps
        the traced strides too (require_exact_strides)."""
        val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        strides = strides_to_keep(val)
        if strides is None:
            return value
        strides = tuple(self.sympify(s) for s in strides)
        if all(n == 1 or sympy.expand(s - t) == 0 for n, s, t in zip(value.layout.size, value.layout.stride, strides)):
            return value
        layout = Layout(value.device, value.dtype, tuple(value.size), strides)
        buffer = ComputedBuffer(self.new_name(), layout, Pointwise(value.device, value.dtype, value.size, value.make_loader()))
        self._add(buffer)
        return buffer

    def _as_strided_output(self, value, node):
        """The [:M, :N] slice of a padded matmul's result (GPT-2's logits), or a view of it, that
        reads the result at an affine index: returned as that strided view rather than copied
        dense, when its dims lie in memory in eager's order, as torch.compile returns it. Only
        where nothing reads the output later expecting the traced strides (inference graphs: a
        forward graph's outputs include the backward's saved values)."""
        val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        if memory_order(val) is None:
            return value
        sliced = value
        while isinstance(sliced, GenericView):
            sliced = sliced.data
        if not is_padded_slice(sliced):
            return value  # e.g. a copy of a slice (`.contiguous()`): eager's dense strides
        index = loop_vars("v", len(value.size))
        collector = DependencyCollector()
        with use_handler(collector):
            result = value.make_loader()(index)
        if result != "load" or collector.op_count or collector.indirect_symbols or len(collector.reads) != 1:
            return value
        name, flat = collector.reads[0]
        base = next((b for b in self.buffers if b.name == name), None)
        view = strided_view(base, value.size, index, flat) if isinstance(base, Buffer) else None
        if view is None or view.dtype != value.dtype:
            return value
        return view if strided_in_order(view.layout, memory_order(val)) else value

    def output(self, target, args, kwargs):
        results, nodes = args[0], self.current_node.args[0]
        flat = results if isinstance(results, (list, tuple)) else [results]
        # One node per output, except where one node returns the whole tuple (no layout to match then).
        flat_nodes = nodes if isinstance(nodes, (list, tuple)) and len(nodes) == len(flat) else [None] * len(flat)
        # Activations a training forward saves channels-last, as its backward reads them.
        saved_orders = saved_output_orders(self.module)
        values = []
        for position, (value, node) in enumerate(zip(flat, flat_nodes)):
            if isinstance(value, IRNode) and saved_orders.get(position):
                value = self._in_saved_order(value, list(saved_orders[position]))
            elif isinstance(value, IRNode):
                strided = self._as_strided_output(value, node) if self.strided_outputs else value
                if strided is not value:
                    # A padded matmul's slice, in eager's memory order with the padded row
                    # stride: returned as that view, not copied into eager's dense strides.
                    value = strided
                else:
                    value = self._in_traced_memory_order(value, node)
                value = self._view_in_traced_order(self.realize_keeping_views(value), node)
            elif isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                value = self.sympify(value)  # a number the program returns, over our symbols
            values.append(value)
        # A buffer another output views stays that very buffer: aot_autograd rebuilds outputs
        # aliasing it (with symbolic strides) from it. A view of a buffer no other output
        # shares is free to become memory of its own with its traced strides: the backward
        # reads a saved `view(add(x.transpose(1, 2), y))` at (8*s0, 1, 4*s0, s0), where the view
        # of a row-major add had (8*s0, 8, 4, 1) (wrong gradients at a new length, inkling).
        viewed = {storage_of(v).name for v in values if isinstance(v, ReinterpretView)}
        storages = Counter(storage_of(v).name for v in values if isinstance(v, IRNode))
        for position, (value, node) in enumerate(zip(values, flat_nodes)):
            if isinstance(value, IRNode) and position in saved_orders:
                # A saved value the backward reads with its traced strides: a view of a
                # convolution's channels-last output (layout_optimization.py) has others.
                if not saved_orders[position]:
                    value = self._with_traced_strides(value, node)
                self.output_names.add(storage_of(value).name)
            elif isinstance(value, IRNode):
                storage = storage_of(value)
                if isinstance(value, ReinterpretView):
                    if isinstance(storage, ComputedBuffer) and storages[storage.name] == 1:
                        value = self._with_traced_strides(value, node)
                elif storage.name not in viewed:
                    value = self._with_traced_strides(value, node)
                self.output_names.add(storage_of(value).name)
            self.outputs.append(value)
        return results
