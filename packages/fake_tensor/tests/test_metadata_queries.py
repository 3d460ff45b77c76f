"""ATen metadata queries (`aten.size`, `aten.sym_stride`...) on fakes answer what the real
tensor answers, symbolic where the fake's sizes are; composite kernels that ask them run on
dynamic fakes."""

import pytest
import torch

from fake_tensor import FakeTensorMode, ShapeEnv

aten = torch.ops.aten


def hinted(env, value):
    if isinstance(value, (list, tuple)):
        return tuple(env.size_hint(v) for v in value)
    return env.size_hint(value)


def dynamic_fake(real, dims):
    mode = FakeTensorMode(shape_env=ShapeEnv())
    return mode, mode.from_real(real, dynamic_dims=dims, source="x")


QUERIES = {
    "sym_size": (aten.sym_size.default, ()),
    "sym_size_int": (aten.sym_size.int, (1,)),
    "sym_stride": (aten.sym_stride.default, ()),
    "sym_stride_int": (aten.sym_stride.int, (0,)),
    "sym_numel": (aten.sym_numel.default, ()),
    "sym_storage_offset": (aten.sym_storage_offset.default, ()),
    "size": (aten.size.default, ()),
    "size_int": (aten.size.int, (-1,)),
    "stride": (aten.stride.default, ()),
    "stride_int": (aten.stride.int, (1,)),
    "dim": (aten.dim.default, ()),
}


@pytest.mark.parametrize("query,extra", QUERIES.values(), ids=QUERIES.keys())
def test_metadata_query_on_a_dynamic_fake_answers_like_the_real_tensor(query, extra):
    real = torch.randn(7, 6, 5)[1:, :, 1:4].transpose(1, 2)  # offset, non-contiguous
    mode, fake = dynamic_fake(real, [0, 2])
    with mode:
        answer = query(fake, *extra)
    expected = query(real, *extra)
    assert hinted(mode.shape_env, answer) == (tuple(expected) if isinstance(expected, (list, tuple)) else expected)


@pytest.mark.parametrize("query", [aten.sym_size.default, aten.sym_stride.default, aten.sym_numel.default])
def test_symbolic_queries_keep_sizes_symbolic_and_record_no_guard(query):
    mode, fake = dynamic_fake(torch.randn(4, 6), [0, 1])
    guards_before = list(mode.shape_env.produce_guards())
    with mode:
        answer = query(fake)
    leaves = answer if isinstance(answer, (list, tuple)) else [answer]
    assert any(isinstance(v, torch.SymInt) for v in leaves)
    assert list(mode.shape_env.produce_guards()) == guards_before


def test_a_concrete_size_query_on_a_symbolic_dim_guards_that_size():
    real = torch.randn(4, 6)
    mode, fake = dynamic_fake(real, [0])
    symbol = fake.shape[0].node.expr
    with mode:
        size = aten.size.int(fake, 0)
    assert size == real.shape[0]
    assert mode.shape_env.guards_hold_at({symbol: real.shape[0]})
    assert not mode.shape_env.guards_hold_at({symbol: real.shape[0] + 1})


# Composite kernels (C++) that query sizes through ATen when an argument is a tensor subclass.
COMPOSITES = {
    "take_along_dim": lambda x: torch.take_along_dim(x, torch.zeros(x.shape, dtype=torch.long), 1),
    "linalg_norm": lambda x: torch.linalg.norm(x, dim=(0, 1)),
    "matrix_norm": lambda x: torch.linalg.matrix_norm(x),
    "multi_dot": lambda x: torch.linalg.multi_dot([x, x.t(), x]),
    "kron": lambda x: torch.kron(x, x),
    "cross_entropy": lambda x: torch.nn.functional.cross_entropy(x, torch.zeros(x.shape[0], dtype=torch.long)),
}


@pytest.mark.parametrize("program", COMPOSITES.values(), ids=COMPOSITES.keys())
def test_composite_ops_on_dynamic_fakes_match_eager_at_the_hints(program):
    real = torch.randn(5, 3)
    mode, fake = dynamic_fake(real, [0])
    with mode:
        out = program(fake)
    assert hinted(mode.shape_env, out.shape) == tuple(program(real).shape)
    assert out.dtype == program(real).dtype
    assert mode.shape_env.guards_hold_at({fake.shape[0].node.expr: real.shape[0]})
