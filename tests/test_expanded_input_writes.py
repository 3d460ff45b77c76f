"""Writes into an input whose elements share memory (an expanded tensor, stride 0): eager
allows some (fill_, zero_, index_put_, masked_fill_) and refuses most (add_, copy_). After an
allowed write every element of the shared location reads the written value, which a
functional graph cannot express: inductor returned [0, 5, 0] for eager's [5, 5, 5] after
index_put_. Compiled, a write eager refuses raises eager's error where the user's code made
it; one eager allows runs as eager runs it (capture breaks the graph there), and with
fullgraph=True is refused with an error that says why. Never a value that differs from eager's.
"""

from __future__ import annotations

import pytest
import torch

import compiler
from capture import Unsupported

WRITES = {
    "fill_": lambda y: y.fill_(2.0),
    "zero_": lambda y: y.zero_(),
    "index_put_": lambda y: y.index_put_((torch.tensor([1]),), torch.tensor([5.0])),
    "masked_fill_": lambda y: y.masked_fill_(torch.arange(y.shape[0]) % 2 == 0, 3.0),
    "add_": lambda y: y.add_(1.0),
    "copy_": lambda y: y.copy_(torch.arange(float(y.shape[0]))),
}


def _eager(program, inputs):
    try:
        return program(*inputs), None
    except RuntimeError as error:
        return None, str(error)


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("write", WRITES)
def test_write_into_an_expanded_input_matches_eager(write, backend):
    def program(y):
        WRITES[write](y)
        return y * 1

    compiled = compiler.compile(program, backend=backend)
    for size in (3, 3, 5):  # first call, cache hit with new values, new size
        base = torch.randn(1)
        expected, refusal = _eager(program, [base.clone().expand(size)])
        if refusal is not None:
            with pytest.raises(RuntimeError) as error:
                compiled(base.clone().expand(size))
            assert str(error.value) == refusal
        else:
            torch.testing.assert_close(compiled(base.clone().expand(size)), expected)


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("write", ["fill_", "index_put_"])
def test_write_eager_allows_into_an_expanded_input_is_refused_with_fullgraph(write):
    def program(y):
        WRITES[write](y)
        return y * 1

    with pytest.raises(Unsupported, match="an expanded tensor"):
        compiler.compile(program, backend="inductor", fullgraph=True)(torch.randn(1).expand(3))
