"""The inductor disk cache (PTC_INDUCTOR_CACHE_DIR) survives what happens to folders on disk.

Each fault is injected into a copy of a populated cache folder; then two fresh processes
(tests/cache_processes.py) compile and run the same function there, compared with eager.
The first must repair the cache (one warning naming the damaged entry, never a crash nor a
wrong result), the second must find it whole (no warning, the graph served from the cache).
The populated folder is built elsewhere and moved into place, so every case also checks that
entries do not depend on where the folder was when they were written.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pathlib
import random
import re
import shutil
import signal

import pytest
import torch
import torch.fx

import inductor
from inductor import cache
from cache_processes import ProcessServer, make_writable
from inductor.runtime import cpp_build

aten = torch.ops.aten


@pytest.fixture(scope="module")
def server():
    with ProcessServer() as server:
        yield server


@pytest.fixture(scope="module")
def populated(server, tmp_path_factory):
    """A cache folder holding the workload's entries, written at another path and moved here."""
    base = tmp_path_factory.mktemp("populated")
    result = server.run(base / "written_here")
    assert result.exit_code == 0 and result.matches_eager and result.graphs_compiled >= 1, result
    shutil.move(base / "written_here", base / "moved_here")
    return base / "moved_here"


@pytest.fixture
def cache_copy(populated, tmp_path):
    folder = tmp_path / "cache"
    shutil.copytree(populated, folder)
    yield folder
    make_writable(folder)


def _one(folder: pathlib.Path, pattern: str) -> pathlib.Path:
    """One file of the cache matching `pattern` (sorted: the same one every time)."""
    found = sorted(folder.glob(pattern))
    assert found, f"no {pattern} in {folder}"
    return found[0]


