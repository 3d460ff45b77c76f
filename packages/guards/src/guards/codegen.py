"""Turning guards into one Python function: checks, source reads with hoisting, constants.

Every guard kind's emitter (see `kinds`) turns its guard into `Check`s: the condition under
which the check fails, spelled by `must_be`, `must_equal`, ... so the generated `if` reads
like the guard (`x.dtype is not float32`), and the sentence a user reads when it fails.
Emitters never spell a source themselves; they call `ctx.read(source)`, which returns a
placeholder. Once all checks are known, each placeholder becomes either the source's inline
expression or, when the value would be computed twice or more (`L['self'].layers` under
many parameters, `x.shape` under a tensor check and a shape guard), a local assigned just
before its first use. So every value is read once, and only if the checks before it passed.

Two functions are generated from the same checks, so they cannot disagree:
- the guard function: `if <fails>: return False` per check, inside one `try` (a value
  that cannot be read, e.g. a missing attribute, means the frame differs: False);
- its explainer, written on first use: the same statements, returning which check failed
  and the values it saw; `guard_fn.why(...)` turns that into a sentence, first going down
  the failing check's details (each level compiled when first needed) to the finest one.

The whole function is one `compile()` call, the largest part of `GuardSet.compile` for a
model (GPT-2: about 700 checks, 15-25 ms of 45-65 ms on a loaded 2-core machine): fewer
statements is what makes it cheaper, hence one check for a group of tensors.
"""

from __future__ import annotations

import builtins
import dataclasses
import inspect
import itertools
import keyword
import linecache
import re
import sys
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .errors import GuardCompileError
from .sources import LocalSource, Source

_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
# ASCII only: `\w` also matches characters no identifier may hold (¼).
_NOT_IDENTIFIER = re.compile(r"\W", re.ASCII)


@dataclasses.dataclass(frozen=True)
class Check:
    """One test in a guard function.

    fails:   Python expression, true when the check fails (sources as `ctx.read` placeholders).
    text:    what it asserts, for people: "L['x'].dtype == torch.float32".
    actual:  (label, expression) pairs whose values a failure message shows; label None for a
             single unlabelled value ("got torch.float64").
    details: finer checks tried in order when this one fails, only to explain the failure
             (a size mismatch names the first differing dim); never run on the fast path.
             Either the checks, or a function that makes them: a group of many values'
             details are only made if the explainer is ever written (`detail_checks()`).
    """

    fails: str
    text: str
    actual: tuple[tuple[str | None, str], ...]
    details: tuple[Check, ...] | Callable[[], Iterable[Check]] = ()

    def detail_checks(self) -> tuple[Check, ...]:
        made = self.__dict__.get("_details")
        if made is None:
            made = self.details if isinstance(self.details, tuple) else tuple(self.details())
            object.__setattr__(self, "_details", made)  # frozen dataclass: bypass its __setattr__
        return made


def check(fails: str, text: str, actual: str, details: Iterable[Check] = ()) -> Check:
    """A check whose failure shows the single value of `actual`."""
    return Check(fails, text, ((None, actual),), tuple(details))


# The failing condition of "a must be b" and friends, spelled directly (`is not`, `!=`) so the
# generated `if` reads like the guard. `value` operands of must_be_true/false are primaries
# (names, attributes, calls); anything else goes through must_hold.
def must_be(value: str, expected: str) -> str:
    return f"{value} is not {expected}"


def must_equal(value: str, expected: str) -> str:
    return f"{value} != {expected}"


def must_be_true(value: str) -> str:
    return f"not {value}"


def must_be_false(value: str) -> str:
    return value


def must_be_truth(value: str, expected: bool) -> str:
    return must_be_true(value) if expected else must_be_false(value)


def must_hold(condition: str) -> str:
    return f"not ({condition})"


