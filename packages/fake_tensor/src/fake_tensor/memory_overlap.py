"""Eager's refusal of writes whose target shares memory with what the op reads.

Before an op writes, eager classifies how each written tensor's memory relates to itself and
to the op's other tensor arguments (aten/src/ATen/MemoryOverlap.cpp) and raises
"unsupported operation: ..." for an expanded target (several elements at one address,
`has_internal_overlap`), for a target and an input that overlap in part
(`b[:-1].add_(b[1:])`), and, in a few ops, for any overlap (`b.index_add_(0, i, b)`).
Meta kernels skip these checks, so on fakes such a write went through, and a compiled
program returned a value where eager raises.

Which ops check which pairs is spread over ATen: every TensorIterator op (pointwise, `copy_`,
`where`'s out=...), index_add_/index_copy_/scatter/gather/put_/index_put_, cat's and sort's
out=, but neither sum's out= nor mm's, nor fill_ or masked_fill_ on an expanded target.
Rather than restate that list, a write whose target overlaps something is asked of eager
itself: the op runs on CPU tensors of the same geometry and aliasing, and the overlap error
it raises is the answer (a plain RuntimeError, eager's, raised where the user's code made
the call). Where eager goes ahead, the op runs again on separate copies of its arguments:
a functional graph reads every argument before it writes, so unless both runs agree
(`torch.mm(a, b, out=a)` does not; `x.add_(x)` does) or the target is expanded, the op must
run in place as eager runs it, and OverlappingWriteError says so (capture breaks the graph
there). Answers are kept per op and overlap pattern (which argument pairs overlap, and how,
with their dtypes), which is all eager's checks read; each pattern costs one run.

The classification is made on the fakes' sizes, as MemoryOverlap.cpp makes it; symbolic
sizes are compared through the shape environment, which guards the answer, so a call whose
arguments overlap otherwise at new sizes is traced anew. A question only unbacked sizes
could decide is not decided: eager decides at the sizes it runs with, so the op runs as eager
runs it (OverlappingWriteError).

Pairs eager finds too hard to classify (strided views whose spans interleave: columns of one
matrix) are never refused; whether reading first agrees with eager is asked per exact
example geometry, and not guarded: strided views that share no element at the traced sizes
but would at others are not caught.
"""

from __future__ import annotations

import enum
import functools
import warnings
from dataclasses import dataclass
from typing import Any

import torch

from .errors import OverlappingWriteError
from .tensor import FakeTensor

# Both of MemoryOverlap.cpp's messages (internal and partial overlap) begin so.
_OVERLAP_ERROR = "unsupported operation:"
# Asking eager copies the arguments' storages to the CPU; beyond this many bytes it is not asked.
_LARGEST_QUESTION_BYTES = 1 << 28


class Overlap(enum.Enum):
    NO = "no"
    SAME = "same tensor"  # one TensorImpl in two places: `x.add_(x)` (MemoryOverlap's Full)
    FULL = "full"  # two tensors over exactly the same elements
    PARTIAL = "partial"
    INTERNAL = "internal"  # a written tensor whose elements share memory (expanded)
    TOO_HARD = "too hard"  # eager does not decide, and refuses nothing
    UNDECIDED = "undecided"  # only data-dependent (unbacked) sizes could tell


@dataclass(frozen=True)
class _Answer:
    refusal: str | None = None  # eager's error message
    unfaithful: str | None = None  # why a graph cannot reproduce what eager does
    # False where eager was not asked (arguments too large, an unbacked size, a generator):
    # these arguments' answer, not the pattern's.
    for_the_pattern: bool = True


# (op, overlap pattern) -> what eager does.
_ANSWERS: dict[tuple, _Answer] = {}


