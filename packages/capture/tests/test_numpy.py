"""NumPy inside compiled functions: ndarrays are traced tensors seen through numpy's API
(torch._numpy), as under torch.compile. Each case is compared with eager numpy (dtypes and
values) on the first call, on a cache hit with new values and at a new size, with
fullgraph=True; a numpy call torch._numpy does not implement breaks the graph, naming it."""

from __future__ import annotations

import capture
import numpy as np
import pytest
import torch
from helpers import cache_of, captures

BACKENDS = {"eager": capture.backends.eager}
try:
    from aot_autograd import aot_eager

    BACKENDS["aot_eager"] = aot_eager
except ImportError:  # capture's own tests run without aot_autograd installed
    pass


def assert_same_numpy(actual, expected, path="result"):
    """ndarrays and numpy scalars: same dtype, close values, and an ndarray (or scalar) back;
    a 0-d ndarray stands for a numpy scalar, as under torch.compile."""
    if isinstance(expected, (np.ndarray, np.generic)):
        assert isinstance(actual, (np.ndarray, np.generic)), f"{path}: got {type(actual).__name__}"
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6, err_msg=path)
    elif isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{path}: got {type(actual).__name__}"
        torch.testing.assert_close(actual, expected, msg=lambda m: f"{path}: {m}")
    elif isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected), f"{path}: {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_numpy(a, e, f"{path}[{i}]")
    else:
        assert type(actual) is type(expected) and actual == expected, f"{path}: {actual!r} != {expected!r}"


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def check_numpy(fn, make_args, backend, sizes=(4, 4, 6)):
    """fullgraph: no break; one capture per size (the arguments after the call compared too:
    writes through an ndarray reach the tensor or array it shares memory with)."""
    compiled = capture.optimize(fn, BACKENDS[backend], fullgraph=True)
    for size in sizes:
        args = make_args(size)
        eager_args = _copy(args)
        expected = fn(*eager_args)
        assert_same_numpy(compiled(*args), expected)
        assert_same_numpy(args, eager_args, "arguments after the call")
    assert captures(compiled) == len(set(sizes))
    assert not cache_of(compiled).compilation.breaks
    return compiled


def tensor(size):
    return (torch.randn(size, 4),)


def array32(size):
    return (np.random.randn(size, 4).astype(np.float32),)


def ufuncs_and_arithmetic(x):
    a = x.numpy()
    b = np.sin(a) * 2 + np.exp(-a) / (1 + a**2) - abs(a) + np.maximum(a, 0.5) - -a
    return torch.from_numpy(b), (a > 0) & (a < 1)


def reductions(x):
    a = x.numpy()
    return a.sum(axis=0), a.mean(), a.max(axis=1), np.std(a, axis=1), a.argmax(axis=0), np.cumsum(a, axis=1)


def reshape_and_transpose(x):
    a = x.numpy()
    return a.reshape(-1, 2), a.T, np.transpose(a), a.ravel(), a.shape, a.ndim, a.size, a[None].squeeze(0)


def indexing_and_writes(x):
    a = x.numpy()
    part = a[1:3, ::2] + a[1:3, 0][:, None] + a[-1, ::2]
    a[0] = 7.0  # writes into x, as eager numpy() shares memory
    a[:, 1] += 1.0
    return part, x


def creation_from_constants(x):
    a = x.numpy()
    n = a.shape[0]
    made = (np.zeros(n), np.ones((2, n), dtype=np.float32), np.arange(n), np.linspace(0, 1, n), np.eye(n), np.full((2, n), 2.5), np.full(n, 7))
    return made, a + np.zeros((n, 4))  # float32 + numpy's default float64


def joining_and_selecting(a):
    return np.concatenate([a, a * 2]), np.stack([a, a], axis=1), np.where(a > 0, a, 0.0), np.clip(a, -0.5, 0.5)


def dtypes_and_limits(a):
    eps = np.finfo(a.dtype).eps
    return (
        a.astype(np.float64), a.astype(np.int32), a.dtype, str(a.dtype), a * eps, np.iinfo(np.int32).max,
        np.float32(a), a * np.float64(2.0), a * 2.0,
    )  # fmt: skip


def matmul_linalg_fft(a):
    return a @ a.T, np.dot(a.T, a), np.linalg.norm(a), np.linalg.norm(a, axis=1), np.fft.fft(a), np.fft.rfft(a, axis=0)


def array_in_tensor_out(a):
    copy = torch.tensor(a, dtype=torch.float64)
    copy.add_(1)  # a copy: the array is unchanged
    return torch.as_tensor(a) + 1, torch.from_numpy(a) * 2, copy, torch.tensor(a)


