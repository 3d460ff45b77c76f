"""Cases modelled on PyTorch's test/dynamo/test_misc.py: user classes and objects (dataclasses,
enums, properties and their setters, classmethods/staticmethods, __getattr__ fallbacks,
getattr/setattr/hasattr with defaults, config objects), comprehensions over dicts, globals
mutated from compiled code, in-place ops on views and their bases, grad-mode blocks
(no_grad, enable_grad, set_grad_enabled, inference of requires_grad), tensor attribute reads
(.shape/.dtype/.device/.requires_grad/.is_leaf/.grad_fn), numel and torch.Size queries,
assertions, and torch._check, recast in our own words."""

import dataclasses
import enum
import math

import torch

from . import snippets, vec_grad

GLOBAL_STATE = {"calls": 0}
GLOBAL_TENSORS = []


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


@dataclasses.dataclass
class Settings:
    scale: float = 2.0
    shift: int = 1
    tags: list = dataclasses.field(default_factory=list)

    def apply(self, t):
        return t * self.scale + self.shift


@dataclasses.dataclass(frozen=True)
class FrozenSettings:
    scale: float
    name: str = "frozen"


@dataclasses.dataclass
class WithPostInit:
    base: float
    derived: float = dataclasses.field(init=False)

    def __post_init__(self):
        self.derived = self.base * 10


class Temperature:
    def __init__(self, c):
        self._c = c

    @property
    def f(self):
        return self._c * 9 / 5 + 32

    @f.setter
    def f(self, value):
        self._c = (value - 32) * 5 / 9


class Fallback:
    def __init__(self):
        self.real = 3

    def __getattr__(self, name):
        if name.startswith("fake_"):
            return len(name)
        raise AttributeError(name)


class Cfg:
    def __init__(self):
        self.val = 0.5
        self.count = 3


class Counter:
    total = 0

    @classmethod
    def bump(cls, k):
        cls.total += k
        return cls.total

    @staticmethod
    def twice(t):
        return t * 2


def settings_and_vec(n):
    return Settings(scale=n / 2), torch.randn(n)


def cfg_and_vec(n):
    cfg = Cfg()
    cfg.count = n % 3 + 1
    return torch.randn(n), cfg


NS = {
    "torch": torch, "math": math, "dataclasses": dataclasses, "enum": enum, "Color": Color, "Level": Level,
    "Settings": Settings, "FrozenSettings": FrozenSettings, "WithPostInit": WithPostInit,
    "Temperature": Temperature, "Fallback": Fallback, "Counter": Counter, "Cfg": Cfg,
    "GLOBAL_STATE": GLOBAL_STATE, "GLOBAL_TENSORS": GLOBAL_TENSORS,
}