def check_writes(func, written_names: frozenset[str], args: tuple, kwargs: dict) -> None:
    """Raise eager's RuntimeError if `func` (an op writing the arguments `written_names`)
    refuses these arguments for how their memory overlaps, and OverlappingWriteError if it
    accepts them but a functional graph would compute something else."""
    slots = _tensor_slots(func, written_names, args, kwargs)
    overlaps = _overlaps(slots)
    if not overlaps:
        return
    if any(status is Overlap.UNDECIDED for _, _, status in overlaps):
        # Eager decides at the sizes it runs with; no one graph is right for all of them.
        raise OverlappingWriteError(func, "whether its arguments overlap depends on data-dependent sizes")
    # The checks read the overlaps, and the dtypes and conj/neg bits (`copy_` compares them).
    key = (
        func,
        overlaps,
        tuple((slot[0], slot[1].dtype, slot[1].is_conj(), slot[1].is_neg(), slot[1].dim()) for slot in slots),
    )
    if any(status is Overlap.TOO_HARD for _, _, status in overlaps):
        # Whether views eager cannot classify share elements depends on their exact geometry.
        try:
            geometry = tuple(
                (_examples(t.shape), _examples(t.stride()), _example(t.storage_offset())) for _, t, _, _ in slots
            )
        except _CannotAsk:
            raise OverlappingWriteError(
                func, "whether its arguments share elements depends on data-dependent sizes"
            ) from None
        key += (geometry,)
    answer = _ANSWERS.get(key)
    if answer is None:
        writes_lists = any(len(slot[0]) == 2 for slot in slots if slot[2])
        answer = _eager_answer(func, written_names, args, kwargs, overlaps, writes_lists)
        if answer.for_the_pattern:
            _ANSWERS[key] = answer
    if answer.refusal is not None:
        raise RuntimeError(answer.refusal)
    if answer.unfaithful is not None:
        raise OverlappingWriteError(func, answer.unfaithful)


def _tensor_slots(func, written_names, args, kwargs) -> list:
    """(where, fake, written, storage) for each fake argument; `where` names the argument (and
    item), `storage` is its (meta) storage's identity, which aliasing fakes share."""
    slots = []
    names = _argument_names(func)
    for position, value in enumerate(args):
        _add_slots(slots, names[position] if position < len(names) else position, value, written_names)
    for name, value in kwargs.items():
        _add_slots(slots, name, value, written_names)
    return slots


def _add_slots(slots: list, name, value, written_names) -> None:
    if isinstance(value, FakeTensor):
        slots.append(((name,), value, name in written_names, value._meta.untyped_storage()._cdata))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if isinstance(item, FakeTensor):
                slots.append(((name, index), item, name in written_names, item._meta.untyped_storage()._cdata))


@functools.cache
def _argument_names(func) -> tuple[str, ...]:
    return tuple(a.name for a in func._schema.arguments)


def _overlaps(slots) -> tuple:
    """(written where, other where or None, status) for each way a written tensor may share
    memory with itself or another argument."""
    by_storage: dict[int, list] = {}
    for slot in slots:
        by_storage.setdefault(slot[3], []).append(slot)
    pattern = []
    for where, tensor, written, _ in slots:
        if written and _may_have_internal_overlap(tensor) and (internal := internal_overlap(tensor)) is not Overlap.NO:
            if internal is not Overlap.TOO_HARD:
                pattern.append((where, None, internal))
    for sharing in by_storage.values():
        if len(sharing) == 1 or not any(slot[2] for slot in sharing):
            continue
        for first, second in _pairs_that_may_meet(sharing):
            (where, tensor, written, _), (other_where, other, _, _) = sharing[first], sharing[second]
            if written:
                status = overlap_status(tensor, other)
                if status is not Overlap.NO:
                    pattern.append((where, other_where, status))
    return tuple(pattern)


# Up to this many arguments over one storage, every pair is compared (`x.add_(x)`: cheaper).
_FEW_VIEWS = 8


