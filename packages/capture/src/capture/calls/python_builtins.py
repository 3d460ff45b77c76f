"""Rules for Python's builtins when their arguments are symbolic: `len`, `isinstance`,
`getattr`, `id`, `abs`, `round`, scalar constructors, `super()`. Iteration builtins and
reductions are in iteration_builtins, the container constructors in container_builtins,
`globals()`/`locals()` and friends in frame_reads."""

from __future__ import annotations

import abc
import builtins
import functools
import math
import operator
import types

import torch

from ..errors import Unsupported, UserException
from ..guard_kinds import AbcRegistryUnchanged
from ..operators import binary, unary
from ..sources import HeldSource
from ..values.base import NotConstant, Value
from ..values.callables import BuiltinValue, MethodValue, NativeMethodValue
from ..values.class_lookup import MISSING, dunder_value, lookup_static, python_dunder
from ..values.constant import ConstantValue
from ..values.containers import SliceValue, TupleValue
from ..values.deleted import DELETED
from ..values.exceptions import ExceptionValue, raise_user_error
from ..values.factory import constant_args, evaluate_constant_operation
from ..values.functions import InlinableFunction
from ..values.functools_values import PartialValue
from ..values.new_objects import NewObjectValue
from ..values.object_ids import ObjectId, ObjectIdValue
from ..values.classes import ClassValue, SuperValue
from ..values.objects import ObjectValue, type_of
from ..values.symbolic import SymValue, concrete, specialized_constant
from ..values.tensor import TensorValue
from .dispatch import evaluated_on_values
from .number_of_tensor import number_of_tensor
from .registry import construct_rule, rule


def _constant(value: Value, what: str):
    try:
        return concrete(value)
    except NotConstant:
        raise Unsupported(f"{what} must be a Python constant, got {value.describe()}") from None


@rule(builtins.__build_class__)
def _build_class(frame, args, kwargs):
    # A class body runs once, natively, at the graph break this makes: the class it creates
    # (methods, properties, dunders, bases) is then an input of the rest of the function.
    name = args[1].as_python_constant() if len(args) > 1 and args[1].is_python_constant() else "?"
    raise Unsupported(
        f"class statement `class {name}` (capture does not run class bodies)",
        hint="define the class outside the compiled function; without fullgraph=True the class is made between two graphs",
    )


@rule(hash)
def _hash(frame, args, kwargs):
    (obj,) = args
    if not obj.is_python_constant():
        try:
            cls = obj.python_type()
        except Unsupported:
            cls = None
        method = python_dunder(cls, "__hash__") if cls is not None else None
        if method is not None:
            # A __hash__ written in Python (a frozen dataclass's) is traced; its result is
            # turned into a hash as CPython's slot does (ints only, -1 taken by errors).
            result = dunder_value(frame, obj, cls, "__hash__", method).call(frame, [obj], {})
            return evaluated_on_values(frame, _hash_of_result, [result], {})
    return evaluated_on_values(frame, hash, args, kwargs)


def _hash_of_result(value):
    """What hash() makes of the value a Python __hash__ returned (Objects/typeobject.c's
    slot_tp_hash)."""
    if not isinstance(value, int):
        raise TypeError("__hash__ method should return an integer")
    if -(2**63) <= value < 2**63:
        return -2 if value == -1 else int(value)
    return hash(value)


@rule(len)
def _len(frame, args, kwargs):
    (obj,) = args
    return obj.length(frame)


@rule(isinstance)
def _isinstance(frame, args, kwargs):
    obj, classes_value = args
    # Evaluated as the program would: `isinstance(x, 2)` is the program's TypeError.
    classes = _constant(classes_value, "isinstance()'s second argument")
    if any(_own_instancecheck(cls) is not None for cls in _class_tree(classes)):
        return ConstantValue(_isinstance_by_hooks(frame, obj, classes_value, classes))
    _guard_abc_answer(frame, classes)
    return evaluate_constant_operation(frame, issubclass, (obj.python_type(), classes))


def _own_instancecheck(cls):
    """The metaclass's __instancecheck__ written in Python (not type's, not ABCMeta's, which
    answers as issubclass of the instance's type): it may look at the instance itself.
    torch's own (nn.Parameter's, which also admits tensors flagged `_is_param`) keep being
    answered by the type, as before: tracing it broke the graph of every Module.__setattr__."""
    if not isinstance(cls, type):
        return None
    method = python_dunder(type(cls), "__instancecheck__")
    if method is None or method is abc.ABCMeta.__instancecheck__ or method.__module__.startswith("torch."):
        return None
    return method


