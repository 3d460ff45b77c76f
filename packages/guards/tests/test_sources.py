"""Sources print as Python that names the value, and generated reads find the same object."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from guards import (
    AttrSource,
    BufferSource,
    CachedResultSource,
    ClosureSource,
    ConstantMatch,
    DictItemSource,
    GlobalSource,
    GlobalsSource,
    GuardSet,
    IdentityMatch,
    ItemSource,
    LocalSource,
    ModuleGlobalsSource,
    ParameterSource,
    ShapeSource,
    SourceError,
    StorageOffsetSource,
    StrideSource,
    SubmoduleSource,
    TypeSource,
    default_value_source,
    dict_key_source,
    tensor_property_source,
)

SELF = LocalSource("self")


@pytest.mark.parametrize(
    "source, text",
    [
        (LocalSource("x"), "L['x']"),
        (GlobalSource("W"), "G['W']"),
        (ClosureSource("scale"), "C['scale']"),
        (ParameterSource(SubmoduleSource(SubmoduleSource(SELF, "layers"), "0"), "weight"), "L['self'].layers[0].weight"),
        (BufferSource(SELF, "running_mean"), "L['self'].running_mean"),
        (AttrSource(SELF, "training"), "L['self'].training"),
        (AttrSource(SELF, "not an identifier"), "getattr(L['self'], 'not an identifier')"),
        (ItemSource(LocalSource("kwargs"), "mask"), "L['kwargs']['mask']"),
        (ItemSource(ItemSource(LocalSource("args"), 0), (1, "a")), "L['args'][0][(1, 'a')]"),
        (TypeSource(LocalSource("x")), "type(L['x'])"),
        (tensor_property_source(LocalSource("x"), "size", 1), "L['x'].size()[1]"),
        (tensor_property_source(LocalSource("x"), "stride", 0), "L['x'].stride()[0]"),
        (tensor_property_source(LocalSource("x"), "storage_offset"), "L['x'].storage_offset()"),
        (default_value_source(GlobalSource("f"), 0), "G['f'].__defaults__[0]"),
        (default_value_source(GlobalSource("f"), "k"), "G['f'].__kwdefaults__['k']"),
        (dict_key_source(AttrSource(SELF, "state"), 2), "list(L['self'].state.keys())[2]"),
        (GlobalsSource(), "G"),
        (ModuleGlobalsSource("builtins"), "M['builtins']"),
        (CachedResultSource(GlobalSource("cached"), LocalSource("cache"), LocalSource("key"), "3, 'a', typed=True", False), "G['cached'](3, 'a', typed=True)"),
        (
            ItemSource(DictItemSource(LocalSource("d"), dict_key_source(LocalSource("d"), 0)), "step"),
            "L['d'][list(L['d'].keys())[0]]['step']",
        ),
    ],
)
def test_source_prints_as_python(source, text):
    assert str(source) == text


def test_sources_are_hashable_values():
    a = ParameterSource(SubmoduleSource(SELF, "fc"), "weight")
    b = ParameterSource(SubmoduleSource(LocalSource("self"), "fc"), "weight")
    assert a == b and hash(a) == hash(b)
    assert len({a, b, BufferSource(SubmoduleSource(SELF, "fc"), "weight")}) == 2


def test_item_key_without_literal_spelling_is_refused():
    with pytest.raises(SourceError, match="no Python literal spelling"):
        ItemSource(LocalSource("d"), object())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 2)])
        self.norm = nn.BatchNorm1d(2)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(2, 1))


def module_sources():
    layers = SubmoduleSource(SELF, "layers")
    head = SubmoduleSource(SELF, "head")
    return [
        layers,
        SubmoduleSource(layers, "1"),
        ParameterSource(SubmoduleSource(layers, "0"), "weight"),
        ParameterSource(SubmoduleSource(layers, "1"), "bias"),
        BufferSource(SubmoduleSource(SELF, "norm"), "running_var"),
        ParameterSource(SubmoduleSource(head, "1"), "weight"),
        ShapeSource(ParameterSource(SubmoduleSource(head, "1"), "weight")),
        StrideSource(ParameterSource(SubmoduleSource(layers, "0"), "weight")),
        StorageOffsetSource(ParameterSource(SubmoduleSource(layers, "0"), "weight")),
        TypeSource(SubmoduleSource(SELF, "norm")),
    ]


@pytest.mark.parametrize("source", module_sources(), ids=str)
def test_generated_read_finds_the_object_the_printed_expression_names(source):
    net = Net()
    named = eval(str(source), {"L": {"self": net}})
    # Sizes, strides and offsets are fresh objects on every read: compare those by value.
    by_value = isinstance(named, (torch.Size, tuple, int))
    guard = GuardSet([(ConstantMatch if by_value else IdentityMatch)(source, named)]).compile(parameters=["self"])
    assert guard(net)


def test_module_member_sources_see_reassigned_parameters():
    net = Net()
    source = ParameterSource(SubmoduleSource(SubmoduleSource(SELF, "layers"), "0"), "weight")
    guard = GuardSet([IdentityMatch(source, net.layers[0].weight)]).compile(parameters=["self"])
    assert guard(net)
    net.layers[0].weight = nn.Parameter(torch.randn(3, 3))
    assert not guard(net)
    assert guard.why(net).startswith("L['self'].layers[0].weight is <Parameter at ")


def test_dict_keyed_by_tensors_is_read_through_its_keys():
    # An optimizer's state: keys without a literal spelling are named by position.
    keys = [torch.randn(2), torch.randn(3)]
    state = {k: {"step": torch.tensor(1.0)} for k in keys}
    d = LocalSource("d")
    guards = [IdentityMatch(dict_key_source(d, i), k) for i, k in enumerate(keys)]
    guards += [IdentityMatch(ItemSource(DictItemSource(d, dict_key_source(d, i)), "step"), state[k]["step"]) for i, k in enumerate(keys)]
    guard = GuardSet(guards).compile(parameters=["d"])
    assert guard(state)
    # `list(d.keys())` is read once for all the keys.
    assert guard.source.count("list(d.keys())") == 1
    assert not guard(dict(reversed(list(state.items()))))
    assert guard.why(dict(reversed(list(state.items())))).startswith("list(L['d'].keys())[0] is ")
