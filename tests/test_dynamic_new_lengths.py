"""After a model goes dynamic, a call at a new length reuses the compiled graph: no capture and
no compile (kernels for symbolic sizes serve every size), and the values equal eager.

The input is a batch of one sequence, (1, n): its dim 0 has stride n, which must follow n
rather than be guarded as the first length's value (issue 18's dynamic-shapes row).
"""

from __future__ import annotations

import os

import pytest
import torch

import compiler
from compiler.backends import lookup_backend

os.environ.setdefault("HF_HUB_OFFLINE", "1")

LENGTHS = (8, 9, 17, 33, 50)  # 8 compiles static, 9 compiles dynamic, the rest must hit


def _counting(backend_name):
    compiles = []
    backend = lookup_backend(backend_name)

    def counting_backend(gm, example_inputs):
        compiles.append(gm)
        return backend(gm, example_inputs)

    return counting_backend, compiles


def _assert_new_lengths_do_not_compile(compiled, eager, make_input, compiles):
    for n in LENGTHS:
        before = len(compiles)
        x = make_input(n)
        torch.testing.assert_close(compiled(x), eager(x), rtol=1e-4, atol=1e-5)
        if n > LENGTHS[1]:
            assert len(compiles) == before, f"length {n} compiled again"
    assert len(compiles) == 2


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_batch_of_one_sequence_at_new_lengths_does_not_compile(backend):
    weight = torch.randn(16, 16)

    def fn(x):
        h = torch.nn.functional.embedding(x, weight)
        scores = torch.softmax(h @ h.transpose(-1, -2) / 4, -1)
        return (scores @ h).reshape(x.shape[0], -1).sum(-1)

    counting_backend, compiles = _counting(backend)
    compiled = compiler.compile(fn, backend=counting_backend)
    _assert_new_lengths_do_not_compile(compiled, fn, lambda n: torch.randint(0, 16, (1, n)), compiles)


@pytest.mark.slow
def test_gpt2_decoder_at_new_lengths_does_not_compile():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=4, vocab_size=96, n_positions=64)).eval()
    counting_backend, compiles = _counting("inductor")
    compiled = compiler.compile(model, backend=counting_backend)
    with torch.no_grad():
        _assert_new_lengths_do_not_compile(
            lambda ids: compiled(ids).logits, lambda ids: model(ids).logits,
            lambda n: torch.randint(0, 96, (1, n)), compiles)
