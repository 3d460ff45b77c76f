"""Cases modelled on dynamo's test_misc (its object-model and library tests, recast in our own
words): metaclasses with __instancecheck__, __new__ returning an object of another class (so
__init__ is skipped), a nested list aliased by `*` then written, the default generator's state
read and restored, torch.distributions (lazy properties), parent methods reached every way
(super() in a classmethod, `A.add(self, x)`, `super(B, self)`, a class attribute through
super()), tuples built from an iterator passed in, class attributes changed between calls
(read through super), `__class__` reassignment refused, and more everyday library calls."""

import typing

import torch

from . import snippets

SOURCE = "dynamo/test_misc"


class AlwaysMeta(type):
    def __instancecheck__(cls, instance):
        return True


class Anything(metaclass=AlwaysMeta):
    pass


class TagMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, TagBase) and instance.tag == cls._tag


class TagBase:
    def __init__(self, tag="default"):
        self.tag = tag


class TagChild(TagBase, metaclass=TagMeta):
    _tag = "child"

    def __new__(cls):
        return TagBase(tag="child")


class A:
    a = 4

    def add(self, x):
        return x + 10

    def mul(self, x):
        return x * 0.1


class B(A):
    coeff = 4

    def add(self, x):
        return x + 20

    @classmethod
    def cube(cls, x):
        return cls.coeff * x * x * x

    def mul(self, x):
        return super().mul(x) * x * 0.2


class C(B):
    def add(self, x):
        b = super().cube(x)
        c = A.add(self, x)
        d = B.mul(self, x)
        e = super(B, self).add(x)
        f = super().a * x
        return b + c + d + e + f


def class_attribute_changes(n):
    import random

    A.a = random.choice([4, 5])
    return C(), torch.rand(n)


@typing.runtime_checkable
class SupportsScale(typing.Protocol):
    def scale(self, t): ...


@typing.runtime_checkable
class HasFactor(typing.Protocol):
    factor: float


class Scaler:
    factor = 2.0

    def scale(self, t):
        return t * self.factor


class Plain:
    pass


NS = {"torch": torch, "SupportsScale": SupportsScale, "HasFactor": HasFactor, "Scaler": Scaler, "Plain": Plain,
      "Anything": Anything, "TagChild": TagChild, "TagBase": TagBase, "C": C, "A": A}

