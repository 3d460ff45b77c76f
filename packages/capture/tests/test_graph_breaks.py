"""Graph breaks: code capture cannot trace runs natively between two graphs, and the rest of the
function continues in a resume function compiled on its first call. Every case is compared
with eager on fresh inputs (values, printed output, exceptions); counts of graphs and breaks
come from the compilation record (capture.runtime.compilation).

PYTEST_DONT_REWRITE: the functions here are traced.
"""

from __future__ import annotations

import contextlib
import itertools
import random

import numpy as np
import pytest
import torch

import capture
from helpers import assert_same, cache_of, clone_inputs, compile_eager


def run_both(capsys, fn, compiled, args):
    """Eager and compiled results (or raised exceptions) and what each printed."""
    outcomes = []
    for runner, arguments in ((fn, clone_inputs(args)), (compiled, args)):
        try:
            result = runner(*arguments)
        except Exception as exc:  # compared below: the same exception must reach the caller
            result = exc
        outcomes.append((result, capsys.readouterr().out))
    return outcomes


def check_breaks(capsys, fn, make_args, *, calls=3, **options):
    """Compare `calls` calls with eager; returns the compilation record and how many graphs
    the first call compiled (later calls may recompile: values passed between graphs, such
    as the result of .item(), are specialized)."""
    compiled = compile_eager(fn, **options)
    first_graphs = None
    for _ in range(calls):
        (expected, expected_out), (actual, actual_out) = run_both(capsys, fn, compiled, make_args())
        if isinstance(expected, Exception):
            assert type(actual) is type(expected) and str(actual) == str(expected), f"{actual!r} != {expected!r}"
        else:
            assert_same(actual, expected)
        assert actual_out == expected_out
        if first_graphs is None:
            first_graphs = len(cache_of(compiled).compilation.graphs)
    return cache_of(compiled).compilation, first_graphs


def helper_prints(x):
    y = x.sin()
    print("in helper")
    return y * 2


def middle(x):
    return helper_prints(x + 1) - 1


def nested(x):
    a = x * 3
    return a + middle(a)


def top_level_print(x):
    y = x * 2
    print("between graphs")
    return y + 1


def data_dependent(x):
    y = x.cos()
    if y.sum() > 0:
        return y * 2
    return y - 2


def item_and_tolist(x):
    scale = x.abs().max().item()
    values = x.tolist()
    return x / scale, len(values)


def with_no_grad(x):
    with torch.no_grad():
        y = x * 2
        print("grad enabled:", torch.is_grad_enabled())
        z = y + 1
    return z, torch.is_grad_enabled(), x * 3


def with_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x
        print("inside autocast")
        z = y @ x
    return z


def try_block(x):
    y = x + 1
    try:
        print("inside try")
        y = y * 2
    except ValueError:
        y = y - 1
    return y.sum()


def raises_after_break(x):
    y = x + 1
    print("before the error")
    return y @ torch.ones(x.shape[0] + 1)


def unmodelled_libraries(x):
    noise = random.random()
    factor = float(np.float32(2.0) * 3)
    return x * factor, noise >= 0


@capture.disable
def disabled_helper(x):
    return x.sum() * 2


def calls_disabled(x):
    y = x * 2
    return y + disabled_helper(y)


def generator(x):
    for t in range(3):
        print("yield", t)
        yield x + t


def consumes_generator(x):
    total = x
    for value in generator(x):
        total = total + value
    return total


def closure_across_break(x):
    k = 3

    def add(t):
        return t + k

    print("made a closure")
    k = 4
    return add(x)


def keyword_print(x):
    print("a", "b", sep="-", end="!\n")
    return x.exp()


def kwargs_function(x, *args, **kwargs):
    print(len(args), sorted(kwargs))
    return x + args[0] + kwargs["b"]


