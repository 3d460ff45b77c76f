"""Random ops draw eager's numbers: under one seed a compiled graph returns what eager does
(dropout masks included), and the ops are aten calls, not decomposed, not fused."""

from __future__ import annotations

import logging

import pytest
import torch

from conftest import assert_same, compile_aten

aten = torch.ops.aten

RANDOM = {
    "rand_like": lambda x: (aten.rand_like.default(x),),
    "randn_like": lambda x: (aten.randn_like.default(x),),
    "bernoulli": lambda x: (aten.bernoulli.default(aten.sigmoid.default(x)),),
    "native_dropout": lambda x: aten.native_dropout.default(aten.mul.Tensor(x, 2.0), 0.3, True),
    "dropout_then_math": lambda x: (aten.tanh.default(aten.native_dropout.default(x, 0.5, True)[0]),),
    "two_draws": lambda x: (aten.add.Tensor(aten.rand_like.default(x), aten.randn_like.default(x)),),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_ops_draw_eagers_numbers_under_one_seed(name, device):
    fn = RANDOM[name]
    x = torch.randn(64, 50, device=device)
    compiled = compile_aten(fn, [x])
    torch.manual_seed(7)
    expected = fn(x)
    torch.manual_seed(7)
    assert_same(compiled(x), expected)


def test_random_ops_are_aten_calls_without_a_perf_hint(device, caplog):
    x = torch.randn(16, 16, device=device)
    with caplog.at_level(logging.INFO, logger="compiler.perf_hints"):
        compiled = compile_aten(RANDOM["native_dropout"], [x])
    assert "torch.ops.aten.native_dropout.default(" in compiled.source
    assert not caplog.records


def test_decompositions_keep_random_ops_whole():
    from inductor.decompositions import decompositions

    table = decompositions()
    assert not [op for op in table if torch.Tag.nondeterministic_seeded in op.tags]
