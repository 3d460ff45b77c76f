"""The on-disk cache of compiled artifacts: `PTC_INDUCTOR_CACHE_DIR`, else `~/.cache/ptc_inductor`
(or a per-user folder under the system temp dir when the home is not writable).

Every entry is a folder named by its key, holding its files and a `manifest.json` with each
file's sha256:

    cpp/<key>/kernel.cpp, kernel.so        one C++ kernel (key: source, flags, compiler, CPU)
    triton/<key>/<function>.py             one Triton kernel module (key: its source); the block
                                           sizes chosen for it go beside, in <function>.autotune.json
    graphs/<key>/wrapper.py                one compiled graph's wrapper (key: graph, inputs,
                                           options, versions; see compile_fx)
    autotune/matmul.json                   max-autotune's choice per matmul problem (aten or a
                                           template config; runtime/matmul_autotune.py)

What can go wrong, and what happens then:

- Threads and processes writing at once: an entry is written into a fresh staging folder and
  renamed into place, so a reader sees a whole entry or none; the first writer of a key wins.
- A damaged entry (truncated, overwritten, edited, unreadable): its files are hashed before
  anything is used (before a library is mapped, before a wrapper runs); on a mismatch the entry
  is removed, a `CacheWarning` says so once, and the caller compiles again.
- A moved or copied cache folder: entries name each other by key, never by absolute path.
- A read-only cache folder: entries are read from it; new ones go to a temporary folder for
  the rest of the process (one warning); damaged ones there are skipped rather than removed.
  A write refused later (disk full, over quota) moves new entries there the same way.
- An intact library the loader refuses here (runtime/cpp_build.py): removed and built again.
"""

from __future__ import annotations

import atexit
import errno
import functools
import getpass
import hashlib
import json
import logging
import os
import pathlib
import shutil
import tempfile
import threading
import time
import warnings
from typing import Callable

import aot_autograd
import fake_tensor

from .errors import CacheWarning

log = logging.getLogger("compiler.inductor")

MANIFEST = "manifest.json"


@functools.lru_cache(maxsize=None)
def _default_dir() -> pathlib.Path:
    try:
        home = pathlib.Path.home() / ".cache" / "ptc_inductor"
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".write_probe"
        probe.write_text("")
        probe.unlink()
        return home
    # RuntimeError: no HOME and no password entry for this uid (a container's arbitrary user).
    except (OSError, RuntimeError):
        return pathlib.Path(tempfile.gettempdir()) / f"ptc_inductor_{_user()}"


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no password entry (KeyError before Python 3.13)
        return str(os.getuid())


def cache_dir() -> pathlib.Path:
    """The configured cache folder (it may be read-only: see `_writable_root`)."""
    configured = os.environ.get("PTC_INDUCTOR_CACHE_DIR")
    path = pathlib.Path(configured) if configured else _default_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # a read-only parent: entries are read if there, written elsewhere
    return path


def digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


@functools.lru_cache(maxsize=None)
def inductor_source_hash() -> str:
    """Changes whenever the code that generates graph entries does, so stale ones are never
    reused: inductor's own, and that of the packages it generates them with (fake_tensor
    prints every size expression and propagates metadata; aot_autograd runs and decomposes
    graphs), each of which may be upgraded or edited alone."""
    parts = []
    for init in (__file__, fake_tensor.__file__, aot_autograd.__file__):
        root = pathlib.Path(init).parent
        files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".h"))
        parts += [f"{root.name}/{p.relative_to(root)}:{p.read_text()}" for p in files]
    return digest(*parts)


