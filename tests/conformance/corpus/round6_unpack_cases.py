"""Unpacking as CPython's test_unpack and test_unpack_ex check it (recast in our own words), with
tensors and their sizes as the things unpacked, so that the third call (a new size) unpacks
another count of rows or raises where the first did not: targets of every kind (names, starred
names, attributes, subscripts, nested tuples) assigned left to right after the right side is
evaluated whole, iteration of tensors by rows (views of the tensor), generators consumed only as
far as unpacking needs, starred displays and calls, and the errors unpacking raises.
"""

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break

SOURCE = "cpython/test_unpack"
SOURCE_EX = "cpython/test_unpack_ex"


class Box:
    pass


class LoggingList(list):
    """A list recording its item writes, to see the order targets are assigned in."""

    def __init__(self, *args):
        super().__init__(*args)
        self.log = []

    def __setitem__(self, key, value):
        self.log.append(key)
        super().__setitem__(key, value)


class Rows:
    """An iterable over a tensor's rows that counts how often it was iterated."""

    def __init__(self, t):
        self.t = t
        self.iters = 0

    def __iter__(self):
        self.iters += 1
        return iter(self.t.unbind(0))


NS = {"torch": torch, "Box": Box, "LoggingList": LoggingList, "Rows": Rows, "brk": graph_break}

BASIC = [
    ("tensor_rows_fixed_count", "try:\n    a, b, c, d = x\nexcept ValueError as e:\n    return x * 0, str(e)\nreturn a + b * c - d"),
    ("tensor_rows_star_rest", "a, b, *rest = x\nreturn a, b, len(rest), sum(rest)"),
    ("tensor_rows_star_front", "*front, last = x\nreturn torch.stack(front) - last"),
    ("tensor_rows_star_middle_views", "first, *mid, last = x\nmid[0].mul_(10)\nreturn x, first + last"),
    ("tensor_rows_star_only", "*rows, = x\nrows[-1].add_(1)\nreturn x, type(rows).__name__"),
    ("matrix_rows_are_views", "m = x.reshape(-1, 1)\nr0, *others = m\nr0.fill_(5)\nreturn m, len(others)"),
    ("shape_unpacked", "m = x.unsqueeze(0)\nrows, cols = m.shape\nreturn x * rows + cols, cols"),
    ("shape_star", "m = x.view(1, 1, -1)\n*lead, n = m.shape\nreturn x + n, lead, type(lead).__name__"),
    ("range_of_size_star", "a, *b = range(x.shape[0])\nreturn x + a, b"),
    ("string_unpacked", "a, b, c = 'xyz' if x.shape[0] > 5 else 'abc'\nreturn x, a + c + b"),
    ("dict_unpacks_keys", "d = {'p': x, 'q': x.shape[0]}\na, b = d\nreturn d[a] + d[b], a, b"),
    ("set_of_one_unpacked", "(a,) = {x.shape[0]}\nreturn x + a"),
    ("nested_tuple_targets", "(a, b), (c, *d) = (x[0], x[1]), x[2:]\nreturn a + b + c, len(d)"),
    ("nested_for_target", "out = []\nfor i, (a, *rest) in enumerate([(x, 1, 2), (x * 2, 3)]):\n    out.append(a * i + sum(rest))\nreturn out"),
    ("zip_pairs_unpacked", "(a, b), (c, d) = zip(x[:2], x[2:4])\nreturn a * b - c * d"),
    ("comprehension_unpacks", "return [a * b for a, b in zip(x, x.flip(0))]"),
    ("swap_names", "a, b = x, x * 2\na, b = b, a\nreturn a - b"),
    ("rotate_three", "a, b, c = x, x + 1, x + 2\na, b, c = c, a, b\nreturn a, b, c"),
    ("target_order_uses_new_index", "a = [x, x + 1]\ni, a[i] = 1, x * 10\nreturn a, i"),
    ("targets_attr_item_logged", "o = Box()\nl = LoggingList([None, None])\no.v, l[1], l[0] = x, x + 1, x + 2\nreturn o.v, list(l), l.log"),
    ("custom_iterable_iterated_once", "r = Rows(x)\nfirst, *rest = r\nreturn first, len(rest), r.iters"),
    ("unpack_across_break", "a, *rest = x\nbrk()\nreturn a + len(rest), rest[-1]"),
    ("unpack_none_type_error", "try:\n    a, b = None\nexcept TypeError as e:\n    return x, str(e)"),
    ("unpack_int_type_error", "try:\n    a, b = x.shape[0]\nexcept TypeError as e:\n    return x, str(e)"),
    ("unpack_zero_dim_tensor_error", "try:\n    a, b = x.sum()\nexcept TypeError as e:\n    return x, type(e).__name__"),
    ("unpack_too_few", "try:\n    a, *b, c = x[:1]\nexcept ValueError as e:\n    return x, str(e)\nreturn a"),
    ("unpack_too_many_list", "try:\n    a, b = list(range(x.shape[0]))\nexcept ValueError as e:\n    return x, str(e)"),
    ("generator_consumed_as_needed", "log = []\ndef gen():\n    for i in range(x.shape[0]):\n        log.append(i)\n        yield x[i]\ntry:\n    a, b = gen()\nexcept ValueError as e:\n    return log, str(e)"),
    ("generator_star_consumes_all", "log = []\ndef gen():\n    for i in range(x.shape[0]):\n        log.append(i)\n        yield i\na, *b = gen()\nreturn x + a, b, log"),
    ("iterator_left_after_partial", "it = iter(x)\na = next(it)\nb, *c = it\nreturn a + b, len(c)"),
]
sampled_snippets(SOURCE, "r6_unpack", BASIC, namespace=NS)

