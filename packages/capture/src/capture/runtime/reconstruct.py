"""Writing Python expressions that rebuild symbolic values after the graph has run.

Tensors come from the graph's outputs (`outs[i]`), or from their source when they are graph
inputs returned unchanged (so identity is kept); objects that existed before the call are read
through their source; containers, ModelOutputs and objects created while tracing are built
anew. Objects that have no literal spelling are bound in the entry's namespace.
"""

from __future__ import annotations

import collections
import copy
import itertools
import re
import types
from typing import Any, Iterator

from ..errors import Unsupported
from ..sources import HeldSource
from ..values.base import Value
from ..values.constant import ConstantValue, literal_repr
from ..values.collection_types import DefaultDictValue, DequeValue
from ..values.context import DecoratedByContext, GlobalStateContext
from ..values.iterators import EndlessIteratorValue, ObjectIteratorValue
from ..values.lazy import LazyInput
from ..values.modules import NewModuleValue
from ..values.containers import DictValue, DictViewValue, IteratorValue, LazyIteratorValue, ListValue, SetValue, SliceValue, TupleValue
from ..values.cells import CellValue, ExistingCellValue
from ..values.functions import (
    BuiltinValue, FunctionValue, GeneratorValue, MethodValue, NativeFunctionValue, NestedFunctionValue,
)
from ..values.new_objects import ModelOutputValue, NewObjectValue
from ..values.numpy_arrays import NdarrayValue
from ..values.objects import ClassValue, ObjectValue, PartialValue, PyModuleValue
from ..values.symbolic import SymValue
from ..values.tensor import TensorValue


def _children(value: Value) -> list[Value]:
    if isinstance(value, (TupleValue, ListValue)):
        return list(value.items)
    if isinstance(value, DefaultDictValue):
        return [value.factory, *(v for pair in value.entries.values() for v in pair)]
    if isinstance(value, DictValue):
        return [v for pair in value.entries.values() for v in pair]
    if isinstance(value, SetValue):
        return list(value.entries.values())
    if isinstance(value, DictViewValue):
        return [value.mapping]
    if isinstance(value, ModelOutputValue):
        return list(value.fields.values())
    if isinstance(value, NewObjectValue):
        return list(value.attrs.values())
    if isinstance(value, LazyIteratorValue):
        return [*value.iterators, *([value.function] if value.function is not None else [])]
    if isinstance(value, ObjectIteratorValue):
        return [value.obj]
    if isinstance(value, GeneratorValue):
        function, args, kwargs = value.call
        return [] if value.started else [function, *args, *kwargs.values()]
    if isinstance(value, IteratorValue):
        return [value.list] if value.list is not None else value.items[value.position :]
    if isinstance(value, SliceValue):
        return list(value.parts)
    if isinstance(value, PartialValue):
        return [value.func, *value.args, *value.kwargs.values()]
    if isinstance(value, MethodValue):
        return [value.func, value.obj]
    if isinstance(value, DecoratedByContext):
        return [value.fn]
    if isinstance(value, NdarrayValue):
        return [value.tensor]
    if isinstance(value, CellValue):
        return [value.contents] if value.contents is not None else []
    if isinstance(value, NestedFunctionValue):
        return [*value._defaults, *value._kwdefaults.values(), *value._cells, *value.attrs.values()]
    return []


