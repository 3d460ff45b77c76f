"""Writes into an input whose elements share memory (an expanded tensor, stride 0): eager
allows some (fill_, zero_, index_put_, masked_fill_) and refuses most (add_, copy_). After an
allowed write every element of the shared location reads the written value, which a
functional graph cannot express: inductor returned [0, 5, 0] for eager's [5, 5, 5] after
index_put_. Compiled, each such program now raises a clear error; it must never return a
value that differs from eager's."""

from __future__ import annotations

import pytest
import torch

import compiler
from aot_autograd import UnsupportedProgramError

WRITES = {
    "fill_": lambda y: y.fill_(2.0),
    "zero_": lambda y: y.zero_(),
    "index_put_": lambda y: y.index_put_((torch.tensor([1]),), torch.tensor([5.0])),
    "masked_fill_": lambda y: y.masked_fill_(torch.tensor([True, False, True]), 3.0),
    "add_": lambda y: y.add_(1.0),
    "copy_": lambda y: y.copy_(torch.arange(3.0)),
}


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("write", WRITES)
def test_write_into_an_expanded_input_is_refused_never_wrong(write, backend):
    def program(y):
        WRITES[write](y)
        return y * 1

    base = torch.randn(1)
    try:
        expected = program(base.clone().expand(3))
    except RuntimeError:
        expected = None
    with pytest.raises(UnsupportedProgramError, match="an expanded tensor") as error:
        actual = compiler.compile(program, backend=backend)(base.clone().expand(3))
        torch.testing.assert_close(actual, expected)  # reached only if nothing was raised
    assert "program" in error.value.__notes__[0]  # the user's function named beside the error
