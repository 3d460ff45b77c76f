"""The HF model zoo in training: every parameter's gradient, compiled, against eager's.

The eval zoo (test_hf_model_zoo.py) checks forward values only. Training is where
aot_autograd's joint graph, the partitioner and the backward kernels run, so here each model
type of the zoo (built and shrunk the same way) runs in train() mode with every dropout (and
layer drop, drop path, router jitter) probability set to 0, so that eager and compiled draw
nothing (and wav2vec2's SpecAugment masks nothing). Each of the zoo's three calls (first call;
cache hit with fresh inputs and a padding mask; new sequence length, image size or audio length)
computes loss = the sum of every floating output's float().mean() and runs backward; the loss,
every output, every parameter's .grad and every floating buffer (running statistics) are
compared with an eager copy of the same model (deepcopied before compiling). Gradients are
zeroed between calls. Outcomes as the zoo's (pass, error, wrong, as_torch_compile,
skipped).

CI runs CI_TYPES with aot_eager; the whole zoo as a script, one JSON line per type:

    cd tests && python test_hf_training_zoo.py --backend aot_eager --out train.jsonl [--types gpt2]

(or `python test_hf_model_zoo.py --train ...`, the same).
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import time
import warnings

import pytest
import torch

transformers = pytest.importorskip("transformers")

import compiler  # noqa: E402
from test_hf_model_zoo import CALLS, Outcome, build, tensors, time_limit  # noqa: E402

TIMEOUT_S = 240
# Config attributes (by part of their name) that make a training forward draw random numbers.
RANDOM_IN_TRAINING = ("dropout", "drop_prob", "layerdrop", "drop_path", "jitter", "mask_time_prob",
                      "mask_feature_prob")  # the last two: wav2vec2's SpecAugment

# One rotary, one absolute-position decoder, one encoder, one relative-bucket encoder-decoder.
CI_TYPES = ("gpt2", "llama", "bert", "t5")


def build_for_training(model_type: str):
    """(model in train mode drawing nothing, its `ModelInputs`), or why skipped."""
    built = build(model_type)
    if isinstance(built, str):
        return built
    model, model_inputs = built
    for config in configs_of(model.config):
        for name, value in list(vars(config).items()):
            if isinstance(value, float) and any(part in name for part in RANDOM_IN_TRAINING):
                setattr(config, name, 0.0)
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0
        for name in ("dropout", "attention_dropout", "dropout_p", "drop_prob", "layerdrop", "jitter_noise"):
            if isinstance(getattr(module, name, None), float):
                setattr(module, name, 0.0)
    return model.train(), model_inputs


def configs_of(config):
    yield config
    for value in vars(config).values():
        if isinstance(value, transformers.PretrainedConfig):
            yield from configs_of(value)


@dataclasses.dataclass
class Step:
    """What one training call leaves: the loss, the outputs, the grads and the buffers."""

    loss: torch.Tensor
    output: object
    grads: dict[str, torch.Tensor | None]
    buffers: dict[str, torch.Tensor]


def train_step(model, call_model, model_inputs, call) -> Step:
    model.zero_grad(set_to_none=True)
    torch.manual_seed(call.seed)
    output = call_model(**model_inputs(call))
    floating = [t for _, t in tensors(output) if t.is_floating_point() or t.is_complex()]
    loss = sum(t.float().mean().real for t in floating if t.requires_grad)
    if not isinstance(loss, torch.Tensor):
        raise NoGradient("no floating output depends on the parameters")
    loss.backward()
    grads = {n: None if p.grad is None else p.grad.detach().clone() for n, p in model.named_parameters()}
    buffers = {n: b.detach().clone() for n, b in model.named_buffers() if b.is_floating_point()}
    return Step(loss.detach(), detached(output), grads, buffers)


class NoGradient(Exception):
    pass


def detached(output):
    return [(name, t.detach().clone()) for name, t in tensors(output)]


def close(actual: torch.Tensor, expected: torch.Tensor) -> str | None:
    # Gradients sum over the batch and sequence: tolerances relative to the gradient's size.
    scale = max(1.0, expected.abs().max().item()) if expected.numel() else 1.0
    try:
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4 * scale, equal_nan=True)
    except AssertionError as error:
        lines = str(error).splitlines()
        return f"{lines[0]} {lines[-1]}"
    return None


def step_mismatch(got: Step, want: Step) -> str | None:
    if problem := close(got.loss, want.loss):
        return f"loss: {problem}"
    if [n for n, _ in got.output] != [n for n, _ in want.output]:
        return f"outputs differ: {[n for n, _ in got.output]} vs {[n for n, _ in want.output]}"
    for (name, a), (_, e) in zip(got.output, want.output):
        if problem := close(a, e):
            return f"{name}: {problem}"
    for name, expected in want.grads.items():
        actual = got.grads[name]
        if (actual is None) != (expected is None):
            return f"grad of {name}: {'None' if actual is None else 'a tensor'} where eager has " + (
                "None" if expected is None else "a tensor"
            )
        if expected is not None and (problem := close(actual, expected)):
            return f"grad of {name}: {problem}"
    for name, expected in want.buffers.items():
        if problem := close(got.buffers[name], expected):
            return f"buffer {name}: {problem}"
    return None


def run_training_type(model_type: str, backend: str) -> Outcome:
    start = time.perf_counter()
    built = build_for_training(model_type)
    if isinstance(built, str):
        return Outcome(model_type, "skipped", built)
    model, model_inputs = built
    pristine = copy.deepcopy(model)
    expected = []
    for call in CALLS:
        try:
            expected.append(train_step(model, model, model_inputs, call))
        except Exception as error:  # noqa: BLE001  (eager cannot train this config)
            return Outcome(model_type, "skipped", f"eager raised: {type(error).__name__}: {str(error)[:120]}")
    compiler.reset()
    trained = copy.deepcopy(pristine)
    compiled = compiler.compile(trained, backend=backend)
    for call, want in zip(CALLS, expected):
        try:
            with time_limit(TIMEOUT_S), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = train_step(trained, compiled, model_inputs, call)
        except Exception as error:  # noqa: BLE001  (the outcome names it)
            return Outcome(
                model_type,
                "error",
                f"call {call.seed}: {type(error).__name__}: {str(error)[:300]}",
                time.perf_counter() - start,
            )
        if problem := step_mismatch(got, want):
            kind = "as_torch_compile" if torch_compile_differs(pristine, model_inputs, expected, backend) else "wrong"
            return Outcome(model_type, kind, f"call {call.seed}: {problem}", time.perf_counter() - start)
    return Outcome(model_type, "pass", "", time.perf_counter() - start)


def torch_compile_differs(pristine, model_inputs, expected, backend: str) -> bool:
    """Whether torch.compile's training steps also differ from eager's."""
    torch._dynamo.reset()
    model = copy.deepcopy(pristine)
    compiled = torch.compile(model, backend=backend)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for call, want in zip(CALLS, expected):
                if step_mismatch(train_step(model, compiled, model_inputs, call), want):
                    return True
    except Exception:  # noqa: BLE001  (torch.compile failing does not excuse a wrong value)
        return False
    return False


@pytest.mark.slow
@pytest.mark.parametrize("model_type", CI_TYPES)
def test_hf_model_trains_as_eager(model_type):
    outcome = run_training_type(model_type, "aot_eager")
    if outcome.kind == "skipped":
        pytest.skip(outcome.detail)
    assert outcome.kind in ("pass", "as_torch_compile"), outcome.detail


if __name__ == "__main__":
    import test_hf_model_zoo

    test_hf_model_zoo.main(["--train", *sys.argv[1:]])