MISC = [
    # dataclasses
    ("dataclass_made_inside", "s = Settings(scale=3.0)\ns.tags.append('a')\nreturn s.apply(x), s.tags, s"),
    ("dataclass_replace_and_asdict", "s = Settings()\nr = dataclasses.replace(s, shift=5)\nreturn r.apply(x), dataclasses.asdict(r)"),
    ("dataclass_fields_names", "names = [f.name for f in dataclasses.fields(Settings)]\nreturn x + len(names), names"),
    ("dataclass_frozen_setattr_raises", "s = FrozenSettings(2.0)\ns.scale = 3.0\nreturn x * s.scale"),
    ("dataclass_frozen_read", "s = FrozenSettings(2.0)\nreturn x * s.scale, s.name, s == FrozenSettings(2.0)"),
    ("dataclass_post_init", "w = WithPostInit(1.5)\nreturn x + w.derived, w"),
    ("dataclass_eq_and_isinstance", "a = Settings()\nb = Settings()\nreturn x + (a == b) + dataclasses.is_dataclass(a)"),
    # enums
    ("enum_value_and_name", "c = Color.GREEN\nreturn x * c.value, c.name, c is Color.GREEN"),
    ("enum_lookup_by_value", "c = Color(1)\nreturn (x + 1 if c == Color.RED else x - 1), c"),
    ("intenum_arithmetic", "return x * Level.HIGH + Level.LOW, Level.HIGH > Level.LOW, int(Level.HIGH)"),
    ("enum_iteration_and_membership", "names = [c.name for c in Color]\nreturn x + len(names), names, Color.RED in Color"),
    ("enum_as_dict_key", "d = {Color.RED: 2.0, Color.GREEN: 3.0}\nreturn x * d[Color.GREEN]"),
    # properties, classmethods, staticmethods
    ("property_getter_and_setter", "t = Temperature(x)\nt.f = t.f + 9\nreturn t._c, t.f"),
    ("classmethod_mutates_class_attribute", "a = Counter.bump(2)\nb = Counter.bump(3)\nr = x + a + b\nCounter.total = 0\nreturn r"),
    ("staticmethod_via_instance", "return Counter().twice(x) + Counter.twice(x)"),
    ("getattr_fallback_dunder", "f = Fallback()\nreturn x + f.real + f.fake_abc, hasattr(f, 'nope'), hasattr(f, 'fake_z')"),
    ("getattr_with_default", "c = Cfg()\nif getattr(c, 'add_seven', False):\n    return x + 7\nfor _ in range(c.count):\n    x = x + c.val\nreturn x"),
    ("setattr_then_hasattr", "c = Cfg()\nsetattr(c, 'extra', 4)\nreturn x * c.extra + hasattr(c, 'extra') + hasattr(c, 'other'), vars(c)"),
    ("type_of_object_and_name", "c = Cfg()\nreturn x + (type(c) is Cfg), type(c).__name__, c.__class__.__name__"),
    ("class_defined_inside_with_method", "class Acc:\n    def __init__(self):\n        self.items = []\n    def add(self, t):\n        self.items.append(t)\n        return self\na = Acc().add(x).add(x * 2)\nreturn sum(a.items), len(a.items)"),
    # comprehensions
    ("dict_comprehension_over_items", "d = {'a': x, 'b': x * 2}\nreturn {k: v + 1 for k, v in d.items()}"),
    ("list_comprehension_cat", "d = {'a': x, 'b': x * 2}\nreturn torch.cat([v + 1 for v in d.values()], 0).sum()"),
    ("set_comprehension_of_shapes", "s = {t.shape[0] for t in (x, x[1:], x)}\nreturn x + len(s), sorted(s)"),
    ("nested_comprehension_condition", "m = [[i * j for j in range(3) if j != i] for i in range(3)]\nreturn x + sum(map(sum, m)), m"),
    ("generator_expression_any_all", "ts = [x, x + 1]\nreturn x + any(t.shape[0] > 2 for t in ts) + all(t.dim() == 1 for t in ts)"),
    ("dict_keys_union_loop", "a = {'p': x, 'q': x * 2}\nb = {'q': x + 1, 'r': x - 1}\ntotal = torch.zeros_like(x)\nfor k in sorted(a.keys() | b.keys()):\n    if k in a:\n        total += a[k]\n    if k in b:\n        total += b[k]\nreturn total"),
    # global mutation
    ("global_dict_counter_mutated", "GLOBAL_STATE['calls'] += 1\nr = x + GLOBAL_STATE['calls']\nGLOBAL_STATE['calls'] -= 1\nreturn r"),
    ("global_list_append_tensor", "GLOBAL_TENSORS.append(x * 2)\nr = GLOBAL_TENSORS[-1] + 1\nGLOBAL_TENSORS.clear()\nreturn r"),
    ("global_rebound_via_global_statement", "global _TMP_GLOBAL\n_TMP_GLOBAL = x.shape[0]\nreturn x + _TMP_GLOBAL"),
    # in-place ops on views
    ("inplace_on_slice_updates_base", "y = x.clone()\ny[1:].mul_(2)\nreturn y"),
    ("inplace_on_view_of_base", "y = x.clone()\nv = y.view(-1, 1)\nv.add_(1)\nreturn y, v"),
    ("inplace_on_transposed_view", "y = torch.stack([x, x * 2])\ny.t().mul_(3)\nreturn y"),
    ("index_assignment_scalar_and_tensor", "y = x.clone()\ny[0] = 5.0\ny[-1] = x[0]\nreturn y"),
    ("inplace_on_input_view", "x[:2].zero_()\nreturn x + 1"),
    ("inplace_base_then_read_view", "y = x.clone()\nv = y[::2]\ny.add_(10)\nreturn v * 1"),
    ("unsqueeze_inplace_on_input", "x.unsqueeze_(0)\nreturn x.shape, x + 1"),
    ("masked_fill_inplace_python_scalar", "y = x.clone()\ny.masked_fill_(y < 0, 0.5)\nreturn y"),
    # grad mode
    ("no_grad_block_requires_grad", "with torch.no_grad():\n    y = x * 2\nz = x * 3\nreturn y, z, y.requires_grad, z.requires_grad", {"make_args": vec_grad, "train": True}),
    ("enable_grad_inside_no_grad", "with torch.no_grad():\n    with torch.enable_grad():\n        y = x * 2\n    z = x * 3\nreturn y + z, y.requires_grad, z.requires_grad", {"make_args": vec_grad, "train": True}),
    ("set_grad_enabled_false", "with torch.set_grad_enabled(False):\n    y = x.sin()\nreturn y, torch.is_grad_enabled(), y.requires_grad", {"make_args": vec_grad}),
    ("no_grad_decorated_inner", "@torch.no_grad()\ndef aug(t):\n    return (t + 1) * 2\ny = aug(x)\nreturn y, y.requires_grad", {"make_args": vec_grad}),
    ("is_leaf_and_grad_fn", "y = x * 2\nreturn y, x.is_leaf, y.is_leaf, y.grad_fn is None, x.grad_fn is None", {"make_args": vec_grad, "train": True}),
    ("detach_requires_grad_flags", "d = x.detach()\nreturn d + 1, d.requires_grad, d.is_leaf, x.requires_grad", {"make_args": vec_grad, "train": True}),
    # tensor attribute reads
    ("shape_dtype_device_reads", "return x + x.shape[0], x.dtype, x.device, x.device.type, x.is_cuda, x.layout"),
    ("numel_forms", "return x + x.numel() + torch.numel(x) + x.nelement()"),
    ("type_string_and_to_dtype", "h = x.to(torch.float16)\nreturn x.type(h.type()), h.type()"),
    ("is_contiguous_memory_format", "if x.is_contiguous(memory_format=torch.contiguous_format):\n    return x + 1\nreturn x"),
    ("T_and_mT_of_matrix", "m = x.reshape(-1, 1)\nreturn torch.ones_like(m.T) + m.mT"),
    ("requires_grad_toggled_inside", "y = x.clone()\ny.requires_grad_(True)\nreturn y * 2, y.requires_grad, y.is_leaf"),
    # assertions and checks
    ("assert_on_shape_passes", "assert x.shape == x.shape\nreturn x.abs()"),
    ("assert_on_shape_fails", "assert x.shape[0] > 100, 'too small'\nreturn x"),
    ("torch_check_true_predicate", "torch._check(x.shape[0] > 1)\nreturn x + 1"),
    ("pair_helper_and_ntuple", "return torch.zeros(torch.nn.modules.utils._pair(x.shape[0])) + x + torch.ones(torch.nn.modules.utils._ntuple(3)(2)).sum()"),
    ("math_functions_on_sizes", "n = x.shape[0]\nreturn x * math.sqrt(n) + math.ceil(n / 3) + math.log2(n), math.gcd(n, 6)"),
]
snippets("dynamo/test_misc", "misc", MISC, namespace=NS)

MISC_OBJECTS = [
    ("dataclass_input_read", "return s.apply(x), s.scale", {"params": "s, x", "make_args": settings_and_vec}),
    ("dataclass_input_mutated", "s.shift += 2\ns.tags.append(x.shape[0])\nreturn s.apply(x)", {"params": "s, x", "make_args": settings_and_vec}),
    ("config_object_loop_count", "for _ in range(cfg.count):\n    x = x + cfg.val\nreturn x", {"params": "x, cfg", "make_args": cfg_and_vec}),
    ("config_object_attribute_written", "cfg.val = x.shape[0] * 0.5\nreturn x * cfg.val", {"params": "x, cfg", "make_args": cfg_and_vec}),
    ("size_input_unpacked", "a, b = s\nreturn x + (a - b)", {"params": "x, s", "make_args": lambda n: (torch.randn(n, 3), torch.Size([n, 3]))}),
]
snippets("dynamo/test_misc", "misc_objects", MISC_OBJECTS, namespace=NS)
