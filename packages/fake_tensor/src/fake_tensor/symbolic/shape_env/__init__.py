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

One idea a module, each a mixin of ShapeEnv's methods (the state is all in `ShapeEnv.__init__`
below): symbols.py creates backed symbols, places.py makes a tensor's sizes and strides
symbolic, questions.py answers and records guards, unbacked.py handles unbacked symbols,
torch_protocol.py is what torch's own shape code calls, guard_output.py hands guards on.
"""

from __future__ import annotations

import sympy

from fake_tensor.symbolic.dim import Dim
from fake_tensor.symbolic.provenance import Guard, Origin
from fake_tensor.symbolic.shape_env.guard_output import GuardOutput
from fake_tensor.symbolic.shape_env.places import Place, TensorSymbols
from fake_tensor.symbolic.shape_env.questions import Questions
from fake_tensor.symbolic.shape_env.symbols import SymbolCreation
from fake_tensor.symbolic.shape_env.torch_protocol import TorchShapeProtocol
from fake_tensor.symbolic.shape_env.unbacked import UnbackedSymbols
from fake_tensor.symbolic.value_ranges import ValueRange

__all__ = ["Guard", "Place", "ShapeEnv"]


class ShapeEnv(SymbolCreation, TensorSymbols, Questions, UnbackedSymbols, TorchShapeProtocol, GuardOutput):
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
        # Answers to questions already asked, keyed by the expression as asked and the type of
        # its hint: the answer depends only on the hints, so it stays valid as knowledge grows.
        self._answers: dict[tuple[sympy.Basic, type], object] = {}
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
