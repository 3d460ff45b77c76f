"""nn.Module instances: called by inlining `forward`; parameters and buffers read through
attributes become graph inputs (see `capture.wrap`); containers (`ModuleList`, `Sequential`,
`ModuleDict`) are indexed and iterated through their real submodules, each named by its source
(`L['self'].h[3]`).
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from ..errors import Unsupported
from ..guard_kinds import GlobalModuleHooksMatch, ModuleAttributeAbsent, ModuleCallMatch
from ..module_call import GLOBAL_HOOK_DICTS, HOOK_DICTS, has_backward_hooks, hooked_call_of
from .base import Value
from .callables import MethodValue
from .class_lookup import MISSING, class_defines, lookup_static
from .constant import ConstantValue
from .exceptions import raise_user_error
from .tensor import TensorValue
from .containers import DictValue, SliceValue
from .symbolic import SymValue, concrete
from .objects import ObjectValue


def has_hooks(module: nn.Module) -> bool:
    """Whether `module(x)` would do more than `forward(x)` (checked on every call of a
    compiled module, so one expression)."""
    g = GLOBAL_HOOK_DICTS
    return bool(
        module._forward_hooks or module._forward_pre_hooks or module._backward_hooks or module._backward_pre_hooks
        or g["_global_forward_hooks"] or g["_global_forward_pre_hooks"]
        or g["_global_backward_hooks"] or g["_global_backward_pre_hooks"]
    )  # fmt: skip


def module_hooks(module: nn.Module) -> list[str]:
    """Names of the hook dicts that would make `module(x)` do more than `forward(x)`."""
    found = [name for name in HOOK_DICTS if getattr(module, name, None)]
    return found + [name for name, hooks in GLOBAL_HOOK_DICTS.items() if hooks]


_MODULE_CALL = nn.Module.__dict__["__call__"]
_MODULE_SETATTR = nn.Module.__dict__["__setattr__"]
_REGISTRIES = ("_parameters", "_buffers", "_modules")
_LIST_CONTAINERS = (nn.ModuleList, nn.Sequential, nn.ParameterList)
_DICT_CONTAINERS = (nn.ModuleDict, nn.ParameterDict)
_CONTAINERS = _LIST_CONTAINERS + _DICT_CONTAINERS


def _torch_container_method(module: nn.Module, name: str) -> bool:
    """Whether `type(module).<name>` (`__iter__`, `__getitem__`, `__len__`) is the one torch's
    container class defines, which ModuleValue answers from the registries with the members
    guarded. A subclass's own (a ModuleList iterated in reverse) and any other module's are
    Python, traced as a user object's are: run natively, their answer was never guarded."""
    method, _ = lookup_static(type(module), name)
    return any(isinstance(module, base) and method is base.__dict__.get(name) for base in _CONTAINERS)



def _container_index(key: Value):
    """The index or slice of a container module as a constant, None if it has none: which
    submodule runs is decided in Python, so a symbolic int (an int argument that changed
    between calls) is specialized to its value, guarded, as torch.compile does."""
    parts = key.parts if isinstance(key, SliceValue) else (key,)
    if not all(p.is_python_constant() or isinstance(p, SymValue) for p in parts):
        return None
    values = [concrete(p) for p in parts]
    return slice(*values) if isinstance(key, SliceValue) else values[0]

def _looked_up_as_nn_module(module: nn.Module, name: str) -> bool:
    """Whether ModuleAttributeAbsent answers as `hasattr(module, name)` does (now False) for
    modules of this class: it looks attributes up as nn.Module does, and it has no such one.
    Through lookup_static, whose guards see a __getattr__ or the name given to the class later."""
    cls = type(module)
    return (
        isinstance(module, nn.Module)
        and lookup_static(cls, "__getattribute__")[0] is object.__dict__["__getattribute__"]
        and lookup_static(cls, "__getattr__")[0] is nn.Module.__dict__["__getattr__"]
        and lookup_static(cls, name)[0] is MISSING
        and not hasattr(module, name)
    )