def _pairs_that_may_meet(sharing: list) -> list[tuple[int, int]]:
    """Ordered pairs of the slots over one storage whose memory may meet. Where every
    geometry is static, only those whose spans intersect (a sweep over the spans sorted by
    start: a foreach op over hundreds of views of one flat buffer stays linear); else all."""
    spans = [_static_span(slot[1]) for slot in sharing] if len(sharing) > _FEW_VIEWS else [None]
    if any(span is None for span in spans):
        candidates = [(i, j) for i in range(len(sharing)) for j in range(i + 1, len(sharing))]
    else:
        candidates, open_spans = [], []
        for i in sorted(range(len(sharing)), key=lambda i: spans[i][0]):
            open_spans = [j for j in open_spans if spans[j][1] > spans[i][0]]
            candidates += [(j, i) for j in open_spans]
            open_spans.append(i)
        # One tensor listed twice is one tensor (MemoryOverlap's first question), even empty.
        seen: dict[int, int] = {}
        for i, slot in enumerate(sharing):
            if id(slot[1]) in seen and spans[i][0] == spans[i][1]:
                candidates.append((seen[id(slot[1])], i))
            seen.setdefault(id(slot[1]), i)
    return [pair for i, j in candidates for pair in ((i, j), (j, i))]


def _static_span(tensor: torch.Tensor) -> tuple[int, int] | None:
    """[first byte, one past the last byte) the tensor's elements reach, for static geometry."""
    sizes, strides, offset = tensor.shape, tensor.stride(), tensor.storage_offset()
    if not all(type(v) is int for v in (*sizes, *strides, offset)):
        return None
    begin = offset * tensor.element_size()
    if 0 in sizes:
        return begin, begin
    last = offset + sum((size - 1) * stride for size, stride in zip(sizes, strides))
    return begin, (last + 1) * tensor.element_size()


# -- MemoryOverlap.cpp's classification, on sizes that may be symbolic -------------------------


class _Undecided(Exception):
    """A condition only data-dependent (unbacked) sizes could decide."""


def _holds(condition) -> bool:
    """A condition on sizes: a symbolic one is decided at its example values and guarded, or
    from its symbols' ranges; _Undecided where neither can (unbacked sizes)."""
    if not isinstance(condition, torch.SymBool):
        return bool(condition)
    node = condition.node
    if node.guard_or_false("", 0):
        return True
    if not node.guard_or_true("", 0):
        return False
    raise _Undecided


def _hint(size) -> int | None:
    return size.node.hint if isinstance(size, torch.SymInt) else size


def _may_have_internal_overlap(tensor: torch.Tensor) -> bool:
    """A cheap, guard-free pre-check: internal overlap needs a stride 0 over more than one
    element, which a backed size shows in its example value too (sizes 0 and 1 are never
    symbolic); an unbacked size beside a stride 0 may be more than one. Run on every write:
    kept fast."""
    for dim, stride in enumerate(tensor.stride()):
        if (stride if type(stride) is int else stride.node.hint) == 0:
            size = _hint(tensor.shape[dim])
            if size is None or size > 1:
                return True
    return False


def internal_overlap(tensor: torch.Tensor) -> Overlap:
    """has_internal_overlap: INTERNAL (a stride 0 over several elements), NO, TOO_HARD, or
    UNDECIDED (data-dependent sizes decide)."""
    sizes, strides = tensor.shape, tensor.stride()
    try:
        if _non_overlapping_and_dense(sizes, strides):
            return Overlap.NO
        if any(_holds(size > 1) and _holds(stride == 0) for size, stride in zip(sizes, strides)):
            return Overlap.INTERNAL
    except _Undecided:
        return Overlap.UNDECIDED
    return Overlap.TOO_HARD


def overlap_status(a: torch.Tensor, b: torch.Tensor) -> Overlap:
    """get_overlap_status of two tensors over one storage (UNDECIDED where data-dependent
    sizes decide)."""
    try:
        return _overlap_status(a, b)
    except _Undecided:
        return Overlap.UNDECIDED


