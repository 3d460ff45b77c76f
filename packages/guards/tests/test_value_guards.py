"""Guards on Python values: each passes on a matching value and fails on each single change."""

from __future__ import annotations

import enum
import pickle
import types

import pytest
import torch
from torch import nn

from guards import (
    AttrSource,
    ConstantMatch,
    DictKeysMatch,
    DictLookupsHold,
    GenericAttrSource,
    GuardError,
    GuardSet,
    HasAttr,
    HashSource,
    GlobalsSource,
    IdentityMatch,
    ItemSource,
    KeyAbsent,
    LengthMatch,
    ModuleGlobalsSource,
    LocalSource,
    NotNone,
    TypeMatch,
)

V = LocalSource("v")


def compiled(*guards):
    return GuardSet(guards).compile(parameters=["v"])


class Color(enum.Enum):
    RED = 1
    BLUE = 2


# (constant, values that must match, values that must not): equal-but-differently-typed
# values must not match, because capture specializes on the type too.
CONSTANTS = {
    "int": (3, [3], [4, 3.0, True, "3", None]),
    "bool": (True, [True], [False, 1, 1.0]),
    "float": (0.5, [0.5], [0.25, 1, "0.5"]),
    "nan": (float("nan"), [float("nan")], [0.0, "nan"]),
    "inf": (float("inf"), [float("inf")], [1e308, -float("inf")]),
    # Equal, yet `1 / v` and `f"{v}"` tell them apart.
    "zero": (0.0, [0.0], [-0.0, 0]),
    "negative zero": (-0.0, [-0.0], [0.0, 0]),
    "zero in a tuple": ((1, -0.0), [(1, -0.0)], [(1, 0.0)]),
    "str": ("relu", ["relu"], ["gelu", b"relu"]),
    "none": (None, [None], [0, False, ""]),
    "tuple": ((1, 2.0), [(1, 2.0)], [(1, 2), [1, 2.0], (1, 2.0, 3), (True, 2.0)]),
    "nested": ((1, ("a", None)), [(1, ("a", None))], [(1, ("a", 0)), (1, ["a", None])]),
    "dtype": (torch.float16, [torch.float16], [torch.bfloat16, "float16"]),
    "device": (torch.device("cpu"), [torch.device("cpu")], [torch.device("meta"), "cpu"]),
    "enum": (Color.RED, [Color.RED], [Color.BLUE, 1]),
    "size": (torch.Size([2, 3]), [torch.Size([2, 3])], [(2, 3), torch.Size([3, 2])]),
}


@pytest.mark.parametrize("constant, same, different", CONSTANTS.values(), ids=CONSTANTS.keys())
def test_constant_match(constant, same, different):
    guard = compiled(ConstantMatch(V, constant))
    # The object seen at capture passes on identity alone; an equal copy (a new object, which
    # equal literals in one module need not be) takes the element-wise path.
    for value in [constant, pickle.loads(pickle.dumps(constant)), *same]:
        assert guard(value), value
        assert guard.why(value) is None
    for value in different:
        assert not guard(value), value
        reason = guard.why(value)
        assert "L['v']" in reason and " failed: got " in reason, reason


def test_an_immutable_constant_is_one_statement_and_a_changed_one_is_explained_by_its_element():
    conv = nn.Conv2d(2, 2, 3, stride=(1, 2))
    stride = AttrSource(LocalSource("m"), "stride")
    guard = GuardSet([ConstantMatch(stride, conv.stride)]).compile(parameters=["m"])
    assert [line for line in guard.source.splitlines() if line.lstrip().startswith("if ")] == [
        "        if m_stride is not m_stride_seen and (typed_key(m_stride) != m_stride_key): return False"
    ]
    assert guard(conv)
    conv.stride = (1, 2)  # equal, another object
    assert guard(conv)
    conv.stride = (1, 3)
    assert not guard(conv)
    assert guard.why(conv) == "L['m'].stride[1] == 2 failed: got 3"
    conv.stride = (1, 2.0)
    assert guard.why(conv) == "type(L['m'].stride[1]) is int failed: got <class 'float'>"


