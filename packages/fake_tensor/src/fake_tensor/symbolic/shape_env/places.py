"""Places, and the symbols of a tensor's sizes and strides.

A place is `(source, kind, dim)`: where in the inputs a value is read, kind "size", "stride",
"storage_offset" (a tensor's) or "value" (a symbolic Python number's). `symbol_sources[s]`
lists every place whose value IS `s`; `expression_places` the places whose value is an
expression over symbols (the stride `s1*768` of a contiguous tensor).
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
import torch

from fake_tensor.symbolic.dim import UNBACKED, ConstraintViolationError, Dim

Place = tuple  # (source, "size" | "stride" | "storage_offset" | "value", dim)


def place_name(source, kind: str, dim: int) -> str:
    if kind == "value":
        return str(source)
    if kind == "storage_offset":
        return f"{source}.storage_offset()"
    return f"{source}.{kind}()[{dim}]"


def read_place(tensors: Mapping[object, torch.Tensor], source, kind: str, dim: int) -> int:
    t = tensors[source]
    if kind == "value":
        return t
    return t.storage_offset() if kind == "storage_offset" else getattr(t, kind)(dim)


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


def _hint_of(value) -> int:
    return value.node.hint if isinstance(value, torch.SymInt) else value


class TensorSymbols:
    """ShapeEnv's methods that make a tensor's sizes and strides symbolic (a mixin: the state
    they use lives in ShapeEnv.__init__)."""

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
                where = place_name(source, "size", d)
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
                        f"{place_name(source, 'size', d)} has example size {hint}, outside "
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
