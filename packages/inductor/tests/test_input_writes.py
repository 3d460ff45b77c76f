"""Graphs that write their inputs in place (aot_autograd ends them in `copy_` into the input):
the new value is stored through the input's memory, compared with eager on the inputs and the
outputs, on a first call and on a cache hit with fresh values; the wrapper then neither
allocates the new value nor copies it back."""

from __future__ import annotations

import dataclasses
import logging

import pytest
import torch

import inductor
from conftest import backend_options, traced, uses_triton

pytest.importorskip("aot_autograd")


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x, y)


def scale_and_shift(x, y):
    x.mul_(y).add_(1)
    return x + 2


def swap(a, b):
    saved = a.clone()
    a.copy_(b)
    b.copy_(saved)
    return a * 1


def flip_in_place(x, y):
    x.copy_(x.flip(0) + y)
    return y * 2


def normalize_rows(x, y):
    x.div_(x.sum(-1, keepdim=True))
    return x * y


def matmul_then_write(x, y):
    out = x @ y
    x.add_(1)
    return out


def returns_the_mutated_input(x, y):
    return x.add_(y)


def write_with_cast(x, y):
    x.copy_(y.to(torch.float16) * 3)  # rounded to half precision, widened back on the store
    return y + 1


CASES = [scale_and_shift, swap, flip_in_place, normalize_rows, matmul_then_write, returns_the_mutated_input,
         write_with_cast]


def inputs_for(fn, device, transposed=False):
    x = torch.randn(6, 6, device=device) + 4
    y = torch.randn(6, 6, device=device) + 4
    return [x.t() if transposed else x, y]


def run_both(compiled, fn, inputs):
    ours = [t.clone() for t in inputs]
    expected = [t.clone() for t in inputs]
    with torch.no_grad():
        out = compiled(*ours)
        ref = fn(*expected)
    torch.testing.assert_close(out[0], ref)
    for a, e in zip(ours, expected):
        torch.testing.assert_close(a, e)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_input_written_in_place_matches_eager(fn, transposed, device):
    inputs = inputs_for(fn, device, transposed)
    compiled = inductor.compile_fx(traced(Fn(fn)), [t.clone() for t in inputs], options=backend_options())
    run_both(compiled, fn, inputs)
    run_both(compiled, fn, inputs_for(fn, device, transposed))  # the cached graph, new values


@pytest.mark.parametrize("fn", [scale_and_shift, normalize_rows], ids=lambda f: f.__name__)
def test_timing_block_sizes_does_not_apply_an_in_place_update_again(fn, device, monkeypatch):
    # Choosing among block sizes runs a kernel several times; for a kernel that updates an input
    # in place (an optimizer step's parameters), each timed run on the real input would apply
    # the update once more (AdamW on the H200 was wrong on its first call only).
    if not uses_triton(device):
        pytest.skip("only Triton kernels are timed")
    from inductor.runtime import triton_launch

    def time_by_running_three_times(launch):
        for _ in range(3):
            launch()
        return 1.0

    one_config = triton_launch.TritonLauncher._candidates

    def two_configs(self, numels, interpreted):
        [config] = one_config(self, numels, interpreted)
        return [config, dataclasses.replace(config, XBLOCK=max(1, config.XBLOCK // 2))]

    monkeypatch.setattr(triton_launch.TritonLauncher, "_candidates", two_configs)
    monkeypatch.setattr(triton_launch, "_time_ms", time_by_running_three_times)
    monkeypatch.setattr(triton_launch.TritonLauncher, "_store_choices", lambda *a: None)
    stand_ins = triton_launch.TritonLauncher._with_stand_ins_for_stores
    timed = []
    monkeypatch.setattr(triton_launch.TritonLauncher, "_with_stand_ins_for_stores",
                        lambda self, args: timed.append((self.fn.arg_names, args, stand_ins(self, args))) or timed[-1][2])
    inputs = [torch.randn(7, 9, device=device) + 4, torch.randn(7, 9, device=device) + 4]  # a size of its own
    compiled = inductor.compile_fx(traced(Fn(fn)), [t.clone() for t in inputs], options=backend_options())
    run_both(compiled, fn, inputs)
    run_both(compiled, fn, [torch.randn(7, 9, device=device) + 4, torch.randn(7, 9, device=device) + 4])
    # The updated input is timed through a stand-in; a new output is timed in place (a stand-in
    # for it would only raise the first call's peak memory).
    for names, real, timed_args in timed:
        for name, a, t in zip(names, real, timed_args):
            if "out_ptr" in name:
                assert (t.data_ptr() == a.data_ptr()) == ("in_out_ptr" not in name), (name, names)
    assert any("in_out_ptr0" in names for names, _, _ in timed)


def wrapper_source(caplog, fn, inputs) -> str:
    with caplog.at_level(logging.INFO, logger="compiler.output_code"):
        compiled = inductor.compile_fx(traced(Fn(fn)), inputs)
        with torch.no_grad():
            compiled(*inputs)
    text = "\n".join(r.getMessage() for r in caplog.records)
    return text[text.index("def call(args)"):]


def test_wrapper_stores_the_new_value_into_the_input(caplog):
    # A shape of its own, so that the cache cannot answer: the wrapper is generated and logged.
    source = wrapper_source(caplog, scale_and_shift, [torch.randn(5, 7), torch.randn(5, 7)])
    assert "copy_" not in source
    # One allocation: the output x + 2; the new x is stored into arg0.
    assert source.count("empty_strided") == 1, source
    assert "arg0.data_ptr()" in source


def test_version_counter_moves_as_in_eager():
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    compiled = inductor.compile_fx(traced(Fn(scale_and_shift)), [x.clone(), y])
    before = x._version
    with torch.no_grad():
        compiled(x, y)
    assert x._version > before
