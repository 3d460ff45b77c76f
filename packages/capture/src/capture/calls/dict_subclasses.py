"""Dict subclasses written in Python (`class Counts(dict): def __missing__(...)`): a DictValue
of that class, whose Python methods are inlined like any method.

What capture runs for a dict is dict's own C behaviour (DictValue), with three hooks a subclass
may override in Python and capture then traces: `__getitem__` (`d[k]`), `__setitem__`
(`d[k] = v`) and `__missing__` (what `dict.__getitem__` asks on a miss). A subclass overriding
any other of dict's special methods (`__len__`, `__iter__`, `__contains__`, `__eq__`...) would
be answered by dict's own behaviour, silently wrong: refused instead, by name.

Constructing one in the traced code runs `dict.__init__` (which stores entries without calling
an overridden `__setitem__`, as CPython's dict_merge does). An instance that escapes is rebuilt
as `cls(entries)`, which is only the same object when the class's construction is dict's own:
classes with a Python `__init__` or `__new__` are refused rather than rebuilt by calling them.
"""

from __future__ import annotations

import collections
import types
from collections import OrderedDict

from ..errors import Unsupported

TRACED_OVERRIDES = frozenset({"__getitem__", "__setitem__", "__missing__"})
# Special methods a subclass may define without changing what dict's operations do.
# (Construction, `__init__`/`__new__`, is checked apart: an instance passed in is already built.)
_HARMLESS = frozenset({"__init__", "__new__", "__init_subclass__", "__class_getitem__", "__repr__", "__str__", "__format__", "__reduce__",
                       "__reduce_ex__", "__getstate__", "__sizeof__", "__dir__"})  # fmt: skip
_DICT_SPECIAL = frozenset(name for name in dir(dict) if name.startswith("__")) | {"__missing__", "__bool__"}
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class statement's class
# Dict classes capture models as themselves (by their own rules), where a subclass's own
# overrides stop. (By identity, not module: a class exec'd without `__name__` claims "builtins".)
_MODELLED = (dict, OrderedDict, collections.defaultdict, collections.Counter)


def _user_classes(cls: type):
    """The classes of `cls`'s MRO written by the user, up to the first one capture models."""
    for klass in cls.__mro__:
        if klass in _MODELLED or not klass.__flags__ & _HEAP_TYPE:
            return
        yield klass


def untraced_override(cls: type) -> str | None:
    """The first of dict's special methods that `cls` (a dict subclass) overrides in Python
    and capture would not run, or None."""
    for klass in _user_classes(cls):
        for name, attribute in vars(klass).items():
            if name in _DICT_SPECIAL and name not in TRACED_OVERRIDES | _HARMLESS and isinstance(attribute, types.FunctionType):
                return f"{klass.__qualname__}.{name}"
    return None


def check_dict_subclass(cls: type, *, passed_in: bool = False) -> None:
    """Refuse a dict subclass whose behaviour DictValue would not reproduce. The items of one
    `passed_in` are read (and guarded) as `d[key]`, which must be dict's own lookup."""
    if passed_in and any(isinstance(vars(k).get("__getitem__"), types.FunctionType) for k in _user_classes(cls)):
        raise Unsupported(
            f"a {cls.__qualname__} (dict subclass overriding __getitem__) passed to the compiled function",
            hint="its items are read as d[key], which would run the override",
        )
    override = untraced_override(cls)
    if override is not None:
        raise Unsupported(
            f"a {cls.__qualname__} (dict subclass) that overrides {override}, which capture does not run for dicts",
            hint="only __getitem__, __setitem__ and __missing__ overrides of a dict subclass are traced",
        )


def check_constructible(cls: type) -> None:
    """Refuse `cls(...)` of a Python subclass of dict or OrderedDict that the traced code
    cannot build as a DictValue of that class (its own construction, or behaviour capture
    does not run)."""
    overridden = set()
    for klass in cls.__mro__:
        if klass in (dict, OrderedDict):
            break
        if not klass.__flags__ & _HEAP_TYPE:  # a C dict subclass (defaultdict) under it: its own behaviour
            raise Unsupported(f"constructing {cls.__qualname__}, a subclass of {klass.__qualname__}")
        overridden |= {name for name, attribute in vars(klass).items() if isinstance(attribute, (types.FunctionType, staticmethod))}
    for name in ("__new__", "__init__"):
        if name in overridden:
            raise Unsupported(
                f"constructing {cls.__qualname__}, a dict subclass with its own {name}",
                hint="capture builds dict subclasses whose construction is dict's own",
            )
    if issubclass(cls, OrderedDict) and "__setitem__" in overridden:
        # OrderedDict.__init__ stores through `self[key] = value` (mutablemapping_update), and
        # rebuilding an escaping instance as `cls(entries)` would run the override again.
        raise Unsupported(f"constructing {cls.__qualname__}, an OrderedDict subclass overriding __setitem__")
    check_dict_subclass(cls)
