"""Meta kernels' outputs, remade without the kernel when an op meets the same arguments again.

Most of torch's meta kernels are Python (torch._refs, torch._decomp) and cost about a
millisecond a call, while a model repeats one block's ops layer after layer on arguments of
identical metadata. What a meta kernel returns is a function of its arguments' metadata
(sizes, strides, storage offset, dtype, conj/neg bits), of its non-tensor arguments, of
the default dtype (which factories and Python-float promotion read) and of the
deterministic-algorithms flag (some meta kernels raise under it). So for two kinds of op
the second call with an equal key builds the outputs straight from the recorded metadata:

- functional ops (no mutated argument, no output aliasing an input), whose outputs are
  fresh tensors: each is recorded as sizes, strides and dtype, and remade by empty_strided;
- plain in-place ops (`add_`: only `self` is written, and its geometry cannot change),
  whose output is `self`: the kernel only validated the arguments, and equal metadata
  passes the same checks.

A record is kept only if the call behaved as its kind promises (fresh outputs, each on a
storage of its own that empty_strided would allocate; `self` returned), so an op whose
kernel returns views despite its schema is never replayed. Calls that raise are not recorded.

With a ShapeEnv, sizes are SymInts and keys hold their sympy expressions (`3*s0`), compared
structurally: comparing SymInts would ask the ShapeEnv a question and record a guard. A
symbolic kernel is Python under the Python dispatcher (tens of milliseconds a call), so this
is where the cache pays most. It is sound within one ShapeEnv: the output expressions are
facts about its symbols, and every guard the first call recorded is already in the env (a
repeat would ask the same questions, about the same hints, and get the same answers). Keys
name the env's symbols (`s0` means something else in another env), so each env keeps its
own caches (`ShapeEnv.meta_output_caches`); records hold the env's SymInts.

Each op has its own `OutputCache` (see `execution._OpFacts`), so keys need not name the op.
What the keys leave out cannot change a meta kernel's output: `requires_grad` and autograd
state are handled above the dispatch level fakes run at, and the output device is decided
from the arguments' devices by `devices.output_device` before the cache is asked.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
import torch

META = torch.device("meta")
# Per op. A model's working set is far smaller; when full, the op's cache starts over
# rather than tracking use.
_MAX_ENTRIES = 4096

_SCALAR_TYPES = frozenset(
    {int, float, bool, complex, str, type(None), torch.dtype, torch.device, torch.layout, torch.memory_format}
)


class _ReturnsSelf:
    """What `OutputCache.replay` returns for a plain in-place op: its output is `self`."""


RETURNS_SELF = _ReturnsSelf()


def output_cache_for(schema: torch._C.FunctionSchema, changes_geometry: bool) -> OutputCache | None:
    """A cache for the op, or None when the op is neither functional nor plain in-place."""
    if not schema.is_mutable and all(r.alias_info is None for r in schema.returns):
        return OutputCache(returns_self=False)
    writes = [a for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    if (
        not changes_geometry
        and len(writes) == 1
        and writes[0] is schema.arguments[0]
        and len(schema.returns) == 1
        and schema.returns[0].alias_info is not None
        and schema.returns[0].alias_info.before_set == writes[0].alias_info.before_set
    ):
        return OutputCache(returns_self=True)
    return None


def symbolic_output_cache(shape_env, func, static_cache: OutputCache) -> OutputCache:
    """`func`'s cache for calls on `shape_env`'s symbols (of the kind `static_cache` is)."""
    cache = shape_env.meta_output_caches.get(func)
    if cache is None:
        cache = OutputCache(returns_self=static_cache.returns_self, symbolic=True)
        shape_env.meta_output_caches[func] = cache
    return cache


class OutputCache:
    def __init__(self, *, returns_self: bool, symbolic: bool = False):
        self.returns_self = returns_self
        self._key_of = _symbolic_key_of if symbolic else _key_of
        self._entries: dict[tuple, object] = {}

    def key(self, args: tuple, kwargs: dict) -> tuple | None:
        """The key of a call on meta tensors, or None when an argument cannot be keyed."""
        key_of = self._key_of
        try:
            return (
                torch.get_default_dtype(),
                torch.are_deterministic_algorithms_enabled(),
                tuple(key_of(a) for a in args),
                tuple((name, key_of(v)) for name, v in kwargs.items()),
            )
        except _Uncacheable:
            return None

    def replay(self, key: tuple):
        """None when `key` was not recorded; else RETURNS_SELF, or the outputs remade on meta
        (call with dispatch to modes disabled)."""
        template = self._entries.get(key)
        if template is None or template is RETURNS_SELF:
            return template
        return _make(template)

    def record(self, key: tuple, args: tuple, kwargs: dict, result) -> None:
        if self.returns_self:
            if result is args[0]:
                self._store(key, RETURNS_SELF)
            return
        input_storages = {t.untyped_storage()._cdata for t in _tensors_in((args, kwargs))}
        try:
            template = _template_of(result, input_storages)
        except _Uncacheable:
            return
        self._store(key, template)

    def _store(self, key: tuple, template: object) -> None:
        if len(self._entries) >= _MAX_ENTRIES:
            self._entries.clear()
        self._entries[key] = template


class _Uncacheable(Exception):
    pass


class _TensorKey(tuple):
    """A tensor argument's metadata; its own type so that it never equals a list's key."""


def _key_of(value):
    if type(value) in _SCALAR_TYPES:
        return type(value), value  # 1, 1.0 and True are equal but promote differently
    if isinstance(value, torch.Tensor):
        return _TensorKey((value.shape, value.stride(), value.storage_offset(), value.dtype, value.is_conj(), value.is_neg()))
    if isinstance(value, (list, tuple)):
        return tuple(_key_of(v) for v in value)
    raise _Uncacheable  # a SymInt, a Generator, a storage...


_SYMBOLIC_SCALARS = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _symbolic_key_of(value):
    """`_key_of` for calls whose sizes and scalars may be symbolic: SymInts become their
    expressions (a constant SymInt keys like its int, as the kernel sees the same value)."""
    if type(value) in _SCALAR_TYPES:
        return type(value), value
    if isinstance(value, torch.Tensor):
        return _TensorKey(
            (
                tuple(map(_expr, value.shape)),
                tuple(map(_expr, value.stride())),
                _expr(value.storage_offset()),
                value.dtype,
                value.is_conj(),
                value.is_neg(),
            )
        )
    if isinstance(value, _SYMBOLIC_SCALARS):
        return _symbolic_type(value), _expr(value)
    if isinstance(value, (list, tuple)):
        return tuple(_symbolic_key_of(v) for v in value)
    raise _Uncacheable


def _symbolic_type(value) -> type:
    return {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(value)]


def _expr(value):
    """A size as sympy (symbolic) or int, read without asking the ShapeEnv anything."""
    if isinstance(value, _SYMBOLIC_SCALARS):
        constant = value.node.maybe_as_int() if isinstance(value, torch.SymInt) else None
        return constant if constant is not None else value.node.expr
    return value


@dataclass(frozen=True)
class _FreshTensor:
    sizes: tuple  # ints, or the ShapeEnv's SymInts
    strides: tuple
    dtype: torch.dtype

    def make(self) -> torch.Tensor:
        return torch.empty_strided(self.sizes, self.strides, dtype=self.dtype, device=META)


def _template_of(out, seen_storages: set[int]):
    if isinstance(out, torch.Tensor):
        storage = out.untyped_storage()
        if storage._cdata in seen_storages or out.is_conj() or out.is_neg() or out.layout != torch.strided:
            raise _Uncacheable  # aliases an input or another output: not a fresh tensor
        seen_storages.add(storage._cdata)
        sizes, strides = tuple(out.shape), out.stride()
        # Compared as expressions (structurally): a SymInt comparison would record a guard.
        spanned = _bytes_spanned(tuple(map(_expr, sizes)), tuple(map(_expr, strides)), out.dtype.itemsize)
        if _expr(out.storage_offset()) != 0 or not _same_size(_expr(storage.nbytes()), spanned):
            raise _Uncacheable  # a window into a larger buffer: empty_strided would not remake it
        return _FreshTensor(sizes, strides, out.dtype)
    if type(out) in (list, tuple):
        return type(out)(_template_of(x, seen_storages) for x in out)
    if type(out) in _SCALAR_TYPES:
        return out
    raise _Uncacheable


def _bytes_spanned(sizes, strides, itemsize: int):
    """The storage size empty_strided allocates for this geometry (int or sympy)."""
    if 0 in sizes:  # structural for expressions: a size that is an expression is not 0 here
        return 0
    return (1 + sum((size - 1) * stride for size, stride in zip(sizes, strides))) * itemsize


def _same_size(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    # Two spellings of one polynomial expand alike; anything sympy does not show equal this
    # way is left uncached (the cost is a kernel call, never a wrong answer).
    return sympy.expand(a - b) == 0


def _make(template):
    if isinstance(template, _FreshTensor):
        return template.make()
    if type(template) in (list, tuple):
        return type(template)(_make(x) for x in template)
    return template


def _tensors_in(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)
