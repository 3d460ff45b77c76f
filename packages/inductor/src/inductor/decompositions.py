"""The ATen decompositions inductor asks aot_autograd to apply before lowering.

Core ATen decompositions, minus the ops with a direct lowering that beats their decomposition
(softmax, gelu, var_mean... are reductions/pointwise we lower as a whole), and
minus every random op: lowering/random.py draws them inside Triton kernels, or keeps them aten
calls (C++ kernels, `fallback_random=True`) so that one seed gives eager's numbers.
"""

from __future__ import annotations

import functools

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

from .foreach_decompositions import foreach_decompositions

aten = torch.ops.aten

# Lowered directly (lowering/), so their decompositions would only make the graph longer.
LOWERED_DIRECTLY = {
    aten._softmax.default, aten._log_softmax.default, aten.gelu.default,
    aten.var_mean.correction, aten.var.correction, aten.std.correction,
    aten._softmax_backward_data.default, aten._log_softmax_backward_data.default, aten.gelu_backward.default,
    aten.silu.default, aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default, aten.hardtanh.default,
    aten.leaky_relu.default, aten.sigmoid_backward.default, aten.tanh_backward.default, aten.embedding.default,
    aten.index_select.default, aten.gather.default, aten.full_like.default, aten.zeros_like.default,
    aten.ones_like.default, aten.arange.default, aten.arange.start, aten.arange.start_step, aten.rsub.Scalar,
    aten.rsub.Tensor, aten.nan_to_num.default, aten.masked_fill.Scalar, aten.masked_fill.Tensor,
    aten.threshold_backward.default, aten.mean.dim, aten.logical_not.default,
    aten.mm.default, aten.addmm.default, aten.bmm.default,
    # Core ATen decomposes CPU flash attention into bmm/softmax/bmm (plus masking of all -inf
    # rows): several kernels and a [heads, seq, seq] matrix where aten's one kernel needs none.
    aten._scaled_dot_product_flash_attention_for_cpu.default,
}

# Composite ops that core ATen keeps but that we would rather see as simpler pieces.
EXTRA = [
    # Layer norm as mean/var reductions plus pointwise ops: the min-cut partitioner can then
    # recompute its normalized output in the backward from x, mean and rstd instead of saving
    # it (one activation fewer written per norm). The kernels are the same after fusion; its
    # direct lowering still serves ATen graphs compiled without these decompositions.
    aten.native_layer_norm.default,
    aten.native_layer_norm_backward.default, aten.native_group_norm.default, aten.native_group_norm_backward.default,
    aten._native_batch_norm_legit_functional.default, aten._native_batch_norm_legit_no_training.default,
    aten.native_batch_norm_backward.default, aten.embedding_dense_backward.default, aten.logsumexp.default,
    aten.addcmul.default, aten.addcdiv.default, aten.linalg_vector_norm.default, aten.upsample_nearest2d.vec,
    aten.hardswish.default, aten.hardsigmoid.default, aten.elu.default, aten.softplus.default, aten.mish.default,
    # What batch norm traces to (eval and training alike); functionalization would turn it into
    # `_native_batch_norm_legit_functional` only after the decompositions ran, leaving an aten
    # call per norm between kernels instead of a scale-and-shift fused into its neighbours.
    aten._native_batch_norm_legit.default,
]


def _take(x, index):
    # torch's decomposition is `x.reshape(-1)[index]`: Python indexing, which reads a 0-d index
    # tensor's value (`.item()`); aten.index takes it as a tensor at every rank.
    return aten.index.Tensor(aten.reshape.default(x, [-1]), [index])


def _xlogy(x, y):
    # Eager's CPU kernel computes `x * std::log(y)` in the tensor's dtype, and c10's log of a
    # float16/bfloat16 returns that dtype: log(y) is rounded before the product (kl_div's
    # xlogy(t, t) at t = 7.918 in float16 is 16.375 in eager, 16.39 from float32). torch's
    # decomposition computes it all in float32. CUDA's kernel is not checked: it keeps torch's.
    dtype = torch.result_type(x, y)
    if dtype not in (torch.float16, torch.bfloat16) or x.device.type != "cpu":
        return _TORCH_XLOGY(x, y)
    x, y = (aten._to_copy.default(v, dtype=torch.float32) for v in (x, y))
    log_y = aten._to_copy.default(aten._to_copy.default(aten.log.default(y), dtype=dtype), dtype=torch.float32)
    product = aten.where.self(aten.eq.Scalar(x, 0), aten.zeros_like.default(x), aten.mul.Tensor(x, log_y))
    result = aten.where.self(aten.isnan.default(y), aten.full_like.default(y, float("nan")), product)
    return aten._to_copy.default(result, dtype=dtype)


def _checked_targets(torch_decomposition):
    """nll_loss with each target first read through an index into arange(classes): the same
    value, checked as indexing checks it. Eager raises IndexError ("Target 9 is out of bounds.")
    for a target outside the classes; torch's decomposition picks the target's score with
    gather, whose check raises RuntimeError. Targets equal to ignore_index are not checked."""

    def decomposition(self, target, weight, reduction, ignore_index):
        classes = self.shape[1 if self.dim() > 1 else 0]
        kept = aten.ne.Scalar(target, ignore_index)
        safe = aten.where.self(kept, target, aten.zeros_like.default(target))
        checked = aten.index.Tensor(aten.arange.default(classes, dtype=target.dtype, device=target.device), [safe])
        return torch_decomposition(self, aten.where.self(kept, checked, target), weight, reduction, ignore_index)

    return decomposition


_TORCH_DECOMPOSITIONS = core_aten_decompositions()
_TORCH_XLOGY = _TORCH_DECOMPOSITIONS[aten.xlogy.Tensor]

# Ours where torch's decomposition does not trace on fake tensors, or rounds or raises otherwise
# than eager.
REPLACED = {
    aten.take.default: _take,
    aten.xlogy.Tensor: _xlogy,
    aten.nll_loss_forward.default: _checked_targets(_TORCH_DECOMPOSITIONS[aten.nll_loss_forward.default]),
    aten.nll_loss2d_forward.default: _checked_targets(_TORCH_DECOMPOSITIONS[aten.nll_loss2d_forward.default]),
}


@functools.lru_cache(maxsize=None)
def _table():
    table = dict(core_aten_decompositions())
    table.update(get_decompositions(EXTRA))
    for op in LOWERED_DIRECTLY:
        table.pop(op, None)
    table.update(foreach_decompositions())
    table.update(REPLACED)
    # A random op's decomposition draws its numbers differently from its kernel (native_dropout
    # becomes `rand_like(x) > p`; eager's kernel calls bernoulli_): the lowering decides.
    return {op: fn for op, fn in table.items() if torch.Tag.nondeterministic_seeded not in op.tags}


def decompositions() -> dict:
    return dict(_table())
