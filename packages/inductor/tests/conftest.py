"""Shared fixtures: every op test runs once per backend, differential against eager."""

from __future__ import annotations

import os

import pytest
import torch
import torch.fx

# Without a GPU the Triton backend runs in Triton's interpreter, on CPU tensors; the switch is
# read when triton is imported (it binds its library functions then), so it is set first.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import inductor  # noqa: E402
from inductor.passes import split_reductions  # noqa: E402

# A backend: the device its tensors live on, and the compile options that select it.
BACKENDS = {"cpp": ("cpu", {})}
if torch.cuda.is_available():
    BACKENDS["triton"] = ("cuda", {})
elif os.environ["TRITON_INTERPRET"] == "1":
    BACKENDS["triton-interpret"] = ("cpu", {"cpu_backend": "triton"})
_selected_options: dict = {}


@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory):
    os.environ["PTC_INDUCTOR_CACHE_DIR"] = str(tmp_path_factory.mktemp("inductor_cache"))


@pytest.fixture(params=sorted(BACKENDS))
def device(request):
    device, options = BACKENDS[request.param]
    _selected_options.update(options)
    yield device
    _selected_options.clear()


def per_backend(every: list[tuple], on_cpp: list[tuple]) -> list:
    """Parameters for `@pytest.mark.parametrize("device, ...", per_backend(...), indirect=["device"])`:
    each case of `every` on each backend but C++, only those of `on_cpp` on C++. For properties the
    C++ backend never meets outside tests (a rewrite it does not do by default, decided before
    code generation): the other backends run the whole product, C++ enough cases to compile each
    kind of kernel the rewrite makes once. Ids read as before, backend first ("cpp-sum-inner")."""
    return [pytest.param(name, *case, id="-".join([name, *map(str, case)]))
            for name in sorted(BACKENDS) for case in (on_cpp if name == "cpp" else every)]


def backend_options() -> dict:
    """The compile options of the backend the `device` fixture selected."""
    return dict(_selected_options)


def uses_triton(device) -> bool:
    """Whether the backend the `device` fixture selected prints Triton kernels."""
    return device == "cuda" or backend_options().get("cpu_backend") == "triton"


def compile_graph(gm: torch.fx.GraphModule, inputs, **options):
    """Compile an ATen graph with the backend the `device` fixture selected (and `options`)."""
    return inductor.compile_aten_graph(gm, inputs, options={**backend_options(), **options})


def traced(module) -> torch.fx.GraphModule:
    """The module's graph, returning a tuple as backends' graphs do."""
    gm = torch.fx.symbolic_trace(module)
    output = next(n for n in gm.graph.nodes if n.op == "output")
    output.args = ((output.args[0],),)
    gm.recompile()
    return gm


def compile_aten(fn, inputs, **options):
    """`fn` calls torch.ops.aten overloads; trace it and compile the ATen graph (with `options`)."""
    return compile_graph(torch.fx.symbolic_trace(fn), inputs, **options)


def assert_same(actual, expected, **tolerances):
    actual = actual if isinstance(actual, (list, tuple)) else [actual]
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if isinstance(e, torch.Tensor):
            assert a.dtype == e.dtype, (a.dtype, e.dtype)
            assert a.shape == e.shape, (a.shape, e.shape)
            torch.testing.assert_close(a, e, equal_nan=True, **tolerances)
        else:
            assert a == e


def check(fn, *inputs, **tolerances):
    """Compile `fn`, run it and eager on the same fresh inputs, compare; returns the compiled graph."""
    compiled = compile_aten(fn, list(inputs))
    expected = fn(*inputs)
    actual = compiled(*inputs)
    assert_same(actual, expected, **tolerances)
    return compiled


def assert_same_gradients(compiled, model, x, **tolerances):
    """One backward of `out.pow(2).sum()` through `compiled(x)[0]` and through `model(x)`: the
    parameters' and `x`'s gradients agree. Gradients are cleared afterwards."""
    compiled(x)[0].pow(2).sum().backward()
    ours = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    model(x).pow(2).sum().backward()
    for a, e in zip(ours, [p.grad for p in model.parameters()] + [x.grad]):
        torch.testing.assert_close(a, e, **tolerances)
    model.zero_grad()
    x.grad = None


def with_specials(x: torch.Tensor) -> torch.Tensor:
    """`x` with NaN, +-inf, +-0 and large values planted at random places (floating dtypes)."""
    if not x.dtype.is_floating_point:
        return x
    flat = x.flatten().clone()
    specials = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e4, -1e4, 1e-30],
                            dtype=torch.float64).to(device=x.device, dtype=x.dtype)
    where = torch.randperm(flat.numel(), device=x.device)[: specials.numel()]
    flat[where] = specials[: len(where)]
    return flat.view_as(x)


def record_split_plans(monkeypatch) -> list:
    """(buffer name, chunk count) of each reduction split from now on, as passes/split_reductions.py
    plans it (Welford splits too, which do not go through `_split`)."""
    plans = []
    real_plan = split_reductions._split_plan

    def recording_plan(buffer, targets):
        plan = real_plan(buffer, targets)
        if plan[0] > 1:
            plans.append((buffer.name, plan[0]))
        return plan

    monkeypatch.setattr(split_reductions, "_split_plan", recording_plan)
    return plans


def trace_dynamic(fn, inputs, dynamic: dict):
    """The ATen graph of `fn` with meta['val'] from fake tensors whose `dynamic` dims are symbolic."""
    import fake_tensor

    gm = torch.fx.symbolic_trace(fn)
    mode = fake_tensor.FakeTensorMode(shape_env=fake_tensor.ShapeEnv())
    fakes = [mode.from_real(x, dynamic_dims=dynamic.get(k, [])) for k, x in enumerate(inputs)]

    class Record(torch.fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            node.meta["val"] = result
            return result

    with mode:
        Record(gm).run(*fakes)
    return gm
