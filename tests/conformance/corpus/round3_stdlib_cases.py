"""Standard-library modules called inside compiled code, each mixed with tensors: random (values
and the module's state afterwards, seeded inside, shuffled lists of tensors, local Random
instances, getstate/setstate), time (any value, no crash), os.environ/getenv, sys constants,
logging (a handler that records, levels), warnings (once per location under the default filter,
every time under "always", as errors, stacklevel naming the caller), copy/deepcopy of user
objects holding tensors (sharing kept, __copy__/__deepcopy__), weakref (ref, dead refs,
WeakKeyDictionary, WeakValueDictionary), collections.abc isinstance checks, typing constructs
(NamedTuple classes, TypedDict, cast, runtime_checkable Protocols, NewType), enum.Flag/IntFlag,
abc abstract classes, operator.attrgetter/itemgetter/methodcaller, heapq and bisect, and
math/cmath functions of sizes. Modelled on CPython's test_random, test_warnings, test_logging,
test_copy, test_weakref, test_collections, test_typing, test_enum, test_abc, test_operator,
test_heapq, test_bisect, test_math and test_cmath, and PyTorch's dynamo test_misc and
test_functions, recast in our own words."""

import abc
import bisect
import cmath
import collections
import collections.abc
import copy
import enum
import heapq
import logging
import math
import operator
import os
import random
import sys
import time
import typing
import warnings
import weakref

import torch

from . import matrix, snippets


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Holder:
    def __init__(self, t, items):
        self.t = t
        self.items = items


class CopyAware:
    log = []

    def __init__(self, t):
        self.t = t

    def __copy__(self):
        CopyAware.log.append("copy")
        return CopyAware(self.t + 0)

    def __deepcopy__(self, memo):
        CopyAware.log.append("deepcopy")
        return CopyAware(self.t.clone() * -1)


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append((record.levelname, record.getMessage()))


LOGGER = logging.getLogger("conformance.round3")
LOGGER.propagate = False
LOGGER.setLevel(logging.INFO)
RECORDER = Recorder()
LOGGER.addHandler(RECORDER)


def warn_from_helper(message):
    warnings.warn(message, UserWarning, stacklevel=2)


class Point(typing.NamedTuple):
    x: torch.Tensor
    scale: float = 2.0

    def scaled(self):
        return self.x * self.scale


class Config(typing.TypedDict):
    width: int
    name: str


@typing.runtime_checkable
class HasForward(typing.Protocol):
    def forward(self, t): ...


class Doubler:
    def forward(self, t):
        return t * 2


Width = typing.NewType("Width", int)


class Perm(enum.Flag):
    R = enum.auto()
    W = enum.auto()
    X = enum.auto()


class Bits(enum.IntFlag):
    A = 1
    B = 2
    C = 4


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Level(enum.IntEnum):
    LOW = 3
    HIGH = 6


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self, t): ...

    def twice(self, t):
        return self.area(t) * 2


class Square(Shape):
    def area(self, t):
        return t * t


class HalfDone(Shape):
    pass


class Virtual(abc.ABC):
    pass


Virtual.register(list)


