"""Fakes standing for CPU tensors describe the CPU kernels' outputs where those differ from
torch's meta kernels (which follow CUDA): normalization statistics, nonzero_static layout."""

import pytest
import torch

from fake_tensor import FakeTensorMode

aten = torch.ops.aten


def norm_calls(dtype):
    x = torch.randn(2, 3, 4, dtype=dtype)
    w, b, rm, rv = torch.ones(3), torch.zeros(3), torch.zeros(3), torch.ones(3)
    return {
        "batch_norm_eval": (aten.native_batch_norm.default, (x, w, b, rm, rv, False, 0.1, 1e-5)),
        "batch_norm_train": (aten.native_batch_norm.default, (x, w, b, rm, rv, True, 0.1, 1e-5)),
        "legit_eval": (aten._native_batch_norm_legit.default, (x, w, b, rm, rv, False, 0.1, 1e-5)),
        "legit_no_stats": (aten._native_batch_norm_legit.no_stats, (x, None, None, True, 0.1, 1e-5)),
        "legit_no_training": (aten._native_batch_norm_legit_no_training.default, (x, w, b, rm, rv, 0.1, 1e-5)),
        "with_update": (aten._batch_norm_with_update.default, (x, w, b, rm, rv, 0.1, 1e-5)),
        "no_update": (aten._batch_norm_no_update.default, (x, w, b, rm, rv, 0.1, 1e-5)),
        "layer_norm": (aten.native_layer_norm.default, (x, [4], None, None, 1e-5)),
        "layer_norm_float32_weight": (aten.native_layer_norm.default, (x, [4], torch.ones(4), None, 1e-5)),
        # The functional forms aot_autograd's graphs hold; with parameters of the input's dtype
        # too (op_db's samples), where the CPU kernel returns every statistic in that dtype.
        "legit_functional": (aten._native_batch_norm_legit_functional.default, (x, w, b, rm, rv, True, 0.1, 1e-5)),
        "with_update_functional": (aten._batch_norm_with_update_functional.default, (x, w, b, rm, rv, 0.1, 1e-5)),
        "with_update_functional_same_dtype": (
            aten._batch_norm_with_update_functional.default, (x, *(t.to(dtype) for t in (w, b, rm, rv)), 0.1, 1e-5)
        ),
        "legit_functional_same_dtype": (
            aten._native_batch_norm_legit_functional.default, (x, *(t.to(dtype) for t in (w, b, rm, rv)), True, 0.1, 1e-5)
        ),
    }


def described(outputs):
    return [(t.shape, t.dtype, t.stride()) for t in outputs]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("call", list(norm_calls(torch.float32)))
def test_normalization_statistics_match_the_cpu_kernel(dtype, call):
    op, args = norm_calls(dtype)[call]
    eager = op(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    mode = FakeTensorMode()
    with mode:
        fake = op(*[mode.from_real(a) if isinstance(a, torch.Tensor) else a for a in args])
    assert described(fake) == described(eager)


def test_nonzero_static_is_row_major_like_the_cpu_kernel():
    real = torch.randn(3, 4)
    eager = torch.nonzero_static(real, size=5)
    mode = FakeTensorMode()
    fake = torch.nonzero_static(mode.from_real(real), size=5)
    assert (fake.shape, fake.stride()) == (eager.shape, eager.stride())


LAYOUT_PROGRAMS = {
    "linalg_svd_reduced": lambda x: torch.linalg.svd(x, full_matrices=False),
    "linalg_svd_full_batched": lambda x: torch.linalg.svd(x.expand(2, 4, 6).contiguous()),
    "svd": lambda x: torch.svd(x),
    "linalg_eig": lambda x: torch.linalg.eig(x[:, :4]),
    "geqrf": lambda x: torch.geqrf(x),
    "max_unpool2d_channels_last": lambda x: torch.nn.functional.max_unpool2d(
        *torch.nn.functional.max_pool2d(
            x.reshape(1, 2, 3, 4).to(memory_format=torch.channels_last), 2, return_indices=True
        ),
        2,
    ),
    "histogram": lambda x: torch.histogram(x, bins=5),
    "histogramdd": lambda x: torch.histogramdd(x[:, :3], bins=[2, 3, 4]),
    # What autograd calls for the margin losses' gradients (a transposed input: still contiguous).
    "multi_margin_loss_backward": lambda x: torch.ops.aten.multi_margin_loss_backward(
        x.sum(), x.t(), torch.zeros(6, dtype=torch.long), 1, 1.0
    ),
    "multilabel_margin_loss_backward": lambda x: torch.ops.aten.multilabel_margin_loss_backward(
        x.sum(), x.t(), torch.zeros(6, 4, dtype=torch.long), 1, torch.zeros(6, 4)
    ),
}


@pytest.mark.parametrize("program", LAYOUT_PROGRAMS.values(), ids=LAYOUT_PROGRAMS.keys())
def test_lapack_layouts_and_missing_meta_kernels_match_the_cpu_kernel(program):
    real = torch.randn(4, 6)
    eager = program(real)
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    with mode:
        fake_out = program(fake)
    leaves = torch.utils._pytree.tree_leaves
    assert described(leaves(fake_out)) == described(leaves(eager))
