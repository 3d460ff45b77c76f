"""nn.Module: forward inlined, parameters and buffers as graph inputs (so gradients flow),
container modules, attributes and the training flag guarded, and the compiled module keeping
the original's state_dict and attributes."""

from __future__ import annotations

import functools

import capture
import pytest
import torch
from torch import nn

from helpers import assert_same, cache_of, captures, check, compile_eager, graph_of, run_and_compare


class Block(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.proj = nn.Linear(width, width)
        self.register_buffer("scale", torch.full((width,), 0.5))
        self.drop = nn.Dropout(0.0)
        self.use_residual = True

    @property
    def width(self):
        return self.proj.in_features

    def forward(self, x):
        y = self.drop(self.proj(self.norm(x))) * self.scale
        return x + y if self.use_residual else y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2), "b": nn.Linear(8, 3)})
        self.extra = nn.ModuleList([nn.ReLU(), nn.GELU()])

    def forward(self, x):
        x = self.blocks(x)
        for act in self.extra:
            x = act(x)
        return {name: head(x) for name, head in self.heads.items()}, self.blocks[0].width


class Child(Block):
    def forward(self, x):
        return super().forward(x) * 2


def inputs():
    return (torch.randn(4, 8),)


def test_module_matches_eager():
    net = Net()
    compiled = compile_eager(net)
    for _ in range(2):
        x = inputs()[0]
        assert_same(compiled(x), net(x))
    assert captures(compiled) == 1


def test_parameters_and_buffers_are_graph_inputs():
    net = Net()
    compiled = compile_eager(net)
    compiled(*inputs())
    graph = graph_of(compiled).graph
    assert not [n for n in graph.nodes if n.op == "get_attr"]
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == 1 + len(list(net.parameters())) + len(list(net.buffers()))


def test_gradients_match_eager():
    # The aot_eager variant needs aot_autograd: tests/aot_autograd/test_aot_nested_modules.py.
    import capture

    compiler_fn = capture.backends.eager
    net = Net()
    reference = Net()
    reference.load_state_dict(net.state_dict())
    compiled = capture.optimize(net, compiler_fn)
    x = torch.randn(4, 8, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    out, _ = compiled(x)
    ref, _ = reference(x_ref)
    sum(v.sum() for v in out.values()).backward()
    sum(v.sum() for v in ref.values()).backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)


def test_super_and_inheritance():
    check(Child(), inputs)


def test_training_flag_is_guarded():
    block = Block()
    block.drop.p = 0.5
    compiled = compile_eager(block)
    x = inputs()[0]
    block.eval()
    assert_same(compiled(x), block(x))
    block.train()
    torch.manual_seed(0)
    out = compiled(x)
    torch.manual_seed(0)
    assert_same(out, block(x))
    assert captures(compiled) == 2


def test_module_attribute_change_recaptures():
    block = Block()
    compiled = compile_eager(block)
    x = inputs()[0]
    assert_same(compiled(x), block(x))
    block.use_residual = False
    assert_same(compiled(x), block(x))
    assert captures(compiled) == 2


@pytest.mark.parametrize(
    "replacement, expected_captures",
    [(lambda: nn.Linear(8, 8), 1), (lambda: nn.Linear(8, 8, bias=False), 2), (lambda: nn.Identity(), 2)],
    ids=["same structure", "no bias", "other type"],
)
def test_replaced_submodule_recaptures_only_when_its_structure_differs(replacement, expected_captures):
    """Modules are guarded by type and by what the trace read from them, not by identity:
    a new submodule of the same structure is served by the same entry (its parameters are
    graph inputs), one of another structure recaptures."""
    block = Block()
    compiled = compile_eager(block)
    x = inputs()[0]
    compiled(x)
    block.proj = replacement()
    assert_same(compiled(x), block(x))
    assert captures(compiled) == expected_captures


def test_compiled_module_keeps_state_and_attributes():
    net = Net()
    compiled = compile_eager(net)
    assert compiled._orig_mod is net
    assert compiled.heads is net.heads
    assert set(compiled.state_dict()) == {f"_orig_mod.{k}" for k in net.state_dict()}
    compiled.eval()
    assert not net.training


def test_parameter_updates_are_seen_without_recapture():
    block = Block()
    compiled = compile_eager(block)
    x = inputs()[0]
    compiled(x)
    with torch.no_grad():
        block.proj.weight.mul_(2)
    assert_same(compiled(x), block(x))
    assert captures(compiled) == 1


def _graphs(compiled):
    return cache_of(compiled).compilation.graphs


