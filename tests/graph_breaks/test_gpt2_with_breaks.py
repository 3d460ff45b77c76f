"""HF GPT-2 in train mode with a `print` and an `.item()` inserted into every block's forward
(by monkeypatching GPT2Block.forward for the test): compiled, it breaks its graph in each
block and still matches eager (logits, printed output, gradients; dropout compared under one
seed). Graph and break counts are recorded in the report next to torch.compile's.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
from transformers.models.gpt2 import modeling_gpt2  # noqa: E402

import compiler  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def gpt2_with_breaks(monkeypatch):
    original = modeling_gpt2.GPT2Block.forward

    def forward(self, hidden_states, *args, **kwargs):
        print("block input", tuple(hidden_states.shape))
        scale = hidden_states.detach().abs().mean().item()
        hidden_states = hidden_states * (1.0 + 0.0 * scale)
        return original(self, hidden_states, *args, **kwargs)

    monkeypatch.setattr(modeling_gpt2.GPT2Block, "forward", forward)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64)
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(config).train()


def run(model, input_ids, seed):
    """Logits, gradients of every parameter, and what the forward printed."""
    model.zero_grad()
    out = io.StringIO()
    torch.manual_seed(seed)
    with contextlib.redirect_stdout(out):
        logits = model(input_ids=input_ids, use_cache=False).logits
    logits.float().pow(2).mean().backward()
    grads = {name.removeprefix("_orig_mod."): p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return logits.detach(), grads, out.getvalue()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_gpt2_train_mode_with_print_and_item_matches_eager(gpt2_with_breaks, backend):
    model = gpt2_with_breaks
    compiled = compiler.compile(model, backend=backend)
    for seed in (1, 2):
        input_ids = torch.randint(0, 128, (2, 16))
        logits, grads, printed = run(compiled, input_ids, seed)
        expected_logits, expected_grads, expected_printed = run(model, input_ids, seed)
        torch.testing.assert_close(logits, expected_logits)
        assert printed == expected_printed and printed.count("block input") == 2
        assert grads.keys() == expected_grads.keys()
        for name in grads:
            torch.testing.assert_close(grads[name], expected_grads[name], msg=name)


def test_gpt2_break_counts_next_to_torch_compile(gpt2_with_breaks):
    import torch._dynamo
    from torch._dynamo.utils import counters

    input_ids = torch.randint(0, 128, (2, 16))
    with contextlib.redirect_stdout(io.StringIO()):
        explained = compiler.explain(gpt2_with_breaks)(input_ids=input_ids, use_cache=False)
        torch._dynamo.reset()
        counters.clear()
        reference: list = []
        torch.compile(gpt2_with_breaks, backend=lambda gm, inputs: reference.append(gm) or gm.forward)(
            input_ids=input_ids, use_cache=False
        )
    ours_ops = [len(ops) for ops in explained.ops_per_graph]
    theirs_ops = [sum(n.op in ("call_function", "call_method") for n in gm.graph.nodes) for gm in reference]
    print(f"GPT-2 with print and .item() in each block: ours {explained.graph_count} graphs {ours_ops}, "
          f"{explained.graph_break_count} breaks | torch.compile {len(reference)} graphs {theirs_ops}, "
          f"{sum(counters['graph_break'].values())} breaks")  # fmt: skip
    assert abs(explained.graph_count - len(reference)) <= 2


def test_twelve_blocks_with_breaks_share_one_compiled_forward(monkeypatch):
    """Every block's forward breaks its graph, so each block is a frame of its own; the 12
    instances are served by the same entries (modules guarded by structure, parameters as
    graph inputs), so no layer falls past the recompile limit into eager."""
    original = modeling_gpt2.GPT2Block.forward

    def forward(self, hidden_states, *args, **kwargs):
        print("block input", tuple(hidden_states.shape))
        return original(self, hidden_states, *args, **kwargs)

    monkeypatch.setattr(modeling_gpt2.GPT2Block, "forward", forward)
    config = transformers.GPT2Config(n_layer=12, n_embd=32, n_head=2, vocab_size=64, n_positions=32)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).eval()
    input_ids = torch.randint(0, 64, (2, 8))
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("error")  # a "recompile limit" warning fails the test
        compiled = compiler.compile(model, backend="eager")
        for _ in range(2):
            torch.testing.assert_close(compiled(input_ids=input_ids, use_cache=False).logits, model(input_ids=input_ids, use_cache=False).logits)
        explained = compiler.explain(model)(input_ids=input_ids, use_cache=False)
    # Embeddings, then per block one graph before and one after its print (shared by all
    # blocks), then the head: a count that does not grow with the number of layers.
    assert explained.graph_count <= 6, explained.graph_count
