"""infer_shapes: symbolic output shapes named with the user's Dims, checked against eager runs
at random sizes, and the constraints (and contradictions) it reports."""

from __future__ import annotations

import random

import pytest
import sympy
import torch

from fake_tensor import ConstraintViolationError, DataDependentError, Dim, FakeTensorMode, TensorSpec, infer_shapes


def _conv_net():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 4, 3, padding=1),
        torch.nn.AdaptiveAvgPool2d((5, 5)),
        torch.nn.Flatten(),
        torch.nn.Linear(100, 10),
    )


def _attention(x):
    q = k = v = x.unflatten(-1, (4, 8)).transpose(1, 2)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2)


FUNCTIONS = {
    "broadcast_cat": (lambda x, y: torch.cat([x, y], 0).relu() @ y.t(), [("a", 8), ("b", 8)]),
    "reshape_sum": (lambda x, y: (x.reshape(-1, 8) + 1).sum(0, keepdim=True) * y[:1], [("a", 8), ("b", 8)]),
    "slice_pad": (lambda x, y: torch.nn.functional.pad(x[:, 2:], (1, 1)) + 1, [("a", "b"), ("b",)]),
    "attention": (lambda x, y: _attention(x), [("a", "b", 32), ("b",)]),
}


def _random_sizes(names, low=3, high=20):
    return {name: random.randint(low, high) for name in names}


def _sizes_where_constraints_hold(report, draw, count=3, attempts=200):
    """`count` sizes from `draw()` that meet the report's constraints. Which sizes those are
    depends on torch's meta kernels: torch 2.11's max_pool2d asks whether a size is even (a
    question whose answer does not change the output shape), and the analysis reports that
    as a constraint; torch 2.13's does not ask."""
    found = []
    for _ in range(attempts):
        sizes = draw()
        if report.holds_at(**sizes):
            found.append(sizes)
            if len(found) == count:
                return found
    pytest.fail(f"fewer than {count} of {attempts} random sizes meet the constraints:\n{report}")


def _narrows_a_dim(constraint) -> bool:
    """A bound or value on a Dim itself (`h >= 10`, `w == 32`), not a relation between sizes."""
    condition = constraint.condition
    return isinstance(condition, sympy.Rel) and isinstance(condition.lhs, sympy.Symbol) and condition.rhs.is_Number


def _real_inputs(dims, sizes):
    return [torch.randn([sizes[d] if isinstance(d, str) else d for d in shape]) for shape in dims]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_output_shape_matches_eager_at_random_sizes(name):
    fn, shapes = FUNCTIONS[name]
    dims = {n: Dim(n) for shape in shapes for n in shape if isinstance(n, str)}
    specs = [TensorSpec(tuple(dims[d] if isinstance(d, str) else d for d in shape)) for shape in shapes]
    report = infer_shapes(fn, *specs)
    # slice_pad's constraints exclude b <= 3 (where the sliced size is 0 or 1).
    for sizes in _sizes_where_constraints_hold(report, lambda: _random_sizes(dims)):
        expected = fn(*_real_inputs(shapes, sizes)).shape
        assert report.evaluate_shape(report.outputs, **sizes) == tuple(expected)


def test_shape_prints_with_dim_names():
    report = infer_shapes(
        torch.nn.Linear(8, 16), TensorSpec((Dim("batch"), Dim("seq"), 8))
    )
    assert report.shape(report.outputs) == "(batch, seq, 16)"
    assert str(report.outputs.shape) == "torch.Size([batch, seq, 16])"


def test_module_with_real_input_and_dynamic_shapes_dict():
    model = _conv_net()
    x = torch.randn(2, 3, 40, 36)
    dynamic = {"input": {0: Dim("batch"), 2: Dim("height", min=16), 3: Dim("width", min=16)}}
    report = infer_shapes(model, x, dynamic_shapes=dynamic)

    def draw():
        return {"batch": random.randint(2, 5), "height": random.randint(16, 64), "width": random.randint(16, 64)}

    for sizes in _sizes_where_constraints_hold(report, draw):
        real = model(torch.randn(sizes["batch"], 3, sizes["height"], sizes["width"]))
        assert report.evaluate_shape(report.outputs, **sizes) == tuple(real.shape)


