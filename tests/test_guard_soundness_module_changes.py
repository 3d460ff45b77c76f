"""Guard soundness for nn.Module state changed between calls the ways PyTorch users change it,
beyond test_guard_soundness_modules: parametrizations (register/remove, weight_norm, pruning),
dtype moves, load_state_dict(assign=True), flags that torch.nn.functional reads from module
attributes, hooks with kwargs / on submodules / global, forward swapped on the instance or the
class, callables and configs stored on the module, and module classes with their own protocol
methods (__call__, __getattr__, __contains__, __eq__). torch.compile (eager backend) gets
global_hooks, submodule_hooks, own_call_and_getattr and hook_tables_read wrong; see
guard_soundness_harness for the scenario and `python tests/guard_soundness_harness.py` for the
table beside torch.compile."""

from __future__ import annotations

import dataclasses
import functools
import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize, prune

from guard_soundness_harness import backends_of, check_case
from test_guard_soundness_modules import module_case, on_module, remove_hooks


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.act = nn.ReLU()
        self.approximate = "none"
        self.inplace = False
        self.pair = (1.0, 2.0)
        self.post = functools.partial(torch.mul, other=2.0)

    def forward(self, x):
        y = F.gelu(self.act(self.lin(x)), approximate=self.approximate)
        y = F.leaky_relu(y, 0.1, inplace=self.inplace) * self.pair[0] + self.pair[1]
        return self.post(y)


class Doubled(nn.Module):
    def forward(self, w):
        return w * 2


