"""Guard soundness for objects a function reads: instance and class attributes, properties,
__slots__, descriptors, __getattr__ fallbacks, dataclasses, NamedTuples, attributes added or
deleted, `__class__` reassigned, and arguments whose type or contents change between calls.
See guard_soundness_harness."""

from __future__ import annotations

import abc
import dataclasses
import enum
import functools
import types
from typing import NamedTuple

import pytest
import torch

from guard_soundness_harness import backends_of, case, check_case


class Plain:
    scale = 2  # a class attribute; instances may shadow it

    def __init__(self):
        self.shift = 1


class Other(Plain):
    scale = 5

    def describe(self):
        return "other"


class Made:
    """Instances are made inside the compiled function: only their class is read from outside."""

    scale = 2

    def __init__(self):
        self.shift = 1

    def get(self):
        return 1

    @property
    def prop(self):
        return 3

    @classmethod
    def make(cls):
        return cls()

    @staticmethod
    def helper():
        return 4


class MadeChild(Made):
    value = 0

    def get(self):
        return super().get() + 10


class Number:
    """Special methods written in Python, patched on the class between calls."""

    def __init__(self, value=2):
        self.value = value

    def __add__(self, other):
        return other + self.value

    def __neg__(self):
        return Number(-self.value)

    def __len__(self):
        return 2

    def __bool__(self):
        return True

    def __iter__(self):
        return iter((1, 2))

    def __contains__(self, item):
        return item == 1

    def __getitem__(self, index):
        return index * 3

    def __call__(self, x):
        return x * self.value


class Defaulting(dict):
    def __missing__(self, key):
        return 1


class Hooked:
    """Attribute hooks and repr written in Python."""

    def __getattr__(self, name):
        return 2

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * 10)

    def __repr__(self):
        return "hooked"


def uses_hooks(made_inside):
    def make(state):
        def fn(x):
            hooked = Hooked() if made_inside else state.obj
            hooked.value = 1
            table = Defaulting(a=1)
            return x * hooked.missing + hooked.value + table["b"], repr(hooked)

        return fn

    return make


HOOK_PATCHES = (
    lambda s: setattr(Hooked, "__getattr__", lambda self, name: 3),
    lambda s: setattr(Hooked, "__setattr__", lambda self, name, value: object.__setattr__(self, name, -value)),
    lambda s: setattr(Hooked, "__repr__", lambda self: "patched"),
    lambda s: setattr(Defaulting, "__missing__", lambda self, key: 5),
)
HOOK_DEFAULTS = {(cls, name): cls.__dict__[name] for cls, name in
                 [(Hooked, "__getattr__"), (Hooked, "__setattr__"), (Hooked, "__repr__"), (Defaulting, "__missing__")]}


class Bare:
    """No __bool__ nor __len__ (true), until a mutation adds one."""


def reads_truth(state):
    def fn(x):
        return x + (1 if state.obj else 2) + (10 if Bare() else 20)

    return fn


def _restore_bare():
    for name in ("__bool__", "__len__"):
        if name in Bare.__dict__:
            delattr(Bare, name)


NUMBER_METHODS = ("__add__", "__neg__", "__len__", "__bool__", "__iter__", "__contains__", "__getitem__", "__call__")


class WithMethod:
    def __init__(self):
        self.scale = 2

    def method(self, x):
        return x * self.scale


class WithProperty:
    def __init__(self):
        self._scale = 2

    @property
    def scale(self):
        return self._scale * 10


class Slotted:
    __slots__ = ("scale", "shift")

    def __init__(self):
        self.scale, self.shift = 2, 1


class Doubled:
    """A non-data descriptor whose result depends on state kept in the descriptor."""

    def __init__(self):
        self.factor = 2

    def __get__(self, obj, owner):
        return obj.base * self.factor if obj is not None else self


class WithDescriptor:
    value = Doubled()

    def __init__(self):
        self.base = 1


class Fallback:
    """Attributes missing from the instance come from `__getattr__`, which reads a table."""

    def __init__(self):
        self.table = {"scale": 2}

    def __getattr__(self, name):
        try:
            return self.__dict__["table"][name]
        except KeyError:
            raise AttributeError(name) from None


