"""The hashes dicts and sets file objects under, where those can change between calls.

A dict finds an entry only under the hash its key had when it was stored. An object whose hash
changes (its class given another `__hash__`, a hash over fields that changed, `__class__`
reassigned) is still iterated but no longer found, and stored again it is a second entry. The
trace looks keys up in a dict of its own, under their hashes at capture: that answers as Python
does only while the real dict's stored hashes are those hashes, and the objects looked up still
hash so. Keys of builtin immutable types hash by value for life and need no guard.
"""

from __future__ import annotations

from guards import ConstantMatch, DictLookupsHold, HashSource

from ..errors import Unsupported

_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: builtin types, whose __hash__ cannot change


def hash_is_fixed(key: object) -> bool:
    """Whether `key` hashes the same for life: an instance of a builtin immutable type (a str,
    an int, a function, a dtype), or a tuple or frozenset of such."""
    kind = type(key)
    if kind is tuple or kind is frozenset:
        return all(map(hash_is_fixed, key))
    return bool(kind.__flags__ & _IMMUTABLE_TYPE)


def guard_hash(session, obj: object, source) -> None:
    """An object from the frame used as a key or member: the entry holds while it hashes as now.
    Once per object: its hash is user code, and one check of it covers every path reaching it
    (the paths are guarded to reach the one object)."""
    if source is not None and not hash_is_fixed(obj) and id(obj) not in session.hashes_guarded:
        session.hashes_guarded.add(id(obj))
        session.add_guard(ConstantMatch(HashSource(source), hash(obj)))


def guard_stored_hashes(session, mapping: dict, source) -> None:
    """A dict from the frame, whose entries the trace will look up under their keys' hashes now:
    refused where some key no longer hashes as it was stored (a lookup by it finds another entry
    or none, which the trace cannot tell), and guarded where some key's hash can change."""
    if all(hash_is_fixed(key) for key in mapping):
        return
    hashes = tuple(hash(key) for key in mapping)
    stored_under_hash_now = all(dict.get(mapping, key, guard_stored_hashes) is value for key, value in dict.items(mapping))
    if not stored_under_hash_now or len({id(key) for key in mapping}) != len(mapping):
        raise Unsupported(
            f"a {type(mapping).__name__} with a key whose hash changed since it was stored "
            "(Python iterates it but no longer finds it by lookup, which capture does not model)"
        )
    if source is not None:
        session.add_guard(DictLookupsHold(source, hashes))
        session.hashes_guarded.update(id(key) for key in mapping)
