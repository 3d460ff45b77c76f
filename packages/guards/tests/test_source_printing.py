"""Property: every source, of every kind and nesting, prints as valid Python, and every guard
on it compiles into a guard function (and explainer) that runs, whatever names, keys and
reprs the values have (issue 16: a guard function that was not valid Python).

The guards are compiled over a frame that does not hold the values, so the functions return
False (a value that cannot be read fails the guard); what is tested is that they are Python.
"""

from __future__ import annotations

import ast
import types

import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from guards import (
    AttrSource,
    BufferSource,
    ClosureSource,
    ConstantMatch,
    DictKeysMatch,
    GlobalSource,
    GuardSet,
    HasAttr,
    IdentityMatch,
    ItemSource,
    LengthMatch,
    LocalSource,
    ModuleRegistrySource,
    NotNone,
    ParameterSource,
    ShapeSource,
    StorageOffsetSource,
    StrideSource,
    SubmoduleSource,
    TypeMatch,
    TypeSource,
)
from guards.codegen import type_spelling
from guards.sources import TupleSource, has_literal_spelling

PARAMETERS = ("x", "self", "L", "G", "type", "len")  # some shadow what guard code uses
FREE_VARIABLES = ("scale", "C", "fn")

# Names and strings that are awkward to print: keywords, quotes, backslashes, line breaks,
# non-ASCII, digits first, empty.
awkward_text = st.one_of(
    st.sampled_from(["a", "weight", "class", "None", "0", "1x", "", "a b", "it's", 'q"', "\\", "x\ny", "\r", "é", "\u2028", "__dict__"]),
    st.text(max_size=6),
)
literal_keys = st.one_of(
    st.integers(-3, 10),
    awkward_text,
    st.binary(max_size=3),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.tuples(st.integers(0, 3), awkward_text),
)


class Awkward:
    """An object whose repr spans lines and opens brackets it never closes."""

    def __repr__(self) -> str:
        return "Awkward(\n  [unclosed\n"


roots = st.one_of(
    st.sampled_from(PARAMETERS).map(LocalSource),
    awkward_text.map(GlobalSource),
    st.sampled_from(FREE_VARIABLES).map(ClosureSource),
)


def chained(base: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.builds(AttrSource, base, awkward_text),
        st.builds(ItemSource, base, literal_keys),
        st.builds(TypeSource, base),
        st.builds(ShapeSource, base),
        st.builds(StrideSource, base),
        st.builds(StorageOffsetSource, base),
        st.builds(ModuleRegistrySource, base, st.sampled_from(["_parameters", "_buffers", "_modules"])),
        st.builds(ParameterSource, base, awkward_text),
        st.builds(BufferSource, base, awkward_text),
        st.builds(SubmoduleSource, base, st.one_of(awkward_text, st.integers(0, 12).map(str))),
        st.builds(lambda items, name: TupleSource(tuple(items), name), st.lists(base, min_size=1, max_size=2), awkward_text),
    )


sources = st.recursive(roots, chained, max_leaves=4)
guard_values = st.one_of(literal_keys, st.just(Awkward()), st.just(torch.float32), st.just(float("nan")))


def guards_on(source) -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from([int, str, Awkward, torch.Tensor, types.SimpleNamespace]).map(lambda kind: TypeMatch(source, kind)),
        st.just(IdentityMatch(source, Awkward())),
        guard_values.filter(lambda v: not isinstance(v, Awkward)).map(lambda v: ConstantMatch(source, v)),
        st.builds(lambda a, present: HasAttr(source, a, present), awkward_text, st.booleans()),
        st.integers(0, 5).map(lambda n: LengthMatch(source, n)),
        st.lists(st.one_of(literal_keys, st.just(Awkward())), max_size=3).map(lambda keys: DictKeysMatch(source, tuple(keys))),
        st.just(NotNone(source)),
    )


def guarded_function():
    """A function with every parameter and free variable the roots name, whose globals
    hold nothing the guards ask for."""
    scale = C = fn = None

    def guarded(x, self, L, G, type, len):
        return scale, C, fn

    return guarded


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources)
# Names that look like ModuleList indices but are no Python literal (a CI run found `²`).
@example(SubmoduleSource(LocalSource("x"), "²"))
@example(SubmoduleSource(LocalSource("x"), "01"))
def test_every_source_prints_as_python(source):
    ast.parse(str(source), mode="eval")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sources.flatmap(guards_on), min_size=1, max_size=4))
def test_guards_on_any_source_compile_and_run(guards):
    fn = guarded_function()
    guard_fn = GuardSet(guards).compile(fn)
    ast.parse(guard_fn.source)
    arguments = (torch.zeros(2), object(), [1], {"a": 1}, 3, "s")
    verdict = guard_fn(*arguments)
    assert isinstance(verdict, bool)
    if not verdict:
        assert isinstance(guard_fn.why(*arguments), str)


def test_item_keys_are_literals():
    # The keys ItemSource takes are exactly the ones whose repr reads back.
    assert has_literal_spelling((1, "a\nb", b"\x00"))
    assert not has_literal_spelling(Awkward())


def test_type_spelling_of_a_class_without_a_module():
    # type(name, bases, ns) called where the globals have no __name__ leaves no __module__.
    scope = {}
    exec("Made = type('Made', (), {})", scope)  # noqa: S102
    assert not hasattr(scope["Made"], "__module__")
    assert type_spelling(scope["Made"]) == "Made"
    assert type_spelling(int) == "int"