class Counting:
    """`__getattr__` counts the reads it serves: eager runs it once per read, so must the
    compiled function (never again in a guard)."""

    def __init__(self):
        self.served = 0
        self.table = {"scale": 2}

    def __getattr__(self, name):
        self.served += 1
        if name in self.table:
            return self.table[name]
        raise AttributeError(name)


class CountingAll:
    """`__getattribute__` counts the reads of `scale`."""

    def __init__(self):
        self.reads = 0
        self.scale = 2

    def __getattribute__(self, name):
        if name == "scale":
            object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
        return object.__getattribute__(self, name)


def counting_hooks():
    return types.SimpleNamespace(lazy=Counting(), every=CountingAll())


def reads_through_hooks(state):
    def fn(x):
        return x * state.lazy.scale + (1 if hasattr(state.lazy, "shift") else 2) + state.every.scale

    return fn


def hook_counts(state):
    return state.lazy.__dict__["served"], object.__getattribute__(state.every, "reads")


def counting_descriptors():
    """A class (made afresh per run) with a descriptor whose __get__ counts its runs and a
    functools.cached_property counting its computations."""

    class Counted:
        def __init__(self):
            self.runs = 0

        def __get__(self, obj, owner=None):
            if obj is None:
                return self
            self.runs += 1
            return obj.base * 2

    class WithDescriptors:
        value = Counted()

        def __init__(self):
            self.base = 1
            self.computed = 0

        @functools.cached_property
        def expensive(self):
            self.computed += 1
            return self.base * 3

    return types.SimpleNamespace(obj=WithDescriptors(), counted=WithDescriptors.__dict__["value"])


def reads_descriptors(state):
    def fn(x):
        return x * state.obj.value + state.obj.expensive

    return fn


@dataclasses.dataclass(frozen=True)
class Tag:
    """Equal (and hashed) by `name` alone: another Tag of that name is an equal dict key."""

    name: str
    weight: float = dataclasses.field(default=1.0, compare=False)


class Node:
    def __init__(self, w):
        self.w = w


def keyed_by_objects():
    return types.SimpleNamespace(by_tag={Tag("a"): 1.0}, by_node={Node(1.0): "x", Node(2.0): "y"})


def reads_dict_keys(state):
    def fn(x):
        out = x * next(iter(state.by_tag)).weight
        return out + sum(node.w for node in state.by_node)

    return fn


def _replace_tag(state):
    state.by_tag.clear()
    state.by_tag[Tag("a", 5.0)] = 1.0


@dataclasses.dataclass
class Settings:
    scale: float = 2.0
    mode: str = "add"
    extra: list = dataclasses.field(default_factory=list)


class Pair(NamedTuple):
    scale: float
    shift: float


class Mode(enum.Enum):
    ADD = "add"
    MUL = "mul"


def reads(*names):
    """`x * obj.scale + obj.shift`-like: the function reads the named attributes of state.obj."""

    def make(state):
        def fn(x):
            total = x
            for name in names:
                total = total * getattr(state.obj, name)
            return total

        return fn

    return make


def holding(factory):
    def setup():
        restore_classes()
        return types.SimpleNamespace(obj=factory())

    return setup


def set_on(name, value):
    return lambda state: setattr(state.obj, name, value() if callable(value) and not isinstance(value, type) else value)


def set_on_class(cls, name, value):
    return lambda state: setattr(cls, name, value)


def branches_on_attribute(state):
    def fn(x):
        if hasattr(state.obj, "extra"):
            return x + state.obj.extra
        return x - 1

    return fn


def reads_class_name(state):
    def fn(x):
        if isinstance(state.obj, Other):
            return x * state.obj.scale + len(state.obj.describe())
        return x * state.obj.scale

    return fn


def mode_switch(state):
    def fn(x):
        mode = state.obj.mode
        if mode == "mul" or mode is Mode.MUL:
            return x * state.obj.scale
        return x + state.obj.scale

    return fn


class Seven:
    """A descriptor written in Python (its __get__ is traced)."""

    def __get__(self, obj, owner):
        return 7 if obj is not None else self


def _other_init(self):
    self.shift = 2


def makes_objects(state):
    def fn(x):
        o = Made.make()
        c = MadeChild()
        return x + o.get() + o.scale * 10 + o.prop * 100 + o.shift * 1000 + Made.helper() + c.get() + c.value

    return fn


