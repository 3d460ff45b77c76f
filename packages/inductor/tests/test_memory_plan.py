"""The wrapper's memory plan, measured: a compiled graph's peak of allocated CPU bytes is no
higher than eager's running the same ATen ops (runtime/cpu_memory.allocation_peak), and the
values match eager's."""

from __future__ import annotations

import torch
import torch.fx

from inductor import compile_aten_graph
from inductor.runtime.cpu_memory import allocation_peak

aten = torch.ops.aten


def _compiled(fn, *args):
    gm = torch.fx.symbolic_trace(fn)
    return compile_aten_graph(gm, list(args))


def _wide_narrow_chain(x, w1, w2, w3, w4):
    # Each relu's output dies at the next mm (eager drops it there too: one name, rebound), and
    # no later buffer has its size: none is reused.
    for w in (w1, w2, w3, w4):
        x = aten.relu.default(aten.mm.default(x, w))
    return (aten.sum.dim_IntList(x, [1]),)


def _chain_inputs():
    return (torch.randn(256, 64), torch.randn(64, 1024) / 8, torch.randn(1024, 32) / 32,
            torch.randn(32, 768) / 8, torch.randn(768, 48) / 32)


def _assert_peak_at_most_eagers(fn, make_inputs):
    """`fn` compiled matches eager on new values of the same sizes, at a peak no higher than eager's."""
    compiled = _compiled(fn, *make_inputs())
    args = make_inputs()
    torch.testing.assert_close(compiled(*args)[0], fn(*args)[0], rtol=1e-4, atol=1e-4)
    compiled(*args)
    ours, _ = allocation_peak(lambda: compiled(*args))
    eager, _ = allocation_peak(lambda: fn(*args))
    assert ours <= eager, f"compiled peak {ours} B above eager's {eager} B:\n{compiled.source}"


def test_dead_buffers_nothing_reuses_are_freed_where_they_die():
    _assert_peak_at_most_eagers(_wide_narrow_chain, _chain_inputs)


def _reads_input_first(x, w):
    e = aten.exp.default(x)                            # the last read of x
    return (aten.mm.default(aten.sin.default(e), w),)  # a new buffer as large as x after it


def test_arguments_handed_over_are_freed_after_their_last_use():
    compiled = _compiled(_reads_input_first, torch.randn(512, 512), torch.randn(512, 512) / 16)
    x, w = torch.randn(512, 512), torch.randn(512, 512) / 16
    expected = _reads_input_first(x, w)[0]
    torch.testing.assert_close(compiled(x, w)[0], expected, rtol=1e-4, atol=1e-4)

    def kept():  # the caller still holds x: it stays alive to the end
        return compiled(x.clone(), w)

    def handed_over():  # the list holds the only reference: the wrapper frees x after exp
        args = [x.clone(), w]
        return compiled.call_boxed(args)

    handed_over_peak, _ = allocation_peak(handed_over)
    kept_peak, _ = allocation_peak(kept)
    assert handed_over_peak < kept_peak, compiled.source
    args = [x.clone(), w]
    torch.testing.assert_close(compiled.call_boxed(args)[0], expected, rtol=1e-4, atol=1e-4)
    assert args == []


def _expand_then_project(x, w_up, w_down):
    # `x` dies at the first mm; the last exp has its size and could take over its memory, but
    # holding it that long would sit on top of the two wide buffers alive around cos.
    x = aten.sin.default(x)
    x = aten.mm.default(x, w_up)
    x = aten.cos.default(x)
    x = aten.mm.default(x, w_down)
    return (aten.exp.default(x),)


def _expansion_inputs():
    return torch.randn(256, 64), torch.randn(64, 1024) / 8, torch.randn(1024, 64) / 32


def test_a_dead_buffer_is_not_held_for_reuse_across_the_peak():
    _assert_peak_at_most_eagers(_expand_then_project, _expansion_inputs)
