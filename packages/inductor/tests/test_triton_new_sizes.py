"""A graph with symbolic sizes meets a new size: no block sizes are timed again and no kernel
is compiled again (issue 18), and the results still match eager.

Without a GPU the kernels run in Triton's interpreter, which neither times nor compiles: the
tests give the launcher the GPU's candidate configs, count the timings, and stand a counting
`fn[grid]` (Triton's JIT: compile, then launch) in front of the interpreter, so that launches
take the compiled-binary path a GPU takes.
"""

from __future__ import annotations

import re

import pytest
import torch

from conftest import BACKENDS, assert_same
from test_dynamic_kernels import trace_dynamic

import inductor

pytest.importorskip("fake_tensor")
aten = torch.ops.aten
TRITON = next((name for name in BACKENDS if name.startswith("triton")), None)
pytestmark = pytest.mark.skipif(TRITON != "triton-interpret", reason="counts the interpreter's launches")
OPTIONS = BACKENDS.get(TRITON, ("cpu", {}))[1]
triton_launch = pytest.importorskip("inductor.runtime.triton_launch")


def _model(scale=0.5, shift=1.0):
    """A pointwise kernel over (s0, 48), a softmax over s1-long rows of w (looped, as torch.compile
    makes a reduction of symbolic length), one over s0 rows of 48 (persistent) and a strided
    read over (s0, 7)."""

    def fn(x, w):
        scaled = aten.mul.Tensor(aten.exp.default(x), scale)
        narrow = aten.add.Tensor(aten.slice.Tensor(x, 1, 0, 7), 1.0)
        rows = aten._softmax.default(aten.mul.Tensor(x, 3.0), -1, False)
        return aten._softmax.default(aten.add.Tensor(w, shift), -1, False), scaled, narrow, rows

    return fn


_rows_then_scale = _model()


def _inputs(rows, length):
    return [torch.randn(rows, 48), torch.randn(3, length)]  # few rows of w: the interpreter is slow


def _compiled(fn=_rows_then_scale):
    example = _inputs(5, 40)
    gm = trace_dynamic(fn, example, {0: [0], 1: [1]})
    return inductor.compile_aten_graph(gm, example, options=OPTIONS)


def _decorator_names(source: str) -> tuple[list[str], list[str]]:
    """(the kernel's int parameters, those it tells Triton not to specialize)."""
    decorator = re.search(r"^@triton\.jit(?:\(do_not_specialize=(\[.*\])\))?\ndef \w+\((.*)\):", source, re.M)
    params = [p for p in decorator.group(2).split(", ") if "ptr" not in p and "constexpr" not in p]
    return params, eval(decorator.group(1) or "[]")


def test_symbolic_size_parameters_are_not_specialized_by_triton():
    compiled = _compiled()
    kinds = set()
    for source in compiled.kernel_sources.values():
        params, unspecialized = _decorator_names(source)
        title = source.splitlines()[0]
        # Size symbols and symbolic counts vary between calls; a count that is a multiple of 16
        # at every size (48*s0) keeps Triton's divisibility hint, which holds at every size.
        assert {p for p in params if re.fullmatch(r"s\d+", p)} <= set(unspecialized), source
        outer = title.split(" over ")[1].split(" | ")[0]
        assert ("xnumel" in unspecialized) == ("s0" in outer and "48*s0" not in outer), source
        assert ("rnumel" in unspecialized) == ("reduction over r0 < s1" in title), source
        kinds.add(title.split()[2])
    assert kinds == {"pointwise", "looped", "persistent"}


@pytest.mark.parametrize("value", [0, 1, 2, 15, 16, 48, 200, 2**31 - 16, 2**31, 2**31 + 1, 2**63 - 16, 2**63, -16, -2**31, -2**31 - 1])
@pytest.mark.parametrize("specialized", [True, False])
def test_int_specialization_tells_apart_what_triton_does(value, specialized):
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import native_specialize_impl

    def triton_key(v):
        return native_specialize_impl(BaseBackend, v, False, specialized, True)

    # Two values share a binary in Triton exactly when they share ours.
    for other in (value + 16, value + 1, 1, 16, 3, 2**31, 2**63 + 16):
        assert (triton_key(value) == triton_key(other)) == (
            triton_launch.int_specialization(value, specialized) == triton_launch.int_specialization(other, specialized))


