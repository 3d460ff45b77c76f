"""The generated guard function: valid readable Python, one read per value, the guarded
function's signature, globals and closures read live, and `why` sentences."""

from __future__ import annotations

import ast
import sys
import types

import pytest
import torch
from torch import nn

from guards import (
    AttrSource,
    CachedResultSource,
    ClosureSource,
    ConstantMatch,
    GlobalSource,
    HeldCellSource,
    ModuleGlobalSource,
    GradMode,
    GuardCompileError,
    GuardSet,
    HeldObjectSource,
    ItemSource,
    LengthMatch,
    LocalSource,
    NotNone,
    ParameterSource,
    SubmoduleSource,
    TensorMatch,
    TypeMatch,
    global_state_guards,
)


class Net(nn.Module):
    def __init__(self, depth=4):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(depth)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def net_guards(net: Net, x: torch.Tensor) -> GuardSet:
    layers = SubmoduleSource(LocalSource("self"), "layers")
    guards = GuardSet([ConstantMatch(AttrSource(LocalSource("self"), "training"), net.training)])
    for i, layer in enumerate(net.layers):
        for name, p in layer.named_parameters():
            guards.add(TensorMatch.of(ParameterSource(SubmoduleSource(layers, str(i)), name), p))
    guards.add(TensorMatch.of(LocalSource("x"), x))
    guards.update(global_state_guards())
    return guards


def test_source_is_valid_python_that_defines_the_guard():
    net, x = Net(), torch.randn(2, 3)
    guard = net_guards(net, x).compile(Net.forward)
    tree = ast.parse(guard.source)
    (function,) = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [a.arg for a in function.args.args] == ["self", "x"]
    compile(guard.source, "<guard>", "exec")


def test_each_value_is_read_once():
    net, x = Net(depth=3), torch.randn(2, 3)
    source = net_guards(net, x).compile(Net.forward).source
    # One read of the ModuleList's children dict, one of each layer's parameter dict, one of
    # each parameter: the rest of the function uses the locals they are bound to.
    assert source.count("['_modules']['layers'].__dict__['_modules']") == 1
    for i in range(3):
        assert source.count(f"['{i}'].__dict__['_parameters']") == 1
    assert source.count("['weight']") == 3
    assert source.count("['bias']") == 3


def test_guard_passes_on_fresh_inputs_and_reports_module_changes():
    net = Net()
    guard = net_guards(net, torch.randn(2, 3)).compile(Net.forward)
    assert guard(net, torch.randn(2, 3))
    net.layers[2].bias.requires_grad_(False)
    assert guard.why(net, torch.randn(2, 3)) == "L['self'].layers[2].bias.requires_grad == True failed: got False"


def test_cheap_global_checks_come_first_and_rare_ones_last():
    net, x = Net(depth=1), torch.randn(2, 3)
    lines = [line.strip() for line in net_guards(net, x).compile(Net.forward).source.splitlines()]
    body = [line for line in lines if line.startswith("if ")]
    assert body[0] == "if not is_grad_enabled(): return False"
    assert "training" in body[1]
    assert body[-1] == "if torch_dispatch_stack_depth() != 0: return False"


def test_a_bounded_caches_call_comes_after_every_other_check():
    """Its call marks the entry most recently used, as the program's own call would: only once
    every other check has passed (eight tensors: grouped, but not with it), in the order the
    guards were recorded (the program's)."""
    calls = []

    def wrapper(k):
        calls.append(k)
        return k

    cache = {1: None, 2: None}  # stands for the wrapper's dict, which the read looks the key up in first

    def result(k):
        held = HeldObjectSource(f"key {k}", id(k), k)
        return CachedResultSource(LocalSource("f"), HeldObjectSource("cache", id(cache), cache), held, repr(k), True)

    guards = GuardSet([ConstantMatch(result(2), 2), ConstantMatch(result(1), 1), TensorMatch.of(LocalSource("x"), torch.ones(2)),
                       *(TensorMatch.of(LocalSource(f"t{i}"), torch.ones(2)) for i in range(8))])
    check = guards.compile(parameters=["f", "x", *(f"t{i}" for i in range(8))])
    tensors = [torch.ones(2) for _ in range(8)]
    assert check(wrapper, torch.ones(2), *tensors)
    assert calls == [2, 1]
    assert not check(wrapper, torch.ones(3), *tensors)
    assert calls == [2, 1]  # the tensor check failed first: no call


def test_implied_guards_are_dropped():
    x = torch.randn(3)
    guards = GuardSet([TypeMatch(LocalSource("x"), torch.Tensor), NotNone(LocalSource("x")), TensorMatch.of(LocalSource("x"), x)])
    assert guards.essential() == [TensorMatch.of(LocalSource("x"), x)]
    assert guards.compile(parameters=["x"]).source.count("type(x)") == 1


def test_guard_set_deduplicates_and_merges():
    a = GuardSet([LengthMatch(LocalSource("v"), 2), LengthMatch(LocalSource("v"), 2)])
    assert len(a) == 1
    merged = a | GuardSet([NotNone(LocalSource("v")), LengthMatch(LocalSource("v"), 2)])
    assert list(merged) == [LengthMatch(LocalSource("v"), 2), NotNone(LocalSource("v"))]
    assert len(a) == 1