def uses_special_methods(made_inside):
    def make(state):
        def fn(x):
            number = Number() if made_inside else state.obj
            out = number + x + sum(number) + number[2] + (-number).value + number(x)
            if number:
                out = out + len(number)
            return out + (1 in number)

        return fn

    return make


def patches_of_special_methods():
    # Seven: with the first entry, as many as the recompile limit (8) keeps.
    return (set_on_class(Number, "__add__", lambda self, other: other * 100), set_on_class(Number, "__neg__", lambda self: Number(7)),
            set_on_class(Number, "__len__", lambda self: 5), set_on_class(Number, "__bool__", lambda self: False),
            set_on_class(Number, "__iter__", lambda self: iter((4, 5, 6))), set_on_class(Number, "__contains__", lambda self, item: False),
            set_on_class(Number, "__getitem__", lambda self, index: -index))


def fresh_abc():
    """A new ABC and class per run: a registration cannot be undone."""

    class Base(abc.ABC):
        pass

    class Thing:
        pass

    return types.SimpleNamespace(base=Base, obj=Thing())


def checks_abc(state):
    def fn(x):
        return x + (1 if isinstance(state.obj, state.base) else 2) + (10 if issubclass(type(state.obj), (int, state.base)) else 20)

    return fn


def calls_method(state):
    return lambda x: state.obj.method(x)


def pair_reader(state):
    def fn(x):
        scale, shift = state.obj
        return x * scale + shift + state.obj.shift

    return fn


def dataclass_reader(state):
    def fn(x):
        out = x * state.obj.scale if state.obj.mode == "mul" else x + state.obj.scale
        return out + len(state.obj.extra)

    return fn


