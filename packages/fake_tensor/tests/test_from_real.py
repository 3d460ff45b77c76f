"""mode.from_real: a fake carries every piece of a real tensor's metadata, and its aliasing."""

import itertools

import pytest
import torch

from fake_tensor import FakeModeMismatchError, FakeTensorMode, UnsupportedTensorKindError, is_fake

REAL_TENSORS = {
    "contiguous": lambda: torch.randn(3, 4),
    "transposed": lambda: torch.randn(3, 4).t(),
    "sliced_with_offset": lambda: torch.randn(5, 6)[1:4, 2:],
    "stepped": lambda: torch.randn(9)[1::3],
    "expanded": lambda: torch.randn(3, 1).expand(3, 5),
    "channels_last": lambda: torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
    "zero_dim": lambda: torch.tensor(1.5),
    "empty": lambda: torch.randn(0, 3),
    "int64": lambda: torch.randint(0, 10, (4,)),
    "bool": lambda: torch.rand(3) > 0.5,
    "bfloat16": lambda: torch.randn(2, 3, dtype=torch.bfloat16),
    "float64_leaf_requiring_grad": lambda: torch.randn(2, 3, dtype=torch.float64, requires_grad=True),
    "non_leaf": lambda: torch.randn(2, 3, requires_grad=True) * 2,
    "view_of_leaf_requiring_grad": lambda: torch.randn(4, 3, requires_grad=True)[1:],
    "view_made_under_no_grad": lambda: _under_no_grad(lambda: torch.randn(4, requires_grad=True)[:2]),
    "leaf_view_requiring_grad": lambda: torch.randn(4)[1:].requires_grad_(),
    "dtype_view": lambda: torch.randn(4).view(torch.int32),
    "meta": lambda: torch.empty(5, 7, device="meta"),
}


def _under_no_grad(make):
    with torch.no_grad():
        return make()


def metadata(t: torch.Tensor) -> tuple:
    return (
        t.shape, t.stride(), t.storage_offset(), t.dtype, t.device, t.layout,
        t.requires_grad, t.is_leaf, t.grad_fn is None,
        t.is_contiguous(), t.is_contiguous(memory_format=torch.channels_last),
        t.untyped_storage().nbytes(),
    )


@pytest.mark.parametrize("make", REAL_TENSORS.values(), ids=REAL_TENSORS.keys())
def test_fake_has_the_metadata_of_the_real_tensor(make):
    real = make()
    fake = FakeTensorMode().from_real(real)
    assert is_fake(fake)
    assert metadata(fake) == metadata(real)


def test_views_of_one_storage_become_fakes_sharing_one_storage():
    base = torch.randn(4, 6)
    other = torch.randn(4, 6)
    # `set_` makes an alias that autograd does not know as a view: storage identity only.
    hidden_alias = torch.empty(0).set_(base.untyped_storage(), 2, (2, 2), (6, 1))
    reals = [base, base[1:], base.t(), base.view(-1)[5:], other, other[0], hidden_alias]
    mode = FakeTensorMode()
    fakes = [mode.from_real(t) for t in reals]
    for (r1, f1), (r2, f2) in itertools.combinations(zip(reals, fakes), 2):
        assert torch._C._is_alias_of(f1, f2) == torch._C._is_alias_of(r1, r2)


def test_real_view_becomes_a_view_of_the_fake_base():
    base = torch.randn(4, 6)
    view = base[1:, ::2]
    mode = FakeTensorMode()
    fake_view = mode.from_real(view)
    assert fake_view._is_view() and fake_view._base is mode.from_real(base)


def test_conversion_is_memoized_per_tensor():
    real = torch.randn(3)
    mode = FakeTensorMode()
    assert mode.from_real(real) is mode.from_real(real)


def test_memo_is_not_fooled_by_recycled_ids():
    mode = FakeTensorMode()
    for n in range(1, 40):
        # Each temporary dies after conversion unless the mode keeps it alive; a reused id
        # would then return the fake of an earlier tensor.
        assert mode.from_real(torch.randn(n)).shape == (n,)


def test_grad_of_a_leaf_is_converted():
    real = torch.randn(3, 4, requires_grad=True)
    real.grad = torch.randn(4, 3).t()
    fake = FakeTensorMode().from_real(real)
    assert is_fake(fake.grad) and metadata(fake.grad) == metadata(real.grad)


def test_parameter_stays_a_parameter():
    real = torch.nn.Parameter(torch.randn(3, 4))
    fake = FakeTensorMode().from_real(real)
    assert is_fake(fake) and isinstance(fake, torch.nn.Parameter)
    assert metadata(fake) == metadata(real)


def test_gradient_flows_from_a_fake_view_to_its_fake_base():
    base = torch.randn(4, 3, requires_grad=True)
    view = base[1:]
    (view * 2).sum().backward()
    mode = FakeTensorMode()
    fake_base, fake_view = mode.from_real(base), mode.from_real(view)
    with mode:
        (fake_view * 2).sum().backward()
    assert metadata(fake_base.grad) == metadata(base.grad)


def test_sparse_tensor_is_rejected_with_a_clear_error():
    with pytest.raises(UnsupportedTensorKindError, match=r"sparse_coo tensors .*to_dense"):
        FakeTensorMode().from_real(torch.eye(3).to_sparse())


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda: torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)]), "nested tensors"),
        (lambda: torch.randn(3, dtype=torch.complex64).conj().imag, "negation bit"),
        (lambda: torch.randn(3, dtype=torch.complex64).conj(), "conjugation bit"),
    ],
)
def test_tensors_a_fake_cannot_describe_are_rejected(make, reason):
    """A nested tensor has a strided layout but no sizes; a fake has no negation or conjugation
    bit (its is_conj() would answer False, and kernels would read the memory unnegated)."""
    with pytest.raises(UnsupportedTensorKindError, match=reason):
        FakeTensorMode().from_real(make())


def test_quantized_tensors_are_rejected_with_a_clear_error():
    """torch's meta kernels describe a quantized result as float32: a fake of it would carry
    the wrong dtype, so neither a quantized input nor an op making one is faked."""
    with pytest.raises(UnsupportedTensorKindError, match="quantized tensors .*qint8"):
        FakeTensorMode().from_real(torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.qint8))
    with FakeTensorMode() as mode:
        x = mode.from_real(torch.randn(3))
        with pytest.raises(UnsupportedTensorKindError, match="quantize_per_tensor"):
            torch.quantize_per_tensor(x, 0.1, 0, torch.quint8)
        assert x.to(dtype=torch.float16).dtype == torch.float16  # other dtype arguments as before


def test_fake_of_another_mode_is_rejected():
    fake = FakeTensorMode().from_real(torch.randn(2))
    with pytest.raises(FakeModeMismatchError):
        FakeTensorMode().from_real(fake)


def test_fake_of_the_same_mode_is_returned_as_is():
    mode = FakeTensorMode()
    fake = mode.from_real(torch.randn(2))
    assert mode.from_real(fake) is fake
