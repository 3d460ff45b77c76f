"""Small HF models through `compiler.compile(backend="inductor")` with Triton kernels, run in
Triton's interpreter on CPU tensors (no GPU needed): a training step matches eager's loss and
gradients. The same kernels run compiled on a GPU in test_triton_gpu_models.py.

Runs where the interpreter is on (packages/inductor/tests/conftest.py switches it on for
machines without CUDA, before triton is imported).
"""

from __future__ import annotations

import copy
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Triton binds its library functions when first imported: without a GPU, switch its interpreter on
# now (collection imports this module before any test imports triton).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

pytestmark = pytest.mark.slow


def _interpreter_on() -> bool:
    from triton import knobs

    return bool(knobs.runtime.interpret)


def _models():
    transformers = pytest.importorskip("transformers")
    vocab = 96
    gpt2 = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=vocab, n_positions=32,
                                   resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    bert = transformers.BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                                   vocab_size=vocab, max_position_embeddings=32, hidden_dropout_prob=0.0,
                                   attention_probs_dropout_prob=0.0)
    return {
        "gpt2": lambda: transformers.GPT2LMHeadModel(gpt2),
        "bert": lambda: transformers.BertForMaskedLM(bert),
    }


@pytest.mark.parametrize("name", ["gpt2", "bert"])
def test_training_step_with_triton_kernels_matches_eager(name):
    if not _interpreter_on():
        pytest.skip("Triton's interpreter is off (set TRITON_INTERPRET=1 before triton is imported)")
    import compiler

    torch.manual_seed(0)
    model = _models()[name]()
    reference = copy.deepcopy(model)
    ids = torch.randint(0, 96, (2, 12))

    def loss_of(module):
        logits = module(input_ids=ids).logits
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten())

    compiled = compiler.compile(model, backend="inductor", options={"cpu_backend": "triton"})
    loss = loss_of(compiled)
    loss.backward()
    expected = loss_of(reference)
    expected.backward()
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)
    for (param_name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=param_name)
