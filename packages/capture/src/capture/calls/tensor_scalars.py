"""Tensor methods given a 0-dim tensor where ATen takes a Python number.

Under torch.compile, torch.optim keeps its step counts as tensors (`_get_value(step)` returns
the tensor while compiling), so the single-tensor Adam calls `param.addcdiv_(exp_avg, denom,
value=-step_size)` with a tensor `value`. Eager turns it into a number (`.item()`), which a
graph cannot; the same arithmetic on tensors stays in the graph, as TorchDynamo rewrites it.
"""

from __future__ import annotations

import operator

import torch

from ..values.tensor import TensorValue
from .registry import rule
from .torch_ops import record_torch_call

# method -> (the product of tensor1 and tensor2, the method that adds it to self)
_WITH_VALUE = {
    torch.Tensor.addcdiv_: (operator.truediv, "add_"),
    torch.Tensor.addcdiv: (operator.truediv, "add"),
    torch.Tensor.addcmul_: (operator.mul, "add_"),
    torch.Tensor.addcmul: (operator.mul, "add"),
}


def _add_product(method):
    product, add = _WITH_VALUE[method]

    def handler(frame, args, kwargs):
        # `value` is keyword-only (positional arguments are the deprecated `(value, t1, t2)`).
        value = kwargs.get("value")
        if not isinstance(value, TensorValue) or len(args) != 3:
            return record_torch_call(frame, method, args, kwargs)
        graph = frame.session.graph
        self, tensor1, tensor2 = args[:3]
        scaled = graph.call_function(frame, operator.mul, [graph.call_function(frame, product, [tensor1, tensor2], {}), value], {})
        return graph.call_method(frame, add, [self, scaled], {})

    return handler


for _method in _WITH_VALUE:
    rule(_method)(_add_product(_method))
