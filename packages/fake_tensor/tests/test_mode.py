"""FakeTensorMode as a context manager: factories and ops inside it make fakes with eager's
metadata, and nothing is allocated."""

import pytest
import torch

from fake_tensor import FakeTensorMode, is_fake

FACTORIES = {
    "empty": lambda: torch.empty(3, 4),
    "empty_strided": lambda: torch.empty_strided((3, 4), (1, 3)),
    "zeros_int": lambda: torch.zeros(2, 5, dtype=torch.int32),
    "ones_bf16": lambda: torch.ones(4, dtype=torch.bfloat16),
    "full": lambda: torch.full((2, 2), 7.0),
    "full_int_fill": lambda: torch.full((2, 2), 7),
    "arange": lambda: torch.arange(10),
    "arange_float_step": lambda: torch.arange(0, 1, 0.1),
    "linspace": lambda: torch.linspace(0, 1, 9),
    "eye": lambda: torch.eye(3, 5),
    "randn": lambda: torch.randn(2, 3, dtype=torch.float64),
    "rand_like_channels_last": lambda: torch.rand_like(torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)),
    "randint": lambda: torch.randint(0, 5, (6,)),
    "randperm": lambda: torch.randperm(7),
    "tensor_from_list": lambda: torch.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "scalar_tensor": lambda: torch.scalar_tensor(3),
    "new_zeros": lambda: torch.empty(2, dtype=torch.float16).new_zeros(3, 3),
    "empty_like_of_transposed": lambda: torch.empty_like(torch.empty(3, 4).t()),
}


@pytest.mark.parametrize("factory", FACTORIES.values(), ids=FACTORIES.keys())
def test_factory_inside_the_mode_makes_a_fake_with_eager_metadata(factory):
    eager = factory()
    with FakeTensorMode():
        fake = factory()
    assert is_fake(fake)
    assert (fake.shape, fake.stride(), fake.dtype, fake.device, fake.requires_grad) == (
        eager.shape, eager.stride(), eager.dtype, eager.device, eager.requires_grad
    )


def test_fakes_allocate_no_memory():
    with FakeTensorMode():
        huge = torch.empty(1 << 40, dtype=torch.uint8)  # 1 TiB if real
        doubled = torch.cat([huge, huge])
    assert doubled.shape == (1 << 41,) and doubled.untyped_storage().nbytes() == 1 << 41


def test_repr_reads_no_data():
    with FakeTensorMode():
        fake = torch.empty(2, 3, requires_grad=True)
    assert repr(fake) == "FakeTensor(size=(2, 3), dtype=torch.float32, device='cpu', requires_grad=True)"


def test_deepcopy_of_a_fake_is_a_fake_with_the_same_metadata():
    import copy

    mode = FakeTensorMode()
    fake = mode.from_real(torch.nn.Parameter(torch.randn(3, 4).t()))
    copied = copy.deepcopy(fake)
    assert is_fake(copied) and copied is not fake and isinstance(copied, torch.nn.Parameter)
    assert (copied.shape, copied.stride(), copied.requires_grad) == (fake.shape, fake.stride(), True)
    assert not torch._C._is_alias_of(copied, fake)


def test_mode_without_shape_env_leaves_the_python_dispatcher_off():
    with FakeTensorMode():
        assert not torch._C._dispatch_tls_is_dispatch_key_included(torch._C.DispatchKey.PythonDispatcher)
