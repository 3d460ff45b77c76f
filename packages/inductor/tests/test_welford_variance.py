"""One-pass variance (lowering/reductions.py `var_mean`, codegen/triton/reductions.py): on
backends with `welford_variance` (Triton) var/std/var_mean and batch norm's statistics read
their input once, whole and split (passes/split_reductions.py), with eager's results, also for
data whose mean dwarfs its spread. Backends without it (C++) keep two passes; the unsplit
tests run on both.

Splitting is for GPUs; the split tests turn it on for CPU tensors, with small chunk limits, so
that the Triton interpreter runs split kernels at small sizes.
"""

from __future__ import annotations

import copy
import re

import pytest
import torch

import inductor
from conftest import assert_same, backend_options, compile_aten, record_split_plans, uses_triton
from inductor.codegen.targets import BACKENDS
from inductor.passes import split_reductions

aten = torch.ops.aten

def _statistics(dims):
    """var_mean, var and std with both corrections, of a float32 `x` and of a half-precision `h`
    upcast inside the graph (batch norm's statistic of a bf16 activation)."""

    def fn(x, h):
        outputs = []
        for correction in (0, 1):
            var_mean = aten.var_mean.correction(x, dims, correction=correction, keepdim=True)
            upcast = aten.var_mean.correction(aten._to_copy.default(h, dtype=torch.float32), dims,
                                              correction=correction)
            outputs += [var_mean[0], var_mean[1], upcast[0], upcast[1],
                        aten.var.correction(x, dims, correction=correction),
                        aten.std.correction(x, dims, correction=correction, keepdim=True)]
        return tuple(outputs)

    return fn


# (shape, reduced dims): a row that fits one tile (persistent kernel), rows that loop, one
# whose last block is partial (lanes of different counts combine), and a batch-norm layout.
SHAPES = {
    "tile": ((6, 40), [1]), "looped": ((3, 3000), [1]), "looped_ragged": ((2, 3001), [1]),
    "channels": ((4, 6, 5, 7), [0, 2, 3]),
}
# Against a float64 reference, float32 var of 1000 + randn over 3000 elements is off by ~9e-7
# in one pass (from each lane's pivot), ~9e-7 in two; a running mean without the pivot was off
# by 8e-6 there, and by 1.6e-3 at 1e5 + randn.
FLOAT32_TOLERANCE = {"rtol": 3e-6, "atol": 1e-5}


def _inputs(shape, offset, channels_last=False):
    """(float32, bfloat16) data around `offset`."""
    x = torch.randn(shape) + offset
    x = x.to(memory_format=torch.channels_last) if channels_last else x
    h = (torch.randn(shape) + offset).to(torch.bfloat16)
    return [x, h.to(memory_format=torch.channels_last) if channels_last else h]


def _check_first_call_new_values_and_new_size(fn, make, size, new_size):
    """Compiled `fn` against eager: on its first call, again with new values, and compiled at
    a new size. float32 results within FLOAT32_TOLERANCE, bfloat16 ones within its defaults."""

    def same(actual, expected):
        for a, e in zip(actual, expected):
            assert_same(a, e, **(FLOAT32_TOLERANCE if e.dtype == torch.float32 else {}))

    inputs = make(size)
    compiled = compile_aten(fn, inputs)
    same(compiled(*inputs), fn(*inputs))
    inputs = make(size)
    same(compiled(*inputs), fn(*inputs))
    inputs = make(new_size)
    same(compile_aten(fn, inputs)(*inputs), fn(*inputs))
    return compiled


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("offset", [0.0, 1000.0])
def test_variance_matches_eager(shape, offset, device):
    size, dims = SHAPES[shape]
    _check_first_call_new_values_and_new_size(
        _statistics(dims), lambda s: [t.to(device) for t in _inputs(s, offset)], size, (size[0] + 1, *size[1:]))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_variance_keeps_eagers_dtype(dtype, device):
    x = (torch.randn(5, 300) + 100).to(dtype).to(device)

    def fn(x):
        var_mean = aten.var_mean.correction(x, [1], correction=1)
        return var_mean[0], var_mean[1], aten.std.correction(x, [1], correction=0)

    compiled = compile_aten(fn, [x])
    assert_same(compiled(x), fn(x), **(FLOAT32_TOLERANCE if dtype == torch.float64 else {}))


@pytest.mark.parametrize("size", [0, 1])
def test_variance_of_zero_or_one_element_matches_eager(size, device):
    x = torch.randn(3, size, device=device)

    def fn(x):
        var_mean = aten.var_mean.correction(x, [1], correction=1)
        return var_mean[0], var_mean[1], aten.var.correction(x, [1], correction=0)

    compiled = compile_aten(fn, [x])
    assert_same(compiled(x), fn(x))


def test_one_fold_per_kernel_for_mean_and_variance(device):
    """var_mean's mean and m2 are one fold in one kernel; looped rows use Welford's update."""
    x = torch.randn(3, 3000, device=device)
    compiled = compile_aten(lambda x: aten.var_mean.correction(x, [1], correction=1), [x])
    assert compiled.kernel_count == 1
    if uses_triton(device):
        (source,) = compiled.kernel_sources.values()
        assert source.count("helpers.welford_add(") == 1
        assert source.count("helpers.welford_pivoted(") == 1


