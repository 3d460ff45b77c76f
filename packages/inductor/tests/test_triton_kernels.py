"""The Triton printer's kernel shapes, differential against eager, under Triton's interpreter
(or on CUDA where there is a GPU): persistent and looped reductions, outer reductions, values
kept in registers, symbolic sizes as kernel arguments.

The shared op test list (test_pointwise.py, test_reductions.py...) runs through Triton too;
these cover what only the Triton backend decides.
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.fx

import inductor
from conftest import BACKENDS, assert_same

aten = torch.ops.aten

TRITON = next((name for name in BACKENDS if name.startswith("triton")), None)
pytestmark = pytest.mark.skipif(TRITON is None, reason="no Triton backend here (no GPU, TRITON_INTERPRET unset)")
DEVICE, OPTIONS = BACKENDS.get(TRITON, ("cpu", {}))


def compile_triton(fn, inputs, gm=None):
    return inductor.compile_aten_graph(gm or torch.fx.symbolic_trace(fn), inputs, options=OPTIONS)


def check(fn, *inputs, **tolerances):
    compiled = compile_triton(fn, list(inputs))
    assert_same(compiled(*inputs), fn(*inputs), **tolerances)
    return compiled


def kinds(compiled) -> list[str]:
    return [re.search(r"^KIND = '(\w+)'", source, re.M).group(1) for source in compiled.kernel_sources.values()]


def with_nan(x):
    x = x.clone()
    x.view(-1)[:: max(1, x.numel() // 5)] = float("nan")
    return x


# Rows longer than one persistent tile: the reduction loops over RBLOCK-wide chunks.
LONG_ROWS = (3, 1500)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("sum", lambda x: (aten.sum.dim_IntList(x, [1]),)),
        ("amax", lambda x: (aten.amax.default(x, [1]),)),
        ("amin", lambda x: (aten.amin.default(x, [1]),)),
        ("argmax", lambda x: (aten.argmax.default(x, 1),)),
        ("argmin", lambda x: (aten.argmin.default(x, 1),)),
        ("prod", lambda x: (aten.prod.dim_int(aten.add.Tensor(aten.mul.Tensor(x, 0.01), 1), 1),)),
        ("any", lambda x: (aten.any.dim(aten.gt.Scalar(x, 3.0), 1),)),
        ("all", lambda x: (aten.all.dim(aten.gt.Scalar(x, -3.0), 1),)),
        ("var_mean", lambda x: aten.var_mean.correction(x, [1], correction=1)),
        ("softmax", lambda x: (aten._softmax.default(x, 1, False),)),
        ("log_softmax", lambda x: (aten._log_softmax.default(x, 1, False),)),
    ],
)
def test_looped_reduction_matches_eager(name, fn):
    x = torch.randn(*LONG_ROWS, device=DEVICE)
    compiled = check(fn, x, rtol=1e-4, atol=1e-4)
    assert "looped" in kinds(compiled)


@pytest.mark.parametrize("name", ["amax", "argmax", "argmin"])
@pytest.mark.parametrize("shape", [(5, 40), LONG_ROWS], ids=["persistent", "looped"])
def test_reductions_propagate_nan_like_eager(name, shape):
    x = with_nan(torch.randn(*shape, device=DEVICE))
    check(lambda x: (getattr(aten, name).default(x, 1) if name != "amax" else aten.amax.default(x, [1]),), x)


@pytest.mark.parametrize("shape", [(5, 40), LONG_ROWS], ids=["persistent", "looped"])
def test_argmax_ties_take_the_first_index(shape):
    x = torch.randint(0, 3, shape, device=DEVICE).float()
    check(lambda x: (aten.argmax.default(x, 1), aten.argmin.default(x, 1)), x)


def test_persistent_softmax_reads_its_input_once():
    x = torch.randn(6, 100, device=DEVICE)
    compiled = check(lambda x: (aten._softmax.default(x, -1, False),), x)
    [source] = compiled.kernel_sources.values()
    assert kinds(compiled) == ["persistent"]
    assert source.count("tl.load(in_ptr0") == 1


@pytest.mark.parametrize("shape", [(6, 100), LONG_ROWS], ids=["persistent", "looped"])
def test_intermediates_read_by_later_passes_are_not_written_to_memory(shape):
    def handwritten_softmax(x):
        shifted = aten.add.Tensor(aten.mul.Tensor(x, 2.0), 1.0)   # read by the max and by the exp
        exps = aten.exp.default(aten.sub.Tensor(shifted, aten.amax.default(shifted, [1], True)))
        return (aten.div.Tensor(exps, aten.sum.dim_IntList(exps, [1], True)),)

    x = torch.randn(*shape, device=DEVICE)
    compiled = check(handwritten_softmax, x, rtol=1e-5, atol=1e-6)
    [source] = compiled.kernel_sources.values()
    assert source.count("tl.store(") == 1 and "tl.debug_barrier" not in source


def test_layer_norm_weight_is_loaded_once_per_program_not_per_row():
    x, w, b = torch.randn(6, 64, device=DEVICE), torch.randn(64, device=DEVICE), torch.randn(64, device=DEVICE)
    compiled = check(lambda x, w, b: aten.native_layer_norm.default(x, [64], w, b, 1e-5), x, w, b, rtol=1e-4, atol=1e-4)
    [source] = compiled.kernel_sources.values()
    # Indexed by the reduction axis alone: a [1, RBLOCK] load masked by rmask only.
    assert re.search(r"tl\.load\(in_ptr\d \+ r0, rmask, other=0\.0\)", source)


@pytest.mark.parametrize("shape", [(40, 7), (2000, 9)], ids=["persistent", "looped"])
def test_outer_reduction_over_a_strided_axis(shape):
    x = torch.randn(*shape, device=DEVICE)
    compiled = check(lambda x: (aten.sum.dim_IntList(x, [0]), aten.argmax.default(x, 0)), x, rtol=1e-4, atol=1e-4)
    assert all("OUTER_REDUCTION = True" in source for source in compiled.kernel_sources.values())


def test_full_reduction_of_a_tensor_to_a_scalar():
    x = torch.randn(50, 70, device=DEVICE)
    check(lambda x: (aten.sum.default(x), aten.amax.default(x, [0, 1]), aten.argmax.default(x)), x, rtol=1e-4, atol=1e-4)


def test_reduction_of_a_broadcast_value_counts_every_element():
    x = torch.randn(8, 1, device=DEVICE)
    check(lambda x: (aten.sum.dim_IntList(aten.expand.default(x, [8, 30]), [1]),), x, rtol=1e-5, atol=1e-5)


def test_reduction_prologue_and_epilogue_fuse_into_one_kernel():
    x, y = torch.randn(7, 90, device=DEVICE), torch.randn(7, 1, device=DEVICE)

    def fn(x, y):
        total = aten.sum.dim_IntList(aten.exp.default(aten.mul.Tensor(x, 0.5)), [1], True)
        return (aten.add.Tensor(aten.log.default(total), y),)

    compiled = check(fn, x, y, rtol=1e-5, atol=1e-5)
    assert compiled.kernel_count == 1


def test_non_contiguous_and_offset_views_index_correctly():
    base = torch.randn(9, 13, 4, device=DEVICE)
    x = base.permute(2, 0, 1)[:, 1:, ::2]
    check(lambda x: (aten.mul.Tensor(aten.sigmoid.default(x), 3.0), aten.sum.dim_IntList(x, [2])), x,
          rtol=1e-5, atol=1e-5)


def test_bool_and_half_buffers_round_trip():
    x = torch.randn(17, 9, device=DEVICE)
    check(lambda x: (aten.gt.Scalar(x, 0), aten._to_copy.default(x, dtype=torch.bfloat16),
                     aten._to_copy.default(aten._to_copy.default(x, dtype=torch.float16), dtype=torch.float32)), x)


def test_constant_only_kernels_have_the_right_dtype():
    x = torch.randn(4, 6, device=DEVICE)

    def fn(x):
        ones, minus = aten.full_like.default(x, 1.0, dtype=torch.float64), aten.full_like.default(x, -1.0, dtype=torch.float64)
        return aten.full_like.default(x, 2.5, dtype=torch.float64), aten.where.self(aten.gt.Scalar(x, 0), ones, minus)

    check(fn, x)


def test_symbolic_sizes_are_kernel_arguments():
    fake_tensor = pytest.importorskip("fake_tensor")
    fn = lambda x: (aten._softmax.default(aten.mul.Tensor(x, 2.0), -1, False),)  # noqa: E731
    example = torch.randn(6, 40, device=DEVICE)
    gm = torch.fx.symbolic_trace(fn)
    mode = fake_tensor.FakeTensorMode(shape_env=fake_tensor.ShapeEnv())
    fake = mode.from_real(example, dynamic_dims=[0])

    class Record(torch.fx.Interpreter):
        def run_node(self, node):
            node.meta["val"] = super().run_node(node)
            return node.meta["val"]

    with mode:
        Record(gm).run(fake)
    compiled = compile_triton(fn, [example], gm=gm)
    for rows in (6, 11, 3):
        x = torch.randn(rows, 40, device=DEVICE)
        assert_same(compiled(x), fn(x))
    # The row count reaches the kernel as its element count, bound from the input at each call.
    assert re.search(r"kernel0\(arg0, (buf\d+, )+s0, 40\)", compiled.source), compiled.source


def test_identical_kernels_share_one_module():
    x, w = torch.randn(6, 6, device=DEVICE), torch.randn(6, 6, device=DEVICE)

    def two_layers(x, w):
        hidden = aten.mm.default(aten.tanh.default(aten.mul.Tensor(x, 2.0)), w)
        return (aten.tanh.default(aten.mul.Tensor(hidden, 2.0)),)

    compiled = check(two_layers, x, w, rtol=1e-5, atol=1e-5)
    paths = re.findall(r"load_triton_kernel\('([^']+)'", compiled.source)
    assert len(paths) == 2 and paths[0] == paths[1]


def test_kernel_files_are_readable_modules_in_the_cache():
    x = torch.randn(5, 7, device=DEVICE)
    compiled = check(lambda x: (aten.tanh.default(aten.add.Tensor(x, 1)),), x)
    [(key, name)] = re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", compiled.source)
    text = (inductor.cache.entry("triton", key) / f"{name}.py").read_text()
    assert text == compiled.kernel_sources["kernel0"]
    assert "@triton.jit" in text and "libdevice.tanh" in text


def test_triton_kernel_on_cpu_tensors_without_the_interpreter_says_how_to_fix_it(monkeypatch):
    if DEVICE != "cpu":
        pytest.skip("about CPU tensors")
    from inductor.runtime import triton_launch

    x = torch.randn(4, 4)
    compiled = compile_triton(lambda x: (aten.exp.default(x),), [x])
    [(key, name)] = re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", compiled.source)
    monkeypatch.setattr(triton_launch, "interpreter_enabled", lambda: False)
    launcher = triton_launch.TritonLauncher(str(inductor.cache.entry("triton", key) / f"{name}.py"), name, "default")
    with pytest.raises(inductor.UnsupportedDevice, match="TRITON_INTERPRET=1"):
        launcher(x, torch.empty_like(x), 16)


# Outputs keep eager's layout, which follows a permuted input's through clone and pointwise ops:
# the transposes are asked for explicitly (a contiguous copy of a permuted tensor).
def _contiguous(x):
    return aten.clone.default(x, memory_format=torch.contiguous_format)


TRANSPOSES = {
    "2d": (lambda x: (_contiguous(aten.permute.default(x, [1, 0])),), [(48, 80)]),
    "batched_with_math": (lambda x, y: (aten.mul.Tensor(aten.permute.default(x, [0, 2, 1]), y),), [(3, 40, 72), (3, 72, 40)]),
    "ragged_edges": (lambda x: (_contiguous(aten.exp.default(aten.permute.default(x, [1, 0]))),), [(37, 53)]),
    "three_axes": (lambda x: (_contiguous(aten.permute.default(x, [2, 0, 1])),), [(5, 24, 33)]),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSES))
def test_transposes_run_as_tiled_kernels(name):
    fn, shapes = TRANSPOSES[name]
    compiled = check(fn, *[torch.randn(*shape, device=DEVICE) for shape in shapes])
    assert kinds(compiled) == ["tiled"]


def test_broadcast_along_the_inner_loop_is_not_a_transpose():
    x, b = torch.randn(64, 48, device=DEVICE), torch.randn(64, 1, device=DEVICE)
    compiled = check(lambda x, b: (aten.add.Tensor(x, b),), x, b)
    assert kinds(compiled) == ["pointwise"]


def test_block_sizes_are_timed_once_and_the_chosen_row_serves_new_buckets(monkeypatch):
    # A kernel with symbolic sizes meets a new element count at each new length; the candidates
    # are the same rows of the heuristics at every count, so the choice is timed once (at the
    # first count with a choice to make), and its row serves every later bucket.
    from inductor.runtime import triton_configs, triton_launch

    fn = lambda x: (aten.mul.Tensor(aten.exp.default(x), 2.0),)  # noqa: E731
    compiled = check(fn, torch.randn(300, device=DEVICE))
    [(key, name)] = re.findall(r"load_triton_kernel\('([^']+)', '([^']+)'", compiled.source)
    timed = []

    def fastest(self, options, args, numels):
        timed.append(numels)
        return options[1]

    monkeypatch.setattr(triton_launch.TritonLauncher, "_fastest", fastest)
    monkeypatch.setattr(triton_launch.TritonLauncher, "_candidates", lambda self, numels, interpreted: [
        triton_configs.Config(16), triton_configs.Config(32)])
    monkeypatch.setattr(triton_launch.TritonLauncher, "_store_choices", lambda *a: None)
    launcher = triton_launch.TritonLauncher(str(triton_launch.kernel_module_path(key, name)), name, "default")
    for n in (300, 400, 511, 600):
        x = torch.randn(n, device=DEVICE)
        out = torch.empty_like(x)
        launcher(x, out, n)
        assert_same((out,), fn(x))
    assert timed == [(300,)]
    assert set(launcher.choices.values()) == {triton_configs.Config(32)}
