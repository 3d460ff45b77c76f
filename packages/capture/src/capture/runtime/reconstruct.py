"""Writing Python expressions that rebuild symbolic values after the graph has run.

Tensors come from the graph's outputs (`outs[i]`), or from their source when they are graph
inputs returned unchanged (so identity is kept); objects that existed before the call are read
through their source; containers, ModelOutputs and objects created while tracing are built
anew. Each value kind spells itself (`Value.reconstruct(writer)`, beside the kind); the writer
here is what they share: names, sources read once, constants, temporaries, graph outputs.
Objects that have no literal spelling are bound in the entry's namespace.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ..errors import Unsupported
from ..sources import HeldSource
from ..values.base import Value
from ..values.constant import literal_repr


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
        self._building: set[int] = set()  # values whose expression is being written
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

    def bind(self, value: Value, expression: str) -> str:
        """Evaluate `expression` once into a temporary, which later mentions of `value` reuse
        (so an object built anew stays one object wherever it appears)."""
        name = self.temporary("_v")
        self._temps[id(value)] = name
        self.lines.append(f"{name} = {expression}")
        return name

    def is_bound(self, value: Value) -> bool:
        """`value` was already made (bound to a temporary) by this writer."""
        return id(value) in self._temps

    # --- values ----------------------------------------------------------------------------------
    def value(self, value: Value) -> str:
        """The expression for `value`: each kind spells itself (`Value.reconstruct`), asking
        this writer for the expressions of the values it contains."""
        if id(value) in self._temps:
            return self._temps[id(value)]
        if id(value) in self._building:
            # A cycle through a kind that cannot be made empty first and filled afterwards
            # (see refers_to_itself): better a graph break than unbounded recursion.
            raise Unsupported(f"rebuilding {value.describe()}, which contains itself")
        self._building.add(id(value))
        try:
            return value.reconstruct(self)
        finally:
            self._building.discard(id(value))

    def refers_to_itself(self, value: Value) -> bool:
        """`value` is reachable from the values it is built from (`l.append(l)`, `o.me = o`,
        `o.f = o.method`): it must be made empty and bound first, then filled, so that the
        inner mention names it."""
        seen: set[int] = set()
        stack = list(value.inner_values())
        while stack:
            v = stack.pop()
            if v is value:
                return True
            if id(v) in seen or id(v) in self._temps:
                continue
            seen.add(id(v))
            stack.extend(v.inner_values())
        return False

    def existing(self, value: Value, obj: Any) -> str:
        """An object that existed before the call: read through the value's source, or
        referred to by identity when it has none."""
        if value.source is not None:
            return self.source(value.source)
        return self.constant(obj)

    def graph_output(self, value: Value) -> str:
        """A tensor or symbolic size the graph computed: its slot in the graph's outputs."""
        return f"{self.outputs_name}[{self.output_index[id(value.node)]}]"
