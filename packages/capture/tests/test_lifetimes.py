"""Compiled functions do not keep the tensors of the calls that compiled them alive (an entry
reads its inputs by source on every call; only constants met while tracing are held)."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

import capture

pytestmark = pytest.mark.usefixtures("frozen_heap")


def plain(x, w):
    return (x @ w).relu()


def breaking(x, w):
    y = x @ w
    print(end="")
    return y.relu() + x.sum()


@pytest.mark.parametrize("fn", [plain, breaking], ids=["one graph", "graph break"])
def test_inputs_are_not_kept_alive(fn):
    compiled = capture.optimize(fn, capture.backends.eager)
    x, w = torch.randn(3, 3), torch.randn(3, 3)
    compiled(x, w)
    references = [weakref.ref(x), weakref.ref(w)]
    del x, w
    gc.collect()
    assert all(ref() is None for ref in references)


def test_module_inputs_are_not_kept_alive():
    compiled = capture.optimize(torch.nn.Linear(3, 3), capture.backends.eager)
    x = torch.randn(2, 3)
    compiled(x)
    reference = weakref.ref(x)
    del x
    gc.collect()
    assert reference() is None


@pytest.mark.parametrize("fn", [plain, breaking], ids=["one graph", "graph break"])
def test_generated_source_lines_go_when_the_entries_do(fn):
    """Guard and entry functions register their source with linecache (for tracebacks); a
    process that recompiles for days must not keep every one after `reset()`."""
    import linecache

    def generated():
        return {name for name in linecache.cache if name.startswith(("<guards ", "<capture entry "))}

    before = generated()
    compiled = capture.optimize(fn, capture.backends.eager)
    compiled(torch.randn(3, 3), torch.randn(3, 3))
    assert generated() - before
    capture.reset()
    del compiled
    gc.collect()
    assert generated() <= before
