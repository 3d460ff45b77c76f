"""`act(mm(a, b))` as one matmul node that applies `act` itself, on the ATen graph before
lowering, under max-autotune only: the Triton matmul template (lowering/matmul_templates.py)
then applies the activation to its fp32 result before its one store, instead of a second
kernel reading the matmul's result back, as torch.compile's templates fuse epilogues.

Folded: relu, gelu (exact and tanh), silu, sigmoid and tanh that are the only reader of an
mm/addmm/bmm/baddbmm (directly or through reshapes that are each the only reader of the one
before) whose result may become a template (`may_take_template`). The matmul node records
the activation in `node.meta["matmul_epilogue"]` and the activation's readers read the
matmul's result (or its last reshape) instead; where the lowering keeps the aten call, it
lowers the activation after it, as the unfolded graph would have. (An activation keeps
shape, dtype and strides, so every meta value stays right.)
"""

from __future__ import annotations

import torch
import torch.fx

from ..lowering.matmul_templates import EPILOGUE_KEY, epilogue_name, may_take_template

aten = torch.ops.aten
MATMULS = (aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default)
RESHAPES = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def fold_activations_into_matmuls(gm: torch.fx.GraphModule, example_inputs, options, targets) -> int:
    """Fold every such activation in place; returns how many."""
    if not options.max_autotune:
        return 0
    # A plain trace's values are on the meta device: the inputs say where the graph runs.
    devices = [x.device for x in example_inputs if isinstance(x, torch.Tensor)]
    folded = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in MATMULS:
            continue
        found = _activation_reading(node)
        val = node.meta.get("val")
        device = val.device if isinstance(val, torch.Tensor) and val.device.type != "meta" else \
            (devices[0] if devices else None)
        if found is None or device is None or not may_take_template(options, targets, device, val):
            continue
        activation, name, result = found
        node.meta[EPILOGUE_KEY] = name
        activation.replace_all_uses_with(result)
        gm.graph.erase_node(activation)
        folded += 1
    if folded:
        gm.recompile()
    return folded


def _activation_reading(matmul: torch.fx.Node):
    """(the activation node, its epilogue name, the node it reads) when an activation of ours is
    the only reader of `matmul`, directly or through single-reader reshapes (a linear over
    [batch, seq, features] reads mm's result through a view, and act(view(mm)) is
    view(act(mm)) for an elementwise act); else None."""
    last = matmul
    while len(last.users) == 1 and next(iter(last.users)).target in RESHAPES:
        last = next(iter(last.users))
    if len(last.users) != 1:
        return None
    reader = next(iter(last.users))
    name = epilogue_name(reader) if reader.op == "call_function" and reader.args[:1] == (last,) else None
    return None if name is None else (reader, name, last)
