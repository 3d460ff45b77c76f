"""More cases modelled on dynamo's test_misc (recast in our own words), around what the
ported cases found wrong: sizes compared with tuples, int lists whose values change, typing.cast,
a builtin patched in builtins, .real/.imag/.T, functions stored on instances (not bound) and on
classes (bound), containers filled from iterators that read them while they fill (list, set,
dict, deque), equality of containers holding the same object, generators thrown into inside a
for loop, and globals read back through the module and its namespace after a store."""

import builtins
import collections
import sys
import types
from typing import cast

import torch

from . import snippets


def my_add(*args):
    a, b = args
    return a + b


def my_add_bound(*args):
    obj, a, b = args
    return obj.x + a + b


class HoldsFunction:
    def __init__(self, func):
        self.add = func


class ClassFunction:
    add = my_add_bound

    def __init__(self, x):
        self.x = x


class Mixin:
    def get_self_as_module(self):
        return cast(torch.nn.Module, self)


class ModuleA(Mixin, torch.nn.Module):
    def forward(self, x):
        self.get_self_as_module()
        return x + 1


class NoEq:
    pass


class RaisingEq:
    def __eq__(self, other):
        raise ValueError("compared")

    __hash__ = object.__hash__


THIS_MODULE = sys.modules[__name__]
COUNTER = 0


def bump_counter():
    global COUNTER
    COUNTER += 1


NS = {"torch": torch, "cast": cast, "builtins": builtins, "collections": collections, "types": types,
      "HoldsFunction": HoldsFunction, "ClassFunction": ClassFunction, "my_add": my_add, "ModuleA": ModuleA,
      "NoEq": NoEq, "RaisingEq": RaisingEq, "THIS": THIS_MODULE, "bump_counter": bump_counter}

MISC = [
    ("shape_equals_tuple_branch", "z = x * y\nif x.size() == t:\n    return z.cos()\nreturn z.sin()", {"params": "x, y, t", "make_args": lambda n: (torch.randn(4, n), torch.randn(4, n), (4, 4))}),
    ("int_list_values_change", "return torch.sin(x + y[1] % 2)", {"params": "x, y", "make_args": lambda n: (torch.randn(6), [n * 3, n * 3 + 1, n * 3 + 2])}),
    ("typing_cast_tensor_and_int", "val = cast(int, x.shape[0])\nreturn cast(torch.Tensor, torch.add(x, 1.0)) + val"),
    ("typing_cast_in_mixin", "m = ModuleA()\nreturn m(x), m.get_self_as_module() is m"),
    # 2-D only: .T of another rank warns once per process (C++ TORCH_WARN_ONCE), so whichever
    # of eager and compiled runs second never shows it.
    ("real_imag_and_T", "c = torch.complex(x, x * 2).reshape(-1, 1)\nm = x.reshape(-1, 1)\nreturn c.real + c.imag, m.T, c.real.T.shape"),
    ("function_on_instance_not_bound", "obj = HoldsFunction(my_add)\nreturn obj.add(x, 2)"),
    ("function_on_class_is_bound", "obj = ClassFunction(0.5)\nreturn obj.add(x, 2), ClassFunction.add(obj, x, 1)"),
    ("patched_isinstance_in_builtins", "orig = builtins.isinstance\ntry:\n    builtins.isinstance = lambda o, c: False\n    r = isinstance(x, torch.Tensor)\nfinally:\n    builtins.isinstance = orig\nreturn x + 1, r"),
    ("list_extend_from_map_reading_list", "y = [1]\ny.extend(map(lambda z: y[-1] + z, range(3)))\nreturn x + 1, y"),
    ("set_update_from_generator_reading_set", "s = {0}\ns.update(len(s) + i for i in range(3))\nreturn x, sorted(s)"),
    ("dict_update_from_generator_reading_dict", "d = {'a': 0}\nd.update((f'k{len(d)}', len(d)) for _ in range(3))\nreturn x, d"),
    ("deque_extend_from_generator_reading_deque", "q = collections.deque([1])\nq.extend(q[-1] * 2 for _ in range(3))\nreturn x, list(q)"),
    ("list_iadd_from_generator_reading_list", "y = [1]\ny += (y[-1] + 1 for _ in range(3))\nreturn x, y"),
    ("list_constructor_from_generator_over_itself", "y = [1, 2]\nz = list(v * len(y) for v in y)\nreturn x, z"),
    ("equal_containers_same_object", "o = NoEq()\nd1 = {'a': 1, 'b': x, 'o': o}\nd2 = dict(d1)\nreturn x, d1 == d2, [o, x] == [o, x], (o,) != (o,), {1: [o]} == {1: [o]}"),
    ("equal_containers_raising_eq", "v = RaisingEq()\nsame = ({1: v} == {1: v}, [v] == [v])\ntry:\n    other = [v] == [RaisingEq()]\nexcept ValueError:\n    other = 'raised'\nreturn x, same, other"),
    ("list_less_than_with_identical_items", "o = NoEq()\nreturn x, [o, 1] < [o, 2], (o, 'a') <= (o, 'a')"),
    ("dict_equality_after_mutation", "d1 = {'a': x}\nd2 = {'a': x}\nd2['b'] = 1\nr1 = d1 == d2\ndel d2['b']\nreturn r1, d1 == d2"),
    ("ordered_dict_vs_dict_equality", "a = collections.OrderedDict(a=x, b=1)\nb = {'b': 1, 'a': x}\nc = collections.OrderedDict(b=1, a=x)\nreturn a == b, b == a, a == c, a != c"),
    ("defaultdict_equality_with_dict", "d = collections.defaultdict(list, a=[x])\nreturn d == {'a': [x]}, {'a': [x]} == d"),
    ("throw_into_generator_in_for_loop", "def g():\n    for i in range(5):\n        try:\n            yield i\n        except ValueError:\n            yield -1\ngen = g()\nout = [next(gen), gen.throw(ValueError), next(gen)]\nreturn x + sum(out), out"),
    ("throw_into_yield_from_list", "def g():\n    yield from [1, 2, 3]\ngen = g()\nnext(gen)\ntry:\n    gen.throw(KeyError('k'))\nexcept KeyError as e:\n    return x, e.args, next(gen, 'done')"),
    ("close_generator_suspended_in_yield_from", "log = []\ndef inner():\n    try:\n        yield 1\n        yield 2\n    except GeneratorExit:\n        log.append('inner exit')\n        raise\ndef outer():\n    try:\n        yield from inner()\n    finally:\n        log.append('outer finally')\ngen = outer()\nnext(gen)\ngen.close()\nreturn x, log, next(gen, 'done')"),
    ("module_global_read_back_after_store", "bump_counter()\nbump_counter()\nreturn x + THIS.COUNTER - THIS.COUNTER, 'COUNTER' in vars(THIS)"),
]
snippets("dynamo/test_misc", "misc2", MISC, namespace=NS)
