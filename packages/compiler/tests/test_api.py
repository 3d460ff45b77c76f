"""The public API: compile() as function, decorator and on modules, backends by name and by
callable, register/list backends, reset, is_compiling, disable."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import capture
import compiler


def test_compile_function_matches_eager():
    def fn(x, y):
        return torch.sin(x) * y + 1

    compiled = compiler.compile(fn)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(compiled(x, y), fn(x, y))


def test_compile_as_decorator_with_options():
    @compiler.compile(fullgraph=True, backend="eager")
    def fn(x):
        return x.cos()

    x = torch.randn(5)
    torch.testing.assert_close(fn(x), x.cos())


def test_compile_module_keeps_module_behaviour():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    compiled = compiler.compile(model)
    x = torch.randn(2, 4)
    torch.testing.assert_close(compiled(x), model(x))
    assert isinstance(compiled, nn.Module)
    assert compiled._orig_mod is model
    assert compiled.training is model.training
    assert set(compiled.state_dict()) == {f"_orig_mod.{k}" for k in model.state_dict()}


def test_builtin_backends_are_listed():
    assert {"eager", "aot_eager", "aot_eager_decomp_partition", "inductor"} <= set(compiler.list_backends())


@pytest.mark.parametrize("backend", ["aot_eager", "aot_eager_decomp_partition"])
def test_aot_backends_compute_gradients(backend):
    pytest.importorskip("aot_autograd")
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    reference.load_state_dict(model.state_dict())
    compiled = compiler.compile(model, backend=backend)
    x = torch.randn(3, 4)
    compiled(x).sum().backward()
    reference(x).sum().backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_registered_backend_receives_graph_and_example_inputs():
    seen = []

    def recording_backend(gm, example_inputs):
        seen.append((gm, example_inputs))
        return gm.forward

    compiler.register_backend(recording_backend, name="recording_for_test")
    assert "recording_for_test" in compiler.list_backends()
    compiled = compiler.compile(lambda x: x * 2, backend="recording_for_test")
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x * 2)
    gm, example_inputs = seen[0]
    assert isinstance(gm, torch.fx.GraphModule)
    assert example_inputs[0] is x
    placeholder = next(n for n in gm.graph.nodes if n.op == "placeholder")
    assert placeholder.meta["example_value"].shape == x.shape


def test_default_backend_is_settable_and_resets_to_inductor():
    seen = []

    def recording_default(gm, example_inputs):
        seen.append(gm)
        return gm.forward

    assert compiler.get_default_backend() == "inductor"
    compiler.set_default_backend(recording_default)
    try:
        assert compiler.get_default_backend() is recording_default
        compiled = compiler.compile(lambda x: x.sin() + 1, name="sine")
        explicit = compiler.compile(lambda x: x.cos(), backend="eager")
        for size in (3, 3, 5):
            x = torch.randn(size)
            torch.testing.assert_close(compiled(x), x.sin() + 1)
            torch.testing.assert_close(explicit(x), x.cos())
        # The default compiled the first function's graphs; `backend=` wins for the second.
        assert seen and all("sin" in gm.code and "cos" not in gm.code for gm in seen)
        compiler.set_default_backend("eager")
        assert compiler.get_default_backend() == "eager"
    finally:
        compiler.set_default_backend(None)
    assert compiler.get_default_backend() == "inductor"
    with pytest.raises(TypeError, match="string or callable"):
        compiler.set_default_backend(3)


def test_backend_callable_directly():
    compiled = compiler.compile(lambda x: x + 1, backend=lambda gm, inputs: gm.forward)
    torch.testing.assert_close(compiled(torch.zeros(2)), torch.ones(2))


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(compiler.InvalidBackend, match="unknown backend 'nope'"):
        compiler.compile(lambda x: x, backend="nope")


def test_registering_a_name_twice_is_refused():
    with pytest.raises(compiler.InvalidBackend, match="already registered"):
        compiler.register_backend(lambda gm, inputs: gm.forward, name="eager")


def test_reset_recaptures():
    calls = []

    def counting_backend(gm, example_inputs):
        calls.append(1)
        return gm.forward

    compiled = compiler.compile(lambda x: x - 1, backend=counting_backend)
    compiled(torch.randn(2))
    compiled(torch.randn(2))
    compiler.reset()
    compiled(torch.randn(2))
    assert len(calls) == 2


def test_is_compiling_inside_and_outside():
    assert not compiler.is_compiling()
    out = compiler.compile(lambda x: x * 2 if compiler.is_compiling() else x)(torch.ones(1))
    torch.testing.assert_close(out, torch.full((1,), 2.0))


def test_disable_returns_the_original():
    def fn(x):
        return x

    assert compiler.compile(fn, disable=True) is fn


def test_unsupported_code_raises_capture_error_with_fullgraph():
    def fn(x):
        print(x)
        return x

    with pytest.raises(capture.Unsupported, match="print"):
        compiler.compile(fn, fullgraph=True)(torch.randn(2))


def test_dynamic_compiles_once_for_many_batch_sizes():
    calls = []

    def counting_backend(gm, example_inputs):
        calls.append(1)
        return gm.forward

    model = nn.Linear(4, 2)
    compiled = compiler.compile(model, dynamic=True, backend=counting_backend)
    for batch in (2, 5, 9):
        x = torch.randn(batch, 4)
        torch.testing.assert_close(compiled(x), model(x))
    assert len(calls) == 1


def test_mark_dynamic():
    calls = []

    def counting_backend(gm, example_inputs):
        calls.append(1)
        return gm.forward

    compiled = compiler.compile(lambda x: x.sum(0), backend=counting_backend)
    for rows in (3, 6):
        x = torch.randn(rows, 2)
        compiler.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x), x.sum(0))
    assert len(calls) == 1
