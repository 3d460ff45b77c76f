"""What a trace reads from modules other than the compiled function's own: torch's functions
(patched by users and by `mock.patch`), and the globals of a submodule's `forward` defined in
another file, are guarded like the function's own globals; reads that give a new object each
time (a C classmethod from its class) are guarded so that they still pass on the next call."""

from __future__ import annotations

import sys
import types
from itertools import chain
from unittest import mock

import torch
import torch.nn.functional as F

from helpers import captures, check, compile_eager, run_and_compare


def gelu_twice(x):
    return F.gelu(x) * 2


def test_a_patched_torch_function_is_followed():
    compiled = compile_eager(gelu_twice)
    run_and_compare(compiled, gelu_twice, (torch.randn(4),))
    with mock.patch.object(F, "gelu", lambda t: t * 100):
        run_and_compare(compiled, gelu_twice, (torch.randn(4),))
    run_and_compare(compiled, gelu_twice, (torch.randn(4),))
    assert captures(compiled) == 2


_LAYERS = '''
import torch
SCALE = 2.0
def act(x):
    return torch.relu(x)
class Block(torch.nn.Module):
    def forward(self, x):
        return act(x) * SCALE
'''


def _layers_module(monkeypatch) -> types.ModuleType:
    layers = types.ModuleType("capture_test_layers")
    exec(compile(_LAYERS, "capture_test_layers.py", "exec"), vars(layers))
    monkeypatch.setitem(sys.modules, layers.__name__, layers)
    return layers


def test_globals_of_a_submodule_from_another_module_are_guarded(monkeypatch):
    layers = _layers_module(monkeypatch)
    block = layers.Block()

    def outer(x):
        return block(x) + 1

    compiled = compile_eager(outer)
    run_and_compare(compiled, outer, (torch.randn(4),))
    layers.SCALE = 5.0
    run_and_compare(compiled, outer, (torch.randn(4),))
    layers.act = lambda t: t * 10
    run_and_compare(compiled, outer, (torch.randn(4),))
    assert captures(compiled) == 3


def c_classmethods(x, y):
    flat = list(chain.from_iterable([[x], [y]]))
    return flat[0] * dict.fromkeys("ab", 2)["a"] + flat[1] * int.from_bytes(b"\x03", "little")


def test_a_c_classmethod_read_from_its_class_is_captured_once():
    check(c_classmethods, lambda: (torch.randn(3), torch.randn(3)), calls=3)


def relu_plus_one(x):
    return x.relu() + 1


def test_a_tensor_method_patched_after_compiling_is_captured_again():
    """With the eager backend the graph's `x.relu()` looked the method up at run time, but a
    backend that compiles the graph (aot_eager, inductor) kept the old one: the method each
    graph calls is guarded."""
    compiled = compile_eager(relu_plus_one)
    run_and_compare(compiled, relu_plus_one, (torch.randn(4),))
    with mock.patch.object(torch.Tensor, "relu", lambda self: self * 100):
        run_and_compare(compiled, relu_plus_one, (torch.randn(4),))
    run_and_compare(compiled, relu_plus_one, (torch.randn(4),))
    assert captures(compiled) == 2