def _isinstance_by_hooks(frame, obj, classes_value, classes) -> bool:
    """isinstance() as Objects/abstract.c's object_recursive_isinstance: a tuple is any of its
    items; an instance of exactly the class is one without asking; otherwise the metaclass's
    __instancecheck__ answers (traced), or issubclass of the instance's type."""
    if isinstance(classes, tuple):
        items = classes_value.unpack(frame)
        return any(_isinstance_by_hooks(frame, obj, item, item.as_python_constant()) for item in items)
    if obj.python_type() is classes:
        return True
    method = _own_instancecheck(classes)
    if method is None:
        _guard_abc_answer(frame, classes)
        return evaluate_constant_operation(frame, issubclass, (obj.python_type(), classes)).as_python_constant()
    answer = dunder_value(frame, classes_value, type(classes), "__instancecheck__", method).call(frame, [classes_value, obj], {})
    return answer.truth(frame)


@rule(issubclass)
def _issubclass(frame, args, kwargs):
    cls, classes = args
    constants = (_constant(cls, "issubclass()'s first argument"), _constant(classes, "issubclass()'s second argument"))
    _guard_abc_answer(frame, constants[1])
    return evaluate_constant_operation(frame, issubclass, constants)


def _guard_abc_answer(frame, classes) -> None:
    """An answer against an abstract base class holds only until some ABC registers another
    subclass (what `Base.register(C)` changes is no type the trace guards)."""
    if any(isinstance(cls, abc.ABCMeta) for cls in _class_tree(classes)):
        frame.session.add_guard(AbcRegistryUnchanged.now())


def _class_tree(classes):
    """The classes of isinstance's second argument: a class, a union, or tuples of those."""
    if isinstance(classes, tuple):
        for item in classes:
            yield from _class_tree(item)
    elif isinstance(classes, types.UnionType):
        yield from _class_tree(classes.__args__)
    else:
        yield classes


@construct_rule(type)
def _type(frame, cls, args, kwargs):
    if len(args) != 1:
        raise Unsupported("creating a class with type(name, bases, dict)")
    return type_of(frame, args[0])


@rule(callable)
def _callable(frame, args, kwargs):
    (obj,) = args
    if isinstance(obj, (BuiltinValue, InlinableFunction, MethodValue, NativeMethodValue, ClassValue, PartialValue)):
        return ConstantValue(True)
    # CPython asks the type for a call slot: `__call__` somewhere in the MRO of the type, not
    # `hasattr(cls, "__call__")` (every class has one, the metaclass's, for constructing).
    return ConstantValue(lookup_static(obj.python_type(), "__call__")[0] is not MISSING)


def _attribute_name(frame, value: Value, what: str) -> str:
    name = _constant(value, f"{what}'s attribute name")
    if not isinstance(name, str):
        raise_user_error(frame, TypeError, f"attribute name must be string, not {type(name).__name__!r}")
    return name


@rule(getattr)
def _getattr(frame, args, kwargs):
    obj, name, *default = args
    name = _attribute_name(frame, name, "getattr()")
    if not default:
        return obj.get_attr(frame, name)
    try:
        return obj.get_attr(frame, name)
    except UserException as exc:
        if issubclass(exc.value.python_type(), AttributeError):
            return default[0]
        raise


@rule(hasattr)
def _hasattr(frame, args, kwargs):
    obj, name = args
    return ConstantValue(obj.has_attr(frame, _attribute_name(frame, name, "hasattr()")))


@rule(setattr)
def _setattr(frame, args, kwargs):
    obj, name, value = args
    obj.set_attr(frame, _attribute_name(frame, name, "setattr()"), value)
    return ConstantValue(None)


@rule(delattr)
def _delattr(frame, args, kwargs):
    obj, name = args
    obj.del_attr(frame, _attribute_name(frame, name, "delattr()"))
    return ConstantValue(None)


@rule(object.__setattr__)
def _object_setattr(frame, args, kwargs):
    obj, name, value = args
    name = _constant(name, "attribute name")
    if isinstance(obj, NewObjectValue):
        obj.store(name, value)
    else:
        frame.session.side_effects.store_attr(obj, name, value, raw=True)
    return ConstantValue(None)


@rule(object.__delattr__)
def _object_delattr(frame, args, kwargs):
    obj, name = args
    name = _constant(name, "attribute name")
    if not isinstance(obj, ObjectValue):
        raise Unsupported(f"object.__delattr__ of {obj.describe()}")
    obj.delete_from_instance_dict(frame, name)
    return ConstantValue(None)


