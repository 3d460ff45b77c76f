"""Guard kinds capture adds to the `guards` ones, registered through its emitter registry
(`guards.kinds.emits`): relations `guards` has no kind for.

`SameObject`: two sources name one object. A tensor the trace reaches by two paths
(`f(x, x)`, tied weights) becomes one graph input, read from the first path; an entry is then
valid only for calls where both paths lead to the same object again, or the second one's
value would be silently ignored.

`DistinctObjects`: the sources name pairwise different objects. Tensors used as dict keys or
set members are told apart by identity (as torch hashes them): an entry that found input
tensors to be different keys is valid only while they are different objects. One guard for all
of them, checked in one pass (an optimizer's first step uses each of its hundreds of
parameters as a key: pairwise guards would be quadratic).

`StoragesApart`: the tensors a graph writes in place share memory with no other tensor input.
A functional graph (aot_autograd) reads and writes its inputs as independent values: called
with `x[:4]` and `x[2:6]`, its write into the first would not show in the second.

`StoragesShared`: tensor inputs share storages in the pattern seen at capture, where a tensor
the graph writes shared one (aot_autograd merges such inputs into one base input, reading each
as a view of it at its storage offset, which capture guards too).

`StorageNotShared`: no other tensor uses a tensor's storage (copy.deepcopy of a tensor is a clone
in the graph only then: the copies of tensors sharing a storage share one copied storage).

`NoExceptionHandled`: no caller of the compiled function is handling an exception (what
`sys.exc_info()` outside the traced code's own except blocks reads). The guard function runs
in the call's context, so `sys.exc_info()` there sees the callers' exception as the traced
code would.

`ModuleCallMatch`: calling a module runs what the trace inlined. Hooks added later, or (for a
module guarded by its type, capture.wrap) another instance with hooks or a `forward` of its
own (a patched instance), must not be served by that entry.

`AbcRegistryUnchanged`: no abstract base class gained a registered subclass (`abc.get_cache_token()`
is the token seen at capture): an `isinstance`/`issubclass` answered against an ABC
(`Base.register(C)` later makes `isinstance(C(), Base)` true) holds until then.

`GlobalModuleHooksMatch`: torch's global module hooks (`register_module_forward_hook`...) are
the ones the trace saw, by handle id: a hook registered or removed later changes what every
module call does.
"""

from __future__ import annotations

import abc
import dataclasses
import sys

import torch

from guards.codegen import EmitContext, check, must_be, must_equal
from guards import native
from guards.kinds.base import PRIORITY_OBJECT, PRIORITY_TENSOR, Guard, emits
from guards.sources import Source, instance_dict_source

from .module_call import GLOBAL_HOOK_DICTS, HOOK_DICTS


@dataclasses.dataclass(frozen=True)
class SameObject(Guard):
    """`source is other`: both paths lead to one object."""

    source: Source
    other: Source
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"{self.source} is {self.other}"


@emits(SameObject)
def _same_object(guard: SameObject, ctx: EmitContext) -> list:
    value = ctx.read(guard.source)
    return [check(must_be(value, ctx.read(guard.other)), str(guard), value)]


@dataclasses.dataclass(frozen=True)
class DistinctObjects(Guard):
    """No two of `sources` are the same object."""

    sources: tuple[Source, ...]
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"{', '.join(map(str, self.sources))} are distinct objects"


@emits(DistinctObjects)
def _distinct_objects(guard: DistinctObjects, ctx: EmitContext) -> list:
    values = ", ".join(ctx.read(source) for source in guard.sources)
    distinct = f"{ctx.builtin('len')}({ctx.builtin('set')}({ctx.builtin('map')}({ctx.builtin('id')}, ({values},))))"
    return [check(must_equal(distinct, str(len(guard.sources))), str(guard), distinct)]


@dataclasses.dataclass(frozen=True)
class StoragesApart(Guard):
    """No tensor at `written` shares its storage's memory with a tensor at `written` or
    `others`. One check for all (guards.native's storages_apart: the written tensors' storage
    addresses sorted and searched, ~30 ns a tensor in C++)."""

    written: tuple[Source, ...]
    others: tuple[Source, ...]
    priority = PRIORITY_TENSOR

    def __str__(self) -> str:
        return f"{', '.join(map(str, self.written))} share memory with no other tensor input"


