"""The conformance corpus: small functions over tensors and Python values, each modelled on a
test of PyTorch's `test/dynamo/` suite (recast in our own words), run compiled and eager.

`Case` is one function plus an input maker; `add`/`snippets` register cases; `all_cases()`
imports every `*_cases.py` module of this folder and returns the cases in a stable order.
"""

from __future__ import annotations

import importlib
import linecache
import pkgutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class Case:
    """One conformance case.

    `fn(*make_args(n))` is run eagerly and compiled: twice at size `sizes[0]` (the second call
    is the cache hit) and once at `sizes[1]` (a new size). `source` names the upstream test file
    the case is modelled on (e.g. "cpython/test_dict", "dynamo/test_dicts"). With `train`, the
    outputs that require grad are backpropagated (with random cotangents) and the grads of every
    input leaf (module parameters included) are compared. `exact_rng=False` compares only types, shapes and dtypes
    of tensors (the case draws random numbers, which backends may draw differently). `ci=False`:
    the default CI run leaves the case out (it runs under CONFORMANCE_FULL=1 and in the report),
    for families too slow to run whole on every change.
    """

    name: str
    source: str
    fn: Callable
    make_args: Callable[[int], tuple]
    train: bool = False
    sizes: tuple[int, int] = (4, 7)
    exact_rng: bool = True
    atol: float = 1e-5
    rtol: float = 1.3e-6
    ci: bool = True
    text: str = field(default="", compare=False)  # the function's source, for reports


_CASES: dict[str, Case] = {}


def add(source: str, name: str, fn: Callable, make_args: Callable[[int], tuple] | None = None, **options) -> Case:
    """Register a case; names are unique across the corpus (prefixed by their family)."""
    if name in _CASES:
        raise ValueError(f"duplicate conformance case {name!r}")
    case = Case(name=name, source=source, fn=fn, make_args=make_args or vec, **options)
    _CASES[name] = case
    return case


def vec(n: int) -> tuple:
    """The default input: one float vector of length n."""
    return (torch.randn(n),)


def compile_source(name: str, text: str, namespace: dict) -> Callable:
    """Define the function in `text` (its first `def`) in a copy of `namespace`; the text is
    registered with linecache so that tracebacks and graph-break messages can show its lines."""
    filename = f"<conformance {name}>"
    text = textwrap.dedent(text).strip() + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = dict(namespace)
    exec(compile(text, filename, "exec"), scope)  # noqa: S102  (our own table of snippets)
    fn_name = text.split("def ", 1)[1].split("(", 1)[0]
    return scope[fn_name]


def snippets(source: str, family: str, table, *, namespace: dict, params: str = "x", make_args=None, **options):
    """Register one case per (name, body) in `table`: `body` becomes the body of
    `def f(<params>):`. Entries may be (name, body, overrides) to change options per case."""
    for entry in table:
        name, body, *rest = entry
        overrides = dict(options)
        if rest:
            overrides.update(rest[0])
        case_params = overrides.pop("params", params)
        case_make = overrides.pop("make_args", make_args)
        text = f"def f({case_params}):\n" + textwrap.indent(textwrap.dedent(body).strip(), "    ")
        fn = compile_source(f"{family}.{name}", text, namespace)
        add(source, f"{family}.{name}", fn, case_make, text=text, **overrides)


def all_cases() -> list[Case]:
    """Every registered case (importing each `*_cases` module of this package once)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name.endswith("_cases"):
            importlib.import_module(f"{__name__}.{module.name}")
    return sorted(_CASES.values(), key=lambda case: (case.source, case.name))


def two_vecs(n: int) -> tuple:
    return torch.randn(n), torch.randn(n)


def matrix(n: int) -> tuple:
    return (torch.randn(n, 3),)


def vec_grad(n: int) -> tuple:
    """A float vector that requires grad (for `train` cases)."""
    return (torch.randn(n, requires_grad=True),)


def int_vec(n: int) -> tuple:
    return (torch.randint(-5, 6, (n,)),)