@rule(object.__getattribute__)
def _object_getattribute(frame, args, kwargs):
    """The attribute as `object` finds it, bypassing a class's own __getattribute__."""
    obj, name = args
    name = _constant(name, "attribute name")
    if isinstance(obj, ObjectValue):
        pending = frame.session.side_effects.pending_attr(obj.obj, name)
        if pending is DELETED:
            raise_user_error(frame, AttributeError, f"{obj.describe()} has no attribute {name!r}")
        if pending is not None:
            return pending  # written earlier in this trace, replayed after the graph
        try:
            value = object.__getattribute__(obj.obj, name)
        except AttributeError:
            raise_user_error(frame, AttributeError, f"{obj.describe()} has no attribute {name!r}")
        return frame.session.wrap(value, obj.attribute_source(name))
    if isinstance(obj, NewObjectValue):
        return obj.generic_get_attr(frame, name, getattr_hook=False)
    return obj.get_attr(frame, name)


@rule(object.__init__)
def _object_init(frame, args, kwargs):
    """`super().__init__()` reaching object: nothing to do (extra arguments are an error)."""
    if len(args) > 1 or kwargs:
        raise_user_error(frame, TypeError, "object.__init__() takes exactly one argument (the instance to initialize)")
    return ConstantValue(None)


@rule(types.FunctionType.__get__, accepts="(self, instance, owner=None, /)")
def _bind_function(frame, args, kwargs):
    """`f.__get__(obj, cls)`: `f` bound to `obj` as a method (`f` itself for obj None)."""
    fn, instance = args[0], args[1]
    if instance.is_python_constant() and instance.as_python_constant() is None:
        return fn
    return MethodValue(fn, instance)


@rule(id)
def _id(frame, args, kwargs):
    (obj,) = args
    key = _object_id_key(obj)
    if key is not None:
        # Capture tracks this object by its value, not by a real object of this call: the
        # number stays symbolic (capture.values.object_ids), spelled `id(obj)` if it escapes.
        frame.session.keepalive(key.obj)
        return ObjectIdValue(obj, key)
    if getattr(obj, "identity", None) is None:
        raise Unsupported(f"id() of {obj.describe()}")
    identity = obj.identity()
    if isinstance(identity, int):
        raise Unsupported(f"id() of {obj.describe()}")
    if obj.source is not None and not isinstance(obj.source, HeldSource):
        # The answer is this very object's: the entry serves only calls that bring it again.
        from guards import IdentityMatch

        frame.session.add_guard(IdentityMatch(obj.source, identity))
    return ConstantValue(id(identity))


def _object_id_key(obj: Value) -> ObjectId | None:
    """What `id(obj)` is keyed by when its number stays symbolic: containers and objects the
    trace made or read, objects passed in, tensors, constants; None for objects held by
    identity (functions, classes), whose number is a constant."""
    if isinstance(obj, TensorValue):
        return ObjectId(obj.fake, obj.real)
    if isinstance(obj, ConstantValue):
        return ObjectId(obj.value)
    if isinstance(obj, (TupleValue, SymValue)):
        return ObjectId(obj)
    identity = getattr(obj, "identity", None)
    if identity is not None and isinstance(identity(), Value):
        return ObjectId(identity())
    if isinstance(obj, ObjectValue) and obj.source is not None and not isinstance(obj.source, HeldSource):
        # An object passed in: the number is `id(<source>)`, which needs no identity guard
        # (a model's config may be another object of the same structure on the next call).
        return ObjectId(obj.obj)
    return None


@rule(abs)
def _abs(frame, args, kwargs):
    return unary(frame, "abs", args[0])


def _rounded_to_int(fn):
    """floor/ceil/trunc of a symbolic number stay symbolic, as int() and round() do: `math.ceil(n / 4)`
    serves every size with one graph, as torch.compile's does (specialized, each size was a
    recompile). Of constants: evaluated now."""

    def handler(frame, args, kwargs):
        (value,) = args
        if isinstance(value, SymValue):
            return frame.session.graph.call_function(frame, fn, [value], {})
        return evaluated_on_values(frame, fn, args, kwargs)

    return handler


for _fn in (math.floor, math.ceil, math.trunc):
    rule(_fn, accepts="(x, /)")(_rounded_to_int(_fn))


@rule(round, accepts="(number, /, ndigits=None)")
def _round(frame, args, kwargs):
    """round(n) of a symbolic number stays symbolic (half to even, as Python's); rounding to
    decimal digits, or anything else, is evaluated on the value (a symbolic one guarded)."""
    number, ndigits = args[0], (args[1:] or [kwargs.get("ndigits", ConstantValue(None))])[0]
    if isinstance(number, SymValue) and ndigits.is_python_constant() and ndigits.as_python_constant() is None:
        return frame.session.graph.call_function(frame, round, [number], {})
    return evaluated_on_values(frame, round, args, kwargs)


# --- scalars, slices and other constructors ---------------------------------------------


