"""Data-dependent sizes and `.item()` through every backend (eager, aot_eager, inductor on CPU).

With `compiler.config.capture_dynamic_output_shape_ops` / `capture_scalar_outputs` the
captured graph keeps `nonzero`, boolean masks, `masked_select`, `unique` and `.item()` with an
unbacked size / number (u0). aot_autograd reads each unbacked symbol from the op that made it,
inductor runs that op as an ATen call and reads the symbol from its result, then generates
kernels over it. Results and gradients equal eager's on the first call, on a cache hit where
a different number of elements is selected (no recompile), and at a new size.
"""

from __future__ import annotations

import os

import pytest
import torch
import torch._dynamo

# Triton binds its library functions when first imported: without a GPU, its interpreter runs
# the Triton test below (collection imports this module before any test imports triton).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import compiler

BACKENDS = ["eager", "aot_eager", "inductor"]


def masked_square_sum(x):
    y = x[x > 0]
    return (y * y).sum() + y.shape[0], y.exp() * 2


def nonzero_gather(x, w):
    index = torch.nonzero(x.detach() > 0).squeeze(1)
    return (x[index] * w[index]).sum()


def masked_select_softplus(x):
    # Detached: masked_select's backward formula reads sizes as plain ints, which aot_autograd
    # refuses for symbolic sizes (see test_masked_select_gradient_at_symbolic_size_is_refused).
    selected = torch.masked_select(x.detach(), x.detach() > 0.5)
    return torch.nn.functional.softplus(selected).sum() * x.sum()


def scale_by_item(x):
    return (x * x.detach().abs().sum().item()).sum()


def unique_shifted(x):
    values = torch.unique((x * 2).round().detach())
    return values.sum() + x.sum()


def count_arithmetic(x):
    y = x[x > 0]
    return torch.cat([y, y + 1]).cos().sum() * (y.shape[0] // 2 + 1)


SCENARIOS = [masked_square_sum, nonzero_gather, masked_select_softplus, scale_by_item, unique_shifted, count_arithmetic]


@pytest.fixture(autouse=True)
def captured_data_dependent_ops():
    compiler.reset()
    with compiler.config.patch(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True):
        yield
    compiler.reset()


def leaves(n_args: int, size: int):
    return [torch.randn(size, requires_grad=True) for _ in range(n_args)]


def check_against_eager(compiled, fn, size: int):
    args = leaves(fn.__code__.co_argcount, size)
    eager_args = [a.detach().clone().requires_grad_() for a in args]
    out, expected = compiled(*args), fn(*eager_args)
    torch.testing.assert_close(out, expected)
    loss, eager_loss = (out[0], expected[0]) if isinstance(out, tuple) else (out, expected)
    loss.backward()
    eager_loss.backward()
    for a, e in zip(args, eager_args):
        torch.testing.assert_close(a.grad, e.grad)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", SCENARIOS, ids=lambda f: f.__name__)
def test_values_and_gradients_match_eager_without_recompiling_for_new_counts(fn, backend):
    compiled = compiler.compile(fn, backend=backend)
    for _ in range(3):  # one size, fresh data: the count of selected elements changes
        check_against_eager(compiled, fn, 10)
    assert len(compiled._capture_cache.entries) == 1
    check_against_eager(compiled, fn, 13)  # a new size: one recompile, then symbolic
    check_against_eager(compiled, fn, 6)
    assert len(compiled._capture_cache.entries) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_element_and_every_element_selected(backend):
    compiled = compiler.compile(masked_square_sum, backend=backend)
    for x in (torch.full((10,), -1.0), torch.full((10,), 2.0), torch.randn(10)):
        torch.testing.assert_close(compiled(x), masked_square_sum(x))
    assert len(compiled._capture_cache.entries) == 1


def branch_on_count(x):
    y = x[x > 0]
    if y.shape[0] > 4:
        return y.sum()
    return y.mean() - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_branch_on_a_count_breaks_the_graph_and_matches_eager(backend):
    compiled = compiler.compile(branch_on_count, backend=backend)
    for x in (torch.randn(9), torch.full((9,), 1.0), torch.full((9,), -1.0).index_fill(0, torch.tensor([0]), 3.0)):
        torch.testing.assert_close(compiled(x), branch_on_count(x))


def rows_and_columns(x):
    return (x * 2).sum(0), x.t() @ x, torch.cat([x, x]).relu()


def graphs_torch_compiles(fn, calls) -> int:
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=counting)
    for make in calls:
        compiled(make())
    return len(graphs)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dim", [0, 1])
