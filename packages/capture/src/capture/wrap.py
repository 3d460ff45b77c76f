"""Wrapping Python objects into values, with the guards that make the wrapping valid.

`wrap(session, obj, source)` picks a rule by the object's type (the most specific class in its
MRO that has a rule). With a source, the rule also adds the guards that make what capture
assumes about the object true on every cache hit: tensors their metadata, constants their
value, functions/classes/modules their identity, containers their type and length or keys.
Without a source (objects computed while tracing) nothing is guarded.
"""

from __future__ import annotations

import collections
import enum
import functools
import inspect
import operator
import sys
import types
import weakref
from collections import OrderedDict
from typing import Any, Callable

import numpy as np
import torch
from fake_tensor import UnsupportedTensorKindError, check_tensor_kind
from fake_tensor.registries import register_once
from guards import kinds
from guards.sources import (AttrSource, SetOrderSource, DictItemSource, ItemSource, LocalSource, WeakrefReferentSource, dict_key_source,
                            dict_value_source, has_literal_spelling)
from torch import nn

from .guard_kinds import GlobalModuleHooksMatch, SameObject
from .calls.dict_subclasses import check_dict_subclass
from .calls.functional import operator_callable
from .values.py_modules import PyModuleValue, SysModulesValue
from .calls.numpy_table import NUMPY_CALLABLE_TYPES, is_numpy_callable
from .calls.registry import rule_for
from .calls.torch_ops import is_torch_operation
from .errors import Unsupported
from .markers import is_allowed_in_graph, is_compiled, is_disabled, runs_natively
from .module_call import GLOBAL_HOOK_DICTS
from .sources import HeldSource
from .type_keys import get_by_type
from .values.base import Value
from .values.changing_number import SIZE_TUPLES, holds_symbolic_number, is_symbolic_number, symbolic_number
from .values.collection_types import DefaultDictValue, DequeValue
from .values.constant import ConstantValue, is_constant_type
from .values.containers import DictValue, ListValue, TupleValue
from .values.key_hashes import guard_stored_hashes, hash_is_fixed
from .values.sets import SetValue
from .values.context import AutocastContext, GradModeContext, InferenceModeContext
from .values.callables import BuiltinValue, MethodValue
from .values.functions import FunctionValue
from .values.modules import ModuleValue
from .values.new_objects import ModelOutputValue, is_model_output
from .values.numpy_arrays import wrap_ndarray, wrap_numpy_constant
from .values.functools_values import CachedFunctionValue, PartialValue
from .values.classes import ClassValue
from .values.objects import ObjectValue, WeakReferenceValue
from .values.tensor import TensorKey, TensorValue, register_input_key

RULES: dict[type, Callable] = {}


def wraps(*types_: type):
    def register(rule):
        return register_once(RULES, types_, rule, "wrap rules")

    return register


def wrap(session, obj: Any, source) -> Value:
    # np.float64 is a Python float too, but prints (in guards, graphs) as numpy: its own rule.
    # Checks by type (see is_constant_type): an object's own __getattribute__ runs only for
    # reads the program makes.
    if (is_constant_type(obj) or issubclass(type(obj), enum.Enum)) and not issubclass(type(obj), np.generic):
        return _constant(session, obj, source)
    known = session.wrapped.get(id(obj))
    if known is not None and known[0] is obj:
        value = known[1]
        if value.source is None and source is not None and isinstance(obj, (dict, list, set)):
            # First read where no input leads (torch's global hook dict, read unguarded by
            # capture's own call_with_forward_hooks), now reached by a path: writes into it
            # (`handle.remove()` deleting the hook) are replayed through that path.
            value.source = source
        elif _names_differ(source, value.source):
            # One object reached by two paths (`f(x, x)`, tied weights) is one value, read
            # from the first path: later calls must bring one object on both again.
            session.add_guard(SameObject(source, value.source))
        return value
    if obj is sys.modules:
        # Guarded one name at a time as the program reads it (calls.imports), never whole.
        if source is not None:
            _guard(session, kinds.IdentityMatch(source, obj))
        value = SysModulesValue(source)
        session.wrapped[id(obj)] = (obj, value)
        return value
    for cls in type(obj).__mro__:
        rule = get_by_type(RULES, cls)
        if rule is not None:
            value = rule(session, obj, source)
            break
    else:
        raise AssertionError("object has a rule")
    session.wrapped[id(obj)] = (obj, value)
    return value


def _names_differ(source, known) -> bool:
    if source is None or known is None or source == known:
        return False
    return not isinstance(source, HeldSource) and not isinstance(known, HeldSource)


