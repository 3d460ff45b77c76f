"""Attention on CPU through `compile_fx`: aten's flash-attention kernel stays one extern call
(not bmm/softmax/bmm kernels), with eager's outputs and gradients."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F

import inductor

pytest.importorskip("aot_autograd")

from test_compile_fx import traced  # noqa: E402


class Attention(torch.nn.Module):
    def __init__(self, causal: bool, masked: bool):
        super().__init__()
        self.causal, self.masked = causal, masked

    def forward(self, q, k, v, mask):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask if self.masked else None, is_causal=self.causal)
        return out.transpose(1, 2).flatten(2) * 2


def _inputs(requires_grad=False):
    q, k, v = (torch.randn(2, 3, 17, 8, requires_grad=requires_grad) for _ in range(3))
    mask = torch.randn(2, 1, 17, 17)
    return q, k, v, mask


CASES = {"plain": (False, False), "causal": (True, False), "additive mask": (False, True)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_attention_matches_eager_as_one_extern(case):
    module = Attention(*CASES[case])
    inputs = _inputs()
    compiled = inductor.compile_fx(traced(module), list(inputs))
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs)[0], module(*inputs), rtol=1e-4, atol=1e-5)


def test_attention_graph_calls_the_flash_kernel(caplog):
    module = Attention(False, False)
    inputs = _inputs()
    with caplog.at_level(logging.INFO, logger="compiler.output_code"):
        with torch.no_grad():
            inductor.compile_fx(traced(module), list(inputs))(*inputs)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "_scaled_dot_product_flash_attention_for_cpu" in text and "aten.bmm" not in text


@pytest.mark.parametrize("case", sorted(CASES))
def test_attention_gradients_match_eager(case):
    module = Attention(*CASES[case])
    inputs = _inputs(requires_grad=True)
    compiled = inductor.compile_fx(traced(module), list(inputs))
    compiled(*inputs)[0].pow(2).sum().backward()
    ours = [x.grad.clone() for x in inputs[:3]]
    for x in inputs[:3]:
        x.grad = None
    module(*inputs).pow(2).sum().backward()
    for a, x in zip(ours, inputs[:3]):
        torch.testing.assert_close(a, x.grad, rtol=1e-4, atol=1e-4)
