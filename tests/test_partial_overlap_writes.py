"""Writes whose target shares memory with what the op reads: compiled must raise exactly when
eager raises ("unsupported operation: some elements of the input tensor and the written-to
tensor refer to a single memory location", or "more than one element of the written-to tensor"
for an expanded target), and give eager's values when eager goes ahead.

Eager classifies each written tensor against the op's other tensor arguments
(aten/src/ATen/MemoryOverlap.cpp: the same tensor, the same elements, in part, none, or too
hard to tell) and each op refuses some of those. Meta kernels skip the checks, so aot_eager
and inductor returned a value for `b[:-1].add_(b[1:])`. Each case below runs under every
backend on the first call, a cache hit with new values and a new size, static and dynamic;
some cases overlap differently at different sizes, so a later call must not reuse the first
call's verdict.
"""

from __future__ import annotations

import pytest
import torch

import compiler

BACKENDS = ["eager", "aot_eager", "inductor"]


def _index(b):
    return torch.tensor([0, 2, 1], device=b.device)


# name -> (program, sizes of the calls). Each program takes one 1-d input `b` of the size.
ONE_INPUT = {
    # TensorIterator ops: partial overlap refused, the same elements (or the same tensor) allowed.
    "add_ of two overlapping slices": lambda b: b[:-1].add_(b[1:]),
    "add_ of disjoint slices": lambda b: b[:3].add_(b[3:6]),
    "add_ of a tensor to itself": lambda b: b.add_(b),
    "add_ of two slices over the same elements": lambda b: b[:4].add_(b[:4]),
    "add out= an overlapping slice": lambda b: torch.add(b[1:], b[:-1], out=b[:-1]),
    "exp out= an overlapping slice": lambda b: torch.exp(b[1:], out=b[:-1]),
    "where out= an overlapping slice": lambda b: torch.where(b[1:] > 0, b[1:], 0.0, out=b[:-1]),
    "lerp_ of overlapping slices": lambda b: b[:-1].lerp_(b[1:], 0.5),
    "mul_ of a matrix by its transpose": lambda b: b[:4].view(2, 2).mul_(b[:4].view(2, 2).t()),
    # Strided views whose spans interleave: eager cannot tell (too hard) and goes ahead.
    "add_ of interleaved strided slices": lambda b: b[:4].view(2, 2)[:, 0].add_(b[:4].view(2, 2)[:, 1]),
    # Too hard for eager too, but they share elements: its loop reads what it wrote.
    "add_ of strided views sharing elements": lambda b: b.as_strided((3,), (2,), 2).add_(b.as_strided((3,), (2,), 0)),
    "copy_ of two overlapping slices": lambda b: b[:-1].copy_(b[1:]),
    "copy_ of a tensor to itself": lambda b: b.copy_(b),
    "copy_ of two slices over the same elements": lambda b: b[:4].copy_(b[:4]),
    "copy_ of a transpose over the same elements": lambda b: b[:4].view(2, 2).copy_(b[:4].view(2, 2).t()),
    "setitem of a slice from an overlapping slice": lambda b: b.__setitem__(slice(1, None), b[:-1]),
    "sort out= an overlapping slice": lambda b: torch.sort(
        b[1:], out=(b[:-1], torch.empty(0, dtype=torch.long, device=b.device))
    ),
    # Ops with their own checks.
    "index_add_ of an overlapping slice": lambda b: b[:-1].index_add_(0, _index(b), b[1:4]),
    "index_add_ of the tensor itself": lambda b: b[:3].index_add_(0, _index(b), b[:3]),
    "index_copy_ of an overlapping slice": lambda b: b[:-1].index_copy_(0, _index(b), b[1:4]),
    "scatter_add_ of an overlapping slice": lambda b: b[:-1].scatter_add_(0, _index(b), b[1:4]),
    "put_ of an overlapping slice": lambda b: b[:-1].put_(_index(b), b[1:4]),
    "index_put_ of an overlapping slice": lambda b: b[:-1].index_put_((_index(b),), b[1:4]),
    "setitem of an overlapping slice": lambda b: b[:-1].__setitem__(_index(b), b[1:4]),
    "gather out= an overlapping slice": lambda b: torch.gather(b, 0, _index(b), out=b[1:4]),
    "cat out= an overlapping slice": lambda b: torch.cat([b[:2], b[2:4]], out=b[1:5]),
    # Ops eager lets write over their input.
    "sum out= an overlapping slice": lambda b: torch.sum(b[:6].view(2, 3), 0, out=b[1:4]),
    "mm out= an overlapping slice": lambda b: torch.mm(b[:4].view(2, 2), b[2:6].view(2, 2), out=b[1:5].view(2, 2)),
    "masked_scatter_ of an overlapping slice": lambda b: b[:-1].masked_scatter_(b[:-1] > 0, b[1:]),
}


