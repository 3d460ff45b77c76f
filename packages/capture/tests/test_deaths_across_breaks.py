"""An object dies where eager's frame drops its last reference (`del`, a rebinding), also
across graph breaks: weak references answer None and run their callbacks, WeakValueDictionary
entries go, `weakref.finalize` and `__del__` run in eager's order, and a big tensor deleted
before a break is not held through the rest of the function.

The tail-call chain (dispatcher, resume function, entry) used to hold every argument of a
segment until its entry returned, and the trace read weak references while its own argument
held the object (capture.runtime.tail_call, capture.values.lifetime). Every case compares with
eager on fresh objects and values: the capturing call, a cache hit and a new size; the cases
that hand objects from segment to segment also under a frame-evaluation hook (PEP 523), with
which a caller's stack holds a call's arguments until the callee returns: torch installs one
while torch.compile'd code runs and leaves it installed after a compile that failed.
"""

from __future__ import annotations

import gc
import sys
import weakref

import pytest
import torch
import torch._dynamo  # the hooked tests' frame-evaluation hook (its run-only mode: no compiler runs)

import capture

pytestmark = pytest.mark.usefixtures("frozen_heap")

LOG: list = []


class Obj:
    def __init__(self, t):
        self.t = t


class Finalized:
    """Logs its own end."""

    def __init__(self, name, t):
        self.name = name
        self.t = t

    def __del__(self):
        LOG.append(f"del {self.name}")


def ref_dead_after_del(x):
    o = Obj(x)
    r = weakref.ref(o)
    del o
    return x + 1, r() is None


def ref_callback_runs_at_death(x):
    log = []
    o = Obj(x)
    r = weakref.ref(o, lambda ref: log.append("dead"))
    y = o.t + 1
    del o
    log.append("after del")
    return y, log, r() is None


def weak_value_entry_gone(x):
    d = weakref.WeakValueDictionary()
    o = Obj(x)
    d["k"] = o
    n = len(d)
    del o
    return x * 2, n, len(d)


def rebinding_ends_the_first(x):
    o = Obj(x)
    r = weakref.ref(o)
    o = Obj(x * 2)
    return o.t + 1, r() is None


def finalizer_runs_at_del(x):
    log = []
    o = Obj(x)
    weakref.finalize(o, log.append, "finalized")
    y = o.t.sin()
    del o
    log.append("after del")
    return y, log


def dunder_del_at_del_without_a_break(x):
    LOG.clear()
    o = Finalized("o", x)
    y = o.t + 1
    del o
    LOG.append("after")
    return y, list(LOG)


def dunder_del_order_across_a_break(x):
    LOG.clear()
    a = Finalized("a", x)
    b = Finalized("b", x + 1)
    print(end="")
    y = a.t + b.t
    del b
    LOG.append("between")
    del a
    gc.collect()
    return y, list(LOG)


def dunder_del_in_a_loop_run_eagerly(x):
    LOG.clear()
    out = []
    for i in range(6):
        o = Finalized(str(i), x)  # made natively: the resume function starts at the store
        out.append(o.t * i)  # a list that grows: the loop's rest runs eagerly
        del o
        LOG.append(f"after {i}")
    return torch.stack(out), list(LOG)


def dunder_del_of_a_cell_across_a_break(x):
    LOG.clear()
    k = 3
    o = Finalized("o", x)
    # `o` and `k` are cells: the resume function takes the cells (ruff: `o` is deleted below)
    get = lambda: o.t + k  # noqa: E731, F821
    print(end="")
    y = get()
    k = 5
    z = get()
    del o
    LOG.append("after")
    return y, z, list(LOG)


def dunder_del_at_a_closure_variables_rebinding(x):
    LOG.clear()
    o = Finalized("o", x)
    get = lambda: o.t  # noqa: E731  (`o` is a cell)
    y = get() + 1
    o = None  # the cell's object dies here
    LOG.append("after")
    return y, list(LOG)


def dunder_del_at_a_nonlocal_rebinding(x):
    LOG.clear()
    o = Finalized("o", x)

    def drop():
        nonlocal o
        y = o.t + 1
        o = None
        LOG.append("after")
        return y

    return drop(), list(LOG)


def refcount_after_a_break(x):
    o = Obj(x)
    print(end="")
    n = sys.getrefcount(o)
    return x + 1, n


