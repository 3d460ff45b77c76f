"""Tensors as Python objects, modelled on dynamo's test_misc: attributes set on tensors (on an
input, on an intermediate, read back after a break), `.data` read and assigned, `.grad` set and
cleared by hand, requires_grad_ and retain_grad on intermediates, `x.grad_fn` checks, identity
of views and of in-place results, tensors in sets and as dict keys (by identity), `.tolist()`,
`.item()` feeding Python control flow, `x.T`/`x.mT`/`x.H`, `names` of an unnamed tensor,
`torch.Tensor` methods called unbound (`torch.Tensor.add(x, 1)`), `type(x)` comparisons,
and tensor subclasses made with as_subclass. Recast in our own words."""

import torch

from . import matrix, snippets, two_vecs

SOURCE = "dynamo/test_misc"


def brk():
    import torch._dynamo

    torch._dynamo.graph_break()


class Tagged(torch.Tensor):
    """A plain tensor subclass without __torch_function__ overrides."""

    def double(self):
        return self * 2


NS = {"torch": torch, "brk": brk, "Tagged": Tagged}


def tagged_input(n):
    t = torch.randn(n)
    t.tag = "in"
    t.count = n
    return (t,)


def leaf(n):
    return (torch.randn(n, requires_grad=True),)


ATTRS = [
    ("attribute_on_intermediate", "y = x * 2\ny.note = 'doubled'\ny.k = 3\nreturn y * y.k, y.note, hasattr(x, 'note')"),
    ("attribute_on_intermediate_across_break", "y = x + 1\ny.k = x.shape[0]\nbrk()\nreturn y * y.k, getattr(y, 'k', None)"),
    ("attribute_set_on_input", "x.seen = True\nreturn x * 2", {"make_args": tagged_input}),
    ("attribute_read_from_input", "return x * x.count, x.tag", {"make_args": tagged_input}),
    ("attribute_deleted_from_input", "del x.tag\nreturn x + 1, hasattr(x, 'tag')", {"make_args": tagged_input}),
    ("data_read_is_detached", "d = x.data\nreturn d * 2, d.requires_grad, d is x", {"make_args": leaf}),
    ("data_assigned", "y = x.clone()\ny.data = torch.ones_like(y)\nreturn y + x", {}),
    ("grad_set_by_hand", "x.grad = torch.ones_like(x)\nr = x.grad * 2\nx.grad = None\nreturn r.detach(), x.grad is None", {"make_args": leaf}),
    ("retain_grad_on_intermediate", "y = x * 3\ny.retain_grad()\nreturn y.sum() * 1, y.retains_grad", {"make_args": leaf, "train": True}),
    ("requires_grad_on_intermediate", "y = x.detach() * 2\ny.requires_grad_()\nreturn y * y, y.requires_grad, y.is_leaf", {}),
    ("grad_fn_checks", "y = x * 2\nreturn y, y.grad_fn is not None, x.grad_fn is None, x.is_leaf, y.is_leaf", {"make_args": leaf}),
    ("identity_of_views_and_inplace", "v = x.view(-1)\nw = x.add_(1)\nreturn v is x, w is x, v.data_ptr() == x.data_ptr(), x._base is None, v._base is x", {}),
    ("tensors_in_set_by_identity", "a, b = x, x.clone()\ns = {a, b, a}\nd = {a: 1, b: 2}\nreturn len(s), d[a] + d[b], a in s, x * len(d)"),
    ("tolist_drives_python", "vals = x.tolist()\nreturn sum(v for v in vals if v > 0), len(vals), type(vals[0]).__name__"),
    ("item_in_branch", "if x.sum().item() > 0:\n    return x * 2\nreturn x - 1"),
    ("unbound_tensor_methods", "return torch.Tensor.add(x, 1), torch.Tensor.sum(x), torch.Tensor.__add__(x, x), torch.Tensor.size(x)"),
    ("type_comparisons", "return x, type(x) is torch.Tensor, type(x).__name__, isinstance(x, torch.nn.Parameter), torch.is_tensor(x), type(x * 1) == type(x)"),
    ("names_of_unnamed", "return x, x.names, x.ndim, x.dim(), x.is_contiguous(), x.is_floating_point(), x.is_complex()"),
    ("as_subclass_method", "t = x.as_subclass(Tagged)\nr = t.double()\nreturn type(r).__name__, r.as_subclass(torch.Tensor)"),
    ("parameter_made_from_input", "p = torch.nn.Parameter(x.detach().clone())\nreturn p * 2, type(p).__name__, p.requires_grad"),
]
snippets(SOURCE, "tensor_attrs", ATTRS, namespace=NS)

snippets(SOURCE, "tensor_attrs_matrix", [
    ("transposes", "return x.T, x.mT, x.H, x.t().is_contiguous(), x.T.stride()"),
    ("rows_as_python", "return [r.sum() for r in x], len(x), list(map(len, x))[:2]"),
], namespace=NS, make_args=matrix)

snippets(SOURCE, "tensor_attrs_two", [
    ("is_and_equal_between_inputs", "return x is y, x.equal(y), torch.equal(x, x), (x == y).all().item(), x.data_ptr() == y.data_ptr()"),
    ("same_tensor_passed_twice", "x.add_(1)\nreturn y * 1, x is y", {"make_args": lambda n: (lambda t: (t, t))(torch.randn(n))}),
], namespace=NS, params="x, y", make_args=two_vecs)
