"""Scatters (lowering/scatter.py): one-hot scatters as fused selects, the others in place on
memory the graph owns (never on memory an input or another value shares), and
`x + index_put(zeros, ..., accumulate=True)` folded into one scatter (passes/scatter_adds.py)."""

from __future__ import annotations

import pytest
import torch
import torch.fx

import inductor
from conftest import assert_same, backend_options, check, compile_aten, compile_graph, trace_dynamic, traced
import sys

from inductor.passes.scatter_adds import fold_adds_into_scatters

ensure_meta_vals = sys.modules["inductor.compile_fx"].ensure_meta_vals

aten = torch.ops.aten


def check_twice(fn, make_inputs, **tolerances):
    """Compiled vs eager on fresh inputs, then again on new values (the compiled graph reused)."""
    inputs = make_inputs()
    compiled = check(fn, *inputs, **tolerances)
    again = make_inputs()
    assert_same(compiled(*again), fn(*again), **tolerances)
    return compiled


@pytest.mark.parametrize("rows", [7, 33])
def test_one_hot_scatter_is_a_select_fused_with_its_reader(rows, device):
    """nll_loss's backward: -1 at each row's target, as a select inside the kernel reading it."""
    def fn(x, target, w):
        one_hot = aten.scatter.value(aten.zeros_like.default(x), 1, target, -1.0)
        by_src = aten.scatter.src(x, 1, target, w)
        return aten.mul.Tensor(one_hot, aten.exp.default(x)), by_src

    def make():
        return (torch.randn(rows, 50, device=device), torch.randint(0, 50, (rows, 1), device=device),
                torch.randn(rows, 3, device=device))

    compiled = check_twice(fn, make)
    assert "scatter" not in compiled.source


@pytest.mark.parametrize("bad", [-1, 50])
def test_one_hot_scatter_out_of_range_raises_like_eager(bad, device):
    if device == "cuda":
        pytest.skip("Triton kernels on the GPU do not check indices")

    def fn(x, target):
        return (aten.scatter.value(x, 1, target, 2.0),)

    x, good = torch.randn(4, 50), torch.zeros(4, 1, dtype=torch.int64)
    compiled = check(fn, x, good)
    target = torch.tensor([[0], [bad], [1], [2]])
    with pytest.raises(RuntimeError):
        fn(x, target)
    with pytest.raises(RuntimeError, match="index out of bounds in compiled kernel"):
        compiled(x, target)


def test_index_put_accumulates_into_its_fresh_zeros_in_place(device):
    """An embedding's backward: duplicate rows add up; the zeros are written in place, not cloned."""
    def fn(rows, values):
        zeros = aten.full.default([40, 16], 0, dtype=torch.float32, device=device)
        return (aten.index_put.default(zeros, [rows], values, True),)

    def make():
        return torch.randint(0, 8, (30,), device=device), torch.randn(30, 16, device=device)

    compiled = check_twice(fn, make)
    assert "index_put_" in compiled.source and "index_put.default" not in compiled.source


def test_scatter_into_a_matmul_result_read_only_there_is_in_place(device):
    def fn(a, b, rows, values):
        return (aten.index_put.default(aten.mm.default(a, b), [rows], values, True),)

    def make():
        return (torch.randn(12, 8, device=device), torch.randn(8, 10, device=device),
                torch.randint(0, 12, (5,), device=device), torch.randn(5, 10, device=device))

    compiled = check_twice(fn, make, rtol=1e-4, atol=1e-4)
    assert compiled.kernel_count == 0  # no copy of the matmul's result


def test_scatter_leaves_its_input_unchanged(device):
    def fn(x, rows, values):
        return (aten.index_put.default(x, [rows], values, False),)

    x = torch.randn(10, 6, device=device)
    rows, values = torch.randperm(10, device=device)[:4], torch.randn(4, 6, device=device)
    before = x.clone()
    check(fn, x, rows, values)
    assert torch.equal(x, before)


def test_scatter_copies_a_value_other_nodes_read(device):
    """`m` is read by the scatter and by `m * 2` (directly and through a transposed view)."""
    def fn(a, b, idx, src):
        m = aten.mm.default(a, b)
        t = aten.permute.default(m, [1, 0])
        scattered = aten.scatter_add.default(t, 1, idx, src)
        return scattered, aten.mul.Tensor(m, 2)

    def make():
        return (torch.randn(9, 4, device=device), torch.randn(4, 7, device=device),
                torch.randint(0, 9, (7, 5), device=device), torch.randn(7, 5, device=device))

    check_twice(fn, make, rtol=1e-4, atol=1e-4)


def _mask_scattered_and_read_again(x, idx, values):
    """index_reduce's backward: a lazy float mask is scattered into, and read by the node after."""
    mask = aten._to_copy.default(aten.gt.Scalar(x, 0), dtype=torch.float32)
    return aten.mul.Tensor(mask, aten.index_put.default(mask, [idx], values, True)),


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_scatter_copies_a_lazy_value_other_nodes_read(dynamic, device):
    def make(rows):
        return (torch.randn(rows, 6, device=device), torch.randint(0, rows, (4,), device=device),
                torch.randn(4, 6, device=device))

    example = make(8)
    gm = trace_dynamic(_mask_scattered_and_read_again, example, {0: [0]} if dynamic else {})
    compiled = compile_graph(gm, example)
    for rows in (8, 8, 13) if dynamic else (8, 8):  # first call, fresh values, a new size
        inputs = make(rows)
        assert_same(compiled(*inputs), _mask_scattered_and_read_again(*inputs))


