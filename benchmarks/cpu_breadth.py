"""CPU inference of HF model families beyond cpu_models.py's four, through the whole stack
(`compiler.compile(backend="inductor")`) vs eager and torch.compile: the question is whether a
model nobody tuned for runs slower under ours than under torch.compile (issue 18's breadth).

Each model is its family's architecture at a moderate size (4 layers, width 512, 128 tokens or
a 224x224 image, random weights from a config), timed as cpu_models.py times its rows
(interleaved medians, 2 threads), checked against eager.

    HF_HUB_OFFLINE=1 python benchmarks/cpu_breadth.py [llama mistral ...]
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

import cpu_models  # noqa: E402
from cpu_harness import THREADS, report  # noqa: E402

TOKENS = 128
# Widths shared by the text models: what each family's config calls them.
TEXT = dict(hidden_size=512, num_hidden_layers=4, num_attention_heads=8, intermediate_size=2048, vocab_size=32000)


def _text(model_type, batch=1, decoder=False, **config):
    def build():
        from transformers import AutoConfig, AutoModel

        model = AutoModel.from_config(AutoConfig.for_model(model_type, **config)).eval()
        ids = torch.randint(0, 32000, (batch, TOKENS))
        inputs = {"input_ids": ids}
        if decoder:
            inputs["decoder_input_ids"] = ids[:, : TOKENS // 4]
        return model, inputs

    return build


def _pixels(model_type, **config):
    def build():
        from transformers import AutoConfig, AutoModel

        model = AutoModel.from_config(AutoConfig.for_model(model_type, **config)).eval()
        return model, {"pixel_values": torch.randn(1, 3, 224, 224)}

    return build


def _wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    config = Wav2Vec2Config(hidden_size=512, num_hidden_layers=4, num_attention_heads=8, intermediate_size=2048)
    return Wav2Vec2Model(config).eval(), {"input_values": torch.randn(1, 16000)}


_GQA = dict(TEXT, num_key_value_heads=2, max_position_embeddings=512)
BREADTH = {
    "llama": ("Llama 4L-512 1x128", _text("llama", **_GQA)),
    "mistral": ("Mistral 4L-512 1x128", _text("mistral", **_GQA)),
    "qwen2": ("Qwen2 4L-512 1x128", _text("qwen2", **_GQA)),
    "gemma": ("Gemma 4L-512 1x128", _text("gemma", head_dim=64, **_GQA)),
    "phi3": ("Phi-3 4L-512 1x128", _text("phi3", **dict(_GQA, pad_token_id=0))),
    "gpt_neox": ("GPT-NeoX 4L-512 1x128", _text("gpt_neox", **TEXT)),
    "opt": ("OPT 4L-512 1x128", _text("opt", hidden_size=512, num_hidden_layers=4, num_attention_heads=8,
                                      ffn_dim=2048, word_embed_proj_dim=512, vocab_size=32000)),
    "bloom": ("BLOOM 4L-512 1x128", _text("bloom", hidden_size=512, n_layer=4, n_head=8, vocab_size=32000)),
    "roberta": ("RoBERTa 4L-512 2x128", _text("roberta", batch=2, **TEXT)),
    "distilbert": ("DistilBERT 4L-512 2x128", _text("distilbert", batch=2, dim=512, n_layers=4, n_heads=8,
                                                    hidden_dim=2048, vocab_size=32000)),
    "deberta_v2": ("DeBERTa-v2 4L-512 2x128", _text("deberta-v2", batch=2, **TEXT)),
    "electra": ("ELECTRA 4L-512 2x128", _text("electra", batch=2, embedding_size=512, **TEXT)),
    "albert": ("ALBERT 4L-512 2x128", _text("albert", batch=2, embedding_size=128, **TEXT)),
    "t5": ("T5 4L-512 1x128/32", _text("t5", decoder=True, d_model=512, d_ff=2048, num_layers=4, num_heads=8,
                                      vocab_size=32000)),
    "bart": ("BART 4L-512 1x128/32", _text("bart", decoder=True, d_model=512, encoder_layers=4, decoder_layers=4,
                                          encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                                          decoder_ffn_dim=2048, vocab_size=32000)),
    "wav2vec2": ("wav2vec2 4L-512 1s audio", _wav2vec2),
    "convnext": ("ConvNeXt-tiny-ish 1x224", _pixels("convnext", depths=[2, 2, 4, 2])),
    "swin": ("Swin-tiny-ish 1x224", _pixels("swin", depths=[2, 2, 4, 2])),
    "mobilevit": ("MobileViT-S 1x224", _pixels("mobilevit")),
    "segformer": ("SegFormer-b0 1x224", _pixels("segformer")),
}


def main():
    keys = sys.argv[1:] or list(BREADTH)
    cpu_models.MODELS.update(BREADTH)
    results = [cpu_models.run_model(k) for k in keys]
    filename = "cpu_breadth.json" if keys == list(BREADTH) else f"cpu_breadth_{'_'.join(keys)}.json"
    done = [r for r in results if "error" not in r]
    report(done, filename, failed=[r for r in results if "error" in r])
    slower = [r["workload"] for r in done if r["ratio_to_torch_compile"] < 0.95 or r["speedup_vs_eager"] < 1.0]
    print("slower than torch.compile (< 0.95x) or eager: " + (", ".join(slower) or "none"))


if __name__ == "__main__":
    print(f"{THREADS} threads")
    main()
