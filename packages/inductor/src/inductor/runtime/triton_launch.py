"""Load generated Triton kernels from their files and launch them with tuned block sizes.

The wrapper holds one `TritonLauncher` per kernel (`load_triton_kernel(key, name, mode)`)
and calls it with the kernel's tensors and sizes followed by the element counts
(`xnumel[, rnumel]`). The first launch in a size bucket (each element count rounded up to a
power of two) picks a block-size config: the only candidate, or the fastest of a few, timed
on the real inputs and on stand-ins for the tensors the kernel both reads and stores to (a
kernel may update a graph input in place, and timing it on the real one would apply the update
once per timed run). The winner's row of the heuristics (triton_configs.candidates) then serves every later
bucket untimed, through a config already compiled where one serves (up to 8x growth), so a new
length compiles no new binary. Choices are kept in memory and in `<kernel>.autotune.json` beside the kernel
file, keyed by GPU and bucket (and the row by GPU and mode), so a kernel with symbolic sizes
is timed once, not at each new length, and a warm start not at all.

A kernel's symbolic sizes are parameters Triton does not specialize (codegen/triton/
module_text.py), so one compiled binary serves every size; the launcher finds it by the
ints' specialization at a new size instead of compiling or going through Triton's path.

Kernels on CPU tensors run in Triton's interpreter, which must be switched on before triton
is imported (TRITON_INTERPRET=1): Triton's own library functions are bound at import time.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import pathlib
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import torch

from .. import cache, logs, metrics
from ..errors import InductorError, UnsupportedDevice
from . import triton_configs
from .kernel_errors import kernel_error
from .triton_configs import Config
from .wrapper_support import gather

log = logs.channel("inductor")



@functools.lru_cache(maxsize=None)
def _triton():
    """Triton's runtime modules, imported at first use: importing triton fixes whether its
    interpreter is on, which tests decide first (TRITON_INTERPRET)."""
    from triton import knobs
    from triton.runtime import driver

    return knobs, driver


def interpreter_enabled() -> bool:
    return bool(_triton()[0].runtime.interpret)


@functools.lru_cache(maxsize=None)
def load_module(path: str):
    """Import a generated kernel file (Triton's JIT reads the source of what it compiles)."""
    spec = importlib.util.spec_from_file_location(f"inductor_triton_{pathlib.Path(path).parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Triton's interpreter runs a launch with process-wide state: the program id being run (its
# `interpreter_builder`) and the `tl` functions it patches for the launch and restores after.
# Launches from two threads at once read each other's grid or found `tl` unpatched, so every
# interpreted launch of the process takes this lock.
_INTERPRETER_LOCK = threading.Lock()


class _Plan(NamedTuple):
    """How a launcher launches at one set of element counts: the chosen config, its grid and
    the block sizes the compiled binary takes after the arguments."""

    config: Config
    grid: tuple[int, int]
    constexprs: tuple
    signature: tuple  # the config as plain ints: a key that hashes in C (a dataclass's hash is Python)


# Triton compiles `tl.device_assert` only in debug mode; the integer-overflow checks debug mode
# also turns on would cost every index computation (torch.compile turns them off too).
DEVICE_ASSERT_OPTIONS = {"debug": True, "sanitize_overflow": False}


class TritonLauncher:
    options: dict = {}  # compile options beyond the config's: DEVICE_ASSERT_OPTIONS for kernels with asserts

    def __init__(self, path: str, name: str, mode: str):
        module = load_module(path)
        self.path, self.name, self.mode = path, name, mode
        self.fn = getattr(module, name)
        self.kind = module.KIND
        self.pointer_types = module.POINTER_TYPES
        self.outer_reduction = getattr(module, "OUTER_REDUCTION", False)
        self.raises = getattr(module, "RAISES", False)
        if getattr(module, "DEVICE_ASSERTS", False):
            self.options = DEVICE_ASSERT_OPTIONS
        self.numel_count = getattr(module, "NUMELS", 1 if self.kind == triton_configs.KIND_POINTWISE else 2)
        self.plans: dict[tuple, _Plan] = {}      # element counts -> plan
        self.choices: dict[tuple, Config] = {}   # size bucket -> chosen config
        self.host_scalars: tuple[int, ...] = ()  # positions of CPU 0-d tensors in a CUDA launch
        self.device_arg: int | None = None       # position of a CUDA tensor argument, once seen
        # The steady state's argument layout, once seen: this many tensors, then ints only,
        # all on a GPU (None: every launch takes the general path).
        self.pointer_count: int | None = None
        self._pointers = None  # with pointer_count: reads the data pointers of that many arguments
        # Set at the first call, from the argument kinds the wrapper passes at every call.
        self._ints = self._tensors = None
        self.compiled: dict[tuple, object] = {}  # (config, device, ints, alignment) -> CompiledKernel
        self.launchers: dict[tuple, tuple] = {}  # the same keys -> (C launch function, its leading args)
        self.binaries: dict[tuple, object] = {}  # the same, ints as Triton specializes them -> CompiledKernel
        # Positions of the int parameters the printed kernel tells Triton not to specialize
        # (`do_not_specialize`: symbolic sizes), whose values then never pick another binary.
        unspecialized = set(getattr(self.fn, "do_not_specialize", None)
                            or getattr(self.fn, "kwargs", {}).get("do_not_specialize") or ())
        self.unspecialized = frozenset(k for k, name in enumerate(self.fn.arg_names) if name in unspecialized)
        self._int_positions: tuple[int, ...] = ()
        self.tuned_row: int | None = None  # the heuristics' row that timing chose (triton_configs.candidates)
        self._lock = threading.Lock()

    def __repr__(self):
        return f"TritonLauncher({self.name}, {self.kind}, {self.path})"

    def __call__(self, *args):
        plan = self.plans.get(args[-self.numel_count:])
        if plan is None:
            plan = self._plan(args)
        elif self.pointer_count is not None:
            # The steady state on a GPU: a binary launched before with arguments of this key,
            # called from this frame (a launch's host time is what a graph of small kernels
            # waits on). Anything else takes the general path below.
            device = args[self.device_arg].get_device()
            if device == _current_device() and not _launch_hooks_on():
                pointers = self._pointers(args)
                ints = args[self.pointer_count:]
                binary = self.launchers.get(_binary_key(plan, device, ints, pointers))
                if binary is not None:
                    # Pointers as ints: Triton's launcher then neither calls `data_ptr()` nor
                    # asks the driver about each one (cuPointerGetAttribute), as it does for
                    # a tensor. Every tensor here is on `device`: a kernel's buffers are on
                    # one device, and CPU scalars take the general path (host_scalars).
                    launch, leading = binary
                    launch(plan.grid[0], plan.grid[1], 1, _current_stream(device), *leading, *pointers, *ints,
                           *plan.constexprs)
                    return
        if self.host_scalars:
            args = _to_device(args, self.host_scalars)
        self._launch(plan, args)

    def submit_compiles(self, ints) -> bool:
        """Start compiling every candidate config for these int arguments (sizes, then element
        counts; inside `triton.AsyncCompileMode`, compiles run on its executor). Only kernels
        whose arguments are all pointers and ints can be compiled before their first call."""
        if len(self.fn.arg_names) - len(self.fn.constexprs) != len(self.pointer_types) + len(ints):
            return False
        pointers = [_TORCH_DTYPES[t] for t in self.pointer_types.values()]
        numels = ints[-self.numel_count:]
        for config in triton_configs.distinct(self._candidates(numels, interpreted=False)):
            # A dtype stands for a 16-byte-aligned tensor, as the allocator's are: the JIT's own key.
            self.fn.warmup(*pointers, *ints, grid=(1,), **config.launch_kwargs(), **self.options)
        return True

    def _candidates(self, numels, interpreted: bool) -> list[Config]:
        combo = self.kind == triton_configs.KIND_COMBO
        return triton_configs.candidates(
            self.kind, max(numels) if combo else numels[0], numels[1] if len(numels) > 1 and not combo else None,
            outer_reduction=self.outer_reduction, max_autotune=self.mode.startswith("max-autotune"),
            interpreted=interpreted,
        )

    def _plan_for(self, config: Config, numels) -> _Plan:
        if self.kind == triton_configs.KIND_COMBO:  # each member's programs, one after another
            grid = (sum((n + config.XBLOCK - 1) // config.XBLOCK for n in numels), 1)
        else:
            grid = ((numels[0] + config.XBLOCK - 1) // config.XBLOCK,
                    (numels[1] + config.RBLOCK - 1) // config.RBLOCK if self.kind == triton_configs.KIND_TILED else 1)
        return _Plan(config, grid, config.constexprs(), tuple(config.as_dict().values()))

    def _launch(self, plan: _Plan, args):
        device = args[self.device_arg].get_device() if self.device_arg is not None else -1
        if device < 0 and self.raises:  # the interpreter, with a flag for inputs eager raises on
            flag = torch.zeros(1, dtype=torch.int32)
            with _INTERPRETER_LOCK:
                self.fn[plan.grid](*args, flag, **plan.config.launch_kwargs(), **self.options)
            if code := int(flag.item()):
                raise kernel_error(code, self.path)
        elif device < 0:  # CPU tensors: Triton's interpreter
            with _INTERPRETER_LOCK:
                self.fn[plan.grid](*args, **plan.config.launch_kwargs(), **self.options)
        elif device != _current_device():
            # Triton launches on the current device: make it the one holding the tensors.
            with torch.cuda.device(device):
                self._launch_compiled(plan, args, device)
        else:
            self._launch_compiled(plan, args, device)

    def _launch_compiled(self, plan: _Plan, args, device: int):
        """Launch through the compiled binary's own launcher, skipping Triton's per-call argument
        binding and cache lookup (most of a launch's ~20 us on the host). The binary is the one
        Triton's standard path compiled for the same arguments up to what Triton specializes on
        (each pointer's 16-byte alignment; each int's width, and unless the kernel says not to
        specialize it, whether it equals 1 or divides by 16). The fast key holds the ints
        themselves; a new size misses it and finds its binary by the ints' specialization, so
        it is neither compiled again nor sent through Triton's path."""
        key = _binary_key(plan, device, self._ints(args), tuple(map(_data_ptr, self._tensors(args))))
        kernel = self.compiled.get(key)
        if kernel is None or _launch_hooks_on():
            kernel = self._binary(plan, args, key)
            if kernel is None:
                return
        else:
            # Launched before through Triton: its launcher is initialized. Later launches with
            # this key take __call__'s steady-state path.
            self.launchers[key] = _direct_launch(kernel)
        kernel.run(plan.grid[0], plan.grid[1], 1, _current_stream(device), kernel.function, kernel.packed_metadata,
                   None, None, None, *args, *plan.constexprs)

    def _binary(self, plan: _Plan, args, key: tuple):
        """The binary for `key` already compiled for other sizes of the same specialization, or
        None after launching through Triton's path (which compiles one, or a profiler's hooks see)."""
        signature, device, ints, alignment = key
        specialized = (signature, device, self._int_specializations(ints), alignment)
        kernel = self.binaries.get(specialized)
        if kernel is None or _launch_hooks_on():
            kernel = self.fn[plan.grid](*args, **plan.config.launch_kwargs(), **self.options)
            self.compiled[key] = self.binaries[specialized] = kernel
            return None
        self.compiled[key] = kernel
        return kernel

    def _int_specializations(self, ints: tuple) -> tuple:
        return tuple(int_specialization(value, k not in self.unspecialized)
                     for k, value in zip(self._int_positions, ints))

    # -- choosing a config ---------------------------------------------------------------

    def _plan(self, args) -> _Plan:
        """The first call at these element counts: note the argument kinds, choose a config."""
        numels = args[-self.numel_count:]
        self._int_positions = tuple(k for k, a in enumerate(args) if isinstance(a, int))
        self._ints = gather(list(self._int_positions))
        self._tensors = gather([k for k, a in enumerate(args) if isinstance(a, torch.Tensor)])
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        device = next((t.device for t in tensors if t.is_cuda), torch.device("cpu"))
        interpreted = device.type == "cpu"
        self.device_arg = next((k for k, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_cuda), None)
        # Eager lets a CPU 0-d tensor join CUDA ones (a scalar); a kernel can only read device memory.
        self.host_scalars = tuple(
            k for k, a in enumerate(args) if isinstance(a, torch.Tensor) and not interpreted and not a.is_cuda
        )
        pointers = len(tensors)
        if self.device_arg is not None and not self.host_scalars and len(self._int_positions) == len(args) - pointers \
                and all(isinstance(a, torch.Tensor) for a in args[:pointers]):
            self.pointer_count, self._pointers = pointers, _pointer_reader(pointers)
        if self.host_scalars:
            args = _to_device(args, self.host_scalars)
        if interpreted and not interpreter_enabled():
            raise UnsupportedDevice(
                f"{self.name} ({self.path}) is a Triton kernel called on CPU tensors: set TRITON_INTERPRET=1 before "
                "triton is first imported to run it in Triton's interpreter, or use the C++ backend for CPU."
            )
        with self._lock:
            if numels in self.plans:
                return self.plans[numels]
            bucket = tuple(triton_configs.next_power_of_2(n) for n in numels)
            config = self.choices.get(bucket) or self._choose(device, bucket, args, numels, interpreted)
            if config not in self.choices.values():
                metrics.counters.kernel_configs_added += 1
            self.choices[bucket] = config
            self.plans[numels] = self._plan_for(config, numels)
            return self.plans[numels]

    def _choose(self, device, bucket, args, numels, interpreted) -> Config:
        """The config at a new size bucket: one stored for it; else the row of the heuristics
        that timing chose at another bucket, the only candidate, or (a kernel already running
        at another bucket: its counts are symbolic) the best guess, each replaced by a config
        already compiled where one serves (`_compiled_config`); else, at a kernel's first
        bucket, the fastest candidate, timed.

        A row is a recipe (e.g. "a persistent tile of ~2K elements, 4 warps") that
        `candidates` sizes for the element counts at hand, so reusing it at another bucket
        stays valid there: a persistent row's RBLOCK always covers that bucket's rnumel.
        torch.compile likewise times a kernel's configs once, at its first call, and keeps
        the winner for every later size (CachingAutotuner in torch/_inductor/runtime/
        triton_heuristics.py); timing again at each new bucket cost GPT-2 ~0.5-1.5 s per new
        sequence-length bucket on an H200, each candidate a Triton compile and ~30 ms timed."""
        rows = self._candidates(numels, interpreted)
        options = triton_configs.distinct(rows)
        key = _tuning_key(device, bucket)
        stored_choices = self._stored_choices()
        if (stored := _stored_config(stored_choices.get(key), options)) is not None:
            return stored
        row = self.tuned_row if self.tuned_row is not None else stored_choices.get(self._row_key(device))
        if isinstance(row, int) and 0 <= row < len(rows):
            return self._compiled_config(rows[row])
        if len(options) == 1 or self.choices:
            # A kernel that ran at another bucket had one candidate there, so it was never
            # timed: timing now would compile each candidate at a new length.
            return self._compiled_config(options[0])
        metrics.counters.kernel_block_timings += 1
        config = self._fastest(options, args, numels)
        self.tuned_row = rows.index(config)
        self._store_choices({key: config.as_dict(), self._row_key(device): self.tuned_row})
        return config

    def _compiled_config(self, config: Config) -> Config:
        """A config already chosen at another bucket (so compiled on a GPU) that serves where
        `config` is wanted, else `config`, a new binary to compile at a new length (a Triton
        compile takes ~0.2-0.5 s). Rows clamp their blocks to small counts, so without this
        every new power-of-two bucket below the clamp (a softmax over a growing sequence:
        RBLOCK 32, 64, ... 2048) compiled another binary. Any block size is correct for
        pointwise, tiled and looped kernels (masked, or looping over the row), so:
          - the smallest compiled config with blocks at least `config`'s (sizes that shrink);
          - else the largest compiled one, unless `config` has more than BLOCK_GROWTH_LIMIT
            times its elements: a kernel first run at a short length keeps its small blocks up
            to 8x longer lengths, then compiles once more (torch.compile keeps its first
            config at every size).
        A persistent kernel's RBLOCK must cover its row: its rnumel is static, so every config
        chosen for it does."""
        chosen = set(self.choices.values())
        covering = [c for c in chosen if c.XBLOCK >= config.XBLOCK and (c.RBLOCK or 0) >= (config.RBLOCK or 0)]
        if covering:
            return min(covering, key=lambda c: (_elements(c), c.XBLOCK))
        usable = [c for c in chosen if self.kind != triton_configs.KIND_PERSISTENT or (c.RBLOCK or 0) >= (config.RBLOCK or 0)]
        largest = max(usable, key=lambda c: (_elements(c), c.XBLOCK), default=None)
        if largest is not None and _elements(config) <= BLOCK_GROWTH_LIMIT * _elements(largest):
            return largest
        return config

    def _row_key(self, device: torch.device) -> str:
        # Rows differ between modes (max-autotune has more), so the row is kept per mode.
        return f"{_tuning_key(device, ())}row|{self.mode}"

    def _fastest(self, options: list[Config], args, numels) -> Config:
        try:
            args = self._with_stand_ins_for_stores(args)
        except torch.OutOfMemoryError:  # no room for the stand-ins: take the best guess untimed
            return options[0]
        timings = []
        for config in options:
            try:
                plan = self._plan_for(config, numels)
                timings.append((_time_ms(lambda: self._launch(plan, args)), config))
            except Exception as error:  # a config the compiler rejects (e.g. out of shared memory) is skipped
                if "OutOfResources" not in type(error).__name__ and "out of resource" not in str(error):
                    raise
        return min(timings, key=lambda pair: pair[0])[1]

    def _with_stand_ins_for_stores(self, args) -> list:
        """`args` with each tensor the kernel stores to and also reads (an `in_out_ptr`, or
        memory another parameter reads) replaced by an uninitialized tensor of the same layout
        over storage of its own (one per storage, so aliases stay aliases): timing must not
        apply the update again. A store to memory the kernel does not read keeps the real
        tensor: every timed run writes the values the real launch writes after it, and a
        stand-in for each new output raised the first call's peak memory by the largest one."""
        names = self.fn.arg_names
        written = {k for k, name in enumerate(names) if "out_ptr" in name}
        storage_of = {k: a.untyped_storage().data_ptr() for k, a in enumerate(args) if isinstance(a, torch.Tensor)}
        read = {storage_of[k] for k in storage_of if k not in written or "in_out_ptr" in names[k]}
        stand_ins: dict[int, torch.Tensor] = {}
        args = list(args)
        for k in written:
            tensor = args[k]
            if storage_of[k] not in read:
                continue
            if storage_of[k] not in stand_ins:
                stand_ins[storage_of[k]] = torch.empty(
                    tensor.untyped_storage().nbytes(), dtype=torch.uint8, device=tensor.device)
            copy = stand_ins[storage_of[k]]
            args[k] = torch.empty(0, dtype=tensor.dtype, device=tensor.device).set_(
                copy.untyped_storage(), tensor.storage_offset(), tensor.size(), tensor.stride())
        return args

    def _choices_path(self) -> pathlib.Path:
        return pathlib.Path(self.path).with_suffix(".autotune.json")

    def _stored_choices(self) -> dict:
        path = self._choices_path()
        try:
            choices = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return choices if isinstance(choices, dict) else {}

    def _store_choices(self, entries: dict) -> None:
        choices = self._stored_choices()
        choices.update(entries)
        try:
            cache.write_atomic(self._choices_path(), json.dumps(choices, indent=1, sort_keys=True))
        except OSError as error:  # a read-only cache: the choice holds for this process only
            log.info("inductor: could not store the block sizes chosen for %s (%s)", self.name, error)


def _stored_config(stored, options: list[Config]) -> Config | None:
    """The config stored for a size bucket if it is one of the candidates made now. The file
    is outside its entry's manifest (written after it, by whoever times first): one edited,
    damaged or written by code that sized its configs otherwise is timed again, never used (a
    persistent reduction's RBLOCK below its length summed part of each row)."""
    if not isinstance(stored, dict):
        return None
    try:
        config = Config(**stored)
    except TypeError:
        return None
    return config if config in options else None


# How many times more block elements than a kernel's largest compiled config a new bucket's
# config may have before it is compiled rather than served by that one (_compiled_config).
BLOCK_GROWTH_LIMIT = 8


def _elements(config: Config) -> int:
    return config.XBLOCK * (config.RBLOCK or 1)


WARMUP_MS, REPEAT_MS = 5, 20


def _time_ms(launch) -> float:
    """Mean GPU time of one launch, the L2 cache flushed before each: triton.testing.do_bench's
    method (warm-up for WARMUP_MS, then runs for REPEAT_MS, each between CUDA events), with a
    flush buffer of the L2's size where do_bench zeroes 256 MB, which, allocated during a first
    call on top of that call's live buffers, raised the call's peak memory by 256 MB."""
    device = torch.cuda.current_device()
    flush = torch.empty(torch.cuda.get_device_properties(device).L2_cache_size // 4, dtype=torch.int32, device="cuda")
    launch()  # compiles
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        launch()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-3)
    for _ in range(max(1, int(WARMUP_MS / estimate_ms))):
        launch()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(max(1, int(REPEAT_MS / estimate_ms)))]
    for start, end in events:
        flush.zero_()
        start.record()
        launch()
        end.record()
    torch.cuda.synchronize()
    return sum(start.elapsed_time(end) for start, end in events) / len(events)


_TORCH_DTYPES = {
    "*fp32": torch.float32, "*fp64": torch.float64, "*fp16": torch.float16, "*bf16": torch.bfloat16,
    "*i64": torch.int64, "*i32": torch.int32, "*i16": torch.int16, "*i8": torch.int8, "*u8": torch.uint8,
    "*i1": torch.bool,
}


def precompile(kernels) -> None:
    """Compile the candidate configs of (launcher, int arguments) pairs concurrently, ahead of
    their first launches, which then find them in Triton's kernel cache. Kernels that cannot be
    compiled ahead (taking a scalar) compile at their first launch as usual."""
    import triton

    workers = min(32, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool, triton.AsyncCompileMode(pool, ignore_errors=True):
        for launcher, ints in kernels:
            try:
                launcher.submit_compiles(ints)
            except Exception as error:  # noqa: BLE001  (ahead-of-time compiling only saves time)
                log.info("inductor: %s compiles at its first launch instead (%s)", launcher, error)


# The three below replace themselves, at their first call, by what they look up: each launch
# calls them, and the lookups (Triton's lazy driver proxy; torch.cuda's Python layer) cost
# more than the calls.


def _launch_hooks_on() -> bool:
    """Whether a launch hook is installed (a profiler's). Triton 3.5+ keeps an always-present
    HookChain, empty when none is: testing it against None sent every launch down the slow path
    (GPT-2 training on an H200 spent ~40% of its host time in Triton's argument binding). The
    hook is read at each call: a profiler sets or replaces it at any time."""
    global _launch_hooks_on
    knobs = _triton()[0].runtime

    def _launch_hooks_on() -> bool:
        hook = knobs.launch_enter_hook
        calls = getattr(hook, "calls", None)
        return bool(calls) if calls is not None else hook is not None

    return _launch_hooks_on()


def _current_stream(device: int):
    """The current CUDA stream's handle."""
    global _current_stream
    _current_stream = _triton()[1].active.get_current_stream
    return _current_stream(device)


def _current_device() -> int:
    global _current_device
    torch.cuda.init()
    _current_device = torch._C._cuda_getDevice
    return _current_device()


def _direct_launch(kernel) -> tuple:
    """(launch, the arguments it takes between the stream and the kernel's own) for a compiled
    binary: Triton's C launch function itself where the binary needs no scratch memory (most
    kernels), skipping its Python `__call__` (a frame, two scratch checks and ten attribute
    reads per launch, ~1.5 us of the ~10 a ResNet-50 training step pays ~600 times); else
    that `__call__`, which allocates the scratch."""
    run = kernel.run
    if getattr(run, "global_scratch_size", 1) == 0 and getattr(run, "profile_scratch_size", 1) == 0:
        return run.launch, (kernel.function, run.launch_cooperative_grid, run.launch_pdl, None, None,
                            kernel.packed_metadata, None, None, None)
    return run, (kernel.function, kernel.packed_metadata, None, None, None)


_data_ptr = torch.Tensor.data_ptr


@functools.lru_cache(maxsize=None)
def _pointer_reader(count: int):
    """`lambda a: (a[0].data_ptr(), ..., a[count - 1].data_ptr())`: the data pointers of a
    launch's first `count` arguments. Spelled out, each is a bound method call: mapping the
    unbound `Tensor.data_ptr` over a slice costs ~35 ns a tensor more, ~150 ns a launch of four."""
    return eval(f"lambda a: ({''.join(f'a[{k}].data_ptr(), ' for k in range(count))})")  # noqa: S307


def _binary_key(plan: _Plan, device: int, ints: tuple, pointers: tuple[int, ...]) -> tuple:
    """What picks the compiled binary for these arguments exactly (see _launch_compiled): one
    function for the key the slow path stores and the one the steady state looks up. The
    alignment: True when every pointer is 16-byte aligned (as the caching allocator's are;
    their gcd then is too, one C call), else each one's."""
    return (plan.signature, device, ints,
            True if not math.gcd(*pointers) & 15 else tuple(p % 16 == 0 for p in pointers))


def _to_device(args, positions):
    args = list(args)
    device = next(a.device for a in args if isinstance(a, torch.Tensor) and a.is_cuda)
    for k in positions:
        args[k] = args[k].to(device, non_blocking=True)
    return args


def int_specialization(value: int, specialized: bool) -> tuple:
    """What Triton's JIT tells binaries apart by for an int argument (`specialize_impl`,
    triton/runtime/jit.py): its type, from its range, and unless the parameter is in
    `do_not_specialize`, whether it equals 1 (then compiled in as a constant) or divides by 16."""
    if isinstance(value, bool):
        return ("u1",)
    width = "i32" if -2**31 <= value < 2**31 else "i64" if -2**63 <= value < 2**63 else "u64"
    return (width, value == 1, value % 16 == 0) if specialized else (width,)


def _tuning_key(device: torch.device, bucket) -> str:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    return f"{name}|{','.join(str(int(n)) for n in bucket)}"


@functools.lru_cache(maxsize=None)
def load_triton_kernel(key: str, name: str, mode: str = "default") -> TritonLauncher:
    """The launcher of kernel `name` in the cache entry `triton/<key>` (hash-checked first)."""
    return TritonLauncher(str(kernel_module_path(key, name)), name, mode)


def kernel_module_path(key: str, name: str) -> pathlib.Path:
    """The file of kernel `name` in the cache entry `triton/<key>`, its hash checked."""
    folder = cache.entry("triton", key)
    if folder is None:
        raise InductorError(
            f"inductor: Triton kernel module triton/{key} is missing or damaged in the cache {cache.cache_dir()}; "
            "the graph using it is compiled again on its next compile"
        )
    return folder / f"{name}.py"
