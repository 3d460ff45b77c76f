"""Views as index remaps, on inputs and on lazy values; graph outputs keep eager's strides."""

from __future__ import annotations

import pytest
import torch

from conftest import check

aten = torch.ops.aten

VIEWS = {
    "view_merge": lambda x: aten.view.default(x, [6, 35]),
    "view_split": lambda x: aten.view.default(x, [2, 3, 5, 7]),
    "view_infer": lambda x: aten.view.default(x, [-1, 7]),
    "permute": lambda x: aten.permute.default(x, [2, 0, 1]),
    "transpose": lambda x: aten.transpose.int(x, 0, 2),
    "expand": lambda x: aten.expand.default(aten.unsqueeze.default(x, 1), [6, 4, 5, 7]),
    "slice": lambda x: aten.slice.Tensor(x, 2, 1, 6, 2),
    "slice_negative": lambda x: aten.slice.Tensor(x, 1, -3, 9223372036854775807),
    "select": lambda x: aten.select.int(x, 1, -1),
    "unsqueeze": lambda x: aten.unsqueeze.default(x, -1),
    "squeeze": lambda x: aten.squeeze.dim(aten.unsqueeze.default(x, 0), 0),
    "as_strided": lambda x: aten.as_strided.default(x, [5, 6], [1, 5], 2),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_of_input_then_compute(name, device):
    x = torch.randn(6, 5, 7, device=device)
    check(lambda x: (aten.mul.Tensor(VIEWS[name](x), 2.0),), x)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_of_lazy_pointwise(name, device):
    x = torch.randn(6, 5, 7, device=device)
    check(lambda x: (aten.add.Tensor(VIEWS[name](aten.exp.default(x)), 1.0),), x)


@pytest.mark.parametrize("name", ["permute", "slice", "expand", "select"])
def test_view_returned_as_output_keeps_eager_strides(name, device):
    x = torch.randn(6, 5, 7, device=device)
    compiled = check(lambda x: (VIEWS[name](aten.exp.default(x)),), x)
    out, expected = compiled(x)[0], VIEWS[name](torch.exp(x))
    assert out.stride() == expected.stride()


def test_view_of_non_contiguous_lazy_value_needs_div_mod(device):
    x = torch.randn(5, 6, device=device)
    check(lambda x: (aten.reshape.default(aten.permute.default(aten.exp.default(x), [1, 0]), [30]),), x)


@pytest.mark.parametrize("shape", [(0, 0, 0), (2, 0, 3), (0, 4)])
def test_index_remaps_of_empty_tensors(shape, device):
    # A loop of size 0 among others: the kernel has no elements, but its index is still printed.
    x = torch.randn(shape, device=device)
    check(lambda x: (aten.roll.default(aten.add.Tensor(x, 1), [1], [0]), aten.flip.default(x, [-1])), x)


def test_split_and_unbind(device):
    x = torch.randn(10, 4, device=device)

    def fn(x):
        parts = aten.split.Tensor(x, 3)
        rows = aten.unbind.int(x, 1)
        return aten.add.Tensor(parts[0], parts[1]), aten.mul.Tensor(parts[3], 2), aten.sub.Tensor(rows[0], rows[3])

    check(fn, x)


LAYOUTS = {
    "transposed": lambda: torch.randn(7, 6).t(),
    "permuted_3d": lambda: torch.randn(5, 7, 6).permute(2, 0, 1),
    "channels_last": lambda: torch.randn(2, 3, 5, 4).to(memory_format=torch.channels_last),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_pointwise_output_takes_its_inputs_memory_order_as_eager(layout, device):
    # Eager's pointwise ops lay their result out like a dense input; a caller may rely on it
    # (memory format checks, `.view`), and the kernel then runs in that memory order.
    x = LAYOUTS[layout]().to(device)
    fn = lambda x: (aten.mul.Tensor(aten.exp.default(x), 2.0),)  # noqa: E731
    out, expected = check(fn, x)(x)[0], fn(x)[0]
    assert out.stride() == expected.stride()
