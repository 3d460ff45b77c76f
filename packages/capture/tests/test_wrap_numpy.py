"""wrap_numpy (torch.compiler.wrap_numpy): a NumPy function compiled as one of tensors, its
gradients flowing through the NumPy code; compared with torch.compile of torch's wrap_numpy on
fresh values, at a cache hit and at a new size."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import capture


def norm_squared(a):
    return np.sum(a * a)


def two_outputs(a, b):
    return {"mixed": np.tanh(a) + b, "reduced": (a.max(axis=0), a.shape[0])}


def scaled(a, *, scale):
    return [np.exp(a) * scale, a.T @ a]


CASES = {
    "norm_squared": (norm_squared, lambda n: ((torch.randn(n, requires_grad=True),), {})),
    "two_outputs": (two_outputs, lambda n: ((torch.randn(n, 3, requires_grad=True), torch.randn(3)), {})),
    "keyword_tensor": (scaled, lambda n: ((torch.randn(n, 2, requires_grad=True),), {"scale": torch.tensor(0.5)})),
}


def _tensors(tree):
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, dict):
        tree = list(tree.values())
    if isinstance(tree, (list, tuple)):
        return [t for item in tree for t in _tensors(item)]
    return []


@pytest.mark.parametrize("name", CASES)
def test_wrap_numpy_matches_torch_compile_with_gradients(name):
    fn, make = CASES[name]
    ours = capture.optimize(capture.wrap_numpy(fn), capture.backends.eager, fullgraph=True)
    reference = torch.compile(torch.compiler.wrap_numpy(fn), backend="eager", fullgraph=True)
    for n in (4, 4, 6):
        args, kwargs = make(n)
        twins = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
        got, expected = ours(*args, **kwargs), reference(*twins, **kwargs)
        assert type(got) is type(expected)
        got_tensors, expected_tensors = _tensors(got), _tensors(expected)
        for g, e in zip(got_tensors, expected_tensors, strict=True):
            torch.testing.assert_close(g, e)
        sum(t.sum() for t in got_tensors if t.requires_grad).backward()
        sum(t.sum() for t in expected_tensors if t.requires_grad).backward()
        for a, t in zip(args, twins):
            if a.requires_grad:
                torch.testing.assert_close(a.grad, t.grad)


def test_wrap_numpy_called_eagerly_converts_through_numpy():
    x, b = torch.randn(3, 2), torch.randn(2)
    got = capture.wrap_numpy(two_outputs)(x, b)
    torch.testing.assert_close(got["mixed"], torch.tanh(x) + b)
    torch.testing.assert_close(got["reduced"][0], x.max(dim=0).values)
    assert got["reduced"][1] == 3
    with pytest.raises(RuntimeError, match="requires grad"):
        capture.wrap_numpy(norm_squared)(torch.randn(3, requires_grad=True))
