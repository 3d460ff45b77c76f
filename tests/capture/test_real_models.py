"""Real HF transformers models (small configs, random weights) captured with fullgraph=True
through compiler.compile and compared with eager, in eval mode and in train mode (dropout
on, compared under a fixed seed). Op counts per graph are recorded in the test report
(`-rP` shows them)."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

import compiler  # noqa: E402

pytestmark = pytest.mark.slow


def gpt2():
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64)
    model = transformers.GPT2LMHeadModel(config)
    return model, lambda: {"input_ids": torch.randint(0, 128, (2, 16)), "use_cache": False}


def bert():
    config = transformers.BertConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        vocab_size=128, max_position_embeddings=64,
    )  # fmt: skip
    model = transformers.BertModel(config)
    return model, lambda: {
        "input_ids": torch.randint(0, 128, (2, 16)),
        "attention_mask": torch.ones(2, 16, dtype=torch.long),
    }


def llama():
    config = transformers.LlamaConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=128, max_position_embeddings=64,
    )  # fmt: skip
    model = transformers.LlamaForCausalLM(config)
    return model, lambda: {"input_ids": torch.randint(0, 128, (2, 16)), "use_cache": False}


def resnet():
    config = transformers.ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[2, 2, 2, 2], layer_type="basic", num_labels=10
    )
    model = transformers.ResNetForImageClassification(config)
    return model, lambda: {"pixel_values": torch.randn(2, 3, 32, 32)}


def vit():
    config = transformers.ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=32, patch_size=8, num_labels=10,
    )  # fmt: skip
    model = transformers.ViTForImageClassification(config)
    return model, lambda: {"pixel_values": torch.randn(2, 3, 32, 32)}


MODELS = {"gpt2": gpt2, "bert": bert, "llama": llama, "resnet": resnet, "vit": vit}


def compare(actual, expected):
    assert type(actual) is type(expected)
    assert list(actual.keys()) == list(expected.keys())
    for key in expected.keys():
        torch.testing.assert_close(actual[key], expected[key], msg=lambda m: f"{key}: {m}")


def graphs_of(compiled):
    return [entry.graph_module for entry in compiled._cache.entries]


def op_count(graph_module) -> int:
    return sum(1 for n in graph_module.graph.nodes if n.op in ("call_function", "call_method"))


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("mode", ["eval", "train"])
def test_model_matches_eager(name, mode):
    torch.manual_seed(0)
    model, make_inputs = MODELS[name]()
    model.train(mode == "train")
    compiled = compiler.compile(model, fullgraph=True, backend="eager")
    for _ in range(2):
        inputs = make_inputs()
        torch.manual_seed(1)
        actual = compiled(**inputs)
        torch.manual_seed(1)
        expected = model(**inputs)
        compare(actual, expected)
    graphs = graphs_of(compiled)
    assert len(graphs) == 1, "the second call hits the cache"
    print(f"{name} ({mode}): {len(graphs)} graph, ops per graph {[op_count(g) for g in graphs]}")


LABELS = {
    "gpt2": lambda inputs: inputs["input_ids"],
    "llama": lambda inputs: inputs["input_ids"],
    "resnet": lambda inputs: torch.randint(0, 10, (2,)),
    "vit": lambda inputs: torch.randint(0, 10, (2,)),
}


@pytest.mark.parametrize("name", LABELS)
def test_loss_and_gradients_match_eager(name):
    """A training step: the model's own loss (labels given), backward, every gradient."""
    torch.manual_seed(0)
    model, make_inputs = MODELS[name]()
    reference, _ = MODELS[name]()
    reference.load_state_dict(model.state_dict())
    model.train()
    reference.train()
    compiled = compiler.compile(model, fullgraph=True, backend="eager")
    inputs = make_inputs()
    inputs["labels"] = LABELS[name](inputs)
    torch.manual_seed(1)
    loss = compiled(**inputs).loss
    torch.manual_seed(1)
    expected = reference(**inputs).loss
    torch.testing.assert_close(loss, expected)
    loss.backward()
    expected.backward()
    for (param_name, p), q in zip(model.named_parameters(), reference.parameters()):
        if q.grad is None:
            assert p.grad is None, param_name
        else:
            torch.testing.assert_close(p.grad, q.grad, msg=lambda m: f"{param_name}: {m}")


@pytest.mark.parametrize("name", ["gpt2", "bert", "llama"])
def test_dynamic_batch_and_sequence_use_one_graph(name):
    torch.manual_seed(0)
    model, make_inputs = MODELS[name]()
    model.eval()
    compiled = compiler.compile(model, fullgraph=True, dynamic=True, backend="eager")
    for batch, seq in [(2, 16), (3, 9), (4, 12)]:
        inputs = make_inputs()
        inputs["input_ids"] = torch.randint(0, 128, (batch, seq))
        if "attention_mask" in inputs:
            inputs["attention_mask"] = torch.ones(batch, seq, dtype=torch.long)
        compare(compiled(**inputs), model(**inputs))
    assert len(graphs_of(compiled)) == 1


@pytest.mark.gpu
@pytest.mark.parametrize("name", MODELS)
def test_model_on_cuda_matches_eager(name):
    torch.manual_seed(0)
    model, make_inputs = MODELS[name]()
    model = model.cuda().eval()
    compiled = compiler.compile(model, fullgraph=True, backend="eager")
    inputs = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in make_inputs().items()}
    compare(compiled(**inputs), model(**inputs))


def test_model_outputs_passed_to_a_compiled_function():
    model, make_inputs = MODELS["gpt2"]()
    model.eval()

    def loss_of(outputs, labels):
        logits = outputs["logits"] if "logits" in outputs else outputs[0]
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()), outputs.to_tuple()[0]

    compiled = compiler.compile(loss_of, fullgraph=True, backend="eager")
    inputs = make_inputs()
    outputs = model(**inputs)
    actual = compiled(outputs, inputs["input_ids"])
    expected = loss_of(outputs, inputs["input_ids"])
    torch.testing.assert_close(actual, expected)
