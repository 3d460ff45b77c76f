"""Python's operators on symbolic values: `binary`, `inplace`, `compare`, `unary`, `contains`
and `identical` (`is`). Tensors make graph nodes (`operator.add(x, y)`), constants fold now,
sequences concatenate symbolically, and user classes' operator methods are inlined."""

from __future__ import annotations

import collections
import enum
import operator

import torch
from guards.kinds import IdentityMatch

from .errors import Unsupported
from .values.base import NotConstant, Value
from .values.constant import ConstantValue
from .values.exceptions import raise_user_error
from .values.collection_types import DequeValue
from .values.containers import DictValue, DictViewValue, ListValue, SequenceValue, TupleValue, key_of
from .values.iterators import IteratorValue
from .values.sets import SetValue, real_operand, set_from_operation
from .values.factory import evaluate_constant_operation
from .values.new_objects import ModelOutputValue, NewObjectValue
from .values.numpy_arrays import NdarrayValue, numpy_operator
from .values.objects import ObjectValue
from .values.object_ids import ObjectIdValue
from .values.py_modules import SysModulesValue
from .values.class_lookup import dunder_value, lookup_static, python_dunder
from .values.symbolic import SymValue, concrete, sequence_index, specialized_constant
from .values.tensor import TensorValue

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
    ">>": operator.rshift,
}  # fmt: skip
INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
    "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
    ">>=": operator.irshift,
}  # fmt: skip
COMPARE = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
    ">": operator.gt, ">=": operator.ge,
}  # fmt: skip
UNARY = {"-": operator.neg, "+": operator.pos, "~": operator.invert, "abs": operator.abs}

_DUNDERS = {
    "+": ("__add__", "__radd__"), "-": ("__sub__", "__rsub__"), "*": ("__mul__", "__rmul__"),
    "/": ("__truediv__", "__rtruediv__"), "//": ("__floordiv__", "__rfloordiv__"),
    "%": ("__mod__", "__rmod__"), "**": ("__pow__", "__rpow__"), "@": ("__matmul__", "__rmatmul__"),
    "&": ("__and__", "__rand__"), "|": ("__or__", "__ror__"), "^": ("__xor__", "__rxor__"),
    "<<": ("__lshift__", "__rlshift__"), ">>": ("__rshift__", "__rrshift__"),
    "<": ("__lt__", "__gt__"), "<=": ("__le__", "__ge__"), ">": ("__gt__", "__lt__"),
    ">=": ("__ge__", "__le__"), "==": ("__eq__", "__eq__"), "!=": ("__ne__", "__ne__"),
}  # fmt: skip


_SET_IN_PLACE = {
    "|=": set.update, "&=": set.intersection_update, "-=": set.difference_update, "^=": set.symmetric_difference_update,
}  # fmt: skip


def is_graph_value(value: Value) -> bool:
    """Values whose operations become graph nodes: tensors and symbolic sizes."""
    return isinstance(value, (TensorValue, SymValue))


def _sequence_items(value: Value) -> list[Value] | None:
    if isinstance(value, SequenceValue):
        return value.items
    if isinstance(value, ConstantValue) and isinstance(value.value, tuple):
        return [ConstantValue(v) for v in value.value]
    return None


def _sequence_kind(value: Value) -> type | None:
    cls = value.python_type()
    return next((kind for kind in (collections.deque, list, tuple) if issubclass(cls, kind)), None)


def _tuple_result_cls(*operands: Value) -> type:
    """torch.Size's + and * give a torch.Size, whichever side it is on; other tuples give tuple."""
    return torch.Size if any(_python_cls_or_none(v) is torch.Size for v in operands) else tuple


def _python_cls_or_none(value: Value) -> type | None:
    try:
        return value.python_type()
    except Unsupported:
        return None


def _call_dunder(frame, cls: type, name: str, left: Value, right: Value) -> Value | None:
    """`left.name(right)` where `cls` writes `name` in Python; None where it does not or the
    method answers NotImplemented. object's own `__ne__` inverts a Python `__eq__` (a
    dataclass's `a != b`), as CPython's does."""
    method = python_dunder(cls, name)
    if method is None and name == "__ne__" and lookup_static(cls, "__ne__")[0] is object.__ne__:
        equal = _call_dunder(frame, cls, "__eq__", left, right)
        return None if equal is None else ConstantValue(not equal.truth(frame))
    if method is None:
        return None
    result = dunder_value(frame, left, cls, name, method).call(frame, [left, right], {})
    return None if isinstance(result, ConstantValue) and result.value is NotImplemented else result


