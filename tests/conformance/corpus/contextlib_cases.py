"""Context managers inside compiled code: CPython's test_contextlib (contextmanager
generators: enter value, exit on exception, suppressing, re-raising; suppress, nullcontext,
ExitStack, closing, redirect; class-based managers and their __exit__ arguments) plus torch's
own managers (no_grad, enable_grad, set_grad_enabled) that change graph behaviour."""

import contextlib

import torch

from . import snippets, vec_grad


@contextlib.contextmanager
def tagged(log, name):
    log.append(f"enter {name}")
    try:
        yield name
    finally:
        log.append(f"exit {name}")


@contextlib.contextmanager
def swallow(kind):
    try:
        yield
    except kind:
        pass


class Recorder:
    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.events.append(exc_type.__name__ if exc_type else "ok")
        return exc_type is KeyError


NS = {"torch": torch, "contextlib": contextlib, "tagged": tagged, "swallow": swallow, "Recorder": Recorder}

CTX = [
    ("contextmanager_value_and_order", "log = []\nwith tagged(log, 'a') as v:\n    log.append(v)\nreturn x + len(log), log"),
    ("contextmanager_nested", "log = []\nwith tagged(log, 'a'), tagged(log, 'b'):\n    x = x + 1\nreturn x, log"),
    ("contextmanager_exit_on_exception", "log = []\ntry:\n    with tagged(log, 'a'):\n        raise ValueError\nexcept ValueError:\n    log.append('caught')\nreturn x, log"),
    ("contextmanager_suppresses", "with swallow(KeyError):\n    raise KeyError\nreturn x + 1"),
    ("contextmanager_does_not_suppress_other", "with swallow(KeyError):\n    raise ValueError('v')\nreturn x"),
    ("contextmanager_tensor_body", "log = []\nwith tagged(log, 't'):\n    y = x.sin() * 2\nreturn y, log"),
    ("contextmanager_not_yielding_raises", "@contextlib.contextmanager\ndef bad():\n    if False:\n        yield\nwith bad():\n    pass\nreturn x"),
    ("contextmanager_yielding_twice_raises", "@contextlib.contextmanager\ndef bad():\n    yield\n    yield\nwith bad():\n    pass\nreturn x"),
    ("contextmanager_as_decorator", "log = []\n@tagged(log, 'd')\ndef g(t):\n    return t * 2\nreturn g(x), log"),
    ("suppress_matching", "with contextlib.suppress(KeyError, IndexError):\n    [][0]\nreturn x + 1"),
    ("suppress_non_matching", "with contextlib.suppress(KeyError):\n    raise ValueError\nreturn x"),
    ("suppress_no_exception", "with contextlib.suppress(ValueError):\n    x = x * 3\nreturn x"),
    ("nullcontext_value", "with contextlib.nullcontext(5) as v:\n    return x + v\n"),
    ("nullcontext_none", "with contextlib.nullcontext() as v:\n    return x, v\n"),
    ("exitstack_order", "log = []\nwith contextlib.ExitStack() as stack:\n    for n in 'ab':\n        stack.enter_context(tagged(log, n))\n    log.append('body')\nreturn x, log"),
    ("exitstack_callback", "log = []\nwith contextlib.ExitStack() as stack:\n    stack.callback(log.append, 'cb')\nreturn x, log"),
    ("closing_calls_close", "class C:\n    closed = False\n    def close(self):\n        self.closed = True\nc = C()\nwith contextlib.closing(c):\n    pass\nreturn x + c.closed"),
    ("class_manager_events", "r = Recorder()\nwith r:\n    x = x + 1\nreturn x, r.events"),
    ("class_manager_suppresses_keyerror", "r = Recorder()\nwith r:\n    raise KeyError\nreturn x, r.events"),
    ("class_manager_passes_valueerror", "r = Recorder()\nwith r:\n    raise ValueError('v')\nreturn x"),
    ("class_manager_enter_value", "with Recorder() as r:\n    pass\nreturn x + len(r.events)"),
    ("with_return_inside_runs_exit", "log = []\ndef g():\n    with tagged(log, 'r'):\n        return x * 2\nreturn g(), log"),
    ("with_break_inside_loop_runs_exit", "log = []\nfor i in range(3):\n    with tagged(log, str(i)):\n        if i == 1:\n            break\nreturn x, log"),
    ("redirect_stdout_to_buffer", "import io\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    print('hello')\nreturn x, buf.getvalue()"),
    ("no_grad_output_no_grad", "with torch.no_grad():\n    y = x * 2\nreturn y, y.requires_grad", {"make_args": vec_grad}),
    ("enable_grad_inside_no_grad", "with torch.no_grad():\n    with torch.enable_grad():\n        y = x * 2\nreturn y", {"make_args": vec_grad, "train": True}),
    ("set_grad_enabled_false", "with torch.set_grad_enabled(False):\n    y = x.sin()\nreturn y + 1, torch.is_grad_enabled()", {"make_args": vec_grad}),
    ("is_grad_enabled_inside_no_grad", "with torch.no_grad():\n    flag = torch.is_grad_enabled()\nreturn x + flag, flag"),
    ("no_grad_decorator", "@torch.no_grad()\ndef g(t):\n    return t * 2\nreturn g(x), x * 3", {"make_args": vec_grad, "train": True}),
    ("no_grad_mixed_with_grad_train", "y = x * 2\nwith torch.no_grad():\n    s = y.sum()\nreturn y * s", {"make_args": vec_grad, "train": True}),
    ("inference_mode_style_detach", "return x.detach() * 2 + x", {"make_args": vec_grad, "train": True}),
    ("no_grad_exception_restores_mode", "try:\n    with torch.no_grad():\n        raise ValueError\nexcept ValueError:\n    pass\nreturn x * 2, torch.is_grad_enabled()", {"make_args": vec_grad, "train": True}),
]
snippets("cpython/test_contextlib", "contextlib", CTX, namespace=NS)
