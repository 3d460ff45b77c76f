"""The Triton matmul template: mm, addmm, bmm and baddbmm as one kernel of our own, which
max-autotune times against the aten call (lowering/matmul_templates.py chooses; the wrapper
calls `matmul` with the chosen block config).

    out[b, m, n] = alpha * sum_k a[b, m, k] * b[b, k, n]  (+ beta * bias[b, m, n])

Each program computes one BLOCK_M x BLOCK_N tile of one batch entry, accumulating in fp32 over
K in BLOCK_K steps, and stores in the inputs' dtype, as eager's cuBLAS call does. Any strides
(transposed, sliced operands; a bias broadcast by zero strides). fp32 inputs use tf32 exactly
when eager's cuBLAS would (`torch.backends.cuda.matmul.allow_tf32`, read at each call),
otherwise full-precision ("ieee") dots.

Importing this module imports triton: only wrappers that call the template, and the timing of
its configs, import it (TRITON_INTERPRET must be decided before triton is imported).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# libdevice's erf and tanh for the epilogues; under TRITON_INTERPRET=1 importing the helpers
# also patches the interpreter (loops over a kernel argument, bfloat16 rounding) as for
# generated kernels.
from . import triton_helpers as helpers

# The activations the template applies to its fp32 result before the store (the EPILOGUE
# constexpr): torch's relu, gelu (exact and tanh), silu, sigmoid, tanh.
EPILOGUES = {"none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4, "sigmoid": 5, "tanh": 6}


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, bias_ptr, out_ptr, M, N, K,
    stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn, stride_ob, stride_om, stride_on,
    alpha, beta,
    HAS_BIAS: tl.constexpr, EPILOGUE: tl.constexpr, SCALED: tl.constexpr, ALLOW_TF32: tl.constexpr,
    UPCAST: tl.constexpr, EVEN_M: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    batch = tl.program_id(1)
    # GROUP_M rows of tiles are launched column by column, so programs running at once share
    # `b`'s columns in L2 instead of each streaming its own.
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # Rows past M and columns past N read rows/columns inside the operands instead (index %
    # size): the K loop needs no mask on them, and the store drops what they compute. Where
    # the blocks divide the size there are none, and the indices are said to be runs of
    # BLOCK contiguous values (a `%` by a runtime size hides that), so loads along a unit
    # stride are vectorized.
    if EVEN_M:
        a_rows = tl.max_contiguous(tl.multiple_of(rm, BLOCK_M), BLOCK_M)
    else:
        a_rows = rm % M
    if EVEN_N:
        b_cols = tl.max_contiguous(tl.multiple_of(rn, BLOCK_N), BLOCK_N)
    else:
        b_cols = rn % N
    a_ptrs = a_ptr + batch * stride_ab + a_rows[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + batch * stride_bb + rk[:, None] * stride_bk + b_cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k_start in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:  # zeros past K add nothing to the dot products
            a = tl.load(a_ptrs, mask=rk[None, :] < K - k_start, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < K - k_start, other=0.0)
        if UPCAST:  # bfloat16 under the interpreter, which would multiply its raw bits
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        elif ALLOW_TF32:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if SCALED:
        acc = acc * alpha
    if HAS_BIAS:
        bias = tl.load(bias_ptr + batch * stride_cb + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
                       mask=mask, other=0.0)
        if SCALED:
            acc = acc + beta * bias.to(tl.float32)
        else:
            acc = acc + bias.to(tl.float32)
    if EPILOGUE == 1:  # relu; NaN stays NaN, as in eager
        acc = tl.where(acc < 0, 0.0, acc)
    elif EPILOGUE == 2:
        acc = 0.5 * acc * (1.0 + helpers.libdevice.erf(acc * 0.7071067811865476))
    elif EPILOGUE == 3:
        inner = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + helpers.libdevice.tanh(inner))
    elif EPILOGUE == 4:
        acc = acc * tl.sigmoid(acc)
    elif EPILOGUE == 5:
        acc = tl.sigmoid(acc)
    elif EPILOGUE == 6:
        acc = helpers.libdevice.tanh(acc)
    out = out_ptr + batch * stride_ob + rm[:, None] * stride_om + rn[None, :] * stride_on
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=mask)


def matmul(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None, *, alpha=1, beta=1,
           epilogue: str = "none", **config) -> torch.Tensor:
    """`epilogue(a @ b * alpha + beta * bias)` ([M, K] @ [K, N], or batched [B, M, K] @
    [B, K, N], no size 0; the bias broadcast to the result, ignored where beta == 0, NaNs
    included, as eager's addmm does; `epilogue` one of EPILOGUES) in a new row-major tensor
    of the inputs' dtype. `config`: a MatmulConfig's fields (runtime/matmul_configs.py)."""
    grid, args, kwargs = _kernel_arguments(a, b, bias, alpha, beta, epilogue, **config)
    if a.is_cuda and a.get_device() != torch.cuda.current_device():
        with torch.cuda.device(a.device):  # Triton launches on the current device
            matmul_kernel[grid](*args, **kwargs)
    else:
        matmul_kernel[grid](*args, **kwargs)
    return args[3]


def compile_ahead(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None, *, alpha=1, beta=1,
                  epilogue: str = "none", **config) -> None:
    """Compile the kernel `matmul` would launch, without launching it (inside
    `triton.AsyncCompileMode`, on its executor: configs compile in parallel before timing)."""
    grid, args, kwargs = _kernel_arguments(a, b, bias, alpha, beta, epilogue, **config)
    matmul_kernel.warmup(*args, grid=grid, **kwargs)


def _kernel_arguments(a, b, bias, alpha, beta, epilogue, *, block_m: int, block_n: int, block_k: int, group_m: int,
                      num_warps: int, num_stages: int):
    """(grid, positional arguments, keyword arguments) of `matmul_kernel` for one call."""
    batched = a.dim() == 3
    batch = a.shape[0] if batched else 1
    m, k = a.shape[-2:]
    n = b.shape[-1]
    shape = (batch, m, n) if batched else (m, n)
    out = torch.empty(shape, dtype=a.dtype, device=a.device)
    has_bias = bias is not None and beta != 0
    bias_strides = _batched_strides(bias.expand(shape), batched) if has_bias else (0, 0, 0)
    allow_tf32 = a.dtype != torch.float32 or torch.backends.cuda.matmul.allow_tf32
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    args = (a, b, bias if has_bias else out, out, m, n, k,
            *_batched_strides(a, batched), *_batched_strides(b, batched), *bias_strides,
            *_batched_strides(out, batched), float(alpha), float(beta))
    kwargs = dict(
        HAS_BIAS=has_bias, EPILOGUE=EPILOGUES[epilogue], SCALED=alpha != 1 or (has_bias and beta != 1),
        ALLOW_TF32=allow_tf32, UPCAST=a.dtype == torch.bfloat16 and not a.is_cuda,
        EVEN_M=m % block_m == 0, EVEN_N=n % block_n == 0, EVEN_K=k % block_k == 0,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
        num_warps=num_warps, num_stages=num_stages,
    )
    return grid, args, kwargs


def _batched_strides(t: torch.Tensor, batched: bool) -> tuple[int, int, int]:
    return tuple(t.stride()) if batched else (0, *t.stride())
