"""torch.cond and the other control-flow operators run natively between two graphs: their eager
path compiles the branches with torch.compile, which failed on capture's fake tensors when the
call was recorded (even the eager backend raised). Compared with eager on a cache hit and a new
size."""

from __future__ import annotations

import pytest
import torch

from helpers import assert_same, compile_eager

import capture


def true_branch(t):
    return t.sin() + 1


def false_branch(t):
    return t.cos() - 1


def cond_of_global_functions(x):
    return torch.cond(x.sum() > 0, true_branch, false_branch, (x,)) * 2


def test_cond_runs_natively_between_graphs():
    compiled = compile_eager(cond_of_global_functions)
    for n in (4, 4, 7):
        x = torch.randn(n)
        assert_same(compiled(x), cond_of_global_functions(x))


def test_cond_under_fullgraph_names_the_operator():
    compiled = compile_eager(cond_of_global_functions, fullgraph=True)
    with pytest.raises(capture.Unsupported, match="torch.cond"):
        compiled(torch.randn(3))


def relative_bias(score, b, h, q, kv):
    return score + (q - kv) * 0.1


def attention_with_score_mod(q, k, v):
    from torch.nn.attention.flex_attention import flex_attention

    return flex_attention(q, k, v, score_mod=relative_bias) * 2


@pytest.mark.filterwarnings("ignore")
def test_flex_attention_runs_natively_between_graphs():
    compiled = compile_eager(attention_with_score_mod)
    for n in (8, 8, 16):
        q, k, v = (torch.randn(1, 2, n, 4) for _ in range(3))
        assert_same(compiled(q, k, v), attention_with_score_mod(q, k, v))
