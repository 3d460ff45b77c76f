"""Guards and recompiles: every assumption made while tracing is checked on later calls; a
failing guard recaptures (logging which guard failed), and past the recompile limit the
function runs eagerly with one warning."""

from __future__ import annotations

import logging

import capture
import pytest
import torch

from helpers import assert_same, cache_of, captures, compile_eager, run_and_compare

FLAG = True


def fn(x, n=2):
    return (x * n) if FLAG else (x - n)


@pytest.mark.parametrize(
    "change",
    [
        lambda: (torch.randn(4, 3, dtype=torch.float64),),
        lambda: (torch.randn(5, 3),),
        lambda: (torch.randn(3, 4).t(),),
        lambda: (torch.randn(4, 3, requires_grad=True),),
        lambda: (torch.randn(4, 3), 3),
        lambda: (torch.randn(4, 3), 2.0),
    ],
    ids=["dtype", "size", "stride", "requires_grad", "int value", "int to float"],
)
def test_each_change_recaptures_once(change):
    compiled = compile_eager(fn)
    run_and_compare(compiled, fn, (torch.randn(4, 3),))
    run_and_compare(compiled, fn, (torch.randn(4, 3),))
    assert captures(compiled) == 1
    run_and_compare(compiled, fn, change())
    run_and_compare(compiled, fn, change())
    assert captures(compiled) == 2
    run_and_compare(compiled, fn, (torch.randn(4, 3),))
    assert captures(compiled) == 2, "the first entry still serves the first inputs"


def test_a_storage_offset_read_is_guarded_and_one_not_read_is_not():
    """Tensor guards leave the storage offset free (kernels read from the data pointer); an
    answer computed from it holds only for the offset seen, also read through a view."""

    def offsets(x):
        return x * 2, x.storage_offset(), x[1:].storage_offset()

    def doubled(x):
        return x * 2

    for fn, expected_captures in ((offsets, 2), (doubled, 1)):
        compiled = compile_eager(fn)
        for start in (0, 0, 2, 2):
            x = torch.randn(8)[start : start + 4]  # not run_and_compare: its clone has offset 0
            assert_same(compiled(x), fn(x))
        assert captures(compiled) == expected_captures


def test_is_leaf_of_an_input_is_guarded():
    # requires_grad is in the tensor guard; being a leaf is not, and `x * 1` of a leaf is not one.
    def leafness(x):
        return x * 2, x.is_leaf

    compiled = compile_eager(leafness)
    for make_leaf in (True, False, True, False):
        x = torch.randn(3, requires_grad=True)
        x = x if make_leaf else x * 1
        assert_same(compiled(x), leafness(x))
    assert captures(compiled) == 2


def test_process_settings_no_guard_covers_are_read_at_run_time():
    def threads(x):
        return x + torch.get_num_threads()

    compiled = compile_eager(threads)
    before = torch.get_num_threads()
    try:
        for count in (1, 2, 1):
            torch.set_num_threads(count)
            assert_same(compiled(torch.zeros(2)), threads(torch.zeros(2)))
    finally:
        torch.set_num_threads(before)


def test_global_change_recaptures():
    global FLAG
    compiled = compile_eager(fn)
    x = torch.randn(2)
    run_and_compare(compiled, fn, (x,))
    FLAG = False
    try:
        run_and_compare(compiled, fn, (x,))
    finally:
        FLAG = True
    assert captures(compiled) == 2


@pytest.mark.parametrize(
    "state",
    [torch.no_grad, torch.inference_mode, lambda: torch.autocast("cpu", dtype=torch.bfloat16)],
    ids=["no_grad", "inference_mode", "autocast"],
)
def test_global_state_picks_its_own_entry(state):
    """Entries captured under different global state each serve calls made under theirs (the
    dispatcher compares the global state once per call, not inside each guard function)."""

    def matmul(x, w):
        return x @ w

    compiled = compile_eager(matmul)
    make_args = lambda: (torch.randn(3, 4, requires_grad=True), torch.randn(4, 2))  # noqa: E731
    for _ in range(2):
        run_and_compare(compiled, matmul, make_args())
        with state():
            run_and_compare(compiled, matmul, make_args())
    assert captures(compiled) == 2


def test_recompile_log_names_the_failing_guard(caplog):
    compiled = compile_eager(fn)
    compiled(torch.randn(4, 3))
    with caplog.at_level(logging.INFO, logger="compiler.recompiles"):
        compiled(torch.randn(5, 3))
    assert "recompiling fn" in caplog.text
    assert "L['x']" in caplog.text and "failed" in caplog.text


