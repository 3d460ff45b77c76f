"""Outputs that view a tensor the graph made (and does not return), written in place by the
caller after a training call, as HF wav2vec2 and hubert zero the padded frames of their
feature projection (`nn.Linear` on a 3-d input returns a view of its 2-d matmul).

An autograd.Function refuses in-place ops on a view it returns ("Output 0 of
_CompiledFunction is a view and is being modified inplace"), where eager allows them: a lone
such view comes back without the view relation, and views sharing one base come back as
views of that base, returned by the graph after the outputs, so that a write through one shows
in the other's values and gradients (intermediate_bases.py). Compiled against eager: values,
gradients, which outputs share storage or are views; first call, fresh values, a new size.
"""

from __future__ import annotations

import pytest
import torch

from aot_autograd import aot_eager, aot_eager_decomp_partition
from aot_testing import dynamic_functions_graph, functions_graph


def linear_3d(x, w):
    return (torch.nn.functional.linear(x, w, w[0]),)


def two_disjoint_rows(x, w):
    t = x @ w
    return t[:, 0], t[:, 1]


def overlapping_columns(x, w):
    # Columns 1..2 are in both outputs: a write through the first changes the second.
    t = (x @ w).flatten(0, 1)
    return t[:, 0:3], t[:, 1:4]


def overlapping_and_transposed(x, w):
    t = x @ w
    return t[1:], t.transpose(0, 1)[0], t.sum()


def split_halves(x, w):
    # Outputs of one multi-output view op: eager refuses writes into them, nothing to rebuild.
    return (x @ w).split(2, dim=-1)


PROGRAMS = [linear_3d, two_disjoint_rows, overlapping_columns, overlapping_and_transposed]


def _inputs(n: int):
    return torch.randn(n, 3, 4, requires_grad=True), torch.randn(4, 4, requires_grad=True)


def _write(outputs) -> None:
    """What the caller does after the call: in-place ops through the first output."""
    outputs[0].mul_(2)
    outputs[0][0] = 0


def _structure(outputs) -> tuple:
    """Which outputs share storage, and which of those are views. (A lone view of a tensor
    that dies in the graph, linear's result, comes back as a plain tensor, as torch.compile's.)"""
    storages = [o.untyped_storage().data_ptr() for o in outputs]
    shared = [[a == b for b in storages] for a in storages]
    return shared, [o._is_view() and sum(row) > 1 for o, row in zip(outputs, shared)]


def _run(fn, inputs, write: bool):
    outputs = fn(*inputs)
    structure = _structure(outputs)
    if write:
        _write(outputs)
    loss = sum((o * torch.arange(o.numel()).view(o.shape)).sum() for o in outputs if o.is_floating_point())
    grads = torch.autograd.grad(loss, inputs)
    return [o.detach() for o in outputs], grads, structure


def _compile(fn, examples, dynamic: bool, backend):
    gm = dynamic_functions_graph(fn, examples) if dynamic else functions_graph(fn)
    return backend(gm, list(examples))


@pytest.mark.parametrize("write", [True, False], ids=["written", "read"])
@pytest.mark.parametrize("backend", [aot_eager, aot_eager_decomp_partition], ids=lambda b: b.__name__)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda fn: fn.__name__)
def test_outputs_viewing_an_intermediate_take_writes_as_in_eager(fn, dynamic, backend, write):
    torch.manual_seed(0)
    compiled = None
    for n in (5, 5, 7) if dynamic else (5, 5):
        inputs = _inputs(n)
        ours = [x.detach().clone().requires_grad_() for x in inputs]
        compiled = compiled or _compile(fn, ours, dynamic, backend)
        actual, expected = _run(compiled, ours, write), _run(fn, inputs, write)
        assert actual[2] == expected[2]
        torch.testing.assert_close(actual[:2], expected[:2])


def test_outputs_of_a_multi_output_view_come_back_with_their_values_and_gradients():
    inputs = _inputs(5)
    ours = [x.detach().clone().requires_grad_() for x in inputs]
    compiled = _compile(split_halves, ours, True, aot_eager)
    actual, expected = _run(compiled, ours, write=False), _run(split_halves, inputs, write=False)
    torch.testing.assert_close(actual[:2], expected[:2])
    assert actual[2][0] == expected[2][0]
