"""isinstance() against classes whose metaclass has its own __instancecheck__: a user's (in
Python) is asked, as CPython asks it after the exact-type shortcut; torch's nn.Parameter check
stays a check of the type, in the graph (Module.__setattr__ makes it for every attribute)."""

from __future__ import annotations

import torch

from helpers import assert_same, compile_eager


class Flagged(type):
    def __instancecheck__(cls, instance):
        return getattr(instance, "flag", False)


class Marked(metaclass=Flagged):
    pass


class Holder:
    def __init__(self, flag):
        self.flag = flag


def test_a_user_instancecheck_reads_the_instance():
    def fn(obj, x):
        return x + 1 if isinstance(obj, (int, Marked)) else x - 1

    compiled = compile_eager(fn, fullgraph=True)
    for flag in (True, False, True):
        x = torch.randn(3)
        assert_same(compiled(Holder(flag), x), fn(Holder(flag), x))


def test_parameter_checks_stay_in_the_graph():
    def fn(x, p):
        module = torch.nn.ReLU()
        return isinstance(x, torch.nn.Parameter), isinstance(p, torch.nn.Parameter), isinstance(module, torch.nn.Parameter), module(x)

    compiled = compile_eager(fn, fullgraph=True)
    p = torch.nn.Parameter(torch.randn(3))
    x = torch.randn(3)
    assert_same(compiled(x, p), fn(x, p))