CASES = [
    ref_dead_after_del,
    ref_callback_runs_at_death,
    weak_value_entry_gone,
    rebinding_ends_the_first,
    finalizer_runs_at_del,
    dunder_del_at_del_without_a_break,
    dunder_del_order_across_a_break,
    dunder_del_in_a_loop_run_eagerly,
    dunder_del_of_a_cell_across_a_break,
    dunder_del_at_a_closure_variables_rebinding,
    dunder_del_at_a_nonlocal_rebinding,
]


def _assert_same(actual, expected):
    assert type(actual) is type(expected)
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected)
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            _assert_same(a, e)
    else:
        assert actual == expected


@pytest.fixture(params=[False, True], ids=["no_hook", "under_a_frame_evaluation_hook"])
def hooked(request):
    """Runs a test's body as it is, or under torch's frame-evaluation hook (installed for the
    body, removed after it)."""

    def run(body):
        return torch._dynamo.run(body)() if request.param else body()

    return run


def test_the_hook_keeps_call_arguments_on_the_callers_stack():
    """What the hooked tests rely on: without capture, a callee's `del` does not free an object
    passed as a temporary while the hook is installed. (Without it, it does, unless torch left
    its hook installed after a failed compile earlier in the process.)"""

    def callee(o):
        r = weakref.ref(o)
        del o
        return r() is None

    def caller():
        return callee(Obj(None))

    assert not torch._dynamo.run(caller)()


@pytest.mark.parametrize("fn", CASES, ids=lambda fn: fn.__name__)
def test_objects_die_where_eager_drops_them(fn, hooked):
    def body():
        compiled = capture.optimize(fn, capture.backends.eager)
        for size in (4, 4, 7):
            x = torch.randn(size)
            _assert_same(compiled(x), fn(x))

    hooked(body)


def test_refcount_after_a_break_matches_eager_once_captured(hooked):
    hooked(_refcount_after_a_break_matches_eager_once_captured)


def _refcount_after_a_break_matches_eager_once_captured():
    # The capturing call's values sit in the capture's reference cycles until the collector
    # runs; the calls after it see eager's count.
    compiled = capture.optimize(refcount_after_a_break, capture.backends.eager)
    compiled(torch.randn(3))
    for size in (3, 5):
        x = torch.randn(size)
        assert compiled(x)[1] == refcount_after_a_break(x)[1]


SEEN: list = []


@capture.disable
def _record_whether_freed(ref):
    SEEN.append(ref() is None)


def big_intermediate_deleted_between_breaks(x):
    y = x * 2
    r = weakref.ref(y)  # made natively: a graph break
    z = y.sum()
    del y
    _record_whether_freed(r)
    w = (x + 1) * z
    _record_whether_freed(r)
    return w


def test_a_deleted_intermediate_is_not_held_through_the_rest_of_the_function(hooked):
    """Peak memory: the tensor `y` is freed at `del y`, before the rest runs, as in eager.
    (On the capturing call the capture's values hold it until the collector runs: tensors'
    ends are not watched closely enough to pay for a collection after every capture.)"""
    hooked(_a_deleted_intermediate_is_not_held)


def _a_deleted_intermediate_is_not_held():
    compiled = capture.optimize(big_intermediate_deleted_between_breaks, capture.backends.eager)
    for size in (1000, 2000):
        compiled(torch.randn(size))  # captures: a static entry, then one of symbolic size
    for size in (1000, 3000):
        x = torch.randn(size)
        SEEN.clear()
        expected = big_intermediate_deleted_between_breaks(x)
        eager_seen = list(SEEN)
        SEEN.clear()
        torch.testing.assert_close(compiled(x), expected)
        assert SEEN == eager_seen == [True, True]


def rebinds_objects_other_locals_hold(x, a, b):
    total = x
    for o in [a, b]:  # `o` is rebound; `a` and `b` still hold what it dropped
        total = total + o.t
    return total


def test_rebinding_a_watched_object_another_local_holds_does_not_break():
    a, b = Obj(torch.randn(3)), Obj(torch.randn(3))
    refs = [weakref.ref(a), weakref.ref(b)]  # watched: a drop of the last reference would show
    compiled = capture.optimize(rebinds_objects_other_locals_hold, capture.backends.eager)
    x = torch.randn(3)
    _assert_same(compiled(x, a, b), rebinds_objects_other_locals_hold(x, a, b))
    assert not capture_breaks(compiled) and all(r() is not None for r in refs)


