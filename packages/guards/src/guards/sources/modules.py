"""Sources of nn.Module members, read from the module's registries directly."""

from __future__ import annotations

import functools
import re

from .base import Source, _attribute, _identifier_hint, _source_value
from .chains import instance_dict_source


@_source_value
class ModuleRegistrySource(Source):
    """One of an nn.Module's member dicts, `module._parameters` / `_buffers` / `_modules`.

    Its own node so that siblings share one read: the guard of `m.weight` and `m.bias`
    reads `m._parameters` once. It is read as `module.__dict__['_parameters']` (as
    nn.Module.__getattr__ itself reads it), through the module's `__dict__` source that its
    other members and its hook checks share: nn.Module defines `__getattr__`, which keeps
    CPython from specializing attribute reads on its instances, and a dict subscript costs
    about half of such a read.
    """

    base: Source
    registry: str

    def __str__(self) -> str:
        return f"{self.base}.{self.registry}"

    @property
    def hint(self) -> str:
        return f"{self.base.hint}{self.registry}"

    @property
    def parents(self) -> tuple[Source, ...]:
        return (instance_dict_source(self.base),)

    def code(self, instance_dict: str) -> str:
        return f"{instance_dict}[{self.registry!r}]"


@_source_value
class _ModuleMemberSource(Source):
    """A member of an nn.Module stored in one of its registries (`_parameters`, ...).

    `nn.Module.__getattr__` is Python code that searches three dicts; reading the right dict
    directly is several times faster. Only valid when the attribute really lives there (the
    caller knows: it saw where `getattr` found it at capture time). Prints as the attribute.
    """

    module: Source
    name: str
    registry = ""  # the nn.Module dict attribute holding this kind of member

    @functools.cached_property
    def base(self) -> Source:
        # One registry source per member, built once: code generation walks `base` often.
        return ModuleRegistrySource(self.module, self.registry)

    def __str__(self) -> str:
        return _attribute(str(self.module), self.name)

    @property
    def hint(self) -> str:
        return _identifier_hint(f"{self.module.hint}_{self.name}")

    def code(self, base: str) -> str:
        return f"{base}[{self.name!r}]"


class ParameterSource(_ModuleMemberSource):
    """`module.name` for an nn.Parameter registered on the module."""

    registry = "_parameters"


class BufferSource(_ModuleMemberSource):
    """`module.name` for a buffer registered on the module."""

    registry = "_buffers"


class SubmoduleSource(_ModuleMemberSource):
    """`module.name` for a child module; children of ModuleList/Sequential print as `m[0]`."""

    registry = "_modules"

    def __str__(self) -> str:
        # Only a plain decimal literal: `²` is a digit and `01` a number, but neither is Python.
        if re.fullmatch(r"0|[1-9][0-9]*", self.name):
            return f"{self.module}[{self.name}]"
        return super().__str__()
