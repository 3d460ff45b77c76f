"""Imports in traced code: the `import` statement, `importlib.import_module`, `__import__`, and
`sys.modules` read as a dict (values.py_modules.SysModulesValue). Each runs the import system
now (an import's side effects happen once, as in eager) and is guarded on the sys.modules
entries its answer came from: the same object filed under the name, or the name still absent.
Tests and plugins stub modules by replacing an entry (`sys.modules['pkg'] = stub`), after
which eager imports the stub.

sys.modules is never guarded as a whole: every import anywhere changes its keys."""

from __future__ import annotations

import builtins
import importlib
import importlib.util
from typing import Any, Callable

from guards import ImportedModuleSource

from ..errors import Unsupported, UserException
from ..values.base import Value
from ..values.constant import ConstantValue
from ..values.exceptions import ExceptionValue
from ..values.py_modules import guard_entry
from .registry import rule


def imported(frame, do_import: Callable[[], Any], resolve: Callable[[], str], returns_top: bool) -> Value:
    """The module `do_import()` gives, guarded on the entry of the name it imports (`resolve()`,
    absolute) and, where it returns the top package (`import a.b` gives `a`), on that one's."""
    try:
        module = do_import()
    except ImportError as err:
        # A name found absent (or filed as None, which makes the import fail) must stay so.
        try:
            guard_entry(frame, resolve())
        except (ImportError, ValueError):
            pass  # a relative import outside a package: it fails whatever sys.modules holds
        raise UserException(ExceptionValue.from_real(err)) from None
    name = resolve()
    guard_entry(frame, name)
    returned = name.partition(".")[0] if returns_top else name
    if guard_entry(frame, returned) is not module:
        # Not the entry (a module that replaced itself while it ran): held, not read.
        return frame.session.wrap(module, None)
    return frame.session.wrap(module, ImportedModuleSource(returned))


def import_statement(frame, name: str, globals_: dict, fromlist, level: int) -> Value:
    """`builtins.__import__(name, globals_, None, fromlist, level)`, which `import` calls."""

    def resolve() -> str:
        if level == 0:
            return name
        # What the import system resolves a relative name against (__package__, or __spec__).
        package = importlib._bootstrap._calc___package__(globals_)
        return importlib.util.resolve_name("." * level + name, package)

    if level and not fromlist:
        # Only `__import__` called directly does this; it returns a module between the two.
        raise Unsupported(f"__import__({name!r}, level={level}) without a fromlist")
    return imported(frame, lambda: builtins.__import__(name, globals_, None, fromlist, level), resolve, not fromlist)


def _constants(values, what: str) -> list:
    if not all(v.is_python_constant() for v in values):
        raise Unsupported(f"{what} with arguments that are not constants")
    return [v.as_python_constant() for v in values]


@rule(importlib.import_module, accepts="(name, package=None)")
def _import_module(frame, args, kwargs):
    name, package = (_constants([*args, *kwargs.values()], "importlib.import_module") + [None])[:2]
    return imported(frame, lambda: importlib.import_module(name, package),
                    lambda: importlib.util.resolve_name(name, package), returns_top=False)


@rule(builtins.__import__, accepts="(name, globals=None, locals=None, fromlist=(), level=0)")
def _dunder_import(frame, args, kwargs):
    bound = dict(zip(("name", "globals", "locals", "fromlist", "level"), args)) | kwargs
    name, fromlist, level = _constants(
        [bound["name"], bound.get("fromlist", ConstantValue(())), bound.get("level", ConstantValue(0))], "__import__")
    if level:
        raise Unsupported(f"__import__({name!r}) with level={level}", hint="the graph breaks here; the call runs natively")
    return import_statement(frame, name, frame.f_globals, fromlist or (), 0)
