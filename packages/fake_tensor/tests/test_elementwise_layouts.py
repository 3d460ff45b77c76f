"""Binary TensorIterator ops whose torch meta kernel is a Python decomposition: the fake's
strides are eager's (the output follows a transposed first operand), for static and symbolic
sizes. With the meta layout, a backward that views softplus_backward's gradient failed at
run time (HF Doge in training)."""

import pytest
import torch

from fake_tensor import FakeTensorMode, ShapeEnv

aten = torch.ops.aten


def calls():
    """op name -> (op, arguments for two operands `a`, `b`)."""
    return {
        "softplus_backward": (aten.softplus_backward.default, lambda a, b: (a, b, 1.0, 20.0)),
        "elu_backward": (aten.elu_backward.default, lambda a, b: (a, 1.0, 1.0, 1.0, False, b)),
        "hardsigmoid_backward": (aten.hardsigmoid_backward.default, lambda a, b: (a, b)),
        "hardswish_backward": (aten.hardswish_backward.default, lambda a, b: (a, b)),
        "hardtanh_backward": (aten.hardtanh_backward.default, lambda a, b: (a, b, -1.0, 1.0)),
        "logit_backward": (aten.logit_backward.default, lambda a, b: (a, b.sigmoid())),
        "xlogy": (aten.xlogy.Tensor, lambda a, b: (a, b)),
        "special_xlog1py": (aten.special_xlog1py.default, lambda a, b: (a, b)),
        "copysign": (aten.copysign.Tensor, lambda a, b: (a, b)),
    }


def operands():
    """Layout pairs where TensorIterator's choice matters: which operand is transposed, a
    broadcast row, a permuted 4-d tensor."""
    transposed = torch.rand(2, 3, 5).transpose(1, 2)
    plain = torch.rand(2, 5, 3)
    return {
        "first_transposed": (transposed, plain),
        "second_transposed": (plain, transposed),
        "transposed_and_row": (transposed, torch.rand(3)),
        "row_and_transposed": (torch.rand(1, 1, 3), transposed),
        "channels_last_first": (torch.rand(2, 3, 4, 5).permute(0, 2, 3, 1), torch.rand(2, 4, 5, 3)),
    }


def described(t):
    return t.shape, t.dtype, t.stride()


@pytest.mark.parametrize("layouts", list(operands()))
@pytest.mark.parametrize("name", list(calls()))
def test_fake_output_is_laid_out_as_eager(name, layouts):
    op, arguments = calls()[name]
    a, b = operands()[layouts]
    eager = op(*arguments(a, b))
    mode = FakeTensorMode()
    with mode:
        fake = op(*arguments(mode.from_real(a), mode.from_real(b)))
    assert described(fake) == described(eager)


@pytest.mark.parametrize("name", list(calls()))
def test_symbolic_sizes_keep_eager_layout(name):
    op, arguments = calls()[name]
    a, b = operands()["first_transposed"]
    eager = op(*arguments(a, b))
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake_a = mode.from_real(a, dynamic_dims=[0, 1, 2], source="L['a']")
    fake_b = mode.from_real(b, dynamic_dims=[0, 1, 2], source="L['b']")
    with mode:
        fake = op(*arguments(fake_a, fake_b))
    at_hints = [mode.shape_env.size_hint(s) for s in (*fake.shape, *fake.stride())]
    assert at_hints == [*eager.shape, *eager.stride()]
