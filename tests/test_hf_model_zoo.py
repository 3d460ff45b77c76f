"""Every HF transformers model that reads tokens, pixels or audio, compiled, against eager: code
nobody here wrote.

For each model type of `MODEL_MAPPING_NAMES` (the base model of every architecture), the model
is built from its default config shrunk to two small layers (`shrunk_config`; random weights,
nothing downloaded), in eval mode. Its main input is the first its forward takes of `INPUT_KINDS`:
token ids; pixel_values (images of 32 pixels a side, rounded up to the patch size; videos of 4
frames); input_values (raw audio, 1600 samples); input_features (an 80-bin spectrogram of 32
frames). The image size, the stages' depths and the audio positions of these models shrink with
the config; when a layout or size is not the model's (a codec's (batch, channels, samples), a
spectrogram's frames first, Whisper's one length), the next of `ModelInputs.layouts` that eager
takes is used. Types whose forward takes none of these inputs, whose shrunk config does not
build, or on which eager itself raises are skipped. The rest run through
`compiler.compile(model, backend=...)` (fullgraph=False: graph breaks are allowed, a wrong value
never is) three times, as the conformance corpus does (`CALLS`): the first call; a cache hit with
fresh values and an attention mask that pads the end of one sequence; and a new sequence length,
image size or audio length (the same size again where the model takes only one). Every tensor of
each output is compared with eager's.

Each model type ends as one outcome:
  pass              every call agrees with eager;
  error             the compiled model raised where eager did not;
  wrong             a silent mismatch with eager. Never acceptable: fix it;
  as_torch_compile  a mismatch torch.compile (same backend) shows too: the model itself computes
                    something else when compiled (it asks whether it is being traced);
  skipped           (with the reason) the model could not be built or eager raised.

CI runs the types of CI_TYPES (about 50 s on two cores). The whole zoo (some 600 types, about
a third skipped) as a script, one JSON line per type:

    cd tests && python test_hf_model_zoo.py --backend eager --out zoo.jsonl [--types gpt2,t5]

With --train, each type trains instead (every parameter's gradient against eager's):
test_hf_training_zoo.py.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
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
# The same for a model that reads pixels or audio: the widths of DAC's convolutions.
MEDIA_SHRINK = {"encoder_hidden_size": 16, "decoder_hidden_size": 64}
KEY_VALUE_HEADS = ("num_key_value_heads", "n_kv_heads", "num_kv_heads", "num_experts_per_tok", "top_k")
MAX_PARAMETERS = 30_000_000
SEQUENCE, NEW_SEQUENCE, BATCH = 12, 9, 2
DECODER_SEQUENCE = 6  # the decoder ids of an encoder-decoder whose encoder reads pixels or audio
IMAGE = 32  # pixels a side, rounded up to a multiple of the patch size; a new size adds half
SAMPLES, NEW_SAMPLES = 1600, 2400  # raw audio: 5 and 7 frames of wav2vec2's 320-sample hop
FRAMES, NEW_FRAMES = 32, 48  # audio feature frames
TIMEOUT_S = 120  # CPU seconds a call may take (time_limit)
WALL_FACTOR = 5

# A spread of families: decoders (absolute, rotary and ALiBi positions; MQA/GQA), an encoder,
# encoder-decoders, sliding-window attention (Longformer: chunk counts from torch.div of
# ints) and a mixture of experts behind transformers' install probes (NLLB-MoE); beyond text, a
# ViT with a class token and interpolated positions at a new image size (CLIP), a convnet with
# depthwise convs and layer norm over channels (ConvNeXt) and a spectrogram encoder-decoder
# (Whisper), a few seconds each.
CI_TYPES = ("gpt2", "llama", "bert", "t5", "bart", "falcon", "mpt", "longformer", "nllb-moe",
            "clip_vision_model", "convnext", "whisper")


@dataclasses.dataclass(frozen=True)
class Outcome:
    model_type: str
    kind: str  # "pass", "error", "wrong", "as_torch_compile" or "skipped"
    detail: str = ""
    seconds: float = 0.0


def shrunk_config(model_type: str, media: bool = False, widths: bool = True):
    """The default config of `model_type`, shrunk: with `widths`, its layers, widths and heads
    (SHRINK); with `media`, the image size, the stages' depths, video frames and audio positions
    of a model that reads pixels or audio."""
    config = transformers.AutoConfig.for_model(model_type)
    _shrink(config, media, widths)
    return config


def _shrink(config, media: bool, widths: bool) -> None:
    """Small values for the sizes of `config` and of the configs inside it (a multimodal model's
    text and vision configs)."""
    staged = isinstance(getattr(config, "depths", None), (list, tuple))
    if widths and not (media and staged):  # a staged model's widths and layers follow its `depths`
        _shrink_widths(config)
    if media:
        _shrink_media(config)
    for value in vars(config).values():
        if isinstance(value, transformers.PretrainedConfig):
            _shrink(value, media, widths)


def _shrink_widths(config) -> None:
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


def _shrink_media(config) -> None:
    for name, value in MEDIA_SHRINK.items():
        if isinstance(getattr(config, name, None), type(value)):
            setattr(config, name, value)
    if isinstance(getattr(config, "depths", None), (list, tuple)) and isinstance(getattr(config, "window_size", None), int):
        config.window_size = min(config.window_size, 2)  # Swin: every stage at least a window wide
    size = getattr(config, "image_size", None)
    if isinstance(size, int):
        config.image_size = image_side(config)
    elif isinstance(size, (list, tuple)) and len(size) == 2:
        config.image_size = type(size)((image_side(config),) * 2)
    depths = getattr(config, "depths", None)
    if isinstance(depths, (list, tuple)) and all(isinstance(d, int) for d in depths):
        config.depths = type(depths)(min(d, 2) for d in depths)
    if isinstance(getattr(config, "num_frames", None), int):
        config.num_frames = 4
    if isinstance(getattr(config, "max_source_positions", None), int):  # Whisper takes 2x this many frames
        config.max_source_positions = FRAMES // 2


def build(model_type: str):
    """(model, its `ModelInputs`), or a str saying why it is skipped."""
    class_name = transformers.models.auto.modeling_auto.MODEL_MAPPING_NAMES[model_type]
    try:
        model_class = getattr(transformers, class_name, None) if isinstance(class_name, str) else None
        parameters = inspect.signature(model_class.forward).parameters if model_class else {}
    except ImportError as error:  # a model needing a library not installed (torchaudio)
        return f"unavailable: {str(error).strip()[:100]}"
    if model_class is None:
        return f"no class {class_name}"
    main_input = next((name for name in INPUT_KINDS if name in parameters), None)
    if main_input is None:
        return f"its forward takes none of {', '.join(INPUT_KINDS)}"
    media = main_input != "input_ids"
    # A model that reads pixels or audio whose widths do not shrink together (a codec's codebook
    # size beside its hidden size) is tried again at its default widths.
    reason = ""
    for widths in (True, False) if media else (True,):
        built = _build_from(model_class, shrunk_config(model_type, media, widths), INPUT_KINDS[main_input], parameters)
        if not isinstance(built, str):
            return built
        reason = reason or built
    return reason


def _build_from(model_class, config, make_inputs, parameters):
    """(model, the `ModelInputs` eager runs it on), or why not."""
    try:
        with torch.device("meta"):  # sized before any memory is spent
            size = sum(p.numel() for p in model_class(config).parameters())
        if size > MAX_PARAMETERS:
            return f"too large once shrunk ({size / 1e6:.0f}M parameters)"
        torch.manual_seed(0)
        model = model_class(config).eval()
    except Exception as error:  # noqa: BLE001  (an architecture this shrinking cannot build)
        return f"unbuildable: {type(error).__name__}: {str(error)[:120]}"
    with torch.no_grad():
        taken = inputs_eager_takes(model, make_inputs(config, parameters))
    if isinstance(taken, Exception):
        return f"eager raised: {type(taken).__name__}: {str(taken)[:120]}"
    return model, taken


@dataclasses.dataclass(frozen=True)
class Call:
    """One of the three calls: the first, a cache hit with fresh values and a padding mask, and
    (`new_size`) a new sequence length, image size or audio length."""

    new_size: bool
    pad: bool
    seed: int


CALLS = (Call(False, False, 1), Call(False, True, 2), Call(True, True, 3))


class ModelInputs:
    """A model's keyword arguments for each `Call`: its main input (token ids, pixels, a waveform
    or audio features) sized by `shapes` (the first calls' shape, then the new size's), and the
    arguments every modality shares (a padding mask, decoder ids, no cache)."""

    masks = True  # pass an attention mask (padding one sequence on the second and third call)

    def __init__(self, config, parameters, shapes: tuple[tuple[int, ...], tuple[int, ...]]):
        self.config, self.parameters, self.shapes = config, parameters, shapes

    def __call__(self, call: Call) -> dict:
        generator = torch.Generator().manual_seed(call.seed)
        shape = self.shapes[call.new_size]
        kwargs = {self.name: self.main(shape, generator)}
        length = shape[self.masked_dim]
        if self.masks and "attention_mask" in self.parameters:
            mask = torch.ones(BATCH, length, dtype=torch.long)
            if call.pad:  # pads the end of the first sequence (3 of 12 tokens, a quarter of audio)
                mask[0, length - max(3, length // 4):] = 0
            kwargs["attention_mask"] = mask
        if "decoder_input_ids" in self.parameters and getattr(self.config, "is_encoder_decoder", False):
            kwargs["decoder_input_ids"] = token_ids(self.config, self.decoder_length(shape), generator)
        if "use_cache" in self.parameters:
            kwargs["use_cache"] = False
        return kwargs

    def decoder_length(self, shape) -> int:
        return DECODER_SEQUENCE

    def with_shapes(self, shapes) -> ModelInputs:
        other = copy.copy(self)
        other.shapes = shapes
        return other

    def fallbacks(self) -> list[ModelInputs]:
        """Other layouts to try, in order, when eager rejects these inputs; the last keeps the
        first calls' size for the third call (a model that takes one size only)."""
        return [self.with_shapes((self.shapes[0], self.shapes[0]))]

    def layouts(self) -> list[ModelInputs]:
        """These inputs, their fallbacks, then the same without an attention mask (an audio
        encoder that wants a 4-d float mask where a padding mask is (batch, frames))."""
        layouts = [self, *self.fallbacks()]
        if "attention_mask" not in self.parameters or isinstance(self, TokenInputs):
            return layouts
        unmasked = [copy.copy(layout) for layout in layouts]
        for layout in unmasked:
            layout.masks = False
        return [*layouts, *unmasked]