class Symmetric(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(-1, -2)


@dataclasses.dataclass
class Config:
    scale: float = 1.0
    shift: bool = True


class Configured(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Config()
        self.lin = nn.Linear(4, 4)

    @property
    def factor(self):
        return self.cfg.scale * 3

    def forward(self, x):
        y = self.lin(x) * self.factor
        return y + 1 if self.cfg.shift else y


class OwnCall(nn.Module):
    """__call__ of its own, around Module.__call__ (so its hooks still run)."""

    def __init__(self):
        super().__init__()
        self.k = 2.0

    def forward(self, x):
        return x * self.k

    def __call__(self, x):
        return super().__call__(x) + self.k


class OwnGetattr(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = OwnCall()
        self.table = {"alpha": 2.0}

    def __getattr__(self, name):
        table = self.__dict__.get("table")
        if table is not None and name in table:
            return table[name]
        return super().__getattr__(name)

    def forward(self, x):
        return self.inner(x) * self.alpha


class Keys(nn.ModuleDict):
    def __init__(self):
        super().__init__({"a": nn.Tanh()})
        self.allowed = {"a"}

    def __contains__(self, key):
        return key in self.allowed


class Scaled(nn.Module):
    def __init__(self, k=1.0):
        super().__init__()
        self.k = k

    def __eq__(self, other):
        return isinstance(other, Scaled) and self.k == other.k

    __hash__ = nn.Module.__hash__

    def forward(self, x):
        return x * self.k


class Protocols(nn.Module):
    def __init__(self):
        super().__init__()
        self.keys = Keys()
        self.a, self.b = Scaled(), Scaled()

    def forward(self, x):
        if "a" in self.keys:
            x = self.keys["a"](x)
        if "b" in self.keys:
            x = x * 2
        return self.a(x) + 1 if self.a == self.b else self.b(x) - 1


class HookTables(nn.Module):
    """Reads its hook tables and a submodule's repr (what a logging or debugging forward does)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        return self.act(self.lin(x)) + len(self.lin._forward_hooks) + len(self._forward_pre_hooks) + len(str(self.act))


def hook(kind, fn, target=lambda m: m, **options):
    def mutate(state):
        state.handles = getattr(state, "handles", []) + [getattr(target(state.module), f"register_{kind}")(fn, **options)]

    return mutate


def global_hook(kind, fn, **options):
    def mutate(state):
        register = getattr(torch.nn.modules.module, f"register_module_{kind}")
        state.handles = getattr(state, "handles", []) + [register(fn, **options)]

    return mutate


def _load_doubled(m):
    m.load_state_dict({k: v.double() * 2 for k, v in m.state_dict().items()}, assign=True)


def _forward_times_five(self, x):
    return x * 5


class PatchedClass(Net):
    """A Net whose class a mutation gives a forward (taken away again by `_patched_class`)."""


def _patched_class():
    if "forward" in PatchedClass.__dict__:
        del PatchedClass.forward
    return PatchedClass()


CASES = [
    module_case("parametrization_registered_and_removed", Net,
                on_module(lambda m: parametrize.register_parametrization(m.lin, "weight", Doubled())),
                on_module(lambda m: parametrize.register_parametrization(m.lin, "weight", Symmetric())),
                on_module(lambda m: m.lin.parametrizations.weight.original.data.mul_(3)),
                on_module(lambda m: parametrize.remove_parametrizations(m.lin, "weight", leave_parametrized=False)),
                backends=("aot_eager",)),
    module_case("weight_norm_and_pruning", Net,
                on_module(lambda m: setattr(m, "lin", nn.utils.parametrizations.weight_norm(m.lin))),
                on_module(lambda m: m.lin.parametrizations.weight.original0.data.mul_(2)),
                on_module(lambda m: prune.l1_unstructured(m.lin, "bias", amount=0.5)), on_module(lambda m: prune.remove(m.lin, "bias"))),
    module_case("dtype_moved_and_state_loaded_with_assign", Net, on_module(lambda m: m.double()), on_module(lambda m: m.float()),
                on_module(_load_doubled), on_module(lambda m: m.lin.requires_grad_(False)), backends=("aot_eager",)),
    module_case("functional_flags_and_callables_on_the_module", Net, on_module(lambda m: setattr(m, "approximate", "tanh")),
                on_module(lambda m: setattr(m, "inplace", True)), on_module(lambda m: setattr(m, "pair", (2.0, 0.0))),
                on_module(lambda m: m.post.keywords.__setitem__("other", 7.0)),
                on_module(lambda m: setattr(m, "post", functools.partial(torch.add, other=5.0))),
                on_module(lambda m: setattr(m, "act", nn.GELU(approximate="tanh")))),
    module_case("forward_swapped_on_instance_and_class", _patched_class,
                on_module(lambda m: setattr(m, "forward", types.MethodType(lambda self, x: self.lin(x) * 3, m))),
                on_module(lambda m: delattr(m, "forward")), on_module(lambda m: setattr(type(m), "forward", _forward_times_five)),
                on_module(lambda m: delattr(type(m), "forward"))),
    module_case("dataclass_config_and_property", Configured, on_module(lambda m: setattr(m.cfg, "scale", 3.0)),
                on_module(lambda m: setattr(m.cfg, "shift", False)), on_module(lambda m: setattr(m, "cfg", Config(scale=-1.0)))),
    module_case("hooks_with_kwargs_always_called_prepended", Net,
                hook("forward_pre_hook", lambda m, args, kwargs: ((args[0] * 2,), kwargs), with_kwargs=True),
                hook("forward_hook", lambda m, args, kwargs, out: out + 7, with_kwargs=True),
                hook("forward_hook", lambda m, args, out: out * 3, prepend=True, always_call=True), remove_hooks),
    module_case("submodule_hooks", Net, hook("forward_pre_hook", lambda m, args: (args[0] + 100,), target=lambda m: m.lin),
                hook("forward_hook", lambda m, args, out: out - 1, target=lambda m: m.act), remove_hooks),
    module_case("global_hooks", Net, global_hook("forward_hook", lambda m, args, out: out + 1 if isinstance(m, nn.Linear) else out),
                global_hook("forward_pre_hook", lambda m, args: (args[0] * 2,) if isinstance(m, nn.ReLU) else None),
                remove_hooks, global_hook("forward_hook", lambda m, args, out: out * 0 if isinstance(m, nn.ReLU) else out, always_call=True),
                remove_hooks),
    module_case("own_call_and_getattr", OwnGetattr, on_module(lambda m: setattr(m.inner, "k", 5.0)),
                hook("forward_hook", lambda m, args, out: out * 10, target=lambda m: m.inner), on_module(lambda m: m.table.__setitem__("alpha", 4.0)),
                on_module(lambda m: setattr(m, "alpha", 1.0)), on_module(lambda m: delattr(m, "alpha"))),
    module_case("own_contains_and_eq", Protocols, on_module(lambda m: m.keys.allowed.add("b")), on_module(lambda m: m.keys.allowed.discard("a")),
                on_module(lambda m: setattr(m.b, "k", 2.0)), on_module(lambda m: setattr(m.a, "k", 2.0))),
    module_case("hook_tables_read", HookTables, hook("forward_hook", lambda m, args, out: None, target=lambda m: m.lin),
                hook("forward_pre_hook", lambda m, args: None), on_module(lambda m: setattr(m.act, "negative_slope", 0.5))),
]


@pytest.mark.parametrize("backend, case_", [(b, c) for c in CASES for b in backends_of(c)], ids=str)
def test_compiled_module_sees_state_changed_between_calls(backend, case_):
    check_case(case_, backend=backend)
