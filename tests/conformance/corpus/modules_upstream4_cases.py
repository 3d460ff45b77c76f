"""Round four of dynamo's test_modules (recast in our own words), the parts modules_upstream
and modules_cases did not take: forward choosing a layer by `self.training`, methods that take a
module argument (plain, static, class methods) with and without a graph break inside, a static
forward, a property alias, a layer that may be None, a keyword offset, string modes, super()
and `Base.forward(self, x)`, `in` on a ModuleDict, two modules sharing a layer and each counting
its calls, attributes set on a submodule or created inside forward (returned, kept), training
flags flipped inside, a buffer rebound to `.to(x)`, instance attributes shadowing methods, an
overridden __call__, parameters frozen by a counter, conv subclasses whose stride differs per
call, ModuleDict iterated by name/keys/values, a user object's method as a prepended pre-hook,
lazy modules (list and namedtuple inputs, keyword initialization, a lazy submodule made in
initialize_parameters, cls_to_become), ConvTranspose called directly. Most run as `train`
cases too: the grads of inputs and parameters are compared after backward."""

import collections
import types
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch.nn.modules.lazy import LazyModuleMixin
from torch.nn.parameter import UninitializedParameter

from .upstream4_support import graph_break, pick, register

nn = torch.nn
W = 5
case = register("dynamo/test_modules", "modules4")


class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(W, W)
        self.scale = torch.randn(1, W)

    def forward(self, x):
        return F.relu(self.linear1(x)) * self.scale


class TrainingPicksLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(W, W)
        self.linear2 = nn.Linear(W, W)
        self.train(pick(True, False))

    def forward(self, x):
        mod = self.linear1 if self.training else self.linear2
        return F.relu(mod(x))


