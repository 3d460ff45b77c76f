"""More cases modelled on dynamo's test_repros and test_misc (recast in our own words): `**`
merges of dicts into calls, attributes deleted from inputs and from objects made inside (with a
`__delattr__` of their own, read again afterwards), `del d[k]` then reads, a `maybe()`
decorator factory, functools.wraps on a closure returned to the caller, a dataclass whose
default_factory field is given, list/tuple/Size/deque/namedtuple .index with bounds, sizes used
as dims and as dropout probabilities, batchnorm's running stats across calls, a softmax with a
masked fill written as autograd.Function, descriptors and __set_name__, class attributes
shadowed by instance ones, operator module functions, string formatting of sizes, sorted with
keys over objects, sum with a start, nested functions with defaults from the enclosing scope,
and global state toggled inside (grad mode, default dtype)."""

import collections
import dataclasses
import functools
import operator
from collections import namedtuple
from typing import Any

import torch
import torch.nn.functional as F

from . import snippets


def maybe(fn):
    @functools.wraps(fn)
    def inner(x, *args, **kwargs):
        if x is None:
            return x
        return fn(x, *args, **kwargs)

    return inner


def forward_with_cond_scale(x, t, cond_scale, self_cond, other1, other2):
    return x.sin() + t + cond_scale + self_cond + other1 + other2


class MyObj:
    def __init__(self, a, b):
        self.a = a
        self.b = b


class GuardedDelete:
    def __init__(self, val):
        self.val = val
        self.deletion_attempted = False

    def __delattr__(self, attr):
        if attr == "val":
            self.deletion_attempted = True
        else:
            super().__delattr__(attr)


@dataclasses.dataclass
class DClass:
    sharding_contexts: Any = dataclasses.field(default_factory=list)
    a: int = 1


FourElems = namedtuple("FourElems", "one two three four", defaults=[0, 0, 0, 0])
Pair = namedtuple("Pair", "a b")


class XSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, mask, dim):
        ctx.dim = dim
        rmask = ~(mask.to(torch.bool))
        output = input.masked_fill(rmask, torch.finfo(input.dtype).min)
        output = torch.softmax(output, ctx.dim)
        output.masked_fill_(rmask, 0)
        ctx.save_for_backward(output, rmask)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        output, rmask = ctx.saved_tensors
        grad = output * (grad_output - (grad_output * output).sum(ctx.dim, keepdim=True))
        return grad.masked_fill(rmask, 0), None, None


class Positive:
    """A data descriptor that records the name it was assigned to (__set_name__)."""

    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return getattr(obj, self.name)

    def __set__(self, obj, value):
        setattr(obj, self.name, abs(value))


class WithDescriptor:
    scale = Positive()

    def __init__(self, scale):
        self.scale = scale


class Shadow:
    k = 2

    def __init__(self, own):
        if own:
            self.k = 5


