"""Property: a generated guard function agrees with the reference interpreter on any frame.

Hypothesis builds a random frame (nested lists, tuples, dicts, plain objects, constants,
tensors and nn.Modules), guards of every value kind (shape guards included) on random
places in it, and a second frame that is the
first with a few random changes. The guards must hold on the first frame, and on the second
the generated function, its `why`, and the interpreter must all give the same verdict.
"""

from __future__ import annotations

import copy
import math
import types

import pytest
import sympy
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from reference_guards import FrameValues, all_hold

from guards import (
    AttrSource,
    BufferSource,
    ConstantMatch,
    DictKeysMatch,
    FiniteFloat,
    GlobalSource,
    GuardSet,
    HasAttr,
    IdentityMatch,
    ItemSource,
    LengthMatch,
    LocalSource,
    NotNone,
    ParameterSource,
    ShapeGuard,
    SubmoduleSource,
    TensorMatch,
    TypeMatch,
)
from guards.kinds import tensor_groups
from guards.sources import ShapeSource

DTYPES = [torch.float32, torch.float64, torch.int64, torch.bool]


@st.composite
def tensors(draw):
    shape = draw(st.lists(st.integers(0, 4), max_size=3))
    t = torch.zeros(shape, dtype=draw(st.sampled_from(DTYPES)))
    if t.dim() >= 2 and draw(st.booleans()):
        t = t.transpose(0, 1)
    if t.is_floating_point() and draw(st.booleans()):
        t.requires_grad_()
    return t


constants = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False),
    st.sampled_from([math.inf, -math.inf, math.nan]),
    st.sampled_from(["a", "b", ""]), st.sampled_from([torch.float32, torch.int64]),
)
@st.composite
def modules(draw):
    module = torch.nn.Sequential(torch.nn.Linear(2, draw(st.integers(1, 3))), torch.nn.BatchNorm1d(2))
    return module.train(draw(st.booleans()))


leaves = st.one_of(constants, tensors(), modules())


def containers(children):
    keys = st.sampled_from(["a", "b", "c"])
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=3),
        st.dictionaries(keys, children, max_size=3).map(lambda d: types.SimpleNamespace(**d)),
    )


values = st.recursive(leaves, containers, max_leaves=8)


def places(value, source, into_modules=True):
    """Every (source, value) reachable from `source` by item and attribute reads."""
    yield source, value
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from places(item, ItemSource(source, i), into_modules)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, ItemSource(source, key), into_modules)
    elif isinstance(value, types.SimpleNamespace):
        for name, item in vars(value).items():
            yield from places(item, AttrSource(source, name), into_modules)
    elif isinstance(value, torch.nn.Module) and into_modules:
        yield AttrSource(source, "training"), value.training
        for name, child in value.named_children():
            yield from places(child, SubmoduleSource(source, name), into_modules)
        for name, p in value.named_parameters(recurse=False):
            yield ParameterSource(source, name), p
        for name, b in value.named_buffers(recurse=False):
            yield BufferSource(source, name), b


def guards_for(source, value, draw):
    """Guards of every kind that apply to this value, as the value is now."""
    options = [TypeMatch(source, type(value))]
    if value is not None:
        options.append(NotNone(source))
    if isinstance(value, torch.Tensor):
        dynamic = draw(st.lists(st.booleans(), min_size=value.dim(), max_size=value.dim()))
        sizes = [None if d else s for d, s in zip(dynamic, value.shape)]
        options.append(TensorMatch.of(source, value, sizes=sizes))
        if value.dim():
            dim = draw(st.integers(0, value.dim() - 1))
            relation = draw(st.sampled_from([sympy.Eq, sympy.Ge, sympy.Le]))
            symbol = sympy.Symbol("s0", integer=True)
            options.append(ShapeGuard.of(relation(symbol, value.shape[dim]), {symbol: ItemSource(ShapeSource(source), dim)}))
    elif isinstance(value, (list, tuple, dict, types.SimpleNamespace)):
        options.append(IdentityMatch(source, value))
        if not isinstance(value, types.SimpleNamespace):
            options.append(LengthMatch(source, len(value)))
        if isinstance(value, dict):
            options.append(DictKeysMatch(source, tuple(value)))
        if isinstance(value, types.SimpleNamespace):
            attr = draw(st.sampled_from(["a", "b", "c"]))
            options.append(HasAttr(source, attr, hasattr(value, attr)))
    elif isinstance(value, torch.nn.Module):
        options.append(IdentityMatch(source, value))
    else:
        options.append(ConstantMatch(source, value))
        if type(value) is float and math.isfinite(value):
            options.append(FiniteFloat(source))
    return draw(st.lists(st.sampled_from(options), min_size=1, max_size=2))


