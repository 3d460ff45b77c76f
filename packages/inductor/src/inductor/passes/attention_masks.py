"""Attention masks that constants decide: `attn_mask=None` or `is_causal=True` instead.

transformers (5.17 and earlier 5.x) builds an explicit mask while `torch.compiler.is_compiling()`
is True where eager passes `attn_mask=None` (BERT: an all-true padding mask) or `is_causal=True`
(GPT-2: `kv_idx <= q_idx` over aranges). sdpa given a mask cannot use the flash kernel on CUDA
(it takes the memory-efficient kernel with a bias, or the math path), so the compiled model is
slower than eager. The kernel is chosen when aot_autograd traces the call, hence this pass runs
on the captured graph, before that trace.

A mask is replaced only when its value is computed from constants in the graph
(`ConstantValues`), never from an input's runtime value: a mask depending on an input, or on a
symbolic size, stays.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.fx
import torch.nn.functional as F

from .. import logs
from .constant_subgraphs import ConstantValues

log = logs.channel("inductor")

SDPA_TARGETS = {F.scaled_dot_product_attention, torch.ops.aten.scaled_dot_product_attention.default}
SDPA_PARAMETERS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")


def _allowed_and_blocked(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Which positions attend and which are masked out; None when some are neither (a float
    bias that is not 0 / -inf). A float mask at its dtype's lowest value blocks as -inf does:
    exp(score + min - rowmax) underflows to exactly 0 (transformers masks with finfo.min)."""
    if mask.dtype == torch.bool:
        return mask, ~mask
    if not mask.is_floating_point():
        return None
    allowed = mask == 0
    blocked = (mask == float("-inf")) | (mask == torch.finfo(mask.dtype).min)
    return (allowed, blocked) if bool((allowed | blocked).all()) else None


def _attends_everywhere(allowed, blocked) -> bool:
    return bool(allowed.all())


def _is_causal_square(allowed, blocked) -> bool:
    """sdpa's is_causal keeps the lower triangle of an L x S score matrix aligned top-left; a
    square mask's last two sizes are L and S (a size-1 dim only broadcasts to 1 here)."""
    if allowed.dim() < 2:
        return False
    rows, columns = allowed.shape[-2:]
    if rows != columns:
        return False
    causal = torch.ones(rows, columns, dtype=torch.bool, device=allowed.device).tril()
    return bool((allowed == causal).all())


# Mask patterns, tried in order: (name, predicate on (allowed, blocked), sdpa arguments instead).
MASK_PATTERNS: list[tuple[str, Callable, dict]] = [
    ("all-attending", _attends_everywhere, {"attn_mask": None}),
    ("causal", _is_causal_square, {"attn_mask": None, "is_causal": True}),
]


def _bound_arguments(node: torch.fx.Node) -> dict:
    arguments = dict(zip(SDPA_PARAMETERS, node.args))
    arguments.update(node.kwargs)
    return arguments


def _without_broadcast(mask: torch.Tensor) -> torch.Tensor:
    """The mask with each expanded (stride-0) dim cut to size 1: same values, and a batch-expanded
    [32, 1, 512, 512] mask is checked as [1, 1, 512, 512]."""
    for dim, (size, stride) in enumerate(zip(mask.shape, mask.stride())):
        if size > 1 and stride == 0:
            mask = mask.narrow(dim, 0, 1)
    return mask


def _replacement(mask_value) -> tuple[str, dict] | None:
    if not isinstance(mask_value, torch.Tensor):
        return None
    split = _allowed_and_blocked(_without_broadcast(mask_value))
    if split is None:
        return None
    for name, matches, arguments in MASK_PATTERNS:
        if matches(*split):
            return name, arguments
    return None


def _erase_unused(node: torch.fx.Node, values: ConstantValues) -> None:
    """Remove the mask's subgraph where nothing else reads it (constant nodes are pure)."""
    pending, erased = [node], set()
    while pending:
        current = pending.pop()
        if current in erased or current.users or values.get(current) is None:
            continue
        inputs = current.all_input_nodes
        current.graph.erase_node(current)
        erased.add(current)
        pending.extend(inputs)


def fold_attention_masks(gm: torch.fx.GraphModule) -> int:
    """Rewrite sdpa calls whose mask constants decide; returns how many were rewritten."""
    values = ConstantValues(gm)
    decided: dict[torch.fx.Node, tuple[str, dict] | None] = {}  # one mask serves every layer
    rewritten = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in SDPA_TARGETS:
            continue
        arguments = _bound_arguments(node)
        mask = arguments.get("attn_mask")
        if not isinstance(mask, torch.fx.Node) or arguments.get("is_causal", False):
            continue
        if mask not in decided:
            decided[mask] = _replacement(values.get(mask))
        found = decided[mask]
        if found is None:
            continue
        name, replacement = found
        arguments.update(replacement)
        positional = dict(zip(SDPA_PARAMETERS[:3], (arguments.pop(p) for p in SDPA_PARAMETERS[:3])))
        node.args, node.kwargs = tuple(positional.values()), arguments
        log.info("inductor: %s attention mask %s of %s folded into %s", name, mask.name, node.name, replacement)
        _erase_unused(mask, values)
        rewritten += 1
    if rewritten:
        gm.recompile()
    return rewritten
