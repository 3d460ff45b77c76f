"""Guards on ordinary Python values: type, identity, constants, None, lengths, dict keys,
attribute presence, and a function's defaults."""

from __future__ import annotations

import dataclasses
import enum
import math
import types

import torch

from ..codegen import Check, EmitContext, check, must_be, must_be_true, must_be_truth, must_equal, type_spelling
from ..errors import GuardError
from ..sources import ItemSource, Source, has_literal_spelling
from .base import PRIORITY_OBJECT, Guard, emits


_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: no `__class__` assignment to or from it


def _describe(value: object) -> str:
    return f"<{type(value).__qualname__} at {id(value):#x}>"


@dataclasses.dataclass(frozen=True, eq=False)
class TypeMatch(Guard):
    """`type(source) is kind`: exact type, subclasses do not match. Compared by the class's
    identity: its hash and == are its metaclass's, user code that may refuse to hash or call
    two classes equal (and so merge two guards in a set)."""

    source: Source
    kind: type
    priority = PRIORITY_OBJECT

    def __eq__(self, other: object) -> bool:
        return type(other) is TypeMatch and other.source == self.source and other.kind is self.kind

    def __hash__(self) -> int:
        return hash((TypeMatch, self.source, id(self.kind)))

    def __str__(self) -> str:
        return f"type({self.source}) is {type_spelling(self.kind)}"

    def implies(self) -> tuple[Guard, ...]:
        return () if self.kind is type(None) else (NotNone(self.source),)


@emits(TypeMatch)
def _type_match(guard: TypeMatch, ctx: EmitContext) -> list[Check]:
    value = ctx.read(guard.source)
    kind = ctx.type_name(guard.kind)
    actual = f"{ctx.builtin('type')}({value})"
    return [check(must_be(actual, kind), str(guard), actual)]


@dataclasses.dataclass(frozen=True, eq=False)
class IdentityMatch(Guard):
    """`source is value`: the very object seen at capture.

    Holds a strong reference to `value`: an id alone could be reused by a new object once the
    old one is freed, and the guard would then pass for the wrong object.
    """

    source: Source
    value: object
    priority = PRIORITY_OBJECT

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is IdentityMatch
            and other.source == self.source
            and other.value is self.value
        )

    def __hash__(self) -> int:
        return hash((IdentityMatch, self.source, id(self.value)))

    def __str__(self) -> str:
        return f"{self.source} is {_describe(self.value)}"

    def implies(self) -> tuple[Guard, ...]:
        # The same object keeps its type, unless `obj.__class__ = Other` can give it another:
        # an instance of a mutable class (a class of a custom metaclass) or any module (CPython
        # lets modules switch between ModuleType subclasses) can, and its TypeMatch stays.
        kind = type(self.value)
        if kind.__flags__ & _IMMUTABLE_TYPE and not issubclass(kind, types.ModuleType):
            return (TypeMatch(self.source, kind),)
        return ()


@emits(IdentityMatch)
def _identity_match(guard: IdentityMatch, ctx: EmitContext) -> list[Check]:
    value = ctx.read(guard.source)
    expected = ctx.constant(guard.value, f"{guard.source.hint}_expected", _describe(guard.value))
    return [check(must_be(value, expected), str(guard), value)]


# How a constant is compared, by its exact type. Singletons compare by identity (one pointer
# compare, and `1 == True` cannot confuse them); value types check the type first, because
# `1 == 1.0 == True` would otherwise let an int entry serve a float call.
_SINGLETON_TYPES = (
    type(None),
    bool,
    type(Ellipsis),
    type(NotImplemented),
    torch.dtype,
    torch.layout,
    torch.memory_format,
)
_VALUE_TYPES = (int, float, complex, str, bytes, torch.device)
_SEQUENCE_TYPES = (tuple, list, torch.Size)
# Sets compare as wholes (their order is the hash table's, not a sequence to walk).
_SET_TYPES = (set, frozenset)