class TokenInputs(ModelInputs):
    name, masked_dim = "input_ids", 1

    def __init__(self, config, parameters):
        super().__init__(config, parameters, ((BATCH, SEQUENCE), (BATCH, NEW_SEQUENCE)))

    def main(self, shape, generator):
        return token_ids(self.config, shape[1], generator)

    def decoder_length(self, shape):
        return shape[1] - 2

    def fallbacks(self):
        return []


def token_ids(config, length: int, generator) -> torch.Tensor:
    vocab = min(int(getattr(config, "vocab_size", 0) or 100), 1000)
    return torch.randint(3, max(vocab, 4), (BATCH, length), generator=generator)


class PixelInputs(ModelInputs):
    """Images (batch, channels, size, size), or videos (batch, frames, channels, size, size) for
    a model with `num_frames`; the size a multiple of the patch size (`image_side`)."""

    name, masked_dim = "pixel_values", 0

    def __init__(self, config, parameters):
        side = image_side(config)
        channels = int(getattr(config, "num_channels", 3) or 3)
        frames = getattr(config, "num_frames", None)
        step = patch_of(config)
        shapes = [(channels, s, s) for s in (side, side + max(step, IMAGE // 2))]
        if isinstance(frames, int):
            shapes = [(frames, *shape) for shape in shapes]
        super().__init__(config, parameters, tuple((BATCH, *shape) for shape in shapes))

    def __call__(self, call):
        kwargs = super().__call__(call)
        kwargs.pop("attention_mask", None)  # a pixel mask is not a padding of the sequence
        if "interpolate_pos_encoding" in self.parameters:  # what a new image size asks for
            kwargs["interpolate_pos_encoding"] = True
        return kwargs

    def main(self, shape, generator):
        return torch.randn(shape, generator=generator)

    def fallbacks(self):
        """Also images twice as large (a convnet whose last stage would be empty at 32 pixels)."""
        larger = self.with_shapes(tuple((*shape[:-2], 2 * shape[-2], 2 * shape[-1]) for shape in self.shapes))
        return [*super().fallbacks(), larger, *ModelInputs.fallbacks(larger)]


class PixelVideoInputs(PixelInputs):
    name = "pixel_values_videos"


class WaveformInputs(ModelInputs):
    """Raw audio: (batch, samples), or (batch, channels, samples) for a codec."""

    name, masked_dim = "input_values", -1

    def __init__(self, config, parameters):
        super().__init__(config, parameters, ((BATCH, SAMPLES), (BATCH, NEW_SAMPLES)))

    def main(self, shape, generator):
        return torch.randn(shape, generator=generator)

    def fallbacks(self):
        channels = int(getattr(self.config, "audio_channels", 1) or 1)
        with_channels = self.with_shapes(tuple((BATCH, channels, shape[-1]) for shape in self.shapes))
        return [*super().fallbacks(), with_channels, *ModelInputs.fallbacks(with_channels)]


class FeatureInputs(ModelInputs):
    """Audio features (a mel spectrogram): (batch, bins, frames) as Whisper takes them, else
    (batch, frames, bins)."""

    name, masked_dim = "input_features", -1

    def __init__(self, config, parameters):
        bins = next((getattr(config, n) for n in FEATURE_BINS if isinstance(getattr(config, n, None), int)), 80)
        if isinstance(getattr(config, "input_channels", None), int):  # Speech2Text stacks channels
            bins *= config.input_channels
        self.bins = bins
        super().__init__(config, parameters, ((BATCH, bins, FRAMES), (BATCH, bins, NEW_FRAMES)))

    def main(self, shape, generator):
        return torch.randn(shape, generator=generator)

    def fallbacks(self):
        frames_last = self.with_shapes(tuple((BATCH, shape[2], self.bins) for shape in self.shapes))
        frames_last.masked_dim = 1
        return [*super().fallbacks(), frames_last, *ModelInputs.fallbacks(frames_last)]


# A model's main input (the first of these its forward takes) and how it is made.
INPUT_KINDS = {
    "input_ids": TokenInputs,
    "pixel_values": PixelInputs,
    "pixel_values_videos": PixelVideoInputs,
    "input_values": WaveformInputs,
    "input_features": FeatureInputs,
}
FEATURE_BINS = ("num_mel_bins", "input_feat_per_channel", "feature_projection_input_dim", "feature_size")


def patch_of(config) -> int:
    patch = getattr(config, "patch_size", None)
    patch = patch[-1] if isinstance(patch, (list, tuple)) else patch
    return patch if isinstance(patch, int) and 1 <= patch <= IMAGE else 1


def image_side(config) -> int:
    """The smallest multiple of the patch size that is at least IMAGE, and for a Swin at least
    one window wide at its last stage."""
    step = patch_of(config)
    window, depths = getattr(config, "window_size", None), getattr(config, "depths", None)
    if isinstance(window, int) and isinstance(depths, (list, tuple)):
        step *= window * 2 ** (len(depths) - 1)
    return -(-IMAGE // step) * step


def inputs_eager_takes(model, model_inputs: ModelInputs):
    """The first of `model_inputs.layouts()` that eager runs on every call, or the error eager
    raised on the first layout."""
    error = None
    for candidate in model_inputs.layouts():
        try:
            eager_outputs(model, candidate)
            return candidate
        except Exception as raised:  # noqa: BLE001  (this layout is not the model's)
            error = error or raised
    return error


def eager_outputs(model, model_inputs: ModelInputs) -> list:
    expected = []
    for call in CALLS:
        torch.manual_seed(call.seed)  # models that draw noise (VITS) draw the same in both
        expected.append(model(**model_inputs(call)))
    return expected


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
    """TimeoutError once the block has used `seconds` of the process's CPU time, or WALL_FACTOR
    times that of wall time (a hang). CPU time, because on a shared machine wall time is the
    load's: at load 10-16 on two cores, swin's training took over 240 s of wall time and
    under 40 s of CPU time."""

    def expire(kind, limit):
        def raise_timeout(*_):
            raise TimeoutError(f"took over {limit} s of {kind} time")

        return raise_timeout

    previous = (signal.signal(signal.SIGPROF, expire("CPU", seconds)),
                signal.signal(signal.SIGALRM, expire("wall", seconds * WALL_FACTOR)))
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.alarm(seconds * WALL_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.alarm(0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


def run_type(model_type: str, backend: str) -> Outcome:
    start = time.perf_counter()
    built = build(model_type)
    if isinstance(built, str):
        return Outcome(model_type, "skipped", built)
    model, model_inputs = built
    with torch.no_grad():
        expected = eager_outputs(model, model_inputs)
        compiler.reset()
        compiled = compiler.compile(model, backend=backend)
        for call, want in zip(CALLS, expected):
            try:
                with time_limit(TIMEOUT_S), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.manual_seed(call.seed)
                    got = compiled(**model_inputs(call))
            except Exception as error:  # noqa: BLE001  (the outcome names it)
                return Outcome(model_type, "error", f"call {call.seed}: {type(error).__name__}: {str(error)[:300]}",
                               time.perf_counter() - start)
            if problem := mismatch(got, want):
                kind = "as_torch_compile" if torch_compile_differs(model, model_inputs, expected, backend) else "wrong"
                return Outcome(model_type, kind, f"call {call.seed}: {problem}", time.perf_counter() - start)
    return Outcome(model_type, "pass", "", time.perf_counter() - start)


def torch_compile_differs(model, model_inputs, expected, backend: str) -> bool:
    """Whether torch.compile also differs from eager on one of the calls: the model computes
    something else when compiled (transformers materializes a causal mask while tracing that a
    bidirectional Gemma skips in eager: PaliGemma's text model)."""
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend)
    try:
        for call, want in zip(CALLS, expected):
            torch.manual_seed(call.seed)
            if mismatch(compiled(**model_inputs(call)), want):
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
