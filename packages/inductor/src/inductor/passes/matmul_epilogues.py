"""`act(mm(a, b))` as one matmul node that applies `act` itself, on the ATen graph before
lowering, under max-autotune only: the Triton matmul template (lowering/matmul_templates.py)
then applies the activation to its fp32 result before its one store, instead of a second
kernel reading the matmul's result back, as torch.compile's templates fuse epilogues.

Folded: relu, gelu (exact and tanh), silu, sigmoid and tanh that are the only reader of an
mm/addmm/bmm/baddbmm whose result may become a template (`may_take_template`). The matmul
node takes the activation's place (its users, its value) and records it in
`node.meta["matmul_epilogue"]`; where the lowering keeps the aten call, it lowers the
activation after it, as the unfolded graph would have.
"""

from __future__ import annotations

import torch
import torch.fx

from ..lowering.matmul_templates import EPILOGUE_KEY, epilogue_name, may_take_template

aten = torch.ops.aten
MATMULS = (aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default)


def fold_activations_into_matmuls(gm: torch.fx.GraphModule, example_inputs, options, targets) -> int:
    """Fold every such activation in place; returns how many."""
    if not options.max_autotune:
        return 0
    # A plain trace's values are on the meta device: the inputs say where the graph runs.
    devices = [x.device for x in example_inputs if isinstance(x, torch.Tensor)]
    folded = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in MATMULS or len(node.users) != 1:
            continue
        [user] = node.users
        name = epilogue_name(user) if user.op == "call_function" and user.args[:1] == (node,) else None
        val = node.meta.get("val")
        device = val.device if isinstance(val, torch.Tensor) and val.device.type != "meta" else \
            (devices[0] if devices else None)
        if name is None or device is None or not may_take_template(options, targets, device, val):
            continue
        node.meta[EPILOGUE_KEY] = name
        node.meta["val"] = user.meta.get("val", val)
        user.replace_all_uses_with(node)
        gm.graph.erase_node(user)
        folded += 1
    if folded:
        gm.recompile()
    return folded