def _has_dunder(cls: type, name: str) -> bool:
    return python_dunder(cls, name) is not None or (name == "__ne__" and python_dunder(cls, "__eq__") is not None)


def _try_user_dunder(frame, symbol: str, a: Value, b: Value) -> Value | None:
    """`a <symbol> b` through the operands' Python operator methods, in CPython's order: the
    right operand's reflected method first where its class is a proper subclass of the
    left's (for arithmetic, only where it overrides it), then the left's forward method, then
    the right's reflected one. Arithmetic never tries the reflected method of an operand of
    the left's own type (`A() + A()` with a NotImplemented `__add__` is a TypeError, not
    `__radd__`); comparisons do (`__eq__` both ways). None where every method declined."""
    forward, reflected = _DUNDERS[symbol]
    comparison = symbol in COMPARE
    cls_a, cls_b = _python_cls_or_none(a), _python_cls_or_none(b)
    calls = []
    if cls_a is not None and _has_dunder(cls_a, forward):
        calls.append((cls_a, forward, a, b))
    if cls_b is not None and (comparison or cls_b is not cls_a) and _has_dunder(cls_b, reflected):
        subclass_first = cls_a is not None and cls_b is not cls_a and issubclass(cls_b, cls_a) and (
            comparison or lookup_static(cls_b, reflected)[0] is not lookup_static(cls_a, reflected)[0]
        )
        calls.insert(0 if subclass_first else len(calls), (cls_b, reflected, b, a))
    for cls, name, left, right in calls:
        result = _call_dunder(frame, cls, name, left, right)
        if result is not None:
            return result
    return None


def _stand_in(value: Value):
    """A plain number of a symbolic number's type, for answers that do not depend on its value."""
    return {bool: True, int: 1, float: 1.0}[value.python_type()]


def _number_against_other(frame, op, a: Value, b: Value) -> Value | None:
    """A symbolic number against a constant whose answer (or error) is the same for every value
    of the number: one that is no number (`n < 'a'` is TypeError naming int, not SymInt; `n ==
    None` is False), or a division by zero (`n // 0`). Computed on a stand-in of its type, so
    the program gets CPython's own answer and words."""
    pairs = ((a, b), (b, a))
    for sym, other in pairs:
        if isinstance(sym, SymValue) and isinstance(other, ConstantValue):
            value = other.value
            dividing_by_zero = other is b and op in (operator.truediv, operator.floordiv, operator.mod) and (
                isinstance(value, (int, float)) and value == 0
            )
            if dividing_by_zero or not isinstance(value, (int, float, complex)):
                operands = (_stand_in(a), value) if sym is a else (value, _stand_in(b))
                if dividing_by_zero or op in COMPARE.values():
                    return evaluate_constant_operation(frame, op, operands)
                # Arithmetic with a non-number: a TypeError for one int is one for every int
                # (`n + 'a'`), raised with int's words; one that works (`n * 'ab'`) depends
                # on the value and is left to the caller.
                try:
                    op(*operands)
                except TypeError:
                    evaluate_constant_operation(frame, op, operands)
    return None


def _repeat_count(frame, count: Value) -> int:
    """The int a sequence is repeated by (CPython's sequence repeat takes `__index__`): an
    int, a size (specialized, guarded), or an object with its own __index__ (traced); any
    other type is the program's TypeError."""
    kind = count.python_type()
    if not issubclass(kind, int) and not hasattr(kind, "__index__"):
        raise_user_error(frame, TypeError, f"can't multiply sequence by non-int of type '{kind.__name__}'")
    return sequence_index(frame, count)


def _is_user_object(value: Value) -> bool:
    """An object of a class the program wrote (made in the traced code or passed in)."""
    if not isinstance(value, (NewObjectValue, ObjectValue)):
        return False
    module = getattr(value.python_type(), "__module__", None) or ""
    return not module.startswith(("torch", "numpy"))


