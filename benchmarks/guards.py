"""Cost of building and of evaluating guard functions, beside the per-call overhead torch.compile adds.

    python benchmarks/guards.py [--repeat 15] [--formulations] [--no-gpt2]

Cases (each guard function is what `GuardSet.compile` generates for the guards capture
would record; all of them include the global-state guards unless the row says otherwise):
  (a)  f(x): one tensor
  (b)  f(x0, ..., x9): ten tensors (fewer than kinds.tensor_groups.MIN_GROUP: one by one)
  (c1) a module of 50 Linear layers (100 parameters) reached through L['self'] attribute
       chains, one TensorMatch per parameter (what torch.compile 2.13 does: parameters of
       inlined modules get TENSOR_MATCH guards, see TORCH_LOGS=guards), checked as one group
  (c2) the same module guarded by the identity and training flag of each submodule (what
       torch.compile did before inlining nn modules; unsound if a parameter is replaced or
       changed in place)
  (c3) identity of the module tree plus the identity and requires_grad of every parameter
       (catches reassignment and freezing, not in-place .data swaps of a different shape)
  GPT-2: the guard set `capture` records for HF GPT-2 (12 layers, 1x128 ids, no_grad), as
       it is: module identities, constants, 148 parameter tensors, global state
  global state: the five global-state checks in a guard function, against reading the whole
       state once with `current_global_state()` (what a dispatcher does once per call when
       entries are compiled with split_global_state=True, comparing one tuple per entry)

Columns: `checks` (the `if`s of the generated function), `compile` (GuardSet.compile, CPU
ms, best of 5), `call` (one evaluation, CPU us). --formulations also times alternative
pure-Python spellings of one tensor check (why TensorMatch reads `x.shape`, `x.is_cpu`,
`x.is_contiguous()` and compares separately).

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
import contextlib
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
    current_global_state,
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


def gpt2_case():
    """GPT-2's guard set as capture records it, with the call it guards (None when capture or
    transformers cannot build it here; the reason is printed)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import transformers
        from capture.session import CaptureSession

        torch.manual_seed(0)
        config = transformers.GPT2Config()
        model = transformers.GPT2LMHeadModel(config).eval()
        ids = torch.randint(0, config.vocab_size, (1, 128))
        args, kwargs = (model, ids), {"use_cache": False}
        fn = type(model).forward
        with torch.no_grad():
            guards = CaptureSession(fn, args, kwargs).run().guards
    except Exception as error:  # a benchmark row, not a test: say why it is missing
        print(f"GPT-2 row skipped: {type(error).__name__}: {error}")
        return None
    return fn, guards, args, kwargs


def compile_ms(guards, fn) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        GuardSet(guards).compile(fn)
        best = min(best, time.process_time() - start)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--formulations", action="store_true", help="also time spellings of a tensor check")
    parser.add_argument("--no-gpt2", action="store_true", help="skip the GPT-2 guard set (needs capture and transformers)")
    options = parser.parse_args()
    repeat = options.repeat
    torch.set_num_threads(1)
    x = torch.randn(8, 3)
    xs = [torch.randn(8, 3) for _ in range(10)]
    module, mx = Stack(), torch.randn(2, 4)
    global_state = global_state_guards()
    input_guard = TensorMatch.of(LocalSource("x"), mx)

    cases = {
        "(a) 1 tensor, without global state": (one, [TensorMatch.of(LocalSource("x"), x)], (x,), {}),
        "(a) 1 tensor": (one, [TensorMatch.of(LocalSource("x"), x), *global_state], (x,), {}),
        "(b) 10 tensors": (ten, [TensorMatch.of(LocalSource(f"x{i}"), t) for i, t in enumerate(xs)] + global_state, xs, {}),
        "(c1) module, TensorMatch per parameter": (Stack.forward, [*module_tensor_guards(module), input_guard, *global_state], (module, mx), {}),
        "(c2) module, identity + training flags": (Stack.forward, [*module_identity_guards(module), input_guard, *global_state], (module, mx), {}),
        "(c3) module, identity of modules and parameters + requires_grad": (Stack.forward, [*parameter_identity_guards(module), input_guard, *global_state], (module, mx), {}),
    }
    if not options.no_gpt2:
        gpt2 = gpt2_case()
        if gpt2 is not None:
            fn, guards, args, kwargs = gpt2
            cases["GPT-2, the guard set capture records"] = (fn, guards, args, kwargs)
    cases["global state: five checks in a guard function"] = (one, list(global_state), (x,), {})
    overhead = {
        "(a)": compile_overhead(one, (x,), repeat),
        "(b)": compile_overhead(ten, xs, repeat),
        "(c": compile_overhead(module, (mx,), repeat),
    }

    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}   torch {torch.__version__}")
    print(f"{'case':66s} {'checks':>6s} {'compile':>10s} {'call':>10s} {'torch.compile overhead':>24s}")
    for name, (fn, guards, args, kwargs) in cases.items():
        guard_fn = GuardSet(guards).compile(fn)
        checks = sum(line.lstrip().startswith("if ") for line in guard_fn.source.splitlines())
        # GPT-2 was captured for inference: its guards hold under no_grad.
        with torch.no_grad() if name.startswith("GPT-2") else contextlib.nullcontext():
            assert guard_fn(*args, **kwargs), guard_fn.why(*args, **kwargs)
            ours = best_of(lambda: guard_fn(*args, **kwargs), repeat)
        reference = next((v for k, v in overhead.items() if name.startswith(k)), None)
        ref_text = f"{reference * 1e6:10.2f} us" if reference is not None else ""
        print(f"{name:66s} {checks:6d} {compile_ms(guards, fn):7.1f} ms {ours * 1e6:7.2f} us {ref_text:>24s}")
    once = best_of(current_global_state, repeat)
    print(f"{'global state: current_global_state() once per call':66s} {'':6s} {'':>10s} {once * 1e6:7.2f} us")
    state, now = GuardSet(global_state).compile(parameters=[], split_global_state=True).global_state, current_global_state()
    compare = best_of(lambda: state == now, repeat)
    print(f"{'global state: one entry comparing its tuple with it':66s} {'':6s} {'':>10s} {compare * 1e6:7.2f} us")
    if options.formulations:
        time_formulations(repeat)


if __name__ == "__main__":
    main()