@emits(StoragesApart)
def _storages_apart(guard: StoragesApart, ctx: EmitContext) -> list:
    written, others = ((f"({', '.join(ctx.read(s) for s in sources)}{',' if sources else ''})") for sources in (guard.written, guard.others))
    switch = ctx.constant(native.storages_apart(), "storages_apart", "guards.native.storages_apart()")
    call = f"{switch}.check({written}, {others})"
    return [check(f"not {call}", str(guard), call)]


@dataclasses.dataclass(frozen=True)
class StoragesShared(Guard):
    """The tensors at `sources` share storages as `pattern` says: each one's entry is the
    position of the first of them using the same memory (its own position where none does)."""

    sources: tuple[Source, ...]
    pattern: tuple[int, ...]
    priority = PRIORITY_TENSOR

    def __str__(self) -> str:
        groups: dict[int, list[str]] = {}
        for source, first in zip(self.sources, self.pattern):
            groups.setdefault(first, []).append(str(source))
        return "tensors share storages as at capture: " + "; ".join(" ~ ".join(g) for g in groups.values() if len(g) > 1)


def sharing_pattern(tensors) -> tuple[int, ...]:
    """Per tensor, the position of the first tensor using the same storage memory (an empty
    storage holds nothing to share: its own position)."""
    first: dict[int, int] = {}
    pattern = []
    for position, tensor in enumerate(tensors):
        memory = tensor.untyped_storage().data_ptr()
        pattern.append(first.setdefault(memory, position) if memory else position)
    return tuple(pattern)


@emits(StoragesShared)
def _storages_shared(guard: StoragesShared, ctx: EmitContext) -> list:
    tensors = f"({', '.join(ctx.read(s) for s in guard.sources)},)"
    pattern = f"{ctx.constant(sharing_pattern, 'sharing_pattern', 'sharing_pattern')}({tensors})"
    return [check(must_equal(pattern, repr(guard.pattern)), str(guard), pattern)]


@dataclasses.dataclass(frozen=True)
class ModuleCallMatch(Guard):
    """Calling the module runs what the trace inlined: it has no hooks of its own, and it has
    a `forward` set on the instance exactly when `own_forward`."""

    source: Source
    own_forward: bool
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        forward = "its own forward" if self.own_forward else "its class's forward"
        return f"{self.source} has no hooks and runs {forward}"


@emits(ModuleCallMatch)
def _module_call_match(guard: ModuleCallMatch, ctx: EmitContext) -> list:
    # One condition for all five, subscripts of the instance dict the module's other checks
    # read too: cheap enough to check on every module call of a large model.
    members = ctx.read(instance_dict_source(guard.source))
    hooks = " or ".join(f"{members}[{name!r}]" for name in HOOK_DICTS)
    forward = f"'forward' {'not in' if guard.own_forward else 'in'} {members}"
    return [check(f"{hooks} or {forward}", str(guard), f"({hooks} or {forward})")]


@dataclasses.dataclass(frozen=True, eq=False)
class ModuleAttributeAbsent(Guard):
    """`hasattr(source, attr)` is False for a module of class `cls`, whose attribute lookup is
    nn.Module's (capture.values.modules makes it only then).

    `hasattr` on a module that lacks the attribute runs nn.Module.__getattr__, which builds
    and raises an AttributeError: about 1.4 us, per guarded name on every call (every HF
    attention layer asks for an attribute it lacks). Lookup through nn.Module's rules instead
    finds the attribute in one of four places: the class, the instance dict, or the
    `_parameters`, `_buffers` and `_modules` registries. The class is checked by the guards of
    the lookups made to decide that it applies (lookup_static, recorded by the capture: the
    name and any __getattr__ or __getattribute__ of the class's own); the check reads the
    other three.
    """

    source: Source
    attr: str
    cls: type
    priority = PRIORITY_OBJECT

    # By the class's identity, as guards.kinds.TypeMatch: a metaclass's own == and hash are user code.
    def __eq__(self, other: object) -> bool:
        return (type(other) is ModuleAttributeAbsent and other.source == self.source and other.attr == self.attr
                and other.cls is self.cls)

    def __hash__(self) -> int:
        return hash((ModuleAttributeAbsent, self.source, self.attr, id(self.cls)))

    def __str__(self) -> str:
        return f"hasattr({self.source}, {self.attr!r}) is False"


