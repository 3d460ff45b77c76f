"""`with` blocks over PyTorch's global state: grad mode, inference mode and autocast become
nodes of the graph, and the global state outside the block is unchanged."""

from __future__ import annotations

import contextlib

import pytest
import torch

from helpers import captures, check, check_across_sizes, compile_eager, graph_of


def leaf():
    return (torch.randn(3, 4, requires_grad=True),)


def targets(compiled):
    return [n.target for n in graph_of(compiled).graph.nodes if n.op == "call_function"]


def test_no_grad_block():
    def fn(x):
        with torch.no_grad():
            y = x * 2
        return y, x * 3

    compiled = check(fn, leaf)
    assert targets(compiled).count(torch._C._set_grad_enabled) == 2
    assert torch.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    def fn(x):
        with torch.no_grad():
            with torch.enable_grad():
                y = x * 2
            z = x + 1
        return y, z

    check(fn, leaf)


def test_set_grad_enabled_as_context_and_call():
    def fn(x):
        with torch.set_grad_enabled(False):
            y = x * 2
        torch.set_grad_enabled(False)
        z = x * 3
        torch.set_grad_enabled(True)
        return y, z, x * 4

    check(fn, leaf)
    assert torch.is_grad_enabled()


def test_grad_mode_as_decorator():
    @torch.no_grad()
    def helper(t):
        return t * 2

    check(lambda x: (helper(x), x + 1), leaf, fullgraph=True)


class NoGradForward(torch.nn.Module):
    # As transformers' rotary embeddings (LlamaRotaryEmbedding, transformers 5.17).
    @torch.no_grad()
    def forward(self, x):
        return x.sin() * 2


class CallsNoGradModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = NoGradForward()

    def forward(self, x):
        return self.inner(x) + x


@pytest.mark.parametrize("module", [NoGradForward, CallsNoGradModule])
def test_decorated_module_forward_is_inlined(module):
    check(module(), leaf, fullgraph=True)


@pytest.mark.parametrize(
    "decorator",
    [torch.enable_grad(), torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16)],
    ids=["enable_grad", "inference_mode", "autocast"],
)
def test_context_manager_decorators(decorator):
    helper = decorator(lambda t, w: t @ w)

    def fn(x, w):
        with torch.no_grad():
            y = helper(x, w)
        return y, y.dtype, y.requires_grad

    check(fn, lambda: (torch.randn(4, 4, requires_grad=True), torch.randn(4, 4)), fullgraph=True)


def test_inference_mode_block():
    def fn(x):
        with torch.inference_mode():
            y = x * 2
        return y.clone()

    compiled = compile_eager(fn)
    x = leaf()[0]
    out = compiled(x)
    torch.testing.assert_close(out, fn(x))
    assert not out.requires_grad


def test_autocast_block():
    def fn(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = x @ w
        return y, (x @ w).dtype

    compiled = check(fn, lambda: (torch.randn(4, 4), torch.randn(4, 4)))
    out, _ = compiled(torch.randn(4, 4), torch.randn(4, 4))
    assert out.dtype is torch.bfloat16
    assert not torch.is_autocast_enabled("cpu")


def test_grad_mode_at_call_is_guarded():
    compiled = compile_eager(lambda x: x * 2)
    x = leaf()[0]
    assert compiled(x).requires_grad
    with torch.no_grad():
        assert not compiled(x).requires_grad
    assert captures(compiled) == 2


def test_nullcontext():
    def fn(x):
        with contextlib.nullcontext(5) as value:
            return x + value

    check(fn, leaf)


def test_state_restored_when_tracing_fails():
    import capture

    def fn(x):
        with torch.no_grad():
            print("unsupported inside the block")
        return x

    with pytest.raises(capture.Unsupported):
        compile_eager(fn, fullgraph=True)(leaf()[0])
    assert torch.is_grad_enabled()


def _runs_graph_keeping_grad_mode(gm, example_inputs):
    """A backend whose compiled graph leaves grad mode as it found it, as one that traces the
    graph (aot_autograd) does: its `_set_grad_enabled` nodes run while compiling, not per call."""

    def run(*args):
        with torch.set_grad_enabled(torch.is_grad_enabled()):
            return gm(*args)

    return run


def _disables_grad_and_leaves_it(x):
    torch.set_grad_enabled(False)
    return x * 2


@pytest.mark.parametrize("backend", ["eager", "keeps_grad_mode"])
def test_grad_mode_left_changed_by_the_function_is_set_after_the_graph(backend):
    import capture

    chosen = capture.backends.eager if backend == "eager" else _runs_graph_keeping_grad_mode
    compiled = capture.optimize(_disables_grad_and_leaves_it, chosen)
    try:
        for _ in range(2):
            x = torch.randn(3, requires_grad=True)
            y = compiled(x)
            assert not torch.is_grad_enabled()
            assert not y.requires_grad
            torch.set_grad_enabled(True)
        # The graph itself ends in the mode it began with.
        graph_of(compiled)(x)
        assert torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)


