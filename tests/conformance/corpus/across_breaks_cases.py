"""Everyday values made before a graph break and used after it, modelled on dynamo's
test_misc and test_repros (their "graph break in the middle" variants): user objects and
dataclasses built then mutated on both sides, a ModelOutput-like dict, a module built inside,
closures and nonlocal cells, iterators half consumed (zip, enumerate, map, a generator),
dict views, a list aliased twice, a deque, a set, partials, bound methods, a string built up,
an exception object, and a with-block around the break. Every value must come back as eager
left it: one object where eager has one, the same contents, the same iteration position.
Recast in our own words."""

import collections
import dataclasses
import functools

import torch

from . import snippets

SOURCE = "dynamo/test_misc"


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


class Acc:
    def __init__(self, t):
        self.t = t
        self.log = []

    def add(self, v):
        self.t = self.t + v
        self.log.append(len(self.log))
        return self


@dataclasses.dataclass
class Cfg:
    scale: float
    items: list = dataclasses.field(default_factory=list)


class Out(collections.OrderedDict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def gen(t, n):
    for i in range(n):
        yield t * i


NS = {"torch": torch, "brk": brk, "Acc": Acc, "Cfg": Cfg, "Out": Out, "gen": gen, "collections": collections,
      "functools": functools, "nn": torch.nn}

CASES = [
    ("object_mutated_both_sides", "a = Acc(x)\na.add(1)\nbrk()\na.add(x)\nreturn a.t, a.log"),
    ("object_identity_kept", "a = Acc(x)\nb = a\nbrk()\nb.add(2)\nreturn a is b, a.t, len(a.log)"),
    ("dataclass_list_field_appended", "c = Cfg(2.0)\nc.items.append(x)\nbrk()\nc.items.append(x * c.scale)\nreturn sum(c.items), len(c.items)"),
    ("ordered_dict_subclass_across", "o = Out(a=x)\nbrk()\no['b'] = x + 1\nreturn o.a + o.b, list(o)"),
    ("module_built_before_break", "m = nn.Sequential(nn.Tanh(), nn.ReLU())\ny = m(x)\nbrk()\nreturn m(y), len(m)"),
    ("new_module_attribute_set_before_break", "m = nn.Dropout(0.2)\nm.eval()\nbrk()\nreturn m(x), m.training"),
    ("closure_cell_written_after_break", "k = 1\ndef get():\n    return x * k\na = get()\nbrk()\nk = 3\nreturn a, get()"),
    ("nonlocal_counter_across_break", "n = 0\ndef bump():\n    nonlocal n\n    n += 1\n    return n\nbump()\nbrk()\nbump()\nreturn x * n, n"),
    ("zip_half_consumed", "z = zip(range(4), 'abcd')\nfirst = next(z)\nbrk()\nrest = list(z)\nreturn x * first[0], rest"),
    ("enumerate_half_consumed", "e = enumerate([x, x * 2, x * 3])\nnext(e)\nbrk()\nreturn [i for i, _ in e], sum(t for _, t in enumerate([x]))"),
    ("map_half_consumed", "m = map(lambda t: t * 2, [x, x + 1, x + 2])\na = next(m)\nbrk()\nreturn a, list(m)"),
    ("generator_half_consumed", "g = gen(x, 4)\nnext(g)\nnext(g)\nbrk()\nreturn list(g)"),
    ("dict_views_across", "d = {'a': x}\nks = d.keys()\nvs = d.values()\nbrk()\nd['b'] = x * 2\nreturn list(ks), sum(vs)"),
    ("list_aliased_twice", "l = [x]\nholder = {'l': l}\nbrk()\nholder['l'].append(x + 1)\nl.append(x + 2)\nreturn len(l), holder['l'] is l, sum(l)"),
    ("deque_rotated_across", "dq = collections.deque([x, x * 2, x * 3], maxlen=3)\ndq.rotate(1)\nbrk()\ndq.append(x - 1)\nreturn list(dq), dq.maxlen"),
    ("set_grown_across", "s = {1, 2}\ns.add(x.shape[0])\nbrk()\ns.discard(1)\nreturn x * len(s), sorted(s)"),
    ("partial_and_bound_method", "p = functools.partial(torch.add, alpha=2)\na = Acc(x)\nm = a.add\nbrk()\nm(1)\nreturn p(x, x), a.t"),
    ("string_built_up", "s = f'n={x.shape[0]}'\nbrk()\ns += '!'\nreturn x, s, s.upper()"),
    ("exception_object_across", "try:\n    raise ValueError('bad', x.shape[0])\nexcept ValueError as e:\n    err = e\nbrk()\nreturn x * err.args[1], type(err).__name__"),
    ("no_grad_block_around_break", "with torch.no_grad():\n    a = x * 2\n    brk()\n    b = x * 3\nreturn a, b, a.requires_grad, b.requires_grad, torch.is_grad_enabled()", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("tensor_list_mutated_in_place_across", "ts = [x.clone(), x.clone()]\nts[0].add_(1)\nbrk()\nts[1].mul_(2)\nts.reverse()\nreturn ts"),
    ("loop_with_break_inside", "total = x * 0\nfor i in range(3):\n    total = total + i\n    brk()\n    total = total * 2\nreturn total"),
]
snippets(SOURCE, "across_breaks", CASES, namespace=NS)


class Prop:
    def __init__(self, t):
        self._t = t
        self.reads = 0

    @property
    def t(self):
        self.reads += 1
        brk()
        return self._t * 2

    def __getattr__(self, name):
        brk()
        return len(name)


class Layered(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(3)])
        self.seen = []

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i == 1:
                brk()
            self.seen.append(i)
        return x


def helper_with_break(t, log):
    log.append("before")
    brk()
    log.append("after")
    return t * len(log)


def outer_helper(t, log):
    y = helper_with_break(t, log) + 1
    return y * 2


NS.update({"Prop": Prop, "helper_with_break": helper_with_break, "outer_helper": outer_helper})

NESTED = [
    ("break_in_callee", "log = []\ny = helper_with_break(x, log)\nreturn y, log"),
    ("break_two_levels_down", "log = []\nreturn outer_helper(x, log), log"),
    ("break_in_property_getter", "p = Prop(x)\na = p.t\nb = p.t\nreturn a + b, p.reads"),
    ("break_in_dunder_getattr", "p = Prop(x)\nreturn x * p.missing_name, p.reads"),
    ("break_in_comprehension", "def f(t):\n    brk()\n    return t * 2\nreturn [f(x + i) for i in range(2)]"),
    ("break_in_generator_body", "def g():\n    yield x\n    brk()\n    yield x * 2\nreturn list(g())"),
    ("break_in_sorted_key", "ts = [x * 3, x, x * 2]\ndef key(t):\n    brk()\n    return float(t.abs().sum())\nreturn sorted(ts, key=key)"),
    ("break_inside_try_caught", "try:\n    brk()\n    raise KeyError('k')\nexcept KeyError:\n    y = x + 1\nreturn y"),
    ("break_in_finally", "log = []\ntry:\n    y = x * 2\nfinally:\n    brk()\n    log.append(1)\nreturn y, log"),
    ("break_in_with_body_user_manager", "import contextlib\nlog = []\n@contextlib.contextmanager\ndef cm():\n    log.append('in')\n    yield 3\n    log.append('out')\nwith cm() as k:\n    brk()\n    y = x * k\nreturn y, log"),
]
snippets(SOURCE, "across_breaks_nested", NESTED, namespace=NS)

snippets(SOURCE, "across_breaks_module", [
    ("break_inside_module_list_loop", "return m(x), m.seen"),
], namespace=NS, params="m, x", make_args=lambda n: (torch.manual_seed(0), Layered(), torch.randn(n, 3))[1:])
