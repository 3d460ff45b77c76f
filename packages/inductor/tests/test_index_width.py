"""Triton kernels over symbolic sizes index in 32 bits while the example sizes fit, with a guard
in the shape env that keeps the sizes below 2**31 without specializing them (issue 18:
torch.compile does the same); past 2**31 they index in 64 bits. C++ kernels index in int64_t
at every size and ask nothing.
"""

from __future__ import annotations

import pytest
import sympy
import torch
import torch.fx

from conftest import BACKENDS, assert_same
from test_dynamic_kernels import trace_dynamic

import inductor

fake_tensor = pytest.importorskip("fake_tensor")
aten = torch.ops.aten
TRITON = next((name for name in BACKENDS if name.startswith("triton")), None)
needs_triton = pytest.mark.skipif(TRITON is None, reason="no Triton backend here")
DEVICE, TRITON_OPTIONS = BACKENDS.get(TRITON, ("cpu", {}))

CASES = {
    "pointwise": lambda x, w: (aten.mul.Tensor(aten.exp.default(x), 0.5),),
    "reduction": lambda x, w: (aten._softmax.default(aten.add.Tensor(x, w), -1, False),
                               aten.sum.dim_IntList(x, [0])),
}


def _inputs(rows):
    return [torch.randn(rows, 24, device=DEVICE), torch.randn(24, device=DEVICE)]


def _shape_env(gm):
    x = next(iter(gm.graph.find_nodes(op="placeholder"))).meta["val"]
    return x.shape[0].node.shape_env


def _kernel_text(compiled) -> str:
    return "\n".join(compiled.kernel_sources.values())


def _fake_graph(fn, rows: int, cols: int = 32):
    """`fn`'s graph over a fake (rows, cols) CPU input whose rows are symbolic, and that input:
    a size too large to allocate can still be compiled for."""
    env = fake_tensor.ShapeEnv()
    mode = fake_tensor.FakeTensorMode(shape_env=env)
    sizes, strides, _ = env.symbolic_sizes_strides(torch.empty(rows, cols, device="meta"), [0], "x")
    with mode:
        fake = torch.empty_strided(sizes, strides)
    gm = torch.fx.symbolic_trace(fn)
    with mode:
        for node, value in zip(gm.graph.nodes, _run_recording(gm, fake)):
            node.meta["val"] = value
    return gm, fake


def _run_recording(gm, *args):
    values = []

    class Record(torch.fx.Interpreter):
        def run_node(self, node):
            values.append(super().run_node(node))
            return values[-1]

    Record(gm).run(*args)
    return values


@needs_triton
@pytest.mark.parametrize("case", sorted(CASES))
def test_symbolic_kernels_index_in_32_bits_under_a_bound_guard(case):
    fn = CASES[case]
    example = _inputs(5)
    gm = trace_dynamic(fn, example, {0: [0]})
    compiled = inductor.compile_aten_graph(gm, example, options=TRITON_OPTIONS)
    assert "tl.int64" not in _kernel_text(compiled)
    env = _shape_env(gm)
    s0 = env.symbols[0]
    # A bound, not a specialization: every size below it passes, one past 2**31 elements fails.
    assert env.replacements == {} and env.guards
    assert all(isinstance(g.expr, sympy.Le) and g.expr.lhs == s0 for g in env.guards)
    assert env.guards_hold_at({s0: 5}) and env.guards_hold_at({s0: 2**31 // 24 - 1})
    assert not env.guards_hold_at({s0: 2**31 // 24 + 1})
    for rows in (5, 7, 300):  # the example, a new size, a size spanning several blocks
        inputs = _inputs(rows)
        assert_same(compiled(*inputs), fn(*inputs), rtol=1e-5, atol=1e-5)


@needs_triton
def test_example_sizes_past_2_31_index_in_64_bits_and_take_no_guard():
    """The same graph at an example size past 2**31 elements (compiled, never run) is
    generated again rather than taken from the cache entry of a small size."""
    def fn(x):
        return (aten.mul.Tensor(aten.exp.default(x), 0.5),)

    options = {**TRITON_OPTIONS, "cpu_backend": "triton"}
    small_gm, small = _fake_graph(fn, 5)
    small_compiled = inductor.compile_aten_graph(small_gm, [small], options=options)
    assert "tl.int64" not in _kernel_text(small_compiled)
    for _ in range(2):  # compiled, then from the cache
        gm, fake = _fake_graph(fn, 2**26)
        compiled = inductor.compile_aten_graph(gm, [fake], options=options)
        assert ".to(tl.int64)" in _kernel_text(compiled)
        assert _shape_env(gm).guards == []
    gm, fake = _fake_graph(fn, 9)
    compiled = inductor.compile_aten_graph(gm, [fake], options=options)
    assert compiled.cache_hit and "tl.int64" not in _kernel_text(compiled)
    assert _shape_env(gm).guards, "a cache hit takes the graph's guards again"


@needs_triton
def test_a_compile_that_may_not_guard_indexes_in_64_bits_unless_the_ranges_decide():
    """A backward compiles after its entry's guards were built: it takes no guard, and indexes in
    32 bits only where a guard taken before (the forward's) already bounds the sizes."""
    fn = CASES["reduction"]
    example = _inputs(6)
    gm = trace_dynamic(fn, example, {0: [0]})
    env = _shape_env(gm)
    compiled = inductor.compile_aten_graph(gm, example, options=TRITON_OPTIONS, may_guard=False)
    assert ".to(tl.int64)" in _kernel_text(compiled) and env.guards == []
    assert_same(compiled(*example), fn(*example), rtol=1e-5, atol=1e-5)
    env.evaluate(sympy.Lt(env.symbols[0], 2**20))  # as a forward's guard would have
    compiled = inductor.compile_aten_graph(gm, example, options=TRITON_OPTIONS, may_guard=False)
    assert "tl.int64" not in _kernel_text(compiled) and len(env.guards) == 1
    inputs = _inputs(11)
    assert_same(compiled(*inputs), fn(*inputs), rtol=1e-5, atol=1e-5)


def test_cpp_kernels_ask_no_question_about_sizes():
    fn = CASES["reduction"]
    example = [torch.randn(5, 24), torch.randn(24)]
    gm = trace_dynamic(fn, example, {0: [0]})
    compiled = inductor.compile_aten_graph(gm, example)
    assert _shape_env(gm).guards == []
    for rows in (5, 8):
        inputs = [torch.randn(rows, 24), torch.randn(24)]
        assert_same(compiled(*inputs), fn(*inputs), rtol=1e-5, atol=1e-5)