def _breaks(compiled):
    return cache_of(compiled).compilation.breaks


def test_forward_hooks_of_the_compiled_module_are_traced():
    block = Block()
    block.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    block.register_forward_hook(lambda m, args, out: out + args[0])
    compiled = compile_eager(block)
    x = inputs()[0]
    assert_same(compiled(x), block(x))
    assert_same(compiled(x), block(x))
    assert len(_graphs(compiled)) == 1 and not _breaks(compiled)


def test_forward_hooks_with_kwargs_are_traced():
    block = Block()
    block.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
    block.register_forward_hook(lambda m, args, kwargs, out: out * 3, with_kwargs=True)
    compiled = compile_eager(block)
    x = inputs()[0]
    assert_same(compiled(x), block(x))
    assert len(_graphs(compiled)) == 1 and not _breaks(compiled)


def _calls_its_argument(x, m):
    return m(x) + 1


def test_global_module_hooks_added_or_removed_after_compiling_are_seen():
    # torch's global hooks apply to every module call: the entry is guarded on them.
    from torch.nn.modules.module import register_module_forward_hook

    block = Block()
    compiled = compile_eager(_calls_its_argument)
    handles = []
    try:
        for scale in (None, 2.0, 3.0, None):  # no hook, a hook, another hook, none again
            for handle in handles:
                handle.remove()
            handles = [] if scale is None else [register_module_forward_hook(lambda m, i, out, k=scale: out * k)]
            x = inputs()[0]
            assert_same(compiled(x, block), _calls_its_argument(x, block))
    finally:
        for handle in handles:
            handle.remove()


def _hooked_then_plain(m, x):
    from torch.nn.modules.module import register_module_forward_hook

    handle = register_module_forward_hook(lambda mod, inp, out: out * 3)
    out = m(x)
    handle.remove()
    return out + m(x)


def test_global_hook_over_many_module_classes_stays_within_the_recompile_limit():
    # The global hook breaks the graph in the per-class hooked call of each module. Before, the
    # break was made in one helper shared by every class, whose one cache took an entry per
    # class, grad mode and size: a 6-module model at a third size hit the recompile limit (a
    # warning, the helper run eagerly from then on).
    import warnings

    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 3), nn.Tanh()))
    compiled = compile_eager(_hooked_then_plain)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rows in (4, 4, 7):
            x = torch.randn(rows, 5, requires_grad=True)
            assert_same(compiled(model, x), _hooked_then_plain(model, x))


def _runs_then_removes(x, m, handle):
    y = m(x)
    handle.remove()
    return y


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_global_hooks_run_once_per_module_call_with_their_effects(backend):
    # A global hook runs natively (no input leads to it: its reads could not be guarded nor its
    # writes replayed), once per module call: never on capture's or aot_autograd's own graph
    # modules, which are modules too. Its handle removed after a module call stays removed.
    import capture
    from torch.nn.modules.module import _global_forward_hooks, register_module_forward_hook

    block = Block()
    chosen = capture.backends.eager if backend == "eager" else pytest.importorskip("aot_autograd").aot_eager
    compiled = capture.optimize(_runs_then_removes, chosen)
    for _ in range(3):
        x = inputs()[0]
        seen, expected_seen = [], []
        handle = register_module_forward_hook(lambda m, i, out: expected_seen.append(type(m).__name__) or out * 2)
        expected = _runs_then_removes(x, block, handle)
        handle = register_module_forward_hook(lambda m, i, out: seen.append(type(m).__name__) or out * 2)
        try:
            assert_same(compiled(x, block, handle), expected)
            assert handle.id not in _global_forward_hooks
            assert seen == expected_seen
        finally:
            handle.remove()


def test_hook_capture_cannot_trace_breaks_the_graph_around_itself(capsys):
    """The forward around an untraceable hook is still captured, never run eagerly whole."""
    net = Layers(2)
    net.register_forward_pre_hook(lambda m, args: print("pre"))
    net.layers[1].register_forward_hook(lambda m, args, out: print("post") or out + 1)
    compiled = compile_eager(net)
    x = inputs()[0]
    assert_same(compiled(x), net(x))
    assert capsys.readouterr().out.split() == ["pre", "post"] * 2
    operations = sum(g.op_count for g in _graphs(compiled))
    assert operations >= 4, "both layers' linear and tanh are in graphs"
    assert "print" in _breaks(compiled)[0].reason


