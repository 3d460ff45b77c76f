"""Which implementation a matmul runs under max-autotune: the aten call (cuBLAS) or the Triton
template (runtime/matmul_template.py) with one of its block configs.

On a CUDA device each candidate is timed once, at compile time, on random operands laid out
as the compiled graph will pass them (CUDA events, a few runs after a warm-up that also
compiles the config); the fastest wins. Choices are kept per problem (op, sizes, strides,
dtype, bias, GPU, tf32 setting, the backends allowed) in memory and in
`<cache>/autotune/matmul.json`, so compiling another graph with the same matmul, or the same
graph in a new process, times nothing. (Generated kernels keep their block sizes beside their
own files, runtime/triton_launch.py; an aten call has no file, hence one shared table.)

Where nothing can be timed (CPU tensors: Triton's interpreter) the aten call stays, unless
the backends allowed are only "TRITON": then the template runs with one untimed config.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import _disable_current_modes

from .. import cache, logs
from .matmul_configs import MatmulConfig, interpreter_config, matmul_configs

log = logs.channel("inductor")

ATEN = "ATEN"
TIMED_RUNS = 10
SLEEP_CYCLES = 20_000_000  # ~10 ms at ~2 GHz: longer than queueing TIMED_RUNS launches takes

_OPS = {"mm": torch.ops.aten.mm.default, "addmm": torch.ops.aten.addmm.default,
        "bmm": torch.ops.aten.bmm.default, "baddbmm": torch.ops.aten.baddbmm.default}

_EAGER_EPILOGUES = {
    "none": lambda x: x, "relu": torch.relu, "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"), "silu": torch.nn.functional.silu,
    "sigmoid": torch.sigmoid, "tanh": torch.tanh,
}


@dataclass(frozen=True)
class MatmulProblem:
    """One matmul as the compiled graph runs it: each operand's (size, stride), static."""

    op: str                   # mm | addmm | bmm | baddbmm
    a: tuple[tuple, tuple]
    b: tuple[tuple, tuple]
    bias: tuple[tuple, tuple] | None
    dtype: torch.dtype
    device: torch.device
    alpha: float = 1.0
    beta: float = 1.0
    epilogue: str = "none"    # an activation applied to the result (runtime/matmul_template.py EPILOGUES)

    @property
    def mnk(self) -> tuple[int, int, int]:
        (*_, m, k), _ = self.a
        return m, self.b[0][-1], k

    def key(self, backends: str) -> str:
        gpu = torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else self.device.type
        tf32 = self.dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32
        bias = "none" if self.bias is None else _layout_text(self.bias)
        return "|".join([gpu, self.op, str(self.dtype), _layout_text(self.a), _layout_text(self.b), bias,
                         f"epilogue={self.epilogue}", f"tf32={tf32}", backends])

    def random_operands(self) -> list[torch.Tensor]:
        """Operands of the problem's layouts (values drawn at random: timing only)."""
        layouts = [self.a, self.b] if self.bias is None else [self.bias, self.a, self.b]
        return [torch.empty_strided(size, stride, dtype=self.dtype, device=self.device).normal_()
                for size, stride in layouts]

    def runner(self, choice: str | MatmulConfig, operands):
        """A no-argument function running `choice` on `operands` (as `random_operands` orders them)."""
        scale = {"alpha": self.alpha, "beta": self.beta} if self.op in ("addmm", "baddbmm") else {}
        if choice == ATEN:  # the aten call, then the epilogue as the separate kernel it would be
            op, epilogue = _OPS[self.op], _EAGER_EPILOGUES[self.epilogue]
            return lambda: epilogue(op(*operands, **scale))
        from .matmul_template import matmul  # imports triton: only where a template is timed

        bias, (a, b) = (operands[0], operands[1:]) if self.bias is not None else (None, operands)
        return lambda: matmul(a, b, bias, **scale, epilogue=self.epilogue, **choice.as_kwargs())

    def compile_ahead(self, configs: list[MatmulConfig], operands) -> None:
        """Compile the template at each config concurrently (Triton's AsyncCompileMode), so that
        timing them does not wait for one compile after another."""
        import triton

        from .matmul_template import compile_ahead

        bias, (a, b) = (operands[0], operands[1:]) if self.bias is not None else (None, operands)
        workers = max(1, min(len(configs), os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool, triton.AsyncCompileMode(pool, ignore_errors=True):
            for config in configs:
                compile_ahead(a, b, bias, alpha=self.alpha, beta=self.beta, epilogue=self.epilogue,
                              **config.as_kwargs())


def _layout_text(layout) -> str:
    size, stride = layout
    return f"{'x'.join(map(str, size))}:{','.join(map(str, stride))}"


_chosen: dict[str, MatmulConfig | None] = {}  # problem key -> the choice (None: the aten call)
_lock = threading.Lock()


def choose(problem: MatmulProblem, backends: str) -> MatmulConfig | None:
    """The template config to run `problem` with, or None for the aten call. `backends`: the
    allowed ones, "ATEN,TRITON", "TRITON" (options.gemm_backends); without TRITON, None."""
    allowed = backends.split(",")
    if "TRITON" not in allowed:
        return None
    if not can_time(problem.device):
        return None if ATEN in allowed else interpreter_config(*problem.mnk)
    key = problem.key(backends)
    with _lock:
        if key in _chosen:
            return _chosen[key]
        candidates = ([ATEN] if ATEN in allowed else []) + matmul_configs(*problem.mnk)
        stored = _stored_choice(key, candidates)
        if stored is not None:
            _chosen[key] = None if stored == ATEN else stored
            return _chosen[key]
        timings = time_choices(problem, candidates)
        best_ms, best = min(zip(timings, candidates), key=lambda pair: pair[0])
        if math.isinf(best_ms):  # nothing ran (out of memory, every config rejected): aten's call
            best = ATEN
        log.info("inductor: %s %s -> %s (%.4f ms; aten %.4f ms)", problem.op, problem.key(backends), best, best_ms,
                 timings[0] if candidates[0] == ATEN else float("nan"))
        _chosen[key] = None if best == ATEN else best
        _store_choice(key, ATEN if best == ATEN else best.as_kwargs())
        return _chosen[key]


def can_time(device: torch.device) -> bool:
    """Whether candidates on `device` can be timed: CUDA only (Triton's interpreter on CPU
    tensors says nothing about a GPU's speed)."""
    return device.type == "cuda" and torch.cuda.is_available()


def time_choices(problem: MatmulProblem, candidates: list) -> list[float]:
    """Milliseconds per run of each candidate on the problem's layouts (inf: it cannot run)."""
    # Real tensors in the problem's dtype, whatever the compile runs under: a fake-tensor mode
    # would make them fake, autocast would time aten's call in another dtype.
    cuda = problem.device.type == "cuda"
    on_device = torch.cuda.device(problem.device) if cuda else contextlib.nullcontext()
    no_autocast = torch.autocast("cuda", enabled=False) if cuda else contextlib.nullcontext()
    with _disable_current_modes(), torch.no_grad(), on_device, no_autocast:
        try:
            operands = problem.random_operands()
        except torch.OutOfMemoryError:
            return [math.inf] * len(candidates)
        try:
            problem.compile_ahead([c for c in candidates if c != ATEN], operands)
        except Exception as error:  # noqa: BLE001  (compiling ahead only saves time; timing compiles anyway)
            log.info("inductor: matmul configs compile at their first timed run instead (%s)", error)
        timings = []
        for choice in candidates:
            try:
                timings.append(_time_ms(problem.runner(choice, operands)))
            except Exception as error:  # noqa: BLE001  (a config the compiler rejects, e.g. out of shared memory)
                log.info("inductor: matmul config %s skipped (%s)", choice, error)
                timings.append(math.inf)
    return timings


def _time_ms(run) -> float:
    """GPU time of one run: CUDA events around TIMED_RUNS runs, after a warm-up (which
    compiles). The GPU first sleeps while the host queues the runs, so the events time the
    kernels back to back, not the host's launches: the template's Python launch costs more
    than aten's, and a small matmul would otherwise be judged by it, where CUDA graphs
    (mode="max-autotune") replay without any."""
    run()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    for _ in range(TIMED_RUNS):
        run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / TIMED_RUNS


def _choices_path():
    return cache.cache_dir() / "autotune" / "matmul.json"


def _stored_choice(key: str, candidates: list) -> str | MatmulConfig | None:
    """ATEN or the config stored for `key`, if it is one of `candidates`; else None: there is
    none, or none this code would choose (an entry of an older config format, a file edited
    or damaged) and it is timed again and overwritten."""
    stored = _stored_choices().get(key)
    if stored != ATEN:
        try:
            stored = MatmulConfig(**stored)
        except TypeError:
            return None
    return stored if stored in candidates else None


def _stored_choices() -> dict:
    try:
        choices = json.loads(_choices_path().read_text())
    except (OSError, ValueError):
        return {}
    return choices if isinstance(choices, dict) else {}


def _store_choice(key: str, choice) -> None:
    choices = _stored_choices()
    choices[key] = choice
    try:
        cache.write_atomic(_choices_path(), json.dumps(choices, indent=1, sort_keys=True))
    except OSError as error:  # a read-only cache: the choice holds for this process only
        log.info("inductor: could not store the matmul choice (%s)", error)