DISPLAYS = [
    ("list_display_of_shape_and_range", "return x, [*x.shape, *range(2), *'ab']"),
    ("tuple_display_of_rows", "t = (*x, x.sum())\nreturn torch.stack(t), len(t)"),
    ("set_display_merges", "s = {*range(x.shape[0]), *range(2, 6)}\nreturn x, sorted(s)"),
    ("dict_display_later_wins", "a = {'k': 1, 'n': x.shape[0]}\nb = {'k': x, 'm': 2}\nd = {**a, **b, 'n': -1}\nreturn d, list(d)"),
    ("call_with_star_rows", "return torch.stack([*x.unbind(), x.sum()])"),
    ("call_star_and_kwargs", "def g(a, b, *rest, scale=1, **kw):\n    return (a + b) * scale, len(rest), sorted(kw)\nopts = {'scale': x.shape[0], 'z': 0}\nreturn g(*x, **opts)"),
    ("call_star_twice", "def g(*args):\n    return len(args), args[-1]\nreturn g(*x.shape, *x[:2], *[x.shape[0]])"),
    ("call_kwargs_duplicate_error", "def g(**kw):\n    return kw\ntry:\n    g(**{'a': x}, **{'a': 1})\nexcept TypeError as e:\n    return x, 'TypeError'"),
    ("star_of_generator_in_call", "return torch.cat((*(r.unsqueeze(0) * i for i, r in enumerate(x)),))"),
    ("star_in_subscript_tuple", "m = x.reshape(1, -1)\nidx = (0, slice(1, None))\nreturn m[(*idx,)]"),
    ("star_of_dict_items", "d = {'a': x, 'b': x * 2}\n(k1, v1), (k2, v2) = d.items()\nreturn k1 + k2, v1 - v2"),
    ("star_in_return_tuple", "a, *b = x\nreturn (*b, a)"),
    ("star_in_for_iterable", "out = 0\nfor v in (*x[:2], *x[-2:]):\n    out = out + v\nreturn out"),
    ("star_unpack_enumerate", "idx, *vals = zip(*enumerate(x))\nreturn idx, len(vals[0])"),
]
sampled_snippets(SOURCE_EX, "r6_unpack_ex", DISPLAYS, namespace=NS)
