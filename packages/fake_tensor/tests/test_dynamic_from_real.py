"""from_real with dynamic_dims: fakes with symbolic sizes from the mode's ShapeEnv, which
evaluate (at the example sizes) to what eager computes."""

import pytest
import torch

from fake_tensor import FakeTensorError, FakeTensorMode, ShapeEnv, StaticSizesRequiredError, is_fake

PYTHON_DISPATCHER = torch._C.DispatchKey.PythonDispatcher


def at_hints(env, values):
    return tuple(env.size_hint(v) for v in values)


@pytest.mark.parametrize(
    "make,dims",
    [
        (lambda: torch.randn(4, 6, 8), [0, 1]),
        (lambda: torch.randn(6, 4).t(), [1]),
        (lambda: torch.randn(5, 7)[1:], [0]),
        (lambda: torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last), [2, 3]),
    ],
    ids=["contiguous", "transposed", "with_offset", "channels_last"],
)
def test_dynamic_dims_are_symbolic_and_hint_the_real_metadata(make, dims):
    real = make()
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake = mode.from_real(real, dynamic_dims=dims, source="L['x']")
    assert is_fake(fake)
    assert [isinstance(s, torch.SymInt) for s in fake.shape] == [d in dims for d in range(real.dim())]
    env = mode.shape_env
    assert at_hints(env, fake.shape) == tuple(real.shape)
    assert at_hints(env, fake.stride()) == real.stride()
    assert env.size_hint(fake.storage_offset()) == real.storage_offset()


@pytest.mark.parametrize("shape", [(1, 9), (1, 1, 9, 4)], ids=["batch_of_one", "two_unit_dims"])
def test_unit_dim_of_a_row_major_tensor_has_a_stride_that_follows_the_dynamic_size(shape):
    # A (1, n) sequence: stride(0) is n. Kept as the int 9 it would become a guard that no
    # other length passes, however dynamic n is.
    real = torch.randn(shape)
    env = ShapeEnv()
    fake = FakeTensorMode(shape_env=env).from_real(real, dynamic_dims=[2 if len(shape) == 4 else 1])
    assert at_hints(env, fake.stride()) == real.stride()
    assert all(isinstance(fake.stride()[d], torch.SymInt) for d in range(real.dim()) if real.shape[d] == 1)


PROGRAMS = {
    "linear_softmax": lambda x: torch.softmax(torch.nn.functional.linear(x, torch.ones(5, 8)), -1),
    "reshape_transpose": lambda x: x.transpose(0, 1).reshape(-1, 8),
    "cat_and_slice": lambda x: torch.cat([x, x * 2], dim=0)[1:],
    "reduction": lambda x: x.sum(dim=1, keepdim=True) - x.mean(),
    "layer_norm": lambda x: torch.nn.functional.layer_norm(x, (8,)),
}


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_ops_on_dynamic_fakes_give_shapes_that_hint_eager(program):
    real = torch.randn(4, 6, 8)
    eager = program(real)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake = mode.from_real(real, dynamic_dims=[0, 1], source="x")
    with mode:
        out = program(fake)
    assert at_hints(mode.shape_env, out.shape) == tuple(eager.shape)
    assert at_hints(mode.shape_env, out.stride()) == eager.stride()


def test_mode_with_a_shape_env_turns_the_python_dispatcher_on_while_active():
    mode = FakeTensorMode(shape_env=ShapeEnv())
    with mode:
        with mode:  # re-entry, as decompositions do
            pass
        assert torch._C._dispatch_tls_is_dispatch_key_included(PYTHON_DISPATCHER)
    assert not torch._C._dispatch_tls_is_dispatch_key_included(PYTHON_DISPATCHER)


def test_dynamic_dims_without_a_shape_env_is_a_clear_error():
    with pytest.raises(FakeTensorError, match="shape_env"):
        FakeTensorMode().from_real(torch.randn(3, 4), dynamic_dims=[0])


def test_inplace_ops_on_dynamic_fakes_add_no_guards():
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake = mode.from_real(torch.randn(4, 6), dynamic_dims=[0, 1], source="x")
    guards_before = list(mode.shape_env.produce_guards())
    with mode:
        fake.add_(1).mul_(2).sigmoid_()
        fake.t_()
    assert list(mode.shape_env.produce_guards()) == guards_before
    assert at_hints(mode.shape_env, fake.shape) == (6, 4)


# C++ meta kernels that read sizes as ints: rerun on the example sizes, which they guard.
SIZE_READING_KERNELS = {
    "fractional_max_pool3d": lambda x: torch.nn.functional.fractional_max_pool3d(x, 2, output_size=(2, 3, 2)),
    "fractional_max_pool3d_with_indices": lambda x: torch.nn.functional.fractional_max_pool3d(
        x, 2, output_size=(2, 3, 2), return_indices=True
    ),
}


@pytest.mark.parametrize("program", SIZE_READING_KERNELS.values(), ids=SIZE_READING_KERNELS.keys())
def test_kernel_reading_sizes_as_ints_specializes_them_and_matches_eager(program):
    real = torch.randn(2, 3, 5, 6, 7)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake = mode.from_real(real, dynamic_dims=[0, 2], source="x")
    with mode:
        out = program(fake)
    eager = program(real)
    for fake_out, eager_out in zip(out if isinstance(out, tuple) else (out,), eager if isinstance(eager, tuple) else (eager,)):
        assert at_hints(mode.shape_env, fake_out.shape) == tuple(eager_out.shape)
        assert fake_out.dtype == eager_out.dtype
    batch, depth = fake.shape[0].node.expr, fake.shape[2].node.expr
    assert mode.shape_env.guards_hold_at({batch: 2, depth: 5})
    assert not mode.shape_env.guards_hold_at({batch: 3, depth: 5})


def test_composite_kernel_reading_int_sizes_of_a_dynamic_fake_is_a_clear_error():
    # torch.cov's C++ kernel calls numel() on its weights, which refuses symbolic sizes;
    # eager runs it, so the error must not pass for one eager would raise.
    x, weights = torch.randn(3, 4), torch.tensor([1, 2, 1, 3])
    torch.cov(x, fweights=weights)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake_x = mode.from_real(x, dynamic_dims=[1], source="x")
    fake_weights = mode.from_real(weights, dynamic_dims=[0], source="w")
    with pytest.raises(StaticSizesRequiredError, match=r"test_dynamic_from_real.py:\d+ .*torch.cov.*static"):
        with mode:
            torch.cov(fake_x, fweights=fake_weights)
