"""The match statement as CPython runs it: a mapping pattern looks each key up with one
`subject.get(key, <missing>)` call (never `in` and never `[]`), and a literal True/False
pattern (an identity test) matches a bool computed from a size by its value."""

from __future__ import annotations

import collections.abc

import pytest
import torch

from helpers import compile_eager, run_and_compare


class LoggingMap(collections.abc.Mapping):
    def __init__(self, data):
        self.data = dict(data)
        self.asked = []

    def __getitem__(self, key):
        self.asked.append(("getitem", key))
        return self.data[key]

    def get(self, key, default=None):
        self.asked.append(("get", key))
        return self.data.get(key, default)

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)

    def __contains__(self, key):
        self.asked.append(("contains", key))
        return key in self.data


def mapping_lookups(x):
    m = LoggingMap({"a": x, "b": x.shape[0]})
    match m:
        case {"a": t, "missing": _}:
            r = t
        case {"a": t, "b": k}:
            r = t * k
    return r, m.asked


def mapping_value_none(x):
    # A key present with the value None matches (only the missing-key sentinel fails).
    match {"a": None, "b": x}:
        case {"a": None, "b": t}:
            return t + 1
    return x


def bool_literal_patterns(x):
    out = []
    for v in (x.shape[0] > 5, x.shape[0] < 5, x.shape[0] == 4):
        match v:
            case True:
                out.append("T")
            case False:
                out.append("F")
            case 1:
                out.append("1")
            case _:
                out.append("?")
    return x, out


def bool_identity(x):
    b = x.shape[0] > 5
    return x, b is True, b is False, b is not True, b is 1  # noqa: F632


@pytest.mark.parametrize("fn", [mapping_lookups, mapping_value_none, bool_literal_patterns, bool_identity])
def test_match_statement_like_cpython(fn):
    # Before: mapping_lookups asked [getitem a, get a, getitem b, get b] (eager: [get a, get a,
    # get b], after the failed first case); at size 7 a size comparison matched `case 1` (out
    # '1' where eager has 'T') and `b is True` said False.
    compiled = compile_eager(fn)
    for size in (4, 4, 7, 3):
        run_and_compare(compiled, fn, (torch.randn(size),))
