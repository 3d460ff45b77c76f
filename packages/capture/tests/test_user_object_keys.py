"""Objects of user classes as dict keys and set members: keyed by identity only where their
class keeps object's hash. A class without a hash (`__eq__` alone, a plain dataclass) raises
the program's TypeError; one that hashes by value in Python is refused (a graph break), never
keyed by identity (two equal keys must be one entry)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import capture
from helpers import check_across_sizes, compile_eager, run_and_compare


class Key:
    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, Key) and self.k == other.k

    def __hash__(self):
        return hash(("Key", self.k))


class EqOnly:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return self.n == other.n


@dataclasses.dataclass
class Plain:
    n: int


@dataclasses.dataclass(frozen=True)
class Frozen:
    n: int


class ByIdentity:
    pass


def sizes(n):
    return (torch.randn(n),)


@pytest.mark.parametrize("make", [Key, Frozen], ids=["hash_method", "frozen_dataclass"])
def test_objects_hashed_by_value_are_one_key_when_equal(make):
    def fn(x):
        s = {make(x.shape[0]), make(x.shape[0]), make(0)}
        d = {make(1): x}
        d[make(1)] = x * 2
        return x + len(s), len(d), make(0) in s

    compiled = compile_eager(fn)
    for n in (4, 4, 7):
        run_and_compare(compiled, fn, sizes(n))
    with pytest.raises(capture.Unsupported, match="hashes by value"):
        compile_eager(fn, fullgraph=True)(torch.randn(4))


@pytest.mark.parametrize("make", [EqOnly, Plain], ids=["eq_only", "dataclass"])
def test_unhashable_objects_raise_type_error(make):
    def fn(x):
        d = {make(1): x}
        return d

    with pytest.raises(TypeError, match="unhashable type"):
        compile_eager(fn)(torch.randn(3))


def test_objects_with_object_hash_stay_keys_by_identity():
    def fn(x):
        a, b = ByIdentity(), ByIdentity()
        d = {a: x, b: x * 2}
        return d[a] + d[b], len({a, b, a})

    check_across_sizes(fn, sizes)