def rebuilt(value):
    """A structural copy: new containers and objects, the same leaves."""
    if isinstance(value, (list, tuple)):
        return type(value)(rebuilt(v) for v in value)
    if isinstance(value, dict):
        return {k: rebuilt(v) for k, v in value.items()}
    if isinstance(value, types.SimpleNamespace):
        return types.SimpleNamespace(**{k: rebuilt(v) for k, v in vars(value).items()})
    return value


def changed(frame: dict, draw) -> dict:
    """`frame` with up to two random places replaced (or deleted, for attributes)."""
    frame = dict(frame) if draw(st.booleans()) else copy.copy({k: rebuilt(v) for k, v in frame.items()})
    for _ in range(draw(st.integers(0, 2))):
        spots = [(name, s) for name, root in frame.items() for s, _ in places(root, LocalSource(name), into_modules=False)]
        name, source = draw(st.sampled_from(spots))
        replacement = draw(values)
        frame[name] = _replaced(frame[name], _path(source), replacement, draw)
    return frame


def _path(source):
    steps = []
    while not isinstance(source, LocalSource):
        steps.append(source)
        source = source.base
    return list(reversed(steps))


def _replaced(value, steps, replacement, draw):
    if not steps:
        return replacement
    step, rest = steps[0], steps[1:]
    if isinstance(step, ItemSource):
        copy_ = list(value) if isinstance(value, (list, tuple)) else dict(value)
        copy_[step.key] = _replaced(value[step.key], rest, replacement, draw)
        return type(value)(copy_) if isinstance(value, tuple) else copy_
    copy_ = types.SimpleNamespace(**vars(value))
    if not rest and draw(st.booleans()):
        delattr(copy_, step.attr)
    else:
        setattr(copy_, step.attr, _replaced(getattr(value, step.attr), rest, replacement, draw))
    return copy_


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_generated_guard_agrees_with_reference_interpreter(data):
    draw = data.draw
    frame = {"a": draw(values), "b": draw(values)}
    f_globals = {"g": draw(values)}
    spots = [*((s, v) for name, root in frame.items() for s, v in places(root, LocalSource(name))),
             *places(f_globals["g"], GlobalSource("g"))]
    chosen = draw(st.lists(st.sampled_from(spots), min_size=1, max_size=5))
    guards = GuardSet(g for source, value in chosen for g in guards_for(source, value, draw))
    # Tensor checks are grouped from two tensors on here (not 32), so groups meet every
    # other kind.
    saved, tensor_groups.MIN_GROUP = tensor_groups.MIN_GROUP, 2
    try:
        guard = guards.compile(parameters=["a", "b"], f_globals=f_globals)
    finally:
        tensor_groups.MIN_GROUP = saved

    assert all_hold(guards, FrameValues(frame, f_globals))
    assert guard(**frame), guard.why(**frame)

    other = changed(frame, draw)
    expected = all_hold(guards, FrameValues(other, f_globals))
    event(f"changed frame passes: {expected}")  # both outcomes must be common (--hypothesis-show-statistics)
    event(f"tensors grouped: {'tensor_group.check(' in guard.source}")
    assert guard(**other) == expected, (guard.source, guard.why(**other))
    assert (guard.why(**other) is None) == expected
