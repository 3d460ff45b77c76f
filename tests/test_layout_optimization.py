"""Layout optimization (inductor's layout_optimization.py): convolution nets compiled on CPU run
their convolutions channels-last, and what the caller gets (outputs, input and parameter
gradients, running statistics) has eager's values and eager's exact strides.

Each net runs a first call, a cache hit with new values, a new size (recompiled with symbolic
sizes) and another size that graph serves; inference and a training step; float32 and
bfloat16. bfloat16 results are compared with a float32 run of the same net: ours may be no
further from it than eager is (both round every op; their rounding orders differ).
"""

from __future__ import annotations

import copy
import inspect
import os

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.profiler_util import FunctionEvent

# Triton binds its library functions when first imported: without a GPU, switch its interpreter on
# now (collection imports this module before any test imports triton).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler  # noqa: E402

aten = torch.ops.aten


class ResNetBlock(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        x = self.stem(x)
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(x + y)


class MobileNetBlock(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.dw, self.bn1 = nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False), nn.BatchNorm2d(c)
        self.pw, self.bn2 = nn.Conv2d(c, 2 * c, 1, bias=False), nn.BatchNorm2d(2 * c)

    def forward(self, x):
        y = F.hardswish(self.bn1(self.dw(self.stem(x))))
        return F.relu6(self.bn2(self.pw(y)))


class ConvNeXtBlock(nn.Module):
    """A depthwise 7x7 convolution, then a LayerNorm over channels and the MLP on an NHWC permute."""

    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 2, stride=2)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.pw1, self.pw2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.rand(c))

    def forward(self, x):
        x = self.stem(x)
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.pw2(F.gelu(self.pw1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class PatchTokens(nn.Module):
    """A convolution's output flattened into tokens (ViT's patch embedding) whose backward reads
    views of it: row-major in eager, views of channels-last memory here."""

    def __init__(self, c=8):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.norm = nn.LayerNorm(c)

    def forward(self, x):
        y = self.conv(x)
        tokens = y.flatten(2).transpose(1, 2)
        return self.norm(tokens).sin() * y.flatten(2).square().sum(1, keepdim=True).transpose(1, 2).cos()


NETS = {"resnet": ResNetBlock, "mobilenet": MobileNetBlock, "convnext": ConvNeXtBlock, "tokens": PatchTokens}
# First call, new values, a new size (recompiled with symbolic sizes), another size.
SHAPES = [(2, 3, 8, 10), (2, 3, 8, 10), (3, 3, 12, 14), (2, 3, 10, 16)]


def _net(name, dtype, training):
    torch.manual_seed(0)
    return NETS[name]().to(dtype).train(training)


def _step(model, x, training):
    """(output, input gradient or None, parameter gradients, buffers) of one call."""
    if not training:
        with torch.no_grad():
            return model(x), None, [], [b.clone() for b in model.buffers()]
    x = x.detach().requires_grad_()
    out = model(x)
    out.float().square().mean().backward()
    grads = [p.grad for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    return out, x.grad, grads, [b.clone() for b in model.buffers()]


def _flat(result):
    out, x_grad, grads, buffers = result
    return [t for t in (out, x_grad, *grads, *buffers) if t is not None]


def _assert_close_as_eager(ours, eager, reference, dtype):
    exacts = _flat(reference if reference is not None else eager)
    for mine, theirs, exact in zip(_flat(ours), _flat(eager), exacts):
        assert mine.stride() == theirs.stride(), (mine.shape, mine.stride(), theirs.stride())
        assert mine.dtype == theirs.dtype
        if dtype == torch.float32:
            torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-4)
        else:
            ours_error = (mine.double() - exact.double()).abs().max().item()
            eager_error = (theirs.double() - exact.double()).abs().max().item()
            scale = exact.double().abs().max().item()
            assert ours_error <= 2 * eager_error + 1e-2 * scale + 1e-6, (mine.shape, ours_error, eager_error)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("name", sorted(NETS))
def test_conv_net_matches_eager_values_and_strides(name, training, dtype):
    eager = _net(name, dtype, training)
    ours = copy.deepcopy(eager)
    reference = copy.deepcopy(eager).float()
    compiled = compiler.compile(ours, backend="inductor")
    for shape in SHAPES:
        x = torch.randn(shape).to(dtype)
        _assert_close_as_eager(_step(compiled, x, training), _step(eager, x, training),
                               _step(reference, x.float(), training), dtype)


PROFILER_RECORDS_STRIDES = "structured_input_strides" in inspect.signature(FunctionEvent).parameters


def _convolution_layouts(step) -> list[bool]:
    """Whether each convolution (and convolution backward) `step` runs read channels-last
    activations: the input, or the output gradient and the input, with exactly channels-last
    strides (aten reads a batch of one at another stride of its size-1 dim as row-major). The
    profiler sees aten's calls with their strides. (A TorchDispatchMode would not do: under
    one, compiled entries run eagerly.)"""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        step()
    seen = []
    if not PROFILER_RECORDS_STRIDES:
        pytest.skip("this torch's profiler records no strides (torch 2.11 has none)")
    for event in prof.events():
        reads = {"aten::convolution": 1, "aten::convolution_backward": 2}.get(event.name)
        if reads:
            shapes, strides = event.input_shapes[:reads], event.structured_input_strides[:reads]
            seen.append(all(list(stride) == list(torch.empty(shape, memory_format=torch.channels_last).stride())
                            for shape, stride in zip(shapes, strides)))
    return seen


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("name", sorted(NETS))
def test_cuda_conv_net_with_layout_optimization_matches_eager(name, training, dtype, monkeypatch):
    """On CUDA torch's rules decide, with the option on: 80 channels make them choose
    channels-last at static sizes (nets of only <= 64 channels stay row-major in training), and
    the new sizes' symbolic graph stays row-major. Values, strides, gradients and running
    statistics are eager's either way."""
    # TF32 convolutions differ by ~1e-3 between cuDNN's layouts: compare float32 as float32.
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    torch.manual_seed(0)
    eager = NETS[name](c=80).to(dtype).train(training).cuda()
    ours = copy.deepcopy(eager)
    reference = copy.deepcopy(eager).float()
    compiled = compiler.compile(ours, backend="inductor", options={"layout_optimization": True})
    for i, shape in enumerate(SHAPES):
        x = torch.randn(shape, device="cuda").to(dtype)
        _assert_close_as_eager(_step(compiled, x, training), _step(eager, x, training),
                               _step(reference, x.float(), training), dtype)
        if i == 1 and PROFILER_RECORDS_STRIDES:
            layouts = _convolution_layouts(lambda: _step(compiled, x, training))
            assert layouts and all(layouts), layouts


@pytest.mark.gpu
@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
def test_cuda_default_is_channels_last_for_inference_only(training, caplog, monkeypatch):
    """By default, CUDA inference graphs follow torch's rules and training graphs keep eager's
    layout (our channels-last training steps measured slower: layout_optimization.py). The
    forward's kernels tell: channels-last adds one, the copy of the row-major image."""
    import logging
    import re

    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)

    def forward_kernels(options):
        torch.manual_seed(0)
        eager = ResNetBlock(c=80).train(training).cuda()
        compiled = compiler.compile(copy.deepcopy(eager), backend="inductor", options=options)
        x = torch.randn(SHAPES[0], device="cuda")
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="compiler.output_code"):
            _assert_close_as_eager(_step(compiled, x, training), _step(eager, x, training), None, torch.float32)
        wrappers = [r.getMessage() for r in caplog.records if "def call(args)" in r.getMessage()]
        return len(re.findall(r"^kernel\d+ = ", wrappers[0], flags=re.MULTILINE))

    assert forward_kernels(None) == forward_kernels({"layout_optimization": False}) + (0 if training else 1)


