"""Calls as CPython's test_extcall, test_keywordonlyarg and test_positional_only_arg check them
(recast in our own words), with tensors and sizes as the arguments: *args and **kwargs at the
call and in the signature (a Mapping that is not a dict, an iterator consumed once, a generator),
keyword-only and positional-only parameters (a positional-only name free for **kwargs), defaults
evaluated once at definition, and the TypeErrors binding raises, with CPython's messages (a
program that returns str(e) sees them).
"""

import collections

import torch

from .round5_support import sampled_snippets
from .upstream4_support import graph_break

SOURCE = "cpython/test_extcall"
SOURCE_KWONLY = "cpython/test_keywordonlyarg"
SOURCE_POSONLY = "cpython/test_positional_only_arg"


class Keys(collections.abc.Mapping):
    """A Mapping (not a dict) unpacked with **: keys() then __getitem__, logged."""

    def __init__(self, data):
        self.data = dict(data)
        self.log = []

    def keys(self):
        self.log.append("keys")
        return self.data.keys()

    def __getitem__(self, key):
        self.log.append(key)
        return self.data[key]

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


class Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, t, /, *, bias=0):
        return t * self.k + bias

    def method(self, t, *rest, **kw):
        return t * self.k, len(rest), sorted(kw)


def report(*args, **kwargs):
    return len(args), sorted(kwargs)


NS = {"torch": torch, "collections": collections, "Keys": Keys, "Scaler": Scaler, "report": report, "brk": graph_break}

EXTCALL = [
    ("star_tuple_and_list", "def g(a, b, c):\n    return a * b + c\nreturn g(*(x, 2), *[x.shape[0]])"),
    ("star_of_tensor_rows", "def g(*rows):\n    return len(rows), rows[0] + rows[-1]\nreturn g(*x)"),
    ("star_of_generator_consumed", "log = []\ndef gen():\n    for i in range(3):\n        log.append(i)\n        yield x * i\ndef g(*a):\n    return sum(a)\nreturn g(*gen()), log"),
    ("star_of_iterator_used_once", "it = iter([x, x * 2, x * 3])\nfirst = next(it)\ndef g(*a):\n    return len(a)\nreturn first, g(*it), g(*it)"),
    ("kwargs_from_mapping", "m = Keys({'a': x, 'b': x.shape[0]})\ndef g(a, b):\n    return a + b\nreturn g(**m), m.log"),
    ("kwargs_ordered_into_signature", "def g(**kw):\n    return list(kw)\nreturn x, g(z=1, a=2, **{'m': x.shape[0]}, b=3)"),
    ("kwargs_dict_not_shared", "d = {'a': x}\ndef g(**kw):\n    kw['b'] = 1\n    return kw\nr = g(**d)\nreturn sorted(r), sorted(d), r is d"),
    ("args_tuple_type", "def g(*a):\n    return type(a).__name__, a\nreturn g(*[x.shape[0], 1])"),
    ("too_many_positional", "def g(a, b=1):\n    return a\ntry:\n    g(x, 1, 2)\nexcept TypeError as e:\n    return x, str(e)"),
    ("missing_positional", "def g(a, b, c):\n    return a\ntry:\n    g(x)\nexcept TypeError as e:\n    return x, str(e)"),
    ("unexpected_keyword", "def g(a):\n    return a\ntry:\n    g(x, scale=2)\nexcept TypeError as e:\n    return x, str(e)"),
    ("multiple_values", "def g(a, b):\n    return a\ntry:\n    g(x, a=x)\nexcept TypeError as e:\n    return x, str(e)"),
    ("star_not_iterable", "def g(*a):\n    return a\ntry:\n    g(*x.shape[0])\nexcept TypeError as e:\n    return x, str(e)"),
    ("kwargs_not_mapping", "def g(**k):\n    return k\ntry:\n    g(**[x])\nexcept TypeError as e:\n    return x, str(e)"),
    ("kwargs_non_string_key", "def g(**k):\n    return k\ntry:\n    g(**{1: x})\nexcept TypeError as e:\n    return x, str(e)"),
    ("builtin_star_args", "return max(*x.shape, 3), min(*[x.shape[0], 9]), torch.cat([*x.split(2)])"),
    ("method_star_call", "s = Scaler(x.shape[0])\nreturn s.method(*(x, 1, 2), **{'p': 1, 'q': 2})"),
    ("callable_object_kwonly", "s = Scaler(2)\nreturn s(x, bias=x.shape[0])"),
    ("star_call_across_break", "args = (x, x.shape[0])\nbrk()\ndef g(a, n):\n    return a * n\nreturn g(*args)"),
    ("torch_function_star_kwargs", "kw = {'dim': 0, 'keepdim': True}\nreturn torch.sum(x, **kw), torch.stack(tuple(x.chunk(2)[:1]), **{'dim': 0})"),
]
sampled_snippets(SOURCE, "r6_extcall", EXTCALL, namespace=NS)

