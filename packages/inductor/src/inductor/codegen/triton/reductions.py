"""Reductions of the Triton printer, persistent and looped (kernel.py describes both).

A persistent kernel reduces its one loaded [XBLOCK, RBLOCK] tile along `r` in a single step. A
looped one keeps an [XBLOCK, RBLOCK] accumulator per reduction, combines each block into it
inside the loop, and folds it to [XBLOCK, 1] after the loop, where the result's stores go too.

The welford_* reductions of one value share one fold of (mean, m2, weight) per kernel stage: a
looped kernel keeps those per lane (Welford's update for an element, relative to the lane's
first element; Chan's combination for partial statistics) and combines the lanes after the
loop; a persistent one reduces its tile of elements in two passes over registers (the mean,
then the squared deviations from it). Masked lanes carry weight 0, so they do not count.
"""

from __future__ import annotations

import torch

from ...ir import InnerLoop
from ...ops import use_handler
from ...runtime.triton_configs import KIND_LOOPED, KIND_PERSISTENT
from .expressions import literal, triton_dtype
from .module_text import indent
from .values import Scope, TritonValue

_REDUCE_FN = {
    "sum": "tl.sum", "max": "helpers.reduce_max", "min": "helpers.reduce_min", "prod": "helpers.reduce_prod",
    "any": "helpers.reduce_any", "all": "helpers.reduce_all",
}
_COMBINE = {
    "sum": "{acc} + {value}", "prod": "{acc} * {value}", "max": "helpers.max_combine({acc}, {value})",
    "min": "helpers.min_combine({acc}, {value})", "any": "{acc} | {value}", "all": "{acc} & {value}",
}


_WELFORD_PART = {"welford_mean": 0, "welford_m2": 1, "welford_weight": 2}


def _identity(reduction_type: str, dtype: torch.dtype) -> str:
    if reduction_type in ("sum", "any"):
        return literal(0, dtype) if reduction_type == "sum" else "False"
    if reduction_type == "prod":
        return literal(1, dtype)
    if reduction_type == "all":
        return "True"
    largest = reduction_type in ("min", "argmin")
    if dtype.is_floating_point:
        return 'float("inf")' if largest else 'float("-inf")'
    if dtype == torch.bool:
        return "True" if largest else "False"
    info = torch.iinfo(dtype)
    return str(info.max if largest else info.min)