def test_conv_net_with_dynamic_height_and_width():
    model = _conv_net()
    report = infer_shapes(model, TensorSpec((4, 3, Dim("h", min=8, max=256), Dim("w", min=8, max=256))))

    def draw():
        return {"h": random.randint(8, 256), "w": random.randint(8, 256)}

    for sizes in _sizes_where_constraints_hold(report, draw, count=5):
        h, w = sizes["h"], sizes["w"]
        assert report.evaluate_shape(report.outputs, h=h, w=w) == tuple(model(torch.randn(4, 3, h, w)).shape)
    assert not any(_narrows_a_dim(c) for c in report.constraints), str(report)


def test_dynamic_shapes_as_tuple_and_fake_arguments():
    mode = FakeTensorMode()
    x = mode.from_real(torch.randn(5, 8))
    report = infer_shapes(lambda x, y: x * y.sum(), x, TensorSpec((3,)), dynamic_shapes=({0: Dim("n")}, None))
    assert report.shape(report.outputs) == "(n, 8)"


def test_same_dim_on_two_inputs_shares_a_symbol():
    n = Dim("n")
    report = infer_shapes(torch.add, TensorSpec((n, 4)), TensorSpec((n, 4)))
    assert report.shape(report.outputs) == "(n, 4)"
    assert report.constraints == []


def test_requirement_beyond_unbounded_dim_is_a_constraint():
    fn = lambda x: x[:, :4] * 2  # noqa: E731
    report = infer_shapes(fn, TensorSpec((2, Dim("seq"))))
    seq = sympy.Symbol("seq", integer=True, positive=True)
    (constraint,) = report.constraints
    # The trace holds from seq == 4 on (slicing also asks whether seq == 4, so torch's
    # answer at the example size may raise the bound by one); below 4 the shape differs.
    assert isinstance(constraint.condition, sympy.Ge) and constraint.condition.lhs == seq
    bound = int(constraint.condition.rhs)
    assert bound in (4, 5)
    assert report.evaluate_shape(report.outputs, seq=bound + 3) == tuple(fn(torch.randn(2, bound + 3)).shape)
    with pytest.raises(ConstraintViolationError):
        report.evaluate_shape(report.outputs, seq=3)  # eager gives (2, 3) here, not (2, 4)
    assert f"seq >= {bound}" in str(report)


def _position_lookup(rows: int):
    table = torch.nn.Embedding(rows, 4)

    def fn(tokens):
        positions = torch.arange(tokens.shape[1]).unsqueeze(0)
        return table(positions) + tokens.unsqueeze(-1)

    return fn


def test_index_bound_found_through_arange_and_embedding():
    report = infer_shapes(_position_lookup(32), TensorSpec((2, Dim("seq"))))
    seq = sympy.Symbol("seq", integer=True, positive=True)
    assert [c.condition for c in report.constraints] == [sympy.Le(seq, 32)]
    assert "aten.embedding" in str(report.constraints[0])


def test_bound_tighter_than_declared_max_is_an_error():
    with pytest.raises(ConstraintViolationError, match=r"seq must be <= 32 \(.*\), but Dim\('seq', max=64\) allows up to 64"):
        infer_shapes(_position_lookup(32), TensorSpec((2, Dim("seq", max=64))))


def test_bound_within_declared_max_is_no_constraint():
    report = infer_shapes(_position_lookup(32), TensorSpec((2, Dim("seq", max=32))))
    assert report.constraints == []


def test_specialized_dim_is_an_error():
    with pytest.raises(ConstraintViolationError, match="batch must be == .*declares it dynamic"):
        infer_shapes(lambda x: x + torch.ones(6, 1), torch.randn(6, 1), dynamic_shapes=[{0: Dim("batch")}])


def test_two_dims_forced_equal_is_an_error():
    with pytest.raises(ConstraintViolationError, match="b must be == a .*use one Dim"):
        infer_shapes(torch.add, torch.randn(5), torch.randn(5), dynamic_shapes=[{0: Dim("a")}, {0: Dim("b")}])


def test_example_of_size_one_for_a_dim_is_an_error():
    with pytest.raises(ConstraintViolationError, match="sizes 0 and 1 are specialized"):
        infer_shapes(lambda x: x.relu(), torch.randn(1, 3), dynamic_shapes={"x": {0: Dim("batch")}})


