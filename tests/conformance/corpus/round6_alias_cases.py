"""Tensor aliasing through plain Python, in the spirit of the in-place repros of dynamo's
test_repros and test_functions (recast in our own words): tuple assignment between views of one
tensor (the right side's views are read after earlier targets were written), views taken before a
write seeing it and copies not, writes through unbind/split/diagonal/as_strided views, in-place
ops whose operands alias the written tensor, accumulating index writes with repeated indices,
inputs that are views of each other, in-place metadata changes (t_, unsqueeze_) of inputs, and
writes eager refuses (an expanded tensor, an overlapping out=).
"""

import torch

from .round5_support import sampled_snippets

SOURCE = "dynamo/test_repros"


def base_and_view(n):
    x = torch.randn(n)
    return x, x[1:]


def matrix_and_transpose(n):
    m = torch.randn(n, 3)
    return m, m.t()


def matrix(n):
    return (torch.randn(n, 3),)


def square(n):
    return (torch.randn(n, n),)


def leaf_and_input(n):
    return torch.randn(n, requires_grad=True), torch.randn(n)


NS = {"torch": torch}

ALIASES = [
    ("swap_elements_through_views", "x[0], x[1] = x[1], x[0]\nreturn x"),
    ("swap_halves_through_views", "n = x.shape[0] // 2\nx[:n], x[n:2 * n] = x[n:2 * n], x[:n]\nreturn x"),
    ("swap_with_clones", "x[0], x[1] = x[1].clone(), x[0].clone()\nreturn x"),
    ("swap_with_advanced_index", "x[[0, 1]] = x[[1, 0]]\nreturn x"),
    ("view_taken_before_write_sees_it", "a = x[0]\nv = x.view(-1)\nx[0] = 5\nx.add_(1)\nreturn a, v"),
    ("item_taken_before_write_does_not", "a = x[0].item()\nx[0] = 5\nreturn x, a"),
    ("copy_taken_before_write_does_not", "f = x.flip(0)\nc = x.clone()\nx.mul_(2)\nreturn f, c, x"),
    ("reshape_contiguous_is_view", "r = x.reshape(1, -1)\nx.sub_(1)\nreturn r"),
    ("transpose_written_through", "t = x.t()\nt[0].fill_(0)\nreturn x", {"make_args": matrix}),
    ("unbind_views_written", "rows = x.unbind(0)\nrows[0].mul_(3)\nrows[-1].zero_()\nreturn x", {"make_args": matrix}),
    ("split_views_add_each_other", "a, b = x.split(2)[:2]\na.add_(b[: a.shape[0]])\nreturn x"),
    ("diagonal_filled", "x.diagonal().fill_(0)\nreturn x", {"make_args": square}),
    ("as_strided_every_other_written", "x.as_strided((x.shape[0] // 2,), (2,)).add_(10)\nreturn x"),
    ("strided_slice_written", "x[::2].mul_(-1)\nx[1::2] += x[::2][: x.shape[0] // 2]\nreturn x"),
    ("inplace_with_self_operands", "x.addcmul_(x, x)\nx.lerp_(x.flip(0), 0.5)\nreturn x"),
    ("masked_fill_by_own_sum", "x.masked_fill_(x > 0, x.sum())\nreturn x"),
    ("clamp_by_own_mean", "x.clamp_(max=x.mean())\nreturn x"),
    ("index_add_repeated_indices", "idx = torch.tensor([0, 0, 1, 0])\nx.index_add_(0, idx, torch.ones(4))\nreturn x"),
    ("index_put_accumulate_repeated", "idx = torch.tensor([1, 1, 1])\nx.index_put_((idx,), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)\nreturn x"),
    ("scatter_add_into_self_view", "src = x.clone()\nidx = torch.zeros(x.shape[0], dtype=torch.long)\nx.scatter_add_(0, idx, src)\nreturn x"),
    ("detach_shares_storage", "d = x.detach()\nd.zero_()\nreturn x"),
    ("data_shares_storage", "x.data.add_(1)\nreturn x"),
    ("list_of_views_written_in_loop", "for r in list(x.view(-1, 1)):\n    r.mul_(2)\nreturn x"),
    ("expanded_write_raises", "e = x.unsqueeze(0).expand(2, -1)\ntry:\n    e.add_(1)\nexcept RuntimeError:\n    return x, 'RuntimeError'\nreturn x"),
    ("out_overlapping_input", "try:\n    torch.add(x[1:], x[:-1], out=x[:-1])\nexcept RuntimeError:\n    return x, 'RuntimeError'\nreturn x"),
    ("copy_overlapping_slices", "try:\n    x[1:].copy_(x[:-1])\nexcept RuntimeError:\n    return x, 'RuntimeError'\nreturn x"),
    ("out_is_fresh_buffer", "out = torch.empty(x.shape[0])\nr = torch.mul(x, 2, out=out)\nreturn r is out, out"),
    ("out_wrong_size_resized", "out = torch.empty(0)\ntorch.mul(x, 2, out=out)\nreturn out"),
    ("input_and_its_view_written", "x.add_(1)\nreturn y", {"params": "x, y", "make_args": base_and_view}),
    ("view_input_written_base_read", "y.mul_(2)\nreturn x.sum()", {"params": "x, y", "make_args": base_and_view}),
    ("matrix_and_transpose_inputs", "y[0].fill_(1)\nreturn x", {"params": "x, y", "make_args": matrix_and_transpose}),
    ("input_t_inplace", "x.t_()\nreturn x.shape, x.sum(0)", {"make_args": matrix}),
    ("input_unsqueeze_inplace", "x.unsqueeze_(0)\nreturn x.shape", {"make_args": matrix}),
    ("leaf_written_under_no_grad", "with torch.no_grad():\n    w.mul_(2)\nreturn (w * b).sum()", {"params": "w, b", "make_args": leaf_and_input, "train": True}),
    ("nonleaf_view_written_grads", "y = w * 1\ny[0] = b[0]\ny[1:] *= 2\nreturn y", {"params": "w, b", "make_args": leaf_and_input, "train": True}),
    ("nonleaf_swap_views_grads", "y = w * 1\ny[0], y[1] = y[1], y[0]\nreturn y", {"params": "w, b", "make_args": leaf_and_input, "train": True}),
    ("view_of_leaf_written_raises", "try:\n    w[0] = 1\nexcept RuntimeError:\n    return w * 2, 'RuntimeError'\nreturn w", {"params": "w, b", "make_args": leaf_and_input, "train": True}),
]
sampled_snippets(SOURCE, "r6_alias", ALIASES, namespace=NS)