class ModuleValue(ObjectValue):
    def describe(self):
        return f"{type(self.obj).__name__} module"

    def call(self, frame, args, kwargs):
        if type(self.obj).__module__.startswith("torch._dynamo"):
            # torch.compile's and torch.compiler.disable's module wrapper (OptimizedModule):
            # what it runs is torch.compile's business, so it runs natively.
            raise Unsupported(f"calling {type(self.obj).__name__} module (one torch.compile or torch.compiler.disable wrapped)",
                              hint="the module runs natively between two graphs; pass the module itself to trace it")
        if lookup_static(type(self.obj), "__call__")[0] is not _MODULE_CALL:
            # A class that overrides __call__ runs its override (which may or may not reach
            # forward); the module's type is guarded, so the override is fixed per entry.
            return super().call(frame, args, kwargs)
        session = frame.session
        session.add_guard(GlobalModuleHooksMatch.now())
        hooks = module_hooks(self.obj)
        if hooks:
            if has_backward_hooks(self.obj):
                raise Unsupported(
                    f"calling {self.describe()}, which has backward hooks ({', '.join(hooks)})",
                    hint="the module runs natively; remove the backward hooks to trace it",
                )
            # Forward hooks are traced with the forward (capture.module_call); one capture
            # cannot trace breaks the graph around itself.
            return session.wrap(hooked_call_of(type(self.obj)), None).call(frame, [self, *args], kwargs)
        instance_forward = self.obj.__dict__.get("forward")
        if self.source is not None:
            session.add_guard(ModuleCallMatch(self.source, own_forward=instance_forward is not None))
        if instance_forward is not None:
            return session.wrap(instance_forward, self.attribute_source("forward")).call(frame, args, kwargs)
        forward, _ = lookup_static(type(self.obj), "forward")
        if forward is MISSING:
            raise Unsupported(f"{self.describe()} has no forward")
        if isinstance(forward, staticmethod):
            # `self.forward` of a static forward is the plain function, called without self.
            return session.wrap(forward.__func__, None).call(frame, args, kwargs)
        source = session.class_attribute_source(self.source, type(self.obj), "forward")
        return MethodValue(session.wrap(forward, source), self).call(frame, args, kwargs)

    def set_attr(self, frame, name, value):
        if lookup_static(type(self.obj), "__setattr__")[0] is not _MODULE_SETATTR:
            # Writes are replayed through the real setattr after the graph; reads before that
            # would not see what a class's own __setattr__ does (counters, aliases).
            raise Unsupported(f"setting {name!r} on {self.describe()}, whose class has its own __setattr__")
        _check_registry_write(frame, self.obj, name, value)
        super().set_attr(frame, name, value)

    def has_attr(self, frame, name):
        # A member deleted or registered by the trace (`del self.lin` empties `_modules`) is
        # not yet gone from, or in, the real module that hasattr would ask.
        if name not in self.obj.__dict__:
            self._refuse_stale_members(frame)
        return super().has_attr(frame, name)

    def get_attr(self, frame, name):
        if name in _REGISTRIES:
            self._refuse_stale_registry(frame, name)
        return super().get_attr(frame, name)

    def _refuse_stale_registry(self, frame, registry: str) -> None:
        """nn.Module.__setattr__ files a parameter, buffer or submodule in its registry when
        the entry replays the write, after the graph: the registry read now (by buffers(),
        named_modules(), state_dict()...) would miss it."""
        write = frame.session.side_effects.attribute_writes.get(id(self.obj))
        if write is None:
            return
        registered = [name for name, value in write.values.items()
                      if any(name in self.obj.__dict__.get(r, ()) for r in _REGISTRIES)
                      or isinstance(value, ModuleValue) or _is_parameter(value)]
        if registered:
            raise Unsupported(f"reading {self.describe()}'s {registry} after assigning {registered[0]!r} in the same call",
                              hint="read the attribute itself, or register it with register_buffer/register_module")

    def _refuse_stale_members(self, frame) -> None:
        """Indexing, iterating and measuring a container read the real module; a registry
        the trace changed (`self.layers.append(m)`: add_module writes `_modules`) is replayed
        only after the graph, so the real module does not show it yet."""
        self._refuse_stale_registry(frame, "members")
        session = frame.session
        for registry in _REGISTRIES:
            known = session.wrapped.get(id(self.obj.__dict__.get(registry)))
            if known is not None and id(known[1]) in session.side_effects.mutated_containers:
                raise Unsupported(f"reading the members of {self.describe()} after changing its {registry} in the same call",
                                  hint="build the container before the compiled function, or as a new one at once")

    def attribute_source(self, name: str):
        # Members registered on the module are read straight from their registry dict,
        # skipping nn.Module.__getattr__ (guards.ParameterSource and friends).
        from guards.sources import AttrSource, BufferSource, ParameterSource, SubmoduleSource

        if self.source is None:
            return None
        obj = self.obj
        if name in obj.__dict__:
            return AttrSource(self.source, name)
        for registry, source_cls in (("_parameters", ParameterSource), ("_buffers", BufferSource), ("_modules", SubmoduleSource)):
            if name in obj.__dict__.get(registry, ()):
                return source_cls(self.source, name)
        return AttrSource(self.source, name)

    def _concrete_attr(self, frame, name):
        if name not in self.obj.__dict__ and any(name in self.obj.__dict__.get(r, ()) for r in _REGISTRIES):
            # nn.Module.__getattr__ answers from its registries only where normal lookup
            # fails: `m.__dict__['sub'] = other` (or object.__setattr__) shadows the member.
            self.guard_absent_from_instance_dict(frame.session, name)
        return super()._concrete_attr(frame, name)

    def absent_attribute_guard(self, name):
        if _looked_up_as_nn_module(self.obj, name):
            return ModuleAttributeAbsent(self.source, name, type(self.obj))
        return super().absent_attribute_guard(name)

    def _item_source(self, key):
        """`m[key]` of a container module, read from its `_modules` registry."""
        from guards.sources import ItemSource, SubmoduleSource

        if self.source is None:
            return None
        names = list(self.obj._modules)
        if isinstance(key, int) and names and -len(names) <= key < len(names):
            return SubmoduleSource(self.source, names[key])
        if isinstance(key, str) and key in self.obj._modules:
            return SubmoduleSource(self.source, key)
        return ItemSource(self.source, key)

    def get_item(self, frame, key):
        if not _torch_container_method(self.obj, "__getitem__"):
            return super().get_item(frame, key)
        k = _container_index(key)
        if k is None:
            raise Unsupported(f"indexing {self.describe()} with {key.describe()}")
        self._refuse_stale_members(frame)
        self._guard_members(frame.session)
        item = self.obj[k]
        if isinstance(k, slice):
            # A new container no source leads to, holding members of this one: each is read
            # through this container's source, so what the trace reads from them is guarded
            # (the layers of `self.layers[: config.num_hidden_layers]`, in every HF decoder).
            container, positions = self._positions()
            return SlicedContainerValue(item, container, positions[k])
        return self._member(frame, item, self._item_source(k))

    def _member(self, frame, member, source):
        return frame.session.wrap(member, source)

    def _positions(self):
        """The container module whose sources this one's members are read through, and the
        position there of each of them."""
        return self, range(len(self.obj))

    def unpack(self, frame):
        obj = self.obj
        if not _torch_container_method(obj, "__iter__"):
            return super().unpack(frame)
        self._refuse_stale_members(frame)
        self._guard_members(frame.session)
        if isinstance(obj, _LIST_CONTAINERS):
            return [self._member(frame, obj[i], self._item_source(i)) for i in range(len(obj))]
        return [ConstantValue(k) for k in obj.keys()]

    def own_iterator(self, frame):
        if _torch_container_method(self.obj, "__iter__"):
            return None  # unpack reads each member through its source, not torch's Python __iter__
        return super().own_iterator(frame)

    def length(self, frame):
        if not _torch_container_method(self.obj, "__len__"):
            return super().length(frame)
        self._refuse_stale_members(frame)
        self._guard_members(frame.session)
        return ConstantValue(len(self.obj))

    def truth(self, frame):
        if class_defines(type(self.obj), "__bool__") or not _torch_container_method(self.obj, "__len__"):
            return super().truth(frame)
        self._refuse_stale_members(frame)
        self._guard_members(frame.session)
        return bool(len(self.obj))

    def _guard_members(self, session) -> None:
        """A container module's length, order and names, which indexing and iterating it
        unroll into the graph, are guarded (its type alone says nothing of them)."""
        from guards.kinds import DictKeysMatch
        from guards.sources import AttrSource

        if self.source is None or not isinstance(self.obj, _CONTAINERS):
            return
        table = "_parameters" if isinstance(self.obj, (nn.ParameterList, nn.ParameterDict)) else "_modules"
        session.add_guard(DictKeysMatch(AttrSource(self.source, table), tuple(getattr(self.obj, table).keys())))


