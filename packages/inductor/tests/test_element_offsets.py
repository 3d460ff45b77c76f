"""A load of one fixed element of a larger buffer takes the element's position as a kernel
argument: kernels differing only in which element they read (an optimizer's per-parameter
update reading its bias correction out of one buffer of them) are one source, so one compile.
Results match eager on every backend, on the first call and with new values."""

from __future__ import annotations

import re

import torch

from conftest import check

aten = torch.ops.aten


def scaled_by_two_elements(x, y, s):
    # x * s[1] and y * s[2]: the same kernel twice, but for the element of `s` it reads
    return aten.mul.Tensor(x, aten.select.int(s, 0, 1)), aten.mul.Tensor(y, aten.select.int(s, 0, 2))


def _inputs(device):
    # large enough that each product is a loop of its own (scheduler.MAX_UNRELATED_ELEMENTS)
    return [torch.randn(300, 300, device=device), torch.randn(300, 300, device=device), torch.randn(4, device=device)]


def test_kernels_reading_other_elements_share_one_source(device):
    compiled = check(scaled_by_two_elements, *_inputs(device))
    for _ in range(2):  # new values through the same kernels
        inputs = _inputs(device)
        for actual, expected in zip(compiled(*inputs), scaled_by_two_elements(*inputs)):
            torch.testing.assert_close(actual, expected)
    sources = list(compiled.kernel_sources.values())
    if compiled.kernel_count == 2:
        assert len(set(sources)) == 1, sources
    else:  # Triton runs the two (reading graph inputs only) as one combo: one member function
        [combo] = sources
        assert len(re.findall(r"^def member_", combo, re.MULTILINE)) == 1, combo


def test_a_scalar_tensor_keeps_its_literal_index(device):
    # a buffer of one element has nothing to choose: no offset argument
    def fn(x, s):
        return (aten.mul.Tensor(x, s),)

    compiled = check(fn, torch.randn(300, 40, device=device), torch.randn((), device=device))
    assert not any("offset0" in source for source in compiled.kernel_sources.values())
