"""Inductor's on-disk cache when writing it fails: a full disk, an unusable TMPDIR, an
interrupted C++ build, the cache folder deleted during a build. Each case compiles a fresh function into a fresh cache folder and must
give eager's results at the first call, on new values (a cache hit) and at a new size, with
at most one warning; no staging folder may be left behind.

Damage to entries already on disk is tests/test_disk_cache_faults.py.
"""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import warnings

import pytest
import torch

import compiler
import inductor
from inductor.runtime import cpp_build


def workload(x, y):
    return torch.sigmoid(x * y + 1).sum(-1) + (x @ y.T).relu().mean(), torch.exp(y) - x


def one_kernel(x, y):
    return (torch.sigmoid(x * y) + 1,)


def _compile_and_compare(fn=workload) -> list[str]:
    """Compile `fn` afresh, compare with eager at three calls; the cache warnings."""
    compiled = compiler.compile(fn, backend="inductor")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in (5, 5, 9):
            x, y = torch.randn(n, 7), torch.randn(n, 7)
            for actual, expected in zip(compiled(x, y), fn(x, y)):
                torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)
    return [str(w.message) for w in caught if issubclass(w.category, inductor.CacheWarning)]


@pytest.fixture
def cache_folder(tmp_path, monkeypatch) -> pathlib.Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTC_INDUCTOR_CACHE_DIR", str(folder))
    return folder


def _staging_left(folder: pathlib.Path) -> list[pathlib.Path]:
    return list(folder.rglob(".staging-*"))


def kernels_of_its_own(x, y):
    # Kernels no other test builds: none is already known to this process in a deleted folder.
    return torch.cos(x * 3.25 + y).sum(-1), torch.exp(y) * 0.75 - x


def test_the_cache_folder_gone_when_the_next_build_starts(cache_folder, monkeypatch):
    """The folder deleted between a build making sure it exists and asking whether it can be
    written (a build beside the one whose folder was removed: the full suite under load hit
    it): made again, not taken for a read-only cache (os.access says no of a missing folder)."""
    from inductor import cache

    real_cache_dir = cache.cache_dir
    deleted = []

    def deleted_after(*args, **kwargs):
        root = real_cache_dir(*args, **kwargs)
        if not deleted and sys._getframe(1).f_code.co_name == "_writable_root":
            deleted.append(root)
            shutil.rmtree(root)  # made by cache_dir, gone before the build asks about it
        return root

    monkeypatch.setattr(cache, "cache_dir", deleted_after)
    assert _compile_and_compare(kernels_of_its_own) == []
    assert deleted and list(cache_folder.glob("cpp/*/kernel.so"))


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs a folder nobody can write: /proc")
def test_an_unwritable_tmpdir_does_not_stop_the_cpp_compiler(cache_folder, monkeypatch):
    """g++ writes its temporary files under TMPDIR; it failed ('Cannot create temporary file')
    and every compile raised CppCompileError."""
    monkeypatch.setenv("TMPDIR", "/proc")
    assert _compile_and_compare() == []
    assert list(cache_folder.glob("cpp/*/kernel.so"))


