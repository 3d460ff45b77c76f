"""Indices, masks, loads and stores of the Triton printer: the ops handler's memory half.

A value's block axes (`dims`, kernel.py) pick the masks of its loads and stores, and a load of
what the kernel stored at the same index reads the stored value from registers.
"""

from __future__ import annotations

import sympy
import torch

from ...runtime.kernel_errors import BOUNDS_ERROR_CODES
from ...runtime.triton_configs import KIND_POINTWISE
from ...sizes import FloorDiv, PythonMod, maybe_empty_numel, product
from . import expressions
from .expressions import literal, triton_dtype

# A pointwise kernel prints its stores after its loads (kernel.py), but each store held back
# keeps its value live in registers: a kernel of many unrelated updates would spill. Past this
# many, the held stores are printed where the kernel is.
MAX_DEFERRED_STORES = 8


class MemoryOps:
    """Mixed into TritonKernel: loads, stores and index arithmetic."""

    def _shape(self, dims) -> str:
        if self.kind == KIND_POINTWISE:
            return "[XBLOCK]" if "x" in dims else "[]"
        if not dims:
            return "[]"
        return f"[{'XBLOCK' if 'x' in dims else '1'}, {'RBLOCK' if 'r' in dims else '1'}]"

    def flag_error(self, condition: str, dims, code: int) -> None:
        """Where `condition` holds (on the lanes in bounds), report error `code` of
        runtime/kernel_errors.py through the kernel's `error_ptr`, if it checks errors."""
        if not self.checks_errors:
            return
        mask = self._mask(dims)
        failing = self._new(f"({condition}) & {mask}" if mask else f"({condition})", torch.bool, dims)
        self.lines.append(f"tl.store(error_ptr + tl.zeros({self._shape(dims)}, tl.int32), {code}, mask={failing})")
        self.raises = True

    def assert_on_device(self, condition: str, dims, message: str) -> None:
        """On a GPU, stop the kernel with a device-side assert where `condition` fails (on the
        lanes in bounds), as eager's CUDA index kernels do; the launcher compiles a kernel with
        asserts in Triton's debug mode, without which `tl.device_assert` prints nothing."""
        if self.kernel.device.type != "cuda":
            return
        mask = self._mask(dims)
        self.lines.append(f"tl.device_assert(({condition}){f' | ~({mask})' if mask else ''}, {message!r})")
        self.device_asserts = True

    @staticmethod
    def _mask(dims) -> str | None:
        masks = [m for d, m in (("x", "xmask"), ("r", "rmask")) if d in dims]
        return " & ".join(masks) if masks else None

    def _index(self, expr) -> tuple[str, frozenset]:
        """The index as Triton source, and the block axes it varies along."""
        expr = sympy.sympify(expr)
        dims = set()
        for symbol in expr.free_symbols:
            name = symbol.name
            if name in self.size_symbols:
                self.symbols.add(name)
            elif name in self.indirect_dims:
                dims |= self.indirect_dims[name]
            elif name in self.axis_of:
                self.used_vars.add(name)
                dims.add(self.axis_of[name])
        return expressions.index(expr), frozenset(dims)

    def _element_offset(self, name, index) -> tuple[str, frozenset] | None:
        """A fixed element of a buffer of more than one: its offset parameter (kernel.py), or None."""
        index = sympy.sympify(index)
        numel = sympy.sympify(product(self.buffers[name].layout.size))
        if not isinstance(index, sympy.Integer) or not (isinstance(numel, sympy.Integer) and numel > 1):
            return None
        key = (name, int(index))
        if key not in self.element_offsets:
            self.element_offsets[key] = f"offset{len(self.element_offsets)}"
        return self.element_offsets[key], frozenset()

    def var_lines(self, axis: str) -> list[str]:
        """`x0 = xindex % 128`...: the IR's loop variables recovered from the flat block index."""
        loops = self.loops[axis]
        flat = sympy.Symbol(f"{axis}index", integer=True, nonnegative=True)
        if any(size == 0 for _, size in loops):
            # No elements (torch.eye(0), roll of a (0, 0, 0) tensor): every lane is masked off,
            # so any variable serves, and `% 0` / `// 0` would not print.
            return [f"{var.name} = {flat}" for var, _ in loops if var.name in self.used_vars]
        lines, stride = [], sympy.Integer(1)
        for position in reversed(range(len(loops))):
            var, size = loops[position]
            value = FloorDiv(flat, stride)
            if position > 0:
                value = PythonMod(value, size)
            if var.name in self.used_vars:
                text, _ = self._index(value)
                lines.append(f"{var.name} = {text}")
            stride = stride * size
        return lines[::-1]

    def _forwarded(self, name, index):
        for scope in reversed(self.scopes):
            if name in scope.stored and scope.stored[name][0] == index:
                return scope.stored[name][1]
        return None

    def load(self, name, index):
        value = self._forwarded(name, index)
        if value is not None:
            return value
        if name in self.kernel.locals or name in self.kernel.scratch:
            raise AssertionError(f"{self.name}: register-only buffer {name} read before it was computed")
        if name in self.stored_in_memory:
            self.barrier_needed = True
            self._flush_stores()  # read after the store, as the graph orders them
        self.args.setdefault(name, False)
        self.loaded.add(name)
        text, dims = self._element_offset(name, index) or self._index(index)
        dtype = self.buffers[name].dtype
        mask = self._access_mask(name, index, dims)
        masked = f", {mask}, other={literal(0, dtype)}" if mask else ""
        return self._new(f"tl.load({name} + {text}{masked})", dtype, dims)

    def store(self, name, index, value):
        if self.deferred_stores is None:
            self._store(name, index, value, self.lines)
            return
        if len(self.deferred_stores) == MAX_DEFERRED_STORES:
            self._flush_stores()
        self._store(name, index, value, self.deferred_stores)

    def _flush_stores(self):
        if self.deferred_stores:
            self.lines += self.deferred_stores
            self.deferred_stores.clear()

    def _store(self, name, index, value, lines):
        self.scopes[-1].stored[name] = (index, value)
        if name in self.kernel.locals or name in self.kernel.scratch:
            return  # in registers; a looped kernel recomputes scratch rows in each later loop
        self.args[name] = True
        self.stored_in_memory.add(name)
        value = self._tensor(value)
        text, dims = self._index(index)
        pointer = f"{name} + {text}"
        if not value.dims <= dims:
            # A folded row stored at an index without `x` (a kernel with no outer loops).
            dims = dims | value.dims
            pointer = f"tl.broadcast_to({pointer}, {self._shape(dims)})"
        mask = self._access_mask(name, index, dims)
        lines.append(f"tl.store({pointer}, {value}{', ' + mask if mask else ''})")

    def index_expr(self, expr, dtype):
        text, dims = self._index(expr)
        if not expr.free_symbols:
            return self.constant(int(expr), dtype)
        if not dims:
            return self._new(f"tl.full([], {text}, {triton_dtype(dtype)})", dtype, dims)
        return self._new(f"({text}).to({triton_dtype(dtype)})", dtype, dims)

    def indirect_indexing(self, value, size, eager_error=IndexError):
        value = self._tensor(value)
        size_text, _ = self._index(size)
        wrapped = self._new(f"tl.where({value} < 0, {value} + {size_text}, {value})", value.dtype, value.dims)
        self.flag_error(f"({wrapped} < 0) | ({wrapped} >= {size_text})", value.dims, BOUNDS_ERROR_CODES[eager_error])
        self.assert_on_device(f"({wrapped} >= 0) & ({wrapped} < {size_text})", value.dims,
                              "index out of bounds: 0 <= index < size")
        # Out-of-range indices are clamped: a bad index never faults.
        clamped = self._new(f"tl.minimum(tl.maximum({wrapped}, 0), {size_text} - 1)", value.dtype, value.dims)
        self.indirect_dims[clamped.text] = value.dims
        if sympy.sympify(size).is_positive is not True:
            # A dimension that may be empty (a data-dependent size: `y[i]` of `y = x[x > 0]`)
            # has no position to clamp to: accesses through the index are masked off instead
            # (a load gives 0, a store is skipped), and the flag raises eager's error.
            in_range = self._new(f"({wrapped} >= 0) & ({wrapped} < {size_text})", torch.bool, value.dims)
            self.indirect_in_range[clamped.text] = in_range.text
        return sympy.Symbol(clamped.text, integer=True, nonnegative=True)

    def _access_mask(self, name, index, dims) -> str | None:
        """The mask of an access to buffer `name` at `index`: the block's lanes in bounds, each
        indirect index into a maybe-empty dimension in range, and the buffer not empty when it
        may be (a clamped position, as cat's and pad's loads use, is position 0 of nothing)."""
        in_range = sorted({self.indirect_in_range[s.name] for s in sympy.sympify(index).free_symbols if s.name in self.indirect_in_range})
        numel = maybe_empty_numel(self.buffers[name].layout.size)
        nonempty = f"({self._index(numel)[0]} > 0)" if numel is not None else None
        masks = [m for m in (self._mask(dims), *in_range, nonempty) if m]
        return " & ".join(masks) if masks else None