def _needs_welford(device):
    if not uses_triton(device):
        pytest.skip("C++ keeps two passes: test_split_reductions and test_batch_norm_fusion check them")


@pytest.fixture
def splits(monkeypatch, tmp_path):
    """Split on every device at small sizes; returns the (buffer, chunk count) of each split."""
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))  # no unsplit graph from the cache
    for target in BACKENDS.values():
        monkeypatch.setattr(target, "split_reductions_on", frozenset({"cpu", "cuda"}))
    monkeypatch.setattr(split_reductions, "SPLIT_MIN_CHUNK", {"outer": 16, "inner": 64})
    monkeypatch.setattr(split_reductions, "SPLIT_MIN_PROGRAM_ELEMENTS", 512)
    return record_split_plans(monkeypatch)


# (shape, reduced dims, channels_last): a batch-norm statistic (strided reduced axis: outer
# partials), the same with a chunk count that is not a power of two, and long rows (inner).
SPLIT_SHAPES = {
    "batch_norm": ((4, 6, 8, 8), [0, 2, 3], True),  # 256 rows: 16 chunks of 16
    "batch_norm_odd": ((5, 6, 17, 3), [0, 2, 3], True),  # 255 rows: 15 chunks of 17
    "rows": ((2, 4096), [1], False),
}


@pytest.mark.parametrize("shape", sorted(SPLIT_SHAPES))
def test_split_variance_matches_eager(shape, device, splits):
    _needs_welford(device)
    size, dims, channels_last = SPLIT_SHAPES[shape]
    _check_first_call_new_values_and_new_size(
        _statistics(dims), lambda s: [t.to(device) for t in _inputs(s, 1000.0, channels_last)], size,
        (size[0] * 2, *size[1:]))
    assert splits


def _loads_along_the_reduction(source: str, dtype: str) -> int:
    """Loads in a kernel of a `dtype` pointer at indices that run along the reduction (`r0`)."""
    types = re.search(r"POINTER_TYPES = (\{.*\})", source).group(1)
    pointers = [name for name, kind in eval(types).items() if kind == dtype]
    return sum(1 for line in source.splitlines() for p in pointers
               if f"tl.load({p} +" in line and re.search(r"\br0\b", line))


def test_split_batch_norm_statistic_reads_its_input_once(device, splits):
    """One partials kernel reads the activation and writes each chunk's (mean, m2, weight); one
    final kernel combines them. Two passes took four kernels reading the activation twice."""
    x = torch.randn(8, 6, 12, 12).to(torch.bfloat16).to(device, memory_format=torch.channels_last)

    def fn(x):
        return aten.var_mean.correction(aten._to_copy.default(x, dtype=torch.float32), [0, 2, 3], correction=0,
                                        keepdim=True)

    compiled = compile_aten(fn, [x])
    assert_same(compiled(x), fn(x))
    assert len(splits) == 2  # the mean and m2, sharing their partials
    if not uses_triton(device):
        return  # C++ keeps two passes
    assert compiled.kernel_count == 2
    sources = list(compiled.kernel_sources.values())
    assert [_loads_along_the_reduction(s, "*bf16") for s in sources] == [1, 0]
    assert "helpers.welford(" in sources[1]


def _bn_block(offset: float):
    # The conv's bias moves batch norm's input away from zero (its mean dwarfs its spread); batch
    # norm removes it again, so the bias's gradient is zero up to rounding and is not compared.
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU())
    torch.nn.init.constant_(model[0].bias, offset)
    return model


@pytest.mark.parametrize("offset", [0.0, 50.0])
def test_batch_norm_training_matches_eager(offset, device, splits):
    """Forward outputs, running statistics and gradients of a training batch norm (through
    aten._native_batch_norm_legit_functional's decomposition), its statistic split. Gradients
    are compared with a float64 model: at offset 50 eager's own float32 gradients are off by
    ~1e-4 of the largest one, so ours must be as close to float64 as eager's (within 4x)."""
    pytest.importorskip("aot_autograd")
    _needs_welford(device)
    from test_compile_fx import traced

    model = _bn_block(offset).to(device).train()
    reference, exact = copy.deepcopy(model), copy.deepcopy(model).double()
    x = torch.randn(4, 3, 12, 12).to(device).to(memory_format=torch.channels_last)
    compiled = inductor.compile_fx(traced(model), [x], options=backend_options())
    out = compiled(x)[0]
    expected = reference(x)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(model[1], name), getattr(reference[1], name), rtol=1e-5, atol=1e-5)
    for m, inputs in ((model, None), (reference, x), (exact, x.double())):
        (out if inputs is None else m(inputs)).pow(2).sum().backward()
    for (name, ours), theirs, truth in zip(model.named_parameters(), reference.parameters(), exact.parameters()):
        if name == "0.bias":
            continue
        scale = truth.grad.abs().max().item()
        eager_error = (theirs.grad.double() - truth.grad).abs().max().item()
        our_error = (ours.grad.double() - truth.grad).abs().max().item()
        assert our_error <= 4 * eager_error + 1e-6 * scale, (name, our_error, eager_error)
    assert splits