def _overlap_status(a: torch.Tensor, b: torch.Tensor) -> Overlap:
    if a is b:
        return Overlap.SAME
    if _holds(a.numel() == 0) or _holds(b.numel() == 0):
        return Overlap.NO
    if not _non_overlapping_and_dense(a.shape, a.stride()) or not _non_overlapping_and_dense(b.shape, b.stride()):
        return Overlap.TOO_HARD
    a_begin, b_begin = a.storage_offset() * a.element_size(), b.storage_offset() * b.element_size()
    a_end, b_end = a_begin + a.numel() * a.element_size(), b_begin + b.numel() * b.element_size()
    if _holds(a_begin == b_begin) and _holds(a_end == b_end):
        same_strides = len(a.stride()) == len(b.stride()) and all(
            _holds(x == y) for x, y in zip(a.stride(), b.stride())
        )
        return Overlap.FULL if same_strides else Overlap.PARTIAL
    if _holds(a_begin < b_end) and _holds(b_begin < a_end):
        return Overlap.PARTIAL
    return Overlap.NO


def _non_overlapping_and_dense(sizes, strides) -> bool:
    """c10's _compute_non_overlapping_and_dense: the elements fill a block of memory once
    each, in some order of the dims."""
    if len(sizes) == 1:
        return _holds(sizes[0] < 2) or _holds(strides[0] == 1)

    def before(a: int, b: int) -> bool:  # c10's sort: dims of size < 2 last, then by stride
        if _holds(sizes[a] < 2):
            return False
        if _holds(sizes[b] < 2):
            return True
        return _holds(strides[a] < strides[b])

    order = sorted(range(len(sizes)), key=functools.cmp_to_key(lambda a, b: -1 if before(a, b) else int(before(b, a))))
    required = 1
    for dim in order:
        if _holds(sizes[dim] < 2):
            return True
        if not _holds(strides[dim] == required):
            return False
        required = required * sizes[dim]
    return True


# -- asking eager ------------------------------------------------------------------------------


_FAITHFUL = _Answer()


class _CannotAsk(Exception):
    """An argument has no CPU stand-in (an unbacked size, a generator, a storage, too many bytes)."""


def _eager_answer(func, written_names, args, kwargs, overlaps, writes_lists: bool) -> _Answer:
    """What eager does with `func` on arguments shaped and aliased like these fakes: refuse
    (its message), or go ahead; then, whether a graph that reads every argument before it
    writes (what functionalization builds) computes what eager's kernel did in place."""
    # Where eager cannot be asked, or fails for another reason (which the meta kernel may or
    # may not see), the op runs as eager runs it; that answer is these arguments', not the pattern's.
    not_asked = "its arguments cannot be copied to the CPU to ask eager whether it refuses the write"
    state = torch.get_rng_state()
    # The op runs for real, on plain CPU tensors, seen by no mode (a user's `with
    # torch.device(...)` included); the CPU generator it may draw from is restored after, and
    # the warnings eager gives for such writes (masked_fill_ on an expanded tensor) are the run's.
    with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            stand_ins = _StandIns(args, kwargs)
            aliased = stand_ins.run(func, written_names, args, kwargs, separate=False)
            if any(status is Overlap.INTERNAL for _, _, status in overlaps):
                return _Answer(unfaithful="it writes a tensor whose elements share memory (an expanded tensor)")
            if writes_lists:
                # foreach ops: functionalization writes items that share memory one at a time, as eager.
                return _FAITHFUL
            torch.set_rng_state(state)
            separate = stand_ins.run(func, written_names, args, kwargs, separate=True)
            agree = all(_same_values(a, b) for a, b in zip(aliased, separate))
        except _CannotAsk:
            return _Answer(unfaithful=not_asked, for_the_pattern=False)
        except Exception as error:  # noqa: BLE001  (eager's overlap error, or no answer)
            message = str(error)
            if isinstance(error, RuntimeError) and message.startswith(_OVERLAP_ERROR):
                return _Answer(refusal=message)
            first_line = message.splitlines()[0] if message else type(error).__name__
            return _Answer(
                unfaithful=f"eager failed on stand-ins of its arguments ({first_line})", for_the_pattern=False
            )
        finally:
            torch.set_rng_state(state)
    if agree:
        return _FAITHFUL
    return _Answer(unfaithful="its result over memory it also reads depends on the order its kernel reads and writes")


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.is_floating_point() or a.is_complex():
        return torch.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    return torch.equal(a, b)