def _guard(session, guard) -> None:
    session.add_guard(guard)


def _constant(session, obj, source) -> Value:
    if is_symbolic_number(session, obj, source):
        return symbolic_number(session, obj, source)
    if type(obj) in SIZE_TUPLES and holds_symbolic_number(session, obj, source):
        return _tuple(session, obj, source)
    if source is not None:
        if _guardable_constant(obj):
            _guard(session, kinds.ConstantMatch(source, obj))
        else:
            _guard(session, kinds.IdentityMatch(source, obj))
    if isinstance(obj, tuple) and type(obj) is tuple:
        return TupleValue([ConstantValue(item) for item in obj], source=source)
    return ConstantValue(obj, source)


_GUARDABLE_CONSTANTS = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device,
                        torch.layout, torch.memory_format, type(Ellipsis), type(NotImplemented))  # fmt: skip


def _guardable_constant(obj) -> bool:
    if isinstance(obj, enum.Enum) or type(obj) in _GUARDABLE_CONSTANTS:
        return True
    return type(obj) in (tuple, torch.Size) and all(_guardable_constant(x) for x in obj)


@wraps(torch.Tensor)
def _tensor(session, obj, source):
    if isinstance(obj, torch.nn.parameter.UninitializedTensorMixin):
        # A lazy module's first call materializes it: that call runs natively.
        raise Unsupported(
            f"{source or 'a tensor'} is an uninitialized parameter of a lazy module",
            hint="call the module once before compiling it (or the function calling it)",
        )
    if _own_torch_function(obj):
        # Such a subclass decides what its operations do and return (eager's results keep its
        # type, and its override may record or change calls): a compiled graph would run the
        # plain ops, and inductor's kernels would return plain tensors.
        raise Unsupported(
            f"{source or 'a tensor'} is a {type(obj).__qualname__}, a torch.Tensor subclass whose operations "
            "run its own __torch_function__",
            hint="the graph breaks where it is used, and its operations run natively",
        )
    try:
        check_tensor_kind(obj)
    except UnsupportedTensorKindError as err:
        raise Unsupported(f"{source or 'a tensor'}: {err}") from None
    if source is None:
        return session.graph.add_input(obj, session.hold(obj, "constant_tensor"))
    value = session.graph.add_input(obj, source, session.dynamic_dims_of(obj, source))
    # Symbolic sizes and strides are left to the shape guards.
    _guard(session, kinds.TensorMatch.of(source, obj, sizes=value.fake.shape, strides=value.fake.stride()))
    return value


def _own_torch_function(tensor: torch.Tensor) -> bool:
    """Whether `tensor` is of a subclass whose operations go through __torch_function__: any
    subclass but nn.Parameter's kind, which disables it (its operations return plain
    tensors). torch's default one returns the subclass; an override may do anything."""
    kind = type(tensor)
    return kind is not torch.Tensor and kind.__torch_function__ is not torch._C._disabled_torch_function_impl


wraps(np.ndarray)(wrap_ndarray)
wraps(np.generic, np.dtype, np.finfo, np.iinfo)(wrap_numpy_constant)


@wraps(object)
def _object(session, obj, source):
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
    return ObjectValue(obj, source)


@wraps(torch.optim.Optimizer)
def _optimizer(session, obj, source):
    # While compiling, torch.optim runs a step that is not `capturable` natively, between
    # graphs (its maybe_fallback), once its step counts live on the GPU, as a fused step's
    # always do. torch.compile makes every group whose parameters are all on the GPU and
    # have no state yet capturable for good (Dynamo's OptimizerVariable._set_capturable);
    # we do so for fused groups, the ones that need it: their state is created on the
    # device, and the step traces into one graph. (A foreach or for-loop step keeps its
    # counts on the CPU and traces as it is.)
    for group in obj.param_groups:
        params = group.get("params", [])
        if group.get("fused") and "capturable" in group and \
                all(p.device.type in ("cuda", "xpu") and p not in obj.state for p in params):
            group["capturable"] = True
    return _object(session, obj, source)


@wraps(nn.Module)
def _module(session, obj, source):
    if source is not None:
        if isinstance(source.root(), LocalSource):
            # A module the frame receives (`self` of a forward, and what it reaches) is
            # guarded by its type, not its identity, so that one entry serves every
            # instance of that structure (the 12 blocks of a GPT-2 whose forward breaks):
            # everything the trace reads from it is guarded where it is read (constants by
            # value, tensors by metadata, submodules by type), and parameters are graph
            # inputs read from the instance, as with torch.compile's inlined nn.Modules.
            _guard(session, kinds.TypeMatch(source, type(obj)))
        else:
            _guard(session, kinds.IdentityMatch(source, obj))
    return ModuleValue(obj, source)