class EmitContext:
    """What an emitter uses to write checks: source reads, constants and builtins."""

    def __init__(self, reserved: Iterable[str]):
        self._names = _Namer(reserved)
        self._reserved = set(reserved)
        self.sources: list[Source] = []
        self._source_ids: dict[Source, int] = {}
        self.constants: dict[str, object] = {}
        self.spellings: dict[str, str] = {}
        self._constant_ids: dict[int, str] = {}
        self._builtins: dict[str, str] = {}

    def read(self, source: Source) -> str:
        """A placeholder for the value of `source` (replaced by an expression or a local)."""
        index = self._source_ids.get(source)
        if index is None:
            index = self._source_ids[source] = len(self.sources)
            self.sources.append(source)
        return f"\x00{index}\x00"

    def constant(self, value: object, name: str, spelling: str | None = None) -> str:
        """A name bound to `value` in the generated function's namespace (one per object).

        `spelling` is how the header comment of the generated source shows the value.
        """
        known = self._constant_ids.get(id(value))
        if known is not None and self.constants[known] is value:
            return known
        bound = self._names.fresh(name)
        self.constants[bound] = value
        self.spellings[bound] = spelling if spelling is not None else _spell(value)
        self._constant_ids[id(value)] = bound
        return bound

    def builtin(self, name: str) -> str:
        """`name` for a builtin, unless a parameter of the function shadows it."""
        if name not in self._reserved:
            return name
        if name not in self._builtins:
            self._builtins[name] = self.constant(getattr(builtins, name), f"{name}_builtin", name)
        return self._builtins[name]

    def type_name(self, kind: type) -> str:
        """A name for the type `kind`: the builtin itself (`int`) or a bound constant."""
        if getattr(builtins, kind.__name__, None) is kind:
            return self.builtin(kind.__name__)
        return self.constant(kind, kind.__name__, type_spelling(kind))

    def local(self, stem: str) -> str:
        return self._names.fresh(stem)


class _Namer:
    """Fresh identifiers: `stem`, then `stem_1`, `stem_2`... avoiding every name in use."""

    def __init__(self, reserved: Iterable[str]):
        self._used = set(reserved) | set(keyword.kwlist) | {"True", "False", "None"} | set(dir(builtins))

    def fresh(self, stem: str) -> str:
        stem = _NOT_IDENTIFIER.sub("_", stem) or "v"
        if stem[0].isdigit():
            stem = f"v_{stem}"
        for candidate in itertools.chain([stem], (f"{stem}_{i}" for i in itertools.count(1))):
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate
        raise AssertionError("unreachable: itertools.count is infinite")


def type_spelling(kind: type) -> str:
    """How people write the type: `int`, `torch.Tensor`, `torch.nn.parameter.Parameter`. A
    class made by type(name, bases, ns) where the caller's globals had no `__name__` has no
    `__module__` at all: its bare name."""
    module = getattr(kind, "__module__", None)
    return kind.__qualname__ if module in (None, "builtins") else f"{module}.{kind.__qualname__}"


def comment_text(text: str) -> str:
    """`text` fit for one comment line: a repr, a file name or a user's `__repr__` may hold
    line breaks, which would end the comment and leave the rest as (broken) code."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _spell(value: object) -> str:
    if isinstance(value, type):
        return type_spelling(value)
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Frame:
    """The guarded function's inputs, as seen by root sources (see sources.RootNames)."""

    def __init__(
        self,
        ctx: EmitContext,
        parameters: Sequence[str],
        f_globals: Mapping[str, object] | None,
        closure: Mapping[str, object],
    ):
        self._ctx = ctx
        self._parameters = set(parameters)
        self._f_globals = f_globals
        self._closure = closure

    def parameter(self, name: str) -> str:
        if name not in self._parameters:
            raise GuardCompileError(
                f"{LocalSource(name)} is not a parameter of the guarded function "
                f"(parameters: {', '.join(sorted(self._parameters)) or 'none'}); pass the "
                "function's full signature to GuardSet.compile"
            )
        return name

    def globals_dict(self) -> str:
        if self._f_globals is None:
            raise GuardCompileError(
                "a guard reads a global (G[...]) but GuardSet.compile got no f_globals; pass "
                "the guarded function (or its __globals__)"
            )
        module = self._f_globals.get("__name__", "?")
        return self._ctx.constant(self._f_globals, "G", f"globals() of module {module!r}")

    def module_globals(self, module: str) -> str:
        loaded = sys.modules.get(module)
        if loaded is None:
            raise GuardCompileError(f"a guard reads a global of module {module!r}, which is not imported")
        return self._ctx.constant(vars(loaded), f"M_{module.rpartition('.')[2]}", f"globals() of module {module!r}")

    def held(self, obj: object, hint: str) -> str:
        return self._ctx.constant(obj, hint, f"{type(obj).__name__} held by the guard")

    def closure_cell(self, name: str) -> str:
        if name not in self._closure:
            raise GuardCompileError(
                f"a guard reads closure variable C[{name!r}] but the guarded function has no "
                f"such free variable (free variables: {', '.join(self._closure) or 'none'})"
            )
        return self._ctx.constant(self._closure[name], f"{name}_cell", f"closure cell {name!r}")