def test_mark_unbacked_serves_0_1_and_more_as_torch_does(backend, dim):
    """One graph for every size of the marked dim, 0 and 1 included; marking dim 1 of a
    contiguous tensor makes dim 0's stride that size, which a size-0 tensor lacks: torch
    recompiles there too."""

    def marked(n):
        def make():
            shape = [4, 4]
            shape[dim] = n
            x = torch.randn(shape)
            compiler.mark_unbacked(x, dim)
            torch._dynamo.decorators.mark_unbacked(x, dim)  # for the reference
            return x

        return make

    calls = [marked(n) for n in (3, 1, 0, 7, 5)]
    compiled = compiler.compile(rows_and_columns, backend=backend)
    for make in calls:
        x = make()
        torch.testing.assert_close(compiled(x), rows_and_columns(x))
    assert len(compiled._capture_cache.entries) == graphs_torch_compiles(rows_and_columns, calls)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_masked_select_gradient_at_symbolic_size_is_refused(backend):
    """The gradient of masked_select works at a static size; at a symbolic one its backward
    formula would specialize the size after the guards were chosen: a clear error instead."""

    def fn(x):
        return torch.masked_select(x, x > 0).sum()

    compiled = compiler.compile(fn, backend=backend)
    check_against_eager(compiled, fn, 10)
    with pytest.raises(Exception, match="backward formula reads symbolic sizes"):
        check_against_eager(compiled, fn, 13)


def ones_of_checked_count(x):
    n = (x > 0).sum().item()
    torch._check(n >= 1)
    return torch.ones(n) * 2, x + n


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_check_on_an_item_is_checked_when_the_graph_runs(backend):
    """The check holds for the calls that compiled; a call that violates it fails as eager's
    does instead of computing on the false assumption."""
    compiled = compiler.compile(ones_of_checked_count, backend=backend)
    for x in (torch.randn(10).abs() + 0.1, torch.randn(10).abs().neg().index_fill(0, torch.tensor([3]), 1.0)):
        torch.testing.assert_close(compiled(x), ones_of_checked_count(x))
    negative = torch.full((10,), -1.0)
    with pytest.raises(RuntimeError):
        ones_of_checked_count(negative)
    with pytest.raises(RuntimeError):
        compiled(negative)
    assert len(compiled._capture_cache.entries) == 1


def _checked_offset(x, i):
    k = i.item()
    torch._check(k >= 0)
    torch._check(k + 4 <= x.shape[0])
    return k


def window_at_item(x, i):
    k = _checked_offset(x, i)
    return x[k : k + 4] * 2


def windows_and_elements_at_item(x, i):
    k = _checked_offset(x, i)
    window = x[k : k + 4]
    return window * 2, x[k], x[k:].sum(), window.unsqueeze(0).squeeze(0) + 1


