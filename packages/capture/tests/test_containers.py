"""Tuples, lists, dicts and sets of tensors: building, indexing, methods, unpacking,
comprehensions, and containers returned to the caller."""

from __future__ import annotations

import collections

import torch

from helpers import check, compile_eager


def two():
    return torch.randn(3, 4), torch.randn(3, 4)


Pair = collections.namedtuple("Pair", ["first", "second"])


def test_list_methods():
    def fn(x, y):
        items = [x]
        items.append(y)
        items.extend([x * 2, y * 2])
        items.insert(0, x + y)
        last = items.pop()
        items.remove(items[0])
        items.reverse()
        return items, last, items.index(items[0]), len(items)

    check(fn, two)


def test_tuple_indexing_slicing_and_concatenation():
    def fn(x, y):
        t = (x, y, x + y)
        return t[0] + t[-1], t[1:] + (x,), t[::-1][0], (x,) * 2

    check(fn, two)


def test_dict_methods():
    def fn(x, y):
        d = {"x": x, "y": y}
        d["z"] = d["x"] + d.get("y")
        d.update(w=x * 2)
        popped = d.pop("x")
        d.setdefault("v", y)
        keys = list(d.keys())
        return {k: v.sum() for k, v in d.items()}, popped, keys, "w" in d, d.get("missing", 0)

    check(fn, two)


def test_a_key_stored_again_keeps_the_key_first_stored():
    # 1, 1.0 and True are one key: CPython replaces the value and keeps the first key object.
    def fn(x, y):
        displays = ({1: "a", True: "b", 1.0: "c"}, {k: x for k in (1.0, 1, True)}, {**{1: x}, **{1.0: y}})  # noqa: F601
        d = dict([(1, x), (1.0, y)])
        d[True] = x + y
        d.update({1.0: y}, **{})
        od = collections.OrderedDict.fromkeys([True, 1, 1.0])
        made = (*displays, d, od)
        return made, [[type(k).__name__ for k in m] for m in made]

    check(fn, two)


def test_ordered_dict_keeps_its_type():
    def fn(x, y):
        d = collections.OrderedDict()
        d["b"] = x
        d["a"] = y
        return d

    check(fn, two)


def test_sets_of_constants():
    def fn(x, y):
        seen = {1, 2}
        seen.add(3)
        return x * len(seen) + (2 in seen)

    check(fn, two)


def test_unpacking_with_star():
    def fn(x, y):
        first, *middle, last = [x, y, x + y, x - y]
        (a, b), c = (x, y), x
        return first + last + sum(middle) + a + b + c

    check(fn, two)


def test_comprehensions():
    def fn(x, y):
        squares = [t * t for t in (x, y) if t is not None]
        table = {i: t for i, t in enumerate(squares)}
        sizes = {s for s in x.shape}
        total = sum(t.sum() for t in squares)
        return squares, table, sizes, total

    check(fn, two)


def test_namedtuple_fields():
    def fn(x, y):
        p = Pair(x, y)
        return p.first + p[1], Pair(first=y, second=x)

    check(fn, two)


def test_nested_containers_returned():
    def fn(x, y):
        return {"pairs": [(x, y), (y, x)], "meta": {"rows": x.shape[0], "name": "t"}}

    check(fn, two)


def test_containers_passed_in():
    def fn(tensors, options):
        scale = options["scale"]
        return [t * scale for t in tensors], tuple(tensors[::-1])

    check(fn, lambda: (([torch.randn(2), torch.randn(2)], {"scale": 3}), {}))


class _Key:
    """A dict key with no Python spelling (neither a literal nor an importable name)."""


_FIRST, _SECOND = _Key(), _Key()


def test_dicts_keyed_by_objects_without_spelling_read_their_values_anew():
    # Values are read by position, `d[list(d.keys())[i]]`: they were once constants of the
    # entry, so every later call saw the first call's tensors. torch's own
    # `_group_tensors_by_device_and_dtype` returns such a dict, keyed by (device, dtype).
    def by_object(groups):
        return groups[_FIRST] * 2 + groups[_SECOND].sum()

    def by_device_and_dtype(groups):
        return [t.sum() for key, (tensors, _) in groups.items() for t in tensors]

    check(by_object, lambda: ({_FIRST: torch.randn(3), _SECOND: torch.randn(2)},), calls=3)
    key = (torch.device("cpu"), torch.float32)
    check(by_device_and_dtype, lambda: ({key: ([torch.randn(2), torch.randn(3)], [0, 1])},), calls=3)


def test_zip_and_enumerate_over_containers():
    def fn(x, y):
        out = []
        for i, (a, b) in enumerate(zip([x, y], (y, x))):
            out.append(a * i + b)
        return out

    check(fn, two)


def test_tensor_unpacking_and_iteration():
    def fn(x, y):
        a, b, c = x
        return a + b + c + sum(row for row in y)

    check(fn, two)


def test_string_formatting():
    def fn(x, y):
        label = f"{x.shape[0]}x{x.shape[1]:03d}-{x.dtype!s}"
        return x, label, "%d rows" % x.shape[0], "{}-{}".format(1, "a")

    check(fn, two)


def test_returned_inputs_keep_their_identity():
    def fn(items, pair, options):
        return items, pair, options

    compiled = check(fn, lambda: (([torch.randn(2)], (torch.randn(2), 1), {"k": 1}), {}))
    args = ([torch.randn(2)], (torch.randn(2), 1), {"k": 1})
    assert all(a is b for a, b in zip(compiled(*args), args))


def test_list_repeated_in_place_is_the_same_list():
    """`lst *= n` changes the list itself: an alias, and a list passed in, see it."""

    def fn(x, passed):
        lst = [x, 1]
        alias = lst
        lst *= x.shape[0] - 2
        passed *= 2
        return len(alias), lst is alias, alias[-1]

    compiled = compile_eager(fn)
    for n in (4, 4, 7):
        x = torch.randn(n)
        eager_list, compiled_list = [1, 2], [1, 2]
        assert compiled(x, compiled_list) == fn(x, eager_list)
        assert compiled_list == eager_list
