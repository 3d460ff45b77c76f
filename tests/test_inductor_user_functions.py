"""Small functions a user writes, through `compiler.compile` with the default backend (inductor,
C++ kernels on CPU), against eager: outputs (values, dtypes, shapes; strides and storage where
eager returns a view of an input), inputs mutated in place, and gradients.

Each case is `(fn, make_inputs)`; `make_inputs()` returns fresh inputs, so eager and compiled
runs see equal values and neither sees the other's in-place writes.
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

import compiler


def floats(*shape, dtype=torch.float32):
    return lambda: torch.randn(*shape, dtype=dtype)


def ints(*shape, low=-9, high=9, dtype=torch.int64):
    return lambda: torch.randint(low, high, shape, dtype=dtype)


def several(*makers):
    return lambda: [make() for make in makers]


def one(make):
    return lambda: [make()]


def with_specials(*shape):
    """Floats with NaN, +-inf, +-0 planted in them."""
    def make():
        x = torch.randn(*shape).flatten()
        x[torch.randperm(x.numel())[:5]] = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0])
        return x.view(shape)
    return make


def index_of(n, *shape):
    return lambda: torch.randint(0, n, shape)


CASES = {
    # indexing
    "index_with_tensor": (lambda x, i: x[i], several(floats(6, 5), index_of(6, 4))),
    "index_two_dims_with_tensors": (lambda x, i, j: x[i, j] * 2, several(floats(6, 5), index_of(6, 3), index_of(5, 3))),
    "index_put_on_a_copy": (lambda x, i: x.clone().index_put_((i,), torch.tensor(0.5)), several(floats(6, 5), index_of(6, 3))),
    "gather": (lambda x, i: torch.gather(x, 1, i) + 1, several(floats(4, 6), index_of(6, 4, 3))),
    "scatter_add": (lambda x, i, s: x.scatter_add(1, i, s), several(floats(4, 6), index_of(6, 4, 3), floats(4, 3))),
    "slice_step_and_negative_index": (lambda x: x[:, ::2] + x[-1, 1::2], one(floats(5, 8))),
    "embedding": (lambda w, i: F.embedding(i, w).sum(-1), several(floats(10, 4), index_of(10, 2, 3))),
    # masks and where
    "masked_fill_with_scalar": (lambda x: x.masked_fill(x > 0, 0.5), one(floats(4, 5))),
    "where_tensor_and_scalar": (lambda x: torch.where(x > 0, x, 0.0), one(floats(4, 5))),
    "where_two_scalars": (lambda x: torch.where(x > 0, 1.0, -1.0), one(floats(4, 5))),
    "where_int_scalars": (lambda x: torch.where(x > 0, 3, -2), one(floats(4, 5))),
    "clamp_scalars": (lambda x: x.clamp(-0.5, 0.5) + x.clamp(min=0.1), one(floats(4, 5))),
    "nan_to_num": (lambda x: torch.nan_to_num(torch.log(x)), one(floats(4, 5))),
    # scans, sorting, selection (aten fallbacks)
    "cumsum": (lambda x: torch.cumsum(x, 1), one(floats(4, 5))),
    "cumsum_of_ints_is_int64": (lambda x: torch.cumsum(x, 0), one(ints(4, 5, dtype=torch.int32))),
    "cumprod": (lambda x: torch.cumprod(x, 1), one(floats(3, 4))),
    "sort": (lambda x: torch.sort(x, dim=-1), one(floats(4, 6))),
    "sort_descending_values_times_two": (lambda x: torch.sort(x, descending=True)[0] * 2, one(floats(4, 6))),
    "topk": (lambda x: torch.topk(x, 3), one(floats(4, 6))),
    "argmax_and_max_dim": (lambda x: (x.argmax(1), *x.max(0)), one(floats(4, 6))),
    # reductions
    "sum_mean_of_int_tensor": (lambda x: (x.sum(), x.float().mean(1)), one(ints(4, 6))),
    "var_std_with_correction": (lambda x: (x.var(1), x.std(0, correction=0)), one(floats(4, 6))),
    "logsumexp": (lambda x: torch.logsumexp(x, -1), one(floats(4, 6))),
    "softmax_dim0": (lambda x: torch.softmax(x, 0), one(floats(4, 6))),
    "any_all_of_bool": (lambda x: ((x > 0).any(1), (x > -3).all()), one(floats(4, 6))),
    "prod_dim": (lambda x: x.prod(1), one(floats(4, 3))),
    # integer and bool arithmetic
    "int_arithmetic": (lambda a, b: (a * 3 + b) - 7, several(ints(4, 5), ints(4, 5))),
    "int_floor_divide_negative": (lambda a: a // 4 + torch.div(a, -3, rounding_mode="floor"), one(ints(4, 5))),
    "int_trunc_divide": (lambda a: torch.div(a, 4, rounding_mode="trunc"), one(ints(4, 5))),
    "int_remainder_negative": (lambda a: (a % 4, torch.remainder(a, -3)), one(ints(4, 5))),
    "int_true_divide_is_float": (lambda a: a / 4, one(ints(4, 5))),
    "bool_logic": (lambda x, y: ((x > 0) & (y < 0)) | ~(x > y), several(floats(4, 5), floats(4, 5))),
    "bool_sum_is_int64": (lambda x: (x > 0).sum(1), one(floats(4, 5))),
    "bitwise_ints": (lambda a, b: (a & b) ^ (a | 3), several(ints(4, 5), ints(4, 5))),
    "abs_neg_of_int32": (lambda a: (-a).abs() * 2, one(ints(4, 5, dtype=torch.int32))),
    # type promotion
    "int_tensor_plus_python_float": (lambda a: a + 1.5, one(ints(4, 5))),
    "int32_times_python_int_stays_int32": (lambda a: a * 3, one(ints(4, 5, dtype=torch.int32))),
    "bool_plus_python_int": (lambda x: (x > 0) + 2, one(floats(4, 5))),
    "int32_plus_int64_tensor": (lambda a, b: a + b, several(ints(4, 5, dtype=torch.int32), ints(4, 5))),
    "uint8_plus_int8": (lambda a, b: a + b, several(ints(4, 5, low=0, high=200, dtype=torch.uint8), ints(4, 5, dtype=torch.int8))),
    "half_plus_float": (lambda a, b: a + b, several(floats(4, 5, dtype=torch.float16), floats(4, 5))),
    "bfloat16_math": (lambda a: torch.exp(a * 0.5) + a, one(floats(4, 5, dtype=torch.bfloat16))),
    "float_scalar_tensor_keeps_half": (lambda a: a * torch.tensor(2.5), one(floats(4, 5, dtype=torch.float16))),
    "float_to_int_cast": (lambda x: (x * 10).to(torch.int32), one(floats(4, 5))),
    "float64_inputs": (lambda x: torch.sigmoid(x) * x.sum(), one(floats(4, 5, dtype=torch.float64))),
    "pow_with_scalars": (lambda x: x.abs() ** 0.5 + 2 ** x, one(floats(4, 5))),
    "int_pow": (lambda a: a ** 2, one(ints(4, 5))),
    # wrap-around and narrow integer types: each op rounds to its dtype before the next reads it
    "uint8_subtract_wraps_before_compare": (lambda a, b: ((a - b) > 100, (a - b) // 3), several(ints(4, 5, low=0, high=255, dtype=torch.uint8), ints(4, 5, low=0, high=255, dtype=torch.uint8))),
    "int8_overflow_wraps": (lambda a: ((a * 3) > 0, (a + 100) * 2), one(ints(4, 5, low=-128, high=127, dtype=torch.int8))),
    "int16_product": (lambda a, b: (a * b) // 7, several(ints(4, 5, low=-300, high=300, dtype=torch.int16), ints(4, 5, low=-300, high=300, dtype=torch.int16))),
    "bool_add_is_logical_or": (lambda x, y: ((x > 0) + (y > 0)).to(torch.int32) * 5, several(floats(4, 5), floats(4, 5))),
    "bool_mul_then_sum": (lambda x, y: ((x > 0) * (y > 0)).sum(), several(floats(4, 5), floats(4, 5))),
    "int8_abs_of_minimum": (lambda a: a.abs(), one(lambda: torch.tensor([-128, -1, 0, 127], dtype=torch.int8))),
    "shifts": (lambda a: (a << 2) + (a >> 1), one(ints(4, 5))),
    "cumsum_of_bool": (lambda x: torch.cumsum(x > 0, 1), one(floats(4, 5))),
    "sum_of_int8_is_int64": (lambda a: a.sum(1), one(ints(4, 50, low=-128, high=127, dtype=torch.int8))),
    "half_sum_and_mean": (lambda a: (a.sum(1), a.mean(0)), one(floats(8, 300, dtype=torch.float16))),
    "bfloat16_softmax": (lambda a: torch.softmax(a, -1), one(floats(4, 33, dtype=torch.bfloat16))),
    "argmax_ties_take_first": (lambda a: (a.argmax(1), a.argmin(0)), one(ints(6, 7, low=0, high=3))),
    # NaN and infinities
    "max_min_with_nan": (lambda x, y: (torch.maximum(x, y), torch.minimum(x, y), torch.fmax(x, y)), several(with_specials(4, 6), with_specials(4, 6))),
    "amax_argmax_with_nan": (lambda x: (x.amax(1), x.argmax(1), x.max(), x.min(0)), one(with_specials(4, 6))),
    "relu_clamp_where_with_nan": (lambda x: (torch.relu(x), x.clamp(-1, 1), torch.where(x > 0, x, -x)), one(with_specials(4, 6))),
    "sort_with_nan": (lambda x: torch.sort(x, 1), one(with_specials(4, 6))),
    "softmax_with_inf": (lambda x: torch.softmax(x, 1), one(lambda: torch.tensor([[1.0, float("-inf"), 2.0], [float("-inf")] * 3, [0.0, 1.0, float("inf")]]))),
    "sign_and_signbit": (lambda x: (torch.sign(x), torch.signbit(x), x.abs()), one(with_specials(4, 6))),
    "isnan_isinf_nan_to_num": (lambda x: (x.isnan(), x.isinf(), torch.nan_to_num(x, nan=0.0, posinf=1.0)), one(with_specials(4, 6))),
    "float_floor_divide_and_remainder": (lambda x, y: (x // y, x % y, torch.fmod(x, y)), several(floats(4, 6), floats(4, 6))),
    # complex numbers (aten calls: kernels have no complex arithmetic)
    "complex_arguments": (lambda z, w: (z * w + 1, z.abs(), z.real * 2), several(floats(3, 4, dtype=torch.complex64), floats(3, 4, dtype=torch.complex64))),
    "view_as_complex_and_back": (lambda x: torch.view_as_real(torch.view_as_complex(x) ** 2) + 1, one(floats(3, 4, 2))),
    "fft_magnitude": (lambda x: torch.fft.rfft(x).abs() * 2, one(floats(3, 8))),
    # losses, norms and other composites users call
    "bce_with_logits": (lambda x, t: F.binary_cross_entropy_with_logits(x, t), several(floats(4, 6), lambda: torch.rand(4, 6))),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t), several(floats(4, 6), index_of(6, 4))),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), several(floats(4, 6), floats(4, 6))),
    "group_norm": (lambda x: F.group_norm(x, 2), one(floats(2, 4, 3, 3))),
    "rms_norm_by_hand": (lambda x: torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * x, one(floats(3, 8))),
    "masked_softmax": (lambda x, m: torch.softmax(x.masked_fill(~m, float("-inf")), -1), several(floats(2, 5), lambda: torch.rand(2, 5) > 0.3)),
    "rotary_halves": (lambda x: torch.cat((-x[..., 4:], x[..., :4]), -1) * torch.cos(x) + x * torch.sin(x), one(floats(2, 3, 8))),
    "pools_and_interpolate": (lambda x: F.interpolate(F.max_pool2d(x, 2) + F.avg_pool2d(x, 2), scale_factor=2), one(floats(2, 3, 8, 8))),
    "tril_and_one_hot": (lambda x, i: torch.tril(x) + F.one_hot(i, 5).float(), several(floats(5, 5), index_of(5, 5))),
    "addcmul_lerp_baddbmm": (lambda a, b, c: (torch.addcmul(a, b, c, value=0.5), torch.lerp(a, b, 0.3), torch.baddbmm(a.unsqueeze(0), b.unsqueeze(0), c.t().unsqueeze(0), beta=0.5)), several(floats(3, 3), floats(3, 3), floats(3, 3))),
    "zero_dim_tensor_arguments": (lambda x, s, i: x * s + i, several(floats(3, 4), lambda: torch.tensor(2.5), lambda: torch.tensor(3))),
    "norms": (lambda x: torch.linalg.vector_norm(x, dim=1) + x.norm(), one(floats(4, 6))),
    # constants made inside the function
    "tensor_constant": (lambda x: x + torch.tensor([1.0, 2.0, 3.0, 4.0]), one(floats(3, 4))),
    "int_tensor_constant": (lambda x: x * torch.tensor([1, -2, 3, 4]), one(floats(3, 4))),
    "arange_and_full": (lambda x: x + torch.arange(4) + torch.full((3, 4), 2.0), one(floats(3, 4))),
    "zeros_like_and_ones": (lambda x: torch.zeros_like(x) + torch.ones(4) * x, one(floats(3, 4))),
    # layouts
    "transposed_input": (lambda x, y: x.t() * y, several(lambda: torch.randn(5, 4), floats(4, 5))),
    "transposed_input_argument": (lambda x: torch.tanh(x) + 1, one(lambda: torch.randn(5, 4).t())),
    "strided_slice_argument": (lambda x: x * 2, one(lambda: torch.randn(4, 10)[:, ::3])),
    "expanded_argument": (lambda x: x + 1, one(lambda: torch.randn(1, 5).expand(4, 5))),
    "channels_last_argument": (lambda x: F.relu(x) * 2, one(lambda: torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last))),
    "conv_relu_on_channels_last": (lambda x, w: torch.relu(F.conv2d(x, w, padding=1)) * 2, several(lambda: torch.randn(2, 3, 6, 6).to(memory_format=torch.channels_last), floats(4, 3, 3, 3))),
    "offset_view_argument": (lambda x: x.exp(), one(lambda: torch.randn(20)[3:15].view(3, 4))),
    # empty and size-1 dims
    "zero_size_dim": (lambda x: (x * 2, x.sum(0), x.sum(1)), one(floats(0, 5))),
    "size_one_dims": (lambda x: torch.softmax(x, -1) + x.mean(0), one(floats(1, 5))),
    "scalar_tensor": (lambda x: x * 2 + 1, one(lambda: torch.randn(()))),
    "broadcast_size_one": (lambda x, y: x * y, several(floats(4, 1), floats(1, 5))),
    # shape ops
    "cat_promotes": (lambda a, b: torch.cat([a, b]), several(floats(2, 3), ints(2, 3))),
    "stack_and_flip": (lambda a, b: torch.stack([a, b.flip(0)], 1), several(floats(2, 3), floats(2, 3))),
    "pad_and_roll": (lambda x: torch.roll(F.pad(x, (1, 2)), 1, 0), one(floats(3, 4))),
    "repeat": (lambda x: x.repeat(2, 3), one(floats(2, 3))),
    "einsum": (lambda a, b: torch.einsum("ij,jk->ik", a, b), several(floats(3, 4), floats(4, 5))),
    # non-contiguous inputs through reductions and layout ops
    "reductions_of_transposed": (lambda x: (x.sum(0, keepdim=True), x.amax(1), x.argmax(0), torch.softmax(x, 0)), one(lambda: torch.randn(6, 5).t())),
    "cat_of_transposed_and_contiguous": (lambda a, b: torch.cat([a, b], 1) * 2, several(lambda: torch.randn(5, 4).t(), floats(4, 3))),
    "mean_of_channels_last": (lambda x: (x.mean((2, 3)), x.sum(1)), one(lambda: torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last))),
    "expand_then_reduce": (lambda x: x.expand(4, 3, 5).sum(0), one(floats(3, 5))),
    # fresh tensors filled in place inside the function
    "new_zeros_then_index_add": (lambda x, i: x.new_zeros(6, 3).index_add_(0, i, x), several(floats(4, 3), index_of(6, 4))),
    "empty_then_fill_and_add": (lambda x: torch.empty(3, 4).fill_(2.0).add_(x), one(floats(3, 4))),
    "clone_mutate_and_return_view": (lambda x: (lambda y: (y.mul_(2), y[1:]))(x.clone()), one(floats(3, 4))),
    # outputs
    "returns_view_of_input": (lambda x: x.view(-1), one(floats(3, 4))),
    "returns_transpose_of_input": (lambda x: x.t(), one(floats(3, 4))),
    "returns_slice_of_input": (lambda x: (x[1:], x * 2), one(floats(3, 4))),
    "returns_input_itself": (lambda x: (x, x + 1), one(floats(3, 4))),
    "returns_same_tensor_twice": (lambda x: (lambda y: (y, y))(x + 1), one(floats(3, 4))),
    "returns_intermediate_and_its_view": (lambda x: (lambda y: (y, y[0], y.t()))(x + 1), one(floats(3, 4))),
    "returns_non_tensors": (lambda x: (x * 2, x.shape[0], None, "label", 1.5), one(floats(3, 4))),
    "returns_dict_and_list": (lambda x: {"a": x + 1, "b": [x * 2, x.shape]}, one(floats(3, 4))),
    # mutation of inputs
    "add_in_place_on_input": (lambda x: x.add_(1), one(floats(3, 4))),
    "in_place_then_use": (lambda x: x.mul_(2).sum(), one(floats(3, 4))),
    "in_place_on_view_of_input": (lambda x: x[:, 0].mul_(3), one(floats(3, 4))),
    "in_place_index_put_on_input": (lambda x, i: x.index_put_((i,), torch.tensor(0.0)), several(floats(5, 4), index_of(5, 2))),
    "setitem_on_input": (lambda x: x.__setitem__(slice(0, 2), 0.0), one(floats(3, 4))),
    "in_place_int_input": (lambda a: a.add_(3), one(ints(3, 4))),
    "copy_into_input": (lambda x, y: x.copy_(y * 2), several(floats(3, 4), floats(3, 4))),
}


def _compare(actual, expected, inputs):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), type(actual)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        # Half types: inductor computes in float32 and rounds once, eager after every op.
        tolerances = {} if expected.dtype in (torch.float16, torch.bfloat16) else {"rtol": 1e-4, "atol": 1e-5}
        torch.testing.assert_close(actual, expected, equal_nan=True, **tolerances)
        return
    if isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            _compare(a, e, inputs)
        return
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys()
        for key in expected:
            _compare(actual[key], expected[key], inputs)
        return
    assert actual == expected, (actual, expected)


def _storage_of_input(t, inputs):
    """Which input `t` shares storage with, or None."""
    for k, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and t.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
            return k
    return None


def _flat_tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat_tensors(v)]
    return []


# The default backend writes C++ for CPU tensors; without a GPU, Triton's kernels run on CPU
# tensors in its interpreter (the root conftest switches it on then).
BACKEND_OPTIONS = {"cpp": {}}
if os.environ.get("TRITON_INTERPRET") == "1":
    BACKEND_OPTIONS["triton-interpret"] = {"cpu_backend": "triton"}


@pytest.mark.parametrize("backend", sorted(BACKEND_OPTIONS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_eager(name, backend):
    fn, make_inputs = CASES[name]
    torch.manual_seed(0)
    inputs = make_inputs()
    eager_inputs, ours_inputs = _like_layout(inputs), _like_layout(inputs)
    expected = fn(*eager_inputs)
    actual = compiler.compile(fn, options=BACKEND_OPTIONS[backend])(*ours_inputs)
    _compare(actual, expected, ours_inputs)
    for a, e in zip(ours_inputs, eager_inputs):
        _compare(a, e, ours_inputs)  # in-place writes reached the caller's tensors
    for a, e in zip(_flat_tensors(actual), _flat_tensors(expected)):
        aliased = _storage_of_input(e, eager_inputs)
        assert _storage_of_input(a, ours_inputs) == aliased, "eager returns a view of an input here"
        if aliased is not None:
            assert a.storage_offset() == e.storage_offset()
        if a.numel() > 1:  # eager's layout (a transposed or channels-last input's carries through)
            assert _strides_that_matter(a) == _strides_that_matter(e), (a.stride(), e.stride())
    assert _shared_storage(_flat_tensors(actual)) == _shared_storage(_flat_tensors(expected)), \
        "outputs that share memory in eager (a tensor and its view, one tensor twice) share it compiled"


def _strides_that_matter(t):
    """Strides of the dims longer than 1 (a size-1 dim's stride never moves the pointer)."""
    return [s for n, s in zip(t.shape, t.stride()) if n > 1]


def _shared_storage(tensors) -> set[tuple[int, int]]:
    pointers = [t.untyped_storage().data_ptr() for t in tensors]
    return {(i, j) for i in range(len(tensors)) for j in range(i) if pointers[i] == pointers[j] and tensors[i].numel()}


def _like_layout(inputs):
    """Copies of `inputs` with their strides and storage offsets (expanded ones stay expanded)."""
    copies = []
    for x in inputs:
        if not isinstance(x, torch.Tensor):
            copies.append(x)
            continue
        storage = torch.empty(x.untyped_storage().nbytes() // x.element_size(), dtype=x.dtype)
        storage.copy_(torch.as_strided(x, (storage.numel(),), (1,), 0))
        copies.append(torch.as_strided(storage, x.shape, x.stride(), x.storage_offset()))
    return copies


# In-place writes to a leaf that requires grad are an error in eager too.
MUTATING = {name for name in CASES if "in_place" in name or name in ("setitem_on_input", "copy_into_input")}


def _with_grad(inputs):
    return [x.requires_grad_() if isinstance(x, torch.Tensor) and x.dtype.is_floating_point else x for x in inputs]


def _loss(outputs, weights_seed: int):
    """A weighted sum of every differentiable output (weights from one seed, so equal for both runs)."""
    generator = torch.Generator().manual_seed(weights_seed)
    terms = [(t * torch.randn(t.shape, generator=generator, dtype=t.dtype)).sum()
             for t in _flat_tensors(outputs) if t.requires_grad]
    return sum(terms)


def _differentiable(name) -> bool:
    """Eager computes gradients for the case (floor_divide, for one, has no derivative)."""
    fn, make_inputs = CASES[name]
    if name in MUTATING:
        return False
    torch.manual_seed(0)
    outputs = fn(*_with_grad(_like_layout(make_inputs())))
    if not any(t.requires_grad for t in _flat_tensors(outputs)):
        return False
    try:
        _loss(outputs, 1).backward()
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(n for n in CASES if _differentiable(n)))
def test_gradients_match_eager(name):
    fn, make_inputs = CASES[name]
    torch.manual_seed(0)
    inputs = make_inputs()
    eager_inputs, ours_inputs = _with_grad(_like_layout(inputs)), _with_grad(_like_layout(inputs))
    _loss(fn(*eager_inputs), 1).backward()
    _loss(compiler.compile(fn)(*ours_inputs), 1).backward()
    for a, e in zip(ours_inputs, eager_inputs):
        if isinstance(e, torch.Tensor) and e.requires_grad and e.grad.dtype in (torch.float16, torch.bfloat16):
            # Eager's half-type backward rounds after every op, inductor's once: entries differ
            # by a few units in the last place of the gradient's largest ones (equally far
            # from the float64 gradient), whatever their own size.
            scale = e.grad.abs().max().item()
            torch.testing.assert_close(a.grad, e.grad, rtol=1.6e-2, atol=1.6e-2 * scale)
        elif isinstance(e, torch.Tensor) and e.requires_grad:
            _compare(a.grad, e.grad, ours_inputs)


# Functions called at several sizes: the second size makes the changed dims symbolic (one graph
# for every later size), so each later call runs kernels whose sizes are arguments.
SIZED = {
    "pointwise": (lambda x, y: torch.sigmoid(x) * y + 1, lambda n: [torch.randn(n, 6), torch.randn(n, 6)]),
    "broadcast_row": (lambda x, b: x + b, lambda n: [torch.randn(n, 6), torch.randn(6)]),
    "softmax_over_dynamic_dim": (lambda x: torch.softmax(x, -1), lambda n: [torch.randn(3, n)]),
    "sum_over_dynamic_dim": (lambda x: x.sum(0) + x.amax(0), lambda n: [torch.randn(n, 5)]),
    "mean_var_of_rows": (lambda x: (x.mean(1), x.var(1)), lambda n: [torch.randn(n, 7)]),
    "view_flatten": (lambda x: x.reshape(-1) * 2, lambda n: [torch.randn(n, 4)]),
    "view_split_dims": (lambda x: x.view(x.shape[0], 2, -1).sum(1), lambda n: [torch.randn(n, 8)]),
    "transpose_then_add": (lambda x: x.t() + 1, lambda n: [torch.randn(n, 5)]),
    "slice_by_size": (lambda x: x[: x.shape[0] // 2] * 3, lambda n: [torch.randn(n, 4)]),
    "cat_dynamic": (lambda x, y: torch.cat([x, y * 2], 0), lambda n: [torch.randn(n, 3), torch.randn(n + 1, 3)]),
    "index_with_tensor": (lambda x, i: x[i] + 1, lambda n: [torch.randn(n, 3), torch.randint(0, n, (n + 2,))]),
    "matmul": (lambda a, b: torch.relu(a @ b), lambda n: [torch.randn(n, 8), torch.randn(8, n)]),
    "layer_norm": (lambda x, w: F.layer_norm(x, (6,), w), lambda n: [torch.randn(n, 6), torch.randn(6)]),
    "cumsum_fallback": (lambda x: torch.cumsum(x, 0) * 2, lambda n: [torch.randn(n, 3)]),
    "arange_of_size": (lambda x: x + torch.arange(x.shape[0]).unsqueeze(1), lambda n: [torch.randn(n, 3)]),
    "int_math": (lambda a: (a * 3) // 2 % 5, lambda n: [torch.randint(-9, 9, (n, 4))]),
    "returns_size": (lambda x: (x * 2, x.shape[0] * 3), lambda n: [torch.randn(n, 3)]),
}


@pytest.mark.parametrize("backend", sorted(BACKEND_OPTIONS))
@pytest.mark.parametrize("name", sorted(SIZED))
def test_calls_at_new_sizes_match_eager(name, backend):
    fn, make_inputs = SIZED[name]
    compiled = compiler.compile(fn, options=BACKEND_OPTIONS[backend])
    torch.manual_seed(0)
    for n in (4, 7, 9, 16):
        inputs = make_inputs(n)
        _compare(compiled(*inputs), fn(*inputs), inputs)
