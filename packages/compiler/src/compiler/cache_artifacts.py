"""Warm starts elsewhere: `save_cache_artifacts()` packs inductor's on-disk cache into bytes,
`load_cache_artifacts(data)` unpacks them into this process's cache (torch.compiler's pair).

The cache holds compiled graphs' wrappers and their C++/Triton kernels, keyed by content
hashes, so a process that loads them skips code generation and the C++ compiler for graphs
it compiles again. Kept thin on purpose: the bytes are a zip of every file in the cache folder
(torch's hold only what this process compiled; `inductor.cache` documents the layout, which
may change under this module); wrappers name their kernels by absolute path, so the
paths of the saving cache folder are rewritten to this one's. The kernels are built for the
saving machine's CPU (`-march=native`): load them on machines of the same kind.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import zipfile
from dataclasses import dataclass, field

_MANIFEST = "ptc-cache-artifacts.json"
# Files whose text may name the cache folder (wrappers, kernel sources, autotuning records).
_TEXT_SUFFIXES = (".py", ".json", ".cpp")


@dataclass
class CacheInfo:
    """What a save packed or a load unpacked: cache-relative paths."""

    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # loaded files already present here


def _cache_dir() -> pathlib.Path:
    from inductor import cache  # the cache is inductor's; `import compiler` does not import inductor

    return cache.cache_dir()


def _entries(root: pathlib.Path) -> list[pathlib.Path]:
    # Temporary files of writes in flight (`.name.pid.tmp`) and probes are not entries.
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def save_cache_artifacts() -> tuple[bytes, CacheInfo] | None:
    """The cache's entries as bytes (and what they hold), or None when the cache is empty."""
    root = _cache_dir()
    files = _entries(root)
    if not files:
        return None
    info = CacheInfo(files=[p.relative_to(root).as_posix() for p in files])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(_MANIFEST, json.dumps({"cache_dir": str(root), "files": info.files}))
        for path, name in zip(files, info.files):
            archive.write(path, name)
    return buffer.getvalue(), info


def load_cache_artifacts(serialized_artifacts: bytes) -> CacheInfo | None:
    """Add the entries of `save_cache_artifacts()` bytes to this process's cache; entries
    already present are kept. Returns what was loaded, or None when there was nothing."""
    root = _cache_dir()
    with zipfile.ZipFile(io.BytesIO(serialized_artifacts)) as archive:
        manifest = json.loads(archive.read(_MANIFEST))
        saved_root = manifest["cache_dir"]
        info = CacheInfo()
        for name in manifest["files"]:
            target = root / name
            if root.resolve() not in target.resolve().parents:
                raise ValueError(f"load_cache_artifacts: {name!r} is outside the cache folder")
            if target.exists():
                info.skipped.append(name)
                continue
            data = archive.read(name)
            if name.endswith(_TEXT_SUFFIXES) and saved_root != str(root):
                data = data.decode().replace(saved_root, str(root)).encode()
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            temporary.write_bytes(data)
            os.chmod(temporary, archive.getinfo(name).external_attr >> 16 or 0o644)
            os.replace(temporary, target)  # concurrent compiles never see half a file
            info.files.append(name)
    return info if info.files or info.skipped else None