KWONLY = [
    ("kwonly_default_and_required", "def g(a, *, scale, shift=1):\n    return a * scale + shift\nreturn g(x, scale=x.shape[0]), g(x, shift=0, scale=2)"),
    ("kwonly_missing", "def g(a, *, scale):\n    return a * scale\ntry:\n    g(x)\nexcept TypeError as e:\n    return x, str(e)"),
    ("kwonly_given_positionally", "def g(a, *, scale=2):\n    return a * scale\ntry:\n    g(x, 3)\nexcept TypeError as e:\n    return x, str(e)"),
    ("kwonly_after_varargs", "def g(*rows, total=False):\n    return sum(rows) if total else len(rows)\nreturn g(*x), g(*x, total=True)"),
    ("kwonly_defaults_evaluated_once", "calls = []\ndef default():\n    calls.append(1)\n    return x.shape[0]\ndef g(a, *, n=default()):\n    return a * n\nreturn g(x), g(x), len(calls)"),
    ("kwonly_kwdefaults_attribute", "def g(a, *, k=3):\n    return a * k\ng.__kwdefaults__ = {'k': x.shape[0]}\nreturn g(x)"),
    ("defaults_attribute_replaced", "def g(a, b=1):\n    return a + b\ng.__defaults__ = (x.shape[0],)\nreturn g(x)"),
    ("mutable_default_shared_across_calls", "def g(t, acc=[]):\n    acc.append(t.shape[0])\n    return acc\ng(x)\nreturn x, list(g(x))"),
]
sampled_snippets(SOURCE_KWONLY, "r6_kwonly", KWONLY, namespace=NS)

POSONLY = [
    ("posonly_basic", "def g(a, b, /, c):\n    return a + b * c\nreturn g(x, 2, c=x.shape[0]), g(x, 1, 3)"),
    ("posonly_given_by_keyword", "def g(a, /):\n    return a\ntry:\n    g(a=x)\nexcept TypeError as e:\n    return x, str(e)"),
    ("posonly_name_free_for_kwargs", "def g(a, /, **kw):\n    return a, sorted(kw), kw['a']\nreturn g(x, a=x.shape[0])"),
    ("posonly_defaults", "def g(a, b=2, /, c=3):\n    return a * b + c\nreturn g(x), g(x, x.shape[0]), g(x, 1, c=0)"),
    ("posonly_lambda", "f2 = lambda a, /, b: a - b\nreturn f2(x, b=x.shape[0])"),
    ("posonly_all_kinds", "def g(a, /, b, *args, c, **kw):\n    return a + b, len(args), c, sorted(kw)\nreturn g(x, x, 1, 2, c=x.shape[0], d=1)"),
    ("posonly_too_few_message", "def g(a, b, /):\n    return a\ntry:\n    g(x)\nexcept TypeError as e:\n    return x, str(e)"),
]
sampled_snippets(SOURCE_POSONLY, "r6_posonly", POSONLY, namespace=NS)