CASES = {
    "top level": (top_level_print, 2),
    "nested calls": (nested, 6),
    "data-dependent branch": (data_dependent, 2),
    "item and tolist": (item_and_tolist, 2),
    "no_grad block": (with_no_grad, 2),
    "autocast block": (with_autocast, 2),
    "near try": (try_block, 1),
    "exception after the break": (raises_after_break, 1),
    "random and numpy": (unmodelled_libraries, 1),
    "compiler.disable": (calls_disabled, 2),
    "generator": (consumes_generator, 1),
    "closure": (closure_across_break, 1),
    "print with keywords": (keyword_print, 1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_break_matches_eager(capsys, name):
    fn, graphs = CASES[name]
    compilation, first_graphs = check_breaks(capsys, fn, lambda: (torch.randn(4, 4),))
    assert compilation.breaks, "the function breaks its graph"
    assert first_graphs == graphs


def test_varargs_survive_a_break(capsys):
    def fn(x, y, b):
        return kwargs_function(x, y, b=b)

    check_breaks(capsys, fn, lambda: (torch.randn(3), torch.randn(3), torch.randn(3)))


def test_loop_with_break_compiles_a_bounded_number_of_times(capsys):
    def loop(x):
        for i in range(100):
            x = x + 1
            print(i)
            x = x * 0.5
        return x

    compilation, _ = check_breaks(capsys, loop, lambda: (torch.randn(3),), calls=2)
    assert len(compilation.graphs) <= 4
    assert len(compilation.breaks) <= 4


def test_long_loop_with_break_does_not_grow_the_stack():
    def loop(x):
        for _ in range(3000):
            x = x + 1
            print(end="")
        return x

    x = torch.randn(2)
    torch.testing.assert_close(compile_eager(loop)(x), x + 3000)


def test_break_inside_module_loop(capsys):
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            y = self.linear(x)
            print("block", y.shape)
            return torch.relu(y)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList([Block() for _ in range(3)])

        def forward(self, x):
            for block in self.blocks:
                x = block(x) + x
            return x.sum()

    model = Model()
    compilation, first_graphs = check_breaks(capsys, model, lambda: (torch.randn(2, 4),))
    assert first_graphs >= 2


class PrintingBlock(torch.nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.linear = torch.nn.Linear(width, width)

    def forward(self, x):
        y = self.linear(x)
        print("block", y.shape)
        return torch.relu(y) + x


class Stack(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.blocks = torch.nn.ModuleList([PrintingBlock() for _ in range(layers)])

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = block(x)
        return x


@pytest.mark.parametrize("layers", [3, 12])
def test_module_instances_share_the_compiled_forward(capsys, layers):
    """A forward that breaks runs as its own frame per call; every instance of the same
    structure is served by the same entries (parameters are graph inputs, the module is
    guarded by type), so 12 layers stay under the recompile limit and nothing recompiles per
    layer or per loop index."""
    model = Stack(layers)
    compilation, _ = check_breaks(capsys, model, lambda: (torch.randn(2, 4, requires_grad=True),))
    entries = {cache.fn.__qualname__: len(cache.entries) for cache in [*compilation._callees.values(), *compilation._resumes.values()]}
    assert entries["PrintingBlock.forward"] == 1, entries
    assert max(entries.values()) == 1, entries
    assert all(b.outcome == "resumed" for b in compilation.breaks)


def test_an_input_passed_twice_is_guarded_as_one_object():
    def add(x, y):
        return x + y * 2

    compiled = compile_eager(add)
    a, b = torch.randn(3), torch.randn(3)
    assert_same(compiled(a, a), add(a, a))
    assert_same(compiled(a, b), add(a, b))
    assert len(cache_of(compiled).entries) == 2


class Pair(torch.nn.Module):
    def __init__(self, tied: bool):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = self.a if tied else torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.a(x) * self.b(x)


def test_tied_submodules_are_guarded_as_one_object():
    """Instances of one class share entries only where their aliasing agrees: the tied
    instance's graph reads one weight, which must not serve an untied instance."""

    def run(pair, x):
        return pair(x)

    compiled = compile_eager(run)
    for pair in (Pair(tied=True), Pair(tied=False), Pair(tied=True)):
        x = torch.randn(2, 4)
        assert_same(compiled(pair, x), run(pair, x))
    assert len(cache_of(compiled).entries) == 2


def scale_by_item(x, y):
    n = x.sum().item()
    return y * n


def scale_by_int_item(x, y):
    n = int(x.sum().item())
    return y * n


def add_loop_index(x):
    for i in range(6):
        print("step", i)
        x = x + i
    return x


def scale_by_argument(x, scale):
    return (x * scale).sin()


_SIGNS = itertools.cycle((1.0, -1.0))


def branch_on_item(x, y):
    n = x.mean().item()
    if n > 0:
        return y + n
    return y - 1


@pytest.mark.parametrize(
    "fn, make_args",
    [
        (scale_by_item, lambda: (torch.randn(4), torch.randn(4))),
        (scale_by_argument, lambda: (torch.randn(4), random.uniform(-2, 2))),
        (branch_on_item, lambda: (torch.rand(4) * next(_SIGNS), torch.randn(4))),
        (scale_by_int_item, lambda: (torch.randint(-50, 50, (4,)).float(), torch.randn(4))),
        (scale_by_argument, lambda: (torch.randn(4), random.randint(-9, 9))),
        (add_loop_index, lambda: (torch.randn(4),)),
    ],
    ids=["item result", "float argument", "branch on item result", "int of item", "int argument", "loop index"],
)
def test_changing_numbers_do_not_recompile_per_value(capsys, fn, make_args):
    """A number that differs between calls (the result of `.item()` handed to the resume
    function, an argument, the index a loop's resume function receives) is specialized once;
    when it changes it is kept out of the graph, so later values reuse the entries (as with
    torch.compile's default, which makes it a symbolic float or int on the first recompile)."""
    compiled = compile_eager(fn)
    compilation = cache_of(compiled).compilation
    totals = []
    for _ in range(12):
        (expected, _), (actual, _) = run_both(capsys, fn, compiled, make_args())
        assert_same(actual, expected)
        entries = {c.fn.__qualname__: len(c.entries) for c in [*compilation._callees.values(), *compilation._resumes.values()]}
        totals.append(sum(entries.values()))
    assert totals[-1] == totals[5], f"entries still grow with new values: {totals}"
    # Per function: one entry specialized to the first value and one keeping it out (times
    # the two outcomes of a branch that is resumed from).
    assert max(entries.values()) <= 3, entries


def test_gradients_flow_across_a_break():
    def fn(x, w):
        y = x @ w
        print(end="")
        return (y.tanh() * w.sum()).sum()

    x, w = torch.randn(3, 4), torch.randn(4, 5, requires_grad=True)
    w_eager = w.detach().clone().requires_grad_()
    compile_eager(fn)(x, w).backward()
    fn(x, w_eager).backward()
    torch.testing.assert_close(w.grad, w_eager.grad)


def test_side_effects_happen_before_the_native_step(capsys):
    class Box:
        pass

    box = Box()
    box.value = 0

    def fn(x):
        box.value = 5
        print("value", box.value)
        return x + box.value

    compilation, _ = check_breaks(capsys, fn, lambda: (torch.randn(2),), calls=1)
    assert compilation.breaks


def test_fullgraph_raises_at_the_first_break():
    with pytest.raises(capture.Unsupported) as info:
        compile_eager(nested, fullgraph=True)(torch.randn(3))
    error = info.value
    assert "print" in error.reason and error.hint
    assert error.source_line == 'print("in helper")'
    assert [loc.function for loc in error.stack] == ["nested", "middle", "helper_prints"]


def test_unused_inputs_are_not_guarded():
    def fn(x, unused):
        return x + 1

    compiled = compile_eager(fn)
    for value in range(4):
        compiled(torch.randn(2), value)
    assert len(cache_of(compiled).entries) == 1


def test_break_in_first_instruction_leaves_one_graph(capsys):
    def fn(x):
        print("first")
        return x.sin().cos()

    _, first_graphs = check_breaks(capsys, fn, lambda: (torch.randn(3),))
    assert first_graphs == 1


def test_function_runs_eagerly_when_no_graph_is_worth_it(capsys):
    def fn(x):
        try:
            print("only inside try")
            return x + 1
        finally:
            print("finally")

    compilation, _ = check_breaks(capsys, fn, lambda: (torch.randn(3),))
    assert [b.outcome for b in compilation.breaks] == ["eager"]
    assert not compilation.graphs


@pytest.mark.parametrize("dynamic", [None, False])
def test_changing_sizes_compile_at_most_twice(dynamic):
    calls = []

    def counting(gm, example_inputs):
        calls.append(gm)
        return gm.forward

    def fn(x):
        return (x * 2).sum(0)

    compiled = capture.optimize(fn, counting, dynamic=dynamic)
    for n in (8, 9, 10, 11):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), fn(x))
    assert len(calls) == (2 if dynamic is None else 4)


def test_mark_static_keeps_a_changing_size_static():
    calls = []

    def counting(gm, example_inputs):
        calls.append(gm)
        return gm.forward

    compiled = capture.optimize(lambda x: x + 1, counting)
    for n in (4, 5, 6):
        x = torch.randn(n)
        capture.mark_static(x, 0)
        compiled(x)
    assert len(calls) == 3


def test_mark_dynamic_range():
    compiled = compile_eager(lambda x: x * 2)
    for n in (3, 5, 8):
        x = torch.randn(n)
        capture.mark_dynamic(x, 0, min=2, max=8)
        torch.testing.assert_close(compiled(x), x * 2)
    assert len(cache_of(compiled).entries) == 1
    x = torch.randn(9)
    capture.mark_dynamic(x, 0, min=2, max=8)
    with pytest.raises(capture.CaptureError, match="outside the range"):
        compiled(x)


def test_allow_in_graph_makes_one_node():
    def opaque(x):
        return x * 2 + 1

    capture.allow_in_graph(opaque)
    compiled = compile_eager(lambda x: opaque(x).sin())
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), opaque(x).sin())
    graph = cache_of(compiled).entries[0].graph_module.graph
    assert any(n.target is opaque for n in graph.nodes)


