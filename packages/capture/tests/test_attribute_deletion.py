"""`del obj.name` on an object passed in: recorded like a write and replayed after the graph
(the attribute leaves the instance's __dict__), guarded on whether the instance has it (a
call without it raises AttributeError as eager does); later reads in the trace see it gone."""

from __future__ import annotations

import pytest
import torch

from helpers import compile_eager


class Holder:
    def __init__(self, t, **extra):
        self.t = t
        self.__dict__.update(extra)


def delete_then_read(h):
    del h.count
    return h.t + 1, hasattr(h, "count")


def set_then_delete(h):
    h.tmp = h.t * 2
    out = h.tmp + 1
    del h.tmp
    return out, hasattr(h, "tmp")


def delete_twice(h):
    del h.count
    try:
        del h.count
    except AttributeError:
        return h.t - 1
    return h.t


def delete_then_set_again(h):
    h.extra = h.t + 1
    del h.t
    h.t = h.extra * 2  # goes to the end of h.__dict__, after `extra`
    del h.count
    return h.t - 1


@pytest.mark.parametrize("fn", [delete_then_read, set_then_delete, delete_twice, delete_then_set_again])
@pytest.mark.parametrize("fullgraph", [False, True])
def test_attribute_deletion_on_an_input(fn, fullgraph):
    compiled = compile_eager(fn, fullgraph=fullgraph)
    for n in (4, 4, 7):  # first call, cache hit with new values, new size
        t = torch.randn(n)
        eager_h, compiled_h = Holder(t.clone(), count=n), Holder(t.clone(), count=n)
        expected, actual = fn(eager_h), compiled(compiled_h)
        torch.testing.assert_close(actual, expected)
        assert list(vars(compiled_h)) == list(vars(eager_h))


def test_deleting_a_missing_attribute_raises_like_eager():
    compiled = compile_eager(delete_then_read)
    compiled(Holder(torch.randn(3), count=1))
    with pytest.raises(AttributeError):
        delete_then_read(Holder(torch.randn(3)))
    with pytest.raises(AttributeError):
        compiled(Holder(torch.randn(3)))