def test_manager_entered_by_hand_across_breaks_is_one_object():
    # The break at `m.__enter__` rebuilds `m` for the stack and for the local: one no_grad
    # object, or `__exit__` reads a `prev` its own `__enter__` never stored.
    def fn(x):
        m = torch.no_grad()
        m.__enter__()
        y = x * 2
        m.__exit__(None, None, None)
        return y, torch.is_grad_enabled()

    compiled = compile_eager(fn)
    for _ in range(2):
        x = torch.randn(3, requires_grad=True)
        y, mode = compiled(x)
        assert mode and torch.is_grad_enabled()
        assert not y.requires_grad


def test_saved_tensors_hooks_run_outside_the_graph():
    # Its __enter__, inlined once the construction broke the graph, pushed Python functions
    # into the graph (an FX graph that did not compile); the hooks must run as in eager.
    def fn(x, log):
        def pack(t):
            log.append("pack")
            return t * 1

        def unpack(t):
            log.append("unpack")
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.sin()
        return y

    compiled = compile_eager(fn)
    for _ in range(2):
        x = torch.randn(3, requires_grad=True)
        eager_x = x.detach().clone().requires_grad_()
        log, eager_log = [], []
        compiled(x, log).sum().backward()
        fn(eager_x, eager_log).sum().backward()
        assert log == eager_log
        torch.testing.assert_close(x.grad, eager_x.grad)


@pytest.mark.parametrize("backend", ["eager", "keeps_global_state"])
def test_autocast_left_changed_by_the_function_is_set_after_the_graph(backend):
    import capture

    def fn(a, b):
        torch.set_autocast_enabled("cpu", True)
        return a @ b

    def keeps_global_state(gm, example_inputs):
        def run(*args):
            enabled = torch.is_autocast_enabled("cpu")
            try:
                return gm(*args)
            finally:
                torch.set_autocast_enabled("cpu", enabled)

        return run

    chosen = capture.backends.eager if backend == "eager" else keeps_global_state
    compiled = capture.optimize(fn, chosen)
    try:
        for _ in range(2):
            a, b = torch.randn(3, 4), torch.randn(4, 2)
            out = compiled(a, b)
            assert torch.is_autocast_enabled("cpu") and out.dtype == torch.get_autocast_dtype("cpu")
            torch.set_autocast_enabled("cpu", False)
    finally:
        torch.set_autocast_enabled("cpu", False)


def test_is_inference_of_an_input_is_its_own():
    # The fake counterpart of an inference tensor is none: the answer comes from the input.
    def fn(x):
        return x + 1, x.is_inference()

    compiled = compile_eager(fn)
    with torch.inference_mode():
        made_in_inference_mode = torch.randn(3)
    for x in (made_in_inference_mode, torch.randn(3)):
        assert compiled(x)[1] == x.is_inference()


def test_a_trace_stopped_inside_inference_mode_leaves_it():
    # Inference mode has no setter the capture could restore it with: the manager the trace
    # entered for real is left when the trace stops inside its block (refused here).
    import capture

    def fn(x):
        with torch.inference_mode():
            y = x * 2
            print("refused under fullgraph")
            z = y + 1
        return z

    with pytest.raises(capture.Unsupported) as raised:
        compile_eager(fn, fullgraph=True)(torch.randn(3, requires_grad=True))
    # Checked while the error (and the frames its traceback holds) is alive: freeing the
    # manager's C++ guard left inference mode too, which hid the leak.
    assert raised.value is not None and not torch.is_inference_mode_enabled()


def test_grad_mode_from_a_symbolic_size_is_specialized():
    # Once the size is symbolic (the third call), `x.shape[0] > 4` is a SymBool: the mode is
    # its value at the example inputs, guarded; it was an internal error (NotConstant).
    def fn(x):
        with torch.set_grad_enabled(x.shape[0] > 4):
            y = x * 2
        return y, y.requires_grad

    check_across_sizes(fn, lambda n: (torch.randn(n, requires_grad=True),), sizes=(4, 4, 7, 3))
