"""Symbolic sizes become kernel arguments: one compiled graph serves every size."""

from __future__ import annotations

import pytest
import torch
import torch.fx

from conftest import assert_same, compile_graph, trace_dynamic

pytest.importorskip("fake_tensor")
aten = torch.ops.aten


CASES = {
    "pointwise": (lambda x, y: (aten.mul.Tensor(aten.exp.default(x), y),), [(0,), (0,)]),
    "broadcast": (lambda x, y: (aten.add.Tensor(x, y),), [(0,), ()]),
    "reduction": (lambda x, y: (aten._softmax.default(aten.add.Tensor(x, y), -1, False),), [(0, 1), (0, 1)]),
    "layer_norm": (lambda x, y: (aten.native_layer_norm.default(x, [16], y, None, 1e-5)[0],), [(0,), ()]),
    "view": (lambda x, y: (aten.view.default(aten.add.Tensor(x, y), [-1]),), [(0,), (0,)]),
    # std_mean's correction is the float 1.0; the count it divides by is symbolic.
    "variance_float_correction": (lambda x, y: (aten.var.correction(aten.add.Tensor(x, y), [0], correction=1.0),),
                                  [(0,), (0,)]),
    "arange_of_a_size": (None, [(0,), ()]),  # made on the test's device: _case_fn
    "full_of_a_size": (None, [(0,), ()]),  # filled with a size (multilabel_margin_loss's class count)
}


def _case_fn(name, device):
    if name == "full_of_a_size":
        return lambda x, y: (aten.add.Tensor(x, aten.full.default([1, 16], aten.sym_size.int(x, 0), dtype=torch.float32,
                                                                  device=device)),)
    if name != "arange_of_a_size":
        return CASES[name][0]
    # A factory op makes its tensor where it is told (the CPU by default), as in eager.
    return lambda x, y: (aten.add.Tensor(x, aten.unsqueeze.default(
        aten.arange.start_step(1, aten.sym_size.int(x, 0) * 2, 2, device=device), 1)),)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_graph_serves_every_size(name, device):
    fn, dims = _case_fn(name, torch.device(device)), CASES[name][1]
    shape_b = (1, 16) if name in ("broadcast", "arange_of_a_size", "full_of_a_size") else (8, 16)
    if name == "layer_norm":
        shape_b = (16,)

    def inputs(n):
        a = torch.randn(n, 16, device=device)
        b = torch.randn(*(shape_b if name in ("broadcast", "layer_norm", "arange_of_a_size", "full_of_a_size") else (n, 16)),
                        device=device)
        return [a, b]

    example = inputs(8)
    dynamic = {k: list(d) for k, d in enumerate(dims) if d}
    if name == "reduction":
        dynamic = {0: [0], 1: [0]}
    gm = trace_dynamic(fn, example, dynamic)
    compiled = compile_graph(gm, example)
    assert "s0 = arg0.size(0)" in compiled.source  # the size is read from the call's argument
    for n in (8, 3, 37):
        xs = inputs(n)
        assert_same(compiled(*xs), fn(*xs), rtol=1e-5, atol=1e-5)
    # Symbolic sizes fuse as static ones do: as many kernels as the graph traced at one size.
    static = compile_graph(trace_dynamic(fn, example, {}), example)
    assert _kernel_calls(compiled.source) == _kernel_calls(static.source), (compiled.source, static.source)


def _kernel_calls(source: str) -> int:
    return source.split("def call")[1].count("    kernel")


def test_extern_output_strides_are_checked_when_sizes_are_symbolic(device):
    # With symbolic sizes the extern's layout comes from the traced graph, which saw q permuted;
    # inductor passes q dense, attention returns its output dense, and the wrapper must lay it
    # out as the kernel reading it expects.
    def fn(x, k, v):
        q = aten.mul.Tensor(aten.permute.default(x, [0, 2, 1, 3]), 2.0)
        return (aten.add.Tensor(aten.scaled_dot_product_attention.default(q, k, v), 1.0),)

    def inputs(n):
        return [torch.randn(2, n, 4, 8, device=device), torch.randn(2, 4, n, 8, device=device),
                torch.randn(2, 4, n, 8, device=device)]

    compiled = compile_graph(trace_dynamic(fn, inputs(12), {0: [1], 1: [2], 2: [2]}), inputs(12))
    for n in (12, 5):
        xs = inputs(n)
        assert_same(compiled(*xs), fn(*xs), rtol=1e-4, atol=1e-4)


