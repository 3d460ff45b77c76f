"""CPU workloads of issue 18 through the whole stack (`compiler.compile(backend="inductor")`)
vs eager and torch.compile, timed back to back in one process (interleaved medians):

    softmax   torch.softmax over 32x512x512 (float32)
    adamw     a compiled `optimizer.step()` of AdamW (foreach) over a 16.8M-parameter stack of
              Linear(1024, 1024): parameters and state written in place
    gpt2      a 12-layer GPT-2 (HF config, random weights) training step on 2x128 tokens:
              forward, loss, backward

    HF_HUB_OFFLINE=1 python benchmarks/cpu_steps.py [softmax adamw gpt2]
"""

from __future__ import annotations

import os
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from cpu_harness import THREADS, interleaved_medians, report  # noqa: E402

# This folder's guards.py (a benchmark) would shadow the `guards` package that `compiler` imports.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]


def softmax():
    x = torch.randn(32, 512, 512)

    def run(compile_fn):
        fn = compile_fn(lambda t: torch.softmax(t, dim=-1))
        return lambda: fn(x)

    def check(ours):
        torch.testing.assert_close(ours(), torch.softmax(x, -1))

    return "softmax(-1) 32x512x512", run, check


def adamw():
    def build():
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(16)])
        for p in model.parameters():
            p.grad = torch.randn_like(p) * 1e-3
        return model, torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)

    def run(compile_fn):
        model, optimizer = build()
        step = compile_fn(optimizer.step)
        step()  # creates the state (the first graph); later calls reuse the second
        return step

    def check(_ours):
        import compiler

        model, optimizer = build()
        expected_model, expected = build()
        step = compiler.compile(optimizer.step, backend="inductor")
        for _ in range(3):
            step()
            expected.step()
        for p, q in zip(model.parameters(), expected_model.parameters()):
            torch.testing.assert_close(p, q)

    return "AdamW step 16.8M params", run, check


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=12))
    model.config.use_cache = False
    ids = torch.randint(0, 50257, (2, 128))

    def run(compile_fn):
        forward = compile_fn(model)

        def step():
            model.zero_grad(set_to_none=True)
            loss = forward(input_ids=ids, labels=ids).loss
            loss.backward()
            return loss

        return step

    def check(ours):
        torch.testing.assert_close(ours(), run(lambda m: m)(), rtol=1e-3, atol=1e-3)

    return "GPT-2 12L train step 2x128", run, check


WORKLOADS = {"softmax": softmax, "adamw": adamw, "gpt2": gpt2}


def run_workload(key):
    import compiler
    import torch._dynamo

    name, run, check = WORKLOADS[key]()
    row = {"workload": name}
    try:
        compiler.reset()
        t0 = time.perf_counter()
        ours = run(lambda f: compiler.compile(f, backend="inductor"))
        ours()
        ours_cold = time.perf_counter() - t0
        check(ours)
    except Exception as error:  # a benchmark row, not a crash: say why
        row["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        traceback.print_exc()
        return row
    torch._dynamo.reset()
    t0 = time.perf_counter()
    reference = run(torch.compile)
    reference()
    ref_cold = time.perf_counter() - t0
    eager = run(lambda f: f)
    medians = interleaved_medians({"eager": eager, "torch.compile": reference, "ours": ours}, rounds=10, min_seconds=6)
    row.update(eager_ms=medians["eager"], torch_compile_ms=medians["torch.compile"], ours_ms=medians["ours"])
    row.update(speedup_vs_eager=row["eager_ms"] / row["ours_ms"], ratio_to_torch_compile=row["torch_compile_ms"] / row["ours_ms"],
               ours_cold_compile_s=ours_cold, ours_warm_compile_s=float("nan"),
               torch_compile_cold_s=ref_cold, torch_compile_warm_s=float("nan"))
    return row


def main():
    keys = sys.argv[1:] or list(WORKLOADS)
    results = [run_workload(k) for k in keys]
    filename = "cpu_steps.json" if keys == list(WORKLOADS) else f"cpu_steps_{'_'.join(keys)}.json"
    report([r for r in results if "error" not in r], filename, failed=[r for r in results if "error" in r])


if __name__ == "__main__":
    print(f"{THREADS} threads")
    main()