class Repro(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(4)
        self.conv1 = torch.nn.Conv2d(4, 4, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        return (F.relu(self.conv1(self.bn(x))),)


NS = {
    "torch": torch, "F": F, "collections": collections, "dataclasses": dataclasses, "functools": functools,
    "operator": operator, "maybe": maybe, "forward_with_cond_scale": forward_with_cond_scale, "MyObj": MyObj,
    "GuardedDelete": GuardedDelete, "DClass": DClass, "FourElems": FourElems, "XSoftmax": XSoftmax,
    "WithDescriptor": WithDescriptor, "Shadow": Shadow, "Pair": Pair,
}

REPROS = [
    ("build_map_unpack_with_call", "d1 = dict(other1=5)\nd2 = dict(other2=4)\ntext_cond = {**d1, **d2}\nreturn forward_with_cond_scale(x, 1, cond_scale=2, self_cond=3, **text_cond)"),
    ("duplicate_keyword_from_merge_raises", "d1 = dict(other1=5)\nreturn forward_with_cond_scale(x, 1, 2, 3, other2=1, **d1, **{'other1': 6})"),
    ("delattr_on_made_object", "tmp = MyObj(x + 2, x + 3)\ndel tmp.b\nreturn tmp, hasattr(tmp, 'b'), vars(tmp).keys() == {'a'}"),
    ("delattr_with_own_delattr", "a = GuardedDelete(1)\nb = GuardedDelete(2)\ndel a.val\ndel b.val\nreturn x + 1, hasattr(a, 'val'), hasattr(b, 'val'), a.deletion_attempted, b.deletion_attempted"),
    ("delattr_then_read_raises", "o = MyObj(x, x)\ndel o.a\nx = x + 1\nreturn o.a"),
    ("delattr_then_set_moves_to_end", "o = MyObj(x, x * 2)\ndel o.a\no.a = x * 3\nreturn list(vars(o)), o.a"),
    ("del_subscript_then_read", "d = {'a': x, 'b': x * 2}\ndel d['a']\nreturn d['b'] + 1, list(d)"),
    ("del_subscript_then_read_missing_raises", "d = {'a': x, 'b': x * 2}\ndel d['a']\nreturn d['a'] + 1"),
    ("maybe_decorator_factory", "def normalize(t):\n    return t.cos()\nreturn maybe(normalize)(x.sin()), maybe(normalize)(None)"),
    ("functools_wraps_returned_closure", "def cool_name(t):\n    return t.sin()\ny = x.cos()\n@functools.wraps(cool_name)\ndef uncool_name():\n    return cool_name(y)\nreturn uncool_name.__name__, uncool_name(), uncool_name.__wrapped__ is cool_name"),
    ("dataclass_default_factory_given", "d = DClass([1, 2, x.shape[0]])\nd.sharding_contexts.append(x.sin() + d.a)\nreturn d"),
    ("dataclass_default_factory_fresh_each", "a = DClass()\nb = DClass()\na.sharding_contexts.append(x)\nreturn len(b.sharding_contexts), a == b, a.sharding_contexts is b.sharding_contexts"),
    ("index_with_bounds_per_kind", "out = []\nfor kind in (list, tuple, torch.Size, collections.deque):\n    xs = kind([1, 2, 3, 4])\n    out.append((xs.index(3), xs.index(3, 2), xs.index(3, 0, 3)))\nreturn x + out[0][0], out, FourElems(1, 2, 3, 4).index(3)"),
    ("index_not_found_raises", "xs = ['bar', 'foo', 'baz']\nreturn x + xs.index('non-existent')"),
    ("index_not_found_caught", "xs = ['bar', 'foo', 'baz']\ntry:\n    return x + xs.index('nope')\nexcept ValueError as e:\n    return x, str(e)"),
    ("size_as_dim_argument", "y = x * x.size(x.dim() - 1)\nreturn torch.sum(y, [y.dim() - 1]), y.shape", {"make_args": lambda n: (torch.randn(2, n),)}),
    ("size_as_dropout_probability_eval", "return F.dropout(x, x.shape[0] / 16, training=False)"),
    ("size_times_int_factory", "return torch.ones(5 * x.shape[0]).shape, torch.zeros(x.shape[0] // 2 + 1).sum() + x.sum()"),
    ("xsoftmax_function_forward", "return XSoftmax.apply(x + 1, m, 1) + 2", {"params": "x, m", "make_args": lambda n: (torch.randn(4, n), torch.randn(4, n) < 0)}),
    ("xsoftmax_function_grads", "return XSoftmax.apply(x, m, 1)", {"params": "x, m", "make_args": lambda n: (torch.randn(4, n, requires_grad=True), torch.randn(4, n) < 0), "train": True}),
    ("descriptor_with_set_name", "w = WithDescriptor(-3)\nw.scale = -x.shape[0]\nreturn x * w.scale, vars(w), type(WithDescriptor.__dict__['scale']).__name__"),
    ("class_attribute_shadowed_by_instance", "a = Shadow(False)\nb = Shadow(True)\nShadow.k = 3\nr = (a.k, b.k)\nShadow.k = 2\nreturn x * r[0] + r[1], r"),
    ("operator_module_functions", "return operator.add(x, 1), operator.mul(2, 3), operator.getitem([x, x * 2], 1), operator.itemgetter(0, 2)('abc'), operator.attrgetter('shape')(x)"),
    ("format_size_strings", "return x, f'{x.shape}', str(tuple(x.shape)), '{}x{}'.format(*x.shape), repr(x.shape[0])", {"make_args": lambda n: (torch.randn(n, 3),)}),
    ("sorted_objects_with_key", "objs = [MyObj(3, x), MyObj(1, x * 2), MyObj(2, x * 3)]\nreturn [o.b for o in sorted(objs, key=lambda o: o.a)], [o.a for o in sorted(objs, key=operator.attrgetter('a'), reverse=True)]"),
    ("sum_with_start", "return sum([x, x * 2], x * 10), sum([[1], [2]], []), sum((0.5, 1.5), 1)"),
    ("nested_defaults_from_enclosing", "k = x.shape[0]\ndef f(t, scale=k * 2, *, shift=k):\n    return t * scale + shift\nk = 100\nreturn f(x), f(x, 1), f(x, shift=0), f.__defaults__, f.__kwdefaults__"),
    ("grad_mode_toggled_inside", "torch.set_grad_enabled(False)\ny = x * 2\ntorch.set_grad_enabled(True)\nz = x * 3\nreturn y.requires_grad, z.requires_grad, y, z", {"make_args": lambda n: (torch.randn(n, requires_grad=True),)}),
    ("default_dtype_toggled_inside", "old = torch.get_default_dtype()\ntorch.set_default_dtype(torch.float64)\na = torch.ones(2) * x.sum()\ntorch.set_default_dtype(old)\nreturn a, a.dtype, torch.ones(1).dtype"),
    ("tuple_of_lists_inplace_add", "t = ([x], [])\nt[1].append(x * 2)\ntry:\n    t[0] += [x * 3]\nexcept TypeError:\n    pass\nreturn len(t[0]), t"),
    ("chained_comparison_of_sizes", "n = x.shape[0]\nreturn x, 0 < n <= 4, 1 < n < 3 < 10, n == n == 4"),
    ("conditional_expression_chain", "n = x.shape[0]\nkind = 'small' if n < 3 else 'medium' if n < 6 else 'large'\nreturn x * len(kind), kind"),
    ("global_constant_tensor_read", "return x + torch.arange(x.shape[0]).float() * 0.5"),
    ("star_unpack_of_shape", "first, *rest = x.shape\nreturn x.reshape(first, -1), rest", {"make_args": lambda n: (torch.randn(n, 2, 3),)}),
    ("namedtuple_replace_and_asdict", "p = Pair(x, 1)\nq = p._replace(b=2)\nreturn q, q._asdict()['b'], p._fields"),
    ("enumerate_zip_longest_like", "import itertools\nreturn [(i, a, b) for i, (a, b) in enumerate(itertools.zip_longest(x.unbind(), range(2), fillvalue=-1))]"),
]
snippets("dynamo/test_repros", "repros2", REPROS, namespace=NS)

MODULES = [
    ("batchnorm_running_stats_across_calls", "outs = [m(x)[0] for _ in range(2)]\nreturn outs, m.bn.running_mean, m.bn.num_batches_tracked"),
    ("delattr_on_input_object", "del obj.a\nobj.c = x + 1\ndel obj.c\nreturn hasattr(obj, 'a'), hasattr(obj, 'c'), obj.b"),
    ("del_subscript_on_input_dict", "del d['a']\nreturn d['b'] + 1"),
]
snippets("dynamo/test_repros", "repros2_inputs", MODULES[:1], namespace=NS, params="m, x",
         make_args=lambda n: (Repro(), torch.randn(2, 4, n, n)), train=True)
snippets("dynamo/test_repros", "repros2_inputs", MODULES[1:2], namespace=NS, params="x, obj",
         make_args=lambda n: (lambda t: (t, MyObj(t, t * 2)))(torch.randn(n)))
snippets("dynamo/test_repros", "repros2_inputs", MODULES[2:], namespace=NS, params="d",
         make_args=lambda n: ({"a": torch.randn(n), "b": torch.randn(n)},))