def _is_constant(value: object) -> bool:
    kind = type(value)
    if kind in _SINGLETON_TYPES or kind in _VALUE_TYPES or isinstance(value, enum.Enum):
        return True
    return kind in _SEQUENCE_TYPES + _SET_TYPES and all(_is_constant(item) for item in value)


@dataclasses.dataclass(frozen=True)
class ConstantMatch(Guard):
    """`source == value` with the same type, for None, bools, numbers, strings, bytes, torch
    dtypes/devices/layouts, enum members, tuples/lists/torch.Size of those (element-wise,
    so `(1, 2.0)` never matches `(1, 2)`), and sets/frozensets of those (as wholes: a set
    the program mutates between calls keeps its identity, not its contents). Other objects:
    use IdentityMatch."""

    source: Source
    value: object
    priority = PRIORITY_OBJECT

    def __post_init__(self) -> None:
        if not _is_constant(self.value):
            raise GuardError(
                f"ConstantMatch({self.source}, {self.value!r}): {type(self.value).__name__} is "
                "not a constant type; guard it with IdentityMatch or guard its parts"
            )

    def __eq__(self, other: object) -> bool:
        # Dataclass equality would say ConstantMatch(s, 1) == ConstantMatch(s, True).
        return (
            type(other) is ConstantMatch
            and other.source == self.source
            and _typed_key(other.value) == _typed_key(self.value)
        )

    def __hash__(self) -> int:
        return hash((ConstantMatch, self.source, _typed_key(self.value)))

    def __str__(self) -> str:
        operator = "is" if _compares_by_identity(self.value) else "=="
        return f"{self.source} {operator} {self.value!r}"

    def implies(self) -> tuple[Guard, ...]:
        return (TypeMatch(self.source, type(self.value)),)


def _typed_key(value: object) -> object:
    if type(value) in _SEQUENCE_TYPES:
        return (type(value), tuple(_typed_key(item) for item in value))
    if type(value) in _SET_TYPES:
        return (type(value), frozenset(_typed_key(item) for item in value))
    if type(value) is float and math.isnan(value):
        return (float, "nan")
    if type(value) is float and value == 0.0:
        return (float, value, _sign(value))  # 0.0 == -0.0, but 1 / x tells them apart
    return (type(value), value)


def _sign(value: float) -> float:
    return math.copysign(1.0, value)


def _compares_by_identity(value: object) -> bool:
    return type(value) in _SINGLETON_TYPES or isinstance(value, enum.Enum)


@emits(ConstantMatch)
def _constant_match(guard: ConstantMatch, ctx: EmitContext) -> list[Check]:
    checks = _constant_checks(guard.source, guard.value, ctx)
    if _compares_by_identity(guard.value) or not _is_immutable(guard.value):
        return checks
    return [_seen_object_or(checks, guard, ctx)]


def _is_immutable(value: object) -> bool:
    if type(value) in (tuple, torch.Size, frozenset):
        return all(_is_immutable(item) for item in value)
    return type(value) in _VALUE_TYPES or _compares_by_identity(value)


def _seen_object_or(checks: list[Check], guard: ConstantMatch, ctx: EmitContext) -> Check:
    """One check that first asks whether the source still holds the very object seen at
    capture, and only if not runs the value's own checks (`checks`, kept as its details to
    explain a failure).

    Sound because the value is immutable all the way down: the same object has the same
    type and contents, and the guard function keeps it alive, so its id cannot be reused. A
    module's constants are read every call and rarely reassigned (a convolution's stride
    tuple: one statement instead of eight)."""
    read = ctx.read(guard.source)
    seen = ctx.constant(guard.value, f"{guard.source.hint}_seen", repr(guard.value))
    if type(guard.value) in _SEQUENCE_TYPES:
        # Element checks read each item twice, which would hoist the reads before the
        # identity test; one call compares types and values as the element checks do.
        key = ctx.constant(_typed_key, "typed_key", "the value's (type, value) tree")
        expected = ctx.constant(_typed_key(guard.value), f"{guard.source.hint}_key")
        otherwise = f"{key}({read}) != {expected}"
    else:
        otherwise = " or ".join(chk.fails for chk in checks)
    return Check(f"{read} is not {seen} and ({otherwise})", str(guard), ((None, read),), tuple(checks))