class _CountingJIT:
    """Stands for Triton's JIT on a GPU: `fn[grid](*args)` compiles (counted) and launches,
    returning a binary whose `run` launches again; both launch the interpreter."""

    def __init__(self, fn, compiles: list):
        self.fn, self.compiles = fn, compiles

    def __getattr__(self, name):
        return getattr(self.fn, name)

    def __getitem__(self, grid):
        def compile_and_launch(*args, **kwargs):
            self.compiles.append((self.fn, tuple(a for a in args if isinstance(a, int)), tuple(kwargs.items())))
            self.fn[grid](*args, **kwargs)
            return _Binary(self.fn, kwargs)

        return compile_and_launch


class _Binary:
    function = packed_metadata = None

    def __init__(self, fn, kwargs):
        self.fn, self.kwargs = fn, kwargs

    def run(self, grid_x, grid_y, grid_z, stream, function, metadata, hook_a, hook_b, hook_c, *args):
        constexprs = ("XBLOCK", "RBLOCK")
        count = sum(name in self.kwargs for name in constexprs)
        self.fn[(grid_x, grid_y)](*args[:len(args) - count], **self.kwargs)


@pytest.fixture
def as_on_a_gpu(monkeypatch):
    """Launchers choose among the GPU's candidates (timings counted, the last one wins) and
    launch through compiled binaries; yields (timings, compiles)."""
    timed, compiles, wrapped = [], [], []
    gpu_candidates = triton_launch.TritonLauncher._candidates

    def fastest(self, options, args, numels):
        timed.append((self.name, numels))
        return options[-1]

    def launch(self, plan, args):
        if not isinstance(self.fn, _CountingJIT):
            wrapped.append((self, self.fn))
            self.fn = _CountingJIT(self.fn, compiles)
        self._launch_compiled(plan, args, 0)

    monkeypatch.setattr(triton_launch.TritonLauncher, "_candidates",
                        lambda self, numels, interpreted: gpu_candidates(self, numels, interpreted=False))
    monkeypatch.setattr(triton_launch.TritonLauncher, "_fastest", fastest)
    monkeypatch.setattr(triton_launch.TritonLauncher, "_launch", launch)
    monkeypatch.setattr(triton_launch, "_current_stream", lambda device: 0)
    monkeypatch.setattr(triton_launch, "_launch_hooks_on", lambda: False)
    yield timed, compiles
    for launcher, fn in wrapped:  # launchers outlive the test (load_triton_kernel caches them)
        launcher.fn = fn


def test_new_sizes_are_neither_timed_nor_compiled_again(as_on_a_gpu):
    timed, compiles = as_on_a_gpu
    compiled = _compiled()
    # (rows, row length): a first call at counts past the heuristics' clamps, a cache hit with
    # new values, then new sizes in new buckets, larger and smaller, some not a multiple of 16
    # (Triton would specialize them apart).
    sizes = [(300, 2100), (300, 2100), (700, 5000), (400, 3000), (37, 200), (5, 40), (64, 64)]
    after_first = None
    for k, (rows, length) in enumerate(sizes):
        xs = _inputs(rows, length)
        assert_same(compiled(*xs), _rows_then_scale(*xs), rtol=1e-5, atol=1e-5)
        if k == 0:
            after_first = (len(timed), len(compiles))
            assert compiles
    assert (len(timed), len(compiles)) == after_first, (timed, compiles)


