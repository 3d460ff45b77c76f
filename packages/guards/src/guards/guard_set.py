"""GuardSet: the guards of one compiled entry, and `compile`, which makes them one function.

The generated guard function takes exactly the guarded function's parameters, so a caller
checks a call with `guard_fn(*args, **kwargs)`: Python binds the arguments in C, defaults
included (the guard function shares the guarded function's `__defaults__`/`__kwdefaults__`
objects). Globals and closure cells are bound when compiling, not passed per call. The
function returns True when every guard holds and False otherwise (a value that cannot be
read, such as a missing attribute, counts as a failed guard); it raises TypeError only when
the arguments do not bind, exactly when calling the guarded function would.

Attributes of the returned function:
    .source   the generated Python (what `COMPILER_LOGS=guards` shows)
    .why(*args, **kwargs)  None if the guards pass, else a sentence naming the first failing
              check: "L['x'].size()[0] == 8 failed: got 9"
    .guards   the GuardSet it was compiled from
    .global_state  with `compile(..., split_global_state=True)`: the global-state guards are
              left out of the function, and the entry is valid only while
              `current_global_state() == guard_fn.global_state` (None: never). A caller
              with several entries reads the global state once per call, not once per
              entry. `why` still names a global setting that differs. Without the flag:
              None, and the function checks the global state itself.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import torch

from .codegen import Block, Check, EmitContext, Frame, GuardCode
from .errors import GuardCompileError, GuardError
from .kinds import EMITTERS, GLOBAL_STATE_KINDS, DefaultsMatch, Guard, global_state_of, with_absent_key_groups, with_tensor_groups


class GuardSet:
    """An ordered set of guards: adding a guard twice keeps one."""

    def __init__(self, guards: Iterable[Guard] = ()):
        self._guards: dict[Guard, None] = {}
        self.update(guards)

    def add(self, guard: Guard) -> None:
        if not isinstance(guard, Guard):
            raise GuardError(f"GuardSet.add expects a guard kind from guards.kinds, got {guard!r}")
        self._guards[guard] = None

    def update(self, guards: Iterable[Guard]) -> None:
        for guard in guards:
            self.add(guard)

    def merge(self, other: Iterable[Guard]) -> GuardSet:
        """A new set holding the guards of both."""
        return GuardSet([*self, *other])

    __or__ = merge

    def __iter__(self) -> Iterator[Guard]:
        return iter(self._guards)

    def __len__(self) -> int:
        return len(self._guards)

    def __contains__(self, guard: object) -> bool:
        return guard in self._guards

    def __str__(self) -> str:
        return "\n".join(str(guard) for guard in self)

    def __repr__(self) -> str:
        return f"GuardSet({list(self)!r})"

    def essential(self) -> list[Guard]:
        """The guards no other guard of the set implies, cheapest-first (by kind priority), then
        those whose reads have effects (Guard.reads_with_effects)."""
        implied: set[Guard] = set()
        pending = [weaker for guard in self for weaker in guard.implies()]
        while pending:
            guard = pending.pop()
            if guard not in implied:
                implied.add(guard)
                pending.extend(guard.implies())
        kept = [guard for guard in self if guard not in implied]
        # Stable: guards whose reads have effects keep the order capture recorded them in.
        return sorted(kept, key=lambda guard: (True, 0) if guard.reads_with_effects() else (False, guard.priority))

    def compile(
        self,
        fn: types.FunctionType | None = None,
        *,
        parameters: inspect.Signature | Sequence[str] | None = None,
        f_globals: Mapping[str, object] | None = None,
        closure: Mapping[str, object] | None = None,
        name: str = "guard_fn",
        split_global_state: bool = False,
    ) -> Callable[..., bool]:
        """One Python function that checks every guard (see the module docstring).

        Either pass the guarded function `fn` (its signature, globals, closure cells and
        defaults are used), or describe the frame: `parameters` (names, or an
        inspect.Signature), `f_globals` (the dict `G[...]` reads), `closure` (free variable
        name -> cell, for `C[...]`). `split_global_state`: see `.global_state` above.
        """
        guards = GuardSet(self)
        if fn is not None:
            if not isinstance(fn, types.FunctionType):
                raise GuardCompileError(
                    f"GuardSet.compile(fn): expected a Python function, got {type(fn).__name__} "
                    "(pass a bound method's __func__ and guard `self` as a parameter)"
                )
            signature = inspect.signature(fn, follow_wrapped=False)
            f_globals = fn.__globals__
            closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
            defaults, kwdefaults = fn.__defaults__, fn.__kwdefaults__
            if defaults is not None or kwdefaults is not None:
                guards.add(DefaultsMatch(fn))
            description = f"guards of {fn.__qualname__} ({fn.__code__.co_filename}:{fn.__code__.co_firstlineno})"
        else:
            signature = _as_signature(parameters or ())
            defaults, kwdefaults = _defaults_of(signature)
            description = f"guards of a frame with parameters {signature}"

        ctx = EmitContext(signature.parameters)
        # `name` becomes a def's name: `guards_<lambda>` must still be an identifier.
        name = ctx.local(name)
        frame = Frame(ctx, list(signature.parameters), f_globals, closure or {})
        checked = guards.essential()
        state_guards = [guard for guard in checked if type(guard) in GLOBAL_STATE_KINDS] if split_global_state else []
        if state_guards:
            checked = [guard for guard in checked if type(guard) not in GLOBAL_STATE_KINDS]
        blocks = []
        for guard in with_tensor_groups(with_absent_key_groups(checked)):
            emitter = EMITTERS.get(type(guard))
            if emitter is None:
                raise GuardCompileError(f"no code emitter registered for {type(guard).__name__} (guard: {guard})")
            blocks.append(Block(str(guard), emitter(guard, ctx)))
        code = GuardCode(ctx, frame, blocks, name, signature, description)
        guard_fn = code.define()
        guard_fn.__defaults__, guard_fn.__kwdefaults__ = defaults, kwdefaults
        guard_fn.source = code.source
        guard_fn.guards = guards
        guard_fn.global_state = global_state_of(state_guards) if split_global_state else None
        guard_fn.why = _explainer(code, defaults, kwdefaults, state_guards)
        return guard_fn


def _as_signature(parameters: inspect.Signature | Sequence[str]) -> inspect.Signature:
    if isinstance(parameters, inspect.Signature):
        return parameters
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(name, kind) for name in parameters])


def _defaults_of(signature: inspect.Signature) -> tuple[tuple | None, dict | None]:
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = signature.parameters.values()
    defaults = tuple(p.default for p in params if p.kind in positional and p.default is not p.empty)
    kwdefaults = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
    return defaults or None, kwdefaults or None


def _explainer(code: GuardCode, defaults, kwdefaults, state_guards: list[Guard]) -> Callable[..., str | None]:
    state_fns: list[Callable] = []  # the split-off global-state guards, compiled on first use

    def why(*args, **kwargs) -> str | None:
        """None if every guard passes; else a sentence naming the first failing check."""
        if state_guards:
            if not state_fns:
                state_fns.append(GuardSet(state_guards).compile(parameters=[]))
            reason = state_fns[0].why()
            if reason is not None:
                return reason
        result = _call(code.explainer(), args, kwargs)
        if result is None:
            return None
        index, seen = result
        failed = code.checks[index]
        # Down the details to the finest check that fails (a group's tensor, then its dim);
        # a check whose details all pass is itself the answer.
        while failed.detail_checks():
            found = _call(code.detail_explainer(failed), args, kwargs)
            if found is None:
                break
            position, seen = found
            failed = failed.detail_checks()[position]
        if isinstance(seen, BaseException):
            return f"{failed.text} could not be checked: {type(seen).__name__}: {seen}"
        return f"{failed.text} failed: got {_got(failed, seen)}"

    def _call(finder: Callable, args, kwargs):
        finder.__defaults__, finder.__kwdefaults__ = defaults, kwdefaults
        return finder(*args, **kwargs)

    return why


def _got(failed: Check, values: tuple) -> str:
    if len(failed.actual) == 1 and failed.actual[0][0] is None:
        return _show(values[0])
    return ", ".join(f"{label} = {_show(value)}" for (label, _), value in zip(failed.actual, values))


def _show(value: object) -> str:
    if isinstance(value, torch.Size):
        value = tuple(value)
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001  (a user's __repr__, or one of an object half built)
        # copy.deepcopy's memo holds objects whose __dict__ is not filled in yet: a module's repr
        # then raises AttributeError. Explaining a recompile must not raise in the program.
        text = f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"
    return text if len(text) <= 200 else text[:197] + "..."
