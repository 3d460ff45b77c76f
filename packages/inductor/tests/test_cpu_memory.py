"""Large CPU buffers come from `empty_strided_cpu` (huge pages); results stay eager's."""

from __future__ import annotations

import torch

from conftest import check
from inductor.runtime.cpu_memory import MIN_BYTES, empty_strided_cpu

aten = torch.ops.aten


def test_large_outputs_match_eager():
    rows = MIN_BYTES // (4 * 512) + 3  # a little over the threshold, not a whole number of pages
    x = torch.randn(rows, 512)
    compiled = check(lambda x: (aten.sin.default(x), aten.exp.default(aten.amax.default(x, [1], True))), x)
    assert "empty_strided_cpu(" in compiled.source


def test_small_buffers_use_plain_empty_strided():
    x = torch.randn(16, 16)
    compiled = check(lambda x: (aten.sin.default(x),), x)
    assert "empty_strided_cpu(" not in compiled.source.split("def call")[1]


def test_empty_strided_cpu_keeps_size_stride_and_dtype():
    for size, stride, dtype in [((3000, 1024), (1, 3000), torch.float32), ((5,), (1,), torch.int64)]:
        t = empty_strided_cpu(size, stride, dtype)
        expected = torch.empty_strided(size, stride, dtype=dtype)
        assert (t.shape, t.stride(), t.dtype, t.device) == (expected.shape, expected.stride(), expected.dtype, expected.device)