@emits(ModuleAttributeAbsent)
def _module_attribute_absent(guard: ModuleAttributeAbsent, ctx: EmitContext) -> list:
    module, members = ctx.read(guard.source), ctx.read(instance_dict_source(guard.source))
    cls, name = ctx.type_name(guard.cls), repr(guard.attr)
    places = [f"{name} in {members}", *(f"{name} in {members}[{r!r}]" for r in ("_parameters", "_buffers", "_modules"))]
    found = " or ".join([f"{ctx.builtin('type')}({module}) is not {cls}", *places])
    return [check(found, str(guard), f"{ctx.builtin('hasattr')}({module}, {name})")]



@dataclasses.dataclass(frozen=True)
class GlobalModuleHooksMatch(Guard):
    """The global hook dicts hold the handle ids `ids` (one tuple per dict of GLOBAL_HOOK_DICTS)."""

    ids: tuple[tuple[int, ...], ...]
    priority = PRIORITY_OBJECT

    @classmethod
    def now(cls) -> GlobalModuleHooksMatch:
        return cls(tuple(tuple(hooks) for hooks in GLOBAL_HOOK_DICTS.values()))

    def __str__(self) -> str:
        if not any(self.ids):
            return "no global module hooks"
        return "global module hooks " + ", ".join(f"{name}: {ids}" for name, ids in zip(GLOBAL_HOOK_DICTS, self.ids) if ids)


@emits(GlobalModuleHooksMatch)
def _global_module_hooks_match(guard: GlobalModuleHooksMatch, ctx: EmitContext) -> list:
    dicts = [ctx.constant(hooks, name, f"torch.nn.modules.module.{name}") for name, hooks in GLOBAL_HOOK_DICTS.items()]
    if not any(guard.ids):  # the usual case: four truth tests
        failing = " or ".join(dicts)
    else:
        tuple_ = ctx.builtin("tuple")
        failing = f"({', '.join(f'{tuple_}({d})' for d in dicts)},) != {guard.ids!r}"
    return [check(failing, str(guard), f"({failing})")]


@dataclasses.dataclass(frozen=True)
class StorageNotShared(Guard):
    """No other tensor uses the storage of the tensor at `source` (no view of it, nor is it
    one): its storage's reference count is the tensor's own plus the one `untyped_storage()`
    takes to ask."""

    source: Source
    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return f"no other tensor shares the storage of {self.source}"


def storage_users(tensor: torch.Tensor) -> int:
    """How many tensors use `tensor`'s storage (1: only itself)."""
    return torch._C._storage_Use_Count(tensor.untyped_storage()._cdata) - 1


@emits(StorageNotShared)
def _storage_not_shared(guard: StorageNotShared, ctx: EmitContext) -> list:
    users = f"{ctx.constant(storage_users, 'storage_users', 'storage_users')}({ctx.read(guard.source)})"
    return [check(must_equal(users, "1"), str(guard), users)]


@dataclasses.dataclass(frozen=True)
class NoExceptionHandled(Guard):
    """`sys.exc_info()` is (None, None, None) when the compiled function is called."""

    priority = PRIORITY_OBJECT

    def __str__(self) -> str:
        return "no exception is being handled by the callers"


@emits(NoExceptionHandled)
def _no_exception_handled(guard: NoExceptionHandled, ctx: EmitContext) -> list:
    handled = f"{ctx.constant(sys.exception, 'sys_exception', 'sys.exception')}()"
    return [check(f"{handled} is not None", str(guard), handled)]


@dataclasses.dataclass(frozen=True, eq=False)
class AbcRegistryUnchanged(Guard):
    """`abc.get_cache_token() is token`: the token changes on every `ABC.register` call."""

    token: object
    priority = PRIORITY_OBJECT

    @classmethod
    def now(cls) -> AbcRegistryUnchanged:
        return cls(abc.get_cache_token())

    def __eq__(self, other: object) -> bool:
        return type(other) is AbcRegistryUnchanged and other.token is self.token

    def __hash__(self) -> int:
        return hash((AbcRegistryUnchanged, id(self.token)))

    def __str__(self) -> str:
        return "no abstract base class has registered a subclass since capture"


@emits(AbcRegistryUnchanged)
def _abc_registry_unchanged(guard: AbcRegistryUnchanged, ctx: EmitContext) -> list:
    token = f"{ctx.constant(abc.get_cache_token, 'abc_cache_token', 'abc.get_cache_token')}()"
    return [check(must_be(token, ctx.constant(guard.token, "abc_token_seen", "the token seen at capture")), str(guard), token)]