def _constant_checks(source: Source, value: object, ctx: EmitContext) -> list[Check]:
    read = ctx.read(source)
    if _compares_by_identity(value):
        expected = _literal_or_constant(value, source, ctx)
        return [check(must_be(read, expected), f"{source} is {value!r}", read)]
    kind = ctx.type_name(type(value))
    type_of = f"{ctx.builtin('type')}({read})"
    type_check = check(must_be(type_of, kind), f"type({source}) is {type_spelling(type(value))}", type_of)
    if type(value) in _SEQUENCE_TYPES:
        length = f"{ctx.builtin('len')}({read})"
        checks = [type_check, check(must_equal(length, str(len(value))), f"len({source}) == {len(value)}", length)]
        for index, item in enumerate(value):
            checks.extend(_constant_checks(ItemSource(source, index), item, ctx))
        return checks
    if type(value) in _SET_TYPES:
        expected = ctx.constant(frozenset(value), f"{source.hint}_members")
        return [type_check, check(must_equal(read, expected), f"{source} == {value!r}", read)]
    if type(value) is float and math.isnan(value):
        # NaN is the only float unequal to itself.
        return [type_check, check(f"{read} == {read}", f"{source} is nan", read)]
    expected = _literal_or_constant(value, source, ctx)
    checks = [type_check, check(must_equal(read, expected), f"{source} == {value!r}", read)]
    if type(value) is float and value == 0.0:
        # -0.0 == 0.0, yet a program can tell them apart (1 / x, copysign, atan2).
        sign = f"{ctx.constant(_sign, 'sign', 'math.copysign(1.0, x)')}({read})"
        checks.append(check(must_equal(sign, repr(_sign(value))), f"{source} is {value!r}, sign included", sign))
    return checks


def _literal_or_constant(value: object, source: Source, ctx: EmitContext) -> str:
    if has_literal_spelling(value):
        return repr(value)
    return ctx.constant(value, _constant_name(value, source), repr(value))


def _constant_name(value: object, source: Source) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}_{value.name}"
    return f"{source.hint}_expected"


@dataclasses.dataclass(frozen=True)
class FiniteFloat(Guard):
    """`math.isfinite(source)`, for a float that stands for a symbol of a ShapeEnv: sympy
    reasons about such a symbol as a finite real (`a == a` holds and `a - a` is 0, unguarded),
    which NaN and the infinities are not. They get an entry of their own, where the value is a
    constant (TypeMatch checks the type first)."""

    source: Source
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"math.isfinite({self.source})"


@emits(FiniteFloat)
def _finite_float(guard: FiniteFloat, ctx: EmitContext) -> list[Check]:
    value = ctx.read(guard.source)
    isfinite = f"{ctx.constant(math.isfinite, 'isfinite', 'math.isfinite')}({value})"
    return [check(must_be_true(isfinite), str(guard), value)]


@dataclasses.dataclass(frozen=True)
class NotNone(Guard):
    """`source is not None`."""

    source: Source
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"{self.source} is not None"


@emits(NotNone)
def _not_none(guard: NotNone, ctx: EmitContext) -> list[Check]:
    value = ctx.read(guard.source)
    return [check(f"{value} is None", str(guard), value)]


@dataclasses.dataclass(frozen=True)
class LengthMatch(Guard):
    """`len(source) == length` (lists, tuples, dicts...)."""

    source: Source
    length: int
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"len({self.source}) == {self.length}"


@emits(LengthMatch)
def _length_match(guard: LengthMatch, ctx: EmitContext) -> list[Check]:
    length = f"{ctx.builtin('len')}({ctx.read(guard.source)})"
    return [check(must_equal(length, str(guard.length)), str(guard), length)]


