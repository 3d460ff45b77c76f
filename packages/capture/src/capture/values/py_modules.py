"""Python modules as values (`torch`, `math`, the user's own): their attributes are their
globals, which the functions they define read and write."""

from __future__ import annotations

import sys
import types
from typing import Any

from guards import IdentityMatch, ImportedModuleSource, KeyAbsent, SysModulesSource

from ..errors import Unsupported, UserException
from .base import Value
from .callables import NativeMethodValue
from .constant import ConstantValue
from .containers import DictValue
from .exceptions import ExceptionValue


class PyModuleValue(Value):
    """A Python module (`torch`, `math`, the user's own modules)."""

    def __init__(self, module: types.ModuleType, source=None):
        super().__init__(source)
        self.module = module

    def describe(self):
        return f"module {self.module.__name__}"

    def python_type(self):
        return types.ModuleType

    def as_python_constant(self):
        return self.module

    def identity(self):
        return self.module

    def get_attr(self, frame, name):
        # A module's attributes are its globals: a store made earlier in this trace (STORE_GLOBAL
        # in one of its functions, or `module.name = v`) is what the read sees.
        pending = frame.session.side_effects.pending_global(self.module.__dict__, name)
        if pending is not None:
            return pending
        if name == "__dict__" and frame.session.side_effects.globals_written(self.module.__dict__):
            # The real namespace lacks the stores recorded so far (replayed after the graph).
            raise Unsupported(f"reading the namespace of {self.describe()} after storing to its globals",
                              hint="the graph breaks here, once the stores are made")
        try:
            value = getattr(self.module, name)
        except AttributeError as err:
            raise UserException(ExceptionValue.from_real(err)) from None
        wrapped = frame.session.wrap(value, frame.session.module_attribute_source(self, name, value))
        if name == "__dict__" and isinstance(wrapped, DictValue):
            wrapped.namespace_of = self.module
        return wrapped

    def has_attr(self, frame, name):
        if frame.session.side_effects.pending_global(self.module.__dict__, name) is not None:
            return True
        return hasattr(self.module, name)

    def set_attr(self, frame, name, value):
        if type(self.module) is not types.ModuleType:
            return super().set_attr(frame, name, value)  # a subclass may define __setattr__
        # Recorded as a store to the module's globals, which its functions read (LOAD_GLOBAL).
        frame.session.side_effects.store_global(self.module.__dict__, name, value, self)

    def reconstruct(self, writer):
        return writer.existing(self, self.as_python_constant())


def guard_entry(frame, name: str) -> Any:
    """`sys.modules.get(name)` (None where absent), guarded to stay that entry."""
    if name in sys.modules:
        entry = sys.modules[name]
        frame.session.add_guard(IdentityMatch(ImportedModuleSource(name), entry))
        return entry
    frame.session.add_guard(KeyAbsent(SysModulesSource(), name))
    return None


class SysModulesValue(Value):
    """`sys.modules`, read one name at a time: each name read is guarded on its own entry.
    What reads the whole dict (iterating it, its length, copying it) or writes it breaks the
    graph and runs natively."""

    def describe(self):
        return "sys.modules"

    def python_type(self):
        return dict

    def _name(self, key: Value) -> str:
        name = key.as_python_constant() if key.is_python_constant() else None
        if not isinstance(name, str):
            raise Unsupported(f"sys.modules read with {key.describe()}, not a string constant")
        return name

    def get_item(self, frame, key):
        name = self._name(key)
        entry = guard_entry(frame, name)
        if entry is None and name not in sys.modules:
            raise UserException(ExceptionValue(KeyError, [ConstantValue(name)]))
        return frame.session.wrap(entry, ImportedModuleSource(name))

    def get(self, frame, key, default: Value) -> Value:
        name = self._name(key)
        entry = guard_entry(frame, name)
        if entry is None and name not in sys.modules:
            return default
        return frame.session.wrap(entry, ImportedModuleSource(name))

    def contains(self, frame, key) -> Value:
        name = self._name(key)
        return ConstantValue(guard_entry(frame, name) is not None or name in sys.modules)

    def get_attr(self, frame, name):
        if name == "get":
            return NativeMethodValue(lambda frame, modules, key, default=ConstantValue(None): modules.get(frame, key, default),
                                     self, "sys.modules.get")
        if name == "__contains__":
            return NativeMethodValue(lambda frame, modules, key: modules.contains(frame, key), self, "sys.modules.__contains__")
        raise Unsupported(f"sys.modules.{name}", hint="the graph breaks here; the call runs natively")

    def reconstruct(self, writer):
        return writer.existing(self, sys.modules)