def binary(frame, symbol: str, a: Value, b: Value) -> Value:
    if isinstance(a, NdarrayValue) or isinstance(b, NdarrayValue):
        return numpy_operator(frame, BINARY[symbol], a, b)
    if isinstance(a, SymValue) or isinstance(b, SymValue):
        answer = _number_against_other(frame, BINARY[symbol], a, b)
        if answer is not None:
            return answer
    if is_graph_value(a) != is_graph_value(b) and _is_user_object(b if is_graph_value(a) else a):
        # A size or tensor with a user object (`Bits(1) << n`, `x * Scale(3)`): the object's
        # own methods answer, as int's and Tensor's decline the unknown type.
        result = _try_user_dunder(frame, symbol, a, b)
        if result is not None:
            return result
    if is_graph_value(a) or is_graph_value(b):
        return frame.session.graph.call_function(frame, BINARY[symbol], [a, b], {})
    if a.is_python_constant() and b.is_python_constant() and _both_plain(a, b):
        return evaluate_constant_operation(frame, BINARY[symbol], (a.as_python_constant(), b.as_python_constant()))
    left, right = _sequence_items(a), _sequence_items(b)
    if symbol == "+" and left is not None and right is not None and _sequence_kind(a) is _sequence_kind(b):
        if isinstance(a, DequeValue):
            return a.with_items(left + right)
        if isinstance(a, ListValue) and isinstance(b, ListValue):
            return ListValue(left + right)
        return TupleValue(left + right, python_cls=_tuple_result_cls(a, b))
    if symbol == "*" and (left is not None) != (right is not None):
        items, count = (left, b) if left is not None else (right, a)
        if _is_user_object(count):
            # The object's own __mul__/__rmul__ answers first; the repetition is the fallback.
            result = _try_user_dunder(frame, symbol, a, b)
            if result is not None:
                return result
        times = _repeat_count(frame, count)
        sequence = a if left is not None else b
        if isinstance(sequence, DequeValue):
            return sequence.with_items(items * times)
        return ListValue(items * times) if isinstance(sequence, ListValue) else TupleValue(items * times, python_cls=_tuple_result_cls(sequence))
    result = _try_user_dunder(frame, symbol, a, b)
    if result is not None:
        return result
    if symbol in ("&", "|", "-", "^"):
        result = _set_algebra(frame, symbol, a, b)
        if result is not None:
            return result
    if symbol == "%" and isinstance(a, ConstantValue) and isinstance(a.value, (str, bytes)):
        # printf-style formatting of a tuple holding sizes: each specialized (guarded), as
        # an f-string of them is.
        try:
            operand = specialized_constant(b)
        except NotConstant:
            pass
        else:
            return evaluate_constant_operation(frame, operator.mod, (a.value, operand))
    raise Unsupported(f"{a.describe()} {symbol} {b.describe()}")


def _set_members(frame, value: Value) -> dict | None:
    """key object -> value for set-like values (sets, frozensets, keys and items views of
    dicts), None for others."""
    if isinstance(value, SetValue):
        return dict(value.entries)
    if isinstance(value, DictViewValue) and value.set_like:
        return {key_of(frame, item): item for item in value.unpack(frame)}
    if isinstance(value, ConstantValue) and isinstance(value.value, (set, frozenset)):
        return {item: ConstantValue(item) for item in value.value}
    return None


def _set_algebra(frame, symbol: str, a: Value, b: Value) -> Value | None:
    left, right = _set_members(frame, a), _set_members(frame, b)
    if left is None or right is None:
        return None
    if not isinstance(a, DictViewValue) and not isinstance(b, DictViewValue):
        # The real operation on the operands' tables: the result's members and iteration
        # order. Its class is the left operand's (set | frozenset is a set, frozenset | set a
        # frozenset).
        table = BINARY[symbol](real_operand(frame, a), real_operand(frame, b))
        return set_from_operation(table, a.python_type(), left, right)
    # A dict view gives a set, of the members in the order a set of them iterates.
    members = BINARY[symbol](set(left), set(right))
    return SetValue({k: left[k] if k in left else right[k] for k in members}, python_cls=set)


def _both_plain(a: Value, b: Value) -> bool:
    """Constant folding is only for values that are data, not for containers we must keep
    (a list constant still has an identity; a set's iteration order rests on its history,
    which a constant rebuilt from its members loses)."""
    return not isinstance(a, (ListValue, SetValue)) and not isinstance(b, (ListValue, SetValue))


