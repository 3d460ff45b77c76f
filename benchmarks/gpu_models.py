"""A wider GPU suite (issue 18): model families our first benchmark does not run, eager vs
torch.compile vs ours, with gpu_harness.py's method (child processes, CUDA-event medians,
correctness vs eager, cold/warm compile, peak memory).

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' :) python benchmarks/gpu_models.py --out $OUT/gpu_models.json

Models are built from configs with random weights (HF `transformers`, `timm`; never downloaded).
A row whose library is missing fails alone, naming the import.
"""

from __future__ import annotations

import os
import sys

# Python puts this script's folder first on sys.path, where benchmarks/guards.py would shadow
# our `guards` package (compiler imports it): look our packages up in site-packages instead,
# and the harness up by its path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.append(_HERE)

from gpu_harness import Workload, inference, main, training_step  # noqa: E402

WORKLOADS = [
    "llama_infer", "llama_train", "t5_infer", "whisper_encoder_infer", "resnet50_train", "mobilenetv3_infer",
    "efficientnet_b0_infer", "convnext_tiny_infer", "hf_convnext_infer", "swin_tiny_infer", "decode_default",
    "decode_reduce_overhead", "dynamic_lengths", "adamw_step", "adamw_step_combo",
]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


# ----------------------------------------------------------------------------------- HF models


def _llama(torch):
    from transformers import LlamaConfig, LlamaForCausalLM

    # A Llama-family decoder (GQA, RoPE, RMSNorm, SwiGLU) of ~150M parameters.
    config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                         num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)
    return LlamaForCausalLM(config).cuda()


def _llama_infer(torch):
    model = _llama(torch).to(torch.bfloat16).eval()
    ids = torch.randint(0, 32000, (16, 512), device="cuda")
    return Workload(inference(torch, lambda out: out.logits), model, (ids,))


def _llama_infer_max_autotune(torch):
    """`llama_infer` with both compilers in mode="max-autotune": each matmul a Triton template
    or cuBLAS, whichever times faster (ours: lowering/matmul_templates.py), plus CUDA graphs."""
    work = _llama_infer(torch)
    work.mode = "max-autotune"
    return work


def _mlp_infer_max_autotune(torch):
    """A bf16 MLP of 4 blocks (1024 -> 4096 -> 1024, GELU) over 8192 tokens: nothing but
    matmuls and their epilogues, in mode="max-autotune" for both compilers."""
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)]
    model = torch.nn.Sequential(*layers).cuda().to(torch.bfloat16).eval()
    x = torch.randn(8192, 1024, device="cuda", dtype=torch.bfloat16)
    return Workload(inference(torch, lambda out: out), model, (x,), mode="max-autotune")


def _next_token_loss(torch, logits, ids):
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())


def _llama_train(torch):
    model = _llama(torch).train()
    ids = torch.randint(0, 32000, (8, 512), device="cuda")
    step = training_step(torch, model, lambda target, ids: _next_token_loss(torch, target(ids).logits, ids))
    return Workload(step, model, (ids,))


def _t5_infer(torch):
    from transformers import T5Config, T5Model

    config = T5Config(d_model=512, d_ff=2048, num_layers=6, num_heads=8, vocab_size=32128, dropout_rate=0.0)
    model = T5Model(config).cuda().to(torch.bfloat16).eval()
    source = torch.randint(0, 32128, (16, 256), device="cuda")
    target = torch.randint(0, 32128, (16, 64), device="cuda")
    step = inference(torch, lambda out: out.last_hidden_state)
    return Workload(lambda fn, s, t: step(lambda a: fn(input_ids=a, decoder_input_ids=t), s), model, (source, target))


def _whisper_encoder_infer(torch):
    from transformers import WhisperConfig, WhisperModel

    config = WhisperConfig(d_model=512, encoder_layers=6, encoder_attention_heads=8, encoder_ffn_dim=2048,
                           decoder_layers=1, decoder_attention_heads=8, num_mel_bins=80, dropout=0.0)
    encoder = WhisperModel(config).encoder.cuda().to(torch.bfloat16).eval()
    features = torch.randn(16, 80, 3000, device="cuda", dtype=torch.bfloat16)
    return Workload(inference(torch, lambda out: out.last_hidden_state), encoder, (features,))


def _hf_convnext_infer(torch):
    from transformers import ConvNextConfig, ConvNextModel

    model = ConvNextModel(ConvNextConfig()).cuda().eval()
    images = torch.randn(64, 3, 224, 224, device="cuda")
    return Workload(inference(torch, lambda out: out.last_hidden_state, autocast=True), model, (images,))


def _gpt2_decoder(torch, dtype):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(config).cuda().to(dtype).eval()


def _decode(torch, mode):
    """A 12-layer 125M decoder on one 32-token sequence: host-bound, so per-call cost decides."""
    model = _gpt2_decoder(torch, torch.float16)
    ids = torch.randint(0, 50257, (1, 32), device="cuda")
    return Workload(inference(torch, lambda out: out.logits), model, (ids,), mode=mode)


