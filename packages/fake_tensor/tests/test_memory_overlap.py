"""Writes whose target shares memory with what the op reads: on fakes, an op raises eager's
RuntimeError exactly when eager refuses the write (aten/src/ATen/MemoryOverlap.cpp), and
OverlappingWriteError when eager goes ahead but a graph reading its arguments before writing
would compute something else. Meta kernels skip eager's checks, so these writes used to pass.
"""

import pytest
import torch

from fake_tensor import FakeTensorMode, OverlappingWriteError, ShapeEnv

INDEX = [0, 2, 1]

# Each program writes through views of one buffer `b` of 8 elements.
WRITES = {
    "add_ of overlapping slices": lambda b: b[:-1].add_(b[1:]),
    "add_ of disjoint slices": lambda b: b[:3].add_(b[3:6]),
    "add_ of a tensor to itself": lambda b: b.add_(b),
    "add_ of slices over the same elements": lambda b: b[:4].add_(b[:4]),
    "add_ of interleaved strided slices": lambda b: b.view(4, 2)[:, 0].add_(b.view(4, 2)[:, 1]),
    "add out= an overlapping slice": lambda b: torch.add(b[1:], b[:-1], out=b[:-1]),
    "mul_ by a transpose over the same elements": lambda b: b[:4].view(2, 2).mul_(b[:4].view(2, 2).t()),
    "copy_ of overlapping slices": lambda b: b[:-1].copy_(b[1:]),
    "copy_ of a tensor to itself": lambda b: b.copy_(b),
    "add_ into an expanded slice": lambda b: b[:1].expand(3).add_(1.0),
    "index_add_ of an overlapping slice": lambda b: b[:-1].index_add_(0, torch.tensor(INDEX), b[1:4]),
    "index_add_ of the tensor itself": lambda b: b[:3].index_add_(0, torch.tensor(INDEX), b[:3]),
    "scatter_ of an overlapping slice": lambda b: b[:-1].scatter_(0, torch.tensor(INDEX), b[1:4]),
    "index_put_ of an overlapping slice": lambda b: b[:-1].index_put_((torch.tensor(INDEX),), b[1:4]),
    "cat out= an overlapping slice": lambda b: torch.cat([b[:2], b[2:4]], out=b[1:5]),
    "foreach add_ of overlapping slices": lambda b: torch._foreach_add_([b[:-1]], [b[1:]]),
}
# Eager goes ahead, but what its kernel leaves in memory is not what reading first gives.
UNFAITHFUL = {
    "sum out= an overlapping slice": lambda b: torch.sum(b[:6].view(2, 3), 0, out=b[1:4]),
    "fill_ of an expanded slice": lambda b: b[:1].expand(3).fill_(2.0),
    # Too hard for eager to classify, but they share elements: its loop reads what it wrote.
    "add_ of strided views sharing elements": lambda b: b.as_strided((3,), (2,), 2).add_(b.as_strided((3,), (2,), 0)),
}


def _real_error(program, size=8):
    try:
        program(torch.randn(size))
    except RuntimeError as error:
        return str(error)
    return None


@pytest.mark.parametrize("program", WRITES.values(), ids=WRITES.keys())
def test_fakes_refuse_a_write_exactly_when_eager_does(program):
    expected = _real_error(program)
    mode = FakeTensorMode()
    fake = mode.from_real(torch.randn(8))
    with mode:
        if expected is None:
            program(fake)
        else:
            with pytest.raises(RuntimeError) as error:
                program(fake)
            assert str(error.value) == expected


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("program", UNFAITHFUL.values(), ids=UNFAITHFUL.keys())
def test_a_write_eager_allows_but_a_graph_cannot_reproduce_is_named(program):
    assert _real_error(program) is None
    mode = FakeTensorMode()
    fake = mode.from_real(torch.randn(8))
    with mode, pytest.raises(OverlappingWriteError, match="writes into memory that its arguments share"):
        program(fake)


def _mm_into_its_own_input(b):
    return torch.mm(b[:4].view(2, 2), b[4:].view(2, 2), out=b[:4].view(2, 2))


