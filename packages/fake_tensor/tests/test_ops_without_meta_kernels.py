"""Ops without a meta kernel: decomposed when torch._decomp knows how, else a clear error."""

import pytest
import torch
from torch._decomp import decomposition_table

from fake_tensor import FakeTensorMode, UnsupportedFakeOpError, is_fake


@pytest.fixture(scope="module")
def library():
    library = torch.library.Library("fake_tensor_test", "DEF")
    library.define("cpu_only(Tensor x) -> Tensor")
    library.impl("cpu_only", lambda x: x * 2, "CPU")
    library.define("decomposable(Tensor x) -> Tensor")
    library.impl("decomposable", lambda x: x.t().contiguous(), "CPU")
    yield torch.ops.fake_tensor_test
    del library


def test_op_without_meta_kernel_raises_naming_the_op(library):
    op = library.cpu_only.default
    real = torch.randn(3)
    op(real)  # eager runs it
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    with pytest.raises(UnsupportedFakeOpError, match="fake_tensor_test.cpu_only") as caught:
        with mode:
            op(fake)
    assert caught.value.op is op


def test_op_without_meta_kernel_runs_its_decomposition(library):
    op = library.decomposable.default
    decomposition_table[op] = lambda x: x.t().contiguous()
    try:
        real = torch.randn(3, 5)
        eager = op(real)
        mode = FakeTensorMode()
        with mode:
            fake_out = op(mode.from_real(real))
    finally:
        del decomposition_table[op]
    assert is_fake(fake_out) and (fake_out.shape, fake_out.stride()) == (eager.shape, eager.stride())


@pytest.mark.parametrize("op", [torch._foreach_addcdiv, torch._foreach_addcmul, torch._foreach_addcdiv_, torch._foreach_addcmul_])
def test_foreach_ops_with_a_tensor_of_scalars(op):
    # Their kernel reads the scalars (a CPU tensor), which a meta tensor does not hold.
    reals = [[torch.randn(3, 2), torch.randn(5)] for _ in range(3)]
    mode = FakeTensorMode()
    fakes = [[mode.from_real(t) for t in ts] for ts in reals]
    scalars = mode.from_real(torch.tensor([0.5, -2.0]))
    with mode:
        result = op(*fakes, scalars)
    expected = op(*reals, torch.tensor([0.5, -2.0]))
    if expected is None:  # in place: the first list keeps its metadata
        result, expected = fakes[0], reals[0]
    assert [(t.shape, t.dtype, t.device) for t in result] == [(t.shape, t.dtype, t.device) for t in expected]
    assert all(is_fake(t) for t in result)
    with pytest.raises(RuntimeError, match="length of scalars"), mode:
        op(*fakes, mode.from_real(torch.tensor([1.0, 2.0, 3.0])))