def _register_backward_hooks(block, kind, calls):
    """A backward hook of `kind` on `block` that records the gradients it sees."""
    if kind == "full_backward_hook":
        block.register_full_backward_hook(lambda m, grad_in, grad_out: calls.append((*grad_in, *grad_out)))
    else:
        block.register_full_backward_pre_hook(lambda m, grad_out: calls.append(grad_out))


@pytest.mark.parametrize("kind", ["full_backward_hook", "full_backward_pre_hook"])
def test_backward_hooks_of_the_compiled_module_run_around_its_compiled_forward(kind):
    """Module.__call__ runs natively (it wraps inputs and outputs in the autograd nodes that
    call the hooks), its forward compiled: one graph, no break, the hooks see eager's grads.
    (torch.compile breaks the graph there and runs the module eagerly.)"""
    block, calls, eager_calls = Block(), [], []
    reference = Block()
    reference.load_state_dict(block.state_dict())
    _register_backward_hooks(block, kind, calls)
    _register_backward_hooks(reference, kind, eager_calls)
    compiled = compile_eager(block)
    for _ in range(2):  # the capture, then a cache hit
        x = inputs()[0].requires_grad_()
        x_ref = x.detach().clone().requires_grad_()
        compiled(x).sum().backward()
        reference(x_ref).sum().backward()
        torch.testing.assert_close(x.grad, x_ref.grad)
    assert captures(compiled) == 1 and not _breaks(compiled)
    assert len(calls) == len(eager_calls) == 2
    for seen, expected in zip(calls, eager_calls):
        assert len(seen) == len(expected)
        for a, b in zip(seen, expected):
            torch.testing.assert_close(a, b)


def test_backward_hooks_of_a_submodule_break_the_graph_with_a_reason():
    """A submodule with backward hooks is called natively (its hooks need Module.__call__'s
    autograd nodes around its inputs and outputs): a graph break that names the hooks."""

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Block()

        def forward(self, x):
            return self.inner(x.sin()).cos()

    outer, calls = Outer(), []
    outer.inner.register_full_backward_hook(lambda m, grad_in, grad_out: calls.append(1))
    compiled = compile_eager(outer)
    x = inputs()[0].requires_grad_()
    x_ref = x.detach().clone().requires_grad_()
    compiled(x).sum().backward()
    outer(x_ref).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    assert len(calls) == 2, "the hook ran once per backward, compiled and eager"
    assert "backward hooks" in _breaks(compiled)[0].reason


def test_functions_taking_modules():
    proj = nn.Linear(4, 4)

    def fn(module, x):
        return module(x).relu() + module.bias

    compiled = check(fn, lambda: (proj, torch.randn(2, 4)))
    run_and_compare(compiled, fn, (nn.Linear(4, 4), torch.randn(2, 4)))
    assert captures(compiled) == 1, "another module of the same structure is served by the same entry"
    run_and_compare(compiled, fn, (nn.Linear(4, 4).double(), torch.randn(2, 4, dtype=torch.float64)))
    assert captures(compiled) == 2


def test_instance_with_hooks_is_not_served_by_an_entry_without_them():
    """Modules are guarded by type, so the entry of one instance may serve another: not when
    the other has hooks, which the inlined call would skip."""

    def run(block, x):
        return block(x)

    compiled = compile_eager(run)
    x = inputs()[0]
    run_and_compare(compiled, run, (Block(), x))
    hooked = Block()
    calls = []
    hooked.register_forward_hook(lambda m, i, o: calls.append(1))
    assert_same(compiled(hooked, x), run(hooked, x))
    assert len(calls) == 2, "the hook ran for the compiled call too"


class Layers(nn.Module):
    def __init__(self, count):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(count))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).tanh()
        return x


class FirstTwoLayers(Layers):
    def forward(self, x):
        for layer in self.layers[:2]:
            x = layer(x).tanh()
        return x


@pytest.mark.parametrize(
    "make, expected_captures",
    [
        (lambda: [Layers(2), Layers(3), Layers(2)], 2),
        (lambda: [FirstTwoLayers(3), FirstTwoLayers(3)], 1),
    ],
    ids=["module lists of other lengths", "slice of a module list"],
)
def test_instances_share_entries_only_where_their_members_agree(make, expected_captures):
    """An entry unrolls a module list: its length and names are guarded; a slice of it reads
    its layers through the list's source (`L['model'].layers[1]`), guarded as any member, so
    instances of one structure share the entry."""

    def run(model, x):
        return model(x)

    compiled = compile_eager(run)
    for model in make():
        run_and_compare(compiled, run, (model, torch.randn(2, 8)))
    assert captures(compiled) == expected_captures