OBJECT_CASES = [
    case("instance_attribute_changed", reads("scale", "shift"), set_on("scale", 3), set_on("scale", 3.0), set_on("shift", True),
         set_on("scale", lambda: torch.full((3,), 2.0)), set_on("shift", lambda: torch.ones(3, dtype=torch.float64)),
         setup=holding(Plain), backends=("aot_eager", "inductor")),
    case("class_attribute_changed_after_capture", reads("scale"), set_on_class(Plain, "scale", 7), set_on("scale", 1),
         set_on_class(Plain, "scale", 2), setup=holding(Plain)),
    case("class_of_an_object_made_inside_patched", makes_objects, set_on_class(Made, "get", lambda self: 5), set_on_class(Made, "scale", 7),
         set_on_class(Made, "prop", property(lambda self: 9)), set_on_class(Made, "helper", staticmethod(lambda: -4)),
         set_on_class(Made, "make", classmethod(lambda cls: MadeChild())), set_on_class(MadeChild, "value", Seven()),
         set_on_class(Made, "__init__", _other_init), setup=holding(lambda: None), backends=("aot_eager",)),
    case("special_methods_patched_on_the_class", uses_special_methods(False), *patches_of_special_methods(), setup=holding(Number)),
    case("special_methods_patched_for_an_object_made_inside", uses_special_methods(True), *patches_of_special_methods(),
         setup=holding(Number), backends=("aot_eager",)),
    case("abstract_base_class_registers_later", checks_abc, lambda s: s.base.register(type(s.obj)), setup=fresh_abc),
    case("method_shadowed_by_an_instance_attribute", calls_method, set_on("method", lambda: (lambda x: x - 100)),
         lambda s: delattr(s.obj, "method"), setup=holding(WithMethod)),
    case("attribute_hooks_repr_and_missing_patched", uses_hooks(False), *HOOK_PATCHES, setup=holding(Hooked)),
    case("attribute_hooks_patched_for_an_object_made_inside", uses_hooks(True), *HOOK_PATCHES, setup=holding(Hooked)),
    case("truth_methods_added_to_the_class", reads_truth, set_on_class(Bare, "__bool__", lambda self: False),
         lambda s: delattr(Bare, "__bool__"), set_on_class(Bare, "__len__", lambda self: 0), setup=holding(Bare)),
    case("property_backing_changed", reads("scale"), set_on("_scale", 3), set_on("_scale", 0.5), setup=holding(WithProperty)),
    case("property_replaced_on_the_class", reads("scale"), set_on_class(WithProperty, "scale", property(lambda self: -1)),
         set_on_class(WithProperty, "scale", 4), setup=holding(WithProperty)),
    case("slots_changed", reads("scale", "shift"), set_on("scale", 3), set_on("shift", 2.5), lambda s: delattr(s.obj, "shift"),
         setup=holding(Slotted)),
    case("descriptor_state_changed", reads("value"), set_on("base", 3), lambda s: setattr(WithDescriptor.__dict__["value"], "factor", 5),
         setup=holding(WithDescriptor)),
    case("getattr_fallback_table_changed", reads("scale"), lambda s: s.obj.table.__setitem__("scale", 3), set_on("scale", 4),
         lambda s: delattr(s.obj, "scale"), lambda s: s.obj.table.clear(), setup=holding(Fallback)),
    case("attribute_hooks_run_as_often_as_eager", reads_through_hooks, lambda s: s.lazy.table.__setitem__("scale", 3),
         lambda s: s.lazy.table.__setitem__("shift", 1), lambda s: object.__setattr__(s.lazy, "scale", 4),
         lambda s: object.__setattr__(s.every, "scale", 5), setup=counting_hooks, observe=hook_counts),
    case("python_descriptors_run_as_often_as_eager", reads_descriptors, set_on("base", 2), lambda s: s.obj.__dict__.pop("expensive"),
         setup=counting_descriptors, observe=lambda s: (s.counted.runs, s.obj.computed)),
    case("dict_keys_replaced_or_changed", reads_dict_keys, _replace_tag, lambda s: setattr(next(iter(s.by_node)), "w", 3.0),
         lambda s: s.by_node.pop(next(iter(s.by_node))), setup=keyed_by_objects),
    case("attribute_added_then_deleted", branches_on_attribute, set_on("extra", 5), set_on("extra", 2.5), lambda s: delattr(s.obj, "extra"),
         setup=holding(Plain)),
    case("class_reassigned", reads_class_name, lambda s: setattr(s.obj, "__class__", Other), lambda s: setattr(s.obj, "__class__", Plain),
         setup=holding(Plain)),
    case("string_mode_changed", mode_switch, set_on("mode", "mul"), set_on("mode", Mode.MUL), set_on("mode", Mode.ADD),
         setup=lambda: types.SimpleNamespace(obj=types.SimpleNamespace(mode="add", scale=2))),
    case("dataclass_fields_changed", dataclass_reader, set_on("scale", 3.0), set_on("mode", "mul"), lambda s: s.obj.extra.append(1),
         set_on("scale", 3), setup=holding(Settings)),
    case("namedtuple_replaced", pair_reader, lambda s: setattr(s, "obj", Pair(3.0, 1.0)), lambda s: setattr(s, "obj", Pair(3, 1)),
         lambda s: setattr(s, "obj", (3.0, 1.0)), setup=lambda: types.SimpleNamespace(obj=Pair(2.0, 1.0))),
]

_CLASS_DEFAULTS = {
    (Plain, "scale"): 2,
    (WithProperty, "scale"): WithProperty.__dict__["scale"],
    **{(Made, name): Made.__dict__[name] for name in ("get", "scale", "prop", "helper", "make", "__init__")},
    **{(Number, name): Number.__dict__[name] for name in NUMBER_METHODS},
    **HOOK_DEFAULTS,
}


def restore_classes():
    """Puts back what mutations change on classes (each run starts from the same classes)."""
    for (cls, name), value in _CLASS_DEFAULTS.items():
        setattr(cls, name, value)
    WithDescriptor.__dict__["value"].factor = 2
    _restore_bare()
    MadeChild.value = 0


@pytest.fixture(autouse=True)
def _classes_restored():
    yield
    restore_classes()


# --- arguments whose type or contents change --------------------------------------------------


def adds_scalar(state):
    def fn(x, v):
        if v is None:
            return x
        if isinstance(v, bool):
            return x + 10 if v else x - 10
        return x * v, type(v).__name__

    return fn


def uses_sequence(state):
    def fn(x, seq):
        out = x
        for item in seq:
            out = out + item
        return out, len(seq), type(seq).__name__

    return fn


def uses_mapping(state):
    def fn(x, table):
        return [x * value for value in table.values()], list(table)

    return fn


def uses_nested(state):
    def fn(x, nested):
        return x * nested["a"][0] + nested["b"]["c"][-1]

    return fn


