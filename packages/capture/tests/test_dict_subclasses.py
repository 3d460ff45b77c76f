"""Dict subclasses written in Python, made inside the compiled function or passed in: their
`__getitem__`, `__setitem__` and `__missing__` overrides are traced (never answered by dict's
own behaviour), every other override of a dict special method is refused by name. Each case
runs with fullgraph=True against eager: first call, cache hit with new values, new size."""

from __future__ import annotations

import collections

import pytest
import torch

import capture
from helpers import assert_same, cache_of, check_across_sizes, compile_eager


class CountingMissing(dict):
    def __missing__(self, key):
        return len(key) if isinstance(key, str) else 0


class PlusOne(dict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value + 1)


class Doubled(dict):
    def __getitem__(self, key):
        return 2 * super().__getitem__(key)


class Scaled(dict):
    def scaled(self, x):
        return x * self["k"]


class LenLies(dict):
    def __len__(self):
        return 99


class OrderedPlusOne(collections.OrderedDict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value + 1)


class WithInit(dict):
    def __init__(self, scale):
        super().__init__(k=scale)


def missing_hook(x):
    d = CountingMissing(a=1)
    return x + d["abcd"] + d["a"], d.get("zz") is None, "abcd" in d


def setitem_hook_not_run_by_init(x):
    d = PlusOne(a=x)  # dict.__init__ stores without calling __setitem__
    d["b"] = x
    d.update(c=1)  # nor does dict.update
    return d["a"] + d["b"] + d["c"], d


def getitem_hook(x):
    d = Doubled(k=3)
    return x * d["k"], d.get("k")


def own_method(x):
    d = Scaled(k=3)
    d["k"] = 4
    return d.scaled(x), type(d.copy()) is dict


def default_factory_missing(x):
    d = collections.defaultdict(list)
    d.__missing__("a").append(x)
    return d["a"][0] + len(d), dict(d)


def ordered_dict_clear(x):
    d = collections.OrderedDict(a=1, b=x)
    d.clear()
    return x + len(d), d


@pytest.mark.parametrize(
    "fn", [missing_hook, setitem_hook_not_run_by_init, getitem_hook, own_method, default_factory_missing, ordered_dict_clear]
)
def test_dict_subclass_made_inside(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


def test_input_dict_subclass_with_getitem_override_is_refused():
    # Its items would be read back as d[key] on later calls, running the override.
    def fn(x, d):
        return x + d["a"]

    with pytest.raises(capture.Unsupported, match="overriding __getitem__"):
        compile_eager(fn, fullgraph=True)(torch.randn(3), Doubled(a=torch.randn(3)))


def test_input_dict_subclass_missing_hook_runs():
    def fn(x, d):
        d["b"] = x
        return x + d["a"] + d["zzz"], d

    check_across_sizes(fn, lambda n: (torch.randn(n), CountingMissing(a=torch.randn(n))))


@pytest.mark.parametrize("make", [lambda: LenLies(a=1), lambda: LenLies()])
def test_untraced_override_of_input_is_refused(make):
    def fn(x, d):
        return x + len(d)

    with pytest.raises(capture.Unsupported, match="LenLies.__len__"):
        compile_eager(fn, fullgraph=True)(torch.randn(3), make())


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (lambda x: LenLies(a=1), "LenLies.__len__"),
        (lambda x: OrderedPlusOne(a=1), "overriding __setitem__"),
        (lambda x: WithInit(2), "its own __init__"),
    ],
)
def test_subclasses_capture_cannot_build_are_refused(body, reason):
    def fn(x):
        return x, body(x)

    with pytest.raises(capture.Unsupported, match=reason):
        compile_eager(fn, fullgraph=True)(torch.randn(3))


def test_bad_update_sequence_raises_valueerror_like_eager():
    def fn(x):
        d = {}
        d.update([(1, 2, 3)])
        return x

    with pytest.raises(ValueError) as eager:
        fn(torch.randn(2))
    with pytest.raises(ValueError, match=str(eager.value)):
        compile_eager(fn, fullgraph=True)(torch.randn(2))


def test_input_dict_subclass_with_its_own_init():
    # Its __init__ ran before the call: only what the trace does to it matters.
    def fn(x, d):
        d["k"] = d["k"] + 1
        return x * d["k"]

    compiled = compile_eager(fn, fullgraph=True)
    for n in (4, 4, 7):  # first call, cache hit with new values, new size
        x = torch.randn(n)
        eager_d, compiled_d = WithInit(n), WithInit(n)
        torch.testing.assert_close(compiled(x, compiled_d), fn(x, eager_d))
        assert compiled_d == eager_d and type(compiled_d) is WithInit


