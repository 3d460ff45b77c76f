"""Deleting an attribute an object passed in lacks, or reading or deleting one the compiled code
deleted, raises CPython's AttributeError message ("'C' object has no attribute 'name'")."""

from __future__ import annotations

import torch

from helpers import compile_eager


class Holder:
    def __init__(self):
        self.a = 1


def test_missing_and_deleted_attributes_read_as_cpythons():
    def fn(x, o):
        messages = []
        try:
            del o.missing
        except AttributeError as e:
            messages.append(str(e))
        del o.a
        for attempt in (lambda: o.a, lambda: delattr(o, "a")):
            try:
                attempt()
            except AttributeError as e:
                messages.append(str(e))
        return x, messages

    compiled = compile_eager(fn)
    for n in (2, 2, 3):
        expected_holder, actual_holder = Holder(), Holder()
        assert compiled(torch.ones(n), actual_holder)[1] == fn(torch.ones(n), expected_holder)[1]
        assert vars(actual_holder) == vars(expected_holder)
