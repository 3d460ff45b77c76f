"""save_cache_artifacts / load_cache_artifacts: a warm start from another cache folder, and
config.cache_dir choosing the folder."""

from __future__ import annotations

import torch

import compiler
from inductor import metrics


def fn(x, y):
    return torch.tanh(x * y) + y.exp()


def test_config_cache_dir_is_where_inductor_writes(tmp_path):
    with compiler.config.patch(cache_dir=tmp_path):
        assert compiler.config.cache_dir == str(tmp_path.resolve())
        x, y = torch.randn(8, 3), torch.randn(8, 3)
        torch.testing.assert_close(compiler.compile(fn)(x, y), fn(x, y))
    assert list((tmp_path / "graphs").glob("*/wrapper.py"))


def test_artifacts_saved_in_one_cache_warm_start_another(tmp_path):
    x, y = torch.randn(6, 5), torch.randn(6, 5)
    with compiler.config.patch(cache_dir=tmp_path / "first"):
        compiler.compile(fn)(x, y)
        data, saved = compiler.save_cache_artifacts()
    assert isinstance(data, bytes) and any(name.startswith("graphs/") for name in saved.files)

    compiler.reset()
    with compiler.config.patch(cache_dir=tmp_path / "second"):
        loaded = compiler.load_cache_artifacts(data)
        assert sorted(loaded.files) == sorted(saved.files)
        before = metrics.snapshot()
        torch.testing.assert_close(compiler.compile(fn)(x, y), fn(x, y))
        after = metrics.snapshot()
    assert after["graph_cache_hits"] > before["graph_cache_hits"]
    assert after["graphs_compiled"] == before["graphs_compiled"]
    # The loaded wrappers name kernels in the second folder, not the first.
    for wrapper in (tmp_path / "second" / "graphs").glob("*/wrapper.py"):
        assert str(tmp_path / "first") not in wrapper.read_text()


def test_loading_twice_keeps_what_is_there(tmp_path):
    with compiler.config.patch(cache_dir=tmp_path / "one"):
        compiler.compile(fn)(torch.randn(2, 2), torch.randn(2, 2))
        data, saved = compiler.save_cache_artifacts()
    with compiler.config.patch(cache_dir=tmp_path / "two"):
        compiler.load_cache_artifacts(data)
        again = compiler.load_cache_artifacts(data)
    assert again.files == [] and sorted(again.skipped) == sorted(saved.files)


def test_empty_cache_saves_nothing(tmp_path):
    with compiler.config.patch(cache_dir=tmp_path):
        assert compiler.save_cache_artifacts() is None
