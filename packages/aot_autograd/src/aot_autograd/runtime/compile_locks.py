"""Locks held while a graph compiles on first need (a plan at a new grad mode, a backward),
made free again in a process forked meanwhile: the thread holding one at the fork does not
exist in the child, whose first call needing that compile would otherwise wait forever. The
compile it was doing never finished there, so the child does it again."""

from __future__ import annotations

import os
import threading
import weakref

_locks: weakref.WeakSet = weakref.WeakSet()


def compile_lock() -> threading.Lock:
    lock = threading.Lock()
    _locks.add(lock)
    return lock


def _free_in_forked_child() -> None:
    for lock in list(_locks):
        lock._at_fork_reinit()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_free_in_forked_child)