def test_mm_into_its_own_input_is_named_where_this_machines_eager_does_not_read_first():
    """Whether eager's mm reads its inputs before it writes depends on the BLAS library and
    the CPU (MKL on an AVX-512 machine gives the read-first result, the CI machine does not):
    the fakes ask eager, so they name the write exactly where it differs."""
    b = torch.randn(8)
    read_first = torch.mm(b[:4].view(2, 2), b[4:].view(2, 2))
    _mm_into_its_own_input(b)
    reads_first = torch.equal(b[:4].view(2, 2), read_first)
    mode = FakeTensorMode()
    fake = mode.from_real(torch.randn(8))
    with mode:
        if reads_first:
            _mm_into_its_own_input(fake)
        else:
            with pytest.raises(OverlappingWriteError, match="writes into memory that its arguments share"):
                _mm_into_its_own_input(fake)


def test_asking_eager_leaves_the_random_state_and_the_real_arguments_alone():
    mode = FakeTensorMode()
    fake = mode.from_real(torch.randn(8))
    real_scalar = torch.tensor(3.0)
    state = torch.get_rng_state()
    with mode:
        fake.mul_(fake)  # the same tensor twice: eager is asked, and agrees with reading first
        fake[:4].bernoulli_(fake[:4].sigmoid())
        fake[:4].add_(fake[4:], alpha=2).mul_(real_scalar)
    assert torch.equal(torch.get_rng_state(), state)
    assert real_scalar.item() == 3.0


@pytest.mark.parametrize("size,refused", [(6, False), (8, True), (12, False)], ids=["same", "partial", "disjoint"])
def test_overlap_of_symbolic_slices_is_decided_by_guards(size, refused):
    """`b[:4]` against `b[n-6 : n-2]`: the same elements at n = 6, some at n = 8, none at
    n = 12. The verdict at the example size holds under the guards it recorded, and they
    reject the sizes where the slices overlap otherwise."""
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    fake = mode.from_real(torch.randn(size), dynamic_dims=[0], source="L['b']")
    k = fake.shape[0] - 6
    with mode:
        if refused:
            with pytest.raises(RuntimeError, match="some elements of the input tensor"):
                fake[:4].add_(fake[k : k + 4])
        else:
            fake[:4].add_(fake[k : k + 4])
    for other in (6, 7, 8, 9, 12, 20):
        eager_refuses = _real_error(lambda b, o=other: b[:4].add_(b[o - 6 : o - 2]), other) is not None
        if eager_refuses != refused:
            assert not env.evaluate_guards({"L['b']": torch.randn(other)}), f"size {other} passes the guards"


def test_arguments_too_large_to_ask_about_run_as_eager_runs_them_and_are_not_remembered(monkeypatch):
    """`x.mul_(x)` on arguments too large to copy to the CPU: eager is not asked, so the op
    must run in place (OverlappingWriteError); smaller arguments of the same pattern are still
    asked, and compile."""
    from fake_tensor import memory_overlap

    mode = FakeTensorMode()
    small = mode.from_real(torch.randn(8, dtype=torch.float64))
    large = mode.from_real(torch.randn(64, dtype=torch.float64))
    monkeypatch.setattr(memory_overlap, "_LARGEST_QUESTION_BYTES", 256)
    with mode:
        with pytest.raises(OverlappingWriteError, match="cannot be copied to the CPU"):
            large.mul_(large)
        small.mul_(small)


FLAT_BUFFER_WRITES = {
    "mul_ of disjoint views": lambda views, shifted: torch._foreach_mul_(views, 0.5),
    "add_ of disjoint views": lambda views, shifted: torch._foreach_add_(views, views[::-1]),
    "add_ of views one element off": lambda views, shifted: torch._foreach_add_(views, shifted),
}


@pytest.mark.parametrize("program", FLAT_BUFFER_WRITES.values(), ids=FLAT_BUFFER_WRITES.keys())
def test_foreach_over_views_of_one_flat_buffer_matches_eager(program):
    """Parameters as views of one flat buffer (as some optimizers keep them): only views whose
    memory meets are compared, and the verdict is eager's."""

    def run(flat):
        views = [flat[i * 8 : (i + 1) * 8] for i in range(100)]
        shifted = [flat[i * 8 + 1 : (i + 1) * 8 + 1] for i in range(100)]
        program(views, shifted)

    expected = _real_error(run, 808)
    mode = FakeTensorMode()
    fake = mode.from_real(torch.randn(808))
    with mode:
        if expected is None:
            run(fake)
        else:
            with pytest.raises(RuntimeError) as error:
                run(fake)
            assert str(error.value) == expected