def _check_registry_write(frame, module: nn.Module, name: str, value: Value) -> None:
    """The TypeErrors nn.Module.__setattr__ raises, raised where the program assigns (the
    write itself is replayed after the graph, past the program's `except`)."""
    if _is_none(value):
        return
    if name in module.__dict__.get("_parameters", ()) and not _is_parameter(value):
        expected = "parameter", "torch.nn.Parameter or None"
    elif name in module.__dict__.get("_modules", ()) and not isinstance(value, ModuleValue):
        expected = "child module", "torch.nn.Module or None"
    elif name in module.__dict__.get("_buffers", ()) and not isinstance(value, TensorValue):
        expected = "buffer", "torch.nn.Buffer, torch.Tensor or None"
    else:
        return
    kind = torch.typename(torch.empty(0, dtype=value.fake.dtype)) if isinstance(value, TensorValue) else value.describe()
    raise_user_error(frame, TypeError, f"cannot assign '{kind}' as {expected[0]} '{name}' ({expected[1]} expected)")


def _is_none(value: Value) -> bool:
    return value.is_python_constant() and value.as_python_constant() is None


def _is_parameter(value: Value) -> bool:
    try:
        return issubclass(value.python_type(), nn.Parameter)
    except (NotImplementedError, Unsupported):
        return False