def test_disable_returns_a_function_that_is_not_compiled():
    fn = capture.disable(lambda x: x + 1)
    assert capture.optimize(fn, capture.backends.eager) is fn


def test_with_block_is_re_entered_by_the_resume_function(capsys):
    def fn(x):
        with torch.no_grad():
            print("break")
            y = x * 2
        return y.requires_grad, torch.is_grad_enabled()

    check_breaks(capsys, fn, lambda: (torch.randn(2, requires_grad=True),))


def test_nullcontext_value_survives(capsys):
    def fn(x):
        with contextlib.nullcontext(3) as k:
            print("inside")
            return x + k

    check_breaks(capsys, fn, lambda: (torch.randn(2),))


def test_code_that_raises_is_captured_once():
    captures = []

    def counting(gm, example_inputs):
        captures.append(gm)
        return gm.forward

    def fn(x):
        y = x + 1
        print(end="")
        return y @ torch.ones(x.shape[0] + 1)

    compiled = capture.optimize(fn, counting)
    for _ in range(3):
        with pytest.raises(RuntimeError) as actual:
            compiled(torch.randn(3))
        with pytest.raises(RuntimeError) as expected:
            fn(torch.randn(3))
        assert str(actual.value) == str(expected.value)
    resume = next(iter(cache_of(compiled).compilation._resumes.values()))
    assert len(captures) == 1 and len(resume._table) == 1, "the raising resume function runs eagerly from its guards"


