"""Property tests: random programs of broadcasting, reshape, cat, slice, pad, chunk, repeat,
unflatten, pooling, transpose, reductions and matmul, run on fakes whose every input size is
dynamic, against eager runs.

1. At the example sizes, every symbolic output shape equals the real one.
2. Guards are sound: for new input sizes that pass the recorded guards, eager runs the
   program without error and gives exactly the symbolic shape evaluated at the new sizes.
3. Guards are not vacuous: they hold for the example inputs themselves.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fake_tensor import FakeTensorMode, ShapeEnv

pytestmark = pytest.mark.slow

MAX_RANK = 3


@st.composite
def programs(draw):
    """(input shapes as base-size indices or 1, steps). Base sizes are drawn separately."""
    n_inputs = draw(st.integers(1, 3))
    shape = st.lists(st.sampled_from([0, 1, 2, "one"]), min_size=1, max_size=MAX_RANK)
    input_shapes = [draw(shape) for _ in range(n_inputs)]
    step = st.one_of(
        st.tuples(st.just("binary"), st.integers(0, n_inputs - 1), st.sampled_from(["add", "mul", "sub"])),
        st.tuples(st.just("cat"), st.integers(0, n_inputs - 1), st.integers(-MAX_RANK, MAX_RANK - 1)),
        st.tuples(st.just("reshape"), st.sampled_from(["flat", "keep_first", "keep_last", "split_first"])),
        st.tuples(
            st.just("slice"),
            st.integers(0, MAX_RANK - 1),
            st.one_of(st.none(), st.integers(-12, 12)),
            st.one_of(st.none(), st.integers(-12, 12)),
            st.sampled_from([1, 1, 2, 3]),
        ),
        st.tuples(st.just("transpose"), st.integers(0, MAX_RANK - 1), st.integers(0, MAX_RANK - 1)),
        st.tuples(st.just("sum"), st.integers(0, MAX_RANK - 1), st.booleans()),
        st.tuples(st.just("matmul"), st.integers(0, n_inputs - 1)),
        st.tuples(st.just("unsqueeze_expand"), st.integers(0, n_inputs - 1)),
        st.tuples(st.just("pad"), st.integers(0, 3), st.integers(0, 3)),
        st.tuples(st.just("chunk"), st.integers(0, MAX_RANK - 1), st.integers(1, 4)),
        st.tuples(st.just("repeat"), st.integers(1, 3)),
        st.tuples(st.just("unflatten"), st.integers(2, 3)),
        st.tuples(st.just("max_pool"), st.integers(1, 3), st.integers(1, 3)),
    )
    steps = draw(st.lists(step, min_size=1, max_size=5))
    return input_shapes, steps


def make_inputs(input_shapes, base: list[int]) -> list[torch.Tensor]:
    return [torch.randn([1 if e == "one" else base[e] for e in shape]) for shape in input_shapes]


def run(steps, inputs: list[torch.Tensor]) -> torch.Tensor:
    x = inputs[0]
    for kind, *params in steps:
        x = STEPS[kind](x, inputs, *params)
    return x


def _binary(x, inputs, i, op):
    return getattr(torch, op)(x, inputs[i])


def _cat(x, inputs, i, dim):
    return torch.cat([x, inputs[i]], dim)


def _reshape(x, inputs, how):
    if how == "flat":
        return x.reshape(-1)
    if how == "keep_first":
        return x.reshape(x.shape[0], -1)
    if how == "keep_last":
        return x.reshape(-1, x.shape[-1])
    return x.reshape(2, -1) if x.shape[0] % 2 == 0 else x.reshape(-1, 1)


def _slice(x, inputs, dim, start, stop, step):
    return x[(slice(None),) * (dim % x.dim()) + (slice(start, stop, step),)]


def _transpose(x, inputs, d0, d1):
    return x.transpose(d0 % x.dim(), d1 % x.dim())


def _sum(x, inputs, dim, keepdim):
    return x.sum(dim % x.dim(), keepdim=keepdim)


def _matmul(x, inputs, i):
    other = inputs[i]
    return x @ other.reshape(x.shape[-1], -1) if other.numel() % x.shape[-1] == 0 else x @ x.transpose(-1, -2)


def _unsqueeze_expand(x, inputs, i):
    return x.unsqueeze(0).expand(inputs[i].shape[0], *x.shape)


def _pad(x, inputs, left, right):
    return torch.nn.functional.pad(x, (left, right))


def _chunk(x, inputs, dim, chunks):
    return x.chunk(chunks, dim % x.dim())[-1]


def _repeat(x, inputs, times):
    return x.repeat(times, *([1] * (x.dim() - 1)))


def _unflatten(x, inputs, factor):
    return x.unflatten(-1, (factor, -1))


def _max_pool(x, inputs, kernel, stride):
    return torch.nn.functional.max_pool1d(x, kernel, stride, ceil_mode=True)


STEPS = {
    "binary": _binary,
    "cat": _cat,
    "reshape": _reshape,
    "slice": _slice,
    "transpose": _transpose,
    "sum": _sum,
    "matmul": _matmul,
    "unsqueeze_expand": _unsqueeze_expand,
    "pad": _pad,
    "chunk": _chunk,
    "repeat": _repeat,
    "unflatten": _unflatten,
    "max_pool": _max_pool,
}


def _eager_shape(steps, inputs):
    try:
        return tuple(run(steps, inputs).shape)
    except (RuntimeError, IndexError, ValueError, ZeroDivisionError):
        return None


def trace(steps, inputs):
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    fakes = [mode.from_real(t, dynamic_dims=range(t.dim()), source=f"in{i}") for i, t in enumerate(inputs)]
    with mode:
        out = run(steps, fakes)
    return env, out


base_sizes = st.lists(st.integers(2, 9), min_size=3, max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(program=programs(), base=base_sizes, new_base=base_sizes)
def test_symbolic_shapes_match_eager_and_guards_are_sound(program, base, new_base):
    input_shapes, steps = program
    inputs = make_inputs(input_shapes, base)
    expected = _eager_shape(steps, inputs)
    assume(expected is not None)  # eager rejects the program at these sizes

    env, out = trace(steps, inputs)
    assert tuple(env.size_hint(s) for s in out.shape) == expected
    sources = {f"in{i}": t for i, t in enumerate(inputs)}
    assert env.failed_guards(sources) == []

    new_inputs = make_inputs(input_shapes, new_base)
    new_sources = {f"in{i}": t for i, t in enumerate(new_inputs)}
    if env.evaluate_guards(new_sources):
        event("guards pass at the new sizes: soundness checked")
        values = env.bind_symbols(new_sources)
        predicted = tuple(int(s.node.expr.xreplace(values)) if isinstance(s, torch.SymInt) else s for s in out.shape)
        assert _eager_shape(steps, new_inputs) == predicted
