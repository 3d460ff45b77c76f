"""`x[mask] = values` in training: the gradient of `values` is `grad[mask]`, of a size only the
mask's data decides, so no backward graph holds it. The write breaks the graph (as with
torch.compile) and runs eagerly; values and every gradient match eager's, on a first call,
fresh values with another mask, and a new size. Without a gradient to take the write stays in
the graph. (HF Higgs Audio v2 in training: `hidden_states[audio_token_mask] += audio_mlp(...)`
failed to compile.)"""

import pytest
import torch

import compiler


def set_through_mask(h, mask, v):
    h = h * 2
    h[mask] = v * 3
    return h.tanh()


def add_through_mask(h, mask, v):
    h = h * 2
    h[mask] += v.sin()
    return h * h


def index_put_accumulate(h, mask, v):
    return (h * 2).index_put((mask,), v * 3, accumulate=True).exp()


WRITES = [set_through_mask, add_through_mask, index_put_accumulate]


def inputs(batch, length, seed):
    generator = torch.Generator().manual_seed(seed)
    h = torch.randn(batch, length, 4, generator=generator, requires_grad=True)
    mask = torch.rand(batch, length, generator=generator) > 0.5
    v = torch.randn(int(mask.sum()), 4, generator=generator, requires_grad=True)
    return h, mask, v


def run(fn, h, mask, v):
    h.grad = v.grad = None
    out = fn(h, mask, v)
    (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
    return out.detach(), h.grad, v.grad


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("fn", WRITES, ids=lambda f: f.__name__)
def test_mask_write_trains_as_eager(fn, backend):
    compiler.reset()
    compiled = compiler.compile(fn, backend=backend)
    for batch, length, seed in [(2, 6, 0), (2, 6, 1), (3, 9, 2)]:
        h, mask, v = inputs(batch, length, seed)
        expected = run(fn, h, mask, v)
        actual = run(compiled, h, mask, v)
        for got, want in zip(actual, expected):
            torch.testing.assert_close(got, want)


def test_mask_write_without_gradient_stays_in_the_graph():
    h, mask, v = inputs(2, 6, 0)
    with torch.no_grad():
        report = compiler.explain(set_through_mask)(h, mask, v)
    assert report.graph_break_count == 0
    report = compiler.explain(set_through_mask)(h, mask, v)
    assert report.graph_break_count == 1
    assert "boolean mask" in str(report.break_reasons[0])
