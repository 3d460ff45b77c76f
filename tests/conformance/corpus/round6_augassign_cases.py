"""Augmented assignment as CPython's test_augassign checks it (recast in our own words), over
tensors, their sizes and Python containers: `+=` on a tensor writes it in place (every alias sees
it, the caller's input included), on a tuple or an int it rebinds, on a list it extends (a tensor
extends by rows); the target's subscript and attribute are evaluated once; __iadd__ returning
NotImplemented falls back to __add__ then __radd__; and the in-place writes eager refuses (an int
tensor divided in place, a broadcast target, overlapping or expanded memory, in-place matmul)
raise as eager's do.
"""

import collections

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break

SOURCE = "cpython/test_augassign"


class Acc:
    """In-place add defined; records which method ran."""

    def __init__(self, v):
        self.v = v
        self.log = []

    def __iadd__(self, other):
        self.log.append("iadd")
        self.v = self.v + other
        return self

    def __add__(self, other):
        self.log.append("add")
        return Acc(self.v + other)


class NoInplace:
    """__iadd__ declines: `+=` falls back to __add__, which declines too, then other's __radd__."""

    def __init__(self, v):
        self.v = v

    def __iadd__(self, other):
        return NotImplemented

    def __add__(self, other):
        if isinstance(other, NoInplace):
            return NoInplace(self.v + other.v)
        return NotImplemented


class Right:
    def __init__(self, v):
        self.v = v

    def __radd__(self, other):
        return ("radd", other.v * self.v)


class Swapper:
    """__iadd__ hands back another object: the name is rebound to it."""

    def __iadd__(self, other):
        return [other]


class Logged:
    """Item and attribute reads and writes, in order."""

    def __init__(self, data):
        self.data = dict(data)
        self.log = []
        self._w = data.get("w")

    def __getitem__(self, key):
        self.log.append(("get", key))
        return self.data[key]

    def __setitem__(self, key, value):
        self.log.append(("set", key))
        self.data[key] = value

    @property
    def w(self):
        self.log.append("get w")
        return self._w

    @w.setter
    def w(self, value):
        self.log.append("set w")
        self._w = value


NS = {
    "torch": torch,
    "collections": collections,
    "Acc": Acc,
    "NoInplace": NoInplace,
    "Right": Right,
    "Swapper": Swapper,
    "Logged": Logged,
    "brk": graph_break,
}