class MethodTakesModule(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.layer1 = Basic()
        self.layer2 = Basic()
        self.scale = torch.randn(1, W)

    def call_and_scale(self, mod, x):
        x = mod(x)
        if self.kind == "break":
            graph_break()
        return x * self.scale

    @staticmethod
    def static_scale(scale, mod, x):
        return mod(x) * scale

    @classmethod
    def class_scale(cls, scale, mod, x):
        return mod(x) * scale * len(cls.__name__)

    def forward(self, x):
        if self.kind == "static":
            return self.static_scale(self.scale, self.layer1, x) + self.static_scale(self.scale, self.layer2, x)
        if self.kind == "class":
            return self.class_scale(self.scale, self.layer1, x) + self.class_scale(self.scale, self.layer2, x)
        return self.call_and_scale(self.layer1, x) + self.call_and_scale(self.layer2, x)


class StaticForward(nn.Module):
    @staticmethod
    def forward(x):
        return x * torch.sigmoid(x)


class CallsStaticForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = StaticForward()
        self.lin = nn.Linear(W, W)

    def forward(self, x):
        return self.mod(self.lin(x))


class UnsupportedInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = Basic()
        self.scale = torch.randn(1, W)

    def forward(self, x):
        x = self.layer1(x) * self.scale
        graph_break()
        return x + x.sin()


class CallsUnsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = UnsupportedInside()

    def forward(self, x):
        return 1 + self.mod(x * 1.5)


class PropertyAlias(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(1, W))

    @property
    def weight_alias(self):
        return self.weight

    def forward(self, x):
        return x * self.weight_alias


class CountLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(W, W)
        self.count = pick(1, 2, 3)

    def forward(self, x):
        for _ in range(self.count):
            x = torch.sigmoid(self.linear1(x))
        return x


class MaybeNoneLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(W, W)
        self.layer2 = pick(None, nn.Linear(W, W))

    def forward(self, x):
        if self.layer1 is not None:
            x = self.layer1(x)
        if self.layer2 is not None:
            x = self.layer2(x)
        return x


class OffsetKeyword(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(W, W)

    def forward(self, x, offset=1):
        return F.relu(self.layer1(x)) + offset


class StringMode(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(W, W)
        self.mode = pick("relu", "gelu", "none")

    def forward(self, x):
        if self.mode == "relu":
            return F.relu(self.linear1(x))
        if self.mode == "gelu":
            return F.gelu(self.linear1(x))
        return self.linear1(x)


class SuperPlusTen(Basic):
    def forward(self, x):
        return super().forward(x) + 10.0


class BaseForwardByName(Basic):
    def forward(self, x):
        return Basic.forward(self, x) * 2


class DictContains(nn.Module):
    def __init__(self):
        super().__init__()
        key = pick("foo", "bar")
        self.module_dict = nn.ModuleDict({key: nn.Linear(W, W)})

    def forward(self, x):
        if "foo" in self.module_dict:
            x = self.module_dict["foo"](x)
        return x + 1.0


class Counting(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        self.counter = 0

    def forward(self, x):
        result = self.layer(x) + self.counter
        self.counter += 1
        return F.relu(result)


class SharesLayer(nn.Module):
    def __init__(self):
        super().__init__()
        shared = nn.Linear(W, W)
        self.a = Counting(shared)
        self.b = Counting(shared)

    def forward(self, x):
        return [self.a(x), self.a(x), self.b(x), self.a(x)]


class CreatesAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    def forward(self, x):
        self.text_encoding = self.lin(x) + 1
        return self.text_encoding


class KeepsIntermediate(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(W, 4)
        self.linear2 = nn.Linear(4, W)
        self.x = torch.full((2, 4), 100.0)

    def forward(self, inp):
        res = self.linear1(inp)
        self.x = res
        return self.linear2(res)


class BufferTo(nn.Module):
    def __init__(self):
        super().__init__()
        self.buffer = torch.rand(W)

    def forward(self, x):
        x = x + 1
        self.buffer = self.buffer.to(x)
        return self.buffer + x


class AttrPrecedenceBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = 3

    def forward(self, x, c=4):
        return x * c

    def linear(self, x):
        return x

    def b(self, x):
        raise RuntimeError("shadowed by the instance attribute: never called")


class AttrPrecedence(AttrPrecedenceBase):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(W, W)
        self.a = pick(2, 5)
        self.b = 2
        self.scale = pick(1, -1)

    def scale(self, x):
        raise RuntimeError("shadowed by the instance attribute: never called")

    def forward(self, x, c=None):
        return self.linear(x) * self.a * self.b * self.scale


class OwnCall(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.factor = pick(5, 7)

    def __call__(self, x):
        return self.factor * self.forward(x)

    def forward(self, x):
        return self.lin(x) * 3


class FreezesByCount(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(W, W)
        self.layer2 = nn.Linear(W, W)
        self.num_iter = pick(0, 1, 2)
        for param in self.layer2.parameters():
            param.requires_grad = self.num_iter % 2 == 1

    def forward(self, x):
        x = self.layer2(x + self.layer1.bias)
        self.num_iter += 1
        return x


class StepAttr(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(W, W)
        self.step = pick(10, 11, 12)

    def forward(self, x):
        x = x + 1
        out = self.layer(x) + self.step
        self.step += 1
        return out


class StridedConv(nn.Conv2d):
    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


def strided_conv(n):
    stride = pick(1, 2, 3)
    return StridedConv(2, 3, kernel_size=2, stride=stride), torch.randn(1, 2, n + 3, n + 3)


class ActivationTable(nn.Module):
    def __init__(self, how):
        super().__init__()
        self.how = how
        pairs = [["lrelu", nn.LeakyReLU()], ["prelu", nn.PReLU()]]
        if pick(True, False):
            pairs.reverse()
        self.activations = nn.ModuleDict(pairs)

    def forward(self, x):
        if self.how == "names":
            for name in self.activations:
                x = self.activations[name](x) * len(name)
        elif self.how == "keys":
            for name in self.activations.keys():
                x = self.activations[name](x) + (name == "prelu")
        else:
            for i, activation in enumerate(self.activations.values()):
                x = activation(x) * (i + 1)
        return x


class Squarer(nn.Module):
    def forward(self, x):
        return x * x


class HookOwner:
    """A user object that hangs one of its methods on a module as a prepended pre-hook."""

    def __init__(self, module, shift):
        self.module = module
        self.shift = shift
        self.handle = module.register_forward_pre_hook(self.add_shift, prepend=True, with_kwargs=True)

    def add_shift(self, module, args, kwargs):
        return (args[0] + self.shift,), kwargs

    def __call__(self, x):
        return self.module(x)


def hook_owner(n):
    return HookOwner(Squarer(), pick(1.0, -2.0)), torch.randn(n, W)


class LazyListLayer(LazyModuleMixin, nn.Module):
    def initialize_parameters(self, inputs):
        with torch.no_grad():
            self._param = nn.Parameter(torch.empty(inputs[0].shape).fill_(0.5))

    def forward(self, inputs):
        total = 0
        for i in range(len(inputs)):
            total = total + inputs[i] * self._param
        return total


class LazyListInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = LazyListLayer()

    def forward(self, inputs):
        return self.layer(inputs[:-1])


class Pair(NamedTuple):
    x: dict
    y: torch.Tensor


class LazyTupleLayer(LazyModuleMixin, nn.Module):
    def initialize_parameters(self, inp):
        with torch.no_grad():
            self._param = nn.Parameter(torch.empty(inp.x["a"][0].shape).fill_(0.5))

    def forward(self, inp):
        items = inp.x["a"]
        total = inp.y
        for i in range(len(items)):
            total = total + items[i] * self._param
        return total


class LazyTwoInputs(LazyModuleMixin, nn.Module):
    def initialize_parameters(self, x, y):
        with torch.no_grad():
            self._param_x = nn.Parameter(torch.empty(x[0].shape).fill_(0.5))
            self._param_y = nn.Parameter(torch.empty(y[0].shape).fill_(1.5))

    def forward(self, x, y):
        return sum(x) * self._param_x + sum(y) * self._param_y


class LazyKeywordInit(LazyModuleMixin, nn.Module):
    def initialize_parameters(self, *args, **kwargs):
        with torch.no_grad():
            self.layer = LazyTwoInputs()

    def forward(self, x, y):
        return self.layer(x, y=y)


class LazyMakesLazy(LazyModuleMixin, nn.Module):
    def initialize_parameters(self, inputs):
        with torch.no_grad():
            self.layer = LazyListLayer()

    def forward(self, inputs):
        return self.layer(inputs)


class Materialized(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_parameter("param", None)

    def forward(self, x):
        return x * self.param


class LazyBecomes(LazyModuleMixin, Materialized):
    cls_to_become = Materialized

    def __init__(self):
        super().__init__()
        self.param = UninitializedParameter()

    def initialize_parameters(self, x):
        self.param.materialize(x.shape)
        with torch.no_grad():
            self.param.fill_(0.25)


class LazyParent(LazyModuleMixin, nn.Module):
    def impl(self, x):
        return x.cos() + self._val


class LazyChildNoBecome(LazyParent):
    def forward(self, x):
        return super().impl(x.sin())

    def initialize_parameters(self, x):
        self._val = nn.Parameter(torch.ones(x.shape[-1]))


class TransposeDirect(nn.Module):
    def __init__(self, via_super):
        super().__init__()
        self.layer = nn.ConvTranspose2d(2, 2, 3)
        self.via_super = via_super

    def forward(self, x):
        return self.layer.forward(x) if not self.via_super else nn.ConvTranspose2d.forward(self.layer, x)


class SetsFlagOnChild(nn.Module):
    def __init__(self):
        super().__init__()
        self.models = nn.Sequential(nn.Linear(W, W), nn.BatchNorm1d(W))
        self.models[0].abc = False

    def forward(self, x):
        self.models[0].abc = True
        self.models[1].training = pick(True, False) if not hasattr(self, "fixed") else self.fixed
        return self.models(x), self.models[0].abc


def flag_child(n):
    m = SetsFlagOnChild()
    m.fixed = pick(True, False)
    return m, torch.randn(n, W)


def fresh(cls, *args, input_grad=False):
    def build(n):
        return cls(*args), torch.randn(n, W, requires_grad=input_grad)

    return build


def call(m, x):
    return m(x)


def call_with_offset(m, x, k):
    return m(x, offset=k)


def swap_forward(n):
    m = Basic()
    if pick(True, False):
        m.forward = types.MethodType(lambda self, x: torch.cos(self.linear1(x)), m)
    return m, torch.randn(n, W)


# (name, module class and arguments, trains)
SIMPLE = [
    ("training_picks_layer", (TrainingPicksLayer,), True),
    ("method_takes_module", (MethodTakesModule, "plain"), True),
    ("method_takes_module_breaks", (MethodTakesModule, "break"), True),
    ("static_method_takes_module", (MethodTakesModule, "static"), True),
    ("class_method_takes_module", (MethodTakesModule, "class"), True),
    ("static_forward_submodule", (CallsStaticForward,), True),
    ("submodule_breaks_in_forward", (CallsUnsupported,), True),
    ("property_aliases_parameter", (PropertyAlias,), True),
    ("loop_count_attribute", (CountLoop,), True),
    ("layer_may_be_none", (MaybeNoneLayer,), True),
    ("string_mode_attribute", (StringMode,), True),
    ("super_forward_plus_ten", (SuperPlusTen,), True),
    ("base_forward_called_by_name", (BaseForwardByName,), True),
    ("module_dict_contains_key", (DictContains,), True),
    ("shared_layer_two_counters", (SharesLayer,), True),
    ("attribute_created_in_forward", (CreatesAttribute,), True),
    ("intermediate_kept_on_module", (KeepsIntermediate,), True),
    ("buffer_rebound_to_input", (BufferTo,), False),
    ("instance_attributes_shadow_methods", (AttrPrecedence,), True),
    ("overridden_dunder_call", (OwnCall,), True),
    ("parameters_frozen_by_counter", (FreezesByCount,), True),
    ("int_step_attribute_incremented", (StepAttr,), True),
    ("module_dict_iterated_by_name", (ActivationTable, "names"), True),
    ("module_dict_iterated_by_keys", (ActivationTable, "keys"), True),
    ("module_dict_iterated_by_values", (ActivationTable, "values"), True),
]
for name, (cls, *args), trains in SIMPLE:
    case(name, fresh(cls, *args), call)
    if trains:
        case(f"{name}_train", fresh(cls, *args, input_grad=True), call, train=True)
    case(f"{name}_twice_after_break", fresh(cls, *args), lambda m, x: (m(x), graph_break(), m(x + 1))[::2])


def buffer_to_dtype(n):
    return BufferTo(), torch.randn(n, W, dtype=pick(torch.float32, torch.float64))


case("buffer_rebound_to_input_dtype", buffer_to_dtype, call)
case("keyword_offset_changes", lambda n: (OffsetKeyword(), torch.randn(n, W), pick(0, 1, 2.5)), call_with_offset)
case("keyword_offset_changes_train", lambda n: (OffsetKeyword(), torch.randn(n, W, requires_grad=True), pick(0, 1)),
     call_with_offset, train=True)
case("conv_subclass_stride_per_call", strided_conv, call)
case("conv_subclass_stride_per_call_train", strided_conv, call, train=True)
case("user_object_method_as_pre_hook", hook_owner, call)
case("user_object_method_as_pre_hook_removed", hook_owner, lambda obj, x: (obj(x), obj.handle.remove(), obj(x)))
case("flag_set_on_child_then_called", flag_child, call)
case("flag_set_on_child_then_called_train", flag_child, call, train=True)
case("forward_replaced_on_instance_train", swap_forward, call, train=True)
case("conv_transpose_forward_directly", lambda n: (TransposeDirect(False), torch.randn(2, 2, n, n)), call, train=True)
case("conv_transpose_class_forward", lambda n: (TransposeDirect(True), torch.randn(2, 2, n, n)), call, train=True)


# ---- lazy modules: initialized by the first (compiled) call, then used -----------------------


def lazy_list(n):
    t = torch.randn(n, W)
    return LazyListInput(), [t, t * 2, t * 3, None]


def lazy_tuple(n):
    t = torch.randn(n, W)
    return nn.Sequential(LazyTupleLayer()), Pair(x={"a": [t, t + 1, t * 3], "b": t}, y=torch.randn(n, W))


def lazy_two(n):
    return LazyKeywordInit(), [torch.randn(n, W) for _ in range(3)], [torch.randn(n, W) for _ in range(2)]


def lazy_makes_lazy(n):
    return LazyMakesLazy(), [torch.randn(n, W) for _ in range(3)]


def lazy_becomes(n):
    return LazyBecomes(), torch.randn(n, W)


def lazy_child(n):
    return LazyChildNoBecome(), torch.randn(n, W)


def lazy_mlp(n):
    return nn.Sequential(nn.LazyLinear(W), nn.ReLU(), nn.LazyLinear(1)), torch.randn(n, 3)


case("lazy_layer_list_input_with_none", lazy_list, call)
case("lazy_layer_namedtuple_of_dicts", lazy_tuple, lambda m, inp: (m(inp), sorted(n for n, _ in m.named_parameters())))
case("lazy_keyword_initialization", lazy_two, lambda m, x, y: m(x, y))
case("lazy_submodule_made_lazily", lazy_makes_lazy, call)
case("lazy_becomes_materialized_class", lazy_becomes, lambda m, x: (m(x), type(m).__name__, m(x * 2)))
case("lazy_child_super_without_becoming", lazy_child, call)
case("lazy_mlp_then_shapes", lazy_mlp, lambda m, x: (m(x), [tuple(p.shape) for p in m.parameters()]))
case("lazy_mlp_train", lazy_mlp, call, train=True)


# ---- a Sequential in an OrderedDict whose members repeat ----------------------------------------


def repeated_members(n):
    relu = pick(nn.ReLU(), nn.Tanh())
    layers = [("linear1", nn.Linear(W, 7)), ("act1", relu), ("linear2", nn.Linear(7, W)), ("act2", relu)]
    return nn.Sequential(collections.OrderedDict(layers)), torch.randn(n, W)


case("sequential_repeated_activation_train", repeated_members, call, train=True)
case("sequential_repeated_activation_names", repeated_members,
     lambda m, x: (m(x), [name for name, _ in m.named_modules()], len(list(m.modules()))))
case("sequential_repeated_named_modules_no_dedup", repeated_members,
     lambda m, x: (m(x), [name for name, _ in m.named_modules(remove_duplicate=False)]))
