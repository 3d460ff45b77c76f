"""one_hot raises for a class out of range at static sizes too, as eager does.

On fake tensors one_hot's kernel takes its functional path (eq against an arange), which
checks nothing, and torch's checking decomposition runs only at symbolic sizes: compiled,
one_hot(arange(5), 4) returned a row of zeros and one_hot([0, -1], 4) a zero row, where eager
raises RuntimeError. aot_autograd's trace now adds eager's checks (tracing/trace.py OneHotChecks).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import compiler


def labels_then_write(labels, x):
    out = F.one_hot(labels, 4) * 2
    x.add_(1)  # after the check: eager leaves x unwritten
    return out


def _run(fn, labels, x):
    try:
        return fn(labels, x).tolist(), x.tolist()
    except RuntimeError as error:
        return str(error), x.tolist()


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_one_hot_classes_out_of_range_raise_as_eager(backend):
    compiled = compiler.compile(labels_then_write, backend=backend)
    # first call, cache hit with other values, a new size
    for labels in ([0, 1, 2, 3, 4], [3, -1, 0, 1, 2], [1, 2, 4, 0, 3], [0, 1, 2, 3, 3, 2, 1], [2, 5, 1, -3, 0, 0, 1]):
        labels = torch.tensor(labels)
        x = torch.randn(3)
        got, expected = _run(compiled, labels, x.clone()), _run(labels_then_write, labels, x.clone())
        assert got == expected