def write_atomic(path: pathlib.Path, text: str) -> None:
    """Write via a uniquely named temp file and rename: concurrent writers (threads of one
    process too) never see a half-written file nor remove each other's temp files."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(pathlib.Path(tmp))
        raise


# --- entries -----------------------------------------------------------------------------------

_lock = threading.Lock()
_fallback: dict[pathlib.Path, pathlib.Path] = {}   # read-only root -> this process's temp folder
_verified: set[pathlib.Path] = set()                # entry folders hashed whole in this process
_reported: set[pathlib.Path] = set()                # damaged entries already warned about
_skipped: set[pathlib.Path] = set()                 # damaged entries a read-only folder keeps
_swept: set[pathlib.Path] = set()                   # folders cleared of abandoned writes
ABANDONED_AFTER_SECONDS = 3600


def _roots() -> list[pathlib.Path]:
    """Where entries are looked for: the cache folder, then this process's stand-in for it."""
    root = cache_dir()
    return [root, _fallback[root]] if root in _fallback else [root]


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _damage(folder: pathlib.Path) -> str | None:
    """Why `folder` is not a whole, intact entry, or None."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        if not isinstance(manifest, dict) or not manifest:
            return "its manifest is empty"
        for name, expected in manifest.items():
            if _sha256(folder / name) != expected:
                return f"{name} does not match its recorded hash"
    except FileNotFoundError as error:
        return f"{pathlib.Path(error.filename).name} is missing"
    except (OSError, ValueError, UnicodeDecodeError) as error:
        return f"it cannot be read ({error})"
    return None


def entry(kind: str, key: str) -> pathlib.Path | None:
    """The folder of the intact entry `kind/key`, or None: missing, or damaged (then removed,
    or skipped in a read-only folder, and reported once)."""
    for root in _roots():
        folder = root / kind / key
        if folder in _skipped:
            continue
        if not folder.is_dir():
            if _occupied(folder):  # a stray file where the entry's folder belongs: no writer could commit
                discard(folder, "it is a file, not an entry folder")
            continue
        if folder in _verified:
            return folder
        reason = _damage(folder)
        if reason is None:
            with _lock:
                _verified.add(folder)
            return folder
        discard(folder, reason)
    return None


def discard(folder: pathlib.Path, reason: str) -> None:
    """Take the entry `folder` out of the cache (skip it, in a read-only folder), warning once
    that it is damaged for `reason`."""
    removed = _remove_entry(folder)
    with _lock:
        _verified.discard(folder)
        if not removed:
            _skipped.add(folder)
        if folder in _reported:
            return
        _reported.add(folder)
    action = "removed it" if removed else "the folder is read-only, so it is skipped"
    message = f"inductor: cache entry {folder} is damaged ({reason}); {action} and compiling again"
    log.warning("%s", message)
    warnings.warn(message, CacheWarning, stacklevel=2)


def _remove_entry(folder: pathlib.Path) -> bool:
    """Take `folder` out of the cache at once (a rename), then delete it."""
    trash = folder.with_name(f".trash-{folder.name}-{os.getpid()}-{threading.get_ident()}")
    try:
        os.rename(folder, trash)
    except FileNotFoundError:
        return True  # another process removed it first
    except OSError:
        return False
    if trash.is_dir() and not trash.is_symlink():
        shutil.rmtree(trash, ignore_errors=True)
    else:
        _remove_quietly(trash)
    return True


def _occupied(path: pathlib.Path) -> bool:
    """Whether something that is not a folder (a file, a dangling link) is at `path`."""
    return path.is_symlink() or path.exists()


def staging(kind: str, *, again: bool = True) -> pathlib.Path:
    """A fresh, private folder in which to build an entry of `kind`, then `commit` it."""
    root = _writable_root()
    try:
        (root / kind).mkdir(parents=True, exist_ok=True)
        _sweep(root / kind)
        return pathlib.Path(tempfile.mkdtemp(prefix=".staging-", dir=root / kind))
    except OSError as error:
        if isinstance(error, FileNotFoundError) and again:
            return staging(kind, again=False)  # the folder was deleted meanwhile: made once more
        if root in _fallback.values():
            raise
        _use_fallback(root, f"it cannot be written: {error}")
        return staging(kind)


def commit(kind: str, key: str, folder: pathlib.Path) -> pathlib.Path:
    """Record the hash of every file in the staging `folder` and move it into place as
    `kind/key`; returns the entry's folder (the one already there if another writer won)."""
    manifest = {p.name: _sha256(p) for p in sorted(folder.iterdir()) if p.is_file()}
    write_atomic(folder / MANIFEST, json.dumps(manifest, indent=1))
    target = folder.parent / key
    for _ in range(2):
        try:
            os.rename(folder, target)
            with _lock:
                _verified.add(target)
            return target
        except OSError:
            if not target.is_dir():
                if not _occupied(target):
                    raise
                discard(target, "it is a file, not an entry folder")
                continue
        # Another thread or process committed this key first: keep theirs if it is intact.
        reason = _damage(target)
        if reason is None:
            shutil.rmtree(folder, ignore_errors=True)
            with _lock:
                _verified.add(target)
            return target
        discard(target, reason)
    shutil.rmtree(folder, ignore_errors=True)
    raise OSError(f"inductor: could not store cache entry {target}")