def test_recompile_limit_falls_back_to_eager(monkeypatch, caplog):
    monkeypatch.setattr(capture.config, "recompile_limit", 2)
    compiled = compile_eager(fn, dynamic=False)
    compiled(torch.randn(1))
    compiled(torch.randn(2))
    x = torch.randn(3)
    recompiles = caplog.at_level(logging.INFO, logger="compiler.recompiles")
    with pytest.warns(UserWarning, match="recompile limit"), recompiles:
        assert_same(compiled(x), fn(x))
    assert "hit the recompile limit" in caplog.text and "L['x']" in caplog.text
    assert captures(compiled) == 2
    y = torch.randn(4)
    assert_same(compiled(y), fn(y))


def test_guard_function_is_readable_python():
    compiled = compile_eager(fn)
    compiled(torch.randn(4, 3))
    guard = cache_of(compiled).entries[0].guard
    assert "def " in guard.source and "L['x']" in guard.source
    assert guard.why(torch.randn(4, 4)) is not None
    assert guard.why(torch.randn(4, 3)) is None


def test_compiled_entry_is_readable_python():
    compiled = compile_eager(lambda x: {"double": x * 2})
    compiled(torch.randn(2))
    source = cache_of(compiled).entries[0].source
    compile(source, "<entry>", "exec")
    assert "_compiled_graph(x)" in source and "{'double': outs[0]}" in source


def test_reset_forgets_entries():
    compiled = compile_eager(fn)
    compiled(torch.randn(2))
    capture.reset()
    assert captures(compiled) == 0
    compiled(torch.randn(2))
    assert captures(compiled) == 1


class PointwiseConvs(torch.nn.Module):
    """1x1 convolutions: 40 weights and biases, checked as one group (guards' TensorGroup),
    the weights' size-1 dims compared by exact strides (is_contiguous() ignores them)."""

    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([torch.nn.Conv2d(4, 4, 1) for _ in range(20)])

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x)) + x
        return x


def _channels_last_weight(net):
    # Same sizes, other strides on the size-1 dims: is_contiguous() says True either way.
    net.convs[7].weight.data = net.convs[7].weight.data.to(memory_format=torch.channels_last)


# change -> captures after it: a parameter replaced by one of the same metadata is read as a
# graph input like the old one, so the entry serves it.
PARAMETER_CHANGES = {
    "channels-last weight": (_channels_last_weight, 2),
    "requires_grad_": (lambda net: net.convs[5].weight.requires_grad_(False), 2),
    "replaced by a frozen parameter": (
        lambda net: setattr(net.convs[2], "weight", torch.nn.Parameter(torch.randn(4, 4, 1, 1), requires_grad=False)), 2),
    "replaced by a parameter of the same metadata": (
        lambda net: setattr(net.convs[2], "weight", torch.nn.Parameter(torch.randn(4, 4, 1, 1))), 1),
    "forward hook": (lambda net: net.convs[9].register_forward_hook(lambda module, args, out: out * 2), 2),
}


@pytest.mark.parametrize("change, captures_after", PARAMETER_CHANGES.values(), ids=PARAMETER_CHANGES.keys())
def test_a_changed_parameter_of_a_grouped_module_recaptures(change, captures_after):
    torch.manual_seed(0)
    net = PointwiseConvs()
    compiled = compile_eager(net)
    run_and_compare(compiled, net, (torch.randn(2, 4, 3, 3),))
    run_and_compare(compiled, net, (torch.randn(2, 4, 3, 3),))
    assert captures(compiled) == 1
    assert "tensor_group.check(" in cache_of(compiled).entries[0].guard.source
    change(net)
    run_and_compare(compiled, net, (torch.randn(2, 4, 3, 3),))
    run_and_compare(compiled, net, (torch.randn(2, 4, 3, 3),))
    assert captures(compiled) == captures_after


def _scaled(x, k=2.0, *, shift=0.0):
    return x * k + shift


def _breaks_then_scales(t, k=2.0):
    print("a break inside the callee")
    return t * k


def test_defaults_changed_on_the_function_reach_the_compiled_calls():
    # The dispatcher read the defaults once, when it was made: later calls used the old ones.
    compiled = compile_eager(_scaled)
    callee_caller = compile_eager(lambda x: _breaks_then_scales(x))
    saved = _scaled.__defaults__, _scaled.__kwdefaults__, _breaks_then_scales.__defaults__
    try:
        for k, shift in ((2.0, 0.0), (3.0, 1.0), (2.0, 0.0)):
            _scaled.__defaults__, _scaled.__kwdefaults__ = (k,), {"shift": shift}
            _breaks_then_scales.__defaults__ = (k,)
            x = torch.randn(3)
            torch.testing.assert_close(compiled(x), x * k + shift)
            torch.testing.assert_close(callee_caller(x), x * k)
    finally:
        _scaled.__defaults__, _scaled.__kwdefaults__, _breaks_then_scales.__defaults__ = saved
