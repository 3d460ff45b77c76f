"""Repeated ops on fakes (served by the meta output cache) still match eager: metadata,
dtypes that depend on more than argument metadata, errors, aliasing and autograd."""

import pytest
import torch

from fake_tensor import FakeTensorMode, is_fake


def metadata(t: torch.Tensor) -> tuple:
    return t.shape, t.stride(), t.storage_offset(), t.dtype, t.device, t.requires_grad


def leaves(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def on_fakes(program, *reals):
    mode = FakeTensorMode()
    fakes = [mode.from_real(r) for r in reals]
    with mode:
        return program(*fakes), fakes


PROGRAMS = {
    "add": (lambda x, y: x + y, lambda: (torch.randn(4, 6), torch.randn(6))),
    "mul_scalar_int_tensor": (lambda x: x * 3, lambda: (torch.randint(0, 9, (5, 2)),)),
    "where": (lambda x, y: torch.where(x > 0, x, y), lambda: (torch.randn(3, 4), torch.randn(4))),
    "addmm": (torch.addmm, lambda: (torch.randn(5), torch.randn(3, 4), torch.randn(4, 5))),
    "layer_norm": (lambda x: torch.nn.functional.layer_norm(x, (6,)), lambda: (torch.randn(2, 3, 6),)),
    "softmax_transposed": (lambda x: torch.softmax(x.t(), -1), lambda: (torch.randn(5, 7),)),
    "pointwise_keeps_transposed_layout": (lambda x: x.t() * 2, lambda: (torch.randn(5, 7),)),
    "pointwise_keeps_channels_last": (
        lambda x: torch.relu(x),
        lambda: (torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),),
    ),
    "max_with_indices": (lambda x: torch.max(x, 1), lambda: (torch.randn(4, 5),)),
    "sum_to_half": (lambda x: x.sum(0).half(), lambda: (torch.randn(3, 8),)),
    "conv2d_padded": (
        lambda x, w: torch.nn.functional.conv2d(x, w, padding=1),
        lambda: (torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)),
    ),
    "inplace_add": (lambda x, y: x.add_(y), lambda: (torch.randn(4, 6), torch.randn(6))),
    "inplace_through_view": (lambda x: x[1:].mul_(2), lambda: (torch.randn(4, 6),)),
    "factory": (lambda x: torch.zeros(3, 5, dtype=torch.float64) + x.sum(), lambda: (torch.randn(2),)),
    "unsafe_split_returns_views": (lambda x: torch.ops.aten.unsafe_split.Tensor(x, 2), lambda: (torch.randn(6, 3),)),
    "unsafe_split_returns_a_view_of_all": (lambda x: torch.ops.aten.unsafe_split.Tensor(x, 6), lambda: (torch.randn(6, 3),)),
}


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("call", ["first", "repeated"])
def test_fake_outputs_match_eager(name, call):
    program, make_inputs = PROGRAMS[name]
    if call == "repeated":
        on_fakes(program, *make_inputs())  # records the calls
    reals = make_inputs()
    eager_inputs = [r.clone() for r in reals]
    eager = program(*eager_inputs)
    fake, fakes = on_fakes(program, *reals)
    for e, f in zip(leaves(eager), leaves(fake), strict=True):
        assert is_fake(f) and metadata(f) == metadata(e)
        assert [torch._C._is_alias_of(f, x) for x in fakes] == [torch._C._is_alias_of(e, x) for x in eager_inputs]


def test_repeated_call_makes_a_new_tensor():
    mode = FakeTensorMode()
    x = mode.from_real(torch.randn(3, 4))
    with mode:
        a, b = x + 1, x + 1
    assert a is not b and not torch._C._is_alias_of(a, b)


DEFAULT_DTYPE_PROGRAMS = {
    "full": lambda: torch.full((2,), 1.5),
    "arange": lambda: torch.arange(0, 1, 0.25),
    "int_times_float": lambda: torch.ones(3, dtype=torch.int64) * 0.5,
}


@pytest.mark.parametrize("program", DEFAULT_DTYPE_PROGRAMS.values(), ids=DEFAULT_DTYPE_PROGRAMS.keys())
def test_default_dtype_decides_repeated_results_as_in_eager(program):
    previous = torch.get_default_dtype()
    try:
        for default_dtype in (torch.float32, torch.float64, torch.float32):
            torch.set_default_dtype(default_dtype)
            eager = program()
            with FakeTensorMode():
                fake = program()
            assert metadata(fake) == metadata(eager), default_dtype
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize("scalar", [2, 2.0, True, 2j], ids=["int", "float", "bool", "complex"])
def test_python_scalar_type_decides_the_dtype_as_in_eager(scalar):
    real = torch.randint(0, 5, (3,))
    for _ in range(2):  # 2, 2.0 and True are equal as keys would see them, but promote differently
        fake, _ = on_fakes(lambda x: x * scalar, real)
        assert metadata(fake) == metadata(real * scalar)


FAILING = {
    "broadcast_mismatch": lambda x: x + torch.ones(5),
    "inplace_would_broadcast_self": lambda x: x[:1].add_(x),
    "inplace_float_into_int": lambda x: x.long().add_(x),
}


@pytest.mark.parametrize("program", FAILING.values(), ids=FAILING.keys())
def test_a_failing_call_fails_every_time(program):
    real = torch.randn(3, 4)
    with pytest.raises(RuntimeError):
        program(real)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            on_fakes(program, real)


def test_repeated_forward_and_backward_give_eager_gradients():
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.LayerNorm(8), torch.nn.Linear(8, 2))
    x = torch.randn(4, 6)
    model(x).sum().backward()
    for _ in range(2):
        mode = FakeTensorMode()
        fake_model = mode.from_module(model)
        with mode:
            fake_model(mode.from_real(x)).sum().backward()
        fake_params = dict(fake_model.named_parameters())
        for name, param in model.named_parameters():
            assert metadata(fake_params[name].grad) == metadata(param.grad), name
