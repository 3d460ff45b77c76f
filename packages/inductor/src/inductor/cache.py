"""Where compiled artifacts live: `PTC_INDUCTOR_CACHE_DIR`, else `~/.cache/ptc_inductor`
(or a per-user folder under the system temp dir when the home is not writable).

    cpp/<hash>/kernel.cpp, kernel.so     one C++ kernel, named by the hash of its source + flags
    graphs/<hash>.py                     one compiled graph's wrapper module, named by the hash
                                         of the graph, its input metadata and inductor's sources
"""

from __future__ import annotations

import functools
import getpass
import hashlib
import os
import pathlib
import tempfile


@functools.lru_cache(maxsize=None)
def _default_dir() -> pathlib.Path:
    home = pathlib.Path.home() / ".cache" / "ptc_inductor"
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".write_probe"
        probe.write_text("")
        probe.unlink()
        return home
    except OSError:
        return pathlib.Path(tempfile.gettempdir()) / f"ptc_inductor_{getpass.getuser()}"


def cache_dir() -> pathlib.Path:
    configured = os.environ.get("PTC_INDUCTOR_CACHE_DIR")
    path = pathlib.Path(configured) if configured else _default_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


def digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


@functools.lru_cache(maxsize=None)
def inductor_source_hash() -> str:
    """Changes whenever inductor's own code does, so stale graph entries are never reused."""
    root = pathlib.Path(__file__).parent
    files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".h"))
    return digest(*[f"{p.relative_to(root)}:{p.read_text()}" for p in files])


def write_atomic(path: pathlib.Path, text: str) -> None:
    """Write via a temp file and rename: concurrent compiles never see a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
