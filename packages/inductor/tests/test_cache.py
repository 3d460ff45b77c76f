"""On-disk caches: kernels by source hash, whole graphs by content hash (a warm start skips codegen)."""

from __future__ import annotations

import os
import pathlib
import shutil

import torch

import inductor
from inductor.codegen import cpp
from conftest import assert_same, compile_aten

aten = torch.ops.aten


def _fn(x, y):
    return (aten.sigmoid.default(aten.mul.Tensor(x, y)),)


def test_second_compile_is_a_graph_cache_hit_without_codegen(device, monkeypatch):
    x, y = torch.randn(30, 31, device=device), torch.randn(30, 31, device=device)
    first = compile_aten(_fn, [x, y])
    assert not first.cache_hit

    def no_codegen(*args, **kwargs):
        raise AssertionError("a warm start generated code")

    monkeypatch.setattr(cpp.CppKernel, "__init__", no_codegen)
    second = compile_aten(_fn, [x, y])
    assert second.cache_hit
    assert_same(second(x, y), _fn(x, y))


def test_different_input_shapes_are_different_cache_entries(device):
    a = compile_aten(_fn, [torch.randn(4, 5, device=device), torch.randn(4, 5, device=device)])
    b = compile_aten(_fn, [torch.randn(6, 5, device=device), torch.randn(6, 5, device=device)])
    assert a.source != b.source


def test_identical_kernels_share_one_library(device):
    def other(x, y):  # a different graph whose only kernel is the same
        return aten.sigmoid.default(aten.mul.Tensor(x, y)), x

    x, y = torch.randn(7, 9, device=device), torch.randn(7, 9, device=device)
    compile_aten(_fn, [x, y])
    libraries = set(pathlib.Path(os.environ["PTC_INDUCTOR_CACHE_DIR"], "cpp").glob("*/kernel.so"))
    compiled = compile_aten(other, [x, y])
    assert not compiled.cache_hit
    assert set(pathlib.Path(os.environ["PTC_INDUCTOR_CACHE_DIR"], "cpp").glob("*/kernel.so")) == libraries
    assert_same(compiled(x, y), other(x, y))


def test_removed_kernels_are_rebuilt_on_a_warm_start(device):
    """A graph's entry keeps its kernels' sources: kernel entries deleted from the cache are
    built again without generating code."""
    x, y = torch.randn(11, 3, device=device), torch.randn(11, 3, device=device)
    compile_aten(_fn, [x, y])
    root = pathlib.Path(os.environ["PTC_INDUCTOR_CACHE_DIR"])
    for kernel in [*root.glob("cpp/*"), *root.glob("triton/*")]:
        shutil.rmtree(kernel)
    inductor.runtime.cpp_build.load_kernel.cache_clear()
    inductor.runtime.triton_launch.load_triton_kernel.cache_clear()
    warm = compile_aten(_fn, [x, y])
    assert warm.cache_hit
    assert_same(warm(x, y), _fn(x, y))
