"""`sys.exc_info()` / `sys.exception()` outside the traced code's own except blocks read the
callers' state: none handled (guarded, so a call from inside a caller's `except` block is not
served by that entry), or a graph break. `contextlib.ExitStack`'s `__exit__` asks it."""

from __future__ import annotations

import contextlib
import sys

import pytest
import torch

from helpers import check_across_sizes, compile_eager


def after_a_handler(x):
    try:
        raise ValueError
    except ValueError:
        pass
    return x + 1, sys.exc_info()[0], sys.exception()


def exit_stack_callbacks(x):
    log = []
    with contextlib.ExitStack() as stack:
        stack.callback(log.append, "cb")
        stack.callback(log.append, "first registered, last run")
        log.append("body")
    return x * 2, log


@pytest.mark.parametrize("fn", [after_a_handler, exit_stack_callbacks])
def test_no_exception_handled_by_callers(fn):
    check_across_sizes(fn, lambda n: (torch.randn(n),))


@pytest.mark.parametrize("fullgraph", [False, True])
def test_called_from_a_callers_except_block(fullgraph):
    compiled = compile_eager(after_a_handler, fullgraph=fullgraph)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x)[0], x + 1)
    try:
        raise KeyError("caller's")
    except KeyError:
        if fullgraph:  # the entry's guard fails; capturing again cannot assume no exception
            with pytest.raises(Exception, match="handles an exception"):
                compiled(x)
        else:
            assert compiled(x)[1:] == after_a_handler(x)[1:] == (KeyError, sys.exception())
