"""`SymNode`: our node behind `torch.SymInt` / `torch.SymFloat` / `torch.SymBool`.

torch's Python-level `SymInt.__add__` etc. unwrap to `node.add(other_node)`; C++ kernels (under
the Python dispatcher) call the same methods by name plus the queries (`is_constant`,
`maybe_as_int`, `guard_bool`, ...). A node holds a sympy expression, the Python type it stands
for, and its hint: the value the expression has at the example sizes. Every method that
builds a new node computes the hint from the operands' hints with the Python operator, so a
hint never needs sympy substitution.

Questions whose answer decides control flow (`guard_bool`, `guard_int`, `expect_true`,
`guard_or_false`, ...) go to the ShapeEnv, which answers from the hint and records the answer
as a guard. `statically_known_true` answers only what the ranges already prove.

The method tables below are the whole protocol; which of them torch calls is listed in
../shared/DESIGN.md ("Facts already checked").
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING

import sympy

from fake_tensor.symbolic.functions import FLOAT_OPERATIONS, FloatAdd, FloorDiv, PythonMod, RoundToInt, TruncToInt

if TYPE_CHECKING:
    from fake_tensor.symbolic.shape_env import ShapeEnv


class SymNode:
    __slots__ = ("expr", "shape_env", "pytype", "hint", "constant", "derivation")

    def __init__(self, expr: sympy.Basic, shape_env: ShapeEnv, pytype: type, hint, constant=None):
        self.expr = expr
        self.shape_env = shape_env
        self.pytype = pytype
        self.hint = hint
        # The Python value when the expression has no symbols (the hot `is_constant` /
        # `maybe_as_int` queries read this attribute and nothing else).
        self.constant = constant
        # A float computed by the program's arithmetic: (Python function, operand nodes); so is
        # an int rounded from such a float (`int((n - 7) / 3 + 1)`), and any value computed
        # from a node that has a derivation. A graph computing this value rebuilds it from
        # here, as the calls the program made. (The expression keeps the program's order of
        # float operations too, functions.FloatOperation: guards compute it so.)
        self.derivation = None

    @property
    def _hint(self):
        # torch's symbolic_shapes helpers read the hint under this name.
        return self.hint

    # --- type and constant queries (hot: keep them attribute reads) ------------------------
    def is_int(self) -> bool:
        return self.pytype is int

    def is_float(self) -> bool:
        return self.pytype is float

    def is_bool(self) -> bool:
        return self.pytype is bool

    def is_nested_int(self) -> bool:
        return False

    def nested_int(self):
        return None

    def is_constant(self) -> bool:
        return self.constant is not None

    def is_symbolic(self) -> bool:
        return self.constant is None

    def has_hint(self) -> bool:
        # False for expressions over unbacked symbols (`u0`): their hint is None.
        return self.hint is not None

    def maybe_as_int(self) -> int | None:
        return self.constant if self.pytype is int else None

    def maybe_as_float(self) -> float | None:
        return self.constant if self.pytype is float else None

    def maybe_as_bool(self) -> bool | None:
        return self.constant if self.pytype is bool else None

    # --- wrapping Python constants ---------------------------------------------------------
    def wrap_int(self, value: int) -> SymNode:
        return SymNode(sympy.Integer(value), self.shape_env, int, value, value)

    def wrap_float(self, value: float) -> SymNode:
        # Not marked constant: see ShapeEnv.make_node.
        return SymNode(sympy.Float(value), self.shape_env, float, value)

    def wrap_bool(self, value: bool) -> SymNode:
        return SymNode(sympy.true if value else sympy.false, self.shape_env, bool, value, value)

    def clone(self) -> SymNode:
        return self

    # --- printing --------------------------------------------------------------------------
    def str(self) -> builtins.str:
        return builtins.str(self.expr)

    def __str__(self) -> builtins.str:
        return builtins.str(self.expr)

    def __repr__(self) -> builtins.str:
        return f"SymNode({self.expr}, hint={self.hint!r})"

    def _graph_repr(self) -> builtins.str:
        return builtins.str(self.expr)

    # --- questions that become guards ------------------------------------------------------
    def guard_bool(self, file: builtins.str = "", line: int = 0) -> bool:
        return self.shape_env.evaluate(self.expr, self.hint) if self.constant is None else self.constant

    def guard_int(self, file: builtins.str = "", line: int = 0) -> int:
        return self.shape_env.evaluate(self.expr, self.hint) if self.constant is None else self.constant

    def guard_float(self, file: builtins.str = "", line: int = 0) -> float:
        return self.shape_env.evaluate(self.expr, self.hint) if self.constant is None else self.constant

    # With a hint these answer from it and guard (as torch does for backed symbols). Without
    # one (unbacked symbols) they answer what the ranges decide, else: the safe default with
    # no guard (`guard_or_*`), an assumption checked at runtime (`expect_true`), or the
    # answer for sizes >= 2 (`guard_size_oblivious`).
    def guard_or_false(self, file: builtins.str = "", line: int = 0) -> bool:
        if self.hint is not None or self.constant is not None:
            return self.guard_bool()
        answer = self.shape_env.maybe_decide_without_hint(self.expr)
        return False if answer is None else answer

    def guard_or_true(self, file: builtins.str = "", line: int = 0) -> bool:
        if self.hint is not None or self.constant is not None:
            return self.guard_bool()
        answer = self.shape_env.maybe_decide_without_hint(self.expr)
        return True if answer is None else answer

    def expect_true(self, file: builtins.str = "", line: int = 0) -> bool:
        if self.hint is not None or self.constant is not None:
            return self.guard_bool()
        if self.shape_env.maybe_decide_without_hint(self.expr) is None:
            self.shape_env.assume_at_runtime(self.expr)
        return True

    def expect_size(self, file: builtins.str = "", line: int = 0) -> bool:
        return self.ge(self.wrap_int(0)).expect_true(file, line)

    def guard_size_oblivious(self, file: builtins.str = "", line: int = 0) -> bool:
        if self.hint is not None or self.constant is not None:
            return self.guard_bool()
        return self.shape_env.decide_without_hint(self.expr, size_oblivious=True)

    def statically_known_true(self, file: builtins.str = "", line: int = 0) -> bool:
        if self.constant is not None:
            return bool(self.constant)
        return self.shape_env.statically_known(self.expr) is True

    def round(self, ndigits: int | None = None) -> SymNode:
        if ndigits is not None:
            # Rounding to decimals has no integer meaning: specialize on the value.
            return self.wrap_float(builtins.round(self.guard_float(), ndigits))
        hint = None if self.hint is None else builtins.round(self.hint)
        node = self.shape_env.make_node(RoundToInt(self.expr), int, hint)
        if self.pytype is float or self.derivation is not None:
            node.derivation = (builtins.round, (self,))
        return node

    def bool_(self) -> bool:
        if self.pytype is bool:
            return self.guard_bool()
        # A number's truth (`if n:`, `not x.item()`): whether it is nonzero, guarded so.
        return self.ne(self.wrap_int(0)).guard_bool()

    def int_(self) -> int:
        return self.guard_int()

    def float_(self) -> float:
        return self.guard_float()

    # --- n-ary -------------------------------------------------------------------------------
    def sym_sum(self, args: list[SymNode]) -> SymNode:
        pytype = float if any(a.pytype is float for a in args) else int
        if pytype is float:
            # Left to right, as Python's sum() adds.
            expr = functools.reduce(FloatAdd, (a.expr for a in args))
        else:
            expr = sympy.Add(*(a.expr for a in args))
        hints = [a.hint for a in args]
        return self.shape_env.make_node(expr, pytype, None if None in hints else sum(hints))


# --- binary operations: name -> (sympy builder, Python operator, result type) ----------------

def _arithmetic_type(a: SymNode, b: SymNode) -> type:
    return float if float in (a.pytype, b.pytype) else int


def _float_type(a: SymNode, b: SymNode) -> type:
    return float


def _bool_type(a: SymNode, b: SymNode) -> type:
    return bool


def _pow_type(a: SymNode, b: SymNode) -> type:
    # Python: int ** negative int is a float.
    return int if a.pytype is int and b.pytype is int and (b.hint is None or b.hint >= 0) else float


def _floordiv_expr(a: SymNode, b: SymNode) -> sympy.Expr:
    if a.pytype is int and b.pytype is int:
        return FloorDiv(a.expr, b.expr)
    return sympy.floor(a.expr / b.expr)


def _mod_expr(a: SymNode, b: SymNode) -> sympy.Expr:
    if a.pytype is int and b.pytype is int:
        return PythonMod(a.expr, b.expr)
    return a.expr - b.expr * sympy.floor(a.expr / b.expr)


def _eq_expr(a: SymNode, b: SymNode) -> sympy.Basic:
    if a.pytype is bool:
        return sympy.Equivalent(a.expr, b.expr)
    return sympy.Eq(a.expr, b.expr)


def _exprs(build: Callable) -> Callable[[SymNode, SymNode], sympy.Basic]:
    return lambda a, b: build(a.expr, b.expr)


def _extremum(cls: type[sympy.Max] | type[sympy.Min]) -> Callable[[SymNode, SymNode], sympy.Basic]:
    """Max/Min over symbols, left for the ranges to decide (the method simplifies it): sympy's
    own evaluation compares the two sides by factoring their difference and asking its sign,
    which over the nested `%` and `//` of padded stage sizes (DaViT's `max(1, size)` strides)
    took seconds a call and decides nothing the ranges do not."""
    def build(a: SymNode, b: SymNode) -> sympy.Basic:
        if a.expr.is_Number and b.expr.is_Number:
            return cls(a.expr, b.expr)
        return cls(a.expr, b.expr, evaluate=False)

    return build


BINARY_OPS: dict[str, tuple[Callable, Callable, Callable]] = {
    "add": (_exprs(operator.add), operator.add, _arithmetic_type),
    "sub": (_exprs(operator.sub), operator.sub, _arithmetic_type),
    "mul": (_exprs(operator.mul), operator.mul, _arithmetic_type),
    "mod": (_mod_expr, operator.mod, _arithmetic_type),
    "floordiv": (_floordiv_expr, operator.floordiv, _arithmetic_type),
    "int_floordiv": (_floordiv_expr, operator.floordiv, _arithmetic_type),
    "truediv": (_exprs(operator.truediv), operator.truediv, _float_type),
    "int_truediv": (_exprs(operator.truediv), operator.truediv, _float_type),
    "float_truediv": (_exprs(operator.truediv), operator.truediv, _float_type),
    "pow": (_exprs(operator.pow), operator.pow, _pow_type),
    "pow_by_natural": (_exprs(operator.pow), operator.pow, _pow_type),
    "float_pow": (_exprs(operator.pow), operator.pow, _float_type),
    "sym_min": (_extremum(sympy.Min), builtins.min, _arithmetic_type),
    "sym_max": (_extremum(sympy.Max), builtins.max, _arithmetic_type),
    "eq": (_eq_expr, operator.eq, _bool_type),
    "ne": (_exprs(sympy.Ne), operator.ne, _bool_type),
    "lt": (_exprs(sympy.Lt), operator.lt, _bool_type),
    "le": (_exprs(sympy.Le), operator.le, _bool_type),
    "gt": (_exprs(sympy.Gt), operator.gt, _bool_type),
    "ge": (_exprs(sympy.Ge), operator.ge, _bool_type),
    "and_": (_exprs(sympy.And), operator.and_, _bool_type),
    "sym_and": (_exprs(sympy.And), operator.and_, _bool_type),
    "or_": (_exprs(sympy.Or), operator.or_, _bool_type),
    "sym_or": (_exprs(sympy.Or), operator.or_, _bool_type),
}


def _not_finite(node: SymNode) -> bool:
    """Whether `node` is a NaN or infinite float constant (capture keeps a float argument that
    is not finite a constant: its changing_number.py)."""
    return node.pytype is float and node.expr in (sympy.nan, sympy.oo, -sympy.oo, sympy.zoo)


def _unbacked_float(*nodes: SymNode) -> bool:
    """Whether one of `nodes` is over an unbacked float symbol (a float `.item()` read), which
    may be NaN or infinite. Floats of unbacked ints (`n / 2` of a row count) are finite."""
    return any(node.hint is None and any(s.is_integer is not True for s in node.expr.free_symbols) for node in nodes)


# Float operations whose result rounds (SymNode.derivation); min, max and comparisons are exact.
_ROUNDING = {"add", "sub", "mul", "mod", "floordiv", "truediv", "int_truediv", "float_truediv", "pow", "float_pow"}

# Results that may need range-aware simplification (`Max(s0, 2)` is `s0` when s0 >= 2).
_RANGE_SIMPLIFIED = {"mod", "floordiv", "int_floordiv", "sym_min", "sym_max"}


def _binary_method(name: str, build_expr, python_op, result_type):
    simplify = name in _RANGE_SIMPLIFIED

    def method(self: SymNode, other: SymNode) -> SymNode:
        env = self.shape_env
        if result_type is _bool_type and sympy.nan in (self.expr, other.expr):
            # A comparison with a NaN constant (sympy refuses it): False, or True for !=,
            # whatever the other side is.
            return self.wrap_bool(python_op(math.nan, math.nan))
        if _not_finite(self) or _not_finite(other):
            # NaN or an infinity meets a symbol: sympy's `-oo*k - oo` has no sound reading
            # (it depends on k's sign, and k = 0 gives NaN). The symbol is specialized to its
            # value (guarded), and Python computes the result.
            values = [operand.guard_float() if operand.pytype is float else operand.guard_int()
                      for operand in (self, other)]
            result = result_type(self, other)(python_op(*values))
            return {bool: self.wrap_bool, int: self.wrap_int, float: self.wrap_float}[type(result)](result)
        # Models repeat the same size arithmetic in every layer; building sympy expressions
        # dominates the cost, so results are memoized per ShapeEnv (cleared when it learns).
        key = (name, self.expr, other.expr, self.pytype, other.pytype)
        pytype = result_type(self, other)
        expr = env.op_cache.get(key)
        if expr is None:
            if pytype is float and name in _ROUNDING:
                # In the program's order, not sympy's: see functions.FloatOperation.
                expr = FLOAT_OPERATIONS[python_op](self.expr, other.expr)
            else:
                expr = build_expr(self, other)
            if simplify:
                expr = env.simplify(expr)
            env.op_cache[key] = expr
        if pytype is bool and expr in (sympy.true, sympy.false) and _unbacked_float(self, other):
            # sympy decided it for a finite real (`v == v`, `v - v == 0`); a float read from
            # data may be NaN or infinite, where Python decides otherwise.
            return env.undecided_bool((python_op, (self, other)))
        if self.hint is None or other.hint is None:  # over unbacked symbols: no example value
            node = env.make_node(expr, pytype, None)
        else:
            hint = pytype(python_op(self.hint, other.hint))
            if pytype is float and hint == 0.0 and expr.is_Number:
                # sympy folds `s * 0` to 0, but Python's zero has a sign (-0.0 * 0 is -0.0,
                # which f"{x}" and math.copysign tell apart) that follows the operands': guard theirs.
                for operand in (self, other):
                    if operand.pytype is float and operand.expr.free_symbols:
                        env.guard_sign(operand.expr, operand.hint)
            node = env.make_node(expr, pytype, hint)
        if self.derivation or other.derivation or (
                pytype is float and name in _ROUNDING and (self.expr.free_symbols or other.expr.free_symbols)):
            # Also where the result is a number: `k - a` with a NaN constant is sympy's nan.
            node.derivation = (python_op, (self, other))
        return node

    method.__name__ = name
    return method


for _name, _spec in BINARY_OPS.items():
    setattr(SymNode, _name, _binary_method(_name, *_spec))


# --- unary operations: name -> (sympy builder, Python function, result type or None=same) ------

UNARY_OPS: dict[str, tuple[Callable, Callable, type | None]] = {
    "neg": (operator.neg, operator.neg, None),
    "pos": (operator.pos, operator.pos, None),  # `+n`: torch.SymInt.__pos__ asks the node for it
    "abs": (sympy.Abs, builtins.abs, None),
    "sym_float": (lambda e: e, float, float),
    "sym_not": (sympy.Not, operator.not_, bool),
    "floor": (sympy.floor, math.floor, int),
    "ceil": (sympy.ceiling, math.ceil, int),
    "trunc": (TruncToInt, math.trunc, int),
    "sym_int": (TruncToInt, int, int),
}


def _unary_method(name: str, build_expr, python_fn, result_type):
    def method(self: SymNode) -> SymNode:
        pytype = result_type or self.pytype
        key = (name, self.expr, self.pytype)
        expr = self.shape_env.op_cache.get(key)
        if expr is None:
            # floor/ceil/trunc of an integer is the integer itself.
            expr = self.expr if result_type is int and self.pytype is int else build_expr(self.expr)
            self.shape_env.op_cache[key] = expr
        hint = None if self.hint is None else pytype(python_fn(self.hint))
        node = self.shape_env.make_node(expr, pytype, hint)
        if node.constant is not None and pytype is int and self.constant is None:
            # torch wraps a unary result (`-n`) as a SymInt without asking whether it is a
            # number (a specialization made s0 one); its magic methods then take a constant
            # SymInt for a Python int: `sym_float(-n)` gives a float, and `-n / 2.0` fails
            # on it. Such a result keeps its expression and hint, unmarked.
            node = SymNode(node.expr, self.shape_env, int, node.hint)
        if self.derivation is not None or (self.pytype is float and result_type is int):
            # An int rounded from a float: see SymNode.derivation.
            node.derivation = (python_fn, (self,))
        return node

    method.__name__ = name
    return method


for _name, _spec in UNARY_OPS.items():
    setattr(SymNode, _name, _unary_method(_name, *_spec))


# --- bit operations on ints ---------------------------------------------------------------------
# A shift by a known count is arithmetic (`n << k` is `n * 2**k`, `n >> k` is `n // 2**k`);
# the count itself and the operands of &, |, ^ have no expression the guard printers know, so
# they are specialized to their values (guarded, as `int(n)` is) and the result is a constant.

def _shift_method(name: str, python_op: Callable, arithmetic: str):
    def method(self: SymNode, other: SymNode) -> SymNode:
        python_op(self.hint, other.hint)  # a negative count is Python's ValueError, before any guard
        power = self.wrap_int(2 ** other.guard_int())
        return getattr(self, arithmetic)(power)

    method.__name__ = name
    return method


def _specializing_method(name: str, python_op: Callable):
    def method(self: SymNode, other: SymNode) -> SymNode:
        return self.wrap_int(python_op(self.guard_int(), other.guard_int()))

    method.__name__ = name
    return method


SymNode.lshift = _shift_method("lshift", operator.lshift, "mul")
SymNode.rshift = _shift_method("rshift", operator.rshift, "int_floordiv")
for _name, _op in {"bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor}.items():
    setattr(SymNode, _name, _specializing_method(_name, _op))
