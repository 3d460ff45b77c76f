"""Matmul externs (mm, addmm, bmm, baddbmm), padded to aligned sizes when that pays (under
max-autotune, first offered to the Triton template: lowering/matmul_templates.py).

cuBLAS picks its fast tensor-core kernels only when every row of every operand starts on a
16-byte boundary: a bf16 matrix with 50257 columns (GPT-2's vocabulary) gets a slow pre-Hopper
kernel instead (2.45 ms for GPT-2's LM head on an H200 in a training step, where torch.compile's
padded call takes ~0.4 ms). So, as
torch.compile's pad_mm does, a misaligned matmul runs as

    mm(pad(a), pad(b))[:M, :N]

Zeros padded onto K add nothing to any dot product; rows of `a` padded onto M and columns of
`b` padded onto N only add output rows/columns, which the slice drops. The pads are
`constant_pad_nd` pointwise values (fused into the operand's producer, or one cheap copy) and
the slice is a lazy read through the padded buffer: readers index it in place; an extern
argument gets a dense copy with eager's strides, and so does an output, except in inference
graphs, which return the strided view (as torch.compile does).

Whether to pad is the `pad_mm` compile option of the graph being lowered
(`options={"pad_mm": True}`): True pads every misaligned matmul of a padded dtype, on any
device (tests, experiments); False none; None (the default) pads CUDA matmuls where
`padding_pays` says so.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import sympy
import torch
import torch.fx

from ..context import current_graph
from ..ir import Buffer, IRNode, Pointwise, ReinterpretView, storage_of
from . import register_lowering
from .extern import EXTERN_OVERLOADS, extern, extern_call
from .indexing import constant_pad_nd
from .matmul_templates import EPILOGUE_KEY, template_matmul
from .views import permute, slice_

aten = torch.ops.aten

# Elements per 16 bytes: the row alignment cuBLAS's tensor-core kernels need.
ALIGNMENT = {torch.float16: 8, torch.bfloat16: 8, torch.float32: 4}

# Padding copies the padded operands once (each byte read and written). On an H200 (~990
# TFLOP/s bf16 dense, ~4.8 TB/s) moving 2 bytes costs as long as ~400 flops at peak; the
# misaligned kernels measured ran ~6x slower than aligned ones, so padding saves ~5x the
# aligned matmul's time, and pays once the matmul does more than ~400/5 = 80 flops per byte
# it pads. 100 leaves a margin for copies that do not fuse. GPT-2's LM head (4096 x 50257 x
# 768) does 4100 flops per padded byte forward and ~650 in its input-gradient matmul.
MIN_FLOPS_PER_PADDED_BYTE = 100

@dataclass(frozen=True)
class MatmulShape:
    """A (batched) matmul [.., M, K] @ [.., K, N] and the zeros added to each of M, N, K.

    A size may be symbolic (a sympy expression: a token count under dynamic shapes); it is
    never padded, since its padding would change with it, and costs are judged at `hints`,
    (m, n, k, batch) as ints (the example inputs' values), as torch.compile's pad_mm does."""

    m: int | sympy.Expr
    n: int | sympy.Expr
    k: int | sympy.Expr
    batch: int | sympy.Expr
    dtype: torch.dtype
    # The sizes that are some matrix's row length in memory (cuBLAS's leading dimensions): only
    # those need aligning. N always (the result is row-major), M when `a` is stored column-major,
    # K when `a` is stored row-major or `b` column-major.
    row_lengths: frozenset = frozenset("mnk")
    hints: tuple[int, int, int, int] | None = None

    def padding(self) -> tuple[int, int, int]:
        align = ALIGNMENT[self.dtype]
        return tuple(-size % align if name in self.row_lengths and isinstance(size, int) else 0
                     for name, size in (("m", self.m), ("n", self.n), ("k", self.k)))

    def padded_bytes(self) -> int:
        """Bytes of the operands that need padding (a is padded for M or K, b for K or N)."""
        pm, pn, pk = self.padding()
        m, n, k, batch = self.hints or (self.m, self.n, self.k, self.batch)
        a = m * k if pm or pk else 0
        b = k * n if pk or pn else 0
        return batch * (a + b) * self.dtype.itemsize

    def flops(self) -> int:
        m, n, k, batch = self.hints or (self.m, self.n, self.k, self.batch)
        return 2 * batch * m * n * k


def padding_pays(shape: MatmulShape) -> bool:
    """The cost rule for CUDA matmuls left to the default: enough flops per padded byte."""
    return shape.flops() >= MIN_FLOPS_PER_PADDED_BYTE * shape.padded_bytes()


def should_pad(shape: MatmulShape | None, device: torch.device) -> bool:
    """Whether the matmul of `shape` (None: mixed dtypes) on `device` is padded."""
    if shape is None or shape.dtype not in ALIGNMENT or not any(shape.padding()):
        return False
    setting = current_graph().options.pad_mm
    if setting is not None:
        return setting
    return device.type == "cuda" and padding_pays(shape)


def _static(size) -> int | None:
    return int(size) if isinstance(size, (int, sympy.Integer)) else None


def matmul_shape(a: IRNode, b: IRNode) -> MatmulShape | None:
    """The shape of `a @ b` when both operands share a dtype (sizes static or symbolic)."""
    if a.dtype != b.dtype:
        return None
    graph = current_graph()

    def size(expr):  # an int where static, else our sympy expression
        static = _static(expr)
        return static if static is not None else graph.sympify(expr)

    sizes = [size(s) for s in (*a.size, b.size[-1])]
    hints = [graph.hint(s) for s in sizes]
    batch, batch_hint = sympy.Integer(1), 1
    for s, h in zip(sizes[:-3], hints[:-3]):
        batch, batch_hint = batch * s, batch_hint * h
    m, k, n = sizes[-3:]
    rows = len(a.size) - 2
    row_lengths = {"n", "m" if _innermost_dim(a) == rows else "k"}
    if _innermost_dim(b) == rows:
        row_lengths.add("k")
    m_hint, k_hint, n_hint = hints[-3:]
    return MatmulShape(m, n, k, size(batch), a.dtype,
                       frozenset(row_lengths), (m_hint, n_hint, k_hint, batch_hint))


def _innermost_dim(x: IRNode) -> int:
    """The dim `x` is stored along as the extern receives it (a computed value is realized dense)."""
    order = _memory_order(x)
    return order[-1] if order else len(x.size) - 1


def _pad_last_two(x: IRNode, rows: int, cols: int):
    """`x` with zero rows/columns appended, stored in `x`'s memory order (a transposed weight is
    padded as stored, keeping the row lengths `matmul_shape` judged); a computed value is
    realized dense, as the extern would receive it unpadded."""
    if not rows and not cols:
        return x
    graph = current_graph()
    padded = constant_pad_nd(x, [0, cols, 0, rows], 0.0)
    order = _memory_order(x)
    if order is None:
        return graph.realize(padded)
    pads = [0] * (len(x.size) - 2) + [rows, cols]
    key = (storage_of(x).name, x.layout.offset, tuple((int(x.layout.stride[d]), int(x.size[d]), pads[d]) for d in order))
    copies = _padded_copies.setdefault(graph, {})
    made = copies.get(key)
    if made is None or _mutation_between(made[0], graph.current_node):
        made = copies[key] = (graph.current_node, graph.realize(permute(padded, order)))
    return permute(made[1], [order.index(d) for d in range(len(order))])


# Padded copies already made in a graph, by (storage, offset, (stride, size, padding) per stored
# dim): a backward pads the logits' gradient along K for the input gradient and, transposed,
# along M for the weight gradient; both are the same bytes, copied once.
_padded_copies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _mutation_between(start: torch.fx.Node, end: torch.fx.Node) -> bool:
    """Whether a node from `start` up to `end` may write memory (a copy made before is stale)."""
    node = start
    while node is not end and node.op != "root":
        if isinstance(node.target, torch._ops.OpOverload) and node.target._schema.is_mutable:
            return True
        node = node.next
    return False


def _memory_order(x: IRNode) -> list[int] | None:
    """Dims of a static strided value, outermost first; None for computed values and symbolic strides."""
    if not isinstance(x, (Buffer, ReinterpretView)) or not all(
            isinstance(e, sympy.Integer) for e in (*x.layout.size, *x.layout.stride, x.layout.offset)):
        return None
    return sorted(range(len(x.layout.size)), key=lambda d: -int(x.layout.stride[d]))


def _pad_bias(bias: IRNode, pm: int, pn: int, out_ndim: int):
    """The bias padded along the output dims it does not broadcast over."""
    pads = []
    for dim in range(len(bias.size) - 1, -1, -1):
        out_dim = dim + out_ndim - len(bias.size)
        grow = {out_ndim - 2: pm, out_ndim - 1: pn}.get(out_dim, 0)
        pads += [0, grow if _static(bias.size[dim]) != 1 else 0]
    return constant_pad_nd(bias, pads, 0.0) if any(pads) else bias


def _sliced(result: IRNode, m: int, n: int):
    """The top-left [.., m, n] of the padded result, as a lazy read (see the module docstring)."""
    ndim = len(result.size)
    if (result.size[-2], result.size[-1]) == (m, n):
        return result
    view = slice_(slice_(result, ndim - 2, 0, m), ndim - 1, 0, n)
    sliced = Pointwise(view.device, view.dtype, view.size, view.make_loader())
    _slices.add(sliced)
    return sliced


# The lazy slices `_sliced` made: an inference graph may return one (or a view of one) as a
# strided view of the padded result (output_layouts.py `_as_strided_output`), where a copy of it must
# stay dense.
_slices: weakref.WeakSet = weakref.WeakSet()


def is_padded_slice(value: IRNode) -> bool:
    return value in _slices


def _matmul(op, bias, a, b, kwargs):
    """`op` on (bias,) a, b: under max-autotune maybe the Triton template (matmul_templates.py),
    applying the activation that reads it (passes/matmul_epilogues.py), else the extern,
    padded when `should_pad` says so."""
    epilogue = current_graph().current_node.meta.get(EPILOGUE_KEY, "none")
    template = template_matmul(op, bias, a, b, kwargs, epilogue)
    return template if template is not None else _aten_matmul(op, bias, a, b, kwargs)


def _aten_matmul(op, bias, a, b, kwargs):
    """`op` on (bias,) a, b: padded when `should_pad` says so, else the plain extern."""
    graph = current_graph()
    args = (a, b) if bias is None else (bias, a, b)
    shape = matmul_shape(a, b)
    # The operands' device: a plain trace's meta values (ensure_meta_vals) say "meta".
    if not should_pad(shape, a.device):
        return extern(op, args, kwargs)
    pm, pn, pk = shape.padding()
    padded = (_pad_last_two(a, pm, pk), _pad_last_two(b, pk, pn))
    if bias is not None:
        padded = (_pad_bias(bias, pm, pn, len(a.size)), *padded)
    traced = graph.current_val()
    # The result's size from the traced value's own sizes (SymInts where symbolic).
    stand_in = traced.new_empty((*traced.shape[:-2], traced.shape[-2] + pm, traced.shape[-1] + pn))
    result = extern_call(op, padded, kwargs, is_fallback=False, traced=stand_in)
    return _sliced(result, shape.m, shape.n)


def _register(op, has_bias: bool):
    EXTERN_OVERLOADS.add(op)
    if has_bias:
        register_lowering(op)(lambda bias, a, b, **kwargs: _matmul(op, bias, a, b, kwargs))
    else:
        register_lowering(op)(lambda a, b: _matmul(op, None, a, b, {}))


for _op, _has_bias in [(aten.mm.default, False), (aten.bmm.default, False),
                       (aten.addmm.default, True), (aten.baddbmm.default, True)]:
    _register(_op, _has_bias)
