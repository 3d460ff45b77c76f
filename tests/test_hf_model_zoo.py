"""Every text model of HF transformers, compiled, against eager: code nobody here wrote.

For each model type of `MODEL_MAPPING_NAMES` (the base model of every architecture), the model
is built from its default config shrunk to two small layers (`shrunk_config`; random weights,
nothing downloaded), in eval mode. Types whose forward takes no `input_ids`, whose shrunk config
does not build, or on which eager itself raises are skipped. The rest run through
`compiler.compile(model, backend=...)` (fullgraph=False: graph breaks are allowed, a wrong value
never is) three times, as the conformance corpus does: the first call; a cache hit with fresh
token ids and an attention mask that pads the end of one sequence; and a new sequence length.
Every tensor of each output is compared with eager's.

Each model type ends as one outcome:
  pass              every call agrees with eager;
  error             the compiled model raised where eager did not;
  wrong             a silent mismatch with eager. Never acceptable: fix it;
  as_torch_compile  a mismatch torch.compile (same backend) shows too: the model itself computes
                    something else when compiled (it asks whether it is being traced);
  skipped           (with the reason) the model could not be built or eager raised.

CI runs the types of CI_TYPES (about 40 s on two cores). The whole zoo (some 600 types, most
skipped: vision, audio and multimodal models take no `input_ids` alone) as a script, one JSON
line per type:

    cd tests && python test_hf_model_zoo.py --backend eager --out zoo.jsonl [--types gpt2,t5]

With --train, each type trains instead (every parameter's gradient against eager's):
test_hf_training_zoo.py.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import json
import os
import signal
import sys
import time
import warnings

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

import compiler  # noqa: E402

# Config attributes (any of the names an architecture uses) set to these small values.
SHRINK = {
    2: ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
        "num_decoder_layers", "num_encoder_layers"),
    64: ("hidden_size", "d_model", "n_embd", "dim", "embed_dim", "embedding_size", "word_embed_proj_dim"),
    4: ("num_attention_heads", "n_head", "n_heads", "encoder_attention_heads", "decoder_attention_heads",
        "num_heads", "num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"),
    128: ("intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "hidden_dim",
          "moe_intermediate_size", "shared_expert_intermediate_size"),
    16: ("d_kv", "head_dim"),
}
KEY_VALUE_HEADS = ("num_key_value_heads", "n_kv_heads", "num_kv_heads", "num_experts_per_tok", "top_k")
MAX_PARAMETERS = 30_000_000
SEQUENCE, NEW_SEQUENCE, BATCH = 12, 9, 2
TIMEOUT_S = 120

# A spread of families: decoders (absolute, rotary and ALiBi positions; MQA/GQA), an encoder,
# encoder-decoders, sliding-window attention (Longformer: chunk counts from torch.div of
# ints) and a mixture of experts behind transformers' install probes (NLLB-MoE).
CI_TYPES = ("gpt2", "llama", "bert", "t5", "bart", "falcon", "mpt", "longformer", "nllb-moe")


@dataclasses.dataclass(frozen=True)
class Outcome:
    model_type: str
    kind: str  # "pass", "error", "wrong", "as_torch_compile" or "skipped"
    detail: str = ""
    seconds: float = 0.0


def shrunk_config(model_type: str):
    config = transformers.AutoConfig.for_model(model_type)
    _shrink(config)
    return config


def _shrink(config) -> None:
    """Small values for the sizes of `config` and of the configs inside it (a multimodal model's
    text and vision configs)."""
    small = {name: value for value, names in SHRINK.items() for name in names}
    small.update({name: 2 for name in KEY_VALUE_HEADS})
    small.update({name: 0.0 for name in ("dropout", "attention_dropout", "hidden_dropout_prob",
                                         "attention_probs_dropout_prob", "dropout_rate", "resid_pdrop",
                                         "embd_pdrop", "attn_pdrop")})
    for name, value in small.items():
        if isinstance(getattr(config, name, None), type(value)) and not isinstance(getattr(config, name), bool):
            with contextlib.suppress(AttributeError):  # a derived property (Falcon's head_dim)
                setattr(config, name, value)
    if isinstance(getattr(config, "layer_types", None), list):
        config.layer_types = config.layer_types[: getattr(config, "num_hidden_layers", 2)]
    for value in vars(config).values():
        if isinstance(value, transformers.PretrainedConfig):
            _shrink(value)


def build(model_type: str):
    """(model, its forward's parameter names), or a str saying why it is skipped."""
    class_name = transformers.models.auto.modeling_auto.MODEL_MAPPING_NAMES[model_type]
    try:
        model_class = getattr(transformers, class_name, None) if isinstance(class_name, str) else None
        parameters = inspect.signature(model_class.forward).parameters if model_class else {}
    except ImportError as error:  # a model needing a library not installed (torchaudio)
        return f"unavailable: {str(error).strip()[:100]}"
    if model_class is None:
        return f"no class {class_name}"
    if "input_ids" not in parameters:
        return "its forward takes no input_ids"
    try:
        config = shrunk_config(model_type)
        with torch.device("meta"):  # sized before any memory is spent
            size = sum(p.numel() for p in model_class(config).parameters())
        if size > MAX_PARAMETERS:
            return f"too large once shrunk ({size / 1e6:.0f}M parameters)"
        torch.manual_seed(0)
        model = model_class(config).eval()
    except Exception as error:  # noqa: BLE001  (an architecture this shrinking cannot build)
        return f"unbuildable: {type(error).__name__}: {str(error)[:120]}"
    return model, parameters


def inputs(model, parameters, length: int, pad: bool, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    vocab = min(int(getattr(model.config, "vocab_size", 0) or 100), 1000)
    ids = torch.randint(3, max(vocab, 4), (BATCH, length), generator=generator)
    kwargs = {"input_ids": ids}
    if "attention_mask" in parameters:
        mask = torch.ones(BATCH, length, dtype=torch.long)
        if pad:
            mask[0, length - 3:] = 0
        kwargs["attention_mask"] = mask
    if "decoder_input_ids" in parameters and model.config.is_encoder_decoder:
        kwargs["decoder_input_ids"] = torch.randint(3, max(vocab, 4), (BATCH, length - 2), generator=generator)
    if "use_cache" in parameters:
        kwargs["use_cache"] = False
    return kwargs


def tensors(output) -> list[tuple[str, torch.Tensor]]:
    """The tensors of a model's output, named by their path."""
    found = []

    def walk(value, path):
        if isinstance(value, torch.Tensor):
            found.append((path, value))
        elif isinstance(value, dict) or hasattr(value, "to_tuple"):
            for key in value.keys():
                walk(value[key], f"{path}.{key}")
        elif isinstance(value, (list, tuple)):
            for k, item in enumerate(value):
                walk(item, f"{path}[{k}]")

    walk(output, "out")
    return found


def mismatch(actual, expected) -> str | None:
    actual, expected = tensors(actual), tensors(expected)
    if [name for name, _ in actual] != [name for name, _ in expected]:
        return f"outputs differ: {[n for n, _ in actual]} vs {[n for n, _ in expected]}"
    for (name, a), (_, e) in zip(actual, expected):
        try:
            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4, equal_nan=True)
        except AssertionError as error:
            return f"{name}: {str(error).splitlines()[0]} {str(error).splitlines()[-1] if error.args else ''}"
    return None


@contextlib.contextmanager
def time_limit(seconds: int):
    def expire(*_):
        raise TimeoutError(f"took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_type(model_type: str, backend: str) -> Outcome:
    start = time.perf_counter()
    built = build(model_type)
    if isinstance(built, str):
        return Outcome(model_type, "skipped", built)
    model, parameters = built
    calls = [(SEQUENCE, False, 1), (SEQUENCE, True, 2), (NEW_SEQUENCE, True, 3)]
    expected = []
    with torch.no_grad():
        for length, pad, seed in calls:
            try:
                torch.manual_seed(seed)  # models that draw noise (VITS) draw the same in both
                expected.append(model(**inputs(model, parameters, length, pad, seed)))
            except Exception as error:  # noqa: BLE001  (eager cannot run this config)
                return Outcome(model_type, "skipped", f"eager raised: {type(error).__name__}: {str(error)[:120]}")
        compiler.reset()
        compiled = compiler.compile(model, backend=backend)
        for (length, pad, seed), want in zip(calls, expected):
            try:
                with time_limit(TIMEOUT_S), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.manual_seed(seed)
                    got = compiled(**inputs(model, parameters, length, pad, seed))
            except Exception as error:  # noqa: BLE001  (the outcome names it)
                return Outcome(model_type, "error", f"call {seed}: {type(error).__name__}: {str(error)[:300]}",
                               time.perf_counter() - start)
            if problem := mismatch(got, want):
                kind = "as_torch_compile" if torch_compile_differs(model, parameters, calls, expected, backend) else "wrong"
                return Outcome(model_type, kind, f"call {seed}: {problem}", time.perf_counter() - start)
    return Outcome(model_type, "pass", "", time.perf_counter() - start)


def torch_compile_differs(model, parameters, calls, expected, backend: str) -> bool:
    """Whether torch.compile also differs from eager on one of `calls`: the model computes
    something else when compiled (transformers materializes a causal mask while tracing that a
    bidirectional Gemma skips in eager: PaliGemma's text model)."""
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend)
    try:
        for (length, pad, seed), want in zip(calls, expected):
            torch.manual_seed(seed)
            if mismatch(compiled(**inputs(model, parameters, length, pad, seed)), want):
                return True
    except Exception:  # noqa: BLE001  (torch.compile failing does not excuse a wrong value)
        return False
    return False


# Errors we know of, with the reason: an error is a refusal to compile, never a wrong value.
KNOWN_ERRORS: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("model_type", CI_TYPES)
def test_hf_model_matches_eager(model_type):
    outcome = run_type(model_type, "eager")
    if outcome.kind == "skipped":
        pytest.skip(outcome.detail)
    if outcome.kind == "error" and model_type in KNOWN_ERRORS:
        pytest.xfail(KNOWN_ERRORS[model_type])
    assert outcome.kind in ("pass", "as_torch_compile"), outcome.detail


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--types", default="", help="comma-separated model types (default: all)")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int, default=None)
    parser.add_argument("--out", default="")
    parser.add_argument("--train", action="store_true", help="gradients in train mode (test_hf_training_zoo.py)")
    options = parser.parse_args(argv)
    run = run_type
    if options.train:  # the training zoo builds on this module: imported only when asked for
        from test_hf_training_zoo import run_training_type as run
    names = list(transformers.models.auto.modeling_auto.MODEL_MAPPING_NAMES)
    names = [n for n in options.types.split(",") if n] or names[options.start:options.stop]
    counts: dict[str, int] = {}
    with open(options.out, "a") if options.out else contextlib.nullcontext() as out:
        for name in names:
            try:
                outcome = run(name, options.backend)
            except Exception as error:  # noqa: BLE001  (one type's failure of this harness)
                outcome = Outcome(name, "error", f"harness: {type(error).__name__}: {str(error)[:200]}")
            counts[outcome.kind] = counts.get(outcome.kind, 0) + 1
            line = json.dumps(dataclasses.asdict(outcome))
            print(line if outcome.kind != "skipped" else f"skipped {name}: {outcome.detail[:100]}", flush=True)
            if out:
                print(line, file=out, flush=True)
    print(counts, file=sys.stderr)


if __name__ == "__main__":
    main()
