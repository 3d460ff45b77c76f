"""Random ops. By default Triton kernels draw their own numbers (Philox, as torch.compile does):
checked by their distribution, by one seed repeating them, by a dropout's output and mask
agreeing, and by their fusing into one kernel. With `fallback_random=True`, and always in C++
kernels, random ops are aten calls drawing eager's numbers: compared with eager under one seed."""

from __future__ import annotations

import logging

import pytest
import torch

from conftest import assert_same, compile_aten, compile_graph, uses_triton

aten = torch.ops.aten

RANDOM = {
    "rand_like": lambda x: (aten.rand_like.default(x),),
    "randn_like": lambda x: (aten.randn_like.default(x),),
    "bernoulli": lambda x: (aten.bernoulli.default(aten.sigmoid.default(x)),),
    "native_dropout": lambda x: aten.native_dropout.default(aten.mul.Tensor(x, 2.0), 0.3, True),
    "dropout_then_math": lambda x: (aten.tanh.default(aten.native_dropout.default(x, 0.5, True)[0]),),
    "two_draws": lambda x: (aten.add.Tensor(aten.rand_like.default(x), aten.randn_like.default(x)),),
}


def compile_with_eagers_numbers(fn, inputs):
    return compile_graph(torch.fx.symbolic_trace(fn), inputs, fallback_random=True)


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_fallback_random_draws_eagers_numbers_under_one_seed(name, device):
    fn = RANDOM[name]
    x = torch.randn(64, 50, device=device)
    compiled = compile_with_eagers_numbers(fn, [x]) if uses_triton(device) else compile_aten(fn, [x])
    torch.manual_seed(7)
    expected = fn(x)
    torch.manual_seed(7)
    assert_same(compiled(x), expected)


def test_fallback_random_ops_are_aten_calls_without_a_perf_hint(device, caplog):
    x = torch.randn(16, 16, device=device)
    with caplog.at_level(logging.INFO, logger="compiler.perf_hints"):
        compiled = compile_with_eagers_numbers(RANDOM["native_dropout"], [x])
    assert "aten_native_dropout_default(" in compiled.source
    assert not caplog.records


def _in_kernel(device):
    if not uses_triton(device):
        pytest.skip("C++ kernels call aten's random ops")


def test_in_kernel_draws_have_the_right_distribution(device):
    _in_kernel(device)
    x = torch.randn(128, 100, device=device)
    compiled = compile_aten(lambda x: (aten.rand_like.default(x), aten.randn_like.default(x),
                                       aten.bernoulli.p(x, 0.25), aten.rand.default([5000], device=device)), [x])
    uniform, normal, bernoulli, flat = compiled(x)
    for u in (uniform, flat):
        assert 0 <= u.min() and u.max() < 1
        assert abs(u.mean().item() - 0.5) < 0.03 and abs(u.std().item() - 12 ** -0.5) < 0.03
    assert abs(normal.mean().item()) < 0.05 and abs(normal.std().item() - 1) < 0.05
    assert set(bernoulli.unique().tolist()) == {0.0, 1.0} and abs(bernoulli.mean().item() - 0.25) < 0.03
    # Each op has its own seed: no two draws repeat each other.
    assert not torch.equal(uniform.flatten()[:5000], flat)
    assert (uniform - bernoulli).abs().sum() > 0


def test_one_seed_repeats_in_kernel_draws_and_the_stream_moves_on(device):
    _in_kernel(device)
    fn = RANDOM["two_draws"]
    x = torch.randn(64, 50, device=device)
    compiled = compile_aten(fn, [x])
    torch.manual_seed(3)
    first, second = compiled(x)[0], compiled(x)[0]
    torch.manual_seed(3)
    assert_same(compiled(x), [first])
    assert not torch.equal(first, second)


def test_in_kernel_dropout_mask_and_output_agree_in_one_kernel(device):
    _in_kernel(device)
    x = torch.randn(256, 64, device=device, dtype=torch.bfloat16)
    compiled = compile_aten(RANDOM["native_dropout"], [x])
    out, mask = compiled(x)
    assert compiled.kernel_count == 1 and "native_dropout" not in compiled.source
    assert mask.dtype == torch.bool and abs(1 - mask.float().mean().item() - 0.3) < 0.03
    expected = torch.where(mask, (x.float() * 2.0 / 0.7), 0.0).to(torch.bfloat16)
    assert_same(out, expected)


def test_decompositions_keep_random_ops_whole():
    # Lowerings decide how a random op draws (in kernel, or eager's kernel): none is decomposed.
    from inductor.decompositions import decompositions

    table = decompositions()
    assert not [op for op in table if torch.Tag.nondeterministic_seeded in op.tags]