@pytest.mark.gpu
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ONE_INPUT)
def test_write_over_views_of_a_cuda_input_matches_eager(case, backend):
    """The same writes on CUDA tensors: eager is asked on CPU stand-ins, and CUDA's kernels
    must refuse (and compute) as the CPU's do."""
    write = ONE_INPUT[case]

    def program(b):
        b.mul_(0.5)
        write(b)
        return b * 2

    _differential(program, _fresh(8, 8, 11, device="cuda"), backend, dynamic=False)


# Writes between blocks, rows and columns of one square matrix `x`.
MATRIX = {
    "copy_ of a row broadcast over its matrix": lambda x: x.copy_(x[0]),
    "clamp_ of a column by another column": lambda x: x[:, 0].clamp_(min=x[:, 1]),
    "addmm out= its own self": lambda x: torch.addmm(x[:2, :2], x[:2, 2:4], x[2:4, :2], out=x[:2, :2]),
    "addmm out= its first factor": lambda x: torch.addmm(x[2:4, 2:4], x[:2, :2], x[2:4, :2], out=x[:2, :2]),
    "bmm out= its first factor": lambda x: torch.bmm(x[None], x[None].clone(), out=x[None]),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", MATRIX)
def test_write_between_parts_of_a_matrix_matches_eager(case, backend, dynamic):
    write = MATRIX[case]

    def program(x):
        write(x)
        return x * 2

    calls = [lambda n=n: [torch.randn(n, n)] for n in (4, 4, 5)]
    _differential(program, calls, backend, dynamic)


# Values the program made: writes into them, and into expanded ones.
INTERMEDIATE = {
    "add_ of an intermediate's overlapping slices": lambda c: c[:-1].add_(c[1:]),
    "copy_ of an intermediate's overlapping slices": lambda c: c[1:].copy_(c[:-1]),
    "add_ of an intermediate's disjoint slices": lambda c: c[:3].add_(c[3:6]),
    "add_ into an expanded intermediate": lambda c: c[:1].expand(3).add_(1.0),
    "relu_ of an expanded intermediate": lambda c: c[:1].expand(3).relu_(),
    "fill_ of an expanded intermediate": lambda c: c[:1].expand(3).fill_(2.0),
    "add out= an expanded intermediate": lambda c: torch.add(c[:3], 1.0, out=c[:1].expand(3)),
}


def _outcome(fn, args):
    """("raised", (type, first line), the arguments after) or ("returned", value, the
    arguments after): writes made before the refused one stay, in eager and compiled."""
    try:
        value = fn(*args)
    except Exception as error:  # noqa: BLE001  (compared with what the other side raised)
        return "raised", (type(error), str(error).splitlines()[0]), args
    return "returned", value, args


def _assert_same(actual, expected, what):
    assert actual[0] == expected[0], f"{what}: compiled {actual[0]} {actual[1]}, eager {expected[0]} {expected[1]}"
    if expected[0] == "raised":
        (actual_type, actual_message), (expected_type, expected_message) = actual[1], expected[1]
        assert actual_type is expected_type and actual_message.startswith(expected_message), (
            f"{what}: {actual[1]} vs {expected[1]}"
        )
    else:
        torch.testing.assert_close(actual[1], expected[1], msg=lambda m: f"{what}: {m}")
    torch.testing.assert_close(actual[2], expected[2], msg=lambda m: f"{what}, arguments after: {m}")


def _differential(program, calls, backend, dynamic):
    """`calls`: a list of functions of nothing returning fresh inputs (the same values are
    given to eager and to the compiled program)."""
    compiled = compiler.compile(program, backend=backend, dynamic=dynamic)
    for index, make in enumerate(calls):
        inputs = make()
        expected = _outcome(program, _cloned(inputs))
        actual = _outcome(compiled, _cloned(inputs))
        _assert_same(actual, expected, f"call {index}")


def _cloned(inputs):
    """A copy of `inputs` that keeps how they share memory (views of one buffer stay views)."""
    bases = {}
    copies = []
    for tensor in inputs:
        base = tensor._base if tensor._base is not None else tensor
        if id(base) not in bases:
            bases[id(base)] = base.clone()
        copies.append(bases[id(base)].as_strided(tensor.shape, tensor.stride(), tensor.storage_offset()))
    return copies


def _fresh(*sizes, device="cpu"):
    return [lambda n=n: [torch.randn(n, device=device)] for n in sizes]


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ONE_INPUT)
def test_write_over_views_of_an_input_matches_eager(case, backend, dynamic):
    write = ONE_INPUT[case]

    def program(b):
        b.mul_(0.5)  # a write before the refused one stays done, in eager and compiled
        write(b)
        return b * 2

    _differential(program, _fresh(8, 8, 11), backend, dynamic)


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", INTERMEDIATE)
def test_write_over_views_of_an_intermediate_matches_eager(case, backend, dynamic):
    write = INTERMEDIATE[case]

    def program(b):
        c = b + 1
        write(c)
        return c * 2, b

    _differential(program, _fresh(8, 8, 11), backend, dynamic)


