"""Python state a custom autograd.Function's methods change or read outside themselves.

The methods run natively on fakes while capturing and in aot_autograd's trace, not on the calls
that hit the cache: a side effect (`calls.append` in forward or backward, `Counter.n += 1`, a
`nonlocal` counter, a dict item written) happened at compile time only, and several times
there (the forward ran on fakes, the backward was tried on them; a new size ran them again);
a value read through `__getattr__`, a computed dict key or `dict.get` was baked into the graph.
Such a Function now runs eagerly between two graphs (as torch.compile does for a backward with
side effects); guardable reads (a list item by a constant index) are guarded instead. Each case
against eager: values, grads and the state the methods touch, on the first call, a cache hit
with new values and a new size.
"""

from __future__ import annotations

import pytest
import torch

import compiler
from capture import Unsupported

SIZES = (4, 4, 6)

CALLS: list = []
TOTALS: dict = {"n": 0}


class Counter:
    n = 0


class Recorder:
    def __init__(self):
        self.seen = 0

    def record(self, x):
        self.seen += x.shape[0]


RECORDER = Recorder()


class LoggedForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        CALLS.append(("forward", x.shape[0]))
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class LoggedBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        CALLS.append(("backward", g.shape[0]))
        return g * 2


class CountedOnClass(torch.autograd.Function):
    """The count the forward makes scales the value and the gradient: eager's grows by one a call."""

    @staticmethod
    def forward(ctx, x):
        Counter.n += 1
        return x * Counter.n

    @staticmethod
    def backward(ctx, g):
        return g * Counter.n


