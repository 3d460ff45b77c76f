"""Cost of one guard-set evaluation, beside the per-call overhead torch.compile adds.

    python benchmarks/guards.py [--repeat 15] [--formulations]

Cases (each guard function is what `GuardSet.compile` generates for the guards capture
would record; all of them include the global-state guards unless the row says otherwise):
  (a)  f(x): one tensor
  (b)  f(x0, ..., x9): ten tensors
  (c1) a module of 50 Linear layers (100 parameters) reached through L['self'] attribute
       chains, one TensorMatch per parameter (what torch.compile 2.13 does: parameters of
       inlined modules get TENSOR_MATCH guards, see TORCH_LOGS=guards)
  (c2) the same module guarded by the identity and training flag of each submodule (what
       torch.compile did before inlining nn modules; unsound if a parameter is replaced or
       changed in place)
  (c3) identity of the module tree plus the identity and requires_grad of every parameter
       (catches reassignment and freezing, not in-place .data swaps of a different shape)

--formulations also times alternative pure-Python spellings of one tensor check (why
TensorMatch reads `x.shape`, `x.is_cpu`, `x.is_contiguous()` and compares separately).

"torch.compile overhead" is what torch.compile adds to a call beyond running its captured
graph: compiled(args) minus the FX graph called directly on its inputs (the backend is
backend="eager" with the graph kept aside), i.e. dynamo's frame handling, its guard check
(C++ guard managers) and argument plumbing. For the module this is the fair reference:
compiled minus eager would credit torch.compile with the nn.Module.__call__ overhead its
graph removes. Timings are CPU time of this process (one torch thread), the minimum over
repeats of the mean of many calls, so other processes on a shared machine skew them less;
the load average is printed anyway.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit

# This file is named like the package it measures; as a script its folder comes first on
# sys.path and `import guards` would import the file itself.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch
from torch import nn

from guards import (
    ConstantMatch,
    GuardSet,
    IdentityMatch,
    LocalSource,
    ParameterSource,
    SubmoduleSource,
    TensorMatch,
    global_state_guards,
)
from guards.sources import AttrSource


def best_of(call, repeat: int, budget_s: float = 0.05) -> float:
    """CPU seconds per call: the minimum over `repeat` runs, each about `budget_s` long."""
    calls = max(1, int(budget_s / max(timeit.timeit(call, number=10, timer=time.process_time) / 10, 1e-7)))
    return min(timeit.repeat(call, number=calls, repeat=repeat, timer=time.process_time)) / calls


def one(x):
    return x + 1


def ten(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9):
    return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9


class Stack(nn.Module):
    def __init__(self, depth: int = 50):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(depth)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


SELF = LocalSource("self")


def layer_source(i: int) -> SubmoduleSource:
    return SubmoduleSource(SubmoduleSource(SELF, "layers"), str(i))


def module_tensor_guards(module: Stack) -> list:
    return [
        TensorMatch.of(ParameterSource(layer_source(i), name), p)
        for i, layer in enumerate(module.layers)
        for name, p in layer.named_parameters(recurse=False)
    ]


def module_identity_guards(module: Stack) -> list:
    sources = [SELF, SubmoduleSource(SELF, "layers"), *(layer_source(i) for i in range(len(module.layers)))]
    objects = [module, module.layers, *module.layers]
    guards = []
    for source, obj in zip(sources, objects):
        guards += [IdentityMatch(source, obj), ConstantMatch(AttrSource(source, "training"), obj.training)]
    return guards


def parameter_identity_guards(module: Stack) -> list:
    guards = [g for g in module_identity_guards(module) if isinstance(g, IdentityMatch)]
    for i, layer in enumerate(module.layers):
        for name, p in layer.named_parameters(recurse=False):
            source = ParameterSource(layer_source(i), name)
            guards += [IdentityMatch(source, p), ConstantMatch(AttrSource(source, "requires_grad"), p.requires_grad)]
    return guards


def compile_overhead(fn, args, repeat: int) -> float:
    captured = {}

    def eager_backend(gm, example_inputs):
        captured["graph"] = (gm, list(example_inputs))
        return gm.forward

    compiled = torch.compile(fn, backend=eager_backend)
    compiled(*args)
    gm, inputs = captured["graph"]
    return best_of(lambda: compiled(*args), repeat) - best_of(lambda: gm(*inputs), repeat)


# Ways to spell parts of a tensor check; each pair does the same test.
FORMULATIONS = [
    ("whole metadata as one tuple", "(x.dtype, x.device, x.shape, x.stride(), x.requires_grad) == expected"),
    ("the same, field by field", "x.dtype is f32 and x.is_cpu and x.shape == (8, 3) and x.stride() == (3, 1) and not x.requires_grad"),
    ("sizes via x.size()", "x.size() == (8, 3)"),
    ("sizes via x.shape", "x.shape == (8, 3)"),
    ("device via x.device ==", "x.device == cpu"),
    ("device via x.is_cpu", "x.is_cpu"),
    ("dtype via ==", "x.dtype == f32"),
    ("dtype via is", "x.dtype is f32"),
    ("strides via x.stride() ==", "x.stride() == (3, 1)"),
    ("strides via x.is_contiguous()", "x.is_contiguous()"),
    ("type via isinstance", "isinstance(x, Tensor)"),
    ("type via type() is", "type(x) is Tensor"),
]


def time_formulations(repeat: int) -> None:
    x = torch.randn(8, 3)
    namespace = {
        "x": x, "f32": torch.float32, "cpu": torch.device("cpu"), "Tensor": torch.Tensor,
        "expected": (torch.float32, torch.device("cpu"), torch.Size([8, 3]), (3, 1), False),
    }  # fmt: skip
    print(f"\n{'formulation':34s} {'expression':100s} {'ns':>7s}")
    for label, expression in FORMULATIONS:
        test = eval(f"lambda: {expression}", namespace)
        assert test()
        print(f"{label:34s} {expression:100s} {best_of(test, repeat) * 1e9:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--formulations", action="store_true", help="also time spellings of a tensor check")
    options = parser.parse_args()
    repeat = options.repeat
    torch.set_num_threads(1)
    x = torch.randn(8, 3)
    xs = [torch.randn(8, 3) for _ in range(10)]
    module, mx = Stack(), torch.randn(2, 4)
    global_state = global_state_guards()
    input_guard = TensorMatch.of(LocalSource("x"), mx)

    cases = {
        "(a) 1 tensor, without global state": (one, [TensorMatch.of(LocalSource("x"), x)], (x,)),
        "(a) 1 tensor": (one, [TensorMatch.of(LocalSource("x"), x), *global_state], (x,)),
        "(b) 10 tensors": (ten, [TensorMatch.of(LocalSource(f"x{i}"), t) for i, t in enumerate(xs)] + global_state, xs),
        "(c1) module, TensorMatch per parameter": (Stack.forward, [*module_tensor_guards(module), input_guard, *global_state], (module, mx)),
        "(c2) module, identity + training flags": (Stack.forward, [*module_identity_guards(module), input_guard, *global_state], (module, mx)),
        "(c3) module, identity of modules and parameters + requires_grad": (Stack.forward, [*parameter_identity_guards(module), input_guard, *global_state], (module, mx)),
        "global state alone": (one, list(global_state), (x,)),
    }
    overhead = {
        "(a)": compile_overhead(one, (x,), repeat),
        "(b)": compile_overhead(ten, xs, repeat),
        "(c": compile_overhead(module, (mx,), repeat),
    }

    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}   torch {torch.__version__}")
    print(f"{'case':66s} {'checks':>6s} {'ours':>10s} {'torch.compile overhead':>24s}")
    for name, (fn, guards, args) in cases.items():
        guard_fn = GuardSet(guards).compile(fn)
        assert guard_fn(*args), guard_fn.why(*args)
        checks = sum(line.lstrip().startswith("if ") for line in guard_fn.source.splitlines())
        ours = best_of(lambda: guard_fn(*args), repeat)
        reference = next((v for k, v in overhead.items() if name.startswith(k)), None)
        ref_text = f"{reference * 1e6:10.2f} us" if reference is not None else ""
        print(f"{name:66s} {checks:6d} {ours * 1e6:7.2f} us {ref_text:>24s}")
    if options.formulations:
        time_formulations(repeat)


if __name__ == "__main__":
    main()