def inplace(frame, symbol: str, a: Value, b: Value) -> Value:
    if isinstance(a, SymValue):
        # Python numbers are immutable: `n += 1` is `n = n + 1`. Recorded as operator.iadd, FX
        # prints `l_n += 1; iadd = l_n`, which rebinds the graph's input `n` for later reads.
        return binary(frame, symbol[:-1], a, b)
    if isinstance(a, NdarrayValue) or isinstance(b, NdarrayValue):
        return numpy_operator(frame, INPLACE[symbol], a, b)
    if is_graph_value(a):
        return frame.session.graph.call_function(frame, INPLACE[symbol], [a, b], {})
    if isinstance(a, DequeValue) and symbol == "+=":
        # deque.extend's own way (maxlen kept after each item, the deque itself a snapshot).
        frame.session.wrap(collections.deque.extend, None).call(frame, [a, b], {})
        return a
    if isinstance(a, ListValue) and symbol == "+=":
        if isinstance(b, IteratorValue):
            # As list.extend: each item appended before the next is asked for (a generator
            # reading the list sees them).
            while (item := b.next()) is not None:
                a.items.append(item)
        else:
            a.items.extend(b.unpack(frame))
        a.mutated(frame)
        return a
    if isinstance(a, ListValue) and symbol == "*=" and issubclass(_python_cls_or_none(b) or object, int):
        # `lst *= n` repeats the list in place (every alias, and the caller's list, sees it).
        if isinstance(a, DequeValue):
            a.repeat(frame, concrete(b))
            return a
        a.items[:] = a.items * concrete(b)
        a.mutated(frame)
        return a
    if isinstance(a, SetValue) and a.python_type() is not frozenset and symbol in _SET_IN_PLACE:
        if isinstance(b, SetValue) or (isinstance(b, ConstantValue) and isinstance(b.value, (set, frozenset))):
            # `s |= t` changes s itself (every alias sees it), as set.update does.
            frame.session.wrap(_SET_IN_PLACE[symbol], None).call(frame, [a, b], {})
            return a
    # A class's own in-place method (`acc += other` updating acc), else `acc = acc + other`.
    cls = _python_cls_or_none(a)
    if cls is not None and symbol[:-1] in _DUNDERS:
        result = _call_dunder(frame, cls, "__i" + _DUNDERS[symbol[:-1]][0][2:], a, b)
        if result is not None:
            return result
    return binary(frame, symbol[:-1], a, b)


def compare(frame, symbol: str, a: Value, b: Value) -> Value:
    if isinstance(a, NdarrayValue) or isinstance(b, NdarrayValue):
        return numpy_operator(frame, COMPARE[symbol], a, b)
    answer = _number_against_other(frame, COMPARE[symbol], a, b)
    if answer is not None:
        return answer
    if is_graph_value(a) or is_graph_value(b):
        return frame.session.graph.call_function(frame, COMPARE[symbol], [a, b], {})
    if a.is_python_constant() and b.is_python_constant():
        return evaluate_constant_operation(frame, COMPARE[symbol], (a.as_python_constant(), b.as_python_constant()))
    if isinstance(a, ObjectIdValue) and isinstance(b, ObjectIdValue) and symbol in ("==", "!="):
        return ConstantValue(_same_id(frame, a, b) == (symbol == "=="))
    result = _try_user_dunder(frame, symbol, a, b)
    if result is not None:
        return result
    left, right = _set_members(frame, a), _set_members(frame, b)
    if left is not None and right is not None:
        return ConstantValue(COMPARE[symbol](set(left), set(right)))
    if (left is not None or right is not None) and symbol in ("==", "!="):
        # A set-like value equals no list, tuple, dict or object that is not set-like.
        return ConstantValue(symbol == "!=")
    if symbol in ("==", "!="):
        if isinstance(a, DictValue) and isinstance(b, DictValue):
            return ConstantValue(_dicts_equal(frame, a, b) == (symbol == "=="))
        left, right = _sequence_items(a), _sequence_items(b)
        if left is not None and right is not None:
            # list, tuple and deque each equal only their own kind ([1] != (1,), Size == tuple).
            equal = _sequence_kind(a) is _sequence_kind(b) and len(left) == len(right) and all(
                _items_equal(frame, x, y) for x, y in zip(left, right)
            )
            return ConstantValue(equal == (symbol == "=="))
        same = identical(frame, a, b)
        if same is not None:
            return ConstantValue(same == (symbol == "=="))
    else:
        left, right = _sequence_items(a), _sequence_items(b)
        if left is not None and right is not None and _sequence_kind(a) is _sequence_kind(b) is not collections.deque:
            # Lexicographic, as CPython's list/tuple compare: the first pair that differs
            # decides (`x.shape >= (4,)`, each size guarded), else the lengths do.
            for x, y in zip(left, right):
                if not (identical(frame, x, y) or compare(frame, "==", x, y).truth(frame)):
                    return compare(frame, symbol, x, y)
            return ConstantValue(COMPARE[symbol](len(left), len(right)))
    raise Unsupported(f"{a.describe()} {symbol} {b.describe()}")