VIEWS_OF_INPUTS = {
    "flatten": lambda x: (aten.view.default(x, [-1]), aten.exp.default(x)),
    "split_last": lambda x: (aten.view.default(x, [aten.sym_size.int(x, 0), 2, -1]), aten.exp.default(x)),
    "merge_and_split": lambda x: (aten.view.default(x, [aten.sym_size.int(x, 0) * 2, -1]), aten.exp.default(x)),
    "slice_then_transpose": lambda x: (aten.permute.default(aten.slice.Tensor(x, 0, 1), [1, 0]), aten.exp.default(x)),
    "expand": lambda x: (aten.expand.default(aten.unsqueeze.default(x, 0), [3, -1, -1]), aten.exp.default(x)),
}


@pytest.mark.parametrize("name", sorted(VIEWS_OF_INPUTS))
def test_output_that_is_a_view_of_an_input_stays_a_view(name, device):
    # aot_autograd rebuilds such outputs from the real input with the graph's own strides and
    # offset when the traced ones are symbolic: the graph must return a real view, not a copy.
    fn = VIEWS_OF_INPUTS[name]
    compiled = compile_graph(trace_dynamic(fn, [torch.randn(6, 8, device=device)], {0: [0, 1]}),
                             [torch.randn(6, 8, device=device)])
    for rows, cols in ((6, 8), (10, 4), (3, 12)):
        x = torch.randn(rows, cols, device=device)
        view, expected = compiled(x)[0], fn(x)[0]
        assert_same(view, expected)
        assert view.stride() == expected.stride() and view.storage_offset() == expected.storage_offset()
        assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_flatten_of_leading_dims_around_a_symbolic_one_stays_a_view(device):
    # [2, s, 3, 4] viewed [-1, 4] reads the input at 4*((v0 // 3*s) * 3*s + (v0 // 3) % s * 3
    # + v0 % 3) + v1: the quotient pairs with its mod only once `(v0 // 3) // s` is seen as the
    # `v0 // (3*s)` FloorDiv makes of it. Not folded, the output was a copy, and aot_autograd,
    # which hands the view back through the graph's value of it, refused (transformers'
    # Qwen3-Next, a gated norm over core_attn_out.reshape(-1, head_dim)).
    def fn(x):
        return (aten.view.default(x, [-1, 4]), aten.exp.default(x))

    example = torch.randn(2, 5, 3, 4, device=device)
    compiled = compile_graph(trace_dynamic(fn, [example], {0: [1]}), [example])
    for n in (5, 5, 8):
        x = torch.randn(2, n, 3, 4, device=device)
        outputs = compiled(x)
        assert_same(outputs, fn(x))
        assert outputs[0].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert outputs[0].stride() == (4, 1)


def test_squeeze_of_a_symbolic_size_that_is_one(device):
    # unbind's decomposition slices the last piece as x[k:] (size s0 - k, 1 at the traced size,
    # which the tracer guarded on) and squeezes it: the output must lose that dim.
    def fn(x):
        return (aten.squeeze.dim(aten.slice.Tensor(x, 0, 8, 9223372036854775807), 0), aten.mul.Tensor(x, 2.0))

    compiled = compile_graph(trace_dynamic(fn, [torch.randn(9, 3, device=device)], {0: [0]}),
                             [torch.randn(9, 3, device=device)])
    x = torch.randn(9, 3, device=device)
    assert_same(compiled(x), fn(x))