class ReductionOps:
    """Mixed into TritonKernel: the ops handler's reductions, and the loop of a looped kernel's stage."""

    def reduction(self, dtype, reduction_type, value):
        if reduction_type in _WELFORD_PART:
            return self._welford(dtype, value)[_WELFORD_PART[reduction_type]]
        value = self._tensor(value)
        identity = _identity(reduction_type, dtype)
        full = self._shape({"x", "r"})
        masked = self._new(f"tl.where(xmask & rmask, {value}, {identity})", dtype, {"x", "r"})
        arg = reduction_type in ("argmax", "argmin")
        if self.kind == KIND_PERSISTENT:
            if arg:
                indices = self._new(f"tl.broadcast_to(rindex.to(tl.int64), {full})", torch.int64, {"x", "r"})
                text = f"helpers.reduce_{reduction_type}({masked}, {indices}, 1)"
                return self._new(text, torch.int64, {"x"})
            fn = _REDUCE_FN[reduction_type]
            text = f"{fn}({masked}, 1, keep_dims=True)" if fn == "tl.sum" else f"{fn}({masked}, 1)"
            return self._new(text, dtype, {"x"})
        acc = f"acc{len(self.accumulators)}"
        self.accumulators.append(acc)
        self.pre.append(f"{acc} = tl.full({full}, {identity}, {triton_dtype(dtype)})")
        result = f"tmp{self.counter}"
        self.counter += 1
        if arg:
            self.pre.append(f"{acc}_index = tl.full({full}, 0, tl.int64)")
            self.lines.append(
                f"{acc}, {acc}_index = helpers.{reduction_type}_combine({acc}, {acc}_index, {masked}, rindex.to(tl.int64))"
            )
            self.post.append(f"{result} = helpers.reduce_{reduction_type}({acc}, {acc}_index, 1)")
            return TritonValue(result, torch.int64, {"x"})
        self.lines.append(f"{acc} = {_COMBINE[reduction_type].format(acc=acc, value=masked)}")
        fn = _REDUCE_FN[reduction_type]
        self.post.append(f"{result} = {fn}({acc}, 1, keep_dims=True)" if fn == "tl.sum" else f"{result} = {fn}({acc}, 1)")
        return TritonValue(result, dtype, {"x"})

    def _welford(self, dtype, value) -> tuple[TritonValue, TritonValue, TritonValue]:
        """(mean, m2, weight) over `r` of `value`: an element, or a (mean, m2, weight) tuple of
        partial statistics. Folded once per stage, however many welford_* reductions read it."""
        parts = tuple(self._tensor(part) for part in (value if isinstance(value, tuple) else (value,)))
        key = tuple(part.text for part in parts)
        for scope in reversed(self.scopes):
            if key in scope.welford:
                return scope.welford[key]
        mask, tdtype = "xmask & rmask", triton_dtype(dtype)
        names = [f"tmp{self.counter + k}" for k in range(3)]
        self.counter += 3
        if len(parts) == 1 and self.kind == KIND_PERSISTENT:
            self.lines.append(f"{', '.join(names)} = helpers.welford_tile({parts[0]}, {mask}, 1)")
        elif self.kind == KIND_PERSISTENT:
            masked = ", ".join(f"tl.where({mask}, {part}, 0.0)" for part in parts)
            self.lines.append(f"{', '.join(names)} = helpers.welford({masked}, 1)")
        else:
            acc = f"acc{len(self.accumulators)}"
            accs = [f"{acc}_mean", f"{acc}_m2", f"{acc}_weight"]
            if len(parts) == 1:
                accs.insert(0, f"{acc}_pivot")
                update = f"helpers.welford_add({', '.join(accs)}, {parts[0]}, {mask})"
                fold = f"helpers.welford_pivoted({', '.join(accs)}, 1)"
            else:
                masked = ", ".join(f"tl.where({mask}, {part}, 0.0)" for part in parts)
                update = f"helpers.welford_combine({', '.join(accs)}, {masked})"
                fold = f"helpers.welford({', '.join(accs)}, 1)"
            self.accumulators += accs
            self.pre += [f"{a} = tl.zeros({self._shape({'x', 'r'})}, {tdtype})" for a in accs]
            self.lines.append(f"{', '.join(accs)} = {update}")
            self.post.append(f"{', '.join(names)} = {fold}")
        result = tuple(TritonValue(name, dtype, {"x"}) for name in names)
        self.scopes[-1].welford[key] = result
        return result

    def store_reduction(self, name, index, value):
        dtype = self.buffers[name].dtype
        if self.kind != KIND_LOOPED:
            self._store(name, index, self.to_dtype(value, dtype), self.lines)
            return
        # The folded value exists after the loop: emit there, seeing only the kernel-level scope.
        saved_lines, saved_scopes = self.lines, self.scopes
        self.lines, self.scopes = self.post, self.scopes[:-1]
        try:
            self._store(name, index, self.to_dtype(value, dtype), self.post)
        finally:
            self.lines, self.scopes = saved_lines, saved_scopes

    def _looped_stage(self, stage: InnerLoop) -> list[str]:
        """One InnerLoop stage of a looped kernel: its accumulators' setup, its `for roffset` loop,
        and the folds after it."""
        self.pre, self.post, self.lines = [], [], []
        self.barrier_needed = False
        self.scopes.append(Scope())
        with use_handler(self):
            # Recomputing a scratch row costs the loads it reads; storing it would cost a write
            # and the same read back.
            for node in self.scratch_nodes:
                node.body()
            for node in stage.nodes:
                node.body()
        self.scratch_nodes += [node for node in stage.nodes if node.name in self.kernel.scratch]
        self.scopes.pop()
        loop = [
            "for roffset in range(0, rnumel, RBLOCK):",
            *indent(["rindex = roffset + rbase", "rmask = rindex < rnumel", *self.var_lines("r"), *self.lines]),
        ]
        barrier = ["tl.debug_barrier()"] if self.barrier_needed else []
        return [*barrier, *self.pre, *loop, *self.post]