@construct_rule(int, accepts="(x=_, /, base=_)")
@construct_rule(float, bool, accepts="(x=_, /)")
@construct_rule(str, accepts="(object=_, /)")
def _scalar(frame, cls, args, kwargs):
    if not args:
        return ConstantValue(cls())
    if len(args) > 1 or kwargs:  # int(text, base): of constants only
        constants = constant_args(args, kwargs)
        if constants is None:
            raise Unsupported("int() with a base, of values that are not Python constants")
        return evaluate_constant_operation(frame, lambda: cls(*constants[0], **constants[1]), ())
    (value,) = args
    if value.is_python_constant():
        return evaluate_constant_operation(frame, cls, (value.as_python_constant(),))
    if cls is bool:
        return ConstantValue(value.truth(frame))

    if isinstance(value, SymValue):
        if cls is value.python_type():
            return value
        if cls in (int, float):
            # A symbolic number stays symbolic: int() truncates, float() converts, in the graph.
            convert = {int: torch.sym_int, float: torch.sym_float}[cls]
            return frame.session.graph.call_function(frame, convert, [value], {})
        # str(): the text of one value, guarded to stay that value.

        return evaluate_constant_operation(frame, cls, (value.specialize(),))

    if cls is str and isinstance(value, ExceptionValue) and (text := value.text()) is not None:
        return ConstantValue(text)
    if cls is str:
        # A tuple of sizes (`str(x.shape)`, logged often): the text of its values, each
        # specialized (guarded), as repr() and f-strings do.
        try:
            return evaluate_constant_operation(frame, str, (specialized_constant(value),))
        except NotConstant:
            pass
    number = number_of_tensor(frame, cls, value)
    if number is not None:
        return number
    if isinstance(value, TensorValue):
        raise Unsupported(
            f"{cls.__name__}() of a tensor reads its data",
            hint="keep the value as a tensor, or move this outside the compiled function",
        )
    method = {int: "__int__", float: "__float__", str: "__str__"}[cls]
    raise Unsupported(f"{cls.__name__}() of {value.describe()} ({method})")


@construct_rule(slice)
def _slice(frame, cls, args, kwargs):
    parts = list(args) + [ConstantValue(None)] * (3 - len(args))
    if len(args) == 1:
        parts = [ConstantValue(None), args[0], ConstantValue(None)]
    if all(p.is_python_constant() for p in parts):
        return ConstantValue(slice(*(p.as_python_constant() for p in parts)))
    return SliceValue(*parts)


@construct_rule(super)
def _super(frame, cls, args, kwargs):
    if len(args) == 1:
        raise Unsupported("super() with one argument (an unbound super object)")
    if args:
        klass, obj = args
        return SuperValue(_constant(klass, "super()'s class"), obj)
    # Zero-argument super(): the class comes from the __class__ cell the compiler creates,
    # the instance from the first argument of the calling function.
    cell = frame.cells.get("__class__")
    code = frame.code
    if cell is None or code.co_argcount == 0:
        raise Unsupported("super() without arguments outside a method")
    first = code.co_varnames[0]
    obj = frame.local(first)
    if obj is None and first in frame.cells:
        obj = frame.cells[first].load(frame, first)
    return SuperValue(_constant(cell.load(frame, "__class__"), "__class__"), obj)


@construct_rule(functools.partial)
def _partial(frame, cls, args, kwargs):
    func, *bound = args
    if isinstance(func, PartialValue):
        # partial(partial(f, a), b) is partial(f, a, b), as CPython flattens it.
        return PartialValue(func.func, [*func.args, *bound], {**func.kwargs, **kwargs})
    return PartialValue(func, bound, kwargs)


@construct_rule(object)
def _object(frame, cls, args, kwargs):
    return NewObjectValue(object)


@rule(print)
def _print(frame, args, kwargs):
    raise Unsupported(
        "print() inside a compiled function",
        hint="the graph breaks here (print runs between two graphs); remove the print, or move it "
        "outside the compiled function, to keep one graph",
    )


# operator.* called as functions behave like the instructions they stand for.
def _operator_rule(symbol):
    def handler(frame, args, kwargs):
        return binary(frame, symbol, *args)

    return handler


for _symbol, _fn in {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
}.items():  # fmt: skip
    rule(_fn)(_operator_rule(_symbol))


@rule(operator.getitem)
def _getitem(frame, args, kwargs):
    obj, key = args
    return obj.get_item(frame, key)


@rule(operator.neg)
def _neg(frame, args, kwargs):
    return unary(frame, "-", args[0])


@rule(operator.not_)
def _not(frame, args, kwargs):
    return ConstantValue(not args[0].truth(frame))


@construct_rule(types.MethodType, accepts="(function, instance, /)")
def _method_type(frame, cls, args, kwargs):
    # `MethodType(fn, obj)`: what ExitStack does to keep a context manager's bound __exit__.

    function, instance = args
    return MethodValue(function, instance)
