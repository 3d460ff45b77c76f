"""Cases modelled on dynamo's test_misc (recast in our own words): version strings compared
with packaging, itertools.accumulate with user functions (one closing over a list it appends
to), a pure-Python accumulate generator returned unconsumed, groupby with and without a key,
tee, `in` on a half-consumed iterator, frozen dataclasses (defaults, default factories,
kw_only, nested, as dict keys, rebuilt after a graph break, returned), pytree flatten and its
spec, pytree keys formatted in f-strings, and parameters registered under names that are not
identifiers."""

import dataclasses
import itertools
import operator

import torch
import torch.utils._pytree as pytree

from . import snippets

SOURCE = "dynamo/test_misc"


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


@dataclasses.dataclass(frozen=True)
class Inner:
    x: float = 2.0


@dataclasses.dataclass(frozen=True)
class Frozen:
    x: torch.Tensor
    y: torch.Tensor
    z: int = dataclasses.field(default=5)
    a: list = dataclasses.field(default_factory=lambda: [5])
    inner: Inner = Inner()


@dataclasses.dataclass(frozen=True)
class KwOnly:
    x: torch.Tensor
    z: int = dataclasses.field(kw_only=True)
    a: int = dataclasses.field(kw_only=True)


@dataclasses.dataclass(frozen=True)
class Key:
    p: float
    q: int


def accumulate(iterable, func=lambda a, b: a + b):
    it = iter(iterable)
    try:
        total = next(it)
    except StopIteration:
        return
    yield total
    for element in it:
        total = func(total, element)
        yield total


class OddParams(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_parameter("0", torch.nn.Parameter(torch.randn(4)))
        self.register_parameter("test_param", torch.nn.Parameter(torch.randn(4)))

    def forward(self, x):
        return (x * getattr(self, "0")) / (self.test_param.abs() + 1)


NS = {"torch": torch, "itertools": itertools, "operator": operator, "pytree": pytree, "brk": brk, "Frozen": Frozen,
      "KwOnly": KwOnly, "Key": Key, "Inner": Inner, "accumulate": accumulate}

CASES = [
    ("packaging_version_compare", "from packaging import version\nif version.parse(torch.__version__) >= version.parse('2.0.0'):\n    return x + 1\nreturn x"),
    ("accumulate_user_functions", "seen = []\ndef f(a, b):\n    seen.append(b)\n    return a * len(seen)\nl = [x * i for i in range(4)]\nreturn list(itertools.accumulate(l, f)), len(seen), list(itertools.accumulate(l, lambda a, b: -1))"),
    ("pure_python_accumulate_returned_generator", "return list(accumulate([x, x * 2, x * 3]))"),
    ("groupby_default_and_key", "l = [1, 2, 2, 3, -3, 4, 4, 1]\nreturn x, [(k, list(g)) for k, g in itertools.groupby(l)], [(k, len(list(g))) for k, g in itertools.groupby(l, key=abs)]"),
    ("tee_both_consumed", "a, b = itertools.tee([x, x + 1, x + 2])\nfirst = next(a)\nreturn first, list(b), list(a)"),
    ("in_on_half_consumed_iterator", "it = iter(['my_weight', 'not_my_weight'])\nnext(it)\nreturn x + 2 if 'my_weight' in it else x + 1"),
    ("frozen_dataclass_defaults", "dc = Frozen(x, x * 2)\nreturn dc.x + dc.y + dc.z + dc.a[0] + dc.inner.x, dc"),
    ("frozen_dataclass_kw_only", "dc = KwOnly(x, z=5, a=2)\nreturn dc.x * dc.z + dc.a"),
    ("frozen_dataclass_as_key", "k = Key(p=3.2, q=5)\nd = {k: 2}\nd[Key(3.2, 5)] += 1\nreturn x + d[k], len(d)"),
    ("frozen_dataclass_across_break", "dc = Frozen(x, x + 1)\nbrk()\nreturn dc.x * dc.y, dc.inner"),
    ("pytree_flatten_spec", "d = {'a': x, 'b': [x * 2, x * 3]}\nflat, spec = pytree.tree_flatten(d)\nreturn sum(flat), spec.num_leaves, spec.num_nodes, spec.is_leaf()"),
    ("pytree_unflatten_map", "d = {'a': x, 'b': (x * 2, [x * 3])}\nout = pytree.tree_map(lambda t: t + 1, d)\nflat, spec = pytree.tree_flatten(out)\nreturn pytree.tree_unflatten([t * 2 for t in flat], spec)"),
    ("pytree_keys_in_fstring", "path = (pytree.MappingKey('a'), pytree.SequenceKey(0))\nreturn x * 2, f'path={path}'"),
]
snippets(SOURCE, "misc_library", CASES, namespace=NS)

snippets(SOURCE, "misc_library_module", [
    ("parameter_named_zero", "return m(x), sorted(n for n, _ in m.named_parameters())"),
], namespace=NS, params="m, x", make_args=lambda n: (torch.manual_seed(0), OddParams(), torch.randn(n, 4))[1:])
