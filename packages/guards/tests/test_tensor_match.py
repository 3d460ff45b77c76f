"""TensorMatch: passes on any tensor with the same metadata, fails on each single change."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from guards import GuardSet, LocalSource, TensorMatch

X = LocalSource("x")


def guard_for(example: torch.Tensor, **overrides):
    return GuardSet([TensorMatch.of(X, example, **overrides)]).compile(parameters=["x"])


def same_metadata(t: torch.Tensor) -> torch.Tensor:
    """A fresh tensor (new values, new storage) with t's type, dtype, device, sizes, strides."""
    fresh = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
    if fresh.is_floating_point() or fresh.is_complex():
        fresh.copy_(torch.randn(t.size(), dtype=t.dtype))
    fresh.requires_grad_(t.requires_grad)
    return nn.Parameter(fresh, t.requires_grad) if type(t) is nn.Parameter else fresh


EXAMPLES = {
    "contiguous": lambda: torch.randn(4, 3),
    "transposed": lambda: torch.randn(3, 4).t(),
    "sliced": lambda: torch.randn(4, 6)[:, ::2],
    "scalar": lambda: torch.randn(()),
    "empty": lambda: torch.randn(0, 3),
    "int64": lambda: torch.randint(0, 9, (5,)),
    "bool": lambda: torch.rand(3, 2) > 0.5,
    "complex": lambda: torch.randn(2, 2, dtype=torch.complex64),
    "requires_grad": lambda: torch.randn(2, 5, requires_grad=True),
    "parameter": lambda: nn.Parameter(torch.randn(3, 3)),
    "meta": lambda: torch.empty(4, 3, device="meta"),
}


@pytest.mark.parametrize("make", EXAMPLES.values(), ids=EXAMPLES.keys())
def test_passes_on_fresh_tensor_with_same_metadata(make):
    example = make()
    guard = guard_for(example)
    assert guard(example)
    assert guard(same_metadata(example))
    assert guard.why(same_metadata(example)) is None


class MyTensor(torch.Tensor):
    pass


# Each change alters exactly one property the compiled graph depends on; `what` is the start
# of the sentence `why` must give.
CHANGES = {
    "dtype": (lambda t: t.double(), "L['x'].dtype == torch.float32 failed: got torch.float64"),
    "device": (lambda t: t.to("meta"), "L['x'].device == 'cpu' failed: got device(type='meta')"),
    "size": (lambda t: torch.randn(5, 3), "L['x'].size()[0] == 4 failed: got 5"),
    "rank": (lambda t: t.reshape(4, 3, 1), "L['x'].dim() == 2 failed: got 3"),
    "stride": (lambda t: t.t().contiguous().t(), "L['x'].stride()[0] == 3 failed: got 1"),
    "requires_grad": (lambda t: t.clone().requires_grad_(), "L['x'].requires_grad == False failed: got True"),
    "parameter type": (lambda t: nn.Parameter(t, requires_grad=False), "type(L['x']) is torch.Tensor failed: got <class 'torch.nn.parameter.Parameter'>"),
    "subclass": (lambda t: t.as_subclass(MyTensor), "type(L['x']) is torch.Tensor failed: got"),
    "not a tensor": (lambda t: t.tolist(), "type(L['x']) is torch.Tensor failed: got <class 'list'>"),
    "none": (lambda t: None, "type(L['x']) is torch.Tensor failed: got <class 'NoneType'>"),
    "inference": (lambda t: _in_inference_mode(t.clone), "L['x'].is_inference() == False failed: got True"),
    "neg bit": (lambda t: torch._neg_view(t), "L['x'].is_neg() == False failed: got True"),
}


def _in_inference_mode(make):
    with torch.inference_mode():
        return make()


@pytest.mark.parametrize("change, sentence", CHANGES.values(), ids=CHANGES.keys())
def test_fails_on_single_change(change, sentence):
    example = torch.randn(4, 3)
    guard = guard_for(example)
    changed = change(same_metadata(example))
    assert guard(changed) is False
    assert guard.why(changed).startswith(sentence)


@pytest.mark.parametrize(
    "example, other",
    [
        (lambda: torch.randn(4, 3), lambda: torch.randn(3, 4).t()),
        (lambda: torch.randn(4, 3), lambda: torch.randn(4, 6)[:, ::2]),
        # A size-1 dim's stride is ignored by is_contiguous() but not by the guard.
        (lambda: torch.randn(1, 3), lambda: torch.randn(3, 1).t()),
        (lambda: torch.randn(3, 1).t(), lambda: torch.randn(1, 3)),
        (lambda: torch.randn(0, 3), lambda: torch.randn(3, 0).t()),
    ],
)
def test_same_sizes_different_strides_fail(example, other):
    guard = guard_for(example())
    assert guard(same_metadata(example()))
    changed = other()
    assert guard(changed) is False
    assert guard.why(changed).startswith("L['x'].stride()[")


def test_conj_bit_is_checked_for_complex():
    z = torch.randn(3, dtype=torch.complex64)
    guard = guard_for(z)
    assert guard(same_metadata(z))
    assert not guard(torch.randn(3, dtype=torch.complex64).conj())
    assert guard.why(torch.randn(3, dtype=torch.complex64).conj()) == "L['x'].is_conj() == False failed: got True"


def test_guard_built_on_conj_view_accepts_only_conj_views():
    conj = torch.randn(3, dtype=torch.complex64).conj()
    guard = guard_for(conj)
    assert guard(torch.randn(3, dtype=torch.complex64).conj())
    assert not guard(torch.randn(3, dtype=torch.complex64))


def test_sparse_input_fails_a_strided_guard():
    guard = guard_for(torch.randn(4, 3))
    sparse = torch.randn(4, 3).to_sparse()
    assert guard(sparse) is False
    assert "L['x']" in guard.why(sparse)


@pytest.mark.parametrize("size0", [2, 7, 100])
def test_dynamic_dim_accepts_any_size_there(size0):
    guard = guard_for(torch.randn(5, 3), sizes=[None, 3], strides=[3, 1])
    assert guard(torch.randn(size0, 3))
    assert not guard(torch.randn(size0, 4))
    assert guard.why(torch.randn(size0, 4)) == "L['x'].size()[1] == 3 failed: got 4"


def test_dynamic_stride_is_not_checked():
    guard = guard_for(torch.randn(5, 3), sizes=[5, None], strides=[None, 1])
    assert guard(torch.randn(5, 9))
    assert not guard(torch.randn(5, 9)[:, ::3])


def test_symint_entries_mean_dynamic():
    # Sizes from a fake tensor carry SymInts where dims are dynamic; anything not an int is.
    class NotAnInt:
        pass

    guard = guard_for(torch.randn(5, 3), sizes=[NotAnInt(), 3])
    assert guard(torch.randn(11, 3))