def test_generator_function_runs_eagerly():
    def numbers(x):
        for i in range(3):
            yield x + i

    compiled = compile_eager(numbers)
    x = torch.randn(2)
    assert_same(list(compiled(x)), list(numbers(x)))
    assert [b.outcome for b in cache_of(compiled).compilation.breaks] == ["eager"]


def test_mutations_of_an_input_list_around_a_break(capsys):
    def fn(x, items):
        items.append(x * 2)
        print(len(items))
        items.append(x)
        return items

    check_breaks(capsys, fn, lambda: (torch.randn(2), [torch.randn(2)]))


def _adds_one(t):
    print("a break inside the callee")
    return t + 1


def _adds_hundred(t):
    print("a break inside the callee")
    return t + 100


class _BreaksAndAdds(torch.nn.Module):
    def forward(self, t):
        print("a break inside forward")
        return t + 1


class _BreaksAndScales(torch.nn.Module):
    def forward(self, t):
        print("a break inside forward")
        return t * 100


@pytest.mark.parametrize("callees", [(_adds_one, _adds_hundred), (_BreaksAndAdds(), _BreaksAndScales())], ids=["function", "module"])
def test_a_callee_passed_in_that_breaks_is_the_one_of_this_call(callees):
    # The entry calls the callee's own compiled frame: it must be guarded to be that callee.
    def fn(callee, x):
        return callee(x * 2)

    compiled = compile_eager(fn)
    for callee in (*callees, *callees):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(callee, x), fn(callee, x))


def test_a_closure_made_per_call_that_breaks_writes_its_own_cell():
    def fn(x):
        total = 0

        def bump(t):
            nonlocal total
            total += 1
            print("a break inside the closure")
            return t * total

        a = bump(x)
        b = bump(x)
        return a, b, total

    compiled = compile_eager(fn)
    for _ in range(3):
        x = torch.randn(3)
        actual, expected = compiled(x), fn(x)
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e) if isinstance(e, torch.Tensor) else None
        assert actual[2] == expected[2]


class Tagged(torch.Tensor):
    """Its operations return Tagged (torch's default __torch_function__)."""


class Counted(torch.Tensor):
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(getattr(func, "__name__", repr(func)))
        return super().__torch_function__(func, types, args, kwargs or {})


@pytest.mark.parametrize("kind", [Tagged, Counted], ids=lambda k: k.__name__)
def test_tensor_subclass_operations_run_natively(kind):
    """A subclass's operations return the subclass and may run an override of its own: they
    break the graph and run natively (inductor's kernels returned plain tensors)."""

    def double_then_sum(x, y):
        return (x * 2).sum() + y.sum(), type(x * 2)

    compiled = compile_eager(double_then_sum)
    for _ in range(2):
        y = torch.randn(3)
        Counted.calls.clear()
        expected = double_then_sum(torch.ones(3).as_subclass(kind), y)
        eager_calls = list(Counted.calls)
        Counted.calls.clear()
        actual = compiled(torch.ones(3).as_subclass(kind), y)
        assert type(actual[0]) is type(expected[0]) and actual[1] is expected[1]
        assert_same(actual[0].as_subclass(torch.Tensor), expected[0].as_subclass(torch.Tensor))
        assert Counted.calls == eager_calls