class _StandIns:
    """CPU tensors with the fakes' geometry (example sizes) and reproducible values: floats
    random, integers zero (valid indices), bools random."""

    def __init__(self, args, kwargs):
        fakes = [x for x in _leaves((args, kwargs)) if isinstance(x, FakeTensor)]
        needed: dict[int, tuple[int, torch.dtype]] = {}
        for fake in fakes:
            key = fake.untyped_storage()._cdata
            size, dtype = needed.get(key, (0, fake.dtype))
            needed[key] = (max(size, _bytes_spanned(fake)), dtype)
        if sum(size for size, _ in needed.values()) > _LARGEST_QUESTION_BYTES:
            raise _CannotAsk
        generator = torch.Generator().manual_seed(0)
        self._initial = {key: _values(size, dtype, generator) for key, (size, dtype) in needed.items()}

    def run(self, func, written_names, args, kwargs, *, separate: bool) -> list[torch.Tensor]:
        """Run `func` on stand-ins sharing storages as the fakes do, or (`separate`) each
        argument with its own copy of its values; the written arguments' values after."""
        converter = _Converter(self._initial, separate)
        names = [a.name for a in func._schema.arguments]
        real_args = [converter.of(v, i < len(names) and names[i] in written_names) for i, v in enumerate(args)]
        real_kwargs = {k: converter.of(v, k in written_names) for k, v in kwargs.items()}
        func(*real_args, **real_kwargs)
        return converter.written


class _Converter:
    def __init__(self, initial: dict[int, torch.Tensor], separate: bool):
        self._storages = {key: values.clone().untyped_storage() for key, values in initial.items()}
        self._separate = separate
        self._tensors: dict[int, torch.Tensor] = {}
        self.written: list[torch.Tensor] = []

    def of(self, value: Any, written: bool = False) -> Any:
        if isinstance(value, FakeTensor):
            real = self._tensors.get(id(value)) if not self._separate else None
            if real is None:
                real = self._tensors[id(value)] = self._stand_in(value)
            if written:
                self.written.append(real)
            return real
        if isinstance(value, torch.Tensor):
            return value.clone()  # a real 0-dim CPU tensor: the run must not write into it
        if isinstance(value, (list, tuple)):
            return type(value)(self.of(x, written) for x in value)
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return _example(value)
        if isinstance(value, torch.device):
            return torch.device("cpu")
        if isinstance(value, (torch.Generator, torch.UntypedStorage)):
            raise _CannotAsk
        return value

    def _stand_in(self, fake: FakeTensor) -> torch.Tensor:
        storage = self._storages[fake.untyped_storage()._cdata]
        if self._separate:
            storage = storage.clone()
        sizes = [_example(s) for s in fake.shape]
        strides = [_example(s) for s in fake.stride()]
        real = torch.empty(0, dtype=fake.dtype, device="cpu").set_(
            storage, _example(fake.storage_offset()), sizes, strides
        )
        if fake.is_conj():
            torch._C._set_conj(real, True)
        if fake.is_neg():
            torch._C._set_neg(real, True)
        return real


def _values(size: int, dtype: torch.dtype, generator: torch.Generator) -> torch.Tensor:
    count = -(-size // dtype.itemsize)
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(count, generator=generator, device="cpu").to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, (count,), generator=generator, device="cpu").bool()
    return torch.zeros(count, dtype=dtype, device="cpu")


def _bytes_spanned(fake: FakeTensor) -> int:
    sizes = [_example(s) for s in fake.shape]
    if 0 in sizes:
        return 0
    strides = [_example(s) for s in fake.stride()]
    last = _example(fake.storage_offset()) + sum((size - 1) * stride for size, stride in zip(sizes, strides))
    return (last + 1) * fake.element_size()


def _examples(values) -> tuple:
    return tuple(_example(v) for v in values)


def _example(value):
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        hint = value.node.hint
        if hint is None:
            raise _CannotAsk
        return hint
    return value


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value