def test_unknown_argument_name_in_dynamic_shapes_is_an_error():
    with pytest.raises(ValueError, match="not arguments of this call"):
        infer_shapes(lambda t: t.relu(), torch.randn(4, 3), dynamic_shapes={"x": {0: Dim("batch")}})


def test_repeated_functional_op_gives_fresh_outputs():
    def fn(x):
        return x.exp(), x.exp(), x.exp().sum(0)

    report = infer_shapes(fn, TensorSpec((Dim("n"), 4)))
    first, second, total = report.outputs
    assert first is not second and not torch._C._is_alias_of(first, second)
    assert report.evaluate_shape(first, n=7) == report.evaluate_shape(second, n=7) == (7, 4)
    assert report.shape(total) == "(4,)"


def test_repeated_view_still_aliases_its_input():
    def fn(x):
        return x, x.view(-1), x.view(-1)

    x, first, second = infer_shapes(fn, TensorSpec((Dim("n"), 4))).outputs
    assert torch._C._is_alias_of(first, x) and torch._C._is_alias_of(second, x)


def test_data_dependent_error_names_the_analysed_line():
    def fn(mask):
        if mask.all():  # reads tensor data: fakes cannot answer
            return mask
        return mask * 2

    with pytest.raises(DataDependentError) as raised:
        infer_shapes(fn, TensorSpec((Dim("n"),), torch.bool))
    assert any("if mask.all()" in note for note in raised.value.__notes__)


def test_module_built_on_meta_device_matches_the_real_module():
    torch.manual_seed(0)
    real = _conv_net()
    with torch.device("meta"):
        meta = _conv_net()
    spec = TensorSpec((Dim("n"), 3, Dim("h", min=8), Dim("w", min=8)))
    from_meta, from_real = infer_shapes(meta, spec), infer_shapes(real, spec)
    assert from_meta.outputs.device == torch.device("cpu")
    assert [c.condition for c in from_meta.constraints] == [c.condition for c in from_real.constraints]

    def draw():
        return {"n": random.randint(2, 4), "h": random.randint(8, 40), "w": random.randint(8, 40)}

    for sizes in _sizes_where_constraints_hold(from_real, draw):
        expected = tuple(real(torch.randn(sizes["n"], 3, sizes["h"], sizes["w"])).shape)
        assert from_meta.evaluate_shape(from_meta.outputs, **sizes) == expected
        assert from_real.evaluate_shape(from_real.outputs, **sizes) == expected


def test_evaluate_shape_refuses_sizes_that_break_the_constraints():
    report = infer_shapes(_position_lookup(32), TensorSpec((2, Dim("seq"))))
    assert report.evaluate_shape(report.outputs, seq=32) == (2, 32, 4)
    with pytest.raises(ConstraintViolationError, match="breaks them"):
        report.evaluate_shape(report.outputs, seq=33)


def _pool_asking_parity(x):
    # What torch 2.11's max_pool2d meta kernel does (div_rtn's remainder check before its
    # sign check): a question about a size whose answer does not change the output shape.
    half = (x.shape[-1] - 1) // 2
    if half % 2 != 0 and half < 0:
        raise AssertionError("unreachable: sizes are positive")
    return x[..., ::2]


def test_parity_question_is_a_constraint_and_shapes_match_eager_where_it_holds():
    report = infer_shapes(_pool_asking_parity, TensorSpec((2, 3, Dim("n", min=4))))
    assert any("% 2" in str(c) for c in report.constraints), str(report)

    def draw():
        return {"n": random.randint(4, 200)}

    for sizes in _sizes_where_constraints_hold(report, draw):
        expected = _pool_asking_parity(torch.randn(2, 3, sizes["n"])).shape
        assert report.evaluate_shape(report.outputs, **sizes) == tuple(expected)
    broken = next(n for n in range(4, 12) if not report.holds_at(n=n))
    with pytest.raises(ConstraintViolationError, match="breaks them"):
        report.evaluate_shape(report.outputs, n=broken)


def test_repeated_factory_follows_the_default_dtype():
    def fn(x):
        first = torch.zeros(x.shape[0])
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            second = torch.zeros(x.shape[0])
        finally:
            torch.set_default_dtype(previous)
        return first, second

    first, second = infer_shapes(fn, TensorSpec((Dim("n"),))).outputs
    assert (first.dtype, second.dtype) == (torch.float32, torch.float64)