def graph_values_in(value: Value) -> Iterator[Value]:
    """The graph-computed tensors and symbolic sizes that rebuilding `value` needs."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, TensorValue):
            if v.node.op != "placeholder":
                yield v
        elif isinstance(v, SymValue):
            if v.node.op != "placeholder":
                yield v
        else:
            stack.extend(_children(v))


def _new_function(
    code: types.CodeType, f_globals: dict, qualname: str, defaults: tuple, kwdefaults: dict, closure: tuple, attrs: dict
):
    """A function made by the traced code (a closure, a lambda), rebuilt over real cells,
    with the attributes the traced code set on it."""
    fn = types.FunctionType(code, f_globals, code.co_name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    fn.__qualname__ = qualname
    for name, value in attrs.items():
        setattr(fn, name, value)
    return fn


def _list_iterator(items: list, position: int) -> Iterator:
    """An iterator over the real list (so items the rest of the loop appends are visited)
    that has already yielded `position` items."""
    iterator = iter(items)
    iterator.__setstate__(position)
    return iterator


def _new_object(cls: type, attrs: dict) -> Any:
    """An instance of `cls` created while tracing, rebuilt without running `__init__` again."""
    obj = cls.__new__(cls)
    obj.__dict__.update(attrs)
    return obj


class ExpressionWriter:
    """Spells values as Python expressions of the entry function.

    `lines` collects statements (temporaries) that must run before the expressions are used;
    `namespace` the objects the expressions refer to by name. `reserved` are the entry's
    parameter names: the user's own (a resume function's parameters are the locals of the
    user's code, `_tuple` and `_map` in collections.namedtuple), which no name the writer
    makes may shadow.
    """

    def __init__(self, root_names, outputs: list[Value], namespace: dict[str, Any], reserved=()):
        self.root_names = root_names
        self.namespace = namespace
        self._used = set(reserved)
        self._counter = itertools.count()
        self.outputs_name = self.fresh("outs")
        self.output_index = {id(t.node): i for i, t in enumerate(outputs)}
        self.lines: list[str] = []
        self._temps: dict[int, str] = {}
        self._names: dict[int, str] = {}
        # Sources read through a shared prefix (`self._modules['h']` under every layer's
        # parameters) bind the prefix to a local once: source -> local name, and which are bound.
        self._hoisted: dict[Any, str] = {}
        self._bound: set = set()

    def plan_reads(self, sources) -> None:
        """Hoist every non-root prefix that two or more of `sources` read through."""
        uses: dict[Any, int] = {}
        for source in sources:
            if isinstance(source, HeldSource):
                continue
            # Every read-through prefix once per source (a dict item's key source is one).
            seen: set = set()
            pending = list(source.parents)
            while pending:
                node = pending.pop()
                if node in seen or isinstance(node, HeldSource) or not node.parents:
                    continue
                seen.add(node)
                uses[node] = uses.get(node, 0) + 1
                pending.extend(node.parents)
        for source, count in uses.items():
            if count >= 2:
                # ASCII only: `\w` also matches characters no identifier may hold (¼).
                stem = re.sub(r"\W+", "_", source.hint, flags=re.ASCII).strip("_") or "value"
                self._hoisted[source] = self.fresh(stem)

    # --- names ---------------------------------------------------------------------------------
    def fresh(self, stem: str) -> str:
        """A name no parameter, namespace entry or earlier name of this entry uses."""
        name = stem
        while name in self._used or name in self.namespace:
            name = f"{stem}_{next(self._counter)}"
        self._used.add(name)
        return name

    def temporary(self, stem: str) -> str:
        """A fresh numbered local, `_s3`."""
        return self.fresh(f"{stem}{next(self._counter)}")

    def name_for(self, obj: Any, stem: str) -> str:
        known = self._names.get(id(obj))
        if known is not None:
            return known
        base = "".join(c if c.isascii() and c.isalnum() else "_" for c in stem).strip("_") or "obj"
        name = self.fresh(f"_{base}")
        self.namespace[name] = obj
        self._names[id(obj)] = name
        return name

    def source(self, source) -> str:
        if isinstance(source, HeldSource):
            return self.name_for(source.obj, source.name)
        parents = source.parents
        if not parents:
            return source.root_code(self.root_names)
        expression = source.code(*(self.source(parent) for parent in parents))
        local = self._hoisted.get(source)
        if local is None:
            return expression
        if source not in self._bound:
            self._bound.add(source)
            self.lines.append(f"{local} = {expression}")
        return local

    def constant(self, obj: Any) -> str:
        literal = literal_repr(obj)
        if literal is not None:
            return literal
        if type(obj) is tuple:
            return "(" + "".join(self.constant(x) + ", " for x in obj) + ")"
        stem = getattr(obj, "__name__", None) or type(obj).__name__
        return self.name_for(obj, str(stem))

    def _temp(self, value: Value, expression: str) -> str:
        name = self.temporary("_v")
        self._temps[id(value)] = name
        self.lines.append(f"{name} = {expression}")
        return name

    # --- values ----------------------------------------------------------------------------------
    def value(self, value: Value) -> str:
        if id(value) in self._temps:
            return self._temps[id(value)]
        if isinstance(value, LazyInput):
            return self.source(value.source)
        if isinstance(value, GlobalStateContext):
            fn, args = value.rebuilt()
            arguments = [self.value(a) if isinstance(a, Value) else self.constant(a) for a in args]
            return f"{self.constant(fn)}({', '.join(arguments)})"
        if isinstance(value, DecoratedByContext):
            manager = self.value(value.manager.fresh())
            return f"{manager}({self.value(value.fn)})"
        if isinstance(value, TensorValue):
            if value.node.op == "placeholder":
                return self.source(value.source)
            return f"{self.outputs_name}[{self.output_index[id(value.node)]}]"
        if isinstance(value, SymValue):
            if value.node.op == "placeholder":
                return self.source(value.source)
            return f"{self.outputs_name}[{self.output_index[id(value.node)]}]"
        if isinstance(value, ConstantValue):
            return self.constant(value.value)
        if isinstance(value, NdarrayValue):
            # An ndarray the frame received is that object; one the trace made shares the
            # memory of the graph's tensor, as `Tensor.numpy()` does.
            if value.source is not None:
                return self.source(value.source)
            return f"{self.value(value.tensor)}.numpy(force=True)"
        if isinstance(value, NewModuleValue):
            return f"{self.name_for(copy.deepcopy, 'deepcopy')}({self.constant(value.obj)})"
        if isinstance(value, (ObjectValue, ClassValue, PyModuleValue, FunctionValue, BuiltinValue)):
            if value.source is not None:
                return self.source(value.source)
            return self.constant(value.as_python_constant() if not isinstance(value, ObjectValue) else value.obj)
        if isinstance(value, (ListValue, DictValue, SetValue, TupleValue)) and value.source is not None:
            # The very object the caller passed (mutations were replayed onto it).
            return self.source(value.source)
        if isinstance(value, TupleValue):
            items = "".join(self.value(v) + ", " for v in value.items)
            cls = value.python_cls
            if cls is tuple:
                return f"({items})"
            if hasattr(cls, "_fields"):
                return f"{self.constant(cls)}({items})"
            return f"{self.constant(cls)}(({items}))"
        if isinstance(value, DequeValue):
            items = ", ".join(self.value(v) for v in value.items)
            return self._temp(value, f"{self.constant(collections.deque)}([{items}], {value.maxlen!r})")
        if isinstance(value, ListValue):
            return self._temp(value, "[" + ", ".join(self.value(v) for v in value.items) + "]")
        if isinstance(value, DefaultDictValue):
            pairs = ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in value.entries.values())
            return self._temp(value, f"{self.constant(value.python_cls)}({self.value(value.factory)}, {{{pairs}}})")
        if isinstance(value, DictValue):
            pairs = ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in value.entries.values())
            if value.python_cls is dict:
                return self._temp(value, "{" + pairs + "}")
            return self._temp(value, f"{self.constant(value.python_cls)}({{{pairs}}})")
        if isinstance(value, SetValue):
            items = ", ".join(self.value(v) for v in value.entries.values())
            return self._temp(value, f"{self.constant(value.python_cls)}([{items}])")
        if isinstance(value, ModelOutputValue) and value.source is not None:
            return self.source(value.source)
        if isinstance(value, ModelOutputValue):
            fields = ", ".join(f"{k}={self.value(v)}" for k, v in value.present().items())
            return self._temp(value, f"{self.constant(value.cls)}({fields})")
        if isinstance(value, NewObjectValue):
            attrs = ", ".join(f"{k!r}: {self.value(v)}" for k, v in value.attrs.items())
            builder = self.name_for(_new_object, "new_object")
            return self._temp(value, f"{builder}({self.constant(value.cls)}, {{{attrs}}})")
        if isinstance(value, DictViewValue):
            return f"{self.value(value.mapping)}.{value.kind}()"
        if isinstance(value, SliceValue):
            return "slice(" + ", ".join(self.value(p) for p in value.parts) + ")"
        if isinstance(value, ObjectIteratorValue):
            return self.value(value.obj)  # the iterator is that object, its position in its attributes
        if isinstance(value, EndlessIteratorValue):
            raise Unsupported(f"returning or storing {value.describe()} from a compiled function")
        if isinstance(value, LazyIteratorValue):
            iterators = [self.value(i) for i in value.iterators]
            if value.kind == "enumerate":
                arguments = [*iterators, str(value.count)]
            elif value.kind in ("map", "filter"):
                function = self.value(value.function) if value.function is not None else "None"
                arguments = [function, *iterators]
            else:
                arguments = iterators
            return self._temp(value, f"{self.constant(value.python_type())}({', '.join(arguments)})")
        if isinstance(value, GeneratorValue) and not value.started:
            function, args, kwargs = value.call
            arguments = [self.value(a) for a in args] + [f"{k}={self.value(v)}" for k, v in kwargs.items()]
            return self._temp(value, f"{self.value(function)}({', '.join(arguments)})")
        if isinstance(value, GeneratorValue):
            raise Unsupported(f"handing on {value.describe()}, which is suspended in the middle of the traced code")
        if isinstance(value, IteratorValue) and value.list is not None:
            builder = self.name_for(_list_iterator, "list_iterator")
            return self._temp(value, f"{builder}({self.value(value.list)}, {value.position})")
        if isinstance(value, IteratorValue):
            return self._temp(value, "iter([" + ", ".join(self.value(v) for v in value.items[value.position :]) + "])")
        if isinstance(value, MethodValue):
            return f"{self.constant(types.MethodType)}({self.value(value.func)}, {self.value(value.obj)})"
        if isinstance(value, CellValue):
            contents = self.value(value.contents) if value.contents is not None else ""
            return self._temp(value, f"{self.constant(types.CellType)}({contents})")
        if isinstance(value, ExistingCellValue) and value.cell_source is not None:
            return self.source(value.cell_source)
        if isinstance(value, NestedFunctionValue):
            defaults = "".join(self.value(d) + ", " for d in value._defaults)
            kwdefaults = ", ".join(f"{k!r}: {self.value(v)}" for k, v in value._kwdefaults.items())
            cells = "".join(self.value(c) + ", " for c in value._cells)
            attrs = ", ".join(f"{k!r}: {self.value(v)}" for k, v in value.attrs.items())
            builder = self.name_for(_new_function, "new_function")
            code = self.name_for(value.code, f"code_{value.code.co_name}")
            f_globals = self.name_for(value.f_globals, "globals")
            return self._temp(
                value,
                f"{builder}({code}, {f_globals}, {value.name!r}, ({defaults}), {{{kwdefaults}}}, ({cells}), {{{attrs}}})",
            )
        if isinstance(value, NativeFunctionValue) and value.real is not None:
            return self.constant(value.real)
        raise Unsupported(
            f"returning or storing {value.describe()} from a compiled function",
            hint="return tensors, Python constants, containers of them, or existing objects",
        )
