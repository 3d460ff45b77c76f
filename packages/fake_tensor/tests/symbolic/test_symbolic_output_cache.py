"""Repeated ops on fakes with symbolic sizes (served by the meta output cache, keyed on size
expressions) still match eager at the hints, stay symbolic, and keep every guard."""

import pytest
import torch

from fake_tensor import FakeTensorMode, ShapeEnv

PROGRAMS = {
    "add_broadcast": (lambda x: x + x[0], lambda: torch.randn(6, 5)),
    "linear_gelu": (lambda x: torch.nn.functional.gelu(torch.nn.functional.linear(x, torch.ones(7, 5))), lambda: torch.randn(6, 5)),
    "softmax_transposed": (lambda x: torch.softmax(x.t(), -1), lambda: torch.randn(6, 5)),
    "layer_norm": (lambda x: torch.nn.functional.layer_norm(x, (5,)), lambda: torch.randn(3, 6, 5)),
    "max_with_indices": (lambda x: torch.max(x, 1), lambda: torch.randn(6, 5)),
    "matmul": (lambda x: x @ x.transpose(-1, -2), lambda: torch.randn(3, 6, 5)),
    "inplace": (lambda x: x.clone().mul_(2).add_(1), lambda: torch.randn(6, 5)),
}


def hinted(env, t):
    return tuple(env.size_hint(s) for s in t.shape), tuple(env.size_hint(s) for s in t.stride()), t.dtype


def outputs(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("program,make", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_repeated_ops_on_dynamic_fakes_match_eager_at_the_hints(program, make):
    real = make()
    expected = [(tuple(e.shape), e.stride(), e.dtype) for e in outputs(program(real))]
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fake = mode.from_real(real, dynamic_dims=range(real.dim()), source="x")
    with mode:
        first, repeat = program(fake), program(fake)
    env = mode.shape_env
    assert [hinted(env, f) for f in outputs(first)] == expected
    assert [hinted(env, r) for r in outputs(repeat)] == expected
    assert [tuple(map(str, r.shape)) for r in outputs(repeat)] == [tuple(map(str, f.shape)) for f in outputs(first)]


def test_a_repeat_is_served_from_the_cache_with_symbolic_sizes():
    mode = FakeTensorMode(shape_env=ShapeEnv())
    x = mode.from_real(torch.randn(6, 5), dynamic_dims=[0, 1], source="x")
    with mode:
        first = torch.exp(x)
        cache = mode.shape_env.meta_output_caches[torch.ops.aten.exp.default]
        assert len(cache._entries) == 1
        repeat = torch.exp(x)
    assert len(cache._entries) == 1
    assert repeat is not first and all(isinstance(s, torch.SymInt) for s in repeat.shape)


def test_shape_envs_do_not_share_cached_calls_so_each_records_its_guards():
    # Without duck sizing both inputs get their own symbol; broadcasting them equates the
    # two. Each env names its symbols s0, s1, so a cache shared across envs would serve the
    # second env's call without recording its equality.
    for _ in range(2):
        mode = FakeTensorMode(shape_env=ShapeEnv(duck_shape=False))
        x = mode.from_real(torch.randn(4), dynamic_dims=[0], source="x")
        y = mode.from_real(torch.randn(4), dynamic_dims=[0], source="y")
        with mode:
            torch.add(x, y)
        s0, s1 = x.shape[0].node.expr, y.shape[0].node.expr
        assert not mode.shape_env.guards_hold_at({s0: 4, s1: 5})
        assert mode.shape_env.guards_hold_at({s0: 5, s1: 5})


def test_sizes_that_differ_as_expressions_are_not_served_each_others_outputs():
    mode = FakeTensorMode(shape_env=ShapeEnv(duck_shape=False))
    x = mode.from_real(torch.randn(4, 3), dynamic_dims=[0], source="x")
    y = mode.from_real(torch.randn(4, 3), dynamic_dims=[0], source="y")
    with mode:
        out_x, out_y = torch.exp(x), torch.exp(y)
    assert out_x.shape[0].node.expr == x.shape[0].node.expr
    assert out_y.shape[0].node.expr == y.shape[0].node.expr