def test_a_full_disk_moves_new_entries_to_a_temporary_folder(cache_folder, monkeypatch):
    """Writing into the cache folder raises ENOSPC: one warning naming the error, the entries
    are written to a temporary folder instead (the compile used to raise the OSError)."""
    real_write_text = pathlib.Path.write_text

    def disk_full(path, *args, **kwargs):
        if path.is_relative_to(cache_folder):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_write_text(path, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", disk_full)
    found = _compile_and_compare()
    assert len(found) == 1 and os.strerror(errno.ENOSPC) in found[0] and str(cache_folder) in found[0], found
    assert _staging_left(cache_folder) == []


def test_the_cpp_compiler_running_out_of_space_is_a_full_disk_not_a_kernel_bug(cache_folder, monkeypatch):
    """g++ itself failing to write (its stderr says 'No space left on device') is a refused
    write like any other: the library is built in the temporary folder instead."""
    real_run = subprocess.run

    def g_plus_plus_out_of_space(command, *args, cwd=None, **kwargs):
        if cwd is not None and pathlib.Path(cwd).is_relative_to(cache_folder):
            message = f"/usr/bin/ld: final link failed: {os.strerror(errno.ENOSPC)}\n"
            return subprocess.CompletedProcess(command, 1, "", message)
        return real_run(command, *args, cwd=cwd, **kwargs)

    monkeypatch.setattr(cpp_build.subprocess, "run", g_plus_plus_out_of_space)
    found = _compile_and_compare()
    assert len(found) == 1 and os.strerror(errno.ENOSPC) in found[0], found
    assert _staging_left(cache_folder) == []


def test_a_file_size_limit_stopping_the_linker_is_not_reported_as_a_kernel_bug(cache_folder, monkeypatch):
    """`ulimit -f` (RLIMIT_FSIZE) below a library's size: the linker dies of SIGXFSZ. The
    limit holds for every folder, so no other one helps; the error says so (it said 'g++ failed
    on generated kernel ... This is an inductor bug')."""
    real_run = subprocess.run

    def linker_over_the_limit(command, *args, cwd=None, **kwargs):
        if "kernel.cpp" in command:
            message = "collect2: fatal error: ld terminated with signal 25 [File size limit exceeded]\n"
            return subprocess.CompletedProcess(command, 1, "", message)
        return real_run(command, *args, cwd=cwd, **kwargs)

    monkeypatch.setattr(cpp_build.subprocess, "run", linker_over_the_limit)
    with pytest.raises(OSError, match="file size limit") as raised:
        _compile_and_compare(kernels_of_its_own)
    assert raised.value.errno == errno.EFBIG and not isinstance(raised.value, inductor.CppCompileError)
    assert _staging_left(cache_folder) == []


def test_an_interrupted_cpp_build_leaves_nothing_behind(cache_folder, monkeypatch):
    """Ctrl-C while g++ runs: the KeyboardInterrupt reaches the caller, the half-built entry's
    staging folder is removed, and the next call compiles and runs correctly."""
    real_run = subprocess.run
    interrupted = []

    def interrupted_once(command, *args, **kwargs):
        if "kernel.cpp" in command and not interrupted:
            interrupted.append(command)
            raise KeyboardInterrupt
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(cpp_build.subprocess, "run", interrupted_once)
    compiled = compiler.compile(workload, backend="inductor")
    with pytest.raises(KeyboardInterrupt):
        compiled(torch.randn(5, 7), torch.randn(5, 7))
    assert interrupted and _staging_left(cache_folder) == []
    assert _compile_and_compare() == []


def test_the_cache_folder_deleted_while_gxx_runs(cache_folder, monkeypatch):
    """`rm -rf` of the cache folder while a kernel builds (a user clearing the cache while a
    job runs): g++ fails for want of its folder, and the build starts again in a new staging
    folder instead of failing the compile as a kernel bug."""
    real_run = subprocess.run
    deleted = []

    def deleted_under_gxx(command, *args, cwd=None, **kwargs):
        if "kernel.cpp" in command and not deleted:
            deleted.append(command)
            shutil.rmtree(cwd)  # this build's folder first: other builds run beside it
            shutil.rmtree(cache_folder, ignore_errors=True)
            return subprocess.CompletedProcess(command, 1, "", f"Cannot create temporary file in {cwd}/: No such file")
        return real_run(command, *args, cwd=cwd, **kwargs)

    monkeypatch.setattr(cpp_build.subprocess, "run", deleted_under_gxx)
    assert _compile_and_compare() == []
    assert deleted and _staging_left(cache_folder) == []


def test_the_cache_folder_deleted_while_a_staging_folder_is_made(cache_folder, monkeypatch):
    """The folder vanishing between making the kind's folder and the staging folder in it:
    made again, not taken for an unwritable cache (all later entries went to a temporary
    folder, with a warning)."""
    real_mkdtemp = tempfile.mkdtemp
    deleted = []

    def deleted_first(*args, dir=None, **kwargs):
        if dir is not None and pathlib.Path(dir).is_relative_to(cache_folder) and not deleted:
            deleted.append(dir)
            shutil.rmtree(cache_folder)
        return real_mkdtemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", deleted_first)
    assert _compile_and_compare(one_kernel) == []  # one build: no other thread in the deleted folder
    assert deleted and list(cache_folder.glob("cpp/*/kernel.so"))


def test_no_home_folder_puts_the_cache_in_the_temporary_folder(monkeypatch, tmp_path):
    """HOME unset and the user missing from the password database (a container run as an
    arbitrary uid): the default cache folder could not be named, and every compile raised
    RuntimeError('Could not determine home directory.')."""
    import pwd

    from inductor import cache

    def unknown_user(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    for variable in ("PTC_INDUCTOR_CACHE_DIR", "HOME", "USER", "LOGNAME", "LNAME", "USERNAME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown_user)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cache._default_dir.cache_clear()  # decided once per process
    try:
        assert _compile_and_compare(kernels_of_its_own) == []
        assert list(tmp_path.glob("ptc_inductor_*/cpp/*/kernel.so"))
    finally:
        cache._default_dir.cache_clear()