def test_instance_with_its_own_forward_is_not_served_by_the_class_forward_entry():
    def run(block, x):
        return block(x) * 2

    compiled = compile_eager(run)
    x = inputs()[0]
    run_and_compare(compiled, run, (Block(), x))
    patched = Block()
    patched.forward = lambda y: y - 1  # an instance attribute, as patching libraries set
    run_and_compare(compiled, run, (patched, x))
    assert captures(compiled) == 2


def test_a_compiled_module_runs_the_forward_set_on_it_after_compiling():
    """`mod.forward = f` after `compile(mod)` (a patching library, a wrapper swapping in a
    method): the compiled module calls what calling the module calls, as torch.compile does,
    and goes back to the class's forward once the attribute is deleted."""
    block = Block()
    compiled = capture.optimize(block, capture.backends.eager)
    x = inputs()[0]
    assert_same(compiled(x), block(x))
    for forward in (lambda y: y * 3, Block().forward, None):
        if forward is None:
            del block.forward
        else:
            block.forward = forward
        assert_same(compiled(x), block(x))


class NegatedBlock(Block):
    def forward(self, x):
        return -super().forward(x)


class ScaledLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(x) * self.scale


class SlicedStack(nn.Module):
    """`for layer in self.layers[: self.count]`, as every HF decoder runs its layers."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([ScaledLayer(), ScaledLayer(), ScaledLayer()])
        self.count = 2

    def forward(self, x):
        for layer in self.layers[: self.count]:
            x = layer(x)
        return x


def test_members_of_a_sliced_module_list_are_guarded():
    model = SlicedStack()
    compiled = capture.optimize(model, capture.backends.eager)
    changes = [
        lambda: setattr(model.layers[0], "scale", 5.0),
        lambda: setattr(model.layers[1], "act", nn.Tanh()),
        lambda: setattr(model, "count", 3),
        lambda: setattr(model.layers[2], "scale", -1.0),
    ]
    for change in [lambda: None, *changes]:
        change()
        x = torch.randn(4)
        assert_same(compiled(x), model(x))


def scaled_by(settings: dict):
    def decorate(forward):
        @functools.wraps(forward)
        def wrapper(self, x):
            return forward(self, x) * settings["scale"]

        return wrapper

    return decorate


SETTINGS = {"scale": 2.0}


class DecoratedForward(nn.Module):
    @scaled_by(SETTINGS)
    def forward(self, x):
        return x + 1


def test_what_a_decorated_submodule_forward_closes_over_is_guarded():
    """A submodule's forward wrapped by a decorator (as HF's can_return_tuple wraps forwards):
    found on the class, no source leads to the wrapper, and its closure was read unguarded."""
    model = nn.Sequential(DecoratedForward())
    compiled = capture.optimize(model, capture.backends.eager)
    for scale in (2.0, 7.0, 2.0):
        SETTINGS["scale"] = scale
        x = torch.randn(3)
        assert_same(compiled(x), model(x))


class Patchable(nn.Module):
    def forward(self, x):
        return x + 1

    def helper(self, x):
        return x * 2


class HoldsPatchables(nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = Patchable(), Patchable()

    def forward(self, x):
        return self.first(x) + self.second.helper(x) + self.second(x)


def test_methods_patched_on_a_submodule_class_after_compiling_are_followed():
    """`Attention.forward = fast_forward` after compiling (how kernels are swapped in): the
    class's methods are guarded once per class, through its first instance."""
    model = HoldsPatchables()
    compiled = capture.optimize(model, capture.backends.eager)
    forward, helper = Patchable.forward, Patchable.helper
    try:
        for patch in (lambda: None, lambda: setattr(Patchable, "forward", lambda self, x: x - 100),
                      lambda: setattr(Patchable, "helper", lambda self, x: x * 50)):
            patch()
            x = torch.randn(3)
            assert_same(compiled(x), model(x))
    finally:
        Patchable.forward, Patchable.helper = forward, helper


def test_a_compiled_module_follows_its_class_when_it_changes():
    """`mod.__class__ = Other` (or the class's forward replaced) after compiling: calls run the
    new class's forward, as calling the module does."""
    block = Block()
    compiled = capture.optimize(block, capture.backends.eager)
    x = inputs()[0]
    for cls in (Block, NegatedBlock, Block):
        block.__class__ = cls
        assert_same(compiled(x), block(x))


GLOBAL_BLOCK = Block()