@pytest.mark.parametrize("fn", [window_at_item, windows_and_elements_at_item])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_window_at_a_checked_data_dependent_offset_matches_eager(backend, fn):
    """Slicing at an offset read with .item(): the tracer bounds it by the torch._checks, and
    inductor's slice and select take those bounds, not the placeholder hint of an unbacked
    number (8192, past any size here: `x[k:k+4] * 2` was clamped to the end and came back empty)."""
    compiled = compiler.compile(fn, backend=backend, fullgraph=True)
    for n, k in ((10, 2), (10, 6), (10, 0), (13, 9)):
        x, i = torch.randn(n), torch.tensor(k)
        got, expected = compiled(x, i), fn(x, i)
        torch.testing.assert_close(got, expected, msg=lambda m: f"n={n}, k={k}: {m}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_offset_its_check_refuses_raises_before_any_kernel_reads_with_it(backend):
    """The torch._check runs where the program made it, before the kernels lowered after it:
    a kernel indexing x at k = 10**9 (its addresses computed on the checked assumption) ran
    before the check and crashed the process, where eager raises RuntimeError."""
    compiled = compiler.compile(window_at_item, backend=backend, fullgraph=True)
    x = torch.randn(10)
    torch.testing.assert_close(compiled(x, torch.tensor(3)), window_at_item(x, torch.tensor(3)))
    for k in (7, 10**9, -(10**9)):
        with pytest.raises(RuntimeError):
            window_at_item(x, torch.tensor(k))
        with pytest.raises(RuntimeError):
            compiled(x, torch.tensor(k))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_check_on_an_offset_holds_when_the_input_requires_grad(backend):
    """With an input that requires grad, the graph is a joint one split in forward and
    backward, and the split kept only what outputs and gradients read: the check (no users)
    was dropped, so x[k:k+4] at k = 8 of 10 returned two elements (aot_eager) or read past
    the end (inductor) where eager raises."""
    compiled = compiler.compile(window_at_item, backend=backend, fullgraph=True)
    for n, k in ((10, 3), (10, 6), (13, 9)):
        x = torch.randn(n, requires_grad=True)
        x_eager = x.detach().clone().requires_grad_()
        got, expected = compiled(x, torch.tensor(k)), window_at_item(x_eager, torch.tensor(k))
        torch.testing.assert_close(got, expected)
        got.sum().backward()
        expected.sum().backward()
        torch.testing.assert_close(x.grad, x_eager.grad)
    for k in (8, 10**9, -1):
        x = torch.randn(10, requires_grad=True)
        with pytest.raises(RuntimeError):
            window_at_item(x, torch.tensor(k))
        with pytest.raises(RuntimeError):
            compiled(x, torch.tensor(k))


def element_of_positives(x, i):
    return x[x > 0][i] * 2


def rows_of_positive_sums(x, i):
    return torch.index_select(x[x.sum(1) > 0], 0, i).sum(1)


def gathered_from_positives(x, i):
    return torch.gather(x[x > 0], 0, i) + 1


def written_into_positives(x, i):
    return x[x > 0].index_put((i,), torch.tensor(5.0))


@pytest.mark.parametrize(
    "fn", [element_of_positives, rows_of_positive_sums, gathered_from_positives, written_into_positives]
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_into_a_selection_that_came_out_empty_raises_as_eager(backend, fn):
    """An index tensor into a dimension of data-dependent size: where nothing was selected,
    no index is in range. Inductor's C++ kernel flagged the index and went on with position
    0, which in an empty buffer is foreign memory: the process crashed (segfault) where eager
    raises. Now an access through an index into a dimension that may be empty is skipped once
    an index is flagged."""
    compiled = compiler.compile(fn, backend=backend)
    i = torch.tensor([0])
    for x in (torch.randn(6, 3), torch.randn(6, 3).abs() + 0.1, torch.randn(9, 3)):
        x[0] = x[0].abs() + 0.1  # something is selected (all 6 row sums <= 0: 1 draw in 64)
        torch.testing.assert_close(compiled(x, i), fn(x, i))
    # Eager raises IndexError, or RuntimeError for index_select and gather, on the host: the
    # wrapper checks the same before the kernel (lowering/indexing.py check_empty_take).
    empty = -(torch.randn(6, 3).abs() + 0.1)
    with pytest.raises((IndexError, RuntimeError)) as eager:
        fn(empty, i)
    with pytest.raises(eager.type) as ours:
        compiled(empty, i)
    assert ours.type is eager.type


@pytest.mark.parametrize("fn", [element_of_positives, gathered_from_positives, written_into_positives])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_triton_kernels_index_a_selection_that_came_out_empty_without_touching_memory(device, fn):
    """The Triton side of the test above: an out-of-range index was clamped to size - 1, which
    is -1 in an empty dimension (a read or write just before the buffer; on CUDA an empty
    tensor's pointer may be null). Accesses through an index into a maybe-empty dimension are
    masked off, and the wrapper raises eager's error before the kernel when the dimension is
    empty, on CUDA too (where a kernel could only stop at a device-side assert)."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    if device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("Triton's interpreter is off (TRITON_INTERPRET=1 before triton is imported)")
    compiled = compiler.compile(fn, backend="inductor", options={"cpu_backend": "triton"})
    i = torch.tensor([0], device=device)
    for x in (torch.randn(6, 3), torch.randn(6, 3).abs() + 0.1):
        x = x.to(device)
        torch.testing.assert_close(compiled(x, i), fn(x, i))
    empty = -(torch.randn(6, 3, device=device).abs() + 0.1)
    with pytest.raises((IndexError, RuntimeError)) as eager:
        fn(empty, i)
    with pytest.raises(eager.type):  # gather's is a RuntimeError, as eager's
        compiled(empty, i)
    x = torch.randn(6, 3, device=device).abs()
    torch.testing.assert_close(compiled(x, i), fn(x, i))  # the device is still usable


def concatenated_after_positives(x, z):
    return torch.cat([x[x > 0] * 2, z]) + 1


def padded_positives(x, z):
    return torch.nn.functional.pad(x[x > 0], (1, 2)) * z.sum()


@pytest.mark.parametrize("fn", [concatenated_after_positives, padded_positives])
@pytest.mark.parametrize("kernels", ["cpp", "triton", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_kernels_read_nothing_from_a_selection_that_came_out_empty(kernels, fn):
    """cat and pad read each input at a position clamped into its range: 0 in an empty one,
    which has no element 0 (an empty CPU tensor's data pointer is null; Triton's interpreter
    crashed with a segfault). Loads from a buffer whose size may be 0 are guarded by its size."""
    if kernels == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    if kernels == "triton" and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("Triton's interpreter is off (TRITON_INTERPRET=1 before triton is imported)")
    compiled = compiler.compile(fn, backend="inductor", options={"cpu_backend": "cpp" if kernels == "cpp" else "triton"})
    device = "cuda" if kernels == "cuda" else "cpu"
    for x in (torch.randn(8), -(torch.rand(8) + 0.1), torch.randn(11), -(torch.rand(5) + 0.1)):
        x, z = x.to(device), torch.randn(3, device=device)
        torch.testing.assert_close(compiled(x, z), fn(x, z))


def window_from_the_end(x, kw):
    k, w = kw.tolist()
    torch._dynamo.graph_break()  # the rest is compiled with k and w as Python ints (sizes)
    n = x.shape[0]
    return x[k - n : k + w - n] * 2, x[k - n : k + w - n : 2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_slice_ending_before_its_start_is_empty_at_symbolic_bounds(backend):
    """x[k - n : k + w - n] with k + w = n ends at 0, before its start k (after wrapping): torch
    makes the end the start, and the slice is empty. Inductor took the span k + w - n - k, a
    negative length (RuntimeError: Storage size calculation overflowed with sizes=[-5])."""
    compiled = compiler.compile(window_from_the_end, backend=backend, dynamic=True)
    for n, k, w in ((10, 5, 5), (10, 2, 3), (13, 4, 9), (7, 1, 2), (10, 0, 10)):
        x, kw = torch.randn(n), torch.tensor([k, w])
        torch.testing.assert_close(compiled(x, kw), window_from_the_end(x, kw), msg=lambda m: f"{n, k, w}: {m}")


def tail_of_checked_length(x, kw):
    k, w = kw[0].item(), kw[1].item()
    torch._check(k >= 0)
    torch._check(w >= 1)
    torch._check(k + w <= x.shape[0])
    return x[-(k + w) :].relu().sum(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tail_of_data_dependent_length_has_eager_gradients(backend):
    """The backward gets the saved start -(k + w) as an input expression of data-dependent
    sizes; inductor decided its slice by that expression's guessed hint (past the start), so
    the gradient buffer was empty and slice_scatter failed ('src size = [0], slice size =
    [5]'). Now such an expression is data-dependent to `decide` too."""
    compiled = compiler.compile(tail_of_checked_length, backend=backend)
    for n, k, w in ((10, 4, 1), (10, 1, 6), (13, 2, 3)):
        x, kw = torch.randn(n, requires_grad=True), torch.tensor([k, w])
        x_eager = x.detach().clone().requires_grad_()
        got, expected = compiled(x, kw), tail_of_checked_length(x_eager, kw)
        torch.testing.assert_close(got, expected)
        got.backward()
        expected.backward()
        torch.testing.assert_close(x.grad, x_eager.grad, msg=lambda m: f"n={n}, k={k}, w={w}: {m}")


def head_through_checked_offset(x, i):
    k = _checked_offset(x, i)
    return x[: k + 1].relu().sum(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_head_of_data_dependent_length_has_eager_gradients(backend):
    """The backward binds u0 through the saved end u0 + 1, with a guessed hint: slice clamped
    that end to the size ('src size = [10], slice size = [3]'). Now u0 is data-dependent there."""
    compiled = compiler.compile(head_through_checked_offset, backend=backend)
    for n, k in ((10, 2), (10, 5), (13, 0)):
        x = torch.randn(n, requires_grad=True)
        x_eager = x.detach().clone().requires_grad_()
        got, expected = compiled(x, torch.tensor(k)), head_through_checked_offset(x_eager, torch.tensor(k))
        torch.testing.assert_close(got, expected)
        got.backward()
        expected.backward()
        torch.testing.assert_close(x.grad, x_eager.grad, msg=lambda m: f"n={n}, k={k}: {m}")


def window_by_tolist(x, bounds, flags):
    k, w = bounds.tolist()
    torch._check(k >= 0)
    torch._check(w >= 1)
    torch._check(k + w <= x.shape[0])
    return x[k : k + w] * 2, bounds.view(2, 1).tolist(), flags.tolist(), flags[0].item()


@pytest.mark.parametrize("backend", BACKENDS)
def test_tolist_and_bool_items_are_numbers_in_one_graph(backend):
    """`t.tolist()` is one item() per element, nested as t's dims (torch.compile unrolls it the
    same way): one graph with fullgraph=True. A bool tensor's item is a bool returned from the
    graph (aot_autograd found no node for `Eq(u0, 1)`, inductor returned it as text)."""
    compiled = compiler.compile(window_by_tolist, backend=backend, fullgraph=True)
    for n, k, w in ((10, 2, 3), (10, 5, 1), (13, 0, 13)):
        x, bounds = torch.randn(n), torch.tensor([k, w])
        flags = torch.rand(3) > 0.5
        ours, eager = compiled(x, bounds, flags), window_by_tolist(x, bounds, flags)
        torch.testing.assert_close(ours[0], eager[0])
        assert ours[1:] == eager[1:]
        assert [type(v) for v in [*ours[2], ours[3]]] == [bool] * 4
    with pytest.raises(RuntimeError):
        compiled(torch.randn(10), torch.tensor([8, 3]), flags)


def branch_on_a_nan_item(x):
    v = x.sum().item()
    return (x * 2 if v == v else x * 3), x * (v - v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nan_or_infinite_item_is_not_taken_for_a_finite_real(backend):
    """A float read with .item() is an unbacked symbol, which sympy takes for a finite real:
    `v == v` folded to True and `v - v` to 0, so a NaN sum took the wrong branch and multiplied
    by 0 (torch.compile does both too). Such a folded comparison is now undecided (the branch
    breaks the graph and sees the value), and `v - v` is computed as the program wrote it."""
    compiled = compiler.compile(branch_on_a_nan_item, backend=backend)
    for x in (torch.randn(4), torch.tensor([1.0, float("nan"), 2.0]), torch.tensor([float("inf"), 1.0]), torch.randn(5)):
        torch.testing.assert_close(compiled(x), branch_on_a_nan_item(x), equal_nan=True)
