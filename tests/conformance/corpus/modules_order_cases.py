"""Cases modelled on dynamo's test_modules OptimizedModuleTest and lazy-module tests: the
order of a module's parameters, buffers and submodules (reordered between calls on one shared
module, so an entry that baked the first order in gives wrong sums), modules used as dict keys,
a parameter registry replaced by an OrderedDict subclass (as ZeRO does), nn.Buffer members,
itertools.chain over parameters and buffers, a conv's _conv_forward called by its owner, lazy
modules whose initialize_parameters adds a submodule or takes keyword arguments, and a lazy
parent whose super() method reads a parameter made at initialisation. Recast in our own words."""

import collections
import itertools
import random

import torch
from torch.nn.modules.lazy import LazyModuleMixin

from . import snippets

SOURCE = "dynamo/test_modules"
nn = torch.nn


class Ordered(nn.Module):
    def __init__(self):
        super().__init__()
        self.param1 = nn.Parameter(torch.ones([1]))
        self.param2 = nn.Parameter(torch.ones([2]) * 2)
        self.b1 = nn.Buffer(torch.ones([1]) * 3)
        self.b2 = nn.Buffer(torch.ones([2]) * 4)
        self.linear1 = nn.Linear(3, 3)
        self.linear2 = nn.Linear(4, 4)


SHARED = Ordered()
KEYS = {"param1", "param2"}


def reordered(n):
    """The shared module with one of its registries rotated (or not), and an input."""
    for table in (SHARED._parameters, SHARED._buffers, SHARED._modules):
        if random.random() < 0.5:
            first = next(iter(table))
            table[first] = table.pop(first)
    return SHARED, torch.ones(n)


class ZeroDict(collections.OrderedDict):
    def __init__(self, parent_module=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._parent_module = parent_module

    def __getitem__(self, key):
        return super().__getitem__(key)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.randn(4, 4))
        self.scale_dup = self.scale

    def forward(self, x):
        count = sum(1 for _ in self.parameters())
        return self.linear1(x) * count + x @ self.scale


def zero_injected():
    model = Scaled()
    for m in model.modules():
        table = ZeroDict(parent_module=m)
        for key, param in m._parameters.items():
            table[key] = param
        m._parameters = table
    return model


class SpecialConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels=3, out_channels=4, kernel_size=(3, 3))

    def _conv_forward(self, x):
        return self.conv._conv_forward(x, self.conv.weight, self.conv.bias)

    def forward(self, x):
        return self._conv_forward(x)


class LazyListLayer(LazyModuleMixin, nn.Module):
    def __init__(self):
        super().__init__()

    def initialize_parameters(self, inputs):
        with torch.no_grad():
            self._param = nn.Parameter(torch.empty(inputs[0].shape).fill_(0.5))

    def forward(self, inputs):
        x = 0
        for t in inputs:
            x = x + t * self._param
        return x


class LazyWithLazySubmodule(LazyModuleMixin, nn.Module):
    def __init__(self):
        super().__init__()

    def initialize_parameters(self, inputs):
        with torch.no_grad():
            self.layer = LazyListLayer()

    def forward(self, inputs):
        return self.layer(inputs)


class LazyTwoInputs(LazyModuleMixin, nn.Module):
    def __init__(self):
        super().__init__()

    def initialize_parameters(self, x, y):
        with torch.no_grad():
            self._param_x = nn.Parameter(torch.empty(x[0].shape).fill_(0.5))
            self._param_y = nn.Parameter(torch.empty(y[0].shape).fill_(0.25))

    def forward(self, x, y):
        return sum(t * self._param_x for t in x) + sum(t * self._param_y for t in y)


class LazyKwargs(LazyModuleMixin, nn.Module):
    def __init__(self):
        super().__init__()

    def initialize_parameters(self, *args, **kwargs):
        with torch.no_grad():
            self.layer = LazyTwoInputs()

    def forward(self, x, y):
        return self.layer(x, y=y)


class LazyParent(LazyModuleMixin, nn.Module):
    def __init__(self):
        super().__init__()

    def impl(self, x):
        return x.cos() + self._val


class LazyChild(LazyParent):
    def forward(self, x):
        return super().impl(x.sin())

    def initialize_parameters(self, x):
        self._val = nn.Parameter(torch.ones(x.shape[-1]))


def inputs_list(n):
    return [torch.randn(2, n) for _ in range(3)]


NS = {"torch": torch, "itertools": itertools}

ORDER = [
    ("parameter_order_changes", "coeffs = [2, 3]\nfor i, p in enumerate(m.parameters()):\n    x = x + p.sum() * coeffs[i]\nfor i, (name, p) in enumerate(m.named_parameters(recurse=False)):\n    x = x + p.sum() * coeffs[i]\nreturn x"),
    ("buffer_order_changes", "coeffs = [2, 3]\nfor i, b in enumerate(m.buffers()):\n    x = x + b.sum() * coeffs[i]\nreturn x, [n for n, _ in m.named_buffers()]"),
    ("module_order_and_modules_as_keys", "weights = {m: 10, m.linear1: 20, m.linear2: 30}\ncoeffs = [2, 3, 4]\nfor i, sub in enumerate(m.modules()):\n    x = x + weights[sub] * coeffs[i]\nfor i, (_, sub) in enumerate(m.named_children()):\n    x = x + weights[sub] * coeffs[i]\nreturn x"),
    ("state_dict_key_order", "return x, list(m.state_dict().keys())"),
    ("chain_parameters_and_buffers_dtype", "first = next(itertools.chain(m.parameters(), m.buffers()))\nreturn x.to(first.dtype) * first.shape[0]"),
]
snippets(SOURCE, "modules_order", ORDER, namespace=NS, params="m, x", make_args=reordered)

snippets(SOURCE, "modules_special", [
    ("parameters_in_ordereddict_subclass", "return m(x), len(m._parameters)"),
], namespace=NS, params="m, x", make_args=lambda n: (torch.manual_seed(0), zero_injected(), torch.randn(n, 4))[1:])
snippets(SOURCE, "modules_special", [
    ("conv_forward_helper_called_by_owner", "return m(x)"),
], namespace=NS, params="m, x", make_args=lambda n: (torch.manual_seed(0), SpecialConv(), torch.randn(2, 3, n + 2, n + 2))[1:])

LAZY = [
    ("lazy_module_adds_lazy_submodule", LazyWithLazySubmodule, "return m(xs), type(m.layer).__name__"),
    ("lazy_layer_list_input", LazyListLayer, "return m(xs[:-1])"),
]
for name, build, body in LAZY:
    snippets(SOURCE, "modules_lazy", [(name, body)], namespace=NS, params="m, xs", make_args=lambda n, build=build: (build(), inputs_list(n)))
snippets(SOURCE, "modules_lazy", [
    ("lazy_module_keyword_inputs", "return m(xs, ys)"),
], namespace=NS, params="m, xs, ys", make_args=lambda n: (LazyKwargs(), inputs_list(n), inputs_list(n)[:2]))
snippets(SOURCE, "modules_lazy", [
    ("lazy_parent_super_method", "return m(x)"),
], namespace=NS, params="m, x", make_args=lambda n: (LazyChild(), torch.randn(2, n)))