def test_constant_match_refuses_mutable_objects():
    with pytest.raises(GuardError, match="IdentityMatch"):
        ConstantMatch(V, {"a": 1})


def test_constant_guards_with_equal_values_of_different_types_stay_distinct():
    assert len(GuardSet([ConstantMatch(V, 1), ConstantMatch(V, True), ConstantMatch(V, 1.0)])) == 3


@pytest.mark.parametrize(
    "kind, same, different",
    [(int, 5, [True, 5.0, "5"]), (list, [1], [(1,), None]), (type(None), None, [0])],
)
def test_type_match_is_exact(kind, same, different):
    guard = compiled(TypeMatch(V, kind))
    assert guard(same)
    for value in different:
        assert not guard(value)
        assert guard.why(value) == f"type(L['v']) is {kind.__qualname__} failed: got {type(value)!r}"


def test_identity_match_wants_the_same_object():
    obj = types.SimpleNamespace(a=1)
    guard = compiled(IdentityMatch(V, obj))
    assert guard(obj)
    twin = types.SimpleNamespace(a=1)
    assert not guard(twin)
    assert guard.why(twin).startswith("L['v'] is <SimpleNamespace at ")


def test_not_none():
    guard = compiled(NotNone(V))
    assert guard(0)
    assert not guard(None)
    assert guard.why(None) == "L['v'] is not None failed: got None"


@pytest.mark.parametrize("value, changed", [([1, 2], [1, 2, 3]), ((1,), ()), ({"a": 1}, {})])
def test_length_match(value, changed):
    guard = compiled(LengthMatch(V, len(value)))
    assert guard(type(value)(value))
    assert not guard(changed)
    assert guard.why(changed) == f"len(L['v']) == {len(value)} failed: got {len(changed)}"


def test_dict_keys_match_checks_order_and_keys():
    guard = compiled(DictKeysMatch(V, ("a", "b")))
    assert guard({"a": 0, "b": torch.randn(2)})
    assert not guard({"b": 0, "a": 1})
    assert not guard({"a": 0})
    assert not guard({"a": 0, "b": 1, "c": 2})
    assert guard.why({"b": 0, "a": 1}) == "list(L['v'].keys()) == ['a', 'b'] failed: got ['b', 'a']"


class Keyed:
    """Hashed by its field `h`: a dict finds it only while `h` is what it was stored under."""

    def __init__(self, h):
        self.h = h

    def __hash__(self):
        return self.h


def test_dict_lookups_hold_fails_once_a_key_hashes_otherwise_than_it_was_stored():
    key = Keyed(1)
    mapping = {key: "a", "b": 2}
    guard = compiled(DictLookupsHold(V, (hash(key), hash("b"))))
    assert guard(mapping)
    key.h = 2  # still iterated, no longer found
    assert not guard(mapping)
    mapping[key] = "c"  # stored again: a second entry
    assert not guard(mapping)
    key.h = 1  # hashes as at capture again: the lookup finds the first entry, never the second
    assert not guard(mapping)
    assert not guard({key: "a"})
    assert guard({key: "a", "b": 2})


def test_hash_source_reads_the_hash_now():
    key = Keyed(1)
    guard = compiled(ConstantMatch(HashSource(V), 1))
    assert guard(key)
    key.h = 2
    assert not guard(key)
    assert guard.why(key) == "hash(L['v']) == 1 failed: got 2"


class Hooked:
    """Its `__getattr__` answers every name the instance lacks, and counts."""

    def __init__(self):
        self.scale = 2
        self.served = 0

    def __getattr__(self, name):
        self.served += 1
        return 2


def test_generic_attr_source_reads_past_the_class_hooks():
    hooked = Hooked()
    guard = compiled(ConstantMatch(GenericAttrSource(V, "scale"), 2))
    assert guard(hooked)
    del hooked.scale  # `hooked.scale` would still be 2, from the hook
    assert not guard(hooked)
    assert hooked.served == 0


@pytest.mark.parametrize("present", [True, False])
def test_has_attr(present):
    guard = compiled(HasAttr(V, "scale", present))
    with_attr, without = types.SimpleNamespace(scale=2), types.SimpleNamespace()
    assert guard(with_attr if present else without)
    assert not guard(without if present else with_attr)


