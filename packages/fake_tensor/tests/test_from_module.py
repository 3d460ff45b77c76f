"""mode.from_module: a copy of the module on fakes, computing what the real module computes."""

import pytest
import torch
from torch import nn

from fake_tensor import FakeTensorMode, is_fake


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 8)
        self.head = nn.Linear(8, 11, bias=False)
        self.head.weight = self.embed.weight
        self.scale = torch.tensor(0.5)  # a plain tensor attribute

    def forward(self, ids):
        return self.head(self.embed(ids) * self.scale)


MODULES = {
    "linear": (lambda: nn.Linear(6, 4), lambda: torch.randn(5, 6)),
    "conv_bn_relu": (
        lambda: nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()),
        lambda: torch.randn(2, 3, 10, 10),
    ),
    "transformer_layer": (
        lambda: nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True),
        lambda: torch.randn(2, 7, 16),
    ),
    "lstm": (lambda: nn.LSTM(5, 7, num_layers=2, batch_first=True), lambda: torch.randn(3, 4, 5)),
    "tied_lm": (TiedLM, lambda: torch.randint(0, 11, (2, 9))),
}


def outputs_metadata(out):
    return [(t.shape, t.dtype, t.stride()) for t in torch.utils._pytree.tree_leaves(out)]


@pytest.mark.parametrize("make_module,make_input", MODULES.values(), ids=MODULES.keys())
def test_fake_module_computes_outputs_with_eager_metadata(make_module, make_input):
    module, x = make_module(), make_input()
    eager = module(x)
    mode = FakeTensorMode()
    fake_module = mode.from_module(module)
    with mode:
        fake_out = fake_module(mode.from_real(x))
    assert all(is_fake(t) for t in torch.utils._pytree.tree_leaves(fake_out))
    assert outputs_metadata(fake_out) == outputs_metadata(eager)


@pytest.mark.parametrize("make_module,make_input", MODULES.values(), ids=MODULES.keys())
def test_fake_module_has_fake_parameters_and_buffers_with_real_metadata(make_module, make_input):
    module = make_module()
    fake_module = FakeTensorMode().from_module(module)
    real_state = dict(module.named_parameters()) | dict(module.named_buffers())
    fake_state = dict(fake_module.named_parameters()) | dict(fake_module.named_buffers())
    assert fake_state.keys() == real_state.keys()
    for name, real in real_state.items():
        fake = fake_state[name]
        assert is_fake(fake)
        assert isinstance(fake, nn.Parameter) == isinstance(real, nn.Parameter)
        assert (fake.shape, fake.stride(), fake.dtype, fake.requires_grad) == (
            real.shape, real.stride(), real.dtype, real.requires_grad
        )


def test_tied_weights_stay_tied_and_tensor_attributes_are_faked():
    fake_module = FakeTensorMode().from_module(TiedLM())
    assert fake_module.head.weight is fake_module.embed.weight
    assert is_fake(fake_module.scale)


def test_original_module_is_untouched_and_other_attributes_are_copied():
    module = nn.Sequential(nn.Linear(6, 4), nn.Dropout(0.25)).eval()
    params = list(module.parameters())
    fake_module = FakeTensorMode().from_module(module)
    assert list(module.parameters()) == params and not any(is_fake(p) for p in module.parameters())
    assert fake_module is not module and fake_module[0] is not module[0]
    assert (fake_module.training, fake_module[1].p, fake_module[0].in_features) == (False, 0.25, 6)


def test_modules_built_under_the_mode_have_fake_parameters():
    with FakeTensorMode():
        module = nn.Linear(1 << 16, 1 << 16)  # 16 GiB of weights if real
    assert is_fake(module.weight) and isinstance(module.weight, nn.Parameter)
    assert module.weight.untyped_storage().nbytes() == 4 << 32


@pytest.mark.parametrize("make_module,make_input", MODULES.values(), ids=MODULES.keys())
def test_module_built_on_meta_computes_what_the_real_module_computes(make_module, make_input):
    module, x = make_module(), make_input()
    eager = module(x)
    with torch.device("meta"):
        meta_module = make_module()
    mode = FakeTensorMode()
    fake_module = mode.from_module(meta_module)
    with mode:
        fake_out = fake_module(mode.from_real(x))
    assert all(is_fake(t) and t.device == torch.device("cpu") for t in torch.utils._pytree.tree_leaves(fake_out))
    assert outputs_metadata(fake_out) == outputs_metadata(eager)


def test_module_built_on_meta_gives_gradients_with_the_real_parameters_metadata():
    module = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.Linear(8, 2))
    x = torch.randn(5, 6)
    module(x).sum().backward()
    with torch.device("meta"):
        meta_module = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.Linear(8, 2))
    mode = FakeTensorMode()
    fake_module = mode.from_module(meta_module)
    with mode:
        fake_module(mode.from_real(x)).sum().backward()
    fake_grads = {name: p.grad for name, p in fake_module.named_parameters()}
    for name, p in module.named_parameters():
        grad = fake_grads[name]
        assert (grad.shape, grad.stride(), grad.dtype, grad.device) == (p.grad.shape, p.grad.stride(), p.grad.dtype, p.grad.device)


def test_meta_tensors_stand_for_the_device_asked_for_and_stay_tied():
    with torch.device("meta"):
        meta_module = TiedLM()
    fake_module = FakeTensorMode().from_module(meta_module, device="cuda")
    assert fake_module.head.weight is fake_module.embed.weight
    assert {t.device for t in [*fake_module.parameters(), fake_module.scale]} == {torch.device("cuda", 0)}
