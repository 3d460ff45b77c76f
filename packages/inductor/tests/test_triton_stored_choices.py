"""The block sizes a Triton kernel's launcher stored beside its cache entry
(`<function>.autotune.json`, outside the entry's manifest) are used only when they are a
config the code makes now: a file edited, damaged or written by code that sized its configs
otherwise is ignored (timed again), never a crash nor a launch with block sizes the kernel
cannot take. Each case writes such a file for every size bucket the calls reach, then
compiles the graph again (a warm start reads the file) and compares with eager at the first
call, on new values and at a new size (a static graph: compiled for it).
"""

from __future__ import annotations

import json
import re

import pytest
import torch
import torch.fx

import inductor
from conftest import BACKENDS, assert_same

aten = torch.ops.aten
TRITON = next((name for name in BACKENDS if name.startswith("triton")), None)
pytestmark = pytest.mark.skipif(TRITON is None, reason="no Triton backend here")
DEVICE, OPTIONS = BACKENDS.get(TRITON, ("cpu", {}))
triton_launch = pytest.importorskip("inductor.runtime.triton_launch")
triton_configs = pytest.importorskip("inductor.runtime.triton_configs")

SIZES = [(9, 13), (9, 13), (5, 13)]  # rows of 13: one persistent reduction needs RBLOCK >= 16


def _row_sums(x):
    return (aten.sum.dim_IntList(aten.sigmoid.default(aten.mul.Tensor(x, x)), [-1]),)


# A stored choice per bucket, as the file holds them.
STORED = {
    "a table that is a list": lambda buckets: [1, 2],
    "a config of another version": lambda buckets: {b: {"XBLOCK": 8, "BLOCK_K": 4} for b in buckets},
    "a block size of the wrong type": lambda buckets: {b: {"XBLOCK": "8", "RBLOCK": 16} for b in buckets},
    "a config that is not a mapping": lambda buckets: {b: 7 for b in buckets},
    # Summed only 8 of each row's 13 values: a wrong result, not an error.
    "an RBLOCK shorter than the rows": lambda buckets: {
        b: {"XBLOCK": 8, "RBLOCK": 8, "num_warps": 4, "num_stages": 1} for b in buckets},
}


@pytest.mark.parametrize("stored", sorted(STORED))
def test_an_unusable_stored_block_size_is_never_launched(stored, tmp_path, monkeypatch):
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    example = [torch.randn(*SIZES[0], device=DEVICE)]
    compiled = inductor.compile_aten_graph(torch.fx.symbolic_trace(_row_sums), example, options=OPTIONS)
    device = torch.device(DEVICE)
    buckets = [triton_launch._tuning_key(device, tuple(triton_configs.next_power_of_2(n) for n in size))
               for size in SIZES]
    for key, name in re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", compiled.source):
        path = triton_launch.kernel_module_path(key, name).with_suffix(".autotune.json")
        path.write_text(json.dumps(STORED[stored](buckets)))
    triton_launch.load_triton_kernel.cache_clear()  # a new process: launchers read the files afresh

    for size in SIZES:  # a warm start at each size (the graph is static)
        x = torch.randn(*size, device=DEVICE)
        again = inductor.compile_aten_graph(torch.fx.symbolic_trace(_row_sums), [x], options=OPTIONS)
        assert again.cache_hit or size != SIZES[0]
        assert_same(again(x), _row_sums(x), rtol=1e-5, atol=1e-5)
