"""cat, constant_pad_nd, gather, index, index_select, embedding (scatters: test_scatter.py)."""

from __future__ import annotations

import pytest
import torch

import inductor
from conftest import assert_same, backend_options, check, traced

aten = torch.ops.aten


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim, device):
    a, b, c = (torch.randn(4, 3, 5, device=device), torch.randn(4, 3, 5, device=device) * 2,
               torch.randn(4, 3, 5, device=device) + 1)
    check(lambda a, b, c: (aten.cat.default([a, aten.exp.default(b), c], dim),), a, b, c)


def test_cat_of_mixed_sizes_and_dtypes(device):
    a, b = torch.randn(2, 3, device=device), torch.randint(0, 9, (5, 3), device=device)
    check(lambda a, b: (aten.cat.default([a, b]),), a, b)


@pytest.mark.parametrize("shapes", [[(0,), (0,)], [(0,), (3, 2)], [(0, 2), (3, 2), (0, 2)], [(0, 2), (0, 2)]],
                         ids=["legacy_empties", "legacy_empty_and_2d", "empty_rows", "all_empty_rows"])
def test_cat_with_empty_inputs(shapes, device):
    # Empty inputs supply no element but take part in type promotion (the float64 ones here);
    # a cat of legacy empties alone raised an IndexError while lowering.
    tensors = [torch.randn(s, device=device, dtype=torch.float64 if i == 0 else torch.float32) for i, s in enumerate(shapes)]
    if len(tensors) == 2:
        check(lambda a, b: (aten.cat.default([a, b]),), *tensors)
    else:
        check(lambda a, b, c: (aten.cat.default([a, b, c]),), *tensors)


@pytest.mark.parametrize("pad", [[1, 2], [0, 3, 2, 0], [-1, 2]])
def test_constant_pad_nd(pad, device):
    x = torch.randn(3, 6, 7, device=device)
    check(lambda x: (aten.constant_pad_nd.default(x, pad, 1.5),), x)


def test_gather(device):
    x = torch.randn(10, 20, device=device)
    idx = torch.randint(0, 20, (10, 7), device=device)
    check(lambda x, i: (aten.gather.default(x, 1, i),), x, idx)


def test_gather_of_a_0d_tensor(device):
    # Eager returns the one element (the backward of op_db's scatter_add sample on scalars
    # raised IndexError in our lowering).
    x, index = torch.randn((), device=device), torch.zeros((), dtype=torch.int64, device=device)
    check(lambda x, i: (aten.mul.Tensor(aten.gather.default(x, 0, i), 2.0),), x, index)


def test_index_select_and_negative_indices(device):
    x = torch.randn(10, 20, device=device)
    idx = torch.randint(-9, 10, (6,), device=device)
    check(lambda x, i: (aten.index.Tensor(x, [i]), aten.index_select.default(x, 0, aten.abs.default(i))), x, idx)


@pytest.mark.parametrize("index_shape", [(1,), ()])
def test_index_select_of_a_0d_tensor(index_shape, device):
    # Eager returns the one element 0-d (op_db's index_select sample on a scalar raised
    # IndexError in our lowering).
    x, index = torch.randn((), device=device), torch.zeros(index_shape, dtype=torch.int64, device=device)
    check(lambda x, i: (aten.mul.Tensor(aten.index_select.default(x, 0, i), 2.0),), x, index)


@pytest.mark.parametrize("shape,index_shape", [((), ()), ((4, 5), (3, 2)), ((7,), ())])
def test_take_with_0d_and_nd_indices(shape, index_shape, device):
    # torch's decomposition spells take as `x.reshape(-1)[index]`, which reads a 0-d index's
    # value in Python (a data-dependent error while tracing op_db's take).
    class Take(torch.nn.Module):
        def forward(self, x, i):
            return torch.take(x, i) * 2

    x = torch.randn(shape, device=device)
    index = torch.randint(-x.numel(), x.numel(), index_shape, device=device)
    compiled = inductor.compile_fx(traced(Take()), [x, index], options=backend_options())
    assert_same(compiled(x, index), [Take()(x, index)])


def test_advanced_index_on_inner_dims(device):
    x = torch.randn(4, 10, 12, device=device)
    i, j = torch.randint(0, 10, (3, 1), device=device), torch.randint(0, 12, (5,), device=device)
    k = torch.randint(0, 4, (5,), device=device)
    check(lambda x, i, j, k: (aten.index.Tensor(x, [None, i, j]), aten.index.Tensor(x, [k, None, j])), x, i, j, k)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_embedding(dtype, device):
    w = torch.randn(50, 16, device=device).to(dtype)
    ids = torch.randint(0, 50, (3, 9), device=device)
    check(lambda w, i: (aten.embedding.default(w, i),), w, ids)


def test_boolean_mask_index_falls_back_to_aten(device):
    x = torch.randn(8, 5, device=device)
    mask = torch.randn(8, device=device) > 0
    check(lambda x, m: (aten.index.Tensor(x, [m]),), x, mask)


OUT_OF_RANGE = {
    "index": (lambda x, i: (aten.index.Tensor(x, [i]),), lambda: torch.tensor([1, 10, 2])),
    "index_negative": (lambda x, i: (aten.index.Tensor(x, [i]),), lambda: torch.tensor([-11, 0])),
    "gather": (lambda x, i: (aten.gather.default(x, 1, i),), lambda: torch.full((10, 2), 20)),
    "embedding": (lambda x, i: (aten.embedding.default(x, i),), lambda: torch.tensor([[3, 10]])),
    "index_select": (lambda x, i: (aten.index_select.default(x, 0, i),), lambda: torch.tensor([0, 12])),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_RANGE))
def test_out_of_range_index_raises_like_eager(name, device):
    """An index eager rejects raises what eager raises (IndexError; RuntimeError for gather)
    instead of reading another element. Triton kernels on the GPU clamp it without checking."""
    if device == "cuda":
        pytest.skip("Triton kernels on the GPU do not check indices")
    fn, bad_index = OUT_OF_RANGE[name]
    x = torch.randn(10, 20)
    good = torch.zeros_like(bad_index())
    compiled = check(fn, x, good)
    with pytest.raises((IndexError, RuntimeError)) as eager:
        fn(x, bad_index())
    with pytest.raises((IndexError, RuntimeError), match="index out of bounds in compiled kernel") as raised:
        compiled(x, bad_index())
    assert type(raised.value) is type(eager.value)