@dataclasses.dataclass
class Block:
    """The checks of one guard, with the comment that introduces them in the source."""

    comment: str
    checks: list[Check]


class Scope:
    """One pass of writing the checks (the guard function, or its explainer): the hoisted
    values bound so far and the expressions already spelled. Values are only ever added to
    `bound`, so an expression spelled once stays right for the rest of the pass (at worst it
    recomputes a value a local now holds, which only the explainer does)."""

    def __init__(self) -> None:
        self.bound: set[Source] = set()
        self.spelled: dict[Source, str] = {}


class _Writer:
    """Resolves placeholders to expressions, hoisting values read more than once into locals."""

    def __init__(self, ctx: EmitContext, frame: Frame, blocks: list[Block]):
        self._ctx = ctx
        self._frame = frame
        self._locals: dict[Source, str] = {}
        self._plan_hoisting(blocks)

    def _plan_hoisting(self, blocks: list[Block]) -> None:
        # How often each value would be computed if nothing were hoisted: its direct reads,
        # plus one per computation of a child that is not itself hoisted. Children first,
        # so a child's decision is known before its parents'.
        direct: dict[Source, int] = {}
        sources = self._ctx.sources
        for block in blocks:
            for chk in block.checks:
                for index in _PLACEHOLDER.findall(chk.fails):
                    source = sources[int(index)]
                    direct[source] = direct.get(source, 0) + 1
        parents_first: dict[Source, None] = {}
        for source in direct:
            _add_with_parents(source, parents_first)
        evaluations = dict.fromkeys(parents_first, 0)
        for source in reversed(parents_first):
            count = evaluations[source] + direct.get(source, 0)
            hoist = count >= 2 and not isinstance(source, LocalSource)
            if hoist:
                self._locals[source] = self._ctx.local(source.hint)
            for parent in source.parents:
                evaluations[parent] += 1 if hoist else count

    def expression(self, source: Source, scope: Scope) -> str:
        if source in scope.bound:
            return self._locals[source]
        spelled = scope.spelled.get(source)
        if spelled is None:
            parents = source.parents
            if parents:
                spelled = source.code(*(self.expression(parent, scope) for parent in parents))
            else:
                spelled = source.root_code(self._frame)
            scope.spelled[source] = spelled
        return spelled

    def assignments(self, code: str, scope: Scope) -> list[str]:
        """Statements that bind the hoisted values `code` needs and are not bound yet."""
        lines: list[str] = []

        def bind(source: Source) -> None:
            if source in scope.bound:
                return
            for parent in source.parents:
                bind(parent)
            if source in self._locals:
                lines.append(f"{self._locals[source]} = {self.expression(source, scope)}")
                scope.bound.add(source)

        for index in _PLACEHOLDER.findall(code):
            bind(self._ctx.sources[int(index)])
        return lines

    def resolve(self, code: str, scope: Scope) -> str:
        return _PLACEHOLDER.sub(lambda m: self.expression(self._ctx.sources[int(m.group(1))], scope), code)


def _add_with_parents(source: Source, ordered: dict[Source, None]) -> None:
    """Adds `source` and every source it is computed from to `ordered`, parents first."""
    if source not in ordered:
        for parent in source.parents:
            _add_with_parents(parent, ordered)
        ordered[source] = None


