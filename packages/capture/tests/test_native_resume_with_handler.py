"""A resume function that runs natively with its call sites routed to compiled callees
(runtime.shallow_disable) keeps room on its value stack for what its exception handlers push:
a callee that breaks its own graph and then raises, caught by `except E as e:` whose body
builds a tuple, crashed CPython (segmentation fault) when the routed code's stack was sized
without the handler."""

from __future__ import annotations

import dis
import os
import subprocess
import sys
import textwrap

from capture.bytecode.resume import resume_code
from capture.runtime.shallow_disable import _route_call_sites


def inner():
    pass


def caught_into_a_tuple(x):
    try:
        inner()
    except NameError as e:
        return 7, str(e)
    return x


def test_routed_resume_function_has_the_stack_its_handler_needs():
    call = next(i.offset for i in dis.get_instructions(caught_into_a_tuple) if i.opname == "CALL")
    resumed = resume_code(caught_into_a_tuple.__code__, call, ("null", "value"), ("x",)).code
    assert _route_call_sites(resumed, lambda v: v).co_stacksize >= resumed.co_stacksize


PROGRAM = """
import torch, capture

def brk():
    import torch._dynamo
    torch._dynamo.graph_break()

def inner():
    brk()
    raise NameError("boom")

def fn(x):
    try:
        inner()
    except NameError as e:
        return x - 1, str(e)
    return x

compiled = capture.optimize(fn, capture.backends.eager)
for _ in range(2):
    y, message = compiled(torch.zeros(1))
    assert message == "boom" and y.item() == -1.0
print("ok")
"""


def test_callee_that_breaks_then_raises_is_caught_by_the_caller():
    # In a child process: the failure this guards against kills the interpreter.
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAM)], capture_output=True, text=True,
                            env=dict(os.environ), timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