NEGATIVE_SIZE_ARITHMETIC = {
    "mod": lambda x: (aten.add.Tensor(x, (-aten.sym_size.int(x, 0)) % 3),),
    "floordiv": lambda x: (aten.add.Tensor(x, (-aten.sym_size.int(x, 0)) // 3),),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE_SIZE_ARITHMETIC))
def test_python_rounding_of_a_negative_size_in_a_kernel(name, device):
    # Index arithmetic is non-negative, but a size the program negates is not: `-n % 3` and
    # `-n // 3` must round as Python does (toward -inf), not as C's truncating `%` and `/`.
    fn = NEGATIVE_SIZE_ARITHMETIC[name]
    compiled = compile_graph(trace_dynamic(fn, [torch.randn(4, device=device)], {0: [0]}), [torch.randn(4, device=device)])
    for n in (4, 7, 8):
        x = torch.randn(n, device=device)
        assert_same(compiled(x), fn(x))


SIZE_COMPARISONS = {
    "ge": lambda n: n >= 3,
    "ne": lambda n: n != 3,
    "le_float": lambda n: n <= 7.5,
    "abs": lambda n: abs(n - 10),
}


@pytest.mark.parametrize("name", sorted(SIZE_COMPARISONS))
def test_comparisons_and_abs_of_a_size(name, device):
    # A SymBool or abs() the program computes from a size, used in a kernel and returned.
    def fn(x):
        r = SIZE_COMPARISONS[name](aten.sym_size.int(x, 0))
        return aten.add.Tensor(x, r), r

    compiled = compile_graph(trace_dynamic(fn, [torch.randn(5, device=device)], {0: [0]}), [torch.randn(5, device=device)])
    for n in (5, 8):
        x = torch.randn(n, device=device)
        assert_same(compiled(x), fn(x))


def test_view_infers_the_chunk_count_of_a_length_padded_to_a_multiple(device):
    # A chunked scan (transformers' gated delta rule) pads the length to a multiple of 64 and
    # views it as (-1, 64): the count (n + (-n % 64)) // 64 must stay one FloorDiv, not sympy's
    # n/64 + (-n % 64)/64, which no kernel can print.
    def fn(x):
        padded = aten.constant_pad_nd.default(x, [0, 0, 0, (-aten.sym_size.int(x, 1)) % 64], 0.0)
        chunks = aten.view.default(padded, [aten.sym_size.int(x, 0), -1, 64, 4])
        return (aten.cumsum.default(aten.mul.Tensor(chunks, 2.0), 2),)

    compiled = compile_graph(trace_dynamic(fn, [torch.randn(2, 100, 4, device=device)], {0: [1]}),
                             [torch.randn(2, 100, 4, device=device)])
    for n in (100, 100, 70, 200):
        x = torch.randn(2, n, 4, device=device)
        assert_same(compiled(x), fn(x), rtol=1e-5, atol=1e-5)


def decoder_layer_pieces(h, qkv, w, b):
    # A layer norm over [B, T] x [H] whose result is viewed [B*T, H] for a matmul, and the
    # key and value heads copied out of one projection (GPT-2's attention inputs).
    batch, length = aten.sym_size.int(h, 0), aten.sym_size.int(h, 1)
    normed = aten.native_layer_norm.default(aten.add.Tensor(h, 1.0), [16], w, b, 1e-5)[0]
    flat = aten.view.default(normed, [batch * length, 16])
    heads = aten.view.default(qkv, [batch, length, 3, 2, 8])
    key = aten.clone.default(aten.permute.default(aten.select.int(heads, 2, 1), [0, 2, 1, 3]),
                             memory_format=torch.contiguous_format)
    value = aten.clone.default(aten.permute.default(aten.select.int(heads, 2, 2), [0, 2, 1, 3]),
                               memory_format=torch.contiguous_format)
    return flat, key, value


def test_symbolic_sizes_fuse_as_static_ones_do(device):
    # Loops of symbolic sizes merge and split as static ones do (2*s0 over (2, s0)), and a
    # buffer of 3*s0 elements is known larger than loops of s0: the dynamic graph runs as many
    # kernels as the static one (a GPT-2 layer's norm split into statistics and a second
    # pass, and its key and value copied by two kernels, each reading the input again).
    def inputs(n):
        return [torch.randn(2, n, 16, device=device), torch.randn(2, n, 48, device=device),
                torch.randn(16, device=device), torch.randn(16, device=device)]

    static = compile_graph(trace_dynamic(decoder_layer_pieces, inputs(5), {}), inputs(5))
    dynamic = compile_graph(trace_dynamic(decoder_layer_pieces, inputs(5), {0: [1], 1: [1]}), inputs(5))
    assert "s0" in dynamic.source
    kernels = [_kernel_calls(source) for source in (static.source, dynamic.source)]
    assert kernels[0] == kernels[1] == 2, kernels
    for n in (5, 9):
        xs = inputs(n)
        assert_same(dynamic(*xs), decoder_layer_pieces(*xs), rtol=1e-5, atol=1e-5)
