"""Converting a real tensor does not keep it alive: once the caller drops it, its memory is
freed, while its fake (held by a captured graph, say) keeps working."""

import weakref

import pytest
import torch

from fake_tensor import FakeTensorMode, is_fake

REAL_TENSORS = {
    "contiguous": lambda: torch.randn(64, 32),
    "view_of_a_base": lambda: torch.randn(64, 32)[8:, ::2],
    "leaf_with_grad": lambda: _with_grad(torch.randn(16, 8, requires_grad=True)),
    "non_leaf": lambda: torch.randn(16, 8, requires_grad=True) * 2,
    "parameter": lambda: torch.nn.Parameter(torch.randn(16, 8)),
}


def _with_grad(t):
    t.grad = torch.randn_like(t)
    return t


def metadata(t):
    return t.shape, t.stride(), t.storage_offset(), t.dtype, t.requires_grad


def _program(t):
    return (t.t() @ t).relu().sum(0)


def _collected(*refs) -> bool:
    # No gc.collect(): reference counting alone must free them (nothing of ours holds them,
    # not even through a reference cycle).
    return all(ref() is None for ref in refs)


@pytest.mark.parametrize("make", REAL_TENSORS.values(), ids=REAL_TENSORS.keys())
def test_real_tensor_is_freed_once_the_caller_drops_it(make):
    real = make()
    expected = metadata(_program(real))
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    tensor_ref, storage_ref = weakref.ref(real), weakref.ref(real.untyped_storage())
    del real
    assert _collected(tensor_ref, storage_ref)
    with mode:
        out = _program(fake)
    assert is_fake(out) and metadata(out) == expected


def test_module_parameters_are_freed_once_the_module_is_dropped():
    module = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(5, 8)
    expected = metadata(module(x))
    mode = FakeTensorMode()
    fake_module = mode.from_module(module)
    refs = [weakref.ref(p.untyped_storage()) for p in module.parameters()]
    del module
    assert _collected(*refs)
    with mode:
        out = fake_module(mode.from_real(x))
    assert metadata(out) == expected


def test_storage_alias_made_after_the_first_tensor_is_freed_shares_its_fake_storage():
    first = torch.randn(6, 4)
    storage = first.untyped_storage()
    mode = FakeTensorMode()
    fake_first = mode.from_real(first)
    first_ref = weakref.ref(first)
    del first
    assert _collected(first_ref)
    # The storage lives on (held here), so a new tensor on it must alias the first fake.
    second = torch.empty(0).set_(storage, 4, (2, 4), (4, 1))
    assert torch._C._is_alias_of(mode.from_real(second), fake_first)


def test_storage_at_a_freed_address_is_not_taken_for_the_old_one():
    mode = FakeTensorMode()
    for n in range(1, 60):
        old_fake = mode.from_real(torch.randn(n, 2))  # its real tensor and storage die here
        new_real = torch.randn(n, 2)  # often allocated at the address just freed
        assert not torch._C._is_alias_of(mode.from_real(new_real), old_fake)
