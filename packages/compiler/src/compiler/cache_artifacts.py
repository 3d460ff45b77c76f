"""Warm starts elsewhere: `save_cache_artifacts()` packs inductor's on-disk cache into bytes,
`load_cache_artifacts(data)` unpacks them into this process's cache (torch.compiler's pair).

The cache holds compiled graphs' wrappers and their C++/Triton kernels as entries keyed by
content hashes (`inductor.cache` documents the layout), so a process that loads them skips code
generation and the C++ compiler for graphs it compiles again. The bytes are a zip of the intact
entries' folders; entries name each other by key, so nothing in them depends on where either
cache folder is. Each loaded file is checked against its entry's manifest before the entry is
put in place, as a whole. The C++ kernels are built for the saving machine's CPU, which is part
of their keys: another kind of CPU looks them up under other keys and compiles its own.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import pathlib
import zipfile
from dataclasses import dataclass, field

_KINDS = ("cpp", "triton", "graphs")
_MANIFEST = "manifest.json"


@dataclass
class CacheInfo:
    """What a save packed or a load unpacked: cache-relative paths of files."""

    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # loaded files whose entry is already here


def _cache():
    from inductor import cache  # the cache is inductor's; `import compiler` does not import inductor

    return cache


def _intact_entries(cache) -> list[tuple[str, str, pathlib.Path]]:
    root = cache.cache_dir()
    found = []
    for kind in _KINDS:
        for folder in sorted((root / kind).glob("*")) if (root / kind).is_dir() else []:
            # Staging folders and removed entries start with "."; damaged entries are left out.
            if not folder.name.startswith(".") and cache.entry(kind, folder.name) is not None:
                found.append((kind, folder.name, folder))
    return found


def save_cache_artifacts() -> tuple[bytes, CacheInfo] | None:
    """The cache's intact entries as bytes (and what they hold), or None when there are none."""
    cache = _cache()
    entries = _intact_entries(cache)
    if not entries:
        return None
    info = CacheInfo()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for kind, key, folder in entries:
            for path in sorted(p for p in folder.iterdir() if p.is_file()):
                name = f"{kind}/{key}/{path.name}"
                archive.write(path, name)
                if path.name != _MANIFEST:
                    info.files.append(name)
    return buffer.getvalue(), info


def load_cache_artifacts(serialized_artifacts: bytes) -> CacheInfo | None:
    """Add the entries of `save_cache_artifacts()` bytes to this process's cache; entries
    already present are kept. Returns what was loaded, or None when there was nothing."""
    cache = _cache()
    info = CacheInfo()
    with zipfile.ZipFile(io.BytesIO(serialized_artifacts)) as archive:
        for (kind, key), names in _grouped(archive.namelist()).items():
            files = [f"{kind}/{key}/{name}" for name in names if name != _MANIFEST]
            if cache.entry(kind, key) is not None:
                info.skipped += files
                continue
            manifest = json.loads(archive.read(f"{kind}/{key}/{_MANIFEST}"))
            cache.store(kind, key, functools.partial(_unpack, archive, f"{kind}/{key}", names, manifest))
            info.files += files
    return info if info.files or info.skipped else None


def _unpack(archive: zipfile.ZipFile, entry: str, names: list[str], manifest: dict, folder: pathlib.Path) -> None:
    """Write the files of the archive's `entry` into `folder`, each checked against `manifest`."""
    for name in names:
        if name == _MANIFEST:
            continue
        data = archive.read(f"{entry}/{name}")
        if hashlib.sha256(data).hexdigest() != manifest.get(name):
            raise ValueError(f"load_cache_artifacts: {entry}/{name} does not match its manifest")
        (folder / name).write_bytes(data)
        if name.endswith(".so"):
            (folder / name).chmod(0o755)


def _grouped(names: list[str]) -> dict[tuple[str, str], list[str]]:
    """Archive members by entry; a name that is not `kind/key/file` of a known kind is refused."""
    entries: dict[tuple[str, str], list[str]] = {}
    for name in names:
        parts = name.split("/")
        if len(parts) != 3 or parts[0] not in _KINDS or not all(parts) or ".." in parts or parts[1].startswith("."):
            raise ValueError(f"load_cache_artifacts: {name!r} is not an entry of inductor's cache")
        entries.setdefault((parts[0], parts[1]), []).append(parts[2])
    for (kind, key), files in entries.items():
        if _MANIFEST not in files:
            raise ValueError(f"load_cache_artifacts: the entry {kind}/{key} has no manifest")
    return entries