def test_overrides_of_a_class_without_a_module_name_are_seen():
    # A class exec'd in a namespace without __name__ claims the module "builtins".
    namespace = {}
    exec("class Lying(dict):\n    def __len__(self):\n        return 99\n", namespace)
    lying = namespace["Lying"]
    assert lying.__module__ == "builtins"

    def fn(x, d):
        return x + len(d)

    with pytest.raises(capture.Unsupported, match="Lying.__len__"):
        compile_eager(fn, fullgraph=True)(torch.randn(3), lying(a=1))



class LoggedOrdered(collections.OrderedDict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2)


def ordered_update_and_setdefault(x, od):
    od.update(b=x)
    od.update([("c", x + 1)])
    od.update({"d": x - 1})
    first = od.setdefault("e", x * 3)
    again = od.setdefault("e", x)
    plain = collections.OrderedDict()
    plain.update(z=x)
    return first, again, dict(od), dict(plain)


def test_ordered_dict_subclass_update_and_setdefault_store_through_setitem():
    # OrderedDict's update and setdefault are `self[k] = v` (a subclass's __setitem__ runs),
    # dict's are not. Before: they stored directly, the values came back undoubled. (Building
    # one inside is refused, so it reaches compiled code as an input, a resume function's too.)
    compiled = compile_eager(ordered_update_and_setdefault, fullgraph=True)
    for n in (3, 3, 5):
        x = torch.randn(n)
        eager_od, compiled_od = LoggedOrdered(a=x), LoggedOrdered(a=x)
        expected, actual = ordered_update_and_setdefault(x, eager_od), compiled(x, compiled_od)
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(dict(compiled_od), dict(eager_od))


def set_through_override(x, od):
    od["b"] = x
    od["a"] = od["a"] + 1
    return x.sum()


def test_mutated_ordered_dict_subclass_is_refilled_without_its_own_setitem():
    # The entry refills a mutated input dict after the graph; through the subclass's own
    # __setitem__ (od.update) every value was doubled a second time. Before: 'a' and 'b' came
    # back 4x where eager has 2x.
    compiled = compile_eager(set_through_override, fullgraph=True)
    for n in (3, 3, 5):
        x = torch.randn(n)
        eager_od, compiled_od = LoggedOrdered(a=x), LoggedOrdered(a=x)
        torch.testing.assert_close(compiled(x, compiled_od), set_through_override(x, eager_od))
        torch.testing.assert_close(dict(compiled_od), dict(eager_od))
        assert list(compiled_od) == list(eager_od)



def compare_with_fresh_inputs(fn, make_od):
    """Each side gets its own dict made by `make_od` (a copy would run the subclass's
    __setitem__ again): first call, cache hit, new size; one graph, no break."""
    compiled = compile_eager(fn, fullgraph=True)
    for n in (3, 3, 5):
        x = torch.randn(n)
        eager_od, compiled_od = make_od(x), make_od(x)
        assert_same(compiled(x, compiled_od), fn(x, eager_od), "result")
        assert_same(list(compiled_od.items()), list(eager_od.items()), "the dict afterwards")
    assert not cache_of(compiled).compilation.breaks


def ordered_update_from_iterators(x, od):
    od.update(iter([("b", x)]))
    od.update((key, x * len(od)) for key in ("c", "d"))  # a generator reading the dict as it fills
    od.update(zip(["e"], [x - 1]), f=x + 2)
    return x.sum(), list(od.items())


def test_ordered_dict_subclass_update_from_an_iterator_stores_each_pair_through_setitem():
    # MutableMapping.update: `self[k] = v` for each pair as the iterable yields it. Before: the
    # graph broke at every update from an iterator (refused).
    compare_with_fresh_inputs(ordered_update_from_iterators, lambda x: LoggedOrdered(a=x))


class OrderedTimesTen(collections.OrderedDict):
    def __getitem__(self, key):
        return 10 * super().__getitem__(key)


class OrderedMissingAndLogged(LoggedOrdered):
    def __missing__(self, key):
        return 99


def ordered_setdefault(x):
    od = OrderedTimesTen(a=1)
    return x * od.setdefault("a", 5) + od.setdefault("new", 7), list(od.items())


def ordered_setdefault_of_input(x, od):
    return x * od.setdefault("a", 5) + od.setdefault("new", 7), list(od.items())


def test_ordered_dict_subclass_setdefault_reads_through_its_own_getitem():
    # CPython's OrderedDict.setdefault of a subclass is `self[key]` when `key in self`, else
    # `self[key] = default` returning default (never __missing__). Before: an existing key's
    # value came back without the subclass's __getitem__ (x*1+7, eager x*10+7), and a missing
    # key with a __missing__ was refused.
    check_across_sizes(ordered_setdefault, lambda n: (torch.randn(n),))
    compare_with_fresh_inputs(ordered_setdefault_of_input, lambda x: OrderedMissingAndLogged(a=2))