@pytest.mark.parametrize("enabled", [True, False])
def test_convolutions_run_channels_last_unless_turned_off(enabled):
    model = _net("resnet", torch.float32, True)
    compiled = compiler.compile(model, backend="inductor", options={"layout_optimization": enabled})
    x = torch.randn(1, 3, 8, 10)
    compiled(x).sum().backward()  # compiles
    # Three convolutions forward, three backward: all channels-last, or none (a row-major
    # net keeps eager's row-major convolutions).
    assert _convolution_layouts(lambda: compiled(x).sum().backward()) == [enabled] * 6


def test_kernels_between_convolutions_write_channels_last(caplog):
    """Inference of the MobileNet block: the only kernel layout optimization adds is the copy of
    the row-major image into channels-last; the batch norms and activations between
    convolutions write what the next one reads, and the last one writes the output row-major."""
    import logging

    def kernels(enabled):
        model = _net("mobilenet", torch.float32, False)
        compiled = compiler.compile(model, backend="inductor", options={"layout_optimization": enabled})
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="compiler.output_code"), torch.no_grad():
            compiled(torch.randn(2, 3, 8, 10))
        wrapper = "\n".join(r.getMessage() for r in caplog.records).split('extern "C"')[0]
        return wrapper.count("= load_kernel(")

    assert kernels(True) == kernels(False) + 1