def _items_equal(frame, x: Value, y: Value) -> bool:
    """Two items of containers being compared, as CPython's PyObject_RichCompareBool: the
    same object is equal without asking its __eq__."""
    return identical(frame, x, y) is True or compare(frame, "==", x, y).truth(frame)


def _dicts_equal(frame, a: DictValue, b: DictValue) -> bool:
    """dict.__eq__: the same keys, and the value under each key equal (in a's order, each
    pair as _items_equal); two OrderedDicts also need their keys in the same order."""
    if len(a.entries) != len(b.entries):
        return False
    if issubclass(a.python_cls, collections.OrderedDict) and issubclass(b.python_cls, collections.OrderedDict):
        if list(a.entries) != list(b.entries):
            return False
    for key, (_, value) in a.entries.items():
        other = b.entries.get(key)
        if other is None or not _items_equal(frame, value, other[1]):
            return False
    return True


def _same_id(frame, a: ObjectIdValue, b: ObjectIdValue) -> bool:
    """`id(x) == id(y)`, answered without the numbers: the same object or not. Two constants
    equal by value may be one object in this call and two in the next, which no guard sees."""
    if a.target is not b.target and a.same_object(b) and isinstance(a.target, ConstantValue):
        raise Unsupported(f"comparing the id() of two constants ({a.target.describe()})")
    same = a.same_object(b)
    if not same:
        frame.session.tell_apart(a.target, b.target)
    return same


def identical(frame, a: Value, b: Value) -> bool | None:
    """`a is b` when capture can tell, else None. Two inputs found to be different objects are
    guarded to stay so (`f(a, b)` then `f(a, a)` must not reuse the answer)."""
    if a is b:
        return True
    same = _same_tracked_object(a, b)
    if same is not None:
        if not same:
            frame.session.tell_apart(a, b)
        return same
    if isinstance(a, ConstantValue) and isinstance(b, ConstantValue):
        # Equal floats, big ints, strings, tuples may be one object or two: the answer holds
        # only while each operand read from the frame is the very object seen now.
        for operand in (a, b):
            if operand.source is not None and not _identity_follows_value(operand.value):
                frame.session.add_guard(IdentityMatch(operand.source, operand.value))
        return a.value is b.value
    for symbolic, other in ((a, b), (b, a)):
        if isinstance(symbolic, SymValue) and isinstance(other, ConstantValue):
            return _symbolic_is_constant(frame, symbolic, other)
    if isinstance(a, TupleValue) and isinstance(b, TupleValue):
        # Two values may stand for one tuple, but one tuple has one list of items: tuples
        # whose items differ (copy.py's `y is not x` after copying a tuple) are two objects.
        if len(a.items) != len(b.items) or any(identical(frame, x, y) is False for x, y in zip(a.items, b.items)):
            return False
        return None
    if isinstance(a, ConstantValue) or isinstance(b, ConstantValue):
        # A constant is never the same object as a container or object value.
        constant, other = (a, b) if isinstance(a, ConstantValue) else (b, a)
        if not other.is_python_constant():
            return False
        return constant.value is other.as_python_constant()
    return None


# CPython keeps one object for each int in [-5, 256] (Objects/longobject.c, _PY_NSMALLPOSINTS):
# such ints are the same object exactly when they are equal.
_SMALL_INTS = range(-5, 257)


def _identity_follows_value(value) -> bool:
    """Whether `is` between such a value and another is decided by the values alone."""
    if type(value) is int:
        return value in _SMALL_INTS
    return type(value) in (type(None), bool, type(Ellipsis), type(NotImplemented), torch.dtype, torch.layout,
                           torch.memory_format) or isinstance(value, enum.Enum)  # fmt: skip