CASES = [
    ("metaclass_instancecheck_always", "class P:\n    pass\nreturn x + 1 if isinstance(P(), Anything) else x - 1", {}),
    ("metaclass_instancecheck_on_attribute", "o = TagChild()\nreturn x * (type(o) is TagBase), o.tag, isinstance(o, TagChild), isinstance(TagBase(), TagChild)"),
    ("runtime_protocol_method", "objs = [Scaler(), Plain(), x]\nreturn x, [isinstance(o, SupportsScale) for o in objs], isinstance(Scaler(), (int, SupportsScale))"),
    ("runtime_protocol_data_member", "s = Scaler()\np = Plain()\np.factor = 1.0\nreturn x * s.factor, isinstance(s, HasFactor), isinstance(p, HasFactor), isinstance(Plain(), HasFactor)"),
    ("nested_list_aliased_by_star", "data = [[None] * 3] * 3\nfor i in range(3):\n    data[0][i] = x if i == 0 else data[0][i - 1] + 1\nreturn data[2][-1], data[1] is data[0]"),
    ("default_generator_state_restored", "state = torch.default_generator.get_state()\na = torch.rand(x.shape[0])\ntorch.default_generator.set_state(state)\nb = torch.rand(x.shape[0])\nreturn x + a, a.equal(b)"),
    ("distributions_lazy_property", "d = torch.distributions.Categorical(probs=x.abs() + 0.1)\nreturn d.entropy(), d.probs.sum(), d.logits.shape"),
    ("normal_distribution_log_prob", "d = torch.distributions.Normal(x, 1.0 + x.abs())\nreturn d.log_prob(x * 0.5), d.mean, d.stddev"),
    ("tuple_from_list_plus_iterator", "ts = [x, x * 2]\ny = tuple(ts) + tuple(iter(ts))\nacc = torch.zeros_like(x)\nfor t in y:\n    acc.add_(t)\nreturn acc, len(y)"),
    ("sum_of_generator_of_tensors_start", "return sum((x * i for i in range(3)), torch.ones_like(x))"),
    ("max_min_with_key_on_tensors", "ts = [x, x * 2, x - 3]\nreturn max(ts, key=lambda t: t.shape[0] + len(ts)), min(range(3), key=lambda i: -i)"),
    ("dict_fromkeys_and_setdefault", "d = dict.fromkeys(['a', 'b'], 0)\nd.setdefault('c', []).append(x)\nd['a'] += 1\nreturn d['c'][0] * d['a'], sorted(d)"),
    ("getattr_with_default_on_module", "return getattr(torch, 'no_such_fn', torch.relu)(x), getattr(torch.nn.functional, 'gelu')(x)"),
    ("str_methods_on_names", "name = 'Layer_Norm.weight'\nparts = name.lower().split('.')\nreturn x, parts, name.replace('_', '-'), name.startswith(('La', 'X')), name.partition('.'), name.rsplit('_', 1)"),
    ("slice_objects_and_indices", "s = slice(1, None, 2)\nreturn x[s], s.indices(x.shape[0]), x[::-1][s]"),
    ("divmod_and_round_on_sizes", "n = x.shape[0]\nq, r = divmod(n, 3)\nreturn x[:q + r], round(n / 3, 2), abs(-n), pow(n, 2, 5)"),
    ("bytes_and_bytearray", "b = bytes([1, 2, x.shape[0]])\nba = bytearray(b)\nba[0] = 9\nreturn x * b[2], list(ba), b.hex()"),
    ("int_from_string_and_bases", "return x * int('11', 2) + int('f', 16), int('  7 '), float('1e-3')"),
]
snippets(SOURCE, "misc_objects", CASES, namespace=NS)

snippets(SOURCE, "misc_objects_parents", [
    ("parent_methods_every_way", "return c.add(x)"),
], namespace=NS, params="c, x", make_args=class_attribute_changes)


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a=1):
        self.a = a


def slotted_and_vector(n):
    return Slotted(n), torch.randn(n)


snippets(SOURCE, "misc_objects_slots", [
    ("write_outside_slots_caught_on_input", "try:\n    o.b = 2\nexcept AttributeError as e:\n    return x + o.a, 'b' in str(e)\nreturn x"),
    ("write_outside_slots_caught_on_new_object", "s = Slotted(2)\ntry:\n    s.b = 2\nexcept AttributeError:\n    return x * s.a + o.a\nreturn x"),
    ("slot_written_then_read", "o.a = o.a + 1\nreturn x * o.a, o.a"),
], namespace={"Slotted": Slotted, "torch": torch}, params="o, x", make_args=slotted_and_vector)


class EqOnlyMeta(type):
    """`__eq__` alone: its classes are unhashable (capture looked classes up by hash)."""

    def __eq__(cls, other):
        return cls is other


class AllEqualMeta(type):
    """Every class of it equal to every other, one hash (capture shared one source)."""

    def __eq__(cls, other):
        return isinstance(other, AllEqualMeta)

    def __hash__(cls):
        return 7


def _classes_of(meta):
    class First(metaclass=meta):
        k = 2

        def __init__(self, v):
            self.v = v

        def go(self, x):
            return x * self.k + self.v

    class Second(metaclass=meta):
        k = 5

        def __init__(self, v, w=1):
            self.v, self.w = v, w

        def go(self, x):
            return x - self.k * self.v * self.w

    return {"First": First, "Second": Second}


for _meta in (EqOnlyMeta, AllEqualMeta):
    snippets(SOURCE, f"misc_objects_{_meta.__name__}", [
        ("classes_of_a_metaclass_with_eq", "a, b = First(1), Second(2, w=3)\nreturn a.go(x) + b.go(x) + First.k * Second.k, (a.v, b.w), type(b) is Second"),
    ], namespace={**_classes_of(_meta), "torch": torch})
