"""Graph nodes for symbolic sizes.

With dynamic shapes an ATen call can take a `SymInt` (`view(x, [s0 * 4, 8])`). Python
arithmetic on SymInts happens outside the dispatcher, so the recorder never sees how such a
value was computed; it sees only its sympy expression (`SymInt.node.expr`). This module turns
an expression back into graph nodes: each symbol is read from the graph input it appears in
(a SymInt placeholder, or `aten.sym_size.int(x, dim)` of a tensor placeholder) and the
expression is rebuilt with Python operators on those nodes. Every node made here carries
`meta["val"]`: the SymInt the same operators give on the example values.
"""

from __future__ import annotations

import math
import operator
from functools import reduce
from typing import Any, Callable

import sympy
import torch
import torch.fx as fx
from fake_tensor.symbolic import FLOAT_OPERATIONS, FloorDiv, PythonMod, TruncToInt

from ..errors import UnsupportedProgramError

aten = torch.ops.aten

SymValue = torch.SymInt | torch.SymFloat | torch.SymBool

# How each sympy head is computed in the graph.
_OPERATORS: dict[type, Callable[..., Any]] = {
    sympy.Add: operator.add,
    sympy.Mul: operator.mul,
    FloorDiv: operator.floordiv,
    PythonMod: operator.mod,
    sympy.Max: torch.sym_max,
    sympy.Min: torch.sym_min,
    sympy.Eq: operator.eq,
    sympy.Ne: operator.ne,
    sympy.StrictLessThan: operator.lt,
    sympy.LessThan: operator.le,
    sympy.StrictGreaterThan: operator.gt,
    sympy.GreaterThan: operator.ge,
    sympy.Abs: operator.abs,
    # Rounding a float to an int: `int(n * 1.5)` of a size is floor(FloatMul(s0, 1.5)).
    sympy.floor: math.floor,
    sympy.ceiling: math.ceil,
    TruncToInt: math.trunc,  # int() of a symbolic float, as torch.sym_int spells it
    # Float arithmetic on sizes, in the program's order (`(n - 7) / 3 + 1.0`).
    **{operation: python_operator for python_operator, operation in FLOAT_OPERATIONS.items()},
}

# fake_tensor's derivations name Python's own functions; the graph spells them as torch does
# (Python's min and `not` would ask the ShapeEnv for the answer, and guard on it).
_GRAPH_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    int: math.trunc, float: torch.sym_float, operator.not_: torch.sym_not, min: torch.sym_min, max: torch.sym_max,
}

# Where a symbol can be read from a tensor input, in the order they are tried.
_TENSOR_SOURCES = (
    (aten.sym_size.int, lambda t: list(t.shape)),
    (aten.sym_stride.int, lambda t: list(t.stride())),
)


def is_symbolic(value: Any) -> bool:
    return isinstance(value, SymValue) and value.node.is_symbolic()


