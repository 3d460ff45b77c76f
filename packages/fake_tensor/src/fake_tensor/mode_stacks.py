"""torch's mode stacks put back as they were when a compile ends by an exception.

torch keeps one stack of dispatch modes (`TorchDispatchMode`: our FakeTensorMode, tracers) and
one of function modes (`TorchFunctionMode`) per thread; `with mode:` pushes on entry and pops
on exit. An exception a signal handler raises (Ctrl-C's KeyboardInterrupt) lands between two
bytecodes, which may be inside torch's own `__enter__` after its push and before the `with`
is set up to pop, or inside `__exit__` before its pop (CPython cannot make Python-level
context managers safe from that: bpo-29988). The mode then stayed on the thread's stack after
the interrupted compile, and every later eager op of that thread ran on fake tensors (or
raised for mixing them with real ones).

    with mode_stacks_restored_on_error():
        ...compile...                  # an exception here leaves both stacks as on entry

Each extra mode is left through its own `__exit__` (which also undoes what its `__enter__`
set up beside the push, such as the Python dispatcher); a mode a block had popped for a while
(`_pop_mode_temporarily`) and not pushed back is pushed again.
"""

from __future__ import annotations

import torch
from torch.overrides import _pop_mode as _pop_function_mode
from torch.overrides import _push_mode as _push_function_mode
from torch.utils._python_dispatch import _pop_mode as _pop_dispatch_mode
from torch.utils._python_dispatch import _push_mode as _push_dispatch_mode


def _dispatch_stack() -> list:
    return [torch._C._get_dispatch_stack_at(i) for i in range(torch._C._len_torch_dispatch_stack())]


def _function_stack() -> list:
    return [torch._C._get_function_stack_at(i) for i in range(torch._C._len_torch_function_stack())]


def _restore(saved: list, current, pop, push) -> None:
    stack = current()
    kept = 0
    while kept < min(len(saved), len(stack)) and stack[kept] is saved[kept]:
        kept += 1
    for mode in reversed(stack[kept:]):
        try:
            mode.__exit__(None, None, None)  # pops it, and undoes the rest of its __enter__
        except Exception:  # noqa: BLE001  (an __exit__ expecting state its __enter__ never set)
            pass
        if len(current()) > kept and current()[-1] is mode:
            pop()
    for mode in saved[kept:]:
        push(mode)


class mode_stacks_restored_on_error:  # noqa: N801  (used as a context manager, like contextlib's)
    __slots__ = ("_dispatch", "_function")

    def __enter__(self):
        self._dispatch = _dispatch_stack()
        self._function = _function_stack()
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> bool:
        if exc_type is not None:
            _restore(self._dispatch, _dispatch_stack, _pop_dispatch_mode, _push_dispatch_mode)
            _restore(self._function, _function_stack, _pop_function_mode, _push_function_mode)
        return False
