"""`act(mm(a, b))` marked for the matmul to apply `act` itself, on the ATen graph before
lowering, under max-autotune only: the Triton matmul template (lowering/matmul_templates.py)
then applies the activation to its fp32 result before its one store, instead of a second
kernel reading the matmul's result back, as torch.compile's templates fuse epilogues.

Marked: relu, gelu (exact and tanh), silu, sigmoid and tanh that are the only reader of an
mm/addmm/bmm/baddbmm (directly or through reshapes that are each the only reader of the one
before) whose result may become a template (`may_take_template`). The matmul node records
the activation's name (`EPILOGUE_KEY`), the activation node the matmul (`FOLDED_INTO_KEY`).
Only meta changes: the graph's code still computes the activation, so the graph stays right
for anyone who runs it. Where the template applied the activation, the activation's node
lowers to its input as it is (graph.py); where the lowering keeps the aten call, the
activation lowers as usual. (act(view(mm)) is view(act(mm)) for an elementwise act.)
"""

from __future__ import annotations

import torch
import torch.fx

from ..lowering.matmul_templates import EPILOGUE_KEY, FOLDED_INTO_KEY, epilogue_name, may_take_template

aten = torch.ops.aten
MATMULS = (aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default)
RESHAPES = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def fold_activations_into_matmuls(gm: torch.fx.GraphModule, example_inputs, options, targets) -> int:
    """Mark every such activation and its matmul; returns how many."""
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
        activation, name = found
        node.meta[EPILOGUE_KEY] = name
        activation.meta[FOLDED_INTO_KEY] = node
        folded += 1
    return folded


def _activation_reading(matmul: torch.fx.Node):
    """(the activation node, its epilogue name) when an activation of ours is the only reader
    of `matmul`, directly or through single-reader reshapes (a linear over [batch, seq,
    features] reads mm's result through a view); else None."""
    last = matmul
    while len(last.users) == 1 and next(iter(last.users)).target in RESHAPES:
        last = next(iter(last.users))
    if len(last.users) != 1:
        return None
    reader = next(iter(last.users))
    name = epilogue_name(reader) if reader.op == "call_function" and reader.args[:1] == (last,) else None
    return None if name is None else (reader, name)