@wraps(type)
def _class(session, obj, source):
    if source is not None:
        _guard(session, kinds.IdentityMatch(source, obj))
        # Its metaclass answers `cls()` and the class's truth; a custom one can be swapped
        # (`cls.__class__ = OtherMeta`) under the same class object (IdentityMatch then keeps it).
        _guard(session, kinds.TypeMatch(source, type(obj)))
        session.saw_class(obj, source)
    return ClassValue(obj, source)


@wraps(types.ModuleType)
def _python_module(session, obj, source):
    # Rebinding a module name is not something programs do between calls: not guarded.
    return PyModuleValue(obj, source)


def guard_function(session, obj: types.FunctionType, source, *, traced: bool = True) -> None:
    """The function at `source` is `obj`, or for a nested function one of its code; one the
    trace inlines still has the code that was traced (`f.__code__ = g.__code__` is allowed;
    one called natively runs whatever code it has)."""
    if obj.__code__.co_flags & inspect.CO_NESTED:
        # A function made by a `def` inside another function is a new object on every
        # run of that `def` (a closure rebuilt after a graph break, too): what is traced
        # is its code; its cells and defaults are read, and guarded, through the source.
        _guard(session, kinds.TypeMatch(source, types.FunctionType))
    else:
        _guard(session, kinds.IdentityMatch(source, obj))
        if not traced:
            return
    _guard(session, kinds.IdentityMatch(AttrSource(source, "__code__"), obj.__code__))


@wraps(types.FunctionType)
def _function(session, obj, source):
    # numpy's own Python functions are traced through their rule, or break the graph: never inlined.
    inlined = not (
        is_torch_operation(obj) or runs_natively(obj) or rule_for(obj) is not None or is_disabled(obj)
        or is_compiled(obj) or is_allowed_in_graph(obj) or is_numpy_callable(obj)
    )
    if source is not None:
        guard_function(session, obj, source, traced=inlined)
    return FunctionValue(obj, source) if inlined else BuiltinValue(obj, source)


@wraps(types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
       types.MethodWrapperType, types.ClassMethodDescriptorType, torch._ops.OpOverload,
       torch._ops.OpOverloadPacket, *NUMPY_CALLABLE_TYPES)  # fmt: skip
def _builtin(session, obj, source):
    owner = getattr(obj, "__self__", None)
    if isinstance(obj, (types.BuiltinMethodType, types.MethodWrapperType)) and owner is not None:
        if not isinstance(owner, (types.ModuleType, type)) and not is_constant_type(owner) and not is_torch_operation(obj):
            # A bound method of a container or object: the rule for the unbound method gets
            # the owner as its first argument, like any method call. (Not for a class's own
            # builtins, `tuple.__new__`, `dict.fromkeys`: the metaclass's method of that name,
            # `type.__new__`, is another function.)
            unbound = getattr(type(owner), obj.__name__, None)
            if unbound is not None:
                return MethodValue(BuiltinValue(unbound), session.wrap(owner, None))
    if source is not None:
        if isinstance(obj, types.BuiltinMethodType) and isinstance(owner, type):
            # A C classmethod read from its class (`chain.from_iterable`, `dict.fromkeys`) is a
            # new bound object on every read: what it is bound to is guarded instead.
            _guard(session, kinds.IdentityMatch(AttrSource(source, "__self__"), owner))
        else:
            _guard(session, kinds.IdentityMatch(source, obj))
    return BuiltinValue(obj, source)


@wraps(types.MethodType)
def _method(session, obj, source):
    from guards.sources import AttrSource

    func_source = AttrSource(source, "__func__") if source is not None else None
    self_source = AttrSource(source, "__self__") if source is not None else None
    return MethodValue(session.wrap(obj.__func__, func_source), session.wrap(obj.__self__, self_source))


def _item_source(source, key, index: int | None = None):
    """`source[key]`; where the key has no Python spelling (a dict keyed by devices and dtypes,
    as torch's `_group_tensors_by_device_and_dtype` returns), the dict's item at `index`:
    `d[list(d.keys())[index]]`. Without a source an item would be a constant of the entry,
    and a tensor in it the first call's tensor on every later call."""
    if source is None:
        return None
    try:
        return ItemSource(source, key)
    except TypeError:
        if index is None:
            raise
        return DictItemSource(source, dict_key_source(source, index))