def capture_breaks(compiled) -> list:
    return compiled._capture_cache.compilation.breaks


def argument_deleted_after_a_break(o, x):
    r = weakref.ref(o)  # made natively: a graph break
    y = o.t + x
    del o
    return y, r() is None


def test_an_argument_passed_as_a_temporary_dies_at_its_del(hooked):
    """The caller's temporary belongs to the function's frame alone, in eager as compiled: the
    dispatcher lets go of its arguments once the entry has handed over to a resume function.
    (Under a hook the caller's stack holds it in both.)"""
    hooked(_an_argument_passed_as_a_temporary_dies_at_its_del)


def _an_argument_passed_as_a_temporary_dies_at_its_del():
    compiled = capture.optimize(argument_deleted_after_a_break, capture.backends.eager)
    compiled(Obj(torch.randn(3)), torch.randn(3))  # captures (its values hold the arguments)
    for size in (3, 5, 5):
        t, x = torch.randn(size), torch.randn(size)
        _assert_same(compiled(Obj(t), x), argument_deleted_after_a_break(Obj(t), x))


def loops_over_modules_built_inside(x):
    layers = torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid()])
    for layer in layers:  # `layer` is rebound: the list still holds what it dropped
        x = layer(x) - 0.5
    return x


def test_modules_torch_compile_tracks_are_not_watched_by_the_program():
    """Once torch.compile has run in the process, torch files every nn.Module built afterwards
    under a weak reference of its own: no program sees it, so a loop variable rebound over
    modules is traced, not a graph break (fullgraph refused it)."""
    torch.compile(lambda t: t + 1, backend="eager")(torch.randn(2))
    assert weakref.getweakrefcount(torch.nn.ReLU()) > 0  # what the check must see past
    compiled = capture.optimize(loops_over_modules_built_inside, capture.backends.eager, fullgraph=True)
    for n in (3, 3, 5):
        x = torch.randn(2, n)
        torch.testing.assert_close(compiled(x), loops_over_modules_built_inside(x))


def _cycle_holding(obj) -> dict:
    cycle: dict = {"obj": obj}
    cycle["self"] = cycle
    return cycle


@pytest.mark.parametrize("promoted", [False, True], ids=["young_cycle", "cycle_moved_to_the_oldest_generation"])
def test_collection_after_a_capture_frees_cycles_made_during_it(promoted):
    # A capture's values sit in reference cycles holding the arguments; after it, only the
    # generations its garbage can be in are collected, unless an older collection ran meanwhile.
    from capture.runtime.cache import _collect_since, _older_generation_collections

    gc.collect()
    LOG.clear()
    before = _older_generation_collections()
    live = [_cycle_holding(Finalized("held", torch.randn(2)))]
    if promoted:
        gc.collect(1)  # as a long capture's allocations would: the live cycle moves to the oldest generation
    live.clear()
    _collect_since(before)
    assert LOG == ["del held"]


def deletes_a_closure_variable(x, twice):
    LOG.clear()
    o = Finalized("o", x)
    get = lambda: o.t  # noqa: E731, F821  (`o` is a cell, deleted below)
    y = get() + 1
    del o
    LOG.append("after")
    if twice:
        del o  # noqa: F821  (UnboundLocalError, as in eager)
    return y * 2, list(LOG)


@pytest.mark.parametrize("twice", [False, True], ids=["once", "twice"])
def test_a_deleted_closure_variable_dies_there_and_the_rest_is_compiled(twice):
    """`del o` of a cell variable runs natively between two graphs, then the function resumes
    compiled (it used to run the rest eagerly)."""
    compiled = capture.optimize(deletes_a_closure_variable, capture.backends.eager)
    for size in (4, 4, 7):
        x = torch.randn(size)
        if twice:
            with pytest.raises(UnboundLocalError) as eager:
                deletes_a_closure_variable(x, twice)
            with pytest.raises(UnboundLocalError) as ours:
                compiled(x, twice)
            assert str(ours.value) == str(eager.value)
        else:
            _assert_same(compiled(x, twice), deletes_a_closure_variable(x, twice))
    assert all(b.outcome == "resumed" for b in capture_breaks(compiled))