TENSORS = [
    ("tensor_iadd_writes_input", "x += 1\nreturn x"),
    ("tensor_iadd_alias_sees_it", "y = x\ny += x.shape[0]\nreturn y is x"),
    ("tensor_imul_view_writes_base", "v = x[1:]\nv *= 2\nreturn x"),
    ("tensor_isub_transposed_view", "m = x.reshape(1, -1)\nt = m.t()\nt -= 1\nreturn x, t.shape"),
    ("tensor_item_iadd", "x[0] += 10\nx[-1] -= x[0]\nreturn x"),
    ("tensor_mask_imul", "x[x > 0] *= 2\nreturn x"),
    ("tensor_repeated_index_iadd_once", "idx = torch.tensor([0, 0, 1])\nx[idx] += 1\nreturn x"),
    ("tensor_slice_iadd_from_other_slice", "n = x.shape[0] // 2\nx[:n] += x[n:2 * n]\nreturn x"),
    ("tensor_column_iadd", "m = x.reshape(-1, 1).repeat(1, 3)\nm[:, 1] += m[:, 0]\nreturn m"),
    ("tensor_overlapping_iadd_raises", "try:\n    x[1:] += x[:-1]\nexcept RuntimeError as e:\n    return x, 'RuntimeError'\nreturn x"),
    ("tensor_expanded_iadd_raises", "b = x.expand(3, x.shape[0])\ntry:\n    b += 1\nexcept RuntimeError:\n    return x, 'RuntimeError'\nreturn b"),
    ("tensor_broadcast_target_raises", "y = x.unsqueeze(0).repeat(2, 1)\ntry:\n    x += y\nexcept RuntimeError:\n    return x, 'RuntimeError'\nreturn x"),
    ("int_tensor_itruediv_raises", "i = torch.arange(x.shape[0])\ntry:\n    i /= 2\nexcept RuntimeError:\n    return x, i, 'RuntimeError'\nreturn i"),
    ("int_tensor_iadd_float_raises", "i = torch.arange(x.shape[0])\ntry:\n    i += 1.5\nexcept RuntimeError:\n    return x, i, 'RuntimeError'\nreturn i"),
    ("int_tensor_ifloordiv", "i = torch.arange(x.shape[0]) - 3\ni //= 2\ni %= 3\nreturn x, i"),
    ("float_tensor_iadd_double_keeps_dtype", "x += torch.ones(x.shape[0], dtype=torch.float64)\nreturn x, x.dtype"),
    ("tensor_imatmul_raises", "m = torch.eye(x.shape[0])\ntry:\n    x @= m\nexcept RuntimeError:\n    return x, 'RuntimeError'\nreturn x"),
    ("tensor_ipow_and_iand", "b = (x > 0)\nb &= x < 1\nb |= x < -1\nb ^= x > 2\nx **= 2\nreturn x, b"),
    ("tensor_ishift_int", "i = torch.arange(x.shape[0])\ni <<= 2\ni >>= 1\nreturn x, i"),
    ("tensor_iadd_zero_dim_into_rows", "s = x.sum()\nfor r in x:\n    r += s\nreturn x"),
    ("tensor_iadd_across_break", "x += 1\nbrk()\nx *= 3\nreturn x.sum()"),
    ("tensor_iadd_in_loop_of_list", "ts = [x, x[:2], x[1:3]]\nfor t in ts:\n    t += 1\nreturn x"),
    ("tensor_iadd_detached_alias", "d = x.detach()\nd += 1\nreturn x"),
    ("tensor_iadd_grad_leaf_raises", "w = x.clone().requires_grad_()\ntry:\n    w += 1\nexcept RuntimeError:\n    return x, 'RuntimeError'\nreturn w", {"train": True}),
    ("tensor_iadd_nonleaf_grad", "w = x * 2\nw += 1\nw *= x\nreturn w", {"train": True, "make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("tensor_iadd_view_of_nonleaf_grad", "w = x * 1\nw[1:] *= 3\nreturn w", {"train": True, "make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
]
sampled_snippets(SOURCE, "r6_aug_tensor", TENSORS, namespace=NS)

PYTHON = [
    ("int_size_chain", "n = x.shape[0]\nn += 3\nn *= 2\nn //= 3\nn **= 2\nn %= 7\nn <<= 2\nn >>= 1\nn ^= 5\nn |= 8\nn &= 13\nn -= 1\nreturn x + n, n"),
    ("int_size_itruediv_is_float", "n = x.shape[0]\nn /= 4\nreturn x * n, n, type(n).__name__"),
    ("float_from_size", "f = 0.5\nf += x.shape[0]\nf *= 1.5\nf //= 2\nreturn x + f, f"),
    ("bool_plus_size", "b = True\nb += x.shape[0]\nreturn x, b, type(b).__name__"),
    ("tuple_iadd_rebinds", "t = (x,)\nu = t\nt += (x * 2,)\nreturn len(t), len(u), t is u"),
    ("list_iadd_extends_in_place", "l = [x]\nm = l\nl += [x * 2]\nreturn len(m), l is m"),
    ("list_iadd_tensor_rows", "l = []\nl += x\nreturn len(l), l[-1]"),
    ("list_iadd_range_and_str", "l = [0]\nl += range(x.shape[0])\nl += 'ab'\nreturn x, l"),
    ("list_iadd_generator", "l = []\nl += (r * 2 for r in x[:3])\nreturn l"),
    ("list_imul", "l = [x.shape[0], 'a']\nm = l\nl *= 2\nm *= 0 if x.shape[0] > 5 else 1\nreturn x, l, m is l"),
    ("list_iadd_tuple_ok_add_error", "l = [1]\nl += (2, 3)\ntry:\n    l = l + (4,)\nexcept TypeError:\n    return x, l, 'TypeError'"),
    ("str_imul_by_size", "s = 'ab'\ns *= x.shape[0]\ns += '!'\nreturn x, s"),
    ("bytearray_iadd", "b = bytearray(b'ab')\nc = b\nb += bytes([x.shape[0]])\nreturn x, bytes(c), c is b"),
    ("set_inplace_ops", "s = set(range(x.shape[0]))\nt = s\ns |= {10}\ns &= set(range(2, 11))\ns -= {3}\ns ^= {4, 20}\nreturn x, sorted(t), t is s"),
    ("frozenset_ior_rebinds", "s = frozenset({1})\nt = s\ns |= {x.shape[0]}\nreturn x, sorted(s), sorted(t)"),
    ("dict_ior", "d = {'a': x}\ne = d\nd |= {'b': x.shape[0], 'a': 1}\nreturn d, e is d"),
    ("counter_iadd_drops_nonpositive", "c = collections.Counter(a=x.shape[0], b=1)\nc += collections.Counter(b=-3, c=2)\nc -= collections.Counter(a=1)\nreturn x, dict(c)"),
    ("deque_iadd", "dq = collections.deque([x], maxlen=3)\ndq += [x * 2, x * 3, x * 4]\nreturn list(dq)"),
    ("subscript_evaluated_once", "calls = []\ndef k():\n    calls.append(1)\n    return 'a'\nd = {'a': x}\nd[k()] += 1\nreturn d['a'], len(calls)"),
    ("list_index_iadd_tensor_in_place", "l = [x]\nl[0] += 1\nreturn x, l[0] is x"),
    ("tuple_item_iadd_raises_after_write", "t = ([x.shape[0]],)\ntry:\n    t[0] += [5]\nexcept TypeError:\n    return x, t"),
    ("tuple_item_tensor_iadd_raises_after_write", "t = (x,)\ntry:\n    t[0] += 1\nexcept TypeError:\n    return x, 'TypeError'"),
    ("logged_item_and_attr", "o = Logged({'k': x, 'w': x.shape[0]})\no['k'] += 1\no.w += 2\nreturn o.data['k'], o.w, o.log"),
    ("custom_iadd_used", "a = Acc(x)\nb = a\na += 1\nreturn a is b, a.v, a.log"),
    ("custom_iadd_notimplemented_falls_back", "a = NoInplace(x)\nb = a\na += NoInplace(x.shape[0])\nreturn a is b, a.v"),
    ("custom_radd_after_declines", "a = NoInplace(x)\na += Right(x.shape[0])\nreturn a"),
    ("custom_iadd_returns_other", "s = Swapper()\ns += x\nreturn s"),
    ("no_iadd_or_add_raises", "o = object()\ntry:\n    o += x\nexcept TypeError:\n    return x, 'TypeError'"),
    ("global_like_attr_counter", "class C:\n    n = 0\nC.n += x.shape[0]\nobj = C()\nobj.n += 1\nreturn x, C.n, obj.n, 'n' in vars(obj)"),
    ("closure_cell_iadd", "total = 0\ndef add(v):\n    nonlocal total\n    total += v\nfor r in x:\n    add(r)\nreturn total"),
]
sampled_snippets(SOURCE, "r6_aug_py", PYTHON, namespace=NS)