def uses_string_or_enum(state):
    def fn(x, how):
        if how == "double" or how is Mode.MUL:
            return x * 2
        return x + len(str(how))

    return fn


def uses_float(state):
    def fn(x, v):
        return x * v, 1.0 / v if v != 0 else ("zero", str(v)), v != v

    return fn


def uses_int(state):
    def fn(x, v):
        return x + (v % 7), v // 3, v.bit_length()

    return fn


def values(*items):
    return [lambda item=item: item() if callable(item) else item for item in items]


def argument_case(name, make, *items, **options):
    kinds = values(*items)
    return case(name, make, *(lambda state: None,) * (len(kinds) - 1), args=lambda state, call: (torch.randn(3), kinds[call // 2]()),
                **options)


def branches_on_numbers(state):
    def fn(x, n, f):
        for i in range(n):
            x = x + i
        if n % 2 and f > 2.5:
            return x * f, str(n), int(f)
        return x - n, n == 6, f.is_integer()

    return fn


def branches_on_sizes(state):
    def fn(x, y):
        if x.shape[0] > 5:
            return x.sum() + y.sum(), x.shape[0] % 3
        return x + y, x.shape[0] == y.shape[0], x.is_contiguous()

    return fn


NUMBERS = [(2, 1.0), (3, 3.0), (4, 4.5), (5, 0.5), (6, 2.6), (7, 7.0), (1, 2.0), (0, -0.5)]
SIZES = [(3, 3), (4, 4), (5, 1), (6, 6), (7, 7), (2, 1), (1, 1), (6, 6)]

ARGUMENT_CASES = [
    # Values that change on every call: automatic dynamic numbers and sizes, whose branches stay guarded.
    case("numbers_become_dynamic", branches_on_numbers, *(lambda s: None,) * 7,
         args=lambda s, c: (torch.randn(3), NUMBERS[c // 2][0], NUMBERS[c // 2][1]), backends=("inductor",)),
    case("sizes_become_dynamic", branches_on_sizes, *(lambda s: None,) * 7,
         args=lambda s, c: (torch.randn(SIZES[c // 2][0], 3) if c % 4 < 2 else torch.randn(3, SIZES[c // 2][0]).t(), torch.randn(SIZES[c // 2][1], 3)),
         backends=("inductor",)),
    argument_case("argument_type_int_float_bool_tensor_none", adds_scalar, 2, 2.0, True, False, lambda: torch.full((3,), 2.0), None, 1, 3,
                  backends=("aot_eager", "inductor")),
    argument_case("argument_list_tuple_and_length", uses_sequence, lambda: [1, 2], lambda: (1, 2), lambda: [1, 2, 3], lambda: [1.0, 2],
                  lambda: [torch.ones(3), 2], lambda: (), backends=("aot_eager",)),
    argument_case("argument_dict_keys_order_and_contents", uses_mapping, lambda: {"a": 1, "b": 2}, lambda: {"b": 2, "a": 1},
                  lambda: {"a": 1, "b": 3}, lambda: {"a": 1}, lambda: {"a": 1.0, "b": 2}),
    argument_case("argument_nested_containers", uses_nested, lambda: {"a": [1, 2], "b": {"c": (3, 4)}},
                  lambda: {"a": [5, 2], "b": {"c": (3, 4)}}, lambda: {"a": [1, 2], "b": {"c": (3, 4.5)}},
                  lambda: {"a": [1, 2], "b": {"c": (3, 4, 9)}}, lambda: {"a": (1,), "b": {"c": [torch.ones(3)]}}),
    argument_case("argument_string_and_enum", uses_string_or_enum, "double", "half", Mode.MUL, Mode.ADD, "Mode.MUL"),
    argument_case("argument_special_floats", uses_float, 0.0, -0.0, float("nan"), float("inf"), float("-inf"), 2.5, 1e308),
    argument_case("argument_large_ints", uses_int, 5, 2**31, 2**63, -(2**63) - 1, 2**100, -7, True),
]

CASES = OBJECT_CASES + ARGUMENT_CASES


@pytest.mark.parametrize("backend, case_", [(b, c) for c in CASES for b in backends_of(c)], ids=str)
def test_compiled_function_sees_state_changed_between_calls(backend, case_):
    check_case(case_, backend=backend)
