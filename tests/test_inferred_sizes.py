"""A size that torch infers from the others (the -1 of a view: numel // the rest) over a
symbolic length is an integer in the compiled program, at every new length.

Over a class token and n patches (ViT, CLIP: n + 1 positions), the numel of a (2, n + 1, 64)
tensor is `128*s0 + 128` and the rest of `view(2, n + 1, -1, 16)` is `32*s0 + 32`; sympy does
not cancel their quotient, so the head count was kept as `(128*s0 + 128)/(32*s0 + 32)` and the
compiled program computed 4.0, a float that `new_zeros`, `view` and `expand` refuse (found by the
HF zoo's vision models at a new image size: CLIP, BEiT, GLPN).
"""

from __future__ import annotations

import pytest
import torch

import compiler


def _heads_of_a_class_token_sequence(x, cls, w):
    x = torch.cat([cls.expand(x.shape[0], 1, 64), x], 1)  # (2, n + 1, 64)
    b, s, _ = x.shape
    q = torch.nn.functional.linear(x, w).view(b, s, -1, 16)  # 4 heads, inferred
    return q.new_zeros(q.shape[2], 3) + q.sum(1).view(b * q.shape[2], 16)[:, :3].sum(0)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_an_inferred_head_count_is_an_int_at_new_lengths(backend):
    w, cls = torch.randn(64, 64), torch.randn(1, 1, 64)
    compiled = compiler.compile(_heads_of_a_class_token_sequence, backend=backend)
    for n in (4, 6, 9):  # static, then dynamic, then a hit at a new length
        x = torch.randn(2, n, 64)
        torch.testing.assert_close(compiled(x, cls, w), _heads_of_a_class_token_sequence(x, cls, w))


def _pairs_of_an_outer_product(x):
    a = torch.cat([x, x[:1]])  # n + 1
    b = torch.cat([a, a])  # 2*n + 2
    # reshape(-1, 2) infers (n + 1)*(2*n + 2) // 2, which sympy leaves as a quotient with a 1/2
    # unless cancelled to (n + 1)**2: a loop bound the C++ kernel could not print (Swin's windows).
    return (a[:, None] * b[None, :]).reshape(-1, 2).exp().sum(1)


def test_an_inferred_size_with_a_halved_factor_compiles_to_kernels():
    compiled = compiler.compile(_pairs_of_an_outer_product, backend="inductor")
    for n in (4, 6, 9):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), _pairs_of_an_outer_product(x))