def _dynamic_lengths(torch):
    """The same decoder at six sequence lengths: the first call at each new length is timed."""
    model = _gpt2_decoder(torch, torch.bfloat16)
    lengths = [64, 96, 128, 200, 256, 384]
    ids = [torch.randint(0, 50257, (8, n), device="cuda") for n in lengths]
    return Workload(inference(torch, lambda out: out.logits), model, (ids[0],), new_sizes=[(i,) for i in ids[1:]])


# ----------------------------------------------------------------------------------- timm models


def _timm(torch, name, channels_last=True):
    import timm

    model = timm.create_model(name, pretrained=False).cuda()
    images = torch.randn(64, 3, 224, 224, device="cuda")
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)
    return model, images


def _timm_infer(torch, name, channels_last=True, tolerance=5e-2):
    model, images = _timm(torch, name, channels_last)
    return Workload(inference(torch, lambda out: out, autocast=True), model.eval(), (images,), tolerance=tolerance)


def _resnet50_train(torch, channels_last=True):
    model, images = _timm(torch, "resnet50", channels_last)
    labels = torch.randint(0, 1000, (64,), device="cuda")
    loss_of = lambda target, images: torch.nn.functional.cross_entropy(target(images).float(), labels)  # noqa: E731
    return Workload(training_step(torch, model.train(), loss_of), model, (images,))


# ----------------------------------------------------------------------------------- optimizer


def _adamw_step(torch):
    """`optimizer.step()` of AdamW (foreach) over a 24-layer MLP's parameters (~100M), compiled alone."""
    model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(24)]).cuda()
    params = list(model.parameters())
    for p in params:
        p.grad = torch.randn_like(p) * 1e-2
    optimizer = torch.optim.AdamW(params, lr=1e-3, foreach=True)
    optimizer.step()  # the state exists from here on; reset() restores it in place
    saved = [t.detach().clone() for t in _optimizer_tensors(torch, optimizer, params)]

    def reset():
        with torch.no_grad():
            for t, s in zip(_optimizer_tensors(torch, optimizer, params), saved):
                t.copy_(s)

    def opt_step():
        optimizer.step()

    def step(target):
        target()
        return params[0]

    return Workload(step, opt_step, (), tolerance=1e-4, reset=reset)


def _adamw_step_combo(torch):
    """`adamw_step` with inductor's `combo_kernels` on: its per-parameter updates as a few
    launches, as torch.compile's foreach kernels (an A/B pair with `adamw_step`). Each row runs
    in a child process of its own: the variable reaches our compile of this row only."""
    os.environ["PTC_INDUCTOR_COMBO_KERNELS"] = "1"
    return _adamw_step(torch)


def _optimizer_tensors(torch, optimizer, params):
    tensors = list(params)
    for p in params:
        tensors += [v for v in optimizer.state[p].values() if isinstance(v, torch.Tensor)]
    return tensors


BUILDERS = {
    "llama_infer": _llama_infer,
    "llama_train": _llama_train,
    # Not in WORKLOADS (torch.compile's max-autotune alone compiles for minutes): --only them.
    "llama_infer_max_autotune": _llama_infer_max_autotune,
    "mlp_infer_max_autotune": _mlp_infer_max_autotune,
    # Not in WORKLOADS: ResNet-50 as a user who never converts to channels_last runs it, for
    # A/B runs of layout optimization (--phases ours --options '{"layout_optimization": true}').
    "resnet50_infer_nchw": lambda torch: _timm_infer(torch, "resnet50", channels_last=False),
    "resnet50_train_nchw": lambda torch: _resnet50_train(torch, channels_last=False),
    "t5_infer": _t5_infer,
    "whisper_encoder_infer": _whisper_encoder_infer,
    "resnet50_train": _resnet50_train,
    # bf16 MobileNetV3 drifts from eager by ~7% of its largest logit under torch.compile too (H200).
    "mobilenetv3_infer": lambda torch: _timm_infer(torch, "mobilenetv3_large_100", tolerance=0.1),
    "efficientnet_b0_infer": lambda torch: _timm_infer(torch, "efficientnet_b0"),
    "convnext_tiny_infer": lambda torch: _timm_infer(torch, "convnext_tiny"),
    "hf_convnext_infer": _hf_convnext_infer,
    "swin_tiny_infer": lambda torch: _timm_infer(torch, "swin_tiny_patch4_window7_224", channels_last=False),
    "decode_default": lambda torch: _decode(torch, None),
    "decode_reduce_overhead": lambda torch: _decode(torch, "reduce-overhead"),
    "dynamic_lengths": _dynamic_lengths,
    "adamw_step": _adamw_step,
    "adamw_step_combo": _adamw_step_combo,
}


if __name__ == "__main__":
    main(BUILDERS, WORKLOADS, os.path.abspath(__file__), __doc__.splitlines()[0], "gpu_models.json")