class TotalInDict(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        TOTALS["n"] = TOTALS["n"] + 1
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        return g * 3


class RecordedByMethod(torch.autograd.Function):
    """The write is in a method of an object the forward reaches by name."""

    @staticmethod
    def forward(ctx, x):
        RECORDER.record(x)
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3


def _counted_by_closure():
    count = 0

    class CountedByCell(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            nonlocal count
            count += 1
            return x * count

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return CountedByCell, lambda: count


CountedByCell, cell_count = _counted_by_closure()


def _state():
    return list(CALLS), Counter.n, TOTALS["n"], RECORDER.seen, cell_count()


def _reset_state():
    global CountedByCell, cell_count
    CALLS.clear()
    Counter.n = 0
    TOTALS["n"] = 0
    RECORDER.seen = 0
    CountedByCell, cell_count = _counted_by_closure()


SIDE_EFFECTS = {
    "list_append_in_forward": lambda x: LoggedForward.apply(x).sin(),
    "list_append_in_backward": lambda x: LoggedBackward.apply(x).sin(),
    "class_counter_read_by_backward": lambda x: CountedOnClass.apply(x).sin(),
    "dict_item_written": lambda x: TotalInDict.apply(x) * 2,
    "method_writing_its_object": lambda x: RecordedByMethod.apply(x).cos(),
    "nonlocal_counter": lambda x: CountedByCell.apply(x).sin(),
}


def _run(fn, compiled):
    """Results and the state the methods touched, over the three calls."""
    _reset_state()
    results = []
    for step, n in enumerate(SIZES):
        torch.manual_seed(step)
        x = torch.randn(n, requires_grad=True)
        y = (compiled or fn)(x)
        y.backward(torch.randn(n))
        results.append((y.detach(), x.grad))
    return results, _state()


def _compare(case, backend):
    fn = lambda x: SIDE_EFFECTS[case](x)  # noqa: E731  (reads the table at call time: CountedByCell is rebuilt)
    expected, expected_state = _run(fn, None)
    actual, actual_state = _run(fn, compiler.compile(fn, backend=backend))
    torch.testing.assert_close(actual, expected)
    assert actual_state == expected_state


@pytest.mark.parametrize("case", SIDE_EFFECTS)
def test_function_side_effects_happen_on_every_call(case):
    _compare(case, "aot_eager")


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_function_side_effects_on_other_backends(backend):
    _compare("list_append_in_forward", backend)
    _compare("class_counter_read_by_backward", backend)


def test_side_effect_breaks_the_graph_around_apply():
    explained = compiler.explain(SIDE_EFFECTS["list_append_in_backward"])(torch.randn(4, requires_grad=True))
    assert explained.graph_break_count == 1
    assert "LoggedBackward.backward" in str(explained.break_reasons[0])
    assert "CALLS'].append" in str(explained.break_reasons[0])


def test_fullgraph_names_the_apply_line_and_the_write():
    def fn(x):
        return CountedOnClass.apply(x) * 2  # the apply line

    with pytest.raises(Unsupported, match="sets the attribute n of") as info:
        compiler.compile(fn, backend="aot_eager", fullgraph=True)(torch.randn(4, requires_grad=True))
    assert "# the apply line" in str(info.value)


class AppendsToItsArgument(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, log):
        log.append(x.shape[0])
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, None


class Box:
    calls = 0


class SetsAnAttributeOfItsArgument(torch.autograd.Function):
    @staticmethod
    def forward(x, box):  # the setup_context style: no ctx in forward
        box.calls = box.calls + 1
        return x * box.calls

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.calls = inputs[1].calls

    @staticmethod
    def backward(ctx, g):
        return g * ctx.calls, None


ARGUMENT_WRITES = {
    "list_append": (lambda x, log: AppendsToItsArgument.apply(x, log).sin(), list),
    "attribute_set": (lambda x, box: SetsAnAttributeOfItsArgument.apply(x, box).sin(), Box),
}


@pytest.mark.parametrize("case", ARGUMENT_WRITES)
def test_function_changing_a_python_argument(case):
    """The graph called the forward on a copy of the argument, once: eager's list grew by one a
    call ([4, 4, 6]), the compiled one stayed []; the object's count (the scale) stayed 0."""
    fn, make = ARGUMENT_WRITES[case]
    compiled = compiler.compile(fn, backend="aot_eager")
    expected_arg, actual_arg = make(), make()
    for n in SIZES:
        x = torch.randn(n)
        xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
        expected, actual = fn(xe, expected_arg), compiled(xc, actual_arg)
        torch.testing.assert_close(actual, expected)
        expected.sum().backward()
        actual.sum().backward()
        torch.testing.assert_close(xc.grad, xe.grad)
    assert vars(actual_arg) == vars(expected_arg) if case == "attribute_set" else actual_arg == expected_arg


# --- reads no guard can name, and reads guarded instead -------------------------------------


class Hooked:
    """Attributes served by __getattr__: no guard can read them without running it."""

    def __init__(self):
        self.__dict__["values"] = {"scale": 2.0}

    def __getattr__(self, name):
        return self.values[name]


HOOKED = Hooked()
SETTINGS = {"scale": 2.0}
KEY = "scale"
SCALES = [2.0]


class ScaledThroughGetattr(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * HOOKED.scale

    @staticmethod
    def backward(ctx, g):
        return g * HOOKED.scale


class ScaledByComputedKey(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * SETTINGS[KEY.lower()]

    @staticmethod
    def backward(ctx, g):
        return g * 2


class ScaledByDictGet(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * SETTINGS.get("scale", 1.0)


class ScaledBySum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * sum(SCALES)

    @staticmethod
    def backward(ctx, g):
        return g * 2


class ScaledByClassmethodAttribute(torch.autograd.Function):
    SCALE = 2.0

    @classmethod
    def forward(cls, ctx, x):
        return x * cls.SCALE

    @classmethod
    def backward(cls, ctx, g):
        return g * cls.SCALE


class ScaledByListItem(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * SCALES[0]

    @staticmethod
    def backward(ctx, g):
        return g * SCALES[-1]


def _set_scale(value):
    ScaledByClassmethodAttribute.SCALE = value
    HOOKED.values["scale"] = value
    SETTINGS["scale"] = value
    SCALES[0] = value


READS = {
    "getattr_hook": ScaledThroughGetattr,
    "computed_key": ScaledByComputedKey,
    "dict_get": ScaledByDictGet,
    "builtin_over_a_list": ScaledBySum,
    "list_item_by_constant_index": ScaledByListItem,  # guarded: one graph
    "classmethod_reading_cls": ScaledByClassmethodAttribute,  # guarded too
}


@pytest.mark.parametrize("case", READS)
def test_function_reading_changed_state_no_guard_names(case):
    """The scale changes between calls: eager's value and gradient follow it (the graph kept 2.0)."""
    function = READS[case]

    def fn(x):
        return function.apply(x).sin()

    compiled = compiler.compile(fn, backend="aot_eager")
    try:
        for scale in (2.0, 3.0, 5.0):
            _set_scale(scale)
            for n in SIZES:
                x = torch.randn(n)
                xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
                expected, actual = fn(xe), compiled(xc)
                torch.testing.assert_close(actual, expected)
                g = torch.randn(n)
                expected.backward(g)
                actual.backward(g)
                torch.testing.assert_close(xc.grad, xe.grad)
    finally:
        _set_scale(2.0)


# --- what stays in one graph -----------------------------------------------------------------


class LocalStateOnly(torch.autograd.Function):
    """Writes only what the call owns: ctx, a local list, a tensor made here; calls torch and
    pure builtins, and a nested Function."""

    @staticmethod
    def forward(ctx, x):
        parts = []
        for i in range(2):
            parts.append(x * (i + 1))
        ctx.count = len(parts)
        ctx.count += 1
        out = torch.zeros_like(x)
        out[0] = 1.0
        ctx.save_for_backward(x)
        return LoggedFree.apply(sum(parts) + out)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.count + x * 0


class LoggedFree(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_function_changing_only_its_own_state_stays_in_one_graph():
    fn = lambda x: LocalStateOnly.apply(x) * 2  # noqa: E731
    explained = compiler.explain(fn)(torch.randn(4, requires_grad=True))
    assert explained.graph_break_count == 0, explained.break_reasons
    compiled = compiler.compile(fn, backend="aot_eager")
    for n in SIZES:
        x = torch.randn(n)
        xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
        torch.testing.assert_close(compiled(xc), fn(xe))
