"""In-place ops, `out=` and views on fakes behave as in eager: same results, same aliasing,
same version counters, same autograd history."""

import pytest
import torch

from fake_tensor import FakeTensorMode, is_fake


def geometry(t: torch.Tensor) -> tuple:
    return t.shape, t.stride(), t.storage_offset(), t.dtype


def run_both(program, *reals):
    """Run `program` on the real tensors and on fakes of them; return both results."""
    mode = FakeTensorMode()
    fakes = [mode.from_real(r) for r in reals]
    real_out = program(*reals)
    with mode:
        fake_out = program(*fakes)
    return real_out, fake_out, fakes


INPLACE_VIEW_PROGRAMS = {
    "add_through_slice": lambda x: x[1:].add_(1),
    "mul_through_transpose": lambda x: x.t().mul_(2),
    "copy_into_column": lambda x: x[:, 0].copy_(torch.ones(4)),
    "fill_through_view": lambda x: x.view(-1)[::2].fill_(0),
    "masked_fill_with_mask": lambda x: x.masked_fill_(x > 0, 0.0),
    "setitem_with_mask": lambda x: x.__setitem__(x > 0, 1.0) or x,
    "index_add": lambda x: x.index_add_(0, torch.tensor([0, 2]), torch.ones(2, 5)),
}


@pytest.mark.parametrize("program", INPLACE_VIEW_PROGRAMS.values(), ids=INPLACE_VIEW_PROGRAMS.keys())
def test_inplace_through_a_view_is_seen_by_base_and_view(program):
    real_base = torch.randn(4, 5)
    real_view = real_base[1:3]
    real_out, fake_out, (fake_base, fake_view) = run_both(lambda b, v: program(b), real_base, real_view)
    assert geometry(fake_out) == geometry(real_out)
    assert torch._C._is_alias_of(fake_out, fake_base) == torch._C._is_alias_of(real_out, real_base)
    assert (fake_base._version, fake_view._version) == (real_base._version, real_view._version)


FOREACH_WRITES = {
    "add_ of two": lambda x, y, view: torch._foreach_add_([x, y], [y, x]),
    "one listed twice": lambda x, y, view: torch._foreach_mul_([x, x], 2.0),
    "a view and its base": lambda x, y, view: torch._foreach_addcmul_([view, y], [y[:2], x], [x[:2], x], value=0.5),
}


@pytest.mark.parametrize("program", FOREACH_WRITES.values(), ids=FOREACH_WRITES.keys())
def test_foreach_writes_move_each_items_version_counter(program):
    # Eager's foreach kernels write each item through its own in-place op (capture reads the
    # version counters to find the inputs a graph writes).
    x = torch.randn(3)
    reals = (x, torch.randn(3), x[:2])
    _, _, fakes = run_both(program, *reals)
    assert [f._version for f in fakes] == [r._version for r in reals]


def test_inplace_op_returns_its_input():
    real = torch.randn(3)
    real_out, fake_out, (fake,) = run_both(lambda x: x.add_(1), real)
    assert (real_out is real) and (fake_out is fake)


METADATA_MUTATIONS = {
    "t_": lambda x, y: x.t_(),
    "transpose_": lambda x, y: x.transpose_(0, 1),
    "unsqueeze_": lambda x, y: x.unsqueeze_(1),
    "squeeze_": lambda x, y: x[:1].squeeze_(0),
    "as_strided_": lambda x, y: x.as_strided_((2, 2), (1, 3), 1),
    "resize_larger": lambda x, y: x.resize_(5, 7),
    "resize_smaller": lambda x, y: x.resize_(2),
    "resize_as_": lambda x, y: x.resize_as_(y),
    "set_to_other": lambda x, y: x.set_(y),
    "set_to_other_storage": lambda x, y: x.set_(y.untyped_storage(), 1, (2,), (2,)),
}


@pytest.mark.parametrize("program", METADATA_MUTATIONS.values(), ids=METADATA_MUTATIONS.keys())
def test_inplace_metadata_change_matches_eager(program):
    real_x, real_y = torch.randn(3, 4), torch.randn(2, 6)
    real_out, fake_out, (fake_x, fake_y) = run_both(program, real_x, real_y)
    assert geometry(fake_out) == geometry(real_out)
    assert geometry(fake_x) == geometry(real_x)
    assert torch._C._is_alias_of(fake_x, fake_y) == torch._C._is_alias_of(real_x, real_y)
    assert fake_x.untyped_storage().nbytes() == real_x.untyped_storage().nbytes()


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("out_shape", [(3, 4), (0,), (12,)], ids=["right_size", "empty", "wrong_size"])
def test_out_argument_is_written_and_resized_like_eager(out_shape):
    real_a, real_b, real_out_arg = torch.randn(3, 4), torch.randn(4), torch.empty(out_shape)
    real_res, fake_res, (_, _, fake_out_arg) = run_both(
        lambda a, b, o: torch.add(a, b, out=o), real_a, real_b, real_out_arg
    )
    assert fake_res is fake_out_arg
    assert geometry(fake_out_arg) == geometry(real_out_arg)


def test_views_share_storage_with_their_base():
    real = torch.randn(4, 6)
    programs = [lambda x: x[1:], lambda x: x.t(), lambda x: x.view(2, 12), lambda x: x.unbind(0)[2],
                lambda x: x.split(2, dim=1)[1], lambda x: x.diagonal(), lambda x: x.expand(3, 4, 6)]
    for program in programs:
        real_out, fake_out, (fake,) = run_both(program, real)
        assert geometry(fake_out) == geometry(real_out)
        assert fake_out._base is fake and torch._C._is_alias_of(fake_out, fake)


def test_inplace_on_a_view_rewrites_autograd_history_like_eager():
    leaf = torch.randn(4, 3, requires_grad=True)

    def program(w):
        base = w.clone()
        base[1:].mul_(2)  # turns base's grad_fn into CopySlices
        return base

    real_out, fake_out, (fake_leaf,) = run_both(program, leaf)
    assert type(fake_out.grad_fn).__name__ == type(real_out.grad_fn).__name__
    real_out.sum().backward()
    with fake_leaf.fake_mode:
        fake_out.sum().backward()
    assert is_fake(fake_leaf.grad) and geometry(fake_leaf.grad) == geometry(leaf.grad)
