"""Grouped tensor checks: a module's parameters and buffers checked by one TensorGroup pass
and fail exactly where their TensorMatch guards one by one (and the reference interpreter)
do, including every way a parameter's metadata can change while it stays the same object."""

from __future__ import annotations

import contextlib
import functools
import re

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_guards import FrameValues, all_hold, holds
from torch import nn

from guards import BufferSource, GuardSet, LocalSource, ParameterSource, SubmoduleSource, TensorMatch, native
from guards.kinds import tensor_groups

SELF = LocalSource("self")


@pytest.fixture(autouse=True, params=["python", "compiled"])
def group_check(request, monkeypatch):
    """Every test runs with the group's Python check and with the compiled helper."""
    if request.param == "python":
        monkeypatch.setenv("PTC_GUARDS_NATIVE", "0")
        monkeypatch.setitem(native._state, "module", None)
    elif native.wait() is None:
        pytest.skip(f"the compiled helper is unavailable here: {native.failure()}")
    return request.param


def checked_natively(guard) -> bool:
    return all(isinstance(c.check, functools.partial) for c in guard.__globals__.values() if isinstance(c, native.GroupCheck))


class Net(nn.Module):
    """Four layers with parameters (one square weight) and a BatchNorm with buffers."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 4), nn.Linear(4, 4), nn.Linear(4, 2), nn.BatchNorm1d(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def tensor_guards(net: Net) -> GuardSet:
    guards = GuardSet()
    for i, layer in enumerate(net.layers):
        layer_source = SubmoduleSource(SubmoduleSource(SELF, "layers"), str(i))
        for name, p in layer.named_parameters(recurse=False):
            guards.add(TensorMatch.of(ParameterSource(layer_source, name), p))
        for name, b in layer.named_buffers(recurse=False):
            guards.add(TensorMatch.of(BufferSource(layer_source, name), b))
    return guards


@contextlib.contextmanager
def min_group(size: int):
    """Group tensor checks from `size` tensors on (these tests use small sets)."""
    saved = tensor_groups.MIN_GROUP
    tensor_groups.MIN_GROUP = size
    try:
        yield
    finally:
        tensor_groups.MIN_GROUP = saved


def both_ways(guards: GuardSet, fn=None, **frame):
    """The guard function with grouped tensor checks, and with every tensor checked alone."""
    with min_group(2):
        grouped = guards.compile(fn, **frame)
    with min_group(10**9):
        alone = guards.compile(fn, **frame)
    return grouped, alone


def compiled(net: Net):
    guards = tensor_guards(net)
    return (guards, *both_ways(guards, Net.forward))


def test_module_tensors_are_checked_as_one_group(group_check):
    net = Net()
    _, grouped, alone = compiled(net)
    assert grouped.source.count("tensor_group.check(") == 1 and ".check(" not in alone.source
    assert grouped.source.count("if ") < 10 < alone.source.count("if ")
    assert grouped(net, None) and alone(net, None)
    assert checked_natively(grouped) == (group_check == "compiled")


def test_group_passes_on_another_module_with_the_same_metadata():
    guards, grouped, alone = compiled(Net())
    other = Net()
    assert grouped(other, None) and alone(other, None)
    assert grouped.why(other, None) is None


def _no_grad(change):
    def run(net):
        with torch.no_grad():
            change(net)

    return run


def _inference_data(net):
    with torch.inference_mode():
        data = torch.randn(4, 4)
    net.layers[1].weight.data = data


def _swap(net):
    torch.utils.swap_tensors(net.layers[1].weight, nn.Parameter(torch.randn(2, 8)))


def _retype(net):
    net.layers[1].weight.__class__ = torch.Tensor


# Each change leaves the module and its parameter/buffer objects in place (except where it
# replaces one), and changes what a compiled graph assumed; `why` must name it.
CHANGES = {
    "requires_grad_": (lambda net: net.layers[0].bias.requires_grad_(False), "L['self'].layers[0].bias.requires_grad == True failed: got False"),
    ".data = other dtype": (lambda net: setattr(net.layers[2].weight, "data", net.layers[2].weight.data.double()), "L['self'].layers[2].weight.dtype == torch.float32 failed: got torch.float64"),
    "module.half()": (lambda net: net.layers[2].half(), "L['self'].layers[2].weight.dtype == torch.float32 failed: got torch.float16"),
    ".data = view, other shape": (lambda net: setattr(net.layers[0].weight, "data", net.layers[0].weight.data.view(3, 4)), "L['self'].layers[0].weight.size()[0] == 4 failed: got 3"),
    ".data = transpose of a square weight": (lambda net: setattr(net.layers[1].weight, "data", net.layers[1].weight.data.t()), "L['self'].layers[1].weight.stride()[0] == 4 failed: got 1"),
    ".data = slice": (lambda net: setattr(net.layers[1].bias, "data", net.layers[1].bias.data[:2]), "L['self'].layers[1].bias.size()[0] == 4 failed: got 2"),
    ".data = neg view": (lambda net: setattr(net.layers[1].weight, "data", torch._neg_view(net.layers[1].weight.data)), "L['self'].layers[1].weight.is_neg() == False failed: got True"),
    ".data = inference tensor": (_inference_data, "L['self'].layers[1].weight.is_inference() == False failed: got True"),
    "t_ in place": (_no_grad(lambda net: net.layers[0].weight.t_()), "L['self'].layers[0].weight.size()[0] == 4 failed: got 3"),
    "unsqueeze_ in place": (_no_grad(lambda net: net.layers[0].bias.unsqueeze_(0)), "L['self'].layers[0].bias.dim() == 1 failed: got 2"),
    "as_strided_ in place": (_no_grad(lambda net: net.layers[1].weight.as_strided_((4, 4), (1, 4))), "L['self'].layers[1].weight.stride()[0] == 4 failed: got 1"),
    "set_ in place": (_no_grad(lambda net: net.layers[1].bias.set_(torch.randn(5))), "L['self'].layers[1].bias.size()[0] == 4 failed: got 5"),
    "buffer resize_": (lambda net: net.layers[3].running_mean.resize_(3), "L['self'].layers[3].running_mean.size()[0] == 2 failed: got 3"),
    "swap_tensors": (_swap, "L['self'].layers[1].weight.size()[0] == 4 failed: got 2"),
    "__class__ assignment": (_retype, "type(L['self'].layers[1].weight) is torch.nn.parameter.Parameter failed: got <class 'torch.Tensor'>"),
    "parameter replaced": (lambda net: setattr(net.layers[2], "bias", nn.Parameter(torch.randn(3))), "L['self'].layers[2].bias.size()[0] == 2 failed: got 3"),
    "parameter deleted": (lambda net: delattr(net.layers[2], "bias"), "type(L['self'].layers[2].bias) is torch.nn.parameter.Parameter could not be checked: KeyError: 'bias'"),
}


@pytest.mark.parametrize("change, sentence", CHANGES.values(), ids=CHANGES.keys())
def test_each_change_of_a_parameter_fails_the_group(change, sentence):
    net = Net()
    guards, grouped, alone = compiled(net)
    change(net)
    assert not all_hold(guards, FrameValues({"self": net, "x": None}))
    assert grouped(net, None) is False
    assert alone(net, None) is False
    assert grouped.why(net, None) == sentence == alone.why(net, None)


def test_tensors_on_another_device_or_with_flags_get_their_own_checks():
    tensors = {f"t{i}": torch.randn(3) for i in range(4)}
    tensors.update(m0=torch.empty(3, device="meta"), conj=torch.randn(2, dtype=torch.complex64).conj(), dyn=torch.randn(5, 2))
    guards = GuardSet([TensorMatch.of(LocalSource(name), t) for name, t in tensors.items() if name != "dyn"])
    guards.add(TensorMatch.of(LocalSource("dyn"), tensors["dyn"], sizes=[None, 2]))
    guard, _ = both_ways(guards, parameters=list(tensors))
    assert guard.source.count(".check(") == 1
    assert guard(**tensors)
    assert guard.why(**{**tensors, "m0": torch.empty(3)}) == "L['m0'].device == 'meta' failed: got device(type='cpu')"
    assert guard.why(**{**tensors, "conj": torch.randn(2, dtype=torch.complex64)}) == "L['conj'].is_conj() == True failed: got False"
    assert guard.why(**{**tensors, "t2": torch.randn(3, 1)}) == "L['t2'].dim() == 1 failed: got 2"


class OverridingTensor(torch.Tensor):
    def is_contiguous(self, memory_format=torch.contiguous_format):
        return False


def test_strides_is_contiguous_cannot_test_are_compared_in_the_group():
    # A 1x1 convolution's weight (size-1 dims: any stride there passes is_contiguous) and a
    # transposed weight join the group; their strides are compared whole.
    tensors = {f"t{i}": torch.randn(3, 2) for i in range(3)}
    tensors.update(pointwise=torch.randn(8, 4, 1, 1), depthwise=torch.randn(4, 1, 3, 3), transposed=torch.randn(5, 3).t())
    guard, _ = both_ways(GuardSet([TensorMatch.of(LocalSource(name), t) for name, t in tensors.items()]), parameters=list(tensors))
    assert guard.source.count("if ") == 1
    assert guard(**tensors)
    restrided = torch.randn(8, 4, 1, 1).as_strided((8, 4, 1, 1), (4, 1, 1, 4))  # contiguous to is_contiguous()
    assert restrided.is_contiguous()
    assert guard.why(**{**tensors, "pointwise": restrided}) == "L['pointwise'].stride()[3] == 1 failed: got 4"
    assert guard.why(**{**tensors, "transposed": torch.randn(3, 5)}) == "L['transposed'].stride()[0] == 1 failed: got 5"


def test_tensor_subclass_overriding_a_checked_method_is_checked_alone():
    tensors = {f"t{i}": torch.randn(3) for i in range(4)}
    tensors["sub"] = torch.randn(3).as_subclass(OverridingTensor)
    guard, _ = both_ways(GuardSet([TensorMatch.of(LocalSource(name), t) for name, t in tensors.items()]), parameters=list(tensors))
    assert guard.source.count(".check(") == 1
    assert guard(**tensors)
    strided = torch.randn(3, 2)[:, 0].as_subclass(OverridingTensor)
    assert guard.why(**{**tensors, "sub": strided}) == "L['sub'].stride()[0] == 1 failed: got 2"


@st.composite
def groupable_tensors(draw):
    # Size-1 dims and transposed layouts: strides that is_contiguous() does not test exactly.
    shape = draw(st.lists(st.integers(1, 4), max_size=3))
    t = torch.zeros(shape, dtype=draw(st.sampled_from([torch.float32, torch.float64, torch.int64, torch.bool])))
    if t.dim() >= 2 and draw(st.booleans()):
        t = t.transpose(0, 1)
    if t.is_floating_point() and draw(st.booleans()):
        return nn.Parameter(t, requires_grad=draw(st.booleans()))
    return t


def _altered(t: torch.Tensor, draw) -> object:
    change = draw(st.sampled_from(["same", "fresh", "dtype", "shape", "transpose", "requires_grad", "kind", "not a tensor"]))
    fresh = torch.zeros_like(t)
    if change == "same":
        return t
    if change == "fresh":
        return nn.Parameter(fresh, t.requires_grad) if type(t) is nn.Parameter else fresh
    if change == "dtype":
        return fresh.to(torch.float16 if t.dtype is not torch.float16 else torch.float32)
    if change == "shape":
        return torch.zeros(*t.shape, 2, dtype=t.dtype)
    if change == "transpose":
        return fresh.t() if t.dim() == 2 else fresh.unsqueeze(0)
    if change == "requires_grad":
        return fresh.requires_grad_(not t.requires_grad) if t.is_floating_point() else fresh
    if change == "kind":
        return nn.Parameter(fresh, False) if type(t) is not nn.Parameter and t.is_floating_point() else fresh.detach()
    return t.tolist()


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_grouped_checks_agree_with_one_by_one_checks_and_the_reference(data):
    draw = data.draw
    tensors = {f"t{i}": t for i, t in enumerate(draw(st.lists(groupable_tensors(), min_size=4, max_size=8)))}
    guards = GuardSet(TensorMatch.of(LocalSource(name), t) for name, t in tensors.items())
    grouped, alone = both_ways(guards, parameters=list(tensors))
    assert grouped(**tensors) and grouped.why(**tensors) is None

    other = {name: _altered(t, draw) for name, t in tensors.items()}
    expected = all_hold(guards, FrameValues(other))
    assert grouped(**other) == alone(**other) == expected
    if not expected:
        # Groups change which failing tensor is checked first, not whether one is named.
        named = re.search(r"L\['(t\d+)'\]", grouped.why(**other)).group(1)
        assert not holds(TensorMatch.of(LocalSource(named), tensors[named]), FrameValues(other))
