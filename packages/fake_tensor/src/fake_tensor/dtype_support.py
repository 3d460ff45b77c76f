"""Dtypes eager's CPU kernels reject, learnt by running the kernel once.

Meta kernels take every dtype; eager's CPU kernels do not: `abs` of a bool tensor raises
NotImplementedError ("abs_cpu" not implemented for 'Bool'), `frac` of an int tensor too. A
fake must raise what eager raises, or a compiled program returns a value where eager raised
(inductor computes `abs` of bools, and decompositions compute `frac` of ints). So for a
pointwise op over CPU tensors of integer or bool dtype, the real kernel runs once on
one-element tensors of the same dtypes and ranks (so that type promotion is eager's); a dtype
error it raises is remembered per (op, argument kinds) and raised again on fakes.

Matrix products are probed too where their tensors' dtypes differ: the meta kernels of
mm/addmm/addmv/dot/... accept a float64 input with a float32 weight, eager's CPU kernels raise
"mat1 and mat2 must have the same dtype". A compiled graph holding such a call raised only when
it ran, after the writes before it had been deferred (aot_autograd applies input mutations
after the graph): a BatchNorm's running statistics were not updated where eager's were.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_leaves, tree_map

_UNKNOWN = object()
_VERDICTS: dict[tuple, BaseException | None] = {}


# Matrix products, whose CPU kernels take one dtype for all their tensors.
_PRODUCTS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm", "aten::mv",
                       "aten::addmv", "aten::dot", "aten::vdot", "aten::addr", "aten::_addmm_activation"})


def probes(func: torch._ops.OpOverload) -> bool:
    """Whether `func`'s dtype support is checked: pointwise ops that draw no random numbers
    (a probe must not move the generator), and matrix products."""
    if func._schema.name in _PRODUCTS:
        return True
    return torch.Tag.pointwise in func.tags and torch.Tag.nondeterministic_seeded not in func.tags


def check(func, args, kwargs, fakes: list) -> None:
    """Raise eager's dtype error for this call, if its CPU kernel rejects these dtypes."""
    if any(f.device.type != "cpu" for f in fakes):
        return
    if func._schema.name in _PRODUCTS:
        if len({f.dtype for f in fakes}) == 1:
            return
    elif all(f.dtype.is_floating_point or f.dtype.is_complex for f in fakes):
        return
    key = (func, *_kinds(args, kwargs))
    error = _VERDICTS.get(key, _UNKNOWN)
    if error is _UNKNOWN:
        error = _VERDICTS[key] = _probe(func, args, kwargs)
    if error is not None:
        raise type(error)(*error.args)


def _kinds(args, kwargs) -> tuple:
    """What the probe's outcome depends on: tensors' dtypes and ranks (their values are
    stand-ins), numbers' values (`pow(ints, -1)` raises where `pow(ints, 2)` does not), and
    which keyword each argument is."""
    return tuple(map(_kind, tree_leaves(args))), tuple((k, tuple(map(_kind, tree_leaves(v)))) for k, v in kwargs.items())


def _kind(leaf):
    if isinstance(leaf, torch.Tensor):
        return (leaf.dtype, leaf.dim())
    if type(leaf) in _SYMBOLIC_STAND_INS:
        return type(leaf)
    return (type(leaf), leaf) if isinstance(leaf, (int, float, complex)) else type(leaf)


def _probe(func, args, kwargs) -> BaseException | None:
    with torch._C._DisableTorchDispatch(), torch.no_grad():
        try:
            func(*tree_map(_stand_in, args), **tree_map(_stand_in, kwargs))
        except (NotImplementedError, RuntimeError) as error:
            # One-element operands broadcast with anything: what a pointwise kernel still
            # refuses is their dtypes ("Boolean inputs not supported for relu").
            return error
        except Exception:  # noqa: BLE001  (not eager's dtype check)
            return None
    return None


_SYMBOLIC_STAND_INS = {torch.SymInt: 1, torch.SymFloat: 1.0, torch.SymBool: True}


def _stand_in(leaf):
    if isinstance(leaf, torch.Tensor):
        # Sizes of 1 at the same rank: they broadcast, and a matrix product's shapes agree.
        return torch.ones((1,) * leaf.dim(), dtype=leaf.dtype)
    return _SYMBOLIC_STAND_INS.get(type(leaf), leaf)