def test_scatter_of_a_transposed_input_keeps_eagers_strides(device):
    def fn(x, idx, src):
        return (aten.scatter.src(x, 0, idx, src),)

    x = torch.randn(6, 9, device=device).t()
    idx, src = torch.randint(0, 9, (3, 6), device=device), torch.randn(3, 6, device=device)
    compiled = compile_aten(fn, [x, idx, src])
    out, expected = compiled(x, idx, src)[0], fn(x, idx, src)[0]
    torch.testing.assert_close(out, expected)
    assert out.stride() == expected.stride()


@pytest.mark.parametrize("op", ["scatter_add", "scatter_reduce", "index_add", "scatter_reduce_op"])
def test_other_scatters_match_eager(op, device):
    fns = {
        "scatter_add": lambda x, i, s, r: (aten.scatter_add.default(aten.exp.default(x), 1, i, s),),
        "scatter_reduce": lambda x, i, s, r: (aten.scatter_reduce.two(aten.exp.default(x), 1, i, s, "amax", include_self=False),),
        "index_add": lambda x, i, s, r: (aten.index_add.default(aten.exp.default(x), 0, r, aten.slice.Tensor(x, 0, 0, 3), alpha=2),),
        "scatter_reduce_op": lambda x, i, s, r: (aten.scatter.reduce(aten.exp.default(x), 1, i, s, reduce="multiply"),),
    }

    def make():
        return (torch.randn(6, 8, device=device), torch.randint(0, 8, (6, 3), device=device),
                torch.randn(6, 3, device=device), torch.randint(0, 6, (3,), device=device))

    check_twice(fns[op], make, rtol=1e-4, atol=1e-4)


def zero_scatter_added_to(addend_op, shape):
    """`addend_op(x...) + index_put(zeros, [rows], values, True)` as an ATen graph; symbolic_trace
    would fold the zeros into a constant, an aot_autograd graph has them as a `full` node."""
    graph = torch.fx.Graph()
    x, y, rows, values = (graph.placeholder(name) for name in ("x", "y", "rows", "values"))
    zeros = graph.call_function(aten.full.default, (shape, 0), {"dtype": torch.float32, "device": torch.device("cpu")})
    scattered = graph.call_function(aten.index_put.default, (zeros, [rows], values, True))
    addend = graph.call_function(addend_op, (x, y))
    graph.output((graph.call_function(aten.add.Tensor, (addend, scattered)),))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_addition_of_a_zero_scatter_folds_into_the_scatter():
    def make():
        return torch.randn(12, 8), torch.randn(8, 10), torch.randint(0, 12, (30,)), torch.randn(30, 10)

    gm = zero_scatter_added_to(aten.mm.default, [12, 10])
    compiled = inductor.compile_aten_graph(gm, list(make()))
    assert compiled.kernel_count == 0  # no zeros, no addition: the rows go into the matmul's result
    for _ in range(2):
        inputs = make()
        expected = zero_scatter_added_to(aten.mm.default, [12, 10])(*inputs)
        assert_same(compiled(*inputs), expected, rtol=1e-4, atol=1e-4)


def test_addition_that_broadcasts_does_not_fold():
    inputs = [torch.randn(10), torch.randn(10), torch.randint(0, 12, (4,)), torch.randn(4, 10)]
    gm = zero_scatter_added_to(aten.mul.Tensor, [12, 10])
    ensure_meta_vals(gm, inputs)
    assert fold_adds_into_scatters(gm) == 0
    expected = zero_scatter_added_to(aten.mul.Tensor, [12, 10])(*inputs)
    assert_same(inductor.compile_aten_graph(gm, inputs)(*inputs), expected)


def tied_embedding_lm(vocab, dim):
    """GPT-2's pattern: the token embedding is also the output projection's weight."""
    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, dim)
            self.pos = torch.nn.Embedding(64, dim)
            self.norm = torch.nn.LayerNorm(dim)

        def forward(self, ids):
            h = self.norm(self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device)))
            logits = torch.nn.functional.linear(h, self.embed.weight)
            return torch.nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten())

    return LM()


@pytest.mark.parametrize("batch, seq", [(2, 16), (3, 9)])
def test_tied_embedding_training_matches_eager_gradients(batch, seq, device):
    pytest.importorskip("aot_autograd")
    torch.manual_seed(0)
    model = tied_embedding_lm(50, 24).to(device)
    ids = torch.randint(0, 50, (batch, seq), device=device)
    compiled = inductor.compile_fx(traced(model), [ids], options=backend_options())
    for step in range(2):
        ids = torch.randint(0, 50, (batch, seq), device=device)  # new values on the second call
        model.zero_grad()
        loss = compiled(ids)[0]
        loss.backward()
        ours = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        expected_loss = model(ids)
        expected_loss.backward()
        torch.testing.assert_close(loss, expected_loss, rtol=1e-5, atol=1e-5)
        for a, e in zip(ours, [p.grad for p in model.parameters()]):
            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5)