def test_convolutions_read_channels_last_buffers_without_a_view(caplog):
    """A channels-last activation is computed as its NHWC buffer; the wrapper allocates that
    memory as the NCHW tensor the next convolution reads, rather than viewing it with an
    `as_strided` per convolution per call (host time: a few us each)."""
    import logging

    model = _net("mobilenet", torch.float32, False)
    compiled = compiler.compile(model, backend="inductor", options={"layout_optimization": True})
    x = torch.randn(2, 3, 8, 10)
    with caplog.at_level(logging.INFO, logger="compiler.output_code"), torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    wrapper = "\n".join(r.getMessage() for r in caplog.records).split('extern "C"')[0]
    assert wrapper.count("aten_convolution_default(") == 3 and ".as_strided(" not in wrapper, wrapper


def test_triton_kernels_follow_the_layout():
    """The same choice with Triton kernels (in its interpreter on CPU): code generation indexes
    channels-last buffers, and the caller still gets eager's values and strides."""
    from triton import knobs

    if not knobs.runtime.interpret:
        pytest.skip("Triton's interpreter is off (set TRITON_INTERPRET=1 before triton is imported)")
    eager = _net("mobilenet", torch.float32, True)
    ours = copy.deepcopy(eager)
    compiled = compiler.compile(ours, backend="inductor", options={"cpu_backend": "triton"})
    for shape in SHAPES[:2]:
        x = torch.randn(shape)
        results = []
        layouts = _convolution_layouts(lambda: results.append(_step(compiled, x, True)))
        _assert_close_as_eager(results[0], _step(eager, x, True), None, torch.float32)
    assert layouts == [True] * 6


def test_frozen_convolutions_with_a_trained_head():
    """A training graph whose backward has no convolution (a frozen backbone, a trained head)
    keeps its forward's choice and computes the head's gradients as eager."""
    eager = nn.Sequential(_net("resnet", torch.float32, False), nn.Flatten(1), nn.Linear(8 * 8 * 10, 4))
    eager[0].requires_grad_(False)
    ours = copy.deepcopy(eager)
    compiled = compiler.compile(ours, backend="inductor")
    for shape in SHAPES[:2]:
        x = torch.randn(shape[0], 3, 8, 10)
        _assert_close_as_eager(_step(compiled, x, True), _step(eager, x, True), None, torch.float32)


@pytest.mark.parametrize("batch, channels_last", [(1, False), (64, True)])
def test_cpu_weights_copied_each_call_must_not_outweigh_the_activations(batch, channels_last):
    """On CPU aten lays a row-major 3x3 weight out channels-last on every call: a wide
    convolution over a small batch keeps eager's row-major layout; a large batch pays for it."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1)).eval()
    compiled = compiler.compile(model, backend="inductor")
    x = torch.randn(batch, 64, 4, 4)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
        assert _convolution_layouts(lambda: compiled(x)) == [channels_last] * 2


def test_a_forward_run_uncompiled_and_its_backward_agree_on_saved_layouts():
    """At symbolic sizes a BatchNorm's unbiased variance, n / (n - 1), is a symbolic float; the
    forward ran as its ATen graph, uncompiled, in eager's layouts, while the backward, compiled,
    read the saved ReLU outputs channels-last as the partition had decided: parameter
    gradients off by ~20 (6d4b88a). The kernels now compute that float from the sizes
    (33f83e5), so both halves compile and agree on the layouts. From dynamo's test_repros
    (conformance case repros2_inputs.batchnorm_running_stats_across_calls)."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(4)
            self.conv = nn.Conv2d(4, 4, 3, padding=1, bias=False)

        def forward(self, x):
            return F.relu(self.conv(self.bn(x)))

    def twice(model, x):
        return [model(x) for _ in range(2)]

    compiled = compiler.compile(twice, backend="inductor")
    for size in (4, 4, 7, 9):
        torch.manual_seed(size)
        eager = Net()
        ours = copy.deepcopy(eager)
        x = torch.randn(2, 4, size, size)
        expected, actual = twice(eager, x), compiled(ours, x.clone())
        cotangents = [torch.randn(out.shape) for out in expected]
        torch.autograd.backward(expected, cotangents)
        torch.autograd.backward(actual, cotangents)
        for mine, theirs in zip([*actual, *ours.parameters(), *ours.buffers()], [*expected, *eager.parameters(), *eager.buffers()]):
            torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-4)
        for mine, theirs in zip(ours.parameters(), eager.parameters()):
            torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-4)
