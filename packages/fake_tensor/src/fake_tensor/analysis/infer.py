"""`infer_shapes`: run a function or module on fakes with named dynamic sizes, no real memory.

    report = infer_shapes(model, TensorSpec((batch, seq), torch.long), dynamic_shapes=None)
    report.outputs            # what the function returned, as fakes: logits.shape == (batch, seq, 50257)
    report.shape(report.outputs.logits)        # "(batch, seq, 50257)"
    report.constraints        # [seq <= 1024  (aten.embedding..., modeling_gpt2.py:576 in forward: ...)]
    report.evaluate_shape(report.outputs.logits, batch=4, seq=100)   # (4, 100, 50257)

A module's parameters and buffers become fakes (nothing is copied); a module built on the
meta device (`with torch.device("meta"): ...`, which allocates nothing) works too, its
tensors standing for tensors on the inputs' device. The call runs under the caller's grad
mode (wrap it in `torch.no_grad()` for an inference-only analysis: it is faster).
Constraints that contradict a declared Dim raise `ConstraintViolationError` listing each one
(see constraints.py); the shapes found hold wherever the constraints do, and
`evaluate_shape` refuses sizes that break them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable

import sympy
import torch
import torch.utils._pytree as pytree

from fake_tensor.analysis.analysis_mode import AnalysisMode
from fake_tensor.analysis.arguments import fake_arguments
from fake_tensor.analysis.constraints import Constraint, constraints_found, violations
from fake_tensor.errors import FakeTensorError
from fake_tensor.mode import FakeTensorMode
from fake_tensor.symbolic import ConstraintViolationError, ShapeEnv, print_python
from fake_tensor.symbolic.provenance import user_frame_in


def _expr_of(size) -> sympy.Expr:
    return size.node.expr if isinstance(size, torch.SymInt) else sympy.Integer(size)


@dataclasses.dataclass
class ShapeReport:
    outputs: object
    constraints: list[Constraint]
    shape_env: ShapeEnv

    def symbolic_shape(self, t: torch.Tensor) -> tuple[sympy.Expr, ...]:
        """The shape of a fake as sympy expressions over the Dims' symbols, simplified."""
        return tuple(self.shape_env.simplify(_expr_of(size)) for size in t.shape)

    def shape(self, t: torch.Tensor) -> str:
        """`(batch, seq, 768)`."""
        parts = [print_python(expr) for expr in self.symbolic_shape(t)]
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"

    def evaluate_shape(self, t: torch.Tensor, **dim_sizes: int) -> tuple[int, ...]:
        """The concrete shape `t` would have with the given size for each Dim (by name)."""
        if not self.holds_at(**dim_sizes):
            raise ConstraintViolationError(
                f"the shapes found hold only where the analysed code's constraints do, and {dim_sizes} "
                f"breaks them:\n{self}"
            )
        values = self._symbol_values(dim_sizes)
        return tuple(int(expr.xreplace(values)) for expr in self.symbolic_shape(t))

    def holds_at(self, **dim_sizes: int) -> bool:
        """Whether the given size for each Dim (by name) meets every constraint: where the
        shapes found are valid. Which constraints there are can depend on torch's version
        (torch 2.11's max_pool2d meta kernel asks whether a size is even; 2.13's does not)."""
        return self.shape_env.guards_hold_at(self._symbol_values(dim_sizes))

    def _symbol_values(self, dim_sizes: dict[str, int]) -> dict[sympy.Symbol, int]:
        missing = {dim.name for dim in self.shape_env.declared.values()} - set(dim_sizes)
        if missing:
            raise TypeError(f"needs a size for each Dim; missing {sorted(missing)}")
        return {symbol: dim_sizes[dim.name] for symbol, dim in self.shape_env.declared.items()}

    def __str__(self) -> str:
        leaves, _ = pytree.tree_flatten_with_path(self.outputs)
        lines = ["outputs:"]
        lines += [
            f"  output{pytree.keystr(path)}: {self.shape(leaf)} {leaf.dtype}"
            for path, leaf in leaves
            if isinstance(leaf, torch.Tensor)
        ]
        lines.append("constraints:" if self.constraints else "constraints: none")
        lines += [f"  {c}" for c in self.constraints]
        return "\n".join(lines)


def _input_device(args, kwargs) -> torch.device:
    """Where the inputs live (the first tensor's device; CPU when there is none)."""
    tensors = [leaf for leaf in pytree.tree_leaves((args, kwargs)) if isinstance(leaf, torch.Tensor)]
    return tensors[0].device if tensors else torch.device("cpu")


@contextlib.contextmanager
def _traceable_paths():
    """`torch.compiler.is_compiling()` reads True while the analysed code runs, as under torch.compile.

    Libraries keep a path for tracers beside a data-dependent fast path (transformers'
    `find_packed_sequence_indices` asks `(mask[:, -1] == 0).all()` unless `is_tracing()`), and
    values of fakes do not exist, so the analysis must take the tracers' path."""
    previous = getattr(torch.compiler, "_is_compiling_flag", None)
    if previous is None:  # torch < 2.5 keeps no such flag
        yield
        return
    torch.compiler._is_compiling_flag = True
    try:
        yield
    finally:
        torch.compiler._is_compiling_flag = previous


def infer_shapes(fn: Callable, *args, dynamic_shapes=None, **kwargs) -> ShapeReport:
    """Output shapes of `fn(*args, **kwargs)` for every size the `dynamic_shapes` Dims allow.

    Arguments may be real tensors, fakes or `TensorSpec` objects; `dynamic_shapes` names their
    dynamic dims with `Dim` objects, as torch.export does (see arguments.py).
    """
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    forward = fn.forward if isinstance(fn, torch.nn.Module) else fn
    fake_args, fake_kwargs = fake_arguments(mode, forward, args, kwargs, dynamic_shapes)
    if isinstance(fn, torch.nn.Module):
        target = mode.from_module(fn, device=_input_device(fake_args, fake_kwargs))
    else:
        target = fn
    try:
        with mode, AnalysisMode(mode), _traceable_paths():
            outputs = target(*fake_args, **fake_kwargs)
    except FakeTensorError as error:
        # The op is in the message; the line of the analysed code that ran it is not.
        where = user_frame_in(error.__traceback__)
        if where is not None:
            error.add_note(f"infer_shapes: raised by {where}")
        raise
    constraints = constraints_found(env)
    problems = violations(env, constraints)
    if problems:
        raise ConstraintViolationError(
            "the code requires more of its dynamic sizes than the Dims declare:\n  - " + "\n  - ".join(problems)
        )
    return ShapeReport(outputs, constraints, env)