@dataclasses.dataclass(frozen=True)
class DictKeysMatch(Guard):
    """The dict's keys, in iteration order, are exactly `keys` (order matters to code that
    iterates the dict, so it is part of the guard)."""

    source: Source
    keys: tuple

    priority = PRIORITY_OBJECT

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(self.keys))

    # Guards are hashed and compared as a set is built: by the keys' identities (constants by
    # typed value), so that a key's own `__hash__` or `__eq__` (user code) runs only where the
    # program runs it.
    def __eq__(self, other: object) -> bool:
        return type(other) is DictKeysMatch and other.source == self.source and _key_identities(other.keys) == _key_identities(self.keys)

    def __hash__(self) -> int:
        return hash((DictKeysMatch, self.source, _key_identities(self.keys)))

    def __str__(self) -> str:
        return f"list({self.source}.keys()) == {list(self.keys)!r}"

    def implies(self) -> tuple[Guard, ...]:
        return (LengthMatch(self.source, len(self.keys)),)


def _key_identities(keys: tuple) -> tuple:
    return tuple(_typed_key(key) if _is_constant(key) else (type(key), id(key)) for key in keys)


@emits(DictKeysMatch)
def _dict_keys_match(guard: DictKeysMatch, ctx: EmitContext) -> list[Check]:
    keys = list(guard.keys)
    expected = repr(keys) if has_literal_spelling(keys) else ctx.constant(keys, f"{guard.source.hint}_keys")
    # `.keys()`, not `list(d)`: a list or tuple must fail this guard, not pass as its own keys.
    actual = f"{ctx.builtin('list')}({ctx.read(guard.source)}.keys())"
    return [check(must_equal(actual, expected), str(guard), actual)]


@dataclasses.dataclass(frozen=True)
class DictLookupsHold(Guard):
    """Each key of the dict, in iteration order, hashes to what it did at capture (`hashes`),
    and a lookup by it finds its own entry. A dict finds an entry only under the hash it was
    stored with: a key whose hash changed since (its class given another `__hash__`, a value
    hash over fields that changed) is still iterated but no longer found, and stored again it
    is a second entry. For dicts keyed by objects whose hash can change; with DictKeysMatch
    (the same keys) it keeps every lookup the trace made answering as it did."""

    source: Source
    hashes: tuple[int, ...]

    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"the keys of {self.source} hash to {list(self.hashes)!r}, each finding its own entry"

    def implies(self) -> tuple[Guard, ...]:
        return (LengthMatch(self.source, len(self.hashes)),)


_ABSENT = object()


def dict_lookups_hold(mapping: dict, hashes: tuple[int, ...]) -> bool:
    """DictLookupsHold's test. Through dict's own methods: the entries as stored, whatever a
    subclass overrides."""
    if len(mapping) != len(hashes):
        return False
    for (key, value), expected in zip(dict.items(mapping), hashes):
        if hash(key) != expected or dict.get(mapping, key, _ABSENT) is not value:
            return False
    return True


@emits(DictLookupsHold)
def _dict_lookups_hold(guard: DictLookupsHold, ctx: EmitContext) -> list[Check]:
    test = ctx.constant(dict_lookups_hold, "dict_lookups_hold", "guards.kinds.values.dict_lookups_hold")
    hashes = ctx.constant(guard.hashes, f"{guard.source.hint}_hashes")
    read = ctx.read(guard.source)
    return [check(must_be_true(f"{test}({read}, {hashes})"), str(guard), read)]


@dataclasses.dataclass(frozen=True)
class HasAttr(Guard):
    """`hasattr(source, attr)` is `present` (code that branched on hasattr, or on an
    attribute being absent, stays valid)."""

    source: Source
    attr: str
    present: bool = True
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"hasattr({self.source}, {self.attr!r}) is {self.present}"