def _truncate(path: pathlib.Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _randomize(path: pathlib.Path) -> None:
    path.write_bytes(random.Random(0).randbytes(path.stat().st_size))


def _edit_numbers(path: pathlib.Path) -> None:
    """Still valid Python, but computing something else: every size literal in `call` + 1."""
    text = path.read_text()
    head, body = text.split("def call", 1)
    path.write_text(head + "def call" + re.sub(r"\b(\d+)\b", lambda m: str(int(m.group(1)) + 1), body))


def _foreign_library(path: pathlib.Path) -> None:
    """Intact by its manifest, but no library this machine's loader takes (one built where
    other shared libraries were found, in a cache folder shared between machines)."""
    path.write_bytes(b"\x7fELF not a library for this machine")
    manifest = path.parent / "manifest.json"
    recorded = json.loads(manifest.read_text())
    recorded[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(recorded))


def _entry_replaced_by_a_file(path: pathlib.Path) -> None:
    """A file where the entry's folder belongs: no writer could put the entry in place."""
    shutil.rmtree(path.parent)
    path.parent.write_text("not an entry")


FAULTS = {
    "wrapper truncated": ("graphs/*/wrapper.py", _truncate),
    "wrapper random bytes": ("graphs/*/wrapper.py", _randomize),
    "wrapper numbers edited": ("graphs/*/wrapper.py", _edit_numbers),
    "library random bytes": ("cpp/*/kernel.so", _randomize),
    "library truncated": ("cpp/*/kernel.so", _truncate),  # mapping it raised SIGBUS
    "library refused by the loader": ("cpp/*/kernel.so", _foreign_library),  # failed every later process
    "manifest removed": ("graphs/*/manifest.json", pathlib.Path.unlink),
    "kernel list truncated": ("graphs/*/kernels.json", _truncate),
    # Each failed every later process (NotADirectoryError committing the rebuilt entry).
    "library folder replaced by a file": ("cpp/*/kernel.so", _entry_replaced_by_a_file),
    "graph folder replaced by a file": ("graphs/*/wrapper.py", _entry_replaced_by_a_file),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_damaged_entry_is_reported_once_and_rebuilt(fault, server, cache_copy):
    pattern, damage = FAULTS[fault]
    damaged = _one(cache_copy, pattern)
    damage(damaged)

    repairing = server.run(cache_copy)
    assert repairing.exit_code == 0, repairing
    assert repairing.matches_eager, repairing
    assert len(repairing.cache_warnings) == 1, repairing
    assert damaged.parent.name in repairing.cache_warnings[0] and "damaged" in repairing.cache_warnings[0]

    after = server.run(cache_copy)
    assert after.exit_code == 0 and after.matches_eager, after
    assert after.cache_warnings == [], after
    assert after.graphs_compiled == 0 and after.cache_hits >= 1, after


def test_a_moved_cache_folder_is_used_as_is(server, cache_copy):
    result = server.run(cache_copy)
    assert result.exit_code == 0 and result.matches_eager, result
    assert result.cache_warnings == [] and result.graphs_compiled == 0 and result.cache_hits >= 1, result


def test_a_read_only_cache_folder_serves_its_entries(server, cache_copy):
    if not server.make_read_only(cache_copy):
        pytest.skip("cannot make a folder read-only here")
    result = server.run(cache_copy)
    assert result.exit_code == 0 and result.matches_eager, result
    assert result.cache_warnings == [] and result.graphs_compiled == 0, result


def test_an_empty_read_only_cache_folder_compiles_with_one_warning(server, tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    if not server.make_read_only(folder):
        pytest.skip("cannot make a folder read-only here")
    try:
        for _ in range(2):
            result = server.run(folder)
            assert result.exit_code == 0 and result.matches_eager, result
            assert len(result.cache_warnings) == 1 and "read-only" in result.cache_warnings[0], result
        assert list(folder.iterdir()) == []
    finally:
        make_writable(folder)


def test_a_damaged_entry_in_a_read_only_folder_is_skipped(server, cache_copy):
    _randomize(_one(cache_copy, "cpp/*/kernel.so"))
    if not server.make_read_only(cache_copy):
        pytest.skip("cannot make a folder read-only here")
    result = server.run(cache_copy)
    assert result.exit_code == 0 and result.matches_eager, result
    assert any("damaged" in w for w in result.cache_warnings), result


def test_three_processes_share_one_cold_cache_folder(server, tmp_path):
    results = server.run_many(tmp_path / "shared", 3)
    assert all(r.exit_code == 0 and r.matches_eager and not r.error for r in results), results
    assert all(r.cache_warnings == [] for r in results), results
    assert not list((tmp_path / "shared").rglob(".staging-*")), "a writer left its staging folder behind"
    after = server.run(tmp_path / "shared")
    assert after.exit_code == 0 and after.matches_eager and after.graphs_compiled == 0, after


def test_a_process_killed_at_a_write_leaves_a_cache_the_next_one_uses(server, tmp_path):
    """SIGKILL (the OOM killer, a scheduler's timeout) at write sites spread over a cold run,
    between any two of which a writer can die: the next process finds no damaged entry and
    matches eager. Every site, for longer: benchmarks/reliability_soak.py --only kills."""
    total = server.run(tmp_path / "counted").writes
    assert total > 20, total
    for site in sorted({total // 3, 2 * total // 3, total - 1}):
        folder = tmp_path / f"killed_at_{site}"
        killed = server.run(folder, kill_at=site)
        assert killed.exit_code == -signal.SIGKILL, (site, killed)
        after = server.run(folder)
        assert after.exit_code == 0 and after.matches_eager and after.cache_warnings == [], (site, after)


def test_kernels_built_for_another_cpu_are_not_reused(monkeypatch, tmp_path):
    """-march=native code from one CPU may not run on another: the CPU's flags are in the keys."""
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path))
    gm = torch.fx.symbolic_trace(lambda x: (aten.sigmoid.default(aten.mul.Tensor(x, x)),))
    x = torch.randn(9, 13)
    first = inductor.compile_aten_graph(gm, [x])
    torch.testing.assert_close(first(x)[0], torch.sigmoid(x * x))

    monkeypatch.setattr(cpp_build, "cpu_target", lambda: "model name : another CPU\nflags : sse2")
    cpp_build.toolchain_key.cache_clear()
    try:
        other = inductor.compile_aten_graph(gm, [x])
        assert not other.cache_hit
        assert re.findall(r"load_kernel\('(\w+)'", other.source) != re.findall(r"load_kernel\('(\w+)'", first.source)
        torch.testing.assert_close(other(x)[0], torch.sigmoid(x * x))
    finally:
        cpp_build.toolchain_key.cache_clear()


@pytest.mark.parametrize("package", ["fake_tensor", "aot_autograd"])
def test_graphs_generated_with_another_version_of_a_dependency_are_not_reused(package, monkeypatch, tmp_path):
    """Inductor generates a graph's code with its dependencies' code too (fake_tensor prints
    every size expression, aot_autograd's graph runner and decompositions): an entry written
    before one of them changed (that package upgraded alone, or edited in a checkout) served
    the code the old version generated, since the key held inductor's own source only."""
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    def graph():
        return torch.fx.symbolic_trace(lambda x: (aten.sigmoid.default(aten.mul.Tensor(aten.add.Tensor(x, 0.5), x)),))

    x = torch.randn(9, 13)
    inductor.compile_aten_graph(graph(), [x])
    assert inductor.compile_aten_graph(graph(), [x]).cache_hit

    installed = pathlib.Path(importlib.import_module(package).__file__).parent
    other_version = tmp_path / package
    shutil.copytree(installed, other_version, ignore=shutil.ignore_patterns("__pycache__"))
    with open(other_version / "__init__.py", "a") as init:
        init.write("\n# another version\n")
    monkeypatch.setattr(importlib.import_module(package), "__file__", str(other_version / "__init__.py"))
    cache.inductor_source_hash.cache_clear()  # hashed once per process
    try:
        other = inductor.compile_aten_graph(graph(), [x])
        assert not other.cache_hit
        torch.testing.assert_close(other(x)[0], torch.sigmoid((x + 0.5) * x))
    finally:
        cache.inductor_source_hash.cache_clear()


def test_what_a_killed_writer_left_behind_is_swept(server, tmp_path):
    folder = tmp_path / "cache"
    abandoned = folder / "cpp" / ".staging-abandoned"
    abandoned.mkdir(parents=True)
    (abandoned / "kernel.cpp").write_text("// a writer was killed here")
    fresh = folder / "cpp" / ".staging-in-progress"  # another writer, still at work
    fresh.mkdir()
    two_hours_ago = abandoned.stat().st_mtime - 7200
    os.utime(abandoned, (two_hours_ago, two_hours_ago))
    result = server.run(folder)
    assert result.exit_code == 0 and result.matches_eager, result
    assert not abandoned.exists() and fresh.exists()