class SlicedContainerValue(ModuleValue):
    """`container[i:j]` of a ModuleList, Sequential or ParameterList: a new container (made
    for real, as eager makes it) whose members are read through the original's source."""

    def __init__(self, obj, container: ModuleValue, positions: range):
        super().__init__(obj, None)
        self.container = container
        self.positions = positions

    def _positions(self):
        return self.container, self.positions

    def _item_source(self, key):
        if isinstance(key, int) and -len(self.positions) <= key < len(self.positions):
            return self.container._item_source(self.positions[key])
        return None


class NewModuleValue(ModuleValue):
    """A torch.nn module without parameters or buffers constructed by the traced code
    (`nn.ReLU()`, `nn.Softmax(dim=1)`): capture constructs it for real, from constant
    arguments, and inlines its forward like any module's. Every call would construct an equal
    module, so the one built while tracing stands for all of them and is never changed: the
    attributes the traced code sets (`m.eval()` sets `training`) are kept here, read back by
    the trace, and set on the copy each call gets (eager returns a new module per call)."""

    def __init__(self, obj, *, member: bool = False):
        super().__init__(obj, None)
        self.writes: dict[str, Value] = {}
        self.member = member  # a submodule of one: the copy made per call is its parent's

    def _member(self, frame, member, source):
        if isinstance(member, nn.Module):
            return NewModuleValue(member, member=True)
        return frame.session.wrap(member, source)

    def describe(self):
        return f"{type(self.obj).__name__} module (created in the traced code)"

    # Its containers are read from the real object (iteration, len, indexing), which a new
    # member seen only by the trace would leave behind (an empty Sequential filled by
    # add_module ran as the identity): members and registries stay as constructed.
    def _refuse_change(self, what: str):
        raise Unsupported(f"{what} {self.describe()}",
                          hint="build the module from its submodules at once (nn.Sequential(a, b)), or outside the compiled function")

    def set_attr(self, frame, name, value):
        registered = any(name in self.obj.__dict__.get(r, ()) for r in _REGISTRIES)
        if self.member or registered or isinstance(value, ModuleValue) or _is_parameter(value) or lookup_static(type(self.obj), name)[0] is not MISSING:
            self._refuse_change(f"setting {name!r} on")
        self.writes[name] = value

    def del_attr(self, frame, name):
        self._refuse_change(f"deleting {name!r} of")

    def get_attr(self, frame, name):
        if name in self.writes:
            return self.writes[name]
        if name == "__dict__" or name in _REGISTRIES and self.obj.__dict__[name]:
            self._refuse_change(f"reading {name} (which code may change) of")
        if name in _REGISTRIES:
            return _EmptyRegistry({}, python_cls=dict)  # what train() and children() read
        return super().get_attr(frame, name)

    def has_attr(self, frame, name):
        return name in self.writes or super().has_attr(frame, name)

    def reconstruct(self, writer):
        # One copy per call, however many places (stack, locals, a bound method) hold it.
        copied = f"{writer.name_for(copy.deepcopy, 'deepcopy')}({writer.constant(self.obj)})"
        if self.writes:
            attrs = ", ".join(f"{k!r}: {writer.value(v)}" for k, v in self.writes.items())
            copied = f"{writer.name_for(_with_attributes, 'with_attributes')}({copied}, {{{attrs}}})"
        return writer.bind(self, copied)

    def inner_values(self):
        return list(self.writes.values())


class _EmptyRegistry(DictValue):
    """The empty `_modules`/`_parameters`/`_buffers` of a module built in the traced code,
    which must stay empty (see NewModuleValue)."""

    def mutated(self, frame) -> None:
        raise Unsupported("adding a member to a module created in the traced code",
                          hint="build the module from its submodules at once (nn.Sequential(a, b)), or outside the compiled function")


def _with_attributes(module: nn.Module, attrs: dict) -> nn.Module:
    for name, value in attrs.items():
        setattr(module, name, value)
    return module
