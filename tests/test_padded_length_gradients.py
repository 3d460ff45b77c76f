"""A length padded to a multiple (Longformer pads ids to its attention window) is, once dynamic,
an expression `s0 + (-s0 % w) % w` that the backward takes as both a saved tensor's size and
stride, and 8 times it as the gradient's stride. Inductor gives such an expression a symbol of
its own; binding it a second time gave the next expression the same symbol, so the embedding
backward read the saved ids with the gradient's stride: wrong word-embedding gradients at the
new length (the HF training zoo's longformer, call 3). Compiled against eager: first call, fresh
values, a new length (compiled dynamic), another new length.
"""

from __future__ import annotations

import pytest
import torch

import compiler
from test_saved_traced_strides import values_and_gradients_match

WINDOW = 16


def embed_padded(ids, weight, ln_weight, ln_bias):
    ids = torch.nn.functional.pad(ids, (0, (WINDOW - ids.shape[1] % WINDOW) % WINDOW), value=1)
    embedded = torch.nn.functional.embedding(ids, weight, padding_idx=1)
    return torch.nn.functional.layer_norm(embedded, (8,), ln_weight, ln_bias)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_gradients_through_a_length_padded_to_a_multiple_match_eager(backend):
    compiler.reset()
    compiled = compiler.compile(embed_padded, backend=backend)
    torch.manual_seed(0)
    for length in (12, 12, 9, 21):
        args = [torch.randint(3, 50, (2, length)), torch.randn(50, 8), torch.randn(8), torch.randn(8)]
        values_and_gradients_match(compiled, embed_padded, args, wrt=(1, 2, 3))
    compiler.reset()