class Bag:
    """A collection by protocol only (no base class): __len__, __iter__, __contains__."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, v):
        return v in self.items


NS = {"torch": torch, "random": random, "time": time, "os": os, "sys": sys, "logging": logging, "warnings": warnings,
      "copy": copy, "weakref": weakref, "collections": collections, "abc": abc, "typing": typing, "enum": enum,
      "operator": operator, "heapq": heapq, "bisect": bisect, "math": math, "cmath": cmath, "Obj": Obj, "Holder": Holder,
      "CopyAware": CopyAware, "LOGGER": LOGGER, "RECORDER": RECORDER, "warn_from_helper": warn_from_helper,
      "Point": Point, "Config": Config, "HasForward": HasForward, "Doubler": Doubler, "Width": Width, "Perm": Perm,
      "Bits": Bits, "Color": Color, "Level": Level, "Shape": Shape, "Square": Square, "HalfDone": HalfDone,
      "Virtual": Virtual, "Bag": Bag, "Mapping": collections.abc.Mapping, "Sequence": collections.abc.Sequence,
      "Iterable": collections.abc.Iterable, "Iterator": collections.abc.Iterator, "Callable": collections.abc.Callable,
      "Hashable": collections.abc.Hashable, "Collection": collections.abc.Collection, "Sized": collections.abc.Sized,
      "MutableMapping": collections.abc.MutableMapping, "Set": collections.abc.Set}


def holder(n):
    return (Holder(torch.randn(n), [torch.randn(n)]),)


def obj_and_vec(n):
    return Obj(t=torch.randn(n)), torch.randn(n)


RANDOM = [
    ("seed_inside_then_draw", "random.seed(7)\na = random.random()\nb = random.randint(0, 9)\nreturn x * a + b, a, b"),
    ("state_after_draws_matches", "a = random.random()\ny = x * a\nb = random.random()\nreturn y + b, random.random()"),
    ("shuffle_list_of_tensors", "items = [x, x * 2, x * 3, x * 4]\nrandom.shuffle(items)\nreturn items"),
    ("shuffle_input_list_in_place", "random.shuffle(items)\nreturn items[0] + 1", {"params": "items", "make_args": lambda n: ([torch.randn(n) for _ in range(5)],)}),
    ("choice_and_sample_of_tensors", "rows = list(x.reshape(-1, 1))\nc = random.choice(rows)\ns = random.sample(range(10), 3)\nreturn c * 2, s"),
    ("local_random_instance", "rng = random.Random(x.shape[0])\nreturn x * rng.random(), rng.randrange(100)"),
    ("getstate_setstate_repeats_draw", "state = random.getstate()\na = random.random()\nrandom.setstate(state)\nb = random.random()\nreturn x * a, a == b"),
    ("uniform_gauss_in_tensor_ops", "u = random.uniform(-1, 1)\ng = random.gauss(0, 1)\nreturn torch.clamp(x, min=u - 2, max=u + 2) * g"),
    ("draws_in_helper_called_twice", "def noisy(t):\n    return t + random.random()\nreturn noisy(x) - noisy(x)"),
    ("random_decides_branch", "if random.random() < 0.5:\n    return x + 1\nreturn x - 1"),
    ("seed_from_size_each_call", "random.seed(x.shape[0])\nreturn x * random.random(), random.getrandbits(8)"),
    ("draw_on_both_sides_of_break", "a = random.random()\nprint('break')\nb = random.random()\nreturn x * a + b"),
]
snippets("cpython/test_random", "r3_random", RANDOM, namespace=NS)

ENVIRONMENT = [
    ("perf_counter_elapsed_not_negative", "t0 = time.perf_counter()\ny = x.sin()\nelapsed = time.perf_counter() - t0\nreturn y, elapsed >= 0, type(elapsed)"),
    ("time_time_and_monotonic_types", "a = time.time()\nb = time.monotonic()\nreturn x + 1, type(a), b > 0"),
    ("perf_counter_ns_int", "t = time.perf_counter_ns()\nreturn x * 2, type(t)"),
    ("environ_get_missing_default", "v = os.environ.get('CONFORMANCE_SURELY_UNSET_VAR', '3')\nreturn x * int(v), v"),
    ("getenv_missing_none", "v = os.getenv('CONFORMANCE_SURELY_UNSET_VAR')\nreturn x if v is None else x * 0"),
    ("environ_membership", "return x + ('CONFORMANCE_SURELY_UNSET_VAR' in os.environ)"),
    ("version_info_branch", "if sys.version_info >= (3, 8):\n    return x + sys.version_info.major, sys.version_info[:1]\nreturn x"),
    ("sys_maxsize_and_float_info", "return x * sys.float_info.epsilon, sys.maxsize > 2**31, sys.byteorder in ('little', 'big')"),
    ("platform_and_recursion_limit", "return x + (sys.getrecursionlimit() > 10), isinstance(sys.platform, str)"),
]
snippets("dynamo/test_misc", "r3_env", ENVIRONMENT, namespace=NS)

LOGGING = [
    ("handler_records_formatted_messages", "RECORDER.messages.clear()\nLOGGER.info('size %d', x.shape[0])\nLOGGER.warning('sum is %s', 'known')\ny = x * 2\nreturn y, list(RECORDER.messages)"),
    ("level_filters_debug", "RECORDER.messages.clear()\nLOGGER.debug('hidden %s', x.shape)\nLOGGER.error('shown')\nreturn x - 1, list(RECORDER.messages)"),
    ("is_enabled_for_branch", "if LOGGER.isEnabledFor(logging.DEBUG):\n    return x * 0\nreturn x + 1, LOGGER.getEffectiveLevel()"),
    ("log_inside_loop_with_tensor_math", "RECORDER.messages.clear()\nfor i in range(3):\n    x = x + i\n    LOGGER.info('step %d', i)\nreturn x, len(RECORDER.messages)"),
    ("get_logger_by_name_same_object", "return x, logging.getLogger('conformance.round3') is LOGGER"),
]
snippets("cpython/test_logging", "r3_logging", LOGGING, namespace=NS)

WARNINGS = [
    ("default_filter_once_per_location", "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('default')\n    for _ in range(3):\n        warnings.warn('careful', UserWarning)\n    y = x + 1\nreturn y, len(w), [str(m.message) for m in w]"),
    ("always_filter_every_time", "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    for i in range(3):\n        x = x * 2\n        warnings.warn(f'step {i}')\nreturn x, [str(m.message) for m in w]"),
    ("two_locations_warn_separately", "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('default')\n    for _ in range(2):\n        warnings.warn('same text')\n        warnings.warn('same text')\nreturn x, len(w)"),
    ("error_filter_raises", "with warnings.catch_warnings():\n    warnings.simplefilter('error')\n    try:\n        warnings.warn('bad', DeprecationWarning)\n    except DeprecationWarning as e:\n        return x + 1, str(e)\nreturn x"),
    ("ignore_filter_records_nothing", "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('ignore')\n    warnings.warn('quiet')\n    y = x.cos()\nreturn y, len(w)"),
    ("stacklevel_two_names_caller_line", "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    warn_from_helper('from helper')\n    y = x.exp()\nreturn y, [(m.lineno, m.category.__name__) for m in w]"),
    ("category_and_message_text", "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    warnings.warn(f'size {x.shape[0]}', FutureWarning)\nreturn x, [(type(m.message).__name__, str(m.message)) for m in w]"),
]
snippets("cpython/test_warnings", "r3_warnings", WARNINGS, namespace=NS)

COPY = [
    ("copy_shares_tensor_and_list", "c = copy.copy(h)\nc.items.append(c.t * 2)\nc.t = c.t + 1\nreturn c.t, c.items is h.items, len(h.items)", {"params": "h", "make_args": holder}),
    ("deepcopy_separates_tensor_and_list", "c = copy.deepcopy(h)\nc.items.append(x := c.t * 2)\nc.t.add_(1)\nreturn c.t, h.t, c.items is h.items, len(h.items)", {"params": "h", "make_args": holder}),
    ("deepcopy_keeps_internal_sharing", "o = Obj(a=x, b=x, l=[x])\nc = copy.deepcopy(o)\nreturn c.a is c.b, c.l[0] is c.a, c.a is x, c.a + 1"),
    ("copy_protocol_methods_used", "CopyAware.log.clear()\no = CopyAware(x)\na = copy.copy(o)\nb = copy.deepcopy(o)\nreturn a.t, b.t, list(CopyAware.log)"),
    ("copy_of_dict_of_tensors", "d = {'a': x, 'b': [x]}\nc = copy.copy(d)\ne = copy.deepcopy(d)\nc['a'] = x + 1\ne['b'][0].mul_(2)\nreturn d['a'], c['a'], e['b'][0], c['b'] is d['b']"),
    ("deepcopy_leaf_requires_grad", "w = x.detach().requires_grad_()\nc = copy.deepcopy(w)\nreturn c.requires_grad, c.is_leaf, c is w, c + 1"),
    ("copy_of_list_then_mutate_input", "c = copy.copy(items)\nitems.append(items[0] * 2)\nreturn len(c), len(items)", {"params": "items", "make_args": lambda n: ([torch.randn(n)],)}),
    ("deepcopy_memo_dict_reused", "memo = {}\na = copy.deepcopy([x], memo)\nb = copy.deepcopy([x], memo)\nreturn a[0] is b[0], a[0] + b[0]"),
]
snippets("cpython/test_copy", "r3_copy", COPY, namespace=NS)

WEAKREFS = [
    ("ref_returns_object", "o = Obj(t=x)\nr = weakref.ref(o)\nreturn r() is o, r().t * 2"),
    ("ref_dead_after_del", "o = Obj(t=x)\nr = weakref.ref(o)\ndel o\nreturn x + 1, r() is None"),
    ("ref_to_input_object", "r = weakref.ref(o)\nr().t = r().t + y\nreturn r() is o", {"params": "o, y", "make_args": obj_and_vec}),
    ("ref_to_tensor", "r = weakref.ref(x)\nreturn r() is x, r() * 2"),
    ("weak_key_dictionary_lookup", "d = weakref.WeakKeyDictionary()\na = Obj(t=x)\nb = Obj(t=x * 2)\nd[a] = 1\nd[b] = 2\nreturn a.t * d[a] + b.t * d[b], len(d), a in d"),
    ("weak_value_dictionary_lookup", "d = weakref.WeakValueDictionary()\no = Obj(t=x)\nd['k'] = o\nreturn d['k'].t + 1, 'k' in d, d.get('missing')"),
    ("weak_value_entry_gone_after_del", "d = weakref.WeakValueDictionary()\no = Obj(t=x)\nd['k'] = o\ndel o\nreturn x * 2, len(d)"),
    ("ref_callback_runs_on_death", "log = []\no = Obj(t=x)\nr = weakref.ref(o, lambda ref: log.append('dead'))\ny = o.t + 1\ndel o\nreturn y, log"),
]
snippets("cpython/test_weakref", "r3_weakref", WEAKREFS, namespace=NS)

ABCS = [
    ("mapping_and_sequence_checks", "d = {'a': x}\nreturn [isinstance(v, Mapping) for v in (d, [x], (x,), x)], [isinstance(v, Sequence) for v in (d, [x], (x,), 'ab', x)]"),
    ("iterable_iterator_of_tensor", "return isinstance(x, Iterable), isinstance(x, Iterator), isinstance(iter(x), Iterator), x + 1"),
    ("callable_checks", "f = lambda t: t\nreturn [isinstance(v, Callable) for v in (f, torch.sin, x, len, Obj)], callable(x.add)"),
    ("size_is_sequence_and_tuple", "s = x.shape\nreturn isinstance(s, Sequence), isinstance(s, tuple), isinstance(s, Hashable), isinstance(s, collections.abc.MutableSequence)"),
    ("protocol_class_is_collection", "b = Bag([x, x * 2])\nreturn isinstance(b, Collection), isinstance(b, Sized), isinstance(b, Sequence), len(b), sum(b)"),
    ("hashable_checks", "return [isinstance(v, Hashable) for v in (x, [x], (1, 2), {}, x.shape, 'a')]"),
    ("dict_views_are_sets", "d = {'a': x, 'b': x * 2}\nk = d.keys()\nreturn isinstance(k, Set), isinstance(d.values(), Set), k & {'a', 'z'}, d['a'] + d['b']"),
    ("branch_on_mapping_input", "def total(v):\n    if isinstance(v, Mapping):\n        return sum(v.values())\n    if isinstance(v, Sequence):\n        return sum(v)\n    return v\nreturn total({'a': x, 'b': x}), total([x, x, x]), total(x)"),
    ("virtual_subclass_registered", "return isinstance([x], Virtual), issubclass(list, Virtual), isinstance((x,), Virtual), x * 2"),
    ("mutable_mapping_of_defaultdict", "d = collections.defaultdict(list)\nd['k'].append(x)\nreturn isinstance(d, MutableMapping), d['k'][0] + 1"),
]
snippets("cpython/test_collections", "r3_abc_checks", ABCS, namespace=NS)

TYPING = [
    ("namedtuple_class_method_and_default", "p = Point(x)\nq = Point(x, 0.5)\nreturn p.scaled() + q.scaled(), p.scale, q._replace(scale=3.0).scaled()"),
    ("namedtuple_class_unpack_and_index", "a, s = Point(x * 2, 4.0)\nreturn a * s, Point(x)[1], Point._fields"),
    ("typeddict_is_plain_dict", "c = Config(width=x.shape[0], name='n')\nreturn x * c['width'], type(c).__name__, sorted(c)"),
    ("cast_returns_same_object", "y = typing.cast(torch.Tensor, x)\nz = typing.cast('list[int]', [1, 2])\nreturn y is x, y + 1, z"),
    ("runtime_checkable_protocol", "d = Doubler()\nreturn isinstance(d, HasForward), isinstance(x, HasForward), d.forward(x)"),
    ("newtype_is_identity", "w = Width(x.shape[0])\nreturn x * w, type(w).__name__"),
    ("optional_annotated_local", "y: typing.Optional[torch.Tensor] = None\nif x.shape[0] > 2:\n    y = x * 2\nreturn y"),
    ("type_checking_flag_false", "if typing.TYPE_CHECKING:\n    return x * 0\nreturn x + 1"),
    ("get_type_hints_of_namedtuple", "hints = typing.get_type_hints(Point)\nreturn x, sorted(hints), hints['scale'] is float"),
]
snippets("cpython/test_typing", "r3_typing", TYPING, namespace=NS)

ENUMS = [
    ("flag_or_and_membership", "p = Perm.R | Perm.W\nreturn x * (Perm.W in p), Perm.X in p, bool(p & Perm.X), p.value"),
    ("flag_invert_and_iteration", "p = ~Perm.X\nreturn x + len(list(p)), [m.name for m in p]"),
    ("intflag_arithmetic_with_ints", "b = Bits.A | Bits.C\nreturn x * int(b), b + 1, b & 4, isinstance(b, int)"),
    ("intflag_scales_tensor", "return x * (Bits.B | Bits.A), x + Bits.C"),
    ("enum_lookup_by_value_and_name", "return x * Color(2).value, Color['RED'].name, Color.GREEN is Color(2)"),
    ("intenum_compares_with_size", "n = x.shape[0]\nlevel = Level.HIGH if n > Level.LOW else Level.LOW\nreturn x * level, level.name, n >= Level.HIGH"),
    ("enum_members_iteration_and_dict_key", "weights = {Color.RED: 2.0, Color.GREEN: -1.0}\nout = x\nfor c in Color:\n    out = out * weights[c]\nreturn out, [c.value for c in Color]"),
    ("flag_empty_is_falsy", "p = Perm.R & Perm.W\nreturn x if not p else x * 0, p.value, Perm(0) == p"),
]
snippets("cpython/test_enum", "r3_enum", ENUMS, namespace=NS)

ABSTRACT = [
    ("concrete_subclass_template_method", "return Square().twice(x), isinstance(Square(), Shape)"),
    ("abstract_instantiation_raises", "try:\n    HalfDone()\nexcept TypeError:\n    return x + 1\nreturn x"),
    ("abstract_methods_set", "return x, sorted(HalfDone.__abstractmethods__), len(Square.__abstractmethods__)"),
]
snippets("cpython/test_abc", "r3_abstract", ABSTRACT, namespace=NS)

OPERATOR = [
    ("attrgetter_dotted_and_multiple", "o = Obj(inner=Obj(t=x), k=2)\nget = operator.attrgetter('inner.t', 'k')\nt, k = get(o)\nreturn t * k"),
    ("itemgetter_tuple_and_slice", "rows = [x, x * 2, x * 3]\na, b = operator.itemgetter(0, 2)(rows)\nmid = operator.itemgetter(slice(1, None))(rows)\nreturn a + b, mid"),
    ("itemgetter_as_sort_key", "pairs = [(3, x), (1, x * 2), (2, x * 3)]\nreturn [p[1] for p in sorted(pairs, key=operator.itemgetter(0))]"),
    ("methodcaller_on_tensor_with_args", "f = operator.methodcaller('add', 1, alpha=2)\ng = operator.methodcaller('sum', dim=0)\nreturn f(x), g(x)"),
    ("attrgetter_on_tensor_shape", "return operator.attrgetter('shape', 'dtype')(x), operator.attrgetter('T')(x.reshape(1, -1))"),
    ("operator_functions_on_tensors", "return operator.neg(x), operator.truediv(x, 2), operator.iadd([x], [x])[1], operator.contains([1, 2], 2)"),
    ("operator_index_and_truth_of_size", "n = operator.index(x.shape[0])\nreturn x * n, operator.truth(n - n), operator.getitem(x, n - 1)"),
    ("map_itemgetter_over_dicts", "ds = [{'t': x}, {'t': x + 1}]\nreturn list(map(operator.itemgetter('t'), ds))"),
]
snippets("cpython/test_operator", "r3_operator", OPERATOR, namespace=NS)

HEAPS = [
    ("heappush_pop_order", "h = []\nfor i, k in enumerate((5, 1, 3)):\n    heapq.heappush(h, (k, i))\nout = [heapq.heappop(h) for _ in range(3)]\nreturn x * out[0][0], out"),
    ("heapify_of_sizes", "h = [x.shape[0], 3, 9, 1]\nheapq.heapify(h)\nreturn x + h[0], h"),
    ("nlargest_with_key_on_tensor_rows", "rows = [x * 1, x * 3, x * 2]\ntop = heapq.nlargest(2, range(3), key=lambda i: [1, 3, 2][i])\nreturn [rows[i] for i in top]"),
    ("heap_of_tensor_entries_by_priority", "h = []\nheapq.heappush(h, (2, 0, x))\nheapq.heappush(h, (1, 1, x * 2))\nreturn heapq.heappop(h)[2], len(h)"),
    ("bisect_left_right_on_sizes", "bounds = [2, 4, 4, 8]\nn = x.shape[0]\nreturn x * bisect.bisect_left(bounds, n), bisect.bisect_right(bounds, n)"),
    ("insort_keeps_order", "l = [1, 5, 9]\nbisect.insort(l, x.shape[0])\nreturn x + l.index(x.shape[0]), l"),
    ("bisect_with_key", "items = [(1, 'a'), (4, 'b'), (8, 'c')]\ni = bisect.bisect(items, x.shape[0], key=lambda p: p[0])\nreturn x * i, i"),
    ("merge_sorted_lists", "return x, list(heapq.merge([1, 4, 9], [x.shape[0], 10]))"),
]
snippets("cpython/test_heapq", "r3_heapq", HEAPS, namespace=NS)

MATH = [
    ("prod_gcd_lcm_of_shape", "a, b = x.shape\nreturn x * math.prod(x.shape), math.gcd(a, 6), math.lcm(a, b)", {"make_args": matrix}),
    ("isqrt_comb_factorial_of_size", "n = x.shape[0]\nreturn x + math.isqrt(n), math.comb(n, 2), math.factorial(n)"),
    ("log2_ceil_floor_of_size", "n = x.shape[0]\nreturn x * math.ceil(math.log2(n)), math.floor(n / 3), math.trunc(-n / 3)"),
    ("copysign_fmod_hypot", "n = x.shape[0]\nreturn x * math.copysign(1, -n), math.fmod(-n, 3), math.hypot(n, 3), math.dist((0, 0), (n, 1))"),
    ("isclose_and_inf_compare", "n = x.shape[0]\nreturn x + math.isclose(n / 3 * 3, n), n < math.inf, math.isfinite(n), math.isnan(n * math.nan)"),
    ("cmath_sqrt_of_negative_size", "z = cmath.sqrt(-x.shape[0])\nreturn x * z.imag, z, abs(z)"),
    ("cmath_exp_phase_polar", "n = x.shape[0]\nz = cmath.exp(1j * math.pi / n)\nr, phi = cmath.polar(z)\nreturn x * r, round(phi, 6), cmath.phase(complex(-n, 0))"),
    ("math_of_tensor_item", "v = x.abs().sum().item()\nreturn x * math.sqrt(v), math.floor(v)"),
    ("fsum_and_sumprod_of_sizes", "n = x.shape[0]\nreturn x * math.fsum([0.1] * n), math.exp(math.log(n))"),
    ("complex_of_sizes_in_tensor", "z = complex(x.shape[0], 1)\nreturn x * z.real, torch.tensor([z]), z.conjugate()"),
]
snippets("cpython/test_math", "r3_math", MATH, namespace=NS)
