"""The torch.compiler functions, each compared with torch.compiler's behaviour on the same
example: set_stance (function, context manager, decorator), maybe_mark_dynamic,
assume_constant_result, substitute_in_graph, is_dynamo_compiling, is_exporting,
cudagraph_mark_step_begin, config (recompile_limit, automatic_dynamic_shapes), disable (with
recursive=False) and mark_unbacked.

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import bisect
import math
import warnings
from types import SimpleNamespace

import pytest
import torch

import capture
import compiler

TORCH = SimpleNamespace(
    name="torch", compile=torch.compile, set_stance=torch.compiler.set_stance, reset=torch._dynamo.reset,
    maybe_mark_dynamic=torch._dynamo.maybe_mark_dynamic, assume_constant_result=torch.compiler.assume_constant_result,
    mark_unbacked=torch._dynamo.decorators.mark_unbacked,
    is_dynamo_compiling=torch.compiler.is_dynamo_compiling, is_exporting=torch.compiler.is_exporting,
    config_patch=torch._dynamo.config.patch, disable=torch.compiler.disable,
)
OURS = SimpleNamespace(
    name="ours", compile=compiler.compile, set_stance=compiler.set_stance, reset=compiler.reset,
    maybe_mark_dynamic=compiler.maybe_mark_dynamic, assume_constant_result=compiler.assume_constant_result,
    mark_unbacked=compiler.mark_unbacked,
    is_dynamo_compiling=compiler.is_dynamo_compiling, is_exporting=compiler.is_exporting,
    config_patch=compiler.config.patch, disable=compiler.disable,
)


def same_for_both(scenario):
    """Run `scenario(api)` with torch.compiler and with ours; their observations must agree."""
    observed = {}
    for api in (TORCH, OURS):
        api.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            observed[api.name] = scenario(api)
    assert observed["ours"] == observed["torch"]
    return observed["ours"]


class Counting:
    """A backend counting compiles and runs of what it compiled."""

    def __init__(self):
        self.compiles = 0
        self.runs = 0

    def __call__(self, gm, example_inputs):
        self.compiles += 1

        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


def affine(x):
    return x * 2 + 1


def outcome(call):
    try:
        return "same" if call() else "different"
    except RuntimeError:
        return "RuntimeError"


# --- set_stance -----------------------------------------------------------------------------------

@pytest.mark.parametrize("stance", ["default", "force_eager", "eager_on_recompile", "fail_on_recompile"])
def test_stance_as_context_manager(stance):
    def scenario(api):
        backend = Counting()
        compiled = api.compile(affine, backend=backend, dynamic=False)
        compiled(torch.randn(3))
        outcomes = []
        with api.set_stance(stance):
            for x in (torch.randn(3), torch.randn(5)):  # a hit, then a miss
                outcomes.append(outcome(lambda: torch.equal(compiled(x), affine(x))))
        x = torch.randn(7)
        outcomes.append(outcome(lambda: torch.equal(compiled(x), affine(x))))  # the default again
        return backend.compiles, backend.runs, outcomes

    same_for_both(scenario)


@pytest.mark.parametrize("stance", ["force_eager", "eager_on_recompile", "fail_on_recompile"])
def test_stance_on_a_first_call(stance):
    def scenario(api):
        backend = Counting()
        compiled = api.compile(affine, backend=backend)
        with api.set_stance(stance):
            x = torch.randn(4)
            result = outcome(lambda: torch.equal(compiled(x), affine(x)))
        return backend.compiles, result

    same_for_both(scenario)


def test_stance_as_function_and_decorator():
    def scenario(api):
        backend = Counting()
        compiled = api.compile(affine, backend=backend)

        @api.set_stance("force_eager")
        def eager_step(x):
            return compiled(x)

        eager_step(torch.randn(2))
        after_decorating = backend.compiles  # decorating alone changes nothing
        compiled(torch.randn(2))
        api.set_stance("force_eager")
        try:
            compiled(torch.randn(2))
            eager_step(torch.randn(2))
        finally:
            api.set_stance("default")
        compiled(torch.randn(2))
        return after_decorating, backend.compiles, backend.runs

    assert same_for_both(scenario) == (0, 1, 2)


def test_set_stance_inside_a_compiled_function_is_an_error():
    def scenario(api):
        def fn(x):
            api.set_stance("force_eager")
            return x + 1

        with pytest.raises(Exception, match="set_stance"):
            api.compile(fn, backend="eager")(torch.ones(1))
        return capture.stance.current_stance(), torch._dynamo.eval_frame._stance.stance

    assert same_for_both(scenario) == ("default", "default")


def test_unknown_stance_is_refused():
    with pytest.raises(ValueError, match="the stances are: default, force_eager"):
        compiler.set_stance("sometimes")
    assert capture.stance.current_stance() == "default"


# --- dynamic-shape marks --------------------------------------------------------------------------

def specializes_on_four(x):
    if x.shape[0] == 4:
        return x + 1
    return x - 1


@pytest.mark.parametrize("fn", [affine, specializes_on_four])
def test_maybe_mark_dynamic(fn):
    def scenario(api):
        backend = Counting()
        compiled = api.compile(fn, backend=backend)
        for rows in (4, 5, 6):
            x = torch.randn(rows, 2)
            api.maybe_mark_dynamic(x, 0)
            assert torch.equal(compiled(x), fn(x))
        return backend.compiles

    same_for_both(scenario)


def test_mark_unbacked_serves_every_size_with_one_graph_even_0_and_1():
    def scenario(api):
        backend = Counting()
        compiled = api.compile(affine, backend=backend)
        for rows in (3, 1, 0, 6):
            x = torch.randn(rows, 2)
            api.mark_unbacked(x, 0)
            assert torch.equal(compiled(x), affine(x))
        return backend.compiles

    assert same_for_both(scenario) == 1


# --- marks on functions ---------------------------------------------------------------------------

SETTING = {"scale": 2.0}


def read_scale():
    return SETTING["scale"]


def test_assume_constant_result_bakes_the_value_in():
    def scenario(api):
        getter = api.assume_constant_result(lambda: read_scale())

        def fn(x):
            return x * getter()

        compiled = api.compile(fn, backend="eager")
        x = torch.ones(3)
        SETTING["scale"] = 2.0
        first = compiled(x).tolist()
        SETTING["scale"] = 5.0  # nothing guards the assumed constant: the old value stays
        second = compiled(x).tolist()
        return first, second, fn(x).tolist()

    assert same_for_both(scenario) == ([2.0] * 3, [2.0] * 3, [5.0] * 3)


def bisect_left_polyfill(a, x, lo=0, hi=None, *, key=None):
    hi = len(a) if hi is None else hi
    while lo < hi:
        middle = (lo + hi) // 2
        if (a[middle] if key is None else key(a[middle])) < x:
            lo = middle + 1
        else:
            hi = middle
    return lo


def test_substitute_in_graph_traces_the_polyfill():
    def fn(x):
        return x * bisect.bisect_left([1, 4, 9, 16], x.shape[0])

    x = torch.randn(5)
    # Before: capture cannot trace into the C function bisect.bisect_left.
    with pytest.raises(capture.Unsupported):
        compiler.compile(fn, backend="eager", fullgraph=True)(x)
    ours = compiler.substitute_in_graph(bisect.bisect_left)(bisect_left_polyfill)
    reference = torch.compiler.substitute_in_graph(bisect.bisect_left)(bisect_left_polyfill)
    torch._dynamo.reset()
    expected = fn(x)
    torch.testing.assert_close(torch.compile(fn, backend="eager", fullgraph=True)(x), expected)
    torch.testing.assert_close(compiler.compile(fn, backend="eager", fullgraph=True)(x), expected)
    # Called eagerly, the returned function is the original.
    assert ours.__wrapped__ is bisect_left_polyfill
    assert ours([1, 3, 5], 4) == reference([1, 3, 5], 4) == bisect.bisect_left([1, 3, 5], 4)


def test_substitute_in_graph_checks_the_signature():
    def wrong(a, b):
        return a

    with pytest.raises(TypeError):
        torch.compiler.substitute_in_graph(math.dist)(wrong)
    with pytest.raises(TypeError, match="does not have the signature"):
        compiler.substitute_in_graph(math.dist)(wrong)


# --- disable ----------------------------------------------------------------------------------

def scaled_sine(x):
    return torch.sin(x) * 2


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.linear(x))


class Holder:
    block = Block()


def eager_frame(x):
    # Called as a global (`scaled_sine(...)`) and as a method (`Holder.block(...)`): the two
    # kinds of call site recursive=False compiles through.
    y = x.cos() + 1
    return Holder.block(scaled_sine(y)) - y


def caller(x):
    return disabled_frame(x + 1) * 3


disabled_frame = eager_frame  # replaced by each scenario


def run_three_calls(compiled, fn):
    for shape in [(4, 8), (4, 8), (6, 8)]:  # first call, cache hit with new values, new size
        x = torch.randn(shape)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), fn(x))


@pytest.mark.parametrize("recursive", [True, False])
def test_disable_called_from_compiled_code(recursive):
    """recursive=True: nothing under the disabled function is compiled; recursive=False: only
    its own frame runs eagerly, the function and module it calls are compiled (the same
    graphs compiled and run as with torch.compiler.disable)."""

    def scenario(api):
        global disabled_frame
        disabled_frame = api.disable(eager_frame, recursive=recursive)
        counting = Counting()
        run_three_calls(api.compile(caller, backend=counting), caller)
        return counting.compiles, counting.runs

    try:
        same_for_both(scenario)
    finally:
        global disabled_frame
        disabled_frame = eager_frame


@pytest.mark.parametrize("recursive", [True, False])
def test_compiling_a_disabled_function(recursive):
    """compile(disable(f)): f runs eagerly; with recursive=False what f calls is compiled.
    (torch.compile differs here on purpose: it unwraps the disable wrapper, `innermost_fn`,
    and compiles f whole, as if it were not disabled.)"""
    counting = Counting()
    fn = compiler.disable(eager_frame, recursive=recursive)
    run_three_calls(compiler.compile(fn, backend=counting), fn)
    calls_compiled = 2  # scaled_sine and Holder.block, each run once per call
    assert counting.runs == (0 if recursive else 3 * calls_compiled)


def test_disable_as_decorator_with_arguments():
    @compiler.disable(recursive=False)
    def frame(x):
        return scaled_sine(x)

    counting = Counting()
    x = torch.randn(3)
    torch.testing.assert_close(compiler.compile(frame, backend=counting)(x), frame(x))
    assert counting.compiles == 1


# --- is_dynamo_compiling / is_exporting -----------------------------------------------------------

def test_is_dynamo_compiling_inside_and_outside():
    def scenario(api):
        def fn(x):
            return x + 1 if api.is_dynamo_compiling() else x - 1

        x = torch.zeros(2)
        return api.compile(fn, backend="eager")(x).tolist(), fn(x).tolist(), api.is_dynamo_compiling()

    assert same_for_both(scenario) == ([1.0, 1.0], [-1.0, -1.0], False)


def test_is_exporting_under_export_only():
    class Branch(torch.nn.Module):
        def __init__(self, is_exporting):
            super().__init__()
            self.is_exporting = is_exporting

        def forward(self, x):
            return x + 1 if self.is_exporting() else x - 1

    x = torch.zeros(2)
    reference = torch.export.export(Branch(torch.compiler.is_exporting), (x,)).module()(x)
    ours = capture.export(Branch(compiler.is_exporting), (x,))(x)
    torch.testing.assert_close(ours, reference)
    compiled = compiler.compile(Branch(compiler.is_exporting), backend="eager")(x)
    torch.testing.assert_close(compiled, torch.compile(Branch(torch.compiler.is_exporting), backend="eager")(x))
    assert not compiler.is_exporting()


def test_cudagraph_mark_step_begin_leaves_results_unchanged():
    def scenario(api_compile, mark):
        compiled = api_compile(affine, mode="reduce-overhead")
        x = torch.randn(3)
        out = []
        for _ in range(2):
            mark()
            out.append(torch.equal(compiled(x), affine(x)))
        return out

    assert scenario(compiler.compile, compiler.cudagraph_mark_step_begin) == [True, True]
    assert scenario(torch.compile, torch.compiler.cudagraph_mark_step_begin) == [True, True]


# --- config ---------------------------------------------------------------------------------------

def test_recompile_limit():
    def scenario(api):
        backend = Counting()
        compiled = api.compile(affine, backend=backend, dynamic=False)
        with api.config_patch(recompile_limit=2):
            for size in (2, 3, 4, 5):
                x = torch.randn(size)
                assert torch.equal(compiled(x), affine(x))
        return backend.compiles

    assert same_for_both(scenario) == 2


@pytest.mark.parametrize("fullgraph", [False, True])
def test_recompile_limit_of_one_compile_call(fullgraph):
    """compile(recompile_limit=2): this call's entries stop at 2 while another compile of the
    same function keeps the global limit; with fullgraph=True the third size is an error."""

    def scenario(api):
        limited_backend, other_backend = Counting(), Counting()
        limited = api.compile(affine, backend=limited_backend, dynamic=False, recompile_limit=2, fullgraph=fullgraph)
        other = api.compile(affine, backend=other_backend, dynamic=False, isolate_recompiles=True)
        seen = []
        for size in (2, 3, 4, 5):
            x = torch.randn(size)
            try:
                seen.append(torch.equal(limited(x), affine(x)))
            except Exception as error:  # noqa: BLE001  (torch's FailOnRecompileLimitHit, our RecompileError)
                seen.append("limit" if "recompile" in str(error).lower() or "fullgraph" in str(error) else repr(error))
            assert torch.equal(other(x), affine(x))
        return seen, limited_backend.compiles, other_backend.compiles

    seen, limited, other = same_for_both(scenario)
    assert (limited, other) == (2, 4)
    assert seen == ([True, True, "limit", "limit"] if fullgraph else [True] * 4)


def test_recompile_limit_must_be_positive():
    with pytest.raises(ValueError, match="recompile_limit"):
        compiler.compile(affine, recompile_limit=0)


@pytest.mark.parametrize("automatic", [True, False])
def test_automatic_dynamic_shapes(automatic):
    def scenario(api):
        backend = Counting()
        compiled = api.compile(affine, backend=backend)
        with api.config_patch(automatic_dynamic_shapes=automatic):
            for size in (2, 3, 4, 5):
                x = torch.randn(size)
                assert torch.equal(compiled(x), affine(x))
        return backend.compiles

    same_for_both(scenario)


def test_config_refuses_unknown_settings_naming_the_known_ones():
    with pytest.raises(AttributeError, match="the settings are: recompile_limit"):
        compiler.config.recompile_limt = 3
    with pytest.raises(AttributeError, match="no setting"):
        with compiler.config.patch(nope=1):
            pass


def test_config_patch_restores():
    before = compiler.config.recompile_limit
    with compiler.config.patch(recompile_limit=before + 3):
        assert capture.config.recompile_limit == before + 3
    assert compiler.config.recompile_limit == before