def store(kind: str, key: str, fill: Callable[[pathlib.Path], None]) -> pathlib.Path:
    """Build the entry `kind/key` by `fill(folder)` in a staging folder and commit it; returns
    its folder. The staging folder never outlives a failure. A write the cache folder refuses
    (disk full, over quota, made read-only meanwhile) sends this process's new entries to a
    temporary folder, with one warning naming the error, and the entry is built there once more.
    A staging folder removed meanwhile (the cache folder deleted while compiling) is made again."""
    for retry in (True, False):
        folder = staging(kind)
        try:
            fill(folder)
            return commit(kind, key, folder)
        except OSError as error:
            shutil.rmtree(folder, ignore_errors=True)
            root = folder.parent.parent
            if retry and error.errno == errno.ENOENT and not folder.exists():
                continue
            if not retry or error.errno not in _WRITE_REFUSED or root in _fallback.values():
                raise
            _use_fallback(root, f"writing {kind}/{key} failed: {error}")
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    raise AssertionError("unreachable")


# Errors of a write the file system refused, rather than of what was written.
_WRITE_REFUSED = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


def publish(kind: str, key: str, files: dict[str, str]) -> pathlib.Path:
    """Store an entry made of text files; returns its folder."""

    def write(folder: pathlib.Path) -> None:
        for name, text in files.items():
            (folder / name).write_text(text)

    return store(kind, key, write)


def _sweep(folder: pathlib.Path) -> None:
    """Once per folder and process: delete what writers killed mid-way left behind (staging
    and trash folders, temp files) once it is older than any write could take."""
    with _lock:
        if folder in _swept:
            return
        _swept.add(folder)
    cutoff = time.time() - ABANDONED_AFTER_SECONDS
    for path in folder.glob(".*"):
        try:
            if path.stat().st_mtime < cutoff:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        except OSError:
            pass


def _writable_root() -> pathlib.Path:
    root = cache_dir()
    if root in _fallback:
        return _fallback[root]
    # A folder missing now (deleted while another build ran) is made again by `staging`; only
    # one that exists and refuses writes is read-only (os.access said so of a missing one too).
    if root.is_dir() and not os.access(root, os.W_OK | os.X_OK):
        _use_fallback(root, "it is read-only")
        return _fallback[root]
    return root


def _use_fallback(root: pathlib.Path, why: str) -> None:
    with _lock:
        if root in _fallback:
            return
        temp = pathlib.Path(tempfile.mkdtemp(prefix="ptc_inductor_"))
        atexit.register(shutil.rmtree, temp, ignore_errors=True)
        _fallback[root] = temp
    message = (
        f"inductor: cannot write to the cache folder {root} ({why}); entries already there are used, new ones "
        f"are kept in {temp} until this process exits. Point PTC_INDUCTOR_CACHE_DIR at a writable folder "
        "to keep them."
    )
    log.warning("%s", message)
    warnings.warn(message, CacheWarning, stacklevel=3)


def _remove_quietly(path: pathlib.Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
