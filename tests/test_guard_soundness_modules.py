"""Guard soundness for nn.Modules changed between calls (train/eval, parameters replaced or
frozen, submodules replaced/added/deleted, hooks registered or removed, attributes and buffers
changed, state_dict loaded) and for state the compiled function itself changes, which the next
call must see (counters, appends, lazily filled caches). See guard_soundness_harness."""

from __future__ import annotations

import types

import pytest
import torch
from torch import nn

from guard_soundness_harness import backends_of, case, check_case


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.0)
        self.norm = nn.BatchNorm1d(4)
        self.scale = 2
        self.mode = "relu"

    def forward(self, x):
        x = self.norm(self.drop(self.linear(x)))
        x = torch.relu(x) if self.mode == "relu" else torch.tanh(x)
        if self.training:
            x = x * self.scale
        if hasattr(self, "extra"):
            x = self.extra(x)
        if "offset" in self._buffers:
            x = x + self.offset
        return x


class WithContainers(nn.Module):
    """Plain lists and dicts, container modules, a ParameterList, a buffer that may become None."""

    def __init__(self):
        super().__init__()
        self.sizes = [2, 3]
        self.table = {"a": 1.0}
        self.blocks = nn.ModuleDict({"x": nn.Linear(4, 4)})
        self.plist = nn.ParameterList([nn.Parameter(torch.ones(4))])
        self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.register_buffer("b", torch.ones(4))

    def forward(self, x):
        for size in self.sizes:
            x = x * size
        x = x + self.table.get("a", 0) + len(self.table)
        for block in self.blocks.values():
            x = block(x)
        for p in self.plist:
            x = x + p
        x = self.seq(x)
        if self.b is not None:
            x = x + self.b
        print("", end="")  # a graph break: the rest is read by the resume function
        return x * self.sizes[0]


class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4))
        self.cache = None
        self.calls = 0
        self.history = []

    def forward(self, x):
        self.calls += 1
        if self.cache is None:
            self.cache = self.weight.detach() * 2
        self.history.append(self.calls)
        return self.extra(x * self.cache + self.calls + len(self.history)) + self.bonus()

    def extra(self, value):
        return value * 2

    def bonus(self):
        return 1


def module_case(name, factory, *mutations, grad=False, **options):
    def setup():
        torch.manual_seed(0)
        return types.SimpleNamespace(module=factory())

    def args(state, call):
        return (torch.randn(3, 4, requires_grad=grad),)

    return case(name, lambda state: state.module, *mutations, setup=setup, args=args, observe=lambda state: state.module, **options)


def on_module(fn):
    return lambda state: fn(state.module)


def add_hook(kind, hook):
    def mutate(state):
        state.handles = getattr(state, "handles", []) + [getattr(state.module, f"register_{kind}")(hook)]

    return mutate


def remove_hooks(state):
    for handle in state.handles:
        handle.remove()


def _replace_linear_weight(m):
    m.linear.weight = nn.Parameter(torch.randn(4, 4))


class PatchableBlock(Block):
    """A Block whose class a mutation patches (put back by `_patchable_block`)."""


def _patchable_block():
    for name in ("__getattr__", "extra"):
        if name in PatchableBlock.__dict__:
            delattr(PatchableBlock, name)
    return PatchableBlock()


def _extra_from_getattr(self, name):
    return (lambda v: v * 10) if name == "extra" else nn.Module.__getattr__(self, name)


def _load_state(m):
    fresh = Block()
    m.load_state_dict(fresh.state_dict())