def test_overlap_known_only_at_each_size_is_decided_per_size_with_dynamic_sizes():
    """`b[:4]` against `b[n-6 : n-2]`: the same elements at n = 6 (allowed), in part at n = 8
    (refused), none at n = 12 (allowed). Traced once at n = 12 with symbolic n, the verdict
    must be guarded, not reused at n = 8."""

    def program(b):
        k = b.shape[0] - 6
        b[:4].add_(b[k : k + 4])
        return b * 2

    for backend in BACKENDS:
        _differential(program, _fresh(12, 12, 8, 6, 10, 13), backend, dynamic=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_that_are_overlapping_views_of_one_buffer_match_eager(backend):
    """x and y passed as two arguments: windows of one buffer that overlap in part (refused),
    are disjoint (allowed), or unrelated tensors; in each order, so a cached graph for one
    kind of arguments must not answer for another."""

    def program(x, y):
        x.add_(y)
        return x * 2

    def windows(n, shift):
        def make():
            buffer = torch.randn(2 * n)
            return [buffer[:n], buffer[shift : shift + n]]

        return make

    def unrelated(n):
        return lambda: [torch.randn(n), torch.randn(n)]

    calls = [unrelated(5), windows(5, 5), windows(5, 1), unrelated(5), windows(5, 2), windows(7, 7), windows(7, 3)]
    for dynamic in (False, True):
        _differential(program, calls, backend, dynamic)
        _differential(program, calls[::-1], backend, dynamic)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_allowed_writes_over_views_keep_gradients(backend):
    """Writes eager allows between views of a value that needs gradients: the gradient of
    the input is eager's (first call, cache hit, new size)."""

    def program(x):
        c = x * 2
        c[:3].add_(c[3:6])
        c[:4].add_(c[:4])
        return (c * c).sum()

    compiled = compiler.compile(program, backend=backend)
    for n in (8, 8, 11):
        x = torch.randn(n)
        expected_x, actual_x = x.clone().requires_grad_(), x.clone().requires_grad_()
        program(expected_x).backward()
        compiled(actual_x).backward()
        torch.testing.assert_close(actual_x.grad, expected_x.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_refusal_names_the_users_line(backend):
    def program(b):
        x, y = b[:-1], b[1:]
        x.add_(y)
        return b * 2

    with pytest.raises(RuntimeError, match="unsupported operation: some elements") as error:
        compiler.compile(program, backend=backend)(torch.randn(6))
    frames = [frame.name for frame in error.traceback]
    assert "program" in frames


def test_a_write_only_eager_can_run_is_explained_under_fullgraph():
    """fullgraph=True cannot break the graph at `torch.mm(a, b, out=a)` where eager computes
    it in place, reading what it wrote: the error says so, at the user's line. Whether eager
    does depends on the BLAS library and the CPU (MKL on an AVX-512 machine reads first): where
    it reads first, the graph computes what eager does."""

    def program(a, b):
        torch.mm(a, b, out=a)
        return a * 2

    a, b = torch.randn(3, 3), torch.randn(3, 3)
    read_first = a @ b
    expected = program(a.clone(), b)
    if torch.equal(expected, read_first * 2):
        torch.testing.assert_close(compiler.compile(program, fullgraph=True)(a.clone(), b), expected)
        return
    with pytest.raises(Exception, match="mm runs only as eager runs it: .*clone\\(\\) the overlapping") as error:
        compiler.compile(program, fullgraph=True)(a.clone(), b)
    assert "program" in str(error.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlap_decided_by_a_data_dependent_offset_matches_eager(backend):
    """`b[:4]` against `b[k:k+4]` with k read from a tensor: the same elements at k = 0,
    some at k = 2, none at k = 4. No one graph is right for every k: the write runs as eager
    runs it, and raises exactly when eager does."""

    def program(b, n):
        k = n.item()
        torch._check(k >= 0)
        torch._check(k + 4 <= b.shape[0])
        b[:4].add_(b[k : k + 4])
        return b * 2

    def call(k):
        return lambda: [torch.randn(10), torch.tensor(k)]

    with compiler.config.patch(capture_scalar_outputs=True):
        _differential(program, [call(4), call(4), call(2), call(0), call(3)], backend, dynamic=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_into_a_tensor_expanded_to_a_data_dependent_size_matches_eager(backend):
    """fill_ of `c[:1].expand(k)`, k read from a tensor: eager allows it at every k, and the
    write runs as eager runs it (aot_autograd refused the graph)."""

    def program(b, n):
        k = n.item()
        torch._check(k >= 0)
        c = b * 1
        c[:1].expand(k).fill_(3.0)
        return c

    def call(k):
        return lambda: [torch.randn(4), torch.tensor(k)]

    with compiler.config.patch(capture_scalar_outputs=True):
        _differential(program, [call(3), call(3), call(5), call(1)], backend, dynamic=False)
