"""Guard soundness for a model changed through the handle the user holds after compiling it:
`model = compiler.compile(model)` and then `model.scale = 3`, `model.training = False`,
`model.eval()`, `model.register_buffer(...)`, `model.register_forward_hook(...)`. Each scenario runs once on the module itself
(eager) and once on the compiled module, with the same changes made through that handle; every
call's result, the model's state_dict and training mode must agree (see guard_soundness_harness
for the changes made to the module directly)."""

from __future__ import annotations

import zlib

import pytest
import torch
from torch import nn

from guard_soundness_harness import assert_same, compile_with, torch_state_restored


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)
        self.scale = 2.0

    def forward(self, x):
        y = self.drop(self.lin(x)) * self.scale
        if hasattr(self, "extra"):
            y = y + self.extra
        return y


def run(mutations, compile_fn):
    with torch_state_restored():
        torch.manual_seed(0)
        model = Scaled()
        handle = model if compile_fn is None else compile_fn(model)
        record = []
        for step, mutate in enumerate((None, *mutations)):
            if mutate is not None:
                mutate(handle)
            for repeat in range(2):
                torch.manual_seed(zlib.crc32(f"{step}/{repeat}".encode()))
                record.append((f"call {2 * step + repeat}", handle(torch.randn(3, 4)), model.state_dict(), model.training))
        return record


SCENARIOS = {
    "attribute_set_and_deleted": (lambda h: setattr(h, "scale", 5.0), lambda h: setattr(h, "extra", 1.5), lambda h: delattr(h, "extra")),
    "submodule_and_parameter_set": (lambda h: setattr(h, "drop", nn.Identity()), lambda h: setattr(h.lin, "weight", nn.Parameter(torch.eye(4)))),
    "training_flag_set": (lambda h: setattr(h, "training", False), lambda h: h.drop.eval(), lambda h: h.train()),
    "eval_then_flag": (lambda h: h.eval(), lambda h: setattr(h, "training", True), lambda h: setattr(h.drop, "training", True)),
    "members_registered": (lambda h: h.register_buffer("extra", torch.ones(4)), lambda h: h.extra.fill_(3),
                           lambda h: (delattr(h, "extra"), h.register_parameter("extra", nn.Parameter(torch.full((4,), 2.0)))),
                           lambda h: h.add_module("drop", nn.Identity()), lambda h: h.register_module("drop", nn.Tanh())),
    "hook_then_attribute": (lambda h: h.register_forward_hook(lambda m, args, out: out + 100), lambda h: setattr(h, "scale", -1.0)),
}


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_changes_made_through_the_compiled_module_reach_the_model(name, backend):
    expected = run(SCENARIOS[name], None)
    actual = run(SCENARIOS[name], lambda model: compile_with(model, "ours", backend))
    for (where, *got), (_, *want) in zip(actual, expected):
        assert_same(got, want, where)


def test_the_compiled_module_reads_the_models_mode_and_attributes():
    import compiler

    model = Scaled()
    compiled = compiler.compile(model, backend="eager")
    model.eval()
    model.scale = 3.0
    assert (compiled.training, compiled.scale) == (False, 3.0)
    compiled.train()
    assert model.training and model.drop.training