MODULE_CASES = [
    module_case("train_eval_toggled", Block, on_module(lambda m: m.eval()), on_module(lambda m: m.train()), on_module(lambda m: m.norm.eval()),
                backends=("aot_eager", "inductor")),
    module_case("parameter_replaced", Block, on_module(_replace_linear_weight),
                on_module(lambda m: setattr(m.linear, "weight", nn.Parameter(torch.randn(4, 4, dtype=torch.float64).float()))),
                on_module(lambda m: m.linear.register_parameter("bias", None)), backends=("aot_eager", "inductor")),
    module_case("parameter_frozen", Block, on_module(lambda m: m.linear.weight.requires_grad_(False)),
                on_module(lambda m: m.linear.weight.requires_grad_(True)), backends=("aot_eager", "inductor")),
    module_case("submodule_replaced_added_deleted", Block, on_module(lambda m: setattr(m, "drop", nn.Identity())),
                on_module(lambda m: setattr(m, "extra", nn.Linear(4, 4))), on_module(lambda m: setattr(m, "extra", nn.Sigmoid())),
                on_module(lambda m: delattr(m, "extra")), on_module(lambda m: setattr(m, "linear", nn.Linear(4, 4, bias=False))),
                backends=("aot_eager",)),
    module_case("forward_hooks_added_and_removed", Block, add_hook("forward_hook", lambda m, i, o: o * 3),
                add_hook("forward_pre_hook", lambda m, i: (i[0] + 1,)), remove_hooks, backends=("aot_eager",)),
    module_case("submodule_hook_added", Block, lambda s: s.module.linear.register_forward_hook(lambda m, i, o: o - 5)),
    module_case("method_shadowed_by_an_instance_attribute", Cached, on_module(lambda m: setattr(m, "extra", lambda v: v - 100)),
                on_module(lambda m: setattr(m, "bonus", lambda: 7)), on_module(lambda m: delattr(m, "bonus"))),
    module_case("attribute_or_getattr_given_to_the_module_class", _patchable_block,
                on_module(lambda m: setattr(type(m), "extra", staticmethod(lambda v: v * 3))), on_module(lambda m: delattr(type(m), "extra")),
                on_module(lambda m: setattr(type(m), "__getattr__", _extra_from_getattr))),
    # nn.Module.__getattr__ answers from the registries only where the instance dict lacks the
    # name: a member put there directly (or by object.__setattr__) shadows the registered one.
    module_case("members_shadowed_in_the_instance_dict", Block, on_module(lambda m: m.__dict__.__setitem__("drop", lambda v: v * 10)),
                on_module(lambda m: m.linear.__dict__.__setitem__("weight", torch.full((4, 4), 0.5))),
                on_module(lambda m: object.__setattr__(m, "norm", nn.Identity())), on_module(lambda m: m.__dict__.pop("drop")),
                backends=("aot_eager",)),
    module_case("attribute_flag_and_mode_changed", Block, on_module(lambda m: setattr(m, "scale", 3)),
                on_module(lambda m: setattr(m, "scale", 0.5)), on_module(lambda m: setattr(m, "mode", "tanh"))),
    module_case("buffer_registered_later", Block, on_module(lambda m: m.register_buffer("offset", torch.ones(4))),
                on_module(lambda m: m.offset.fill_(3)), on_module(lambda m: setattr(m, "offset", torch.full((4,), 2.0))),
                backends=("aot_eager",)),
    module_case("state_dict_loaded", Block, on_module(_load_state), on_module(lambda m: m.norm.running_mean.fill_(1)),
                backends=("aot_eager", "inductor")),
    module_case("containers_changed_around_a_break", WithContainers, on_module(lambda m: m.sizes.append(4)),
                on_module(lambda m: m.table.__setitem__("a", 5.0)), on_module(lambda m: m.blocks.__setitem__("y", nn.Tanh())),
                on_module(lambda m: m.plist.append(nn.Parameter(torch.full((4,), 2.0)))), on_module(lambda m: m.seq.append(nn.Sigmoid())),
                on_module(lambda m: m.register_buffer("b", None)), on_module(lambda m: m.sizes.__setitem__(0, 5))),
    module_case("cache_filled_by_the_function", Cached, on_module(lambda m: setattr(m, "cache", None)),
                on_module(lambda m: setattr(m, "calls", 100)), on_module(lambda m: m.history.clear()), backends=("aot_eager",)),
    module_case("training_with_grads", Block, on_module(lambda m: m.eval()), on_module(lambda m: m.linear.weight.requires_grad_(False)),
                grad=True, backends=("aot_eager",)),
]


# --- state the compiled function changes ------------------------------------------------------


def counter_on_object(state):
    def fn(x):
        state.obj.count += 1
        if state.obj.cache is None:
            state.obj.cache = x.detach() * 0 + state.obj.count
        state.obj.log.append(state.obj.count)
        return x + state.obj.cache + len(state.obj.log), state.obj.count

    return fn


def dict_memo(state):
    def fn(x):
        key = x.shape[0]
        if key not in state.memo:
            state.memo[key] = x.detach().sum() * 0 + len(state.memo)
        return x + state.memo[key]

    return fn


SELF_MUTATION_CASES = [
    case("counter_and_cache_on_an_object", counter_on_object, lambda s: setattr(s.obj, "cache", None), lambda s: s.obj.log.clear(),
         setup=lambda: types.SimpleNamespace(obj=types.SimpleNamespace(count=0, cache=None, log=[])), observe=lambda s: vars(s.obj),
         backends=("aot_eager", "inductor")),
    case("memo_dict_filled_by_the_function", dict_memo, lambda s: s.memo.clear(), lambda s: s.memo.__setitem__(3, torch.tensor(7.0)),
         setup=lambda: types.SimpleNamespace(memo={}), observe=lambda s: s.memo, backends=("aot_eager",)),
]

CASES = MODULE_CASES + SELF_MUTATION_CASES


@pytest.mark.parametrize("backend, case_", [(b, c) for c in CASES for b in backends_of(c)], ids=str)
def test_compiled_function_sees_state_changed_between_calls(backend, case_):
    check_case(case_, backend=backend)
