"""What may meet a fake in one op: Python numbers and 0-dim CPU tensors (with eager's type
promotion), constants made inside the mode; anything else real is a clear error."""

import pytest
import torch

from fake_tensor import FakeModeMismatchError, FakeTensorMode, RealTensorInputError, is_fake

FAKE_DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.bool]


def make(dtype, shape=(3, 4)):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    return torch.randint(-5, 5, shape, dtype=dtype)


PYTHON_SCALARS = [2, 2.5, True]


@pytest.mark.parametrize("dtype", FAKE_DTYPES, ids=str)
@pytest.mark.parametrize("scalar", PYTHON_SCALARS, ids=repr)
def test_python_number_promotes_like_eager(dtype, scalar):
    real = make(dtype)
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    with mode:
        fake_out = fake * scalar
    eager = real * scalar
    assert (fake_out.dtype, fake_out.shape) == (eager.dtype, eager.shape)


SCALAR_TENSOR_DTYPES = [torch.float64, torch.int32, torch.bool]


@pytest.mark.parametrize("dtype", FAKE_DTYPES, ids=str)
@pytest.mark.parametrize("scalar_dtype", SCALAR_TENSOR_DTYPES, ids=str)
def test_real_zero_dim_cpu_tensor_mixes_and_promotes_like_eager(dtype, scalar_dtype):
    real, scalar = make(dtype), make(scalar_dtype, shape=())
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    with mode:
        fake_out = torch.add(fake, scalar)
    eager = torch.add(real, scalar)
    assert is_fake(fake_out)
    assert (fake_out.dtype, fake_out.shape, fake_out.device) == (eager.dtype, eager.shape, eager.device)


def test_constant_built_inside_the_mode_is_a_fake_with_eager_metadata():
    data = [[1, 2, 3], [4, 5, 6]]
    with FakeTensorMode():
        fake = torch.tensor(data, dtype=torch.float16)
    eager = torch.tensor(data, dtype=torch.float16)
    assert is_fake(fake) and (fake.shape, fake.dtype, fake.stride()) == (eager.shape, eager.dtype, eager.stride())


def test_real_tensor_mixed_with_a_fake_is_an_error_naming_the_op():
    mode = FakeTensorMode()
    fake, real = mode.from_real(torch.randn(3, 4)), torch.randn(3, 4)
    with pytest.raises(RealTensorInputError, match=r"aten\.add\.Tensor.*from_real"):
        with mode:
            fake + real


def test_real_module_used_under_the_mode_is_an_error_naming_from_module():
    linear = torch.nn.Linear(4, 2)
    mode = FakeTensorMode()
    x = mode.from_real(torch.randn(3, 4))
    with pytest.raises(RealTensorInputError, match="from_module"):
        with mode:
            linear(x)


def test_fakes_of_two_modes_do_not_mix():
    a = FakeTensorMode().from_real(torch.randn(3))
    b = FakeTensorMode().from_real(torch.randn(3))
    with pytest.raises(FakeModeMismatchError):
        a + b


def test_ops_on_fakes_outside_the_mode_still_produce_fakes():
    real = torch.randn(3, 4)
    fake = FakeTensorMode().from_real(real)
    fake_out = torch.nn.functional.softmax(fake.t() @ fake, dim=-1)  # no `with mode:`
    eager = torch.nn.functional.softmax(real.t() @ real, dim=-1)
    assert is_fake(fake_out) and (fake_out.shape, fake_out.stride()) == (eager.shape, eager.stride())


@pytest.mark.gpu
def test_zero_dim_cpu_tensor_mixes_with_cuda_fake():
    real = torch.randn(3, 4, device="cuda")
    scalar = torch.tensor(2.0, dtype=torch.float64)
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    with mode:
        fake_out = fake * scalar
    eager = real * scalar
    assert (fake_out.device, fake_out.dtype, fake_out.shape) == (eager.device, eager.dtype, eager.shape)


@pytest.mark.gpu
def test_cuda_and_cpu_fakes_do_not_mix_like_eager():
    from fake_tensor import DeviceMismatchError

    mode = FakeTensorMode()
    cuda, cpu = mode.from_real(torch.randn(3, device="cuda")), mode.from_real(torch.randn(3))
    with pytest.raises(RuntimeError):
        torch.randn(3, device="cuda") + torch.randn(3)
    with pytest.raises(DeviceMismatchError, match="aten.add.Tensor"):
        with mode:
            cuda + cpu


NUMBERS_ONLY_CALLS = {
    "div trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "true div": torch.div,
    "mul": torch.mul,
    "add": torch.add,
}


@pytest.mark.parametrize("call", NUMBERS_ONLY_CALLS.values(), ids=NUMBERS_ONLY_CALLS.keys())
@pytest.mark.parametrize("numbers", [(12, 5), (7.5, 2), (3, 2.0)], ids=str)
def test_an_op_of_python_numbers_alone_gives_a_fake_like_eagers_tensor(call, numbers):
    # Eager wraps the numbers into CPU tensors (Longformer's torch.div(seq_len, w, ...)).
    eager = call(*numbers)
    with FakeTensorMode():
        fake = call(*numbers)
    assert is_fake(fake)
    assert (fake.dtype, fake.shape, fake.device) == (eager.dtype, eager.shape, eager.device)
