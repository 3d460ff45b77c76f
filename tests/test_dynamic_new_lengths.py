"""After a model goes dynamic, a call at a new length reuses the compiled graph: no capture, no
compile, no kernel generated, and on Triton no block size timed and no new binary (kernels for
symbolic sizes serve every size; issue 18's dynamic-shapes row). Values equal eager at each
length.

The input is a batch of one sequence, (1, n): its dim 0 has stride n, which must follow n
rather than be guarded as the first length's value. The lengths cross multiples of 16 (Triton
specializes ints on divisibility by 16) and power-of-two size buckets (block sizes are chosen
per bucket); length 1 is specialized (as torch.compile does) and must not evict the dynamic
entry.
"""

from __future__ import annotations

import os

import pytest
import torch

import compiler
from compiler.backends import lookup_backend

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# 8 compiles static, 9 compiles dynamic, 1 compiles specialized; every other length must hit.
LENGTHS = (8, 9, 16, 17, 32, 48, 50, 1, 70)
COMPILING = {8, 9, 1}


def _counting(backend_name, options=None):
    compiles = []
    backend = lookup_backend(backend_name)

    def counting_backend(gm, example_inputs):
        compiles.append(gm)
        return backend(gm, example_inputs, options=options) if options else backend(gm, example_inputs)

    return counting_backend, compiles


def _inductor_counts():
    from inductor import metrics

    counts = metrics.snapshot()
    return {k: counts[k] for k in ("graphs_compiled", "kernels_generated", "kernel_configs_added",
                                   "kernel_block_timings")}


def _assert_new_lengths_do_not_compile(compiled, eager, make_input, compiles, inductor=False, lengths=LENGTHS):
    for n in lengths:
        before, counts = len(compiles), _inductor_counts() if inductor else None
        x = make_input(n)
        torch.testing.assert_close(compiled(x), eager(x), rtol=1e-4, atol=1e-5)
        if n not in COMPILING:
            assert len(compiles) == before, f"length {n} compiled again"
            if inductor:
                assert _inductor_counts() == counts, f"length {n}: inductor compiled, generated or tuned"
    assert len(compiles) == len(COMPILING & set(lengths))


def _attention(weight):
    def fn(x):
        h = torch.nn.functional.embedding(x, weight)
        scores = torch.softmax(h @ h.transpose(-1, -2) / 4, -1)  # a reduction over the length
        return (scores @ h).reshape(x.shape[0], -1).sum(-1)

    return fn


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_batch_of_one_sequence_at_new_lengths_does_not_compile(backend):
    fn = _attention(torch.randn(16, 16))
    counting_backend, compiles = _counting(backend)
    compiled = compiler.compile(fn, backend=counting_backend)
    _assert_new_lengths_do_not_compile(compiled, fn, lambda n: torch.randint(0, 16, (1, n)), compiles,
                                       inductor=backend == "inductor")


@pytest.fixture
def gpu_block_sizes(monkeypatch, tmp_path):
    """Triton launchers choose among the GPU's candidate block sizes (the interpreter's one
    candidate grows with the size too, but compiles nothing); a timing picks the first. A cache
    of its own: block sizes stored by another process's timings are taken before anything else."""
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    triton_launch = pytest.importorskip("inductor.runtime.triton_launch")
    candidates = triton_launch.TritonLauncher._candidates
    monkeypatch.setattr(triton_launch.TritonLauncher, "_candidates",
                        lambda self, numels, interpreted: candidates(self, numels, interpreted=False))
    monkeypatch.setattr(triton_launch.TritonLauncher, "_fastest", lambda self, options, args, numels: options[0])


@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="Triton kernels on CPU run in its interpreter")
def test_triton_kernels_at_new_lengths_are_neither_generated_nor_tuned(gpu_block_sizes):
    # A fresh function (its own kernels): launchers start unchosen.
    weight = torch.randn(16, 16)
    fn = _attention(weight * 0.5)
    counting_backend, compiles = _counting("inductor", {"cpu_backend": "triton"})
    compiled = compiler.compile(fn, backend=counting_backend)
    # Fewer lengths (the interpreter is slow), still across buckets 16 -> 128 and multiples of 16.
    _assert_new_lengths_do_not_compile(compiled, fn, lambda n: torch.randint(0, 16, (1, n)), compiles, inductor=True,
                                       lengths=(8, 9, 16, 33, 70))


@pytest.mark.slow
def test_gpt2_decoder_at_new_lengths_does_not_compile():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=4, vocab_size=96, n_positions=128)).eval()
    counting_backend, compiles = _counting("inductor")
    compiled = compiler.compile(model, backend=counting_backend)
    with torch.no_grad():
        _assert_new_lengths_do_not_compile(
            lambda ids: compiled(ids).logits, lambda ids: model(ids).logits,
            lambda n: torch.randint(0, 96, (1, n)), compiles, inductor=True)
