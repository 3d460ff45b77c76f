"""Symbolic sizes that a torch function written in Python turns into tensor data itself
(`torch.unravel_index(idx, shape)` divides by `torch.tensor(coefs)` and takes the remainder
of `torch.tensor(shape)`), on every backend, against eager on the first call, a cache hit
with new values and a new size.

aot_autograd traced only the graph's own `torch.tensor` calls as ops on the sizes: the one
inside unravel_index ran with the torch-function modes off and reached torch's C++
conversion, which bakes in the value and keeps its low 32 bits (a size of 2**33 + 5 became 5,
2**40 became 0: a division by zero). Torch before 2.12 lacks the skip of one dispatch the
trace uses to see inside such functions; each test runs with its stand-in as well."""

from __future__ import annotations

import pytest
import torch

import compiler

BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.fixture(autouse=True, params=["torch_redispatch", "copy_redispatch"])
def redispatch(request, monkeypatch):
    """Each test with torch's redispatch_function (where this torch has it) and with the stand-in
    for torch 2.11, which the GPU machine runs."""
    from aot_autograd.tracing import tensor_data

    if request.param == "copy_redispatch":
        monkeypatch.setattr(tensor_data, "_redispatch", tensor_data._redispatch_by_copy)
    elif not hasattr(torch.overrides, "redispatch_function"):
        pytest.skip("this torch has no redispatch_function")


def unravel_by_shape(idx, x):
    return torch.unravel_index(idx, x.shape)


def unravel_by_ints(idx, shape):
    return torch.unravel_index(idx, shape)


def _assert_same(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=0, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unravel_index_over_a_tensors_symbolic_sizes(backend):
    compiler.reset()
    compiled = compiler.compile(unravel_by_shape, backend=backend, dynamic=True)
    # Expanded tensors: sizes past 32 bits without the memory.
    for shape in [(3, 2**33 + 5), (3, 2**33 + 5), (5, 2**40 + 1), (4, 7)]:
        x = torch.empty(1, 1).expand(*shape)
        idx = torch.randint(0, min(x.numel(), 2**62), (6,))
        _assert_same(compiled(idx, x), unravel_by_shape(idx, x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unravel_index_over_changing_int_sizes(backend):
    compiler.reset()
    compiled = compiler.compile(unravel_by_ints, backend=backend, dynamic=True)
    for shape in [(1, 2**63 - 1), (1, 2**63 - 1), (2, 2**40), (6, 2, 5)]:
        idx = torch.randint(0, 2**62, (5,)) % torch.tensor(shape).prod()
        _assert_same(compiled(idx, shape), unravel_by_ints(idx, shape))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_python_tensor_method_reaching_itself_again_is_traced_once(backend):
    # Tensor.unflatten (Python) calls super().unflatten, which torch dispatches as
    # Tensor.unflatten again: run with the mode pushed each time, it recursed without end.
    compiler.reset()
    fn = lambda x: x.unflatten(1, (2, x.shape[1] // 2)).sum(-1)  # noqa: E731
    compiled = compiler.compile(fn, backend=backend, dynamic=True)
    for n in (4, 4, 10):
        x = torch.randn(3, n)
        torch.testing.assert_close(compiled(x), fn(x))