class GuardCode:
    """The generated Python of one guard set: the guard function now, explainers on demand.

    Explaining is only needed when a call misses (to say why), so it is written and compiled
    the first time it is asked for, in stages that stay small for large guard sets: the
    explainer finds the failing check (the guard function's statements, returning which one
    failed); `detail_explainer(check)` then finds the first of that check's details that
    fails, and so on down (a group of 148 tensors -> the tensor -> its size -> the dim).
    """

    def __init__(
        self,
        ctx: EmitContext,
        frame: Frame,
        blocks: list[Block],
        name: str,
        signature: inspect.Signature,
        description: str,
    ):
        self._ctx = ctx
        self._frame = frame
        self._writer = _Writer(ctx, frame, blocks)
        self._blocks = blocks
        self.checks = [chk for block in blocks for chk in block.checks]
        self._name = name
        self._signature = _signature_without_defaults(signature)
        body = self._guard_body()
        # The header is written after the body: reading roots binds their constants.
        self.source = "\n".join([*self._header(description), f"def {name}{self._signature}:", *body, ""])
        self._explainer: Callable | None = None
        self._detail_explainers: dict[int, Callable] = {}

    def _header(self, description: str) -> list[str]:
        header = [f"# {comment_text(description)}"]
        if self._ctx.constants:
            header.append("# where")
            header.extend(f"#   {bound} = {comment_text(self._ctx.spellings[bound])}" for bound in self._ctx.constants)
        return header

    def _guard_body(self) -> list[str]:
        if not self.checks:
            return ["    return True"]
        lines = ["    try:"]
        scope = Scope()
        for block in self._blocks:
            lines.extend(f"        # {comment_text(line)}" for line in block.comment.splitlines())
            for chk in block.checks:
                lines.extend(f"        {line}" for line in self._writer.assignments(chk.fails, scope))
                lines.append(f"        if {self._writer.resolve(chk.fails, scope)}: return False")
        return [*lines, "    except Exception:", "        return False", "    return True"]

    def _first_failing(self, checks: Sequence[Check], writer: _Writer) -> list[str]:
        """Body returning (position, values seen or the exception raised) for the first of
        `checks` that fails, else None."""
        if not checks:
            return ["    return None"]
        at, error = self._ctx.local("at"), self._ctx.local("error")
        scope = Scope()
        lines = [f"    {at} = 0", "    try:"]
        for index, chk in enumerate(checks):
            lines.append(f"        {at} = {index}")
            lines.extend(f"        {line}" for line in writer.assignments(chk.fails, scope))
            lines.append(f"        if {writer.resolve(chk.fails, scope)}: return {index}, {_values(writer, chk, scope)}")
        return [*lines, f"    except Exception as {error}:", f"        return {at}, {error}", "    return None"]

    def define(self) -> Callable[..., bool]:
        return _define(self._name, self.source, self._ctx.constants)

    def explainer(self) -> Callable:
        """(index of the first failing check, values seen or the exception raised) or None."""
        if self._explainer is None:
            self._explainer = self._define_finder(f"{self._name}_why", self.checks, self._writer)
        return self._explainer

    def detail_explainer(self, chk: Check) -> Callable:
        """(index of the first failing detail of `chk`, values seen or the exception raised)
        or None. Values the details read twice (a group's tensor, under each of its checks)
        are hoisted among the details alone: the function starts from the frame's inputs."""
        finder = self._detail_explainers.get(id(chk))
        if finder is None:
            details = chk.detail_checks()
            writer = _Writer(self._ctx, self._frame, [Block("", list(details))])
            finder = self._detail_explainers[id(chk)] = self._define_finder(f"{self._name}_why_detail", details, writer)
        return finder

    def _define_finder(self, stem: str, checks: Sequence[Check], writer: _Writer) -> Callable:
        name = self._ctx.local(stem)
        text = "\n".join([f"def {name}{self._signature}:", *self._first_failing(checks, writer), ""])
        return _define(name, text, self._ctx.constants)


def _values(writer: _Writer, chk: Check, scope: Scope) -> str:
    items = ", ".join(writer.resolve(expr, scope) for _, expr in chk.actual)
    return f"({items},)"


def _signature_without_defaults(signature: inspect.Signature) -> str:
    # Defaults are attached afterwards as the very objects the guarded function holds (see
    # GuardSet.compile), so the source shows plain parameters.
    bare = [
        p.replace(default=inspect.Parameter.empty, annotation=inspect.Parameter.empty)
        for p in signature.parameters.values()
    ]
    return str(inspect.Signature(bare))


_counter = itertools.count()


def _define(name: str, text: str, constants: dict[str, object]) -> Callable:
    namespace: dict[str, Any] = {"__builtins__": builtins, **constants}
    filename = f"<guards {name} #{next(_counter)}>"
    # Registered with linecache so tracebacks and inspect.getsource show the generated lines,
    # for as long as the function lives (a process recompiling for days must not keep them all).
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), namespace)
    weakref.finalize(namespace[name], linecache.cache.pop, filename, None)
    return namespace[name]