class SymbolicValues:
    """Rebuilds symbolic values from the graph's inputs, sharing one node per expression."""

    def __init__(self, graph: fx.Graph):
        self.graph = graph
        # symbol -> a thunk making the node that reads it (made on first use, where it is used)
        self._sources: dict[sympy.Symbol, Callable[[], fx.Node]] = {}
        self._nodes: dict[sympy.Basic, fx.Node] = {}
        # id(SymNode) -> (the SymNode, kept alive; its node) for floats built in program order
        self._derived: dict[int, tuple[Any, fx.Node]] = {}

    def bind_input(self, node: fx.Node, value: Any) -> None:
        if is_symbolic(value):
            expr = value.node.expr
            if isinstance(expr, sympy.Symbol):
                self._nodes.setdefault(expr, node)
            return
        if not isinstance(value, torch.Tensor):
            return
        for read, sizes in _TENSOR_SOURCES:
            for dim, size in enumerate(sizes(value)):
                if is_symbolic(size) and isinstance(size.node.expr, sympy.Symbol):
                    self._sources.setdefault(size.node.expr, self._reader(read, node, dim, size))
        offset = value.storage_offset()
        if is_symbolic(offset) and isinstance(offset.node.expr, sympy.Symbol):
            self._sources.setdefault(
                offset.node.expr, self._reader(aten.sym_storage_offset.default, node, None, offset)
            )

    def bind_output(self, node: fx.Node, value: Any) -> None:
        """An op's output that brings new unbacked symbols (the row count of `nonzero`, the
        number `.item()` read): later uses read them from it. Symbols with a hint come from
        the inputs and are bound there."""
        if is_symbolic(value):
            if value.node.hint is None:
                # A bool tensor's item is `Eq(u0, 1)` over a fresh 0-or-1 symbol: the node
                # stands for that whole expression (returned as the program's bool).
                self._nodes.setdefault(value.node.expr, node)
            return
        if isinstance(value, torch.Tensor):
            for dim, size in enumerate(value.shape):
                if is_symbolic(size) and size.node.hint is None and isinstance(size.node.expr, sympy.Symbol):
                    self._sources.setdefault(size.node.expr, self._reader(aten.sym_size.int, node, dim, size))

    def _reader(self, read, node: fx.Node, dim: int | None, value: SymValue) -> Callable[[], fx.Node]:
        def make() -> fx.Node:
            args = (node,) if dim is None else (node, dim)
            made = self.graph.call_function(read, args)
            made.meta["val"] = value
            return made

        return make

    def node_for(self, value: SymValue) -> Any:
        """A graph argument standing for `value`: a node, or a plain number when constant."""
        if not value.node.is_symbolic():
            return value.node.constant
        return self._in_program_order(value.node)

    def _in_program_order(self, sym_node) -> Any:
        """The value of `sym_node`. A float the program computed (`a * n / 7`) is rebuilt from
        its operands in the order the program applied its operators (fake_tensor's
        SymNode.derivation): rounding depends on that order, and sympy's expression (a Mul
        of 1/7, a and n) lost it. Anything else is rebuilt from its expression."""
        if getattr(sym_node, "derivation", None) is None:
            if not sym_node.expr.free_symbols and sym_node.hint is not None:
                # A number: its Python value, which sympy may not hold (NaN, -0.0).
                return sym_node.pytype(sym_node.hint)
            built = self._build(sym_node.expr, None)
            if sym_node.pytype is float and not isinstance(_val(built), (float, torch.SymFloat)):
                # float(s0) has the expression of s0 itself, and `a - a + n` that of n: without
                # the conversion the graph would hand back an int where the program made a float.
                return float(built) if isinstance(built, int) else self._call_unary(torch.sym_float, built)
            return built
        known = self._derived.get(id(sym_node))
        if known is None:
            fn, operands = sym_node.derivation
            args = [self._in_program_order(operand) for operand in operands]
            fn = _GRAPH_FUNCTIONS.get(fn, fn)
            built = self._call(fn, *args) if len(args) == 2 else self._call_unary(fn, args[0])
            known = self._derived[id(sym_node)] = (sym_node, built)
            if sym_node.pytype is int and isinstance(built, fx.Node):
                # A size the program rounded from a float: where its expression reappears inside
                # another (an output's size, Min(n, s0)), the program's value is used, not sympy's.
                self._nodes.setdefault(sym_node.expr, built)
        return known[1]

    def node_for_expr(self, expr: sympy.Basic) -> Any:
        """A graph argument computing `expr` over the symbols the graph binds."""
        return self._build(expr, None)

    def _build(self, expr: sympy.Basic, value: Any) -> Any:
        if expr.is_Integer:
            return int(expr)
        if expr.is_Float or expr.is_Rational:
            return float(expr)
        if expr in (sympy.true, sympy.false):
            return bool(expr)
        node = self._nodes.get(expr)
        if node is not None:
            return node
        if isinstance(expr, sympy.Symbol):
            node = self._symbol(expr)
        else:
            node = self._apply(expr)
        self._nodes[expr] = node
        return node

    def _symbol(self, symbol: sympy.Symbol) -> fx.Node:
        source = self._sources.get(symbol)
        if source is None:
            raise UnsupportedProgramError(
                f"uses the size {symbol}, which no graph input carries",
                "Every symbolic size must appear in the shape of an input or be an input; "
                "mark the dimension static, or pass the size in.",
            )
        return source()

    def _apply(self, expr: sympy.Basic) -> fx.Node:
        head = type(expr)
        # Capture's symbolic int and float inputs bring `1/s0` (true division) and `f0**2.0`.
        if head is sympy.Pow and expr.exp.is_Integer and 0 < int(expr.exp) <= 8:
            # x**2 as x*x: torch's SymFloat.__pow__ demands a non-negative base for any exponent.
            fn, operands = operator.mul, [expr.base] * int(expr.exp)
        elif head is sympy.Pow and expr.exp.is_Integer and -8 <= int(expr.exp) < 0:
            return self._call(operator.truediv, 1, self._build(expr.base ** -expr.exp, None))
        elif head is sympy.Pow and expr.exp != 0:
            # A number to a symbolic power too (`3 ** n`).
            fn, operands = operator.pow, [expr.base, expr.exp]
        elif head in _OPERATORS:
            fn, operands = _OPERATORS[head], list(expr.args)
        else:
            raise UnsupportedProgramError(
                f"computes a symbolic size as {expr} (a {head.__name__}), which aot_autograd cannot rebuild",
                "Mark the dimensions involved static.",
            )
        args = [self._build(operand, None) for operand in operands]
        if len(args) == 1:
            return self._call_unary(fn, args[0])
        # n-ary sympy heads (Add, Mul, Max) fold pairwise into binary Python operators.
        return reduce(lambda left, right: self._call(fn, left, right), args)

    def _call_unary(self, fn, arg: Any) -> fx.Node:
        node = self.graph.call_function(fn, (arg,))
        node.meta["val"] = fn(_val(arg))
        return node

    def _call(self, fn, left: Any, right: Any) -> fx.Node:
        node = self.graph.call_function(fn, (left, right))
        node.meta["val"] = fn(_val(left), _val(right))
        return node


def _val(arg: Any) -> Any:
    return arg.meta["val"] if isinstance(arg, fx.Node) else arg