@wraps(tuple)
def _tuple(session, obj, source):
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
        _guard(session, kinds.LengthMatch(source, len(obj)))
    items = [session.wrap(item, _item_source(source, i)) for i, item in enumerate(obj)]
    return TupleValue(items, source=source, python_cls=type(obj), real=obj)


@wraps(list)
def _list(session, obj, source):
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
        _guard(session, kinds.LengthMatch(source, len(obj)))
    session.keepalive(obj)
    # Known before its items are wrapped: a list may hold itself (`l.append(l)`).
    value = ListValue([], source=source)
    session.wrapped[id(obj)] = (obj, value)
    value.items.extend(session.wrap(item, _item_source(source, i)) for i, item in enumerate(obj))
    return value


@wraps(dict)
def _dict(session, obj, source):
    check_dict_subclass(type(obj), passed_in=True)
    if source is None and any(obj is hooks for hooks in GLOBAL_HOOK_DICTS.values()):
        # torch's global module hooks, read unguarded as a library's attribute (by
        # call_with_forward_hooks, compiled as a frame of its own): the entry holds while
        # the same hooks are registered.
        session.add_guard(GlobalModuleHooksMatch.now())
    if any(isinstance(key, torch.Tensor) for key in obj):
        return _dict_keyed_by_tensors(session, obj, source)
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
        _guard(session, kinds.DictKeysMatch(source, tuple(obj.keys())))
    guard_stored_hashes(session, obj, source)
    session.keepalive(obj)
    # Known before its values are wrapped: a dict may hold itself.
    wrapped = DictValue({}, source=source, python_cls=type(obj))
    session.wrapped[id(obj)] = (obj, wrapped)
    for index, (key, value) in enumerate(obj.items()):
        # A key that is an object (not a constant, which DictKeysMatch pins by value) is read
        # through its place, `list(d.keys())[i]`, like any input: what the trace reads of it
        # (`k.w`, `k` itself returned) is guarded. DictKeysMatch alone passes a key replaced by
        # an equal object (a dataclass equal on some fields), or one whose attributes changed.
        key_source = dict_key_source(source, index) if source is not None and not is_constant_type(key) else None
        # The value of a key whose hash is user code is read by position: a lookup would run
        # its __hash__ in the guard (DictLookupsHold keeps the key finding this entry).
        value_source = dict_value_source(source, index) if source is not None and not hash_is_fixed(key) else _item_source(source, key, index)
        wrapped.entries[key] = (session.wrap(key, key_source), session.wrap(value, value_source))
    return wrapped


def _dict_keyed_by_tensors(session, obj, source):
    """A dict passed in with tensors among its keys (an optimizer's `state`, keyed by its
    parameters). Torch hashes tensors by identity, so a key is named by its position,
    `list(d.keys())[i]`, and wrapped from there like any input: a tensor key is a tensor
    input (one object with the parameter that reaches it another way, guarded so), a
    constant key is guarded by value. Values are read through their key: `d[list(d.keys())[i]]`.
    """
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
        _guard(session, kinds.LengthMatch(source, len(obj)))
    session.keepalive(obj)
    entries = {}
    for index, (key, value) in enumerate(obj.items()):
        if not isinstance(key, torch.Tensor) and not has_literal_spelling(key):
            raise Unsupported(f"a dict passed in keyed by tensors and by {type(key).__name__} objects")
        key_source = dict_key_source(source, index) if source is not None else None
        key_value = session.wrap(key, key_source)
        if isinstance(key_value, TensorValue):
            register_input_key(session, key_value)
            hashed = TensorKey(key_value.fake)
            value_source = DictItemSource(source, key_source) if source is not None else None
        else:
            hashed = key
            value_source = _item_source(source, key, index)
        entries[hashed] = (key_value, session.wrap(value, value_source))
    return DictValue(entries, source=source, python_cls=type(obj))


@wraps(weakref.ref)
def _weak_reference(session, obj, source):
    """A weak reference (an lr scheduler's wrapper around `optimizer.step` holds one to the
    optimizer): calling it gives its referent, read through `ref()` on later calls."""
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
    referent_source = WeakrefReferentSource(source) if source is not None else None
    return WeakReferenceValue(obj, lambda: session.wrap(obj(), referent_source), source)


@wraps(set, frozenset)
def _set(session, obj, source):
    if not all(is_constant_type(item) for item in obj):
        raise Unsupported("sets of non-constant objects")
    if type(obj) not in (set, frozenset):
        raise Unsupported(f"an instance of the set subclass {type(obj).__qualname__}")
    if source is not None:
        # By contents: a set mutated between calls is the same object with other members.
        _guard(session, kinds.ConstantMatch(source, obj))
        # And by order: a set of the same members with another history iterates otherwise.
        _guard(session, kinds.ConstantMatch(SetOrderSource(source), list(obj)))
    return SetValue({item: ConstantValue(item) for item in obj}, source=source, python_cls=type(obj), table=set(obj), real=obj)


