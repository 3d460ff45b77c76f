"""`ShapeEnv`: the symbols of one trace, what is known about them, and the guards it took.

API (used by FakeTensorMode.from_real, capture, aot_autograd, inductor):

    env = ShapeEnv()                                      # duck_shape=True: equal sizes share a symbol
    sizes, strides, offset = env.symbolic_sizes_strides(t, dynamic_dims={0: Dim("batch")}, source=src)
    n = env.scalar(5, source=src)                         # a symbolic int (or float) input: the number itself
    env.symbol_sources[s0]     # [(source, "size" | "stride" | "value", dim), ...]: every place whose value IS s0
    env.expression_places      # [(source, kind, dim, expr)]: places whose value is an expression
    env.hints[s0]              # the example value of s0
    env.ranges[s0]             # ValueRange, [2, oo) unless a Dim or a guard narrowed it
    env.replacements           # {s1: s0, s2: 8}: equalities learned from guards
    env.size_hint(expr)        # expr evaluated at the example sizes
    env.simplify(expr)         # replacements + ranges applied
    env.statically_known(cond) # True/False if ranges and replacements decide cond, else None; no guard
    env.evaluate(expr)         # the answer at the example sizes, recorded as a guard (SymNodes call this)
    with env.attributing_to("aten.view at model.py:12"): ...   # origin of guards recorded inside
    env.produce_guards()       # [sympy boolean] over symbols: ranges, equalities, recorded guards
    n = env.create_unbacked(int, 0, 64, op="aten.nonzero")  # u0: a size/value read from data (no hint)
    env.guards_as_python()     # the same as Python source over the places (see guard_printer)
    env.evaluate_guards({source: tensor})   # do new inputs satisfy every guard?

Sizes 0 and 1 are never symbolic (torch's 0/1 specialization), so every size symbol is >= 2,
and `Ne(s0, 1)`-style questions are answered from the range without a guard. Symbols of Python
numbers (`scalar`) may take any value: their range is unbounded, and float ones are real.

Every question (`SymNode.guard_bool` & co., routed to `evaluate`) is answered from the hints;
the answer, simplified and put in a canonical form, becomes a guard unless the ranges and
replacements already imply it. Equalities become replacements (`Eq(s1, s0)` makes s1 -> s0,
`Eq(s0, 8)` makes s0 -> 8) and one-symbol bounds narrow ranges, so later questions simplify.

Unbacked symbols (`u0`, `uf0`) stand for what only the data decides: the row count of
`nonzero`, the value of `.item()`. They have a range but no example value (`has_hint()` is
False), no place in the inputs, and never appear in guards: a question the range cannot
decide raises `GuardOnDataDependentError` (the caller, e.g. capture, breaks the graph there)
instead of specializing. `guard_or_false`/`guard_or_true` answer the safe default without a
guard, `expect_true` records a runtime assertion (`runtime_asserts`) and learns the fact.

Places. A symbol stands for every place listed in `symbol_sources[sym]`: the guard code binds
the symbol from the first place and checks that the others are equal (duck sizing). A place
whose value is an expression (the stride `s1*768` of a contiguous tensor) must equal it.
`produce_guards()` spells neither of these (they are not sympy over symbols); consumers that
compile guards read them from `symbol_sources` and `expression_places`, as `guards_as_python`
does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping

import sympy
import torch

from fake_tensor.errors import GuardOnDataDependentError
from fake_tensor.symbolic.dim import UNBACKED, ConstraintViolationError, Dim
from fake_tensor.symbolic.guard_printer import print_python
from fake_tensor.symbolic.provenance import Origin, user_frame
from fake_tensor.symbolic.simplify import canonical_relation, simplify, static_truth
from fake_tensor.symbolic.sym_node import SymNode
from fake_tensor.symbolic.value_ranges import ValueRange, bound

Place = tuple  # (source, "size" | "stride", dim)

_DYNAMIC_SIZE_RANGE = ValueRange.of(2, sympy.oo)


@dataclasses.dataclass(frozen=True)
class Guard:
    """A condition on the symbols that the trace relied on, and where it came from."""

    expr: sympy.Basic
    origin: Origin

    def __str__(self) -> str:
        return f"{self.expr}  ({self.origin})"


def _is_constant(expr: sympy.Basic) -> bool:
    return expr.is_Number or isinstance(expr, sympy.logic.boolalg.BooleanAtom)


def _normalize_dynamic_dims(ndim: int, dynamic_dims) -> dict[int, Dim | None]:
    if dynamic_dims is None:
        return {}
    items = dynamic_dims.items() if isinstance(dynamic_dims, Mapping) else ((d, None) for d in dynamic_dims)
    normalized = {}
    for dim, spec in items:
        if not -ndim <= dim < ndim:
            raise IndexError(f"dynamic dim {dim} is out of range for a tensor with {ndim} dims")
        normalized[dim % ndim] = spec
    return normalized


def _place_name(source, kind: str, dim: int) -> str:
    if kind == "value":
        return str(source)
    if kind == "storage_offset":
        return f"{source}.storage_offset()"
    return f"{source}.{kind}()[{dim}]"


class ShapeEnv:
    def __init__(self, *, duck_shape: bool = True):
        self.duck_shape = duck_shape
        self.hints: dict[sympy.Symbol, int] = {}
        self.ranges: dict[sympy.Symbol, ValueRange] = {}
        # The range a user declared with a Dim (analysis reports guards that narrow it).
        self.declared: dict[sympy.Symbol, Dim] = {}
        self.symbol_sources: dict[sympy.Symbol, list[Place]] = {}
        self.expression_places: list[tuple] = []
        self.replacements: dict[sympy.Symbol, sympy.Expr] = {}
        self.guards: list[Guard] = []
        self._guard_exprs: set[sympy.Basic] = set()
        # Answers to questions already asked, keyed by the expression as asked: the answer
        # depends only on the hints, so it stays valid as knowledge grows.
        self._answers: dict[sympy.Basic, object] = {}
        # SymNode arithmetic results by (op, operand exprs, types); see sym_node.py.
        self.op_cache: dict[tuple, sympy.Basic] = {}
        # Per ATen op, meta kernel outputs on this env's symbols (fake_tensor.meta_output_cache).
        self.meta_output_caches: dict[object, object] = {}
        self._duck_symbols: dict[int, sympy.Symbol] = {}
        self._dim_symbols: dict[str, tuple[Dim, sympy.Symbol]] = {}
        self._op_stack: list[str] = []
        self._names: set[str] = set()
        self._order: dict[sympy.Symbol, int] = {}
        # Compound expressions that guards bounded (their ranges live in `ranges` too).
        self._bounded_exprs: dict[sympy.Expr, None] = {}
        # Unbacked symbols -> where they came from; the size-like ones (row counts) may be
        # assumed >= 2 by size-oblivious questions, as torch's meta kernels expect.
        self.unbacked: dict[sympy.Symbol, Origin] = {}
        self.size_like: set[sympy.Symbol] = set()
        # Facts `expect_true` assumed about unbacked symbols, to check when the graph runs.
        self.runtime_asserts: list[Guard] = []

    # --- symbols -----------------------------------------------------------------------------
    @property
    def symbols(self) -> list[sympy.Symbol]:
        return list(self.hints)

    def create_symbol(self, hint: int, place: Place, dim: Dim | None = None) -> sympy.Symbol:
        """A symbol for a size/stride with example value `hint` (>= 2), found at `place`."""
        if dim is not None:
            return self._symbol_for_dim(hint, place, dim)
        if self.duck_shape and place[1] == "size" and hint in self._duck_symbols:
            symbol = self._duck_symbols[hint]
        else:
            symbol = self._new_symbol(hint, _DYNAMIC_SIZE_RANGE)
            if place[1] == "size":
                self._duck_symbols.setdefault(hint, symbol)
        self.symbol_sources[symbol].append(place)
        return symbol

    def _symbol_for_dim(self, hint: int, place: Place, dim: Dim) -> sympy.Symbol:
        where = _place_name(*place)
        if not dim.allows(hint):
            raise ConstraintViolationError(
                f"{where} has example size {hint}, outside the range {dim!r} declares. "
                f"Give an example within [{dim.min}, {dim.max}] or widen the Dim."
            )
        known = self._dim_symbols.get(dim.name)
        if known is not None:
            known_dim, symbol = known
            if known_dim != dim:
                raise ConstraintViolationError(
                    f"two different Dims are named {dim.name!r}: {known_dim!r} and {dim!r}"
                )
            if self.hints[symbol] != hint:
                first = _place_name(*self.symbol_sources[symbol][0])
                raise ConstraintViolationError(
                    f"{dim!r} is used for sizes that differ in the examples: {first} is "
                    f"{self.hints[symbol]} but {where} is {hint}. Use separate Dims, or make "
                    f"the examples agree."
                )
        else:
            analysed = ValueRange.of(max(dim.min, 2), dim.max if dim.max != math.inf else sympy.oo)
            symbol = self._new_symbol(hint, analysed, dim.name)
            self.declared[symbol] = dim
            self._dim_symbols[dim.name] = (dim, symbol)
        self.symbol_sources[symbol].append(place)
        return symbol

    def scalar(self, hint: int | float, source) -> torch.SymInt | torch.SymFloat:
        """A symbolic Python int or float input whose example value is `hint`, read from
        `source` (place `(source, "value", 0)`). Unlike sizes it is not specialized at 0 or 1
        and may be negative (torch.compile's automatic dynamic ints do the same); floats are
        real symbols."""
        pytype = type(hint)
        symbol = self._new_symbol(hint, ValueRange(-sympy.oo, sympy.oo), pytype=pytype)
        self.symbol_sources[symbol].append((source, "value", 0))
        return (torch.SymFloat if pytype is float else torch.SymInt)(SymNode(symbol, self, pytype, hint))

    def create_unbacked(self, pytype: type = int, lower=-sympy.oo, upper=sympy.oo, *, op: str | None = None, size_like: bool = False):
        """A fresh unbacked SymInt/SymFloat (`u0`, `uf0`) in [lower, upper]: a value only the
        data decides, created by `op` (named in the errors about it)."""
        prefix = "uf" if pytype is float else "u"
        name = next(f"{prefix}{i}" for i in itertools.count(len(self.unbacked)) if f"{prefix}{i}" not in self._names)
        self._names.add(name)
        value_range = ValueRange.of(lower, upper)
        symbol = _symbol(name, pytype, value_range, nonnegative=True)
        self._order[symbol] = len(self._order)
        self.ranges[symbol] = value_range
        # Code that runs the user's program some other way names the user's line itself.
        frame = self._op_stack[-1] if self._op_stack else user_frame()
        self.unbacked[symbol] = Origin(frame, op)
        if size_like:
            self.size_like.add(symbol)
        return (torch.SymFloat if pytype is float else torch.SymInt)(SymNode(symbol, self, pytype, None))

    def has_hint(self, expr) -> bool:
        """Whether `expr` has an example value (it mentions no unbacked symbol)."""
        if isinstance(expr, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return expr.node.hint is not None
        if not isinstance(expr, sympy.Basic) or not self.unbacked:
            return True
        return self.unbacked.keys().isdisjoint(expr.free_symbols)

    def _new_symbol(self, hint: int, value_range: ValueRange, name: str | None = None, pytype: type = int) -> sympy.Symbol:
        # Symbols of declared Dims carry the Dim's name, so shapes print as (batch, seq, 768).
        if name is None:
            name = next(f"s{i}" for i in itertools.count(len(self.hints)) if f"s{i}" not in self._names)
        elif name in self._names:
            raise ConstraintViolationError(f"Dim name {name!r} is already the name of another symbol")
        self._names.add(name)
        symbol = _symbol(name, pytype, value_range, nonnegative=False)
        self._order[symbol] = len(self._order)
        self.hints[symbol] = hint
        self.ranges[symbol] = value_range
        self.symbol_sources[symbol] = []
        return symbol

    def symint(self, symbol: sympy.Symbol) -> torch.SymInt:
        return torch.SymInt(SymNode(symbol, self, int, self.hints[symbol]))

    def make_node(self, expr: sympy.Basic, pytype: type, hint) -> SymNode:
        if self.replacements:
            expr = expr.xreplace(self.replacements)
        if hint is None and _is_constant(expr):  # unbacked symbols that cancelled (u0 - u0)
            hint = bool(expr) if pytype is bool else pytype(expr)
        # torch's SymFloat magic methods cannot unwrap a constant SymFloat (they assert), so
        # float results stay symbolic-looking even when their expression is a number.
        constant = hint if pytype is not float and _is_constant(expr) else None
        return SymNode(expr, self, pytype, hint, constant)

    # --- tensors -----------------------------------------------------------------------------
    def symbolic_sizes_strides(self, t: torch.Tensor, dynamic_dims=None, source=None):
        """(sizes, strides, storage_offset) of `t`, with the `dynamic_dims` sizes symbolic.

        `dynamic_dims`: iterable of dims, or dict dim -> Dim (or None, or UNBACKED: an
        unbacked symbol, whatever the size, see `create_unbacked`). Other sizes 0 and 1 stay
        ints. Strides are expressions in the sizes where the real strides follow from the
        sizes (contiguous and permuted-contiguous layouts); other strides that depend on a
        dynamic size get a symbol of their own.
        """
        specs = _normalize_dynamic_dims(t.dim(), dynamic_dims)
        sizes: list[int | torch.SymInt] = []
        for d, hint in enumerate(t.shape):
            if d in specs and specs[d] is UNBACKED:
                where = _place_name(source, "size", d)
                size = self.create_unbacked(int, 0, sympy.oo, op=f"{where} (mark_unbacked)", size_like=True)
                # The place binds the symbol for guards on the strides that depend on it;
                # no guard is ever about the symbol's own value.
                self.symbol_sources[size.node.expr] = [(source, "size", d)]
                sizes.append(size)
            elif d in specs and hint >= 2:
                sizes.append(self.symint(self.create_symbol(hint, (source, "size", d), specs[d])))
            else:
                if d in specs and specs[d] is not None and not specs[d].allows(hint):
                    raise ConstraintViolationError(
                        f"{_place_name(source, 'size', d)} has example size {hint}, outside "
                        f"the range {specs[d]!r} declares."
                    )
                sizes.append(hint)
        strides = self._symbolic_strides(t, sizes, source)
        return sizes, strides, t.storage_offset()

    def _symbolic_strides(self, t: torch.Tensor, sizes: list, source) -> list:
        # Walk dims from innermost (smallest stride) outward, tracking the stride a dense
        # layout would have next. Dims of size 1 (and 0) have meaningless strides: keep them.
        real = t.stride()
        strides: list = list(real)
        dense_next: int | torch.SymInt = 1
        dense_next_real = 1  # its value for `t` (unbacked sizes have no hint to read it from)
        seen_symbolic = False
        order = sorted((d for d in range(t.dim()) if t.shape[d] >= 2), key=lambda d: (real[d], -d))
        for d in order:
            if real[d] == 0:
                stride = 0
            elif real[d] == dense_next_real:
                stride = dense_next
            elif seen_symbolic:
                stride = self.symint(self.create_symbol(real[d], (source, "stride", d)))
            else:
                stride = real[d]
            strides[d] = stride
            self._record_place(source, "stride", d, stride)
            if real[d] != 0:
                dense_next = stride * sizes[d]
                dense_next_real = real[d] * t.shape[d]
            seen_symbolic = seen_symbolic or isinstance(sizes[d], torch.SymInt)
        # A size-1 dim whose stride is what row-major order gives it (the batch of one in a
        # (1, n) tensor: stride n) keeps that as an expression, as torch does: a plain int would
        # become a guard `stride()[0] == 9` that fails at every new length after `n` went dynamic.
        for d in reversed(range(t.dim())):
            if t.shape[d] >= 2 or d + 1 == t.dim():
                continue
            row_major = strides[d + 1] * sizes[d + 1]
            if isinstance(row_major, torch.SymInt) and real[d] == _hint_of(row_major):
                strides[d] = row_major
                self._record_place(source, "stride", d, row_major)
        return strides

    def _record_place(self, source, kind: str, dim: int, value) -> None:
        if not isinstance(value, torch.SymInt):
            return
        expr = value.node.expr
        if isinstance(expr, sympy.Symbol):
            if (source, kind, dim) not in self.symbol_sources[expr]:
                self.symbol_sources[expr].append((source, kind, dim))
        else:
            self.expression_places.append((source, kind, dim, expr))

    # --- questions -----------------------------------------------------------------------------
    def simplify(self, expr: sympy.Basic) -> sympy.Basic:
        return simplify(expr, self.replacements, self.ranges)

    def bound(self, expr: sympy.Basic) -> ValueRange:
        return bound(self.simplify(expr), self.ranges)

    def statically_known(self, condition: sympy.Basic) -> bool | None:
        """True/False when replacements and ranges decide `condition`; None otherwise. No guard."""
        return static_truth(self.simplify(condition), self.ranges)

    def size_hint(self, expr) -> int | float | bool:
        """`expr` (sympy, SymInt or int) at the example values of its symbols."""
        if isinstance(expr, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            if expr.node.hint is None:
                raise GuardOnDataDependentError(expr.node.expr, self._unbacked_origins(expr.node.expr))
            return expr.node.hint
        if isinstance(expr, (int, float, bool)):
            return expr
        if not self.has_hint(expr):
            raise GuardOnDataDependentError(expr, self._unbacked_origins(expr))
        if isinstance(expr, sympy.Symbol):
            return self.hints[expr]
        value = expr.xreplace(self.hints)
        if isinstance(value, sympy.logic.boolalg.BooleanAtom):
            return bool(value)
        return int(value) if value.is_Integer else float(value)

    def evaluate(self, expr: sympy.Basic, hint=None):
        """Answer a question about `expr` from the example sizes, recording it as a guard.

        `hint` is the value of `expr` at the example sizes (SymNodes know it; computed when
        omitted). A condition answers True/False; an integer expression answers its value,
        specializing it (`Eq(expr, value)` becomes a guard).
        """
        answered = self._answers.get(expr, _UNANSWERED)
        if answered is not _UNANSWERED:
            return answered
        if hint is None:
            if not self.has_hint(expr):
                return self.decide_without_hint(expr)
            hint = self.size_hint(expr)
        simplified = self.simplify(expr)
        if _is_constant(simplified):
            if type(hint) in (bool, int) and type(hint)(simplified) != hint:
                raise AssertionError(
                    f"fake_tensor internal error: {expr} simplifies to {simplified} but is {hint} "
                    f"at the example sizes {self.hints}; please report this"
                )
        else:
            if type(hint) is bool:
                self._record(simplified if hint else sympy.Not(simplified))
            else:
                self._record(sympy.Eq(simplified, hint))
        self._answers[expr] = hint
        return hint

    # --- questions about unbacked symbols -------------------------------------------------------
    def decide_without_hint(self, expr: sympy.Basic, *, size_oblivious: bool = False):
        """The answer the ranges alone give to a question mentioning unbacked symbols; no guard.
        Raises GuardOnDataDependentError when they do not decide it. `size_oblivious` also
        assumes size-like unbacked symbols are >= 2 (torch: a kernel that works for sizes >= 2
        works for 0 and 1 as well, so a question like `u0 == 1` need not stop tracing)."""
        ranges = self.ranges
        if size_oblivious and self.size_like:
            ranges = dict(ranges)
            for symbol in self.size_like:
                ranges[symbol] = ranges[symbol].intersect(ValueRange.of(2, sympy.oo))
        simplified = simplify(expr, self.replacements, ranges)
        if isinstance(simplified, sympy.logic.boolalg.BooleanAtom):
            return bool(simplified)
        if simplified.is_Number:
            return int(simplified) if simplified.is_Integer else float(simplified)
        truth = static_truth(simplified, ranges) if isinstance(simplified, sympy.logic.boolalg.Boolean) else None
        if truth is not None:
            return truth
        raise GuardOnDataDependentError(simplified, self._unbacked_origins(expr))

    def maybe_decide_without_hint(self, expr: sympy.Basic, *, size_oblivious: bool = False):
        try:
            return self.decide_without_hint(expr, size_oblivious=size_oblivious)
        except GuardOnDataDependentError:
            return None

    def assume_at_runtime(self, condition: sympy.Basic) -> None:
        """`expect_true` on a condition about unbacked symbols: assumed from now on, and kept
        in `runtime_asserts` for whoever runs the graph to check. Only single-symbol bounds
        narrow ranges (compound facts are kept but teach nothing)."""
        condition = canonical_relation(self.simplify(condition))
        if condition is sympy.true or any(a.expr == condition for a in self.runtime_asserts):
            return
        op = self._op_stack[-1] if self._op_stack else None
        self.runtime_asserts.append(Guard(condition, Origin(user_frame(), op)))
        self.op_cache.clear()
        if isinstance(condition, (sympy.Ge, sympy.Le, sympy.Eq)) and isinstance(condition.lhs, sympy.Symbol) and condition.rhs.is_Number:
            narrower = {
                sympy.Ge: ValueRange(condition.rhs, sympy.oo),
                sympy.Le: ValueRange(-sympy.oo, condition.rhs),
                sympy.Eq: ValueRange(condition.rhs, condition.rhs),
            }[type(condition)]
            self.ranges[condition.lhs] = self.ranges[condition.lhs].intersect(narrower)

    def _unbacked_origins(self, expr: sympy.Basic) -> list[tuple[sympy.Symbol, Origin]]:
        return [(s, self.unbacked[s]) for s in sorted(expr.free_symbols, key=str) if s in self.unbacked]

    # --- the protocol torch's Python shape code calls ------------------------------------------
    # torch._refs and torch._decomp call helpers such as `guard_or_false(a)` and
    # `statically_known_true(a)` from torch.fx.experimental.symbolic_shapes; those reach
    # through `a.node.shape_env` to the methods below, by these names.
    def evaluate_sym_node(self, node: SymNode, size_oblivious: bool = False, fallback_value=None):
        if node.hint is None and node.constant is None:
            # guard_or_false/true pass their default as `fallback_value`: answer it, no guard.
            answer = self.maybe_decide_without_hint(node.expr, size_oblivious=size_oblivious)
            if answer is not None:
                return answer
            if fallback_value is not None:
                return fallback_value
            return self.decide_without_hint(node.expr, size_oblivious=size_oblivious)
        return node.guard_bool() if node.pytype is bool else node.guard_int()

    def _maybe_evaluate_static(self, expr: sympy.Basic, **_):
        simplified = self.simplify(expr)
        return simplified if _is_constant(simplified) else None

    def bound_sympy(self, expr: sympy.Basic, **_) -> ValueRange:
        return self.bound(expr)

    def optimization_hint(self, expr: sympy.Basic, fallback=None):
        return self.size_hint(expr)

    @contextlib.contextmanager
    def attributing_to(self, op: str):
        """Name `op` as the origin of the guards recorded inside the block."""
        self._op_stack.append(op)
        try:
            yield
        finally:
            self._op_stack.pop()

    # --- recording and learning ----------------------------------------------------------------
    def _record(self, condition: sympy.Basic) -> None:
        for part in sympy.And.make_args(sympy.logic.boolalg.to_nnf(condition)):
            part = canonical_relation(part)
            if part is sympy.true or part in self._guard_exprs:
                continue
            if part is sympy.false:
                raise AssertionError(f"guard {condition} is false at the example sizes {self.hints}")
            self._guard_exprs.add(part)
            self.op_cache.clear()  # results may simplify further with what this guard teaches
            op = self._op_stack[-1] if self._op_stack else None
            self.guards.append(Guard(part, Origin(user_frame(), op)))
            self._learn(part)

    def _learn(self, fact: sympy.Basic) -> None:
        if isinstance(fact, sympy.Eq):
            self._learn_equality(fact.lhs, fact.rhs)
        if not (isinstance(fact, sympy.Rel) and fact.rhs.is_Number):
            return
        subject, value = fact.lhs, fact.rhs
        current = bound(subject, self.ranges)
        if not subject.is_integer:
            # Real (float) subjects: strict bounds are kept as closed ones (sound, if loose),
            # and excluding one value narrows nothing.
            if isinstance(fact, sympy.Ne):
                return
            fact = {sympy.Gt: sympy.Ge, sympy.Lt: sympy.Le}.get(type(fact), type(fact))(subject, value)
        if isinstance(fact, sympy.Ne):
            # Excluding an endpoint moves it (sizes are integers); excluding an inner value
            # is not an interval.
            narrower = ValueRange(
                current.lower + int(value == current.lower), current.upper - int(value == current.upper)
            )
        else:
            narrower = {
                sympy.Ge: ValueRange(value, sympy.oo),
                sympy.Le: ValueRange(-sympy.oo, value),
                sympy.Eq: ValueRange(value, value),
            }[type(fact)]
        self.ranges[subject] = current.intersect(narrower)
        if not isinstance(subject, sympy.Symbol):
            self._bounded_exprs.setdefault(subject, None)

    def _learn_equality(self, lhs: sympy.Expr, rhs: sympy.Expr) -> None:
        candidates = [(a, b) for a, b in ((lhs, rhs), (rhs, lhs)) if isinstance(a, sympy.Symbol) and a not in b.free_symbols]
        if not candidates:
            return
        # Replace the newer symbol by the older one, so names stay those of the first inputs.
        symbol, value = max(candidates, key=lambda c: self._order[c[0]])
        self.replacements = {s: v.xreplace({symbol: value}) for s, v in self.replacements.items()}
        self.replacements[symbol] = value
        narrowed = self.ranges[symbol]
        if isinstance(value, sympy.Symbol):
            narrowed = narrowed.intersect(self.ranges[value])
            self.ranges[value] = narrowed
        else:
            narrowed = narrowed.intersect(bound(value, self.ranges))
        self.ranges[symbol] = narrowed

    # --- guards out ------------------------------------------------------------------------------
    def produce_guards(self) -> list[sympy.Basic]:
        """Everything the trace assumed about the symbols, as sympy booleans.

        Per symbol: its equality if one was learned (`Eq(s1, s0)`, `Eq(s2, 8)`), else its range
        (`s0 >= 2`, and `s0 <= 1024` if bounded); then every other recorded guard that the
        final ranges do not already imply. See the module docstring for places.
        """
        out: list[sympy.Basic] = []
        for symbol in self.hints:
            if symbol in self.replacements:
                out.append(sympy.Eq(symbol, self.replacements[symbol]))
            else:
                out.extend(_range_conditions(symbol, self.ranges[symbol], ValueRange(-sympy.oo, sympy.oo)))
        symbol_ranges = {s: self.ranges[s] for s in self.hints}
        for expr in self._bounded_exprs:
            out.extend(_range_conditions(expr, self.ranges[expr], bound(expr, symbol_ranges)))
        for guard in self.guards:
            if self._restated_per_symbol(guard.expr) or static_truth(guard.expr, self.ranges) is True:
                continue
            out.append(guard.expr)
        return out

    def _restated_per_symbol(self, expr: sympy.Basic) -> bool:
        """Bounds (restated from the final ranges) and the equalities that made replacements."""
        if isinstance(expr, sympy.Eq) and (expr.lhs in self.replacements or expr.rhs in self.replacements):
            return True
        # Strict bounds only arise on float symbols, whose ranges keep them as closed ones.
        return isinstance(expr, (sympy.Eq, sympy.Ge, sympy.Le)) and expr.rhs.is_Number

    def place_checks(self) -> list[tuple[Place, sympy.Expr]]:
        """(place, expr) pairs: the place must equal expr for the guards to be meaningful."""
        checks = []
        for symbol, places in self.symbol_sources.items():
            checks.extend((place, symbol) for place in places[1:])
        checks.extend(((source, kind, dim), expr) for source, kind, dim, expr in self.expression_places)
        return checks

    def _binding_places(self) -> dict[sympy.Symbol, Place]:
        return {symbol: places[0] for symbol, places in self.symbol_sources.items() if places}

    def guards_as_python(self, place_name: Callable[..., str] = _place_name) -> list[str]:
        """The guards as Python boolean expressions over the places.

        `place_name(source, kind, dim)` spells a place (default `L['x'].size()[0]` for a
        source printing as `L['x']`).
        """
        names = {symbol: place_name(*place) for symbol, place in self._binding_places().items()}
        lines = [f"{place_name(*place)} == {print_python(expr, names)}" for place, expr in self.place_checks()]
        lines.extend(print_python(guard, names) for guard in self.produce_guards())
        return lines

    def bind_symbols(self, tensors: Mapping[object, torch.Tensor]) -> dict[sympy.Symbol, int]:
        """Each symbol's value for new tensors (keyed by source), read at its first place."""
        return {symbol: _read_place(tensors, *place) for symbol, place in self._binding_places().items()}

    def evaluate_guards(self, tensors: Mapping[object, torch.Tensor]) -> bool:
        """Whether tensors (keyed by the sources they were fakeified with) satisfy every guard."""
        values = self.bind_symbols(tensors)
        return all(_read_place(tensors, *place) == _value_at(expr, values) for place, expr in self.place_checks()) and all(
            _value_at(guard, values) for guard in self.produce_guards()
        )

    def failed_guards(self, tensors: Mapping[object, torch.Tensor]) -> list[str]:
        """The guards (Python spelling) that `tensors` violate; empty if all hold."""
        values = self.bind_symbols(tensors)
        names = {symbol: _place_name(*place) for symbol, place in self._binding_places().items()}
        failed = [
            f"{_place_name(*place)} == {print_python(expr, names)}"
            for place, expr in self.place_checks()
            if _read_place(tensors, *place) != _value_at(expr, values)
        ]
        failed.extend(print_python(guard, names) for guard in self.produce_guards() if not _value_at(guard, values))
        return failed

    def guards_hold_at(self, values: Mapping[sympy.Symbol, int]) -> bool:
        """Whether `produce_guards()` all hold when each symbol has the given value."""
        return all(_value_at(guard, values) for guard in self.produce_guards())


_UNANSWERED = object()


def _value_at(expr: sympy.Basic, values: Mapping[sympy.Symbol, int]):
    """`expr` at concrete symbol values; a division by zero there means the guard fails
    (guards are checked in order, and an earlier one that fails protects this one in the
    generated code, as `and` would)."""
    try:
        return expr.xreplace(values)
    except ZeroDivisionError:
        return sympy.false


def _read_place(tensors: Mapping[object, torch.Tensor], source, kind: str, dim: int) -> int:
    t = tensors[source]
    if kind == "value":
        return t
    return t.storage_offset() if kind == "storage_offset" else getattr(t, kind)(dim)


def _range_conditions(expr: sympy.Expr, known: ValueRange, implied: ValueRange) -> list[sympy.Basic]:
    """`expr == v`, or `expr >= lower` / `expr <= upper`, for the bounds `implied` lacks."""
    if known.is_singleton():
        return [] if implied.is_singleton() else [sympy.Eq(expr, known.lower)]
    conditions = []
    if known.lower != -sympy.oo and bool(known.lower > implied.lower):
        conditions.append(sympy.Ge(expr, known.lower))
    if known.upper != sympy.oo and bool(known.upper < implied.upper):
        conditions.append(sympy.Le(expr, known.upper))
    return conditions


def _hint_of(value) -> int:
    return value.node.hint if isinstance(value, torch.SymInt) else value


def _symbol(name: str, pytype: type, value_range: ValueRange, *, nonnegative: bool) -> sympy.Symbol:
    """A float symbol is real; an int one with a range from 0 up is positive (a size: sizes 0 and
    1 specialize), or only non-negative for an unbacked count, which may be 0."""
    if pytype is float:
        return sympy.Symbol(name, real=True)
    if value_range.lower >= 0:
        return sympy.Symbol(name, integer=True, **({"nonnegative": True} if nonnegative else {"positive": True}))
    return sympy.Symbol(name, integer=True)
