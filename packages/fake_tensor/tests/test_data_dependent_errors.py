"""Ops whose result depends on tensor values raise DataDependentError naming the op (eager
runs them); their static neighbours run on fakes and match eager."""

import pytest
import torch

from fake_tensor import DataDependentError, FakeTensorError, FakeTensorMode

DATA_DEPENDENT = {
    "item": (lambda x: x[0, 0].item(), "_local_scalar_dense"),
    "bool": (lambda x: bool(x[0, 0] > 0), "_local_scalar_dense"),
    "int": (lambda x: int(x[0, 0]), "_local_scalar_dense"),
    "float": (lambda x: float(x[0, 0]), "_local_scalar_dense"),
    "python_if": (lambda x: 1 if (x > 0).any() else 0, "_local_scalar_dense"),
    "tolist": (lambda x: x.tolist(), "tolist"),
    "numpy": (lambda x: x.numpy(), "numpy"),
    "nonzero": (lambda x: x.nonzero(), "nonzero"),
    "argwhere": (lambda x: torch.argwhere(x), "nonzero"),
    "boolean_mask_indexing": (lambda x: x[x > 0], "index.Tensor"),
    "unique": (lambda x: torch.unique(x), "unique"),
    "unique_consecutive": (lambda x: torch.unique_consecutive(x), "unique_consecutive"),
    "masked_select": (lambda x: torch.masked_select(x, x > 0), "masked_select"),
    "repeat_interleave_with_tensor_counts": (lambda x: torch.repeat_interleave(x[0].long().abs()), "repeat_interleave"),
    "bincount": (lambda x: torch.bincount(x[0].long().abs()), "bincount"),
    "equal": (lambda x: torch.equal(x, x), "equal"),
    "allclose": (lambda x: torch.allclose(x, x), "allclose"),
    # Its C++ kernel reads the indices' memory below the dispatcher: the error names the line.
    "tensor_split_with_index_tensor": (lambda x: torch.tensor_split(x, torch.tensor([1, 3]), dim=1), "tensor_split"),
}


@pytest.mark.parametrize("program,op", DATA_DEPENDENT.values(), ids=DATA_DEPENDENT.keys())
def test_data_dependent_op_raises_naming_the_op(program, op):
    real = torch.randn(3, 4)
    program(real)  # eager runs it
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    with pytest.raises(DataDependentError, match=op) as caught:
        with mode:
            program(fake)
    assert op in str(caught.value.op)
    assert isinstance(caught.value, FakeTensorError)


STATIC_NEIGHBOURS = {
    "integer_indexing": lambda x: x[torch.tensor([0, 2])],
    "setitem_with_boolean_mask": lambda x: x.__setitem__(x > 0, 0.0) or x,
    "masked_fill": lambda x: x.masked_fill(x > 0, 1.0),
    "where": lambda x: torch.where(x > 0, x, 0.0),
    "repeat_interleave_with_output_size": lambda x: torch.repeat_interleave(
        x, torch.tensor([1, 2, 3]), dim=0, output_size=6
    ),
    "repeat_interleave_with_int": lambda x: x.repeat_interleave(2, dim=1),
    "nonzero_static": lambda x: torch.nonzero_static(x.flatten(), size=5),
    "one_hot_with_num_classes": lambda x: torch.nn.functional.one_hot(x[0].long().abs(), num_classes=7),
    "any": lambda x: (x > 0).any(dim=1),
}


@pytest.mark.parametrize("program", STATIC_NEIGHBOURS.values(), ids=STATIC_NEIGHBOURS.keys())
def test_static_neighbour_of_a_data_dependent_op_matches_eager(program):
    real = torch.randn(3, 4)
    eager = program(real.clone())
    mode = FakeTensorMode()
    fake = mode.from_real(real)
    with mode:
        fake_out = program(fake)
    assert (fake_out.shape, fake_out.dtype) == (eager.shape, eager.dtype)
