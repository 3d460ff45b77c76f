"""Cases modelled on dynamo's test_higher_order_ops (recast in our own words): torch.cond with
branches that are module-level functions, lambdas and closures, on a tensor predicate and on a
Python bool, with the result used afterwards. Capture runs torch.cond natively (a graph break):
the values must be eager's on every backend."""

import torch

from . import snippets, two_vecs

SOURCE = "dynamo/test_higher_order_ops"


def true_branch(t, u):
    return t.sin() + u


def false_branch(t, u):
    return t.cos() - u


NS = {"torch": torch, "true_branch": true_branch, "false_branch": false_branch}

CASES = [
    ("cond_global_branches", "return torch.cond(x.sum() > 0, true_branch, false_branch, (x, y)) * 2"),
    ("cond_lambda_branches_python_predicate", "k = x.shape[0]\nreturn torch.cond(k > 5, lambda t: t * k, lambda t: t + k, (x,)) + y"),
]
snippets(SOURCE, "hop", CASES, namespace=NS, params="x, y", make_args=two_vecs)
