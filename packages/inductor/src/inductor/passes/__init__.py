"""Graph passes. On the captured (torch-level) FX graph, before aot_autograd traces it:
`fold_attention_masks(gm)`, sdpa masks decided from constants alone become `attn_mask=None`
or `is_causal=True` (see attention_masks.py); `ConstantValues` evaluates input-free subgraphs.
On the joint forward+backward graph, before partitioning:
`max_pool_offsets.save_offsets_for_max_pool_backward(joint)` (int8 offsets, not int64 indices).
On the ATen graph, before lowering: `common_subexpressions.merge_common_subexpressions(gm)`,
then `scatter_adds.fold_adds_into_scatters(gm)`, then (max-autotune only)
`matmul_epilogues.fold_activations_into_matmuls(...)`.
On the lowered IR, before scheduling: `split_reductions.split_reductions(graph)`.
"""

from .attention_masks import fold_attention_masks
from .constant_subgraphs import ConstantValues

__all__ = ["ConstantValues", "fold_attention_masks"]