@emits(HasAttr)
def _has_attr(guard: HasAttr, ctx: EmitContext) -> list[Check]:
    actual = f"{ctx.builtin('hasattr')}({ctx.read(guard.source)}, {guard.attr!r})"
    return [check(must_be_truth(actual, guard.present), str(guard), actual)]


@dataclasses.dataclass(frozen=True)
class KeyAbsent(Guard):
    """`key not in source`, for a dict: a global the program found undefined, or one whose
    absence let a name resolve to a builtin (a global of that name defined later shadows it)."""

    source: Source
    key: str
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"{self.key!r} not in {self.source}"


@emits(KeyAbsent)
def _key_absent(guard: KeyAbsent, ctx: EmitContext) -> list[Check]:
    found = f"{guard.key!r} in {ctx.read(guard.source)}"
    return [check(found, str(guard), found)]


@dataclasses.dataclass(frozen=True)
class KeysAbsent(Guard):
    """Every KeyAbsent of `members` (one dict source) holds; built by `with_absent_key_groups`,
    not by capture."""

    members: tuple[KeyAbsent, ...]
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"{', '.join(repr(member.key) for member in self.members)} not in {self.members[0].source}"


def with_absent_key_groups(guards: list[Guard]) -> list[Guard]:
    """`guards` with the KeyAbsent guards on one dict replaced by one KeysAbsent at the place of
    the first: one `if` for the names a module's instance dict must lack (each member it reads
    from its registries, each method it calls), where an `if` per name costs more than its
    `in` test. Guards whose read has effects keep their own place."""
    by_source: dict[Source, list[KeyAbsent]] = {}
    for guard in guards:
        if type(guard) is KeyAbsent and not guard.reads_with_effects():
            by_source.setdefault(guard.source, []).append(guard)
    first = {members[0]: KeysAbsent(tuple(members)) for members in by_source.values() if len(members) > 1}
    grouped = {member for group in first.values() for member in group.members}
    return [first.get(guard, guard) for guard in guards if guard not in grouped or guard in first]


@emits(KeysAbsent)
def _keys_absent(guard: KeysAbsent, ctx: EmitContext) -> list[Check]:
    members = [_key_absent(member, ctx)[0] for member in guard.members]
    return [Check(" or ".join(member.fails for member in members), str(guard), ((None, ctx.read(guard.members[0].source)),),
                  tuple(members))]


@dataclasses.dataclass(frozen=True, eq=False)
class DefaultsMatch(Guard):
    """The guarded function still has the defaults it had at capture.

    GuardSet.compile gives the guard function the function's own `__defaults__` tuple and
    `__kwdefaults__` dict objects, so in-place changes to the dict are seen by both; this
    guard catches reassigning either attribute.
    """

    function: types.FunctionType
    priority = PRIORITY_OBJECT

    def __eq__(self, other: object) -> bool:
        return type(other) is DefaultsMatch and other.function is self.function

    def __hash__(self) -> int:
        return hash((DefaultsMatch, id(self.function)))

    def __str__(self) -> str:
        return f"{self.function.__qualname__} keeps the defaults seen at capture"


@emits(DefaultsMatch)
def _defaults_match(guard: DefaultsMatch, ctx: EmitContext) -> list[Check]:
    function = guard.function
    name = ctx.constant(function, function.__name__, f"the function {function.__qualname__}")
    checks = []
    code = function.__code__
    # Positional defaults matter only with positional parameters, keyword ones only with
    # keyword-only parameters.
    used = {"__defaults__": code.co_argcount > 0, "__kwdefaults__": code.co_kwonlyargcount > 0}
    for attr in (attr for attr, matters in used.items() if matters):
        current = getattr(function, attr)
        expected = "None" if current is None else ctx.constant(current, attr.strip("_"))
        text = f"{function.__qualname__}.{attr} is the {attr} seen at capture"
        checks.append(check(must_be(f"{name}.{attr}", expected), text, f"{name}.{attr}"))
    return checks
