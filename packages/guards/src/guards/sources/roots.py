"""Root sources: values the compiled function's frame holds directly (its locals, globals,
closure cells, other modules' globals, objects the guard holds)."""

from __future__ import annotations

import dataclasses
import sys

from .base import RootNames, Source, _identifier_hint, _source_value


class RootSource(Source):
    """A value the frame holds directly; `root_code(frame)` spells it in generated code."""

    base = None


@_source_value
class LocalSource(RootSource):
    """An argument (or any local the frame is entered with) of the compiled function."""

    name: str

    def __str__(self) -> str:
        return f"L[{self.name!r}]"

    @property
    def hint(self) -> str:
        return self.name

    def root_code(self, frame: RootNames) -> str:
        return frame.parameter(self.name)


@_source_value
class GlobalSource(RootSource):
    """A name in the globals dict of the compiled function's module."""

    name: str

    def __str__(self) -> str:
        return f"G[{self.name!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"G_{self.name}")

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.globals_dict()}[{self.name!r}]"


@_source_value
class GlobalsSource(RootSource):
    """The globals dict of the compiled function's module itself, `G`: what a guard on a name
    being absent from it reads (a global the program found missing, or a builtin it found
    because no global shadows it)."""

    def __str__(self) -> str:
        return "G"

    @property
    def hint(self) -> str:
        return "G"

    def root_code(self, frame: RootNames) -> str:
        return frame.globals_dict()


@_source_value
class ModuleGlobalsSource(RootSource):
    """The globals dict of module `module` itself, `M[module]` (`vars(sys.modules[module])`):
    as GlobalsSource, for a function of another module, and for `builtins`."""

    module: str

    def __str__(self) -> str:
        return f"M[{self.module!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"M_{self.module.rpartition('.')[2]}")

    def root_code(self, frame: RootNames) -> str:
        return frame.module_globals(self.module)


@_source_value
class ImportedModuleSource(RootSource):
    """The module an `import` statement finds, `sys.modules[name]` (the dict held, read on
    every call): an entry replaced or removed there makes the statement give another module
    (or run the module's code again)."""

    name: str

    def __str__(self) -> str:
        return f"sys.modules[{self.name!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"module_{self.name.rpartition('.')[2]}")

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.held(sys.modules, 'sys_modules')}[{self.name!r}]"


@_source_value
class SysModulesSource(RootSource):
    """`sys.modules` itself (the dict held): where a name the program found unimported must
    stay absent (`'pkg' not in sys.modules`), a stub filed there later is found by eager."""

    def __str__(self) -> str:
        return "sys.modules"

    @property
    def hint(self) -> str:
        return "sys_modules"

    def root_code(self, frame: RootNames) -> str:
        return frame.held(sys.modules, "sys_modules")


@_source_value
class ModuleGlobalSource(RootSource):
    """A name in the globals dict of module `module` (`sys.modules[module]`): how a trace reads
    the globals of a function it entered that no source reaches, such as a submodule's
    `forward` defined in another file. The guard reads the dict itself, bound once."""

    module: str
    name: str

    def __str__(self) -> str:
        return f"M[{self.module!r}][{self.name!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(f"M_{self.module.rpartition('.')[2]}_{self.name}")

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.module_globals(self.module)}[{self.name!r}]"


@_source_value
class ClosureSource(RootSource):
    """The current contents of one of the compiled function's closure cells (a free variable).

    Read through the cell object itself, so rebinding the variable in the enclosing scope
    (`nonlocal scale; scale = 3`) is seen by the guard.
    """

    name: str

    def __str__(self) -> str:
        return f"C[{self.name!r}]"

    @property
    def hint(self) -> str:
        return self.name

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.closure_cell(self.name)}.cell_contents"


@_source_value
class HeldCellSource(RootSource):
    """The current contents of a closure cell of a function no source reaches (a decorated
    submodule forward, found on its class): the guard holds the cell object itself, so
    rebinding the variable it closes over is seen."""

    label: str  # `function.variable`
    cell_id: int
    cell: object = dataclasses.field(compare=False)

    def __str__(self) -> str:
        return f"C[{self.label!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(self.label.rpartition(".")[2])

    def root_code(self, frame: RootNames) -> str:
        return f"{frame.held(self.cell, _identifier_hint(self.label) + '_cell')}.cell_contents"


@_source_value
class HeldObjectSource(RootSource):
    """An object no frame input leads to, read through a class (a descriptor in a class's
    dict, whose `__get__`/`__set__` capture traces): the guard holds the object itself, so
    a change to its attributes (the name `__set_name__` chose, a default) is seen."""

    label: str
    obj_id: int
    obj: object = dataclasses.field(compare=False)

    def __str__(self) -> str:
        return f"C[{self.label!r}]"

    @property
    def hint(self) -> str:
        return _identifier_hint(self.label.rpartition(".")[2])

    def root_code(self, frame: RootNames) -> str:
        return frame.held(self.obj, _identifier_hint(self.label))