def test_hook_added_after_capture_is_run():
    def run(x):
        return GLOBAL_BLOCK(x) + 1

    compiled = compile_eager(run)
    x = inputs()[0]
    run_and_compare(compiled, run, (x,))
    calls = []
    handle = GLOBAL_BLOCK.register_forward_hook(lambda m, i, o: calls.append(1))
    try:
        assert_same(compiled(x), run(x))
    finally:
        handle.remove()
    assert len(calls) == 2, "the hook ran for the compiled call too"


def test_lazy_module_first_call_runs_natively_and_materializes():
    # Its uninitialized parameters used to reach the fake-tensor conversion (an internal error).
    def fn(m, x):
        return m(x) * 2

    compiled = compile_eager(fn)
    for _ in range(2):
        x = torch.randn(3, 5)
        torch.manual_seed(0)
        module, eager_module = torch.nn.LazyLinear(4), torch.nn.LazyLinear(4)
        torch.manual_seed(1)
        actual = compiled(module, x)
        torch.manual_seed(1)
        expected = fn(eager_module, x)
        torch.testing.assert_close(actual, expected)
        assert type(module) is torch.nn.Linear and module.weight.shape == (4, 5)


def test_container_module_indexed_by_an_int_that_changes_between_calls():
    # The int becomes symbolic once it changes; which layer runs is Python's choice, so it is
    # specialized (guarded) rather than refused, also under fullgraph=True.
    layers = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3), nn.Tanh())

    def fn(x, i):
        return layers[i](x) + layers[:i + 1](x).sum()

    compiled = compile_eager(fn, fullgraph=True)
    for i in (0, 1, 2, 1, 3):
        x = torch.randn(2, 3)
        assert_same(compiled(x, i), fn(x, i))


class _StaticForward(nn.Module):
    @staticmethod
    def forward(x):
        return x * torch.sigmoid(x)


def test_module_with_a_static_forward_is_inlined():
    outer = nn.Sequential(_StaticForward(), nn.Tanh())
    check(lambda x: outer(x), lambda: (torch.randn(3),), fullgraph=True)


class _DeletesItsAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.tmp = 2.0

    def forward(self, x):
        y = self.lin(x) * self.tmp
        del self.tmp
        return y


def test_del_of_a_module_attribute_in_forward():
    # nn.Module.__delattr__ ends in object.__delattr__: recorded and replayed after the graph.
    compiled = compile_eager(lambda m, x: m(x), fullgraph=True)
    for _ in range(2):
        module, eager_module = _DeletesItsAttribute(), _DeletesItsAttribute()
        eager_module.load_state_dict(module.state_dict())
        x = torch.randn(2, 3)
        assert_same(compiled(module, x), eager_module(x))
        assert not hasattr(module, "tmp") and "tmp" not in vars(module)
    assert captures(compiled) == 1


class OptionalScale(nn.Module):
    """Branches on an attribute it may lack, as HF attention layers do (`num_key_value_groups`)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = self.proj(x)
        if hasattr(self, "scale"):
            scale = self.scale
            y = scale(y) if isinstance(scale, nn.Module) else y * scale
        return y + getattr(self, "shift", 0.0)


def _give_instance_attribute(m):
    m.scale = 3.0


def _give_buffer(m):
    m.register_buffer("scale", torch.full((4,), 2.0))


def _give_parameter(m):
    m.scale = nn.Parameter(torch.full((4,), -1.0))


def _give_submodule(m):
    m.add_module("scale", nn.Tanh())


def _give_class_attribute(m):
    type(m).scale = 0.25


@pytest.mark.parametrize(
    "change", [_give_instance_attribute, _give_buffer, _give_parameter, _give_submodule, _give_class_attribute]
)
def test_an_attribute_a_module_lacked_at_capture_is_seen_wherever_it_appears(change):
    """`hasattr(module, name)` False is guarded by looking where nn.Module's lookup would find
    the name (the class, the instance dict, the three registries) instead of calling hasattr:
    each place an attribute can appear later must fail the entry."""
    cls = type("Scaled", (OptionalScale,), {})  # a class of this test's own: one case sets a class attribute
    module = cls()
    compiled = compile_eager(module)
    for _ in range(2):
        run_and_compare(compiled, module, (torch.randn(3, 4),))
    assert captures(compiled) == 1
    assert "['_buffers']" in cache_of(compiled).entries[0].guard.source  # not a call of hasattr
    change(module)
    run_and_compare(compiled, module, (torch.randn(3, 4),))
    assert captures(compiled) == 2