def test_key_absent_from_the_globals_and_from_builtins():
    """A name the program found in builtins (or nowhere) means something else once a global of
    that name exists: the guard reads the guarded function's globals dict itself."""
    namespace = {"__name__": "guarded"}
    exec("def fn(v):\n    return len(v)", namespace)
    guard = GuardSet([KeyAbsent(GlobalsSource(), "len"), KeyAbsent(ModuleGlobalsSource("builtins"), "nothing")]).compile(namespace["fn"])
    assert guard([1])
    namespace["len"] = lambda v: 0
    assert not guard([1])
    assert guard.why([1]) == "'len' not in G failed: got True"
    del namespace["len"]
    assert guard([1])


def test_keys_absent_from_one_dict_are_one_check_naming_the_key_found():
    """The KeyAbsent guards of one dict (the names a module's instance dict must lack) are one
    `if`, failing as the members do; the reason names the key that is there."""
    members = AttrSource(V, "__dict__")
    guard = compiled(KeyAbsent(members, "weight"), TypeMatch(V, types.SimpleNamespace), KeyAbsent(members, "bias"))
    assert "if 'weight' in v___dict or 'bias' in v___dict: return False" in guard.source
    obj = types.SimpleNamespace()
    assert guard(obj)
    obj.bias = 1
    assert not guard(obj)
    assert guard.why(obj) == "'bias' not in L['v'].__dict__ failed: got True"
    del obj.bias
    obj.weight = 1
    assert not guard(obj)


@pytest.mark.parametrize("training", [True, False])
def test_module_training_flag(training):
    module = nn.Linear(2, 2).train(training)
    guard = GuardSet([ConstantMatch(AttrSource(LocalSource("self"), "training"), training)]).compile(
        parameters=["self"]
    )
    assert guard(module)
    module.train(not training)
    assert not guard(module)
    assert guard.why(module) == f"L['self'].training is {training} failed: got {not training}"


def test_item_of_dict_with_string_key():
    guard = compiled(ConstantMatch(ItemSource(V, "mode"), "fast"))
    assert guard({"mode": "fast"})
    assert not guard({"mode": "slow"})
    assert not guard({})
    assert guard.why({}) == "type(L['v']['mode']) is str could not be checked: KeyError: 'mode'"


def test_defaults_are_the_guarded_functions_own():
    def fn(v, scale=2):
        return v * scale

    guard = GuardSet([ConstantMatch(LocalSource("scale"), 2)]).compile(fn)
    assert guard(1)
    assert guard(1, scale=2)
    assert not guard(1, 3)
    fn.__defaults__ = (3,)
    assert not guard(1)
    assert "fn.__defaults__ is the __defaults__ seen at capture failed" in guard.why(1)


def test_kwonly_defaults_mutated_in_place_are_seen():
    def fn(v, *, scale=2):
        return v * scale

    guard = GuardSet([ConstantMatch(LocalSource("scale"), 2)]).compile(fn)
    assert guard(1)
    fn.__kwdefaults__["scale"] = 5
    assert not guard(1)
    assert guard.why(1) == "L['scale'] == 2 failed: got 5"


def test_dict_keys_guards_are_told_apart_without_running_the_keys_own_hash_or_eq():
    """Building a guard set hashes and compares its guards: a user key's `__hash__` and `__eq__`
    (user code, maybe counting its calls) must not run there, only where the program runs them."""
    calls = []

    class Key:
        def __hash__(self):
            calls.append("hash")
            return 0

        def __eq__(self, other):
            calls.append("eq")
            return True

    first, second = Key(), Key()
    same = DictKeysMatch(V, (first, "a"))
    assert same == DictKeysMatch(V, (first, "a"))
    assert same != DictKeysMatch(V, (second, "a"))  # equal by its __eq__, another object
    assert DictKeysMatch(V, (1,)) != DictKeysMatch(V, (True,))
    assert len(GuardSet([same, DictKeysMatch(V, (first, "a")), DictKeysMatch(V, (second, "a"))])) == 2
    assert calls == []
    assert compiled(same)({first: 1, "a": 2}) and not compiled(same)({first: 1})