def test_parameters_named_like_builtins_do_not_break_checks():
    def fn(type, len, list):
        return type

    guards = GuardSet([TypeMatch(LocalSource("type"), int), LengthMatch(LocalSource("len"), 2), LengthMatch(LocalSource("list"), 1)])
    guard = guards.compile(fn)
    assert guard(3, "ab", [0])
    assert not guard(3.0, "ab", [0])
    assert guard.why(3, "abc", [0]) == "len(L['len']) == 2 failed: got 3"


def test_signature_with_varargs_kwonly_and_defaults():
    def fn(a, /, b=1, *args, c, d=None, **kwargs):
        return a

    guards = GuardSet(
        [
            ConstantMatch(LocalSource("b"), 1),
            LengthMatch(LocalSource("args"), 1),
            ConstantMatch(ItemSource(LocalSource("kwargs"), "mode"), "x"),
            ConstantMatch(LocalSource("d"), None),
        ]
    )
    guard = guards.compile(fn)
    assert guard(0, 1, 5, c=2, mode="x")
    assert not guard(0, 2, 5, c=2, mode="x")
    assert not guard(0, 1, 5, c=2, d=3, mode="x")
    assert guard.why(0, 1, 5, c=2) == "type(L['kwargs']['mode']) is str could not be checked: KeyError: 'mode'"
    with pytest.raises(TypeError):
        guard(0, 1, 5)  # c is missing: calling fn would fail the same way


def test_reads_globals_live():
    namespace = {"scale": 2}
    guard = GuardSet([ConstantMatch(GlobalSource("scale"), 2)]).compile(parameters=[], f_globals=namespace)
    assert guard()
    namespace["scale"] = 3
    assert guard.why() == "G['scale'] == 2 failed: got 3"
    del namespace["scale"]
    assert guard.why() == "type(G['scale']) is int could not be checked: KeyError: 'scale'"


def test_reads_another_modules_globals_live(monkeypatch):
    module = types.ModuleType("guards_test_layers")
    module.SCALE = 2
    monkeypatch.setitem(sys.modules, module.__name__, module)
    guard = GuardSet([ConstantMatch(ModuleGlobalSource(module.__name__, "SCALE"), 2)]).compile(parameters=[])
    assert guard()
    module.SCALE = 3
    assert guard.why() == "M['guards_test_layers']['SCALE'] == 2 failed: got 3"


def test_reads_a_held_cell_live():
    scale = 2

    def fn(x):
        return x * scale

    cell = fn.__closure__[0]
    guard = GuardSet([ConstantMatch(HeldCellSource("fn.scale", id(cell), cell), 2)]).compile(parameters=[])
    assert guard()
    scale = 4  # noqa: F841  (rebinds the cell fn closes over)
    assert guard.why() == "C['fn.scale'] == 2 failed: got 4"


def test_reads_closure_cells_live():
    scale = 2

    def fn(x):
        return x * scale

    guard = GuardSet([ConstantMatch(ClosureSource("scale"), 2)]).compile(fn)
    assert guard(1)
    scale = 4
    assert guard.why(1) == "C['scale'] == 2 failed: got 4"


def test_unreadable_value_fails_the_guard_with_a_reason():
    guard = GuardSet([ConstantMatch(AttrSource(LocalSource("self"), "training"), True)]).compile(parameters=["self"])
    assert guard(nn.Linear(1, 1)) is True
    assert guard(object()) is False
    assert guard.why(object()) == (
        "L['self'].training is True could not be checked: AttributeError: 'object' object has no attribute 'training'"
    )


@pytest.mark.parametrize(
    "guard, compile_kwargs, message",
    [
        (NotNone(LocalSource("y")), {"parameters": ["x"]}, r"L\['y'\] is not a parameter of the guarded function"),
        (NotNone(GlobalSource("W")), {"parameters": []}, r"reads a global .* got no f_globals"),
        (NotNone(ClosureSource("k")), {"parameters": []}, r"closure variable C\['k'\]"),
        (NotNone(ModuleGlobalSource("not_imported_anywhere", "W")), {"parameters": []}, r"module 'not_imported_anywhere', which is not imported"),
    ],
)
def test_guards_that_cannot_be_read_from_the_frame_are_compile_errors(guard, compile_kwargs, message):
    with pytest.raises(GuardCompileError, match=message):
        GuardSet([guard]).compile(**compile_kwargs)


def test_empty_guard_set_always_passes():
    guard = GuardSet().compile(parameters=["x"])
    assert guard(object()) and guard.why(None) is None


def test_why_is_none_exactly_when_the_guard_passes():
    x = torch.randn(4, 2)
    guard = GuardSet([GradMode(True), TensorMatch.of(LocalSource("x"), x)]).compile(parameters=["x"])
    for candidate in (torch.randn(4, 2), torch.randn(2, 4), torch.randn(4, 2, dtype=torch.float64), "x"):
        assert (guard.why(candidate) is None) == guard(candidate)


def test_guard_of_a_lambda_gets_a_valid_name():
    fn = lambda x: x  # noqa: E731
    guard = GuardSet([NotNone(LocalSource("x"))]).compile(fn, name="guards_<lambda>")
    assert guard(1) and not guard(None)
    assert guard.__name__.isidentifier()
