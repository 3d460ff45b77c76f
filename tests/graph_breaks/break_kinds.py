"""One small function per kind of graph break, and how our graph count relates to the one
torch.compile gets on the same function (its first call).

`relation` is "same" where both compile the same graphs; "more" where torch.compile skips
the whole frame (it does not resume after a break inside a loop, a `try` or a generator
consumer; we compile the graph before the break and keep going); "fewer" where we do not
break at all (a logging call is made after the graph runs, with the same arguments). Used by
test_break_kinds_vs_torch_compile.py and benchmarks/graph_breaks.py.
"""

from __future__ import annotations

import logging
import random
import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

log = logging.getLogger("break_kinds")


@dataclass(frozen=True)
class BreakKind:
    name: str
    fn: Callable
    make_args: Callable[[], tuple]
    relation: str  # "same" | "more" | "fewer"


def helper_prints(x):
    y = x.sin()
    print("in helper")
    return y * 2


def middle(x):
    return helper_prints(x + 1) - 1


def top_level_print(x):
    y = x * 2
    print("between graphs")
    return y + 1


def nested_calls(x):
    a = x * 3
    return a + middle(a)


def data_dependent_branch(x):
    y = x.cos()
    if y.sum() > 0:
        return y * 2
    return y - 2


def item(x):
    scale = x.abs().max().item()
    return x / scale


def tolist(x):
    values = (x * 2).tolist()
    return torch.tensor(values) + 1


def logging_call(x):
    y = x * 2
    log.warning("value %s", y.shape)
    return y + 1


def random_module(x):
    y = x * 2
    noise = random.random()
    return y + 1, noise >= 0


def numpy_random(x):
    y = x.relu()
    noise = np.random.rand()
    return y * 2, noise >= 0


def c_function(x):
    y = x + 1
    checksum = zlib.crc32(b"abc")
    return y * (checksum % 7)


def no_grad_block(x):
    with torch.no_grad():
        y = x * 2
        print("inside no_grad")
        z = y + 1
    return z * x


def autocast_block(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ x
        print("inside autocast")
        z = y @ y
    return z


@torch.compiler.disable
def host_side(x):
    return x.sum() * 2


def disabled_call(x):
    y = x * 2
    return y + host_side(y)


def break_in_loop(x):
    for i in range(5):
        x = x + 1
        print(i)
        x = x * 0.5
    return x


def break_near_try(x):
    y = x + 1
    try:
        print("inside try")
        y = y * 2
    except ValueError:
        y = y - 1
    return y.sum()


def generator(x):
    for t in range(3):
        print("yield", t)
        yield x + t


def generator_consumer(x):
    total = x
    for value in generator(x):
        total = total + value
    return total


def raises_after_break(x):
    y = x + 1
    print("before the error")
    return y @ torch.ones(x.shape[0] + 1)


def square(shape=(4, 4)):
    return (torch.randn(*shape),)


KINDS = [
    BreakKind("print in the top frame", top_level_print, square, "same"),
    BreakKind("print two calls deep", nested_calls, square, "same"),
    BreakKind("data-dependent branch", data_dependent_branch, square, "same"),
    BreakKind(".item()", item, square, "same"),
    BreakKind(".tolist()", tolist, square, "same"),
    BreakKind("random.random()", random_module, square, "same"),
    BreakKind("numpy.random", numpy_random, square, "same"),
    BreakKind("C function", c_function, square, "same"),
    BreakKind("inside no_grad", no_grad_block, square, "same"),
    BreakKind("inside autocast", autocast_block, square, "same"),
    BreakKind("compiler.disable", disabled_call, square, "same"),
    BreakKind("exception after the break", raises_after_break, square, "same"),
    BreakKind("logging (deferred, no break)", logging_call, square, "fewer"),
    BreakKind("inside a loop", break_in_loop, square, "more"),
    BreakKind("near try", break_near_try, square, "more"),
    BreakKind("generator leaving the frame", generator_consumer, square, "more"),
]
