"""The GPT-2 demo: what it reports on fakes equals what the same code measures in eager."""

import os
import subprocess
import sys

import pytest
import torch

from fake_tensor import FakeTensorMode, is_fake
from fake_tensor.demo import run_forward

transformers = pytest.importorskip("transformers")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def tiny_gpt2_config():
    return transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=4, n_positions=64, vocab_size=97, bos_token_id=0, eos_token_id=0
    )


@pytest.mark.slow
def test_gpt2_report_on_fakes_matches_eager():
    config = tiny_gpt2_config()
    eager_model = transformers.GPT2LMHeadModel(config).eval()
    input_ids = torch.randint(0, config.vocab_size, (3, 40))
    eager = run_forward(eager_model, input_ids)

    mode = FakeTensorMode()
    with mode:
        fake_model = transformers.GPT2LMHeadModel(config).eval()
        fake = run_forward(fake_model, mode.from_real(input_ids))
    assert all(is_fake(p) for p in fake_model.parameters())

    assert fake.output_shapes == eager.output_shapes
    assert (fake.parameter_count, fake.parameter_bytes) == (eager.parameter_count, eager.parameter_bytes)
    assert fake.activation_bytes == eager.activation_bytes


@pytest.mark.slow
def test_demo_command_runs_gpt2_on_fakes():
    result = subprocess.run(
        [sys.executable, "-m", "fake_tensor.demo"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert "lm_head              (8, 1024, 50257)" in result.stdout
    assert "124,439,808" in result.stdout
