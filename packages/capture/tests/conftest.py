from __future__ import annotations

import gc

import pytest


@pytest.fixture(scope="module")
def frozen_heap():
    """Full collections walk only what a module's tests make: the tests that watch objects die
    collect after every call, and a full collection over torch's and sympy's objects takes up
    to a second on a busy machine. What is frozen is older than every test object."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()