def _symbolic_is_constant(frame, symbolic: SymValue, constant: ConstantValue) -> bool:
    """`n is c` for a symbolic number: a size is a fresh int (or float) object, the small
    int cache's own object where it is one of those; so it is `c` exactly when both are the
    same small int (the equality guarded, the number left symbolic). A symbolic bool (`n > 5`)
    is one of the two bool objects: it is True or False by its value (guarded)."""
    if symbolic.python_type() is bool:
        return type(constant.value) is bool and symbolic.truth(frame) == constant.value
    if type(constant.value) is not int or constant.value not in _SMALL_INTS or symbolic.python_type() is not int:
        return False
    return compare(frame, "==", symbolic, constant).truth(frame)


def _same_tracked_object(a: Value, b: Value) -> bool | None:
    """`a is b` for tensors (by their fake) and values that stand for one object each."""
    if isinstance(a, TensorValue) or isinstance(b, TensorValue):
        return isinstance(a, TensorValue) and isinstance(b, TensorValue) and a.fake is b.fake
    ida, idb = getattr(a, "identity", None), getattr(b, "identity", None)
    if ida is not None and idb is not None:
        return ida() is idb()
    return None


def is_(frame, a: Value, b: Value) -> Value:
    same = identical(frame, a, b)
    if same is None:
        raise Unsupported(f"`is` between {a.describe()} and {b.describe()}")
    return ConstantValue(same)


def unary(frame, symbol: str, a: Value) -> Value:
    if isinstance(a, NdarrayValue):
        return numpy_operator(frame, UNARY[symbol], a)
    if is_graph_value(a):
        return frame.session.graph.call_function(frame, UNARY[symbol], [a], {})
    if a.is_python_constant():
        return evaluate_constant_operation(frame, UNARY[symbol], (a.as_python_constant(),))

    name = {"-": "__neg__", "+": "__pos__", "~": "__invert__", "abs": "__abs__"}[symbol]
    method = python_dunder(a.python_type(), name)
    if method is not None:
        return dunder_value(frame, a, a.python_type(), name, method).call(frame, [a], {})
    raise Unsupported(f"{symbol}{a.describe()}")


def contains(frame, item: Value, container: Value) -> Value:
    """`item in container`."""
    if isinstance(container, SymValue):
        # A size or number (torch would name its SymInt class in the message).
        raise_user_error(frame, TypeError, f"argument of type '{container.python_type().__name__}' is not iterable")
    if is_graph_value(container):
        return frame.session.graph.call_function(frame, operator.contains, [container, item], {})
    if isinstance(container, (DictValue, SetValue)):
        return ConstantValue(key_of(frame, item) in container.entries)
    if isinstance(container, SysModulesValue):
        return container.contains(frame, item)
    if isinstance(container, DictViewValue) and container.kind == "keys":
        return ConstantValue(key_of(frame, item) in container.mapping.entries)
    if isinstance(container, ModelOutputValue):
        return ConstantValue(container._key(item.as_python_constant()) in container.present())
    if item.is_python_constant() and container.is_python_constant() and not isinstance(container, ListValue):
        return evaluate_constant_operation(frame, operator.contains, (container.as_python_constant(), item.as_python_constant()))
    if isinstance(container, IteratorValue):
        # `v in iterator` consumes the iterator (a generator's body too) only up to the first match.
        while (candidate := container.next()) is not None:
            if identical(frame, candidate, item) or compare(frame, "==", candidate, item).truth(frame):
                return ConstantValue(True)
        return ConstantValue(False)
    items = _sequence_items(container)
    if items is not None:
        for candidate in items:
            if identical(frame, candidate, item) or compare(frame, "==", candidate, item).truth(frame):
                return ConstantValue(True)
        return ConstantValue(False)
    try:
        cls = container.python_type()
    except Unsupported:
        cls = None
    method = python_dunder(cls, "__contains__") if cls else None
    if method is not None:
        # `in` gives a bool whatever __contains__ returns (its truth, __bool__ and all).
        result = dunder_value(frame, container, cls, "__contains__", method).call(frame, [container, item], {})
        return ConstantValue(result.truth(frame))
    # No __contains__: Python iterates (an object's own __iter__ a step at a time) and stops at
    # the first match, which is what the object sees of it.
    return contains(frame, item, IteratorValue.over(frame, container))
