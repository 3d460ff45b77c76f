"""More cases modelled on dynamo's test_ctx_manager: managers whose __enter__ returns self or
another object, __exit__ suppressing some exceptions and not others, contextlib.suppress,
ExitStack with callbacks and managers pushed in a loop, ContextDecorator subclasses used both
ways, managers re-entered and nested with the same object, returns/break/continue leaving
them, torch.device as a manager, torch.random.fork_rng, and grad mode set inside a manager's
__enter__/__exit__ of a user class. Recast in our own words."""

import contextlib

import torch

from . import snippets

SOURCE = "dynamo/test_ctx_manager"


class Tracker:
    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.events.append(f"exit:{exc_type.__name__ if exc_type else None}")
        return exc_type is KeyError


class Scoped(contextlib.ContextDecorator):
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("in")
        return self

    def __exit__(self, *exc):
        self.log.append("out")
        return False


class NoGradBlock:
    def __enter__(self):
        self.prev = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
        return "off"

    def __exit__(self, *exc):
        torch.set_grad_enabled(self.prev)


@contextlib.contextmanager
def tagged(log, name):
    log.append(f"+{name}")
    try:
        yield name
    except ZeroDivisionError:
        log.append(f"caught:{name}")
    finally:
        log.append(f"-{name}")


NS = {"torch": torch, "contextlib": contextlib, "Tracker": Tracker, "Scoped": Scoped, "NoGradBlock": NoGradBlock, "tagged": tagged}


def vec_requires_grad(n):
    return (torch.randn(n, requires_grad=True),)


CASES = [
    ("enter_returns_self", "with Tracker() as t:\n    y = x * 2\nreturn y, t.events"),
    ("exit_suppresses_key_error_only", "t = Tracker()\nwith t:\n    {}['missing']\ny = x + 1\ntry:\n    with t:\n        raise ValueError('v')\nexcept ValueError:\n    y = y * 2\nreturn y, t.events"),
    ("same_manager_reentered", "t = Tracker()\nfor i in range(3):\n    with t:\n        x = x + i\nreturn x, t.events"),
    ("contextlib_suppress", "with contextlib.suppress(IndexError, KeyError):\n    x = x * 2\n    [][1]\n    x = x * 100\nreturn x"),
    ("exitstack_callbacks_in_order", "log = []\nwith contextlib.ExitStack() as stack:\n    for i in range(3):\n        stack.callback(log.append, i)\n    y = x.sin()\nreturn y, log"),
    ("exitstack_enter_context_loop", "log = []\nwith contextlib.ExitStack() as stack:\n    names = [stack.enter_context(tagged(log, n)) for n in 'ab']\n    y = x * len(names)\nreturn y, log, names"),
    ("context_decorator_both_ways", "log = []\n@Scoped(log)\ndef g(t):\n    return t * 2\ny = g(x)\nwith Scoped(log):\n    y = y + 1\nreturn y, log"),
    ("generator_manager_catches_inside", "log = []\nwith tagged(log, 'z') as name:\n    y = x * 2\n    1 / 0\nreturn y if 'y' in dir() else x, log, name", {}),
    ("return_from_inside_with", "log = []\ndef g(t):\n    with tagged(log, 'r'):\n        return t * 3\nreturn g(x), log"),
    ("break_and_continue_inside_with", "log = []\nfor i in range(4):\n    with tagged(log, str(i)):\n        if i == 1:\n            continue\n        if i == 2:\n            break\n        x = x + i\nreturn x, log"),
    ("nested_with_one_statement", "log = []\nwith tagged(log, 'a') as a, tagged(log, 'b') as b:\n    y = x * 2\nreturn y, log, a + b"),
    ("user_class_sets_grad_mode", "with NoGradBlock() as state:\n    y = x * 2\nz = x * 3\nreturn y, z, state, y.requires_grad, z.requires_grad", {"make_args": vec_requires_grad}),
    ("torch_device_manager", "with torch.device('cpu'):\n    z = torch.zeros(x.shape[0])\nreturn x + z, z.device"),
    ("fork_rng_restores_state", "with torch.random.fork_rng(devices=[]):\n    torch.manual_seed(0)\n    a = torch.rand(x.shape[0])\nb = torch.rand(1)\nreturn x + a, b.shape", {"exact_rng": False}),
    ("nullcontext_enter_result", "with contextlib.nullcontext(x * 2) as y:\n    z = y + 1\nreturn z"),
    ("closing_calls_close", "class R:\n    closed = False\n    def close(self):\n        R.closed = True\nwith contextlib.closing(R()) as r:\n    y = x * 2\nresult = (y, R.closed)\nR.closed = False\nreturn result", {}),
    ("manager_exception_chained", "log = []\ntry:\n    with tagged(log, 'e'):\n        raise KeyError('k')\nexcept KeyError as e:\n    return x, log, e.args"),
    ("no_grad_exit_on_exception_then_grad", "try:\n    with torch.no_grad():\n        raise RuntimeError('r')\nexcept RuntimeError:\n    pass\nreturn x * 2, torch.is_grad_enabled()", {"make_args": vec_requires_grad}),
]
snippets(SOURCE, "ctx_more", CASES, namespace=NS)
