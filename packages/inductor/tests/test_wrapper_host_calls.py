"""The wrapper's host-side calls (codegen/wrapper.py): aten overloads through their C++
operator bound at load, views as in-line `as_strided`, allocation through names bound once.
Each is compared with eager on the first call, on new values, and at a new size."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from conftest import assert_same, compile_aten

aten = torch.ops.aten


def offset_view_into_extern(x, w):
    # The mm reads a view of x starting 2 rows in (a nonzero storage offset), and its output,
    # exp'd, takes over a dead buffer's memory.
    e = aten.exp.default(aten.slice.Tensor(x, 0, 2, None))
    return aten.sin.default(aten.mm.default(e, w)), aten.mm.default(aten.slice.Tensor(x, 0, 1, None), w)


def test_extern_calls_and_views_match_eager_on_new_values_and_sizes(device):
    for rows in (10, 19):
        x, w = torch.randn(rows, 8, device=device), torch.randn(8, 5, device=device)
        compiled = compile_aten(offset_view_into_extern, [x, w])
        assert_same(compiled(x, w), offset_view_into_extern(x, w), rtol=1e-4, atol=1e-4)
        # New values, in an input that itself starts 3 rows into its storage.
        x2, w2 = torch.randn(rows + 3, 8, device=device)[3:], torch.randn_like(w)
        assert_same(compiled(x2, w2), offset_view_into_extern(x2, w2), rtol=1e-4, atol=1e-4)


def test_aten_calls_are_bound_at_load_and_still_dispatch(device):
    x, w = torch.randn(10, 8, device=device), torch.randn(8, 5, device=device)
    compiled = compile_aten(offset_view_into_extern, [x, w])
    body = compiled.source.split("def call(args):")[1]
    assert "torch.ops." not in body and "aten_mm_default(" in body
    assert "aten_mm_default = torch.mm" in compiled.source  # its Python binding: _PYTHON_BINDINGS

    class Seen(TorchDispatchMode):
        ops: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func)
            return func(*args, **(kwargs or {}))

    with Seen():
        out = compiled(x, w)
    # A dispatch mode still sees the extern calls: the bound operator enters the dispatcher.
    assert aten.mm.default in Seen.ops
    assert_same(out, offset_view_into_extern(x, w), rtol=1e-4, atol=1e-4)


def conv_relu(x, w, b):
    return aten.relu.default(aten.convolution.default(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1))


def test_a_convolution_is_called_through_its_python_binding_and_matches_eager(device):
    w, b = torch.randn(6, 3, 3, 3, device=device), torch.randn(6, device=device)
    for size in (8, 11):
        x = torch.randn(2, 3, size, size, device=device)
        compiled = compile_aten(conv_relu, [x, w, b])
        assert "aten_convolution_default = torch.convolution" in compiled.source
        assert_same(compiled(x, w, b), conv_relu(x, w, b), rtol=1e-4, atol=1e-4)
        x2, w2 = torch.randn_like(x), torch.randn_like(w)
        assert_same(compiled(x2, w2, b), conv_relu(x2, w2, b), rtol=1e-4, atol=1e-4)


def attention_output_only(q, k, v):
    # CPU flash attention returns (output, logsumexp); only a backward would read the second.
    return aten.sin.default(aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v)[0])


def test_a_tuple_item_nothing_reads_is_not_taken_out_per_call():
    for length in (8, 13):
        q, k, v = (torch.randn(1, 2, length, 16) for _ in range(3))
        compiled = compile_aten(attention_output_only, [q, k, v])
        body = compiled.source.split("def call(args):")[1]
        assert "[0]" in body and "[1]" not in body and "with_layout(buf" not in body.split("[0]")[1].split("\n")[0]
        assert_same(compiled(q, k, v), attention_output_only(q, k, v), rtol=1e-4, atol=1e-4)
        q2, k2, v2 = (torch.randn_like(q) for _ in range(3))
        assert_same(compiled(q2, k2, v2), attention_output_only(q2, k2, v2), rtol=1e-4, atol=1e-4)


def _meta(*size):
    return torch.randn(size, device="meta", dtype=torch.float16)


# Each bound overload's arguments, as a graph passes them (keyword-only ones by name).
BINDING_SAMPLES = {
    "torch.ops.aten.convolution.default": lambda: ((_meta(1, 3, 8, 8), _meta(4, 3, 3, 3), None, [1, 1], [1, 1], [1, 1],
                                                    False, [0, 0], 1), {}),
    "torch.ops.aten.mm.default": lambda: ((_meta(4, 3), _meta(3, 5)), {}),
    "torch.ops.aten.addmm.default": lambda: ((_meta(5), _meta(4, 3), _meta(3, 5)), {"beta": 0.5, "alpha": 2}),
    "torch.ops.aten.bmm.default": lambda: ((_meta(2, 4, 3), _meta(2, 3, 5)), {}),
    "torch.ops.aten.baddbmm.default": lambda: ((_meta(2, 4, 5), _meta(2, 4, 3), _meta(2, 3, 5)), {"alpha": 2}),
    "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default":
        lambda: ((_meta(1, 2, 8, 16), _meta(1, 2, 8, 16), _meta(1, 2, 8, 16), 0.0, True), {"scale": 0.25}),
    "torch.ops.aten._scaled_dot_product_flash_attention.default":
        lambda: ((_meta(1, 2, 8, 16), _meta(1, 2, 8, 16), _meta(1, 2, 8, 16), 0.0, True), {"scale": 0.25}),
    "torch.ops.aten._scaled_dot_product_efficient_attention.default":
        lambda: ((_meta(1, 2, 8, 16), _meta(1, 2, 8, 16), _meta(1, 2, 8, 16), None, False, 0.0, True), {"scale": 0.25}),
    "torch.ops.aten._adaptive_avg_pool2d.default": lambda: ((_meta(1, 4, 6, 6), [1, 1]), {}),
    "torch.ops.aten.avg_pool2d.default": lambda: ((_meta(1, 4, 6, 6), [2, 2], [2, 2], [0, 0], False, True, None), {}),
}


def test_each_python_binding_calls_the_overload_it_stands_for():
    from inductor.codegen.wrapper import _PYTHON_BINDINGS

    assert set(BINDING_SAMPLES) == set(_PYTHON_BINDINGS)

    class Seen(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func)
            return func(*args, **(kwargs or {}))

    for kernel, binding in _PYTHON_BINDINGS.items():
        args, kwargs = BINDING_SAMPLES[kernel]()
        with Seen() as seen:
            seen.ops = []
            eval(binding)(*args, **kwargs)  # noqa: S307  (a name from the table)
        assert seen.ops[0] is eval(kernel), (binding, seen.ops)  # noqa: S307


def matmuls(bias, x, w, b1, b2):
    return (aten.addmm.default(bias, x, w, beta=0.5, alpha=2.0),
            aten.baddbmm.default(b1, b1, b2, alpha=2.0), aten.bmm.default(b1, b2))


def test_matmuls_through_their_python_bindings_match_eager():
    for n in (4, 7):
        inputs = [torch.randn(5), torch.randn(n, 3), torch.randn(3, 5), torch.randn(2, n, n), torch.randn(2, n, n)]
        compiled = compile_aten(matmuls, inputs)
        for name in ("addmm", "baddbmm", "bmm"):
            assert f"aten_{name}_default = torch.{name}" in compiled.source
        assert_same(compiled(*inputs), matmuls(*inputs), rtol=1e-4, atol=1e-4)
        again = [torch.randn_like(x) for x in inputs]
        assert_same(compiled(*again), matmuls(*again), rtol=1e-4, atol=1e-4)


def pools(x):
    return (aten._adaptive_avg_pool2d.default(aten.relu.default(x), [1, 1]),
            aten.avg_pool2d.default(x, [2, 2], [2, 2], [0, 0], False, True, None))


def test_pools_through_their_python_bindings_match_eager(device):
    for size in (6, 9):
        x = torch.randn(2, 3, size, size, device=device)
        compiled = compile_aten(pools, [x])
        assert_same(compiled(x), pools(x), rtol=1e-4, atol=1e-4)
        x2 = torch.randn_like(x)
        assert_same(compiled(x2), pools(x2), rtol=1e-4, atol=1e-4)