def array_in_array_out(a):
    return a, a * 2, a.sum(axis=1)


CASES = {
    "ufuncs_and_arithmetic": (ufuncs_and_arithmetic, tensor),
    "reductions": (reductions, tensor),
    "reshape_and_transpose": (reshape_and_transpose, tensor),
    "indexing_and_writes": (indexing_and_writes, tensor),
    "creation_from_constants": (creation_from_constants, tensor),
    "joining_and_selecting": (joining_and_selecting, array32),
    "dtypes_and_limits": (dtypes_and_limits, array32),
    "matmul_linalg_fft": (matmul_linalg_fft, array32),
    "array_in_tensor_out": (array_in_tensor_out, array32),
    "array_in_array_out": (array_in_array_out, array32),
}


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("case", list(CASES))
def test_numpy_code_is_traced_like_eager(case, backend):
    fn, make_args = CASES[case]
    check_numpy(fn, make_args, backend)


def test_traced_numpy_records_torch_operations():
    def fn(x):
        return torch.from_numpy(np.sin(x.numpy()) + 1)

    compiled = capture.optimize(fn, capture.backends.eager, fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), fn(x))
    graph = cache_of(compiled).entries[0].graph_module
    targets = [repr(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    assert targets == ["numpy.sin", "ndarray.__add__"]


def test_array_input_is_guarded_on_dtype_and_shape():
    def fn(a):
        return a * 2

    compiled = capture.optimize(fn, capture.backends.eager, fullgraph=True)
    for array in (np.ones(3, np.float32), np.ones(3, np.float64), np.ones(3, np.float32), np.ones((2, 3), np.float32)):
        assert_same_numpy(compiled(array.copy()), fn(array))
    assert captures(compiled) == 3


def test_array_returned_shares_memory_with_tensor():
    def fn(x):
        return x.numpy()

    x = torch.randn(3)
    result = capture.optimize(fn, capture.backends.eager, fullgraph=True)(x)
    assert isinstance(result, np.ndarray)
    result[0] = 5.0
    assert x[0] == 5.0


def test_numpy_scalar_mixes_with_tensor_as_eager_torch():
    def fn(x):
        return x * np.float32(0.5) + np.int64(3), x * np.pi

    check_args = lambda: (torch.randn(3, dtype=torch.float16),)  # noqa: E731
    compiled = capture.optimize(fn, capture.backends.eager, fullgraph=True)
    for _ in range(2):
        (x,) = check_args()
        assert_same_numpy(compiled(x), fn(x))


def test_untraced_numpy_function_breaks_the_graph_naming_it():
    def fn(x):
        a = x.numpy() * 2
        return torch.from_numpy(np.interp(a, [0.0, 1.0], [1.0, 2.0])) + 1

    with pytest.raises(capture.Unsupported, match="numpy.interp"):
        capture.optimize(fn, capture.backends.eager, fullgraph=True)(torch.randn(4))
    compiled = capture.optimize(fn, capture.backends.eager)
    for _ in range(2):
        x = torch.randn(4)
        assert_same_numpy(compiled(x), fn(x.clone()))
    reasons = [b.reason for b in cache_of(compiled).compilation.breaks]
    assert any("numpy.interp" in r for r in reasons), reasons


def test_numpy_random_breaks_the_graph():
    def fn(x):
        return x + torch.from_numpy(np.random.rand(3))

    with pytest.raises(capture.Unsupported, match="rand"):
        capture.optimize(fn, capture.backends.eager, fullgraph=True)(torch.randn(3))


# torch._numpy's dtype differs from numpy's for these; numpy's own answer decides (a wider
# result is cast to it, a narrower one breaks the graph): never a silently different dtype.
DTYPE_DIFFERENCES = {
    "square_of_int32_is_int32": (lambda a: np.square(a.astype(np.int32)), False),
    "all_of_uint8_is_bool": (lambda a: (a > 0).astype(np.uint8).all(axis=1), False),
    "fft_of_float32_is_complex64": (lambda a: np.fft.fft(a), False),
    "einsum_of_int8_is_int8": (lambda a: np.einsum("ij,ij->i", a.astype(np.int8), a.astype(np.int8)), False),
    "true_divide_of_int32_is_float64": (lambda a: (a.astype(np.int32) / 2, np.divide(a.astype(np.int8), 3)), False),
    "cumsum_of_int8_is_int64": (lambda a: np.cumsum(a.astype(np.int8)), True),
    "sum_of_uint8_is_uint64": (lambda a: a.astype(np.uint8).sum(), True),
    "median_without_axis_is_0d": (lambda a: np.median(a), True),
}


@pytest.mark.parametrize("case", list(DTYPE_DIFFERENCES))
def test_result_dtype_is_numpy_s(case):
    fn, breaks = DTYPE_DIFFERENCES[case]
    compiled = capture.optimize(fn, capture.backends.eager)
    for size in (4, 4, 6):
        (a,) = array32(size)
        a *= 10
        assert_same_numpy(compiled(a.copy()), fn(a))
    reasons = [b.reason for b in cache_of(compiled).compilation.breaks]
    assert bool(reasons) == breaks, reasons
    assert all("where numpy gives" in r for r in reasons), reasons  # the dtype or the ndim


def test_numpy_scalar_inputs_are_guarded_by_value():
    def fn(x, s, k):
        return x * s + k

    compiled = capture.optimize(fn, capture.backends.eager, fullgraph=True)
    for n in (2, 2, 3):
        x, s, k = torch.randn(3), np.float64(n / 2), np.int64(n)  # new objects on every call
        torch.testing.assert_close(compiled(x, s, k), fn(x, s, k))
    assert captures(compiled) == 2


def test_array_subclass_and_negative_strides_are_left_to_eager():
    def fn(a):
        return a * 2 + 1

    compiled = capture.optimize(fn, capture.backends.eager)
    for array in (np.ma.masked_array(np.arange(4.0), mask=[0, 1, 0, 0]), np.arange(4.0)[::-1]):
        assert_same_numpy(compiled(array), fn(array))
        assert type(compiled(array)) is type(fn(array))


def test_ndarray_lives_across_a_graph_break():
    def fn(x):
        a = x.numpy() * 2
        print("break")
        return torch.from_numpy(a + 1), a

    compiled = capture.optimize(fn, capture.backends.eager)
    for size in (3, 3, 5):
        x = torch.randn(size)
        assert_same_numpy(compiled(x), fn(x))
    reasons = [b.reason for b in cache_of(compiled).compilation.breaks]
    assert reasons and all(r.startswith("print()") for r in reasons), reasons


def test_writes_reach_the_array_passed_in():
    def fn(a):
        a[0] = 1.0
        a *= 2
        return a.sum()

    compiled = capture.optimize(fn, capture.backends.eager, fullgraph=True)
    for size in (3, 3):
        a = np.random.randn(size)
        expected_array = a.copy()
        expected = fn(expected_array)
        assert_same_numpy(compiled(a), expected)
        np.testing.assert_allclose(a, expected_array)


def test_tensor_operator_takes_an_array_as_a_tensor():
    def fn(x):
        return x + x.numpy().astype(np.float64), x * x.numpy().mean(), x - x.numpy()[0]

    check_numpy(fn, tensor, "eager")


def test_array_operator_with_a_tensor_is_left_to_eager():
    def fn(x):
        return x.numpy() + x  # numpy gives way, torch's reflected + raises TypeError

    compiled = capture.optimize(fn, capture.backends.eager)
    with pytest.raises(TypeError):
        fn(torch.randn(3))
    with pytest.raises(TypeError):
        compiled(torch.randn(3))


def test_array_input_sizes_become_dynamic_after_a_change():
    def fn(a):
        return a * 2 + a.sum(axis=0)

    compiled = capture.optimize(fn, capture.backends.eager, fullgraph=True)
    for size in (3, 5, 8, 9):
        a = np.random.randn(size, 2)
        assert_same_numpy(compiled(a), fn(a))
    assert captures(compiled) == 2  # static, then symbolic in the size that changed


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_of_python_numbers_is_a_numpy_scalar_across_a_break(backend):
    # VITS: `constant = np.log(np.exp(1 - min_derivative) - 1)` written into a tensor, then a
    # data-dependent write breaks the graph. Traced, the constant came back as a 0-d ndarray,
    # which Tensor.__setitem__ refuses.
    def fn(x, d, min_derivative=1e-3):
        constant = np.log(np.exp(1 - min_derivative) - 1)
        d = torch.nn.functional.pad(d, pad=(1, 1))
        d[..., 0] = constant
        out = torch.zeros_like(x)
        out[x > 0] = x[x > 0] * 2
        return out, d, constant

    compiled = capture.optimize(fn, BACKENDS[backend])
    for size in (3, 3, 5):
        x, d = torch.randn(4, size), torch.randn(4, size)
        got, want = compiled(x, d), fn(x, d)
        assert type(got[2]) is type(want[2]) is np.float64 and got[2] == want[2]
        for a, e in zip(got[:2], want[:2]):
            torch.testing.assert_close(a, e)