def test_sizes_growing_from_a_short_first_length_compile_nothing_new(as_on_a_gpu):
    # First called below the heuristics' clamps (a softmax's RBLOCK follows its row length up to
    # 2048): each longer bucket wanted a larger block, a binary compiled at that new length.
    # Kernels already compiled serve up to BLOCK_GROWTH_LIMIT times the elements.
    timed, compiles = as_on_a_gpu
    fn = _model(scale=0.125, shift=0.25)  # kernels of their own: launchers no other test has run
    compiled = _compiled(fn)
    sizes = [(5, 40), (9, 70), (20, 130), (37, 200), (64, 300), (30, 33)]
    for k, (rows, length) in enumerate(sizes):
        xs = _inputs(rows, length)
        assert_same(compiled(*xs), fn(*xs), rtol=1e-5, atol=1e-5)
        if k == 0:
            after_first = (len(timed), len(compiles))
    assert (len(timed), len(compiles)) == after_first, (timed, compiles)
    # Past the limit (row length 40 -> 1000: RBLOCK 64 -> 1024) one larger binary is compiled,
    # once: the next lengths of that bucket and any shorter ones reuse it.
    for rows, length in [(5, 1000), (6, 900), (5, 50)]:
        xs = _inputs(rows, length)
        assert_same(compiled(*xs), fn(*xs), rtol=1e-5, atol=1e-5)
    assert len(timed) == after_first[0] and len(compiles) == after_first[1] + 1, compiles[after_first[1]:]


def test_a_new_process_reuses_the_stored_choice_at_a_new_bucket(as_on_a_gpu):
    timed, _ = as_on_a_gpu
    compiled = _compiled()
    for rows, length in [(300, 2100), (40, 300)]:
        xs = _inputs(rows, length)
        assert_same(compiled(*xs), _rows_then_scale(*xs), rtol=1e-5, atol=1e-5)
    timed.clear()
    # A launcher of its own per kernel, as a new process has, reads the row from the kernel's
    # autotune.json and does not time at a bucket it has not seen.
    for key, name in re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", compiled.source):
        launcher = triton_launch.TritonLauncher(str(triton_launch.kernel_module_path(key, name)), name, "default")
        assert launcher._choose(torch.device("cpu"), (4096, 4096), [], (4000, 4000), False) is not None
    assert timed == []


def test_kernels_compiled_ahead_at_the_example_sizes_serve_every_size(as_on_a_gpu, monkeypatch):
    # On a GPU the backend compiles each kernel's candidates before the first call, at the
    # example's sizes (codegen/triton/backend.py). A launch with one of those configs, at the
    # example's size or any other, must find its binary there: the same Triton specialization.
    from inductor.codegen.triton import backend

    _, compiles = as_on_a_gpu
    ahead = []
    monkeypatch.setattr(backend.TritonBackend, "compiles_ahead_on", frozenset({"cpu"}))
    monkeypatch.setattr(backend, "precompile", ahead.extend)
    fn = _model(scale=0.25)  # a graph of its own: compiled afresh
    compiled = _compiled(fn)
    assert len(ahead) == len(compiled.kernel_sources)
    launchers = {launcher.fn: launcher for launcher, _ in ahead}

    def specialization(launcher, ints):
        first = len(launcher.pointer_types)  # the ints follow the pointers
        return tuple(triton_launch.int_specialization(v, first + k not in launcher.unspecialized)
                     for k, v in enumerate(ints))

    binaries = {(launcher.fn, tuple(config.launch_kwargs().items())): specialization(launcher, ints)
                for launcher, ints in ahead
                for config in launcher._candidates(ints[-launcher.numel_count:], interpreted=False)}
    for k, (rows, length) in enumerate([(5, 40), (300, 2100), (700, 5000), (37, 200)]):
        xs = _inputs(rows, length)
        assert_same(compiled(*xs), fn(*xs), rtol=1e-5, atol=1e-5)
        if k == 0:  # the example's size: every binary was compiled ahead
            assert compiles and all((f, kwargs) in binaries for f, _, kwargs in compiles)
    for f, ints, kwargs in compiles:
        if (f, kwargs) in binaries:
            assert specialization(launchers[f], ints) == binaries[f, kwargs]