@wraps(functools.partial)
def _partial(session, obj, source):
    from guards.sources import AttrSource

    def part(name):
        return AttrSource(source, name) if source is not None else None

    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
        # Its items are guarded one by one below: which ones there are, too (a partial made
        # anew with one more argument or keyword calls the function otherwise).
        _guard(session, kinds.LengthMatch(part("args"), len(obj.args)))
        _guard(session, kinds.DictKeysMatch(part("keywords"), tuple(obj.keywords)))
    func = session.wrap(obj.func, part("func"))
    args = [session.wrap(a, _item_source(part("args"), i)) for i, a in enumerate(obj.args)]
    keywords = {k: session.wrap(v, _item_source(part("keywords"), k)) for k, v in obj.keywords.items()}
    return PartialValue(func, args, keywords, source)


@wraps(functools._lru_cache_wrapper)
def _lru_cached_function(session, obj, source):
    if source is not None:
        _guard(session, kinds.IdentityMatch(source, obj))
    return CachedFunctionValue(obj, source)


@wraps(operator.itemgetter, operator.attrgetter, operator.methodcaller)
def _operator_callable(session, obj, source):
    # Its arguments come back from __reduce__ (methodcaller's keywords in a partial); the
    # identity guard keeps them those of this object.
    if source is not None:
        _guard(session, kinds.IdentityMatch(source, obj))
    maker, args = obj.__reduce__()[:2]
    kwargs = {}
    if isinstance(maker, functools.partial):
        maker, args, kwargs = maker.func, (*maker.args, *args), maker.keywords
    return operator_callable(maker, [session.wrap(a, None) for a in args], {k: session.wrap(v, None) for k, v in kwargs.items()})


@wraps(collections.deque)
def _deque(session, obj, source):
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
        _guard(session, kinds.LengthMatch(source, len(obj)))
        _guard(session, kinds.ConstantMatch(AttrSource(source, "maxlen"), obj.maxlen))
    session.keepalive(obj)
    items = [session.wrap(item, _item_source(source, i)) for i, item in enumerate(obj)]
    return DequeValue(items, obj.maxlen, source=source)


@wraps(collections.defaultdict)
def _defaultdict(session, obj, source):
    value = _dict(session, obj, source)
    factory = session.wrap(obj.default_factory, AttrSource(source, "default_factory") if source is not None else None)
    return DefaultDictValue(value.entries, factory, source=source, python_cls=type(obj))


@wraps(OrderedDict)
def _ordered_dict(session, obj, source):
    if is_model_output(type(obj)):
        return _model_output(session, obj, source)
    return _dict(session, obj, source)


def _model_output(session, obj, source):
    """An HF ModelOutput passed in: a ModelOutputValue over its fields, each read (and
    guarded) through its own attribute."""
    import dataclasses

    from guards.sources import AttrSource

    keys = list(obj.keys())
    field_names = [field.name for field in dataclasses.fields(obj)]
    names = field_names + [k for k in keys if k not in field_names]
    # Its keys are in insertion order (a key set after construction comes last) and each
    # key's value is also its attribute; a None assigned to a field leaves the dict's old value.
    if any(not isinstance(k, str) or obj.__dict__.get(k, obj) is not OrderedDict.__getitem__(obj, k) for k in keys):
        raise Unsupported(f"a {type(obj).__name__} passed in whose dict entries differ from its attributes")
    if source is not None:
        _guard(session, kinds.TypeMatch(source, type(obj)))
        _guard(session, kinds.DictKeysMatch(source, tuple(keys)))
    fields = {}
    for name in names:
        field_source = AttrSource(source, name) if source is not None else None
        fields[name] = session.wrap(getattr(obj, name), field_source)
    value = ModelOutputValue(type(obj), fields, keys)
    value.source = source
    return value


@wraps(torch.no_grad, torch.enable_grad)
def _grad_mode_manager(session, obj, source):
    return GradModeContext(isinstance(obj, torch.enable_grad), type(obj))


@wraps(torch.inference_mode)
def _inference_mode_manager(session, obj, source):
    return InferenceModeContext(obj.mode)


@wraps(torch.autocast)
def _autocast_manager(session, obj, source):
    return AutocastContext(obj.device, obj.fast_dtype, obj._enabled, obj._cache_enabled)
